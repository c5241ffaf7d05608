# File: models/collectives/plugins/plugins.bzl
#
# zionsim_collective_plugin(): the Bazel rule for a collective-algorithm
# plug-in (plugin_api.h). It makes lib<name>.so, a cc_binary with
# linkshared = True: the deps (the collectives libraries the plug-in calls,
# e.g. //models/collectives:registry) are linked into the .so, and
# plugin_exports.lds keeps every symbol but the two entry points local, so
# the plug-in needs nothing from the zionsim executable and cannot clash
# with it. `bazel build //path/to:libname.so` builds the plug-in alone; the
# zionsim binary is not rebuilt.

load("@rules_cc//cc:defs.bzl", "cc_binary")

_EXPORTS = "//models/collectives/plugins:plugin_exports.lds"

def zionsim_collective_plugin(name, srcs, deps = [], **kwargs):
    cc_binary(
        name = "lib" + name + ".so",
        srcs = srcs,
        linkshared = True,
        linkopts = ["-Wl,--version-script=$(location %s)" % _EXPORTS],
        additional_linker_inputs = [_EXPORTS],
        deps = deps + [
            "//models/collectives/plugins:plugin_api",
            "//models/collectives:registry",
        ],
        **kwargs
    )
