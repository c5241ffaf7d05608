// File: tools/version.h
//
// The zionsim release this tree is. Bumped by hand at each release; files
// zionsim writes record it next to their schema_version.

#ifndef ZIONSIM_TOOLS_VERSION_H_
#define ZIONSIM_TOOLS_VERSION_H_

namespace zx::tools {

inline constexpr const char* kVersion = "0.1.0";

}  // namespace zx::tools

#endif  // ZIONSIM_TOOLS_VERSION_H_
