#!/usr/bin/env bash
# Runs the Python package's pytest suite against the extension and the zionsim
# binary of the same build, with Debian's python3 (the one the extension is
# built for). Cases go to $XML_OUTPUT_FILE, so the test summary counts them.
set -euo pipefail

root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
export PYTHONPATH="${root}/python/package"
export ZIONSIM_BIN="${root}/tools/zionsim"
export ZIONSIM_TESTDATA="${root}"
export MPLBACKEND=Agg
export MPLCONFIGDIR="${TEST_TMPDIR}/matplotlib"

# Under --config=asan the extension carries the sanitizers' runtime, which
# must be loaded before anything else in an uninstrumented interpreter, and
# libstdc++ with it (else ASan's __cxa_throw interceptor finds no real one
# and aborts at the first C++ exception); the interpreter's own allocations
# are not ours to leak-check.
extension="${root}/python/package/zionsim/_zionsim.so"
asan=$(ldd "$extension" | awk '/libasan/ {print $3}')
if [[ -n $asan ]]; then
  export LD_PRELOAD="$asan $(ldd "$extension" | awk '/libstdc\+\+/ {print $3}')"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
fi

xml=()
if [[ -n ${XML_OUTPUT_FILE:-} ]]; then xml=(--junitxml="$XML_OUTPUT_FILE"); fi
cd "$TEST_TMPDIR"
exec /usr/bin/python3 -m pytest -q -p no:cacheprovider "${xml[@]}" "${root}/python/tests"
