#!/usr/bin/env bash
# scripts/ingest_kernels_run.sh RESULTS_DIR NAME [CALIBRATE FLAGS...]
#
# Commits-ready a GPU run of kernels_ref/run_suite.sh: copies its four files
# (measurements.jsonl, suite.log, build.log, environment.txt) from
# RESULTS_DIR into calibration/data/NAME/ and calibrates them there:
# profile.json, report.md and the report's plots. Extra arguments go to
# `zionsim calibrate` (default --base h200). A run that lacks a family the
# profile needs is calibrated again with --partial, which is said. Then
# //calibration:measured_run_NAME_test holds the committed profile to the
# measurements (reproducible, hold-out MAPE under 10% per fitted family);
# the script runs it. See docs/calibration.md, "A committed run".
#
#   scripts/ingest_kernels_run.sh /path/to/results h200-2026-12-03
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -lt 2 ]]; then
  echo "usage: $0 RESULTS_DIR NAME [CALIBRATE FLAGS...]" >&2
  exit 2
fi
src=$1
name=$2
shift 2
if ! [[ $name =~ ^[A-Za-z0-9._-]+$ ]]; then
  echo "$0: NAME: expected letters, digits, '.', '_' or '-', got '$name'" >&2
  exit 2
fi
if [[ ! -s $src/measurements.jsonl ]]; then
  echo "$0: $src/measurements.jsonl: missing or empty (is $src a run_suite.sh OUTDIR?)" >&2
  exit 2
fi
dest=calibration/data/$name
if [[ -e $dest ]]; then
  echo "$0: $dest already exists; remove it or choose another NAME" >&2
  exit 2
fi
mkdir -p "$dest"
finished=0
trap '[[ $finished -eq 1 ]] || echo "$0: stopped; $dest is left as it is for a look (remove it to start again)" >&2' EXIT
for f in measurements.jsonl suite.log build.log environment.txt; do
  if [[ -f $src/$f ]]; then cp "$src/$f" "$dest/$f"; else echo "note: $src/$f is missing" >&2; fi
done

flags=("$@")
has_base=0
for a in "${flags[@]}"; do [[ $a == --base || $a == --base=* ]] && has_base=1; done
if [[ $has_base -eq 0 ]]; then flags+=(--base h200); fi

bazel build --config=opt //tools:zionsim
zionsim=$(bazel info --config=opt bazel-bin)/tools/zionsim
calibrate() {
  "$zionsim" calibrate --measurements "$dest/measurements.jsonl" --out "$dest/profile.json" \
    --report "$dest/report.md" "${flags[@]}" "$@"
}
if ! calibrate; then
  echo "note: calibrating again with --partial (the base profile's values where a family is missing)" >&2
  calibrate --partial
fi
bazel test "//calibration:measured_run_${name}_test" --test_output=errors
finished=1
echo "ingested $src as $dest: commit it (git add $dest)"
