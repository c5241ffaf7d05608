"""fuzz_target: a libFuzzer binary plus a corpus replay test for one parser.

For each `name` it creates:
  <name>_fuzzer             cc_binary. Under --config=fuzz (--define=fuzz=1,
                            clang) it links -fsanitize=fuzzer and libFuzzer
                            supplies main(); otherwise it links
                            fuzz/replay_main.cc so it still builds and can
                            replay files given on the command line.
  <name>_fuzzer_regression  cc_test that replays fuzz/corpus/<name>/ and
                            fuzz/regression/<name>/ through the same
                            LLVMFuzzerTestOneInput (normal gcc build).
"""

load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_test")

def fuzz_target(name, srcs, deps):
    corpus = native.glob(["corpus/%s/**" % name], allow_empty = True)
    regression = native.glob(["regression/%s/**" % name], allow_empty = True)
    cc_binary(
        name = name + "_fuzzer",
        srcs = srcs + select({
            "//fuzz:fuzzing": [],
            "//conditions:default": ["replay_main.cc"],
        }),
        linkopts = select({
            "//fuzz:fuzzing": ["-fsanitize=fuzzer,address,undefined"],
            "//conditions:default": [],
        }),
        deps = deps,
    )
    cc_test(
        name = name + "_fuzzer_regression",
        srcs = srcs + ["replay_main.cc"],
        args = [
            "fuzz/corpus/" + name,
            "fuzz/regression/" + name,
        ],
        data = corpus + regression,
        deps = deps,
        size = "small",
    )
