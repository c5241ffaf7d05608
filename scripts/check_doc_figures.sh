#!/usr/bin/env bash
# Reruns every figure README.md and docs/ quote (tests/doc_figures_test.py),
# the slow ones included, with the optimised binary: a few minutes on two
# cores. The test suite reruns the fast ones on every run.
#
#   scripts/check_doc_figures.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build --config=opt //tools:zionsim
ZIONSIM_DOC_FIGURES_SLOW=1 /usr/bin/python3 tests/doc_figures_test.py \
  "$(bazel info --config=opt bazel-bin 2>/dev/null)/tools/zionsim" README.md docs/*.md
