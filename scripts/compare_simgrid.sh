#!/usr/bin/env bash
# File: scripts/compare_simgrid.sh
#
# zionsim's flow model against SimGrid on the identical links, routes and
# flows (issue 43, target 4): staggered random flows on a ZionEX cluster,
# simulated by `zionsim flows` (max-min, exact finishes) and by SimGrid 3.32
# (Debian's libsimgrid-dev, plain max-min: tests/flows_simgrid.cc). Prints both
# wall times, their ratio, the worst relative difference of the finish times
# and how many flows differ by more than 1e-6 of their duration.
#
#   scripts/compare_simgrid.sh [NODES] [FLOWS] [SEED]     (default 64 20000 1)
#
# Builds both with --config=opt (scripts/setup_debian.sh installs
# libsimgrid-dev; //tests:simgrid_differential_test holds the finish times
# equal on smaller cases in every test run). The flows: FLOWS
# transfers between distinct GPUs drawn uniformly (Python's random with
# SEED), sizes log-uniform from 64 KiB to 64 MiB, starts uniform over the
# first 20 ms: most of them overlap others' transfers, so nearly every start
# and finish changes the sharing of many links.
set -euo pipefail
cd "$(dirname "$0")/../.."

NODES="${1:-64}"
FLOWS="${2:-20000}"
SEED="${3:-1}"

bazel build --config=opt //tools:zionsim //tests:flows_simgrid
bin="$(bazel info --config=opt bazel-bin 2>/dev/null)"
zionsim="$bin/tools/zionsim"
flows_simgrid="$bin/tests/flows_simgrid"

work="$(mktemp -d "${TMPDIR:-/tmp}/zionsim-simgrid.XXXXXX")"
trap 'rm -rf "$work"' EXIT

/usr/bin/python3 - "$NODES" "$FLOWS" "$SEED" >"$work/flows_in.json" <<'PY'
import json, math, random, sys
nodes, count, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
gpus = nodes * 8
rng = random.Random(seed)
flows = []
for i in range(count):
    src = rng.randrange(gpus)
    dst = rng.randrange(gpus - 1)
    dst += dst >= src
    size = int(round(math.exp(rng.uniform(math.log(64 << 10), math.log(64 << 20)))))
    flows.append({"id": i, "src_rank": src, "dst_rank": dst, "size_bytes": size,
                  "start_ns": round(rng.uniform(0, 20e6), 3)})
json.dump({"schema_version": 1, "flows": flows}, sys.stdout)
PY

"$zionsim" topology --nodes "$NODES" --format json >"$work/topology.json"
start=$(date +%s.%N)
"$zionsim" flows --nodes "$NODES" --flows "$work/flows_in.json" --format json >"$work/zionsim.json"
mid=$(date +%s.%N)
"$flows_simgrid" "$work/topology.json" "$work/zionsim.json" \
  --cfg=network/model:CM02 --cfg=network/TCP-gamma:0 --cfg=network/crosstraffic:0 \
  --cfg=surf/precision:1e-12 --cfg=maxmin/precision:1e-9 --log=root.thres:critical >"$work/simgrid.csv"
end=$(date +%s.%N)

/usr/bin/python3 - "$work/zionsim.json" "$work/simgrid.csv" "$start" "$mid" "$end" <<'PY'
import csv, json, sys
z = json.load(open(sys.argv[1]))["flows"]
s = {int(r["id"]): int(r["finish_ps"]) for r in csv.DictReader(open(sys.argv[2]))}
start, mid, end = map(float, sys.argv[3:6])
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
print(f"wall: zionsim {mid - start:.2f} s, SimGrid {end - mid:.2f} s, SimGrid / zionsim {(end - mid) / (mid - start):.1f}x")
PY
