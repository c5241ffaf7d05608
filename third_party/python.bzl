"""Debian's Python headers (python3-dev) for the pybind11 extension.

The include directory carries the interpreter's version (python3.11 on
Debian 12); this rule asks Debian's own interpreter where it is, so the
extension is built for the Python that imports it. Another python3 earlier on
PATH (pyenv and the like) is not asked: it sees none of Debian's modules
(pandas) and may be another version.
"""

def _debian_python_impl(ctx):
    python = ctx.path("/usr/bin/python3")
    if not python.exists:
        fail("Debian's /usr/bin/python3 is missing: run scripts/setup_debian.sh")
    result = ctx.execute([python, "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"])
    if result.return_code != 0:
        fail("python3 could not name its include directory: " + result.stderr)
    include = result.stdout.strip()
    if not ctx.path(include + "/Python.h").exists:
        fail("no Python.h in " + include + ": install python3-dev (scripts/setup_debian.sh)")
    ctx.symlink(include, "include")
    ctx.file("BUILD.bazel", """
load("@rules_cc//cc:defs.bzl", "cc_library")
cc_library(
    name = "headers",
    hdrs = glob(["include/**/*.h"]),
    includes = ["include"],
    visibility = ["//visibility:public"],
)
""")

debian_python = repository_rule(
    implementation = _debian_python_impl,
    local = True,
)
