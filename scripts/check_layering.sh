#!/usr/bin/env bash
# Proves that the package groups in //:BUILD.bazel enforce the layering: each
# probe target under */layering_probe depends on a package its layer must not
# use, and must fail analysis with a visibility error. Prints one line per
# probe; exits non-zero if any wrong arrow builds.
set -uo pipefail
cd "$(dirname "$0")/.."

probes=(
  "//topology/layering_probe:uses_engine"        # topology must not see the engine
  "//calibration/layering_probe:uses_engine"     # calibration never runs the simulator
  "//sim/layering_probe:uses_tools"              # sim is a leaf
)

failures=0
for probe in "${probes[@]}"; do
  out=$(bazel build --nobuild "$probe" 2>&1)
  if grep -q "is not visible from target" <<<"$out"; then
    echo "layering: $probe rejected, as it should be"
  else
    echo "layering: $probe was NOT rejected by visibility:" >&2
    echo "$out" | tail -5 >&2
    failures=$((failures + 1))
  fi
done
exit $((failures > 0))
