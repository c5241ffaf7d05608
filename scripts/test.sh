#!/usr/bin/env bash
# Builds everything (benchmarks included, so they cannot rot), runs every test
# with `bazel test //...`, checks that a wrong layering arrow fails the build,
# and ends with one line: "tests: N passed, M failed", counted from the test
# results (GoogleTest cases in each target's test.xml). Exit status is 0 only
# if nothing failed. Extra arguments go to `bazel test` (e.g. --config=asan).
set -uo pipefail
cd "$(dirname "$0")/.."

log=$(mktemp)
trap 'rm -f "$log"' EXIT

status=0
bazel build //... "$@" || status=1
bazel test //... --test_summary=short "$@" 2>&1 | tee "$log"
test_status=${PIPESTATUS[0]}
# 4 means "built, but no tests found"; anything else non-zero is a failure.
if [[ $test_status -ne 0 ]]; then status=1; fi

layering_failures=0
if ! scripts/check_layering.sh; then
  layering_failures=1
  status=1
fi

python3 scripts/test_summary.py "$log" "$(bazel info bazel-testlogs "$@" 2>/dev/null)" \
  "$layering_failures" || status=1
exit $status
