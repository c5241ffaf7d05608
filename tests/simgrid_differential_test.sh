#!/usr/bin/env bash
# zionsim's flow model (`zionsim flows`, max-min, exact finishes) against
# SimGrid 3.32 (tests/flows_simgrid.cc, plain max-min) on the identical
# links, routes and flows: staggered random transfers on one rack of ZionEX
# (16 nodes) and two (32, through eight spines), there healthy, 4:1
# oversubscribed, and with a spine at 5% of its speed (the uneven
# bottlenecks where zionsim re-solves incrementally). Every
# flow's finish time must agree within 1 ps (zionsim rounds up to the
# picosecond) plus 1e-6 of its duration.
set -uo pipefail

root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
zionsim="${root}/tools/zionsim"
simgrid="${root}/tests/flows_simgrid"
dir="${TEST_TMPDIR}/simgrid"
mkdir -p "$dir"
failures=0

# NODES COUNT SEED WINDOW_NS: staggered random flows (tests/staggered_flows.py).
make_flows() {
  /usr/bin/python3 "${root}/tests/staggered_flows.py" "$@"
}

check() {  # check NAME NODES WINDOW_NS CLUSTER-FLAGS...
  local name=$1 nodes=$2 window=$3
  shift 3
  make_flows "$nodes" 2000 7 "$window" >"$dir/$name.in.json"
  if ! "$zionsim" topology --nodes "$nodes" "$@" --format json >"$dir/$name.topology.json" ||
     ! "$zionsim" flows --nodes "$nodes" "$@" --flows "$dir/$name.in.json" --format json >"$dir/$name.zionsim.json"; then
    echo "FAIL: $name: zionsim failed"
    failures=$((failures + 1))
    return
  fi
  # SimGrid's thread contexts: its default raw context switching confuses
  # the address sanitizer of the sanitized build.
  if ! "$simgrid" "$dir/$name.topology.json" "$dir/$name.zionsim.json" \
      --cfg=network/model:CM02 --cfg=network/TCP-gamma:0 --cfg=network/crosstraffic:0 \
      --cfg=surf/precision:1e-12 --cfg=maxmin/precision:1e-9 --cfg=contexts/factory:thread \
      --log=root.thres:critical >"$dir/$name.simgrid.csv"; then
    echo "FAIL: $name: flows_simgrid failed"
    failures=$((failures + 1))
    return
  fi
  if ! /usr/bin/python3 - "$name" "$dir/$name.zionsim.json" "$dir/$name.simgrid.csv" <<'PY'
import csv, json, sys
name = sys.argv[1]
flows = json.load(open(sys.argv[2]))["flows"]
simgrid = {int(r["id"]): int(r["finish_ps"]) for r in csv.DictReader(open(sys.argv[3]))}
assert len(flows) == 2000 and len(simgrid) == 2000, (len(flows), len(simgrid))
bad = []
worst = 0
for f in flows:
    diff = abs(f["finish_ps"] - simgrid[f["id"]])
    worst = max(worst, diff)
    if diff > 1 + 1e-6 * (f["finish_ps"] - f["start_ps"]):
        bad.append((f["id"], f["finish_ps"], simgrid[f["id"]]))
# The case must exercise sharing: a flow alone on its links would agree trivially.
alone = sum(1 for f in flows if f["finish_ps"] - f["first_byte_ps"] <= f["size_bytes"] / 25e9 * 1e12 * 1.001)
print(f"{name}: 2000 flows, worst difference {worst} ps, {len(bad)} beyond 1 ps + 1e-6 of the duration, "
      f"{alone} at their route's full NIC rate")
if bad:
    print("FAIL:", name, "(id, zionsim finish ps, SimGrid finish ps):", bad[:10])
    sys.exit(1)
if alone > len(flows) // 2:
    print("FAIL:", name, "too few flows share a link for the comparison to mean anything")
    sys.exit(1)
PY
  then
    failures=$((failures + 1))
  fi
}

# Starts over 20 ms: most flows overlap a few others. Over 0.5 ms, with the
# rack uplinks 4:1 oversubscribed or one spine at 5% of its speed: the
# uplinks bind, unevenly (ECMP hashes unequal numbers of flows onto them),
# and flows finish at many distinct rates.
check one_rack 16 20e6
check two_racks 32 20e6
check oversubscribed 32 0.5e6 --set fabric.oversubscription=4
check slow_spine 32 0.5e6 --degrade device:spine3=0.05

echo "simgrid differential: ${failures} failure(s)"
[[ $failures -eq 0 ]]
