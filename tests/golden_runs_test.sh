#!/usr/bin/env bash
# Pinned end-to-end runs: a collective sweep, a what-if of model A (as JSON,
# with its run fingerprints; wall times removed; at the default flow fidelity
# and at linkshare), a sharding plan and a replayed trace must
# print exactly their golden files, and the what-if must print the same with
# one worker thread and with all of them. Refresh the goldens with
#   ZX_UPDATE_GOLDENS=1 bazel run //tests:golden_runs_test
set -uo pipefail
# check() runs at the end of pipelines: in this shell, so that its count of
# failures survives (without lastpipe it ran in a subshell and was lost).
shopt -s lastpipe

root="${TEST_SRCDIR:-}/${TEST_WORKSPACE:-}"
zionsim="$root/tools/zionsim"
golden_dir="$root/tests/golden"
update="${ZX_UPDATE_GOLDENS:-0}"
failures=0
scratch=$(mktemp -d)

check() {  # check NAME (stdin: the output)
  local name=$1
  cat >"$scratch/$name"
  if [[ $update == 1 && -n ${BUILD_WORKSPACE_DIRECTORY:-} ]]; then
    cp "$scratch/$name" "$BUILD_WORKSPACE_DIRECTORY/tests/golden/$name"
    echo "updated tests/golden/$name"
    return
  fi
  if ! diff -u "$golden_dir/$name" "$scratch/$name"; then
    echo "FAIL: $name differs from its golden file"
    failures=$((failures + 1))
  fi
}

"$zionsim" collective --nodes 2 --algo ring --algo hierarchical --algo nccl-2.13 -b 1K -e 64M -f 8 |
  check collective_sweep.txt
"$zionsim" whatif --model dlrm-a --nodes 1,8,16 --format json --threads 1 | grep -v wall_seconds |
  check whatif_dlrm_a.json
"$zionsim" whatif --model dlrm-a --nodes 1,8,16 --fidelity linkshare --format json --threads 1 | grep -v wall_seconds |
  check whatif_dlrm_a_linkshare.json
"$zionsim" whatif --model dlrm-a --nodes 1,8,16 --format json | grep -v wall_seconds >"$scratch/parallel.json"
if ! diff -q "$scratch/whatif_dlrm_a.json" "$scratch/parallel.json" >/dev/null; then
  echo "FAIL: whatif with one thread and with all threads differ"
  failures=$((failures + 1))
fi
# A sweep over a knob as well as sizes: every (variant, size) row, and
# throughput against the first variant.
"$zionsim" whatif --model dlrm-a-small --nodes 1,2 --vary nic-gbit=100,400 --vary a2a-precision=fp32,fp16 \
  --format csv | check whatif_vary.csv
# A sharding plan that mixes replicated, table-wise and table-row-wise tables.
"$zionsim" plan --model dlrm-dcnv2 --nodes 2 --per-table | check plan_dcnv2.txt
"$zionsim" run --nodes 1 --trace "$root/workloads/testdata/two_ranks.trace.json" --format json | grep -v "\"trace\":" |
  check run_two_ranks.json

rm -rf "$scratch"
exit $((failures > 0))
