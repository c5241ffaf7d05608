// File: validation/cases_data.h
//
// The validation case files, compiled into the binary by
// base/embed_files.sh (a genrule), so that `zionsim validate` runs its
// suite wherever zionsim is installed.

#ifndef ZIONSIM_VALIDATION_CASES_DATA_H_
#define ZIONSIM_VALIDATION_CASES_DATA_H_

namespace zx::validation::internal {

struct CaseFile {
  const char* name;  ///< file name without .json
  const char* text;
};

extern const CaseFile kCaseFiles[];
extern const int kCaseFileCount;

}  // namespace zx::validation::internal

#endif  // ZIONSIM_VALIDATION_CASES_DATA_H_
