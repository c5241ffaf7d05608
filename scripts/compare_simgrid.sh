#!/usr/bin/env bash
# File: scripts/compare_simgrid.sh
#
# zionsim's flow model against SimGrid on the identical links, routes and
# flows (issue 43, target 4): staggered random flows on a ZionEX cluster,
# simulated by `zionsim flows` (max-min, exact finishes) and by SimGrid 3.32
# (Debian's libsimgrid-dev, plain max-min: tests/flows_simgrid.cc). Prints
# the worst difference of the finish times and how many flows differ by more
# than 1 ps + 1e-6 of their duration, then each side's wall time, user CPU
# and peak memory (/usr/bin/time) and their ratios: quote user CPU on a
# machine doing other work.
#
#   scripts/compare_simgrid.sh [NODES] [FLOWS] [SEED]     (default 64 20000 1)
#
# Builds both with --config=opt (scripts/setup_debian.sh installs
# libsimgrid-dev; //tests:simgrid_differential_test holds the finish times
# equal on smaller cases in every test run). The flows
# (tests/staggered_flows.py): FLOWS transfers between distinct GPUs drawn
# uniformly (Python's random with SEED), sizes log-uniform from 64 KiB to
# 64 MiB, starts uniform over the first 20 ms: most overlap others'
# transfers, so nearly every start and finish changes the sharing of many
# links.
set -euo pipefail
cd "$(dirname "$0")/.."

NODES="${1:-64}"
FLOWS="${2:-20000}"
SEED="${3:-1}"

bazel build --config=opt //tools:zionsim //tests:flows_simgrid
bin="$(bazel info --config=opt bazel-bin 2>/dev/null)"
zionsim="$bin/tools/zionsim"
flows_simgrid="$bin/tests/flows_simgrid"

work="$(mktemp -d "${TMPDIR:-/tmp}/zionsim-simgrid.XXXXXX")"
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 tests/staggered_flows.py "$NODES" "$FLOWS" "$SEED" 20e6 >"$work/flows_in.json"

"$zionsim" topology --nodes "$NODES" --format json >"$work/topology.json"
/usr/bin/time -f "%e %U %M" -o "$work/zionsim.time" \
  "$zionsim" flows --nodes "$NODES" --flows "$work/flows_in.json" --format json >"$work/zionsim.json"
/usr/bin/time -f "%e %U %M" -o "$work/simgrid.time" \
  "$flows_simgrid" "$work/topology.json" "$work/zionsim.json" \
  --cfg=network/model:CM02 --cfg=network/TCP-gamma:0 --cfg=network/crosstraffic:0 \
  --cfg=surf/precision:1e-12 --cfg=maxmin/precision:1e-9 --log=root.thres:critical >"$work/simgrid.csv"

/usr/bin/python3 - "$work/zionsim.json" "$work/simgrid.csv" "$work/zionsim.time" "$work/simgrid.time" <<'PY'
import csv, json, sys
doc = json.load(open(sys.argv[1]))
z = doc["flows"]
s = {int(r["id"]): int(r["finish_ps"]) for r in csv.DictReader(open(sys.argv[2]))}
(zw, zu, zm), (sw, su, sm) = ([float(x) for x in open(p).read().split()[-3:]] for p in sys.argv[3:5])
# zionsim rounds a finish up to the picosecond (flow_network.h); SimGrid
# keeps a double of seconds, printed to the nearest picosecond.
worst_ps, worst_rel, over = 0, 0.0, 0
for f in z:
    duration = f["finish_ps"] - f["start_ps"]
    diff = abs(f["finish_ps"] - s[f["id"]])
    worst_ps = max(worst_ps, diff)
    worst_rel = max(worst_rel, diff / max(f["finish_ps"], 1))
    over += diff > 1 + 1e-6 * duration
print(f"flows: {len(z)}, makespan {max(f['finish_ps'] for f in z) / 1e9:.6f} ms (zionsim), "
      f"{max(s.values()) / 1e9:.6f} ms (SimGrid)")
print(f"finish times: worst difference {worst_ps} ps, {worst_rel:.2g} of the finish time; "
      f"{over} flows differ by more than 1 ps + 1e-6 of their duration")
print(f"re-solves (zionsim): {doc['resolves']}")
print(f"zionsim: {zw:.2f} s wall, {zu:.2f} s user CPU, {zm / 1024:.0f} MB peak")
print(f"SimGrid: {sw:.2f} s wall, {su:.2f} s user CPU, {sm / 1024:.0f} MB peak")
print(f"SimGrid / zionsim: {su / zu:.1f}x in user CPU, {sw / zw:.1f}x in wall time")
PY
