#!/usr/bin/env bash
# File: scripts/fuzz.sh
#
# Builds the libFuzzer targets of //fuzz with --config=fuzz (clang 14,
# ASan+UBSan) and runs each for SECONDS (default 600) on a scratch copy of
# its seed corpus fuzz/corpus/<name>/ (plus fuzz/regression/<name>/), with
# its dictionary fuzz/dicts/<name>.dict (the JSON targets' also with
# fuzz/dicts/json.dict: deep nesting, numbers past every range, long
# strings). An input that runs longer than ZIONSIM_FUZZ_TIMEOUT seconds
# (default 10; wall clock, so raise it when the fuzzers share the machine
# with other work) is a finding.
# Per target it prints the executions and whether a crash was found; crashing
# inputs are copied into fuzz/regression/<name>/, which the normal-build test
# //fuzz:<name>_fuzzer_regression replays.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 60 cluster_file cli
#
# Exit status: 0 if no target found anything, 1 otherwise, 2 on build failure.

set -uo pipefail

SECONDS_PER_TARGET="${1:-600}"
shift || true
ALL_TARGETS=(cluster_file flow_set trace kineto chakra chakra_et device_profile model schedule_file measurement nccl_tests sharding validation_case cli shard_file)
if [[ $# -gt 0 ]]; then TARGETS=("$@"); else TARGETS=("${ALL_TARGETS[@]}"); fi

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

labels=()
for t in "${TARGETS[@]}"; do labels+=("//fuzz:${t}_fuzzer"); done
if ! bazel build --config=fuzz "${labels[@]}"; then
  echo "fuzz.sh: build failed" >&2
  exit 2
fi
WORK="$(mktemp -d "${TMPDIR:-/tmp}/zionsim-fuzz.XXXXXX")"
echo "fuzz.sh: scratch directory $WORK"
# Copy the binaries so that a rebuild during a long run does not change them.
BIN="$WORK/bin"
mkdir -p "$BIN"
for t in "${TARGETS[@]}"; do
  cp "$(bazel info --config=fuzz bazel-bin 2>/dev/null)/fuzz/${t}_fuzzer" "$BIN/"
done

found=0
summary=()
for t in "${TARGETS[@]}"; do
  dir="$WORK/$t"
  mkdir -p "$dir/corpus" "$dir/artifacts" "$dir/cwd"
  cp -r "fuzz/corpus/$t/." "$dir/corpus/" 2>/dev/null || true
  [[ -d "fuzz/regression/$t" ]] && cp -r "fuzz/regression/$t/." "$dir/corpus/" 2>/dev/null
  dict="$dir/dict.txt"
  : >"$dict"
  case "$t" in
    cli | chakra_et | nccl_tests) ;;
    *) cat fuzz/dicts/json.dict >>"$dict" ;;
  esac
  [[ -f "fuzz/dicts/$t.dict" ]] && { echo; cat "fuzz/dicts/$t.dict"; } >>"$dict"
  echo "=== $t: ${SECONDS_PER_TARGET}s"
  # The CLI target may write files its options name: run from a scratch cwd.
  (
    cd "$dir/cwd" &&
      ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}" \
        UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}" \
        "$BIN/${t}_fuzzer" "$dir/corpus" \
        -max_total_time="$SECONDS_PER_TARGET" -max_len=65536 -timeout="${ZIONSIM_FUZZ_TIMEOUT:-10}" -rss_limit_mb=4096 \
        -dict="$dict" \
        -print_final_stats=1 -artifact_prefix="$dir/artifacts/" >"$dir/log.txt" 2>&1
  )
  rc=$?
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$dir/log.txt" | tail -1 | grep -o '[0-9]*$')"
  # libFuzzer also writes inputs slower than -report_slow_units (10 s) as
  # slow-unit-* artifacts; under the timeout they are not findings: report
  # how many, keep them out of the regression corpus.
  slow=("$dir"/artifacts/slow-unit-*)
  [[ -e "${slow[0]}" ]] && rm -f "${slow[@]}" || slow=()
  artifacts=("$dir"/artifacts/*)
  [[ ${#slow[@]} -gt 0 ]] && echo "$t: ${#slow[@]} input(s) slower than 10 s but under the timeout (not findings)"
  if [[ $rc -ne 0 || -e "${artifacts[0]}" ]]; then
    found=1
    mkdir -p "fuzz/regression/$t"
    for a in "$dir"/artifacts/*; do
      [[ -e "$a" ]] && cp "$a" "fuzz/regression/$t/"
    done
    grep -m1 -E 'ERROR: |runtime error|SUMMARY|deadly signal|timeout' "$dir/log.txt"
    line="$t: ${SECONDS_PER_TARGET}s, ${execs:-?} executions, FOUND (rc=$rc, log $dir/log.txt)"
  else
    line="$t: ${SECONDS_PER_TARGET}s, ${execs:-?} executions, no crash"
  fi
  echo "$line"
  summary+=("$line")
done

echo
echo "=== summary"
printf '%s\n' "${summary[@]}"
# Keep the scratch directory (logs, corpora) only when something was found;
# otherwise each run would leave a quarter of a gigabyte in /tmp.
if [[ $found -eq 0 ]]; then
  rm -rf "$WORK"
else
  echo "fuzz.sh: logs and corpora kept in $WORK"
fi
exit "$found"
