"""Re-exports Bazel 4's native C++ rules under rules_cc's load path.

Debian's rules_cc is too new for Bazel 4 (it loads `use_cpp_toolchain`), so the
project carries this shim; BUILD files load from @rules_cc//cc:defs.bzl as they
would with the real rules, and a move to Bazel modules replaces only this file.
"""

cc_library = native.cc_library
cc_binary = native.cc_binary
cc_test = native.cc_test
cc_import = native.cc_import
cc_toolchain = native.cc_toolchain
cc_toolchain_suite = native.cc_toolchain_suite
objc_library = native.objc_library
objc_import = native.objc_import
cc_proto_library = native.cc_proto_library
fdo_profile = native.fdo_profile
fdo_prefetch_hints = native.fdo_prefetch_hints
