// File: models/dlrm/zoo_data.h
//
// The model zoo's JSON files, compiled into the binary by base/embed_files.sh
// (a genrule), so `--model dlrm-a` works wherever zionsim is installed.

#ifndef ZIONSIM_MODELS_DLRM_ZOO_DATA_H_
#define ZIONSIM_MODELS_DLRM_ZOO_DATA_H_

namespace zx::models::internal {

struct ZooFile {
  const char* name;  ///< file name without .json: "dlrm-a"
  const char* text;
};

extern const ZooFile kZooFiles[];
extern const int kZooFileCount;

}  // namespace zx::models::internal

#endif  // ZIONSIM_MODELS_DLRM_ZOO_DATA_H_
