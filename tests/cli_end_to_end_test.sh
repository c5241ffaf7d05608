#!/usr/bin/env bash
# End-to-end: the zionsim binary prints help and version on stdout with exit
# status 0, and answers bad usage with a message on stderr and exit status 2.
set -uo pipefail

zionsim="${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/zionsim"
failures=0
out=$(mktemp); err=$(mktemp)

expect() {  # expect STATUS STREAM PATTERN -- ARGS...
  local want_status=$1 stream=$2 pattern=$3
  shift 4
  "$zionsim" "$@" >"$out" 2>"$err"
  local status=$?
  local file=$out
  [[ $stream == err ]] && file=$err
  if [[ $status -ne $want_status ]] || ! grep -q -- "$pattern" "$file"; then
    echo "FAIL: zionsim $*: status $status (want $want_status), $stream lacks '$pattern'"
    echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
    failures=$((failures + 1))
  fi
}

expect 0 out "Subcommands:" -- --help
expect 0 out "^zionsim [0-9]" -- --version
expect 0 out "^zionsim [0-9]" -- version
expect 0 out "clusters:" -- list
expect 0 out "\"degrade\": \[\"gpu:3=0.5\"\]" -- topology --nodes 1 --degrade gpu:3=0.5 --format json
# The communication library's latencies: the defaults, and --set changes them
# (topology summary, collective footer, the dump's "communication" object).
lacks() {  # lacks PATTERN -- ARGS...: status 0, and stdout without PATTERN
  local pattern=$1
  shift 2
  "$zionsim" "$@" >"$out" 2>"$err"
  local status=$?
  if [[ $status -ne 0 ]] || grep -q -- "$pattern" "$out"; then
    echo "FAIL: zionsim $*: status $status (want 0), stdout has '$pattern'"
    echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err"
    failures=$((failures + 1))
  fi
}

expect 0 out "^communication library: launch 6.6 us, per transfer 400 ns inside a server, 1.2 us between servers$" -- topology --nodes 2
expect 0 out "^# communication library: launch 2 us, per transfer 400 ns inside a server, 1.2 us between servers$" -- collective --nodes 1 -b 8 -e 8 --set communication.launch_latency_ns=2000
expect 0 out "\"communication\": {\"launch_latency_ns\":6600.0,\"transfer_latency_ns\":250.0,\"network_transfer_latency_ns\":1200.0,\"peer_gap_ns\":0.0}" -- topology --nodes 1 --set communication.transfer_latency_ns=250 --format json
# The hierarchical all-reduce of 1 KiB on 4 servers: along the rails 2 + 2
# halving/doubling steps (25.82 us) or 3 + 3 ring steps (31.22 us), each
# step between servers 2.7 us (1.5 us of links, 1.2 of the library).
expect 0 out "^ *1024 *256 *fp32 | *25.82 " -- collective --nodes 4 --algo hierarchical -b 1K -e 1K
expect 0 out "^ *1024 *256 *fp32 | *31.22 " -- collective --nodes 4 --algo hierarchical --options 'hierarchical={"across":"ring"}' -b 1K -e 1K
expect 2 err "/across: unknown value 'tree'; valid: auto, halving_doubling, mixed_radix, ring" -- collective --nodes 4 --algo hierarchical --options 'hierarchical={"across":"tree"}'
# whatif's JSON says which latencies each result ran with.
expect 0 out '"launch_latency_ns": 1000.0,' -- whatif --model dlrm-a-small --nodes 1 --set communication.launch_latency_ns=1000 --format json
# 8 B all-reduced by a ring on one server: the launch and 14 transfers of
# 0.4 us beside 14 x 0.2 us on the links: 15.00 us (NCCL's model: 15.00).
expect 0 out "^ *8 *2 *fp32 | *15.00 .*| *15.00 " -- collective --nodes 1 -b 8 -e 8 --algo ring nccl
# A ring of one channel leaves each server through one GPU and NIC: over
# several servers the sweep says so and how to use every NIC, not on one
# server nor once channels are given.
expect 0 out "^# ring: 1 channel (its default), .*'ring={\"channels\": 8}' (8x the steps" -- collective --nodes 2 --algo ring -b 1M -e 1M
lacks "^# ring:" -- collective --nodes 1 --algo ring -b 1M -e 1M
lacks "^# ring:" -- collective --nodes 2 --algo ring --options 'ring={"channels": 8}' -b 1M -e 1M
lacks "^# ring:" -- collective --nodes 2 --algo hierarchical -b 1M -e 1M
# The double binary tree likewise, channels and pipelining; a chain inside a
# server, as NCCL's, unless "layout": "flat" (8 B on one server: 15.00 us as
# the ring's path, 10.20 us flat).
expect 0 out "^# double_binary_tree: 1 channel and 1 chunk (its defaults), .*\"channels\": 8, \"chunks\": 16}' (128x the steps" -- collective --nodes 2 --algo double_binary_tree ring -b 1M -e 1M
lacks "^# double_binary_tree:" -- collective --nodes 2 --algo double_binary_tree --options 'double_binary_tree={"chunks": 4}' -b 1M -e 1M
expect 0 out "^ *8 *2 *fp32 | *15.00 " -- collective --nodes 1 -b 8 -e 8 --algo double_binary_tree
expect 0 out "^ *8 *2 *fp32 | *10.20 " -- collective --nodes 1 -b 8 -e 8 --algo double_binary_tree --options 'double_binary_tree={"layout": "flat"}'
expect 2 err "/layout: unknown value 'tree'; valid: flat, servers" -- collective --nodes 2 --algo double_binary_tree --options 'double_binary_tree={"layout": "tree"}'
expect 0 out "^ *8 *2 *fp32 | *2.80 " -- collective --nodes 1 -b 8 -e 8 --algo ring --set communication.launch_latency_ns=0 --set communication.transfer_latency_ns=0
expect 0 out "scaling is against 2 nodes, where 2994 tables live in host memory" -- whatif --model dlrm-a --nodes 2,8
expect 0 out "\"name\": \"h200\"" -- list gpus --format json
expect 2 err "zionsim: error: expected a command" --
expect 2 err "unknown command 'frobnicate'" -- frobnicate
expect 2 err "zionsim: error:" -- list --no-such-flag

# The JSON dump of a 2-node ZionEX is the pinned golden file, byte for byte.
golden="${TEST_SRCDIR}/${TEST_WORKSPACE}/topology/testdata/zionex_2nodes.golden.json"
if ! "$zionsim" topology --nodes 2 --format json | diff -q - "$golden" >/dev/null; then
  echo "FAIL: zionsim topology --nodes 2 --format json differs from $golden"
  failures=$((failures + 1))
fi
# A dumped cluster reads back as a cluster file with the same summary.
dump=$(mktemp --suffix=.json)
"$zionsim" topology --cluster hgx --nodes 3 --format json >"$dump"
if ! diff <("$zionsim" topology --cluster hgx --nodes 3 | tail -n +3) \
          <("$zionsim" topology --cluster "$dump" | tail -n +2) >/dev/null; then
  echo "FAIL: the dumped hgx cluster does not read back to the same summary"
  diff <("$zionsim" topology --cluster hgx --nodes 3 | tail -n +3) <("$zionsim" topology --cluster "$dump" | tail -n +2)
  failures=$((failures + 1))
fi
rm -f "$dump"
expect 2 err "unknown key 'oversubscripton'" -- topology --set fabric.oversubscripton=2
expect 2 err "unknown collective kind 'all_to_al'" -- whatif --model dlrm-a-small --nodes 1 --algo all_to_al=direct
# NCCL's point-to-point all-to-all (docs/network_model.md): NIC-bound at 256
# MiB per rank on 16 nodes: 25.92 GB/s bus bandwidth, under the NIC's 25
# GB/s per direction x nodes / (nodes - 1) = 26.67 (nccl-tests' convention,
# NVIDIA/nccl-tests issue 130), as direct's; NVLink-bound on one node (the
# same as direct's); its options are NCCL's variables, checked as NCCL's.
expect 0 out "^ *268435456 .*| *10277\.15 *26\.12 *25\.92$" -- collective --nodes 16 --op all_to_all --algo nccl_p2p -b 256M -e 256M
expect 0 out "^ *268435456 .*| *840\.11 *319\.52 *279\.58$" -- collective --nodes 1 --op all_to_all --algo nccl_p2p -b 256M -e 256M
# docs/network_model.md's table: small all-to-alls, where the work items and
# PXN's hop show (direct, then nccl_p2p), and the issue gap.
expect 0 out "^ *65536 .*| *11\.81 .*| *12\.09 " -- collective --nodes 16 --op all_to_all --algo direct --algo nccl_p2p -b 64K -e 64K
expect 0 out "^ *65536 .*| *11\.94 .*| *16\.58 " -- collective --nodes 32 --op all_to_all --algo direct --algo nccl_p2p -b 64K -e 64K
expect 0 out "^ *65536 .*| *10\.64 .*| *11\.07 " -- collective --nodes 2 --op all_to_all --algo direct --algo nccl_p2p -b 64K -e 64K
expect 0 out "^ *65536 .*| *316\.50 .*| *318\.62 " -- collective --nodes 16 --op all_to_all --algo direct --algo nccl_p2p -b 64K -e 64K --set communication.peer_gap_ns=2450
expect 0 out "^ *nccl_p2p |     4    32    16384      1\.289 " -- whatif --model dlrm-dcnv2 --cluster hgx --nodes 4 --vary algo.all_to_all=direct,nccl_p2p
expect 0 out "^ *direct |     4    32    16384      1\.323 " -- whatif --model dlrm-dcnv2 --cluster hgx --nodes 4 --vary algo.all_to_all=direct,nccl_p2p
expect 0 out "^ *nccl_p2p |     8    64    32768     66\.350 " -- whatif --model dlrm-a --nodes 8 --vary algo.all_to_all=direct,nccl_p2p
expect 2 err "unknown key 'NCCL_PXN_DISABLED'" -- collective --nodes 2 --op all_to_all --algo nccl_p2p --options 'nccl_p2p={"NCCL_PXN_DISABLED": 1}'
expect 2 err "NCCL 2.13 has no NCCL_P2P_NET_CHUNKSIZE" -- collective --nodes 2 --op all_to_all --algo nccl_p2p --options 'nccl_p2p={"version": "2.13", "NCCL_P2P_NET_CHUNKSIZE": 65536}'
# --fidelity coalesced: docs/network_model.md's table ("Coalesced finishes"),
# the rows a test can afford; an unknown fidelity lists the three.
expect 0 out "^ *coalesced |     8    64    32768     66\.367 " -- whatif --model dlrm-a --nodes 8 --vary fidelity=flow,coalesced
expect 0 out "^ *flow |     8    64    32768     66\.350 " -- whatif --model dlrm-a --nodes 8 --vary fidelity=flow,coalesced
expect 0 out "^ *coalesced |    16   128    65536     68\.969 " -- whatif --model dlrm-a --nodes 16 --vary fidelity=coalesced
expect 0 out "^ *coalesced |     8    64 .* 20\.623 " -- whatif --model dlrm-i --nodes 8 --vary fidelity=flow,coalesced
expect 0 out "^ *coalesced |    16   128 .* 15\.454 " -- whatif --model dlrm-f --nodes 16 --vary fidelity=flow,coalesced
expect 0 out '"fidelity": "coalesced"' -- whatif --model dlrm-a-small --nodes 1 --fidelity coalesced --format json
expect 2 err "fidelity.*one of flow, coalesced, linkshare, analytical" -- whatif --model dlrm-a-small --nodes 1 --vary fidelity=exact
# flows at linkshare: each flow a bundle of one, its route kept (a ring's
# hops are not shared: flow's times exactly).
expect 0 out '^0,0,1,1048576,0,200000,3918355,0 3$' -- flows --nodes 2 --pattern ring --fidelity linkshare --format csv
expect 0 out '^1,1,2,1048576,0,200000,3918355,2 5$' -- flows --nodes 2 --pattern ring --fidelity flow --format csv
# --vary: a column per knob and "vs first" in the table; the variant of each
# result and the varied values in JSON.
expect 0 out "embeddings | nodes" -- whatif --model dlrm-a-small --nodes 1 --vary embeddings=fused,unfused
expect 0 out '"throughput_vs_first_variant"' -- whatif --model dlrm-a-small --nodes 1 --vary embeddings=fused,unfused --format json
expect 0 out '"embeddings": "unfused"' -- whatif --model dlrm-a-small --nodes 1 --vary embeddings=fused,unfused --format json
# Model F keeps tables in host memory: prefetching the cache's misses of the
# next batch takes them off the critical path (15.450 -> 10.444 ms).
expect 0 out "^ *on |    16   128    65536     10\.444" -- whatif --model dlrm-f --nodes 16 --vary prefetch-cache=off,on
expect 0 out "^ *off |    16   128    65536     15\.450" -- whatif --model dlrm-f --nodes 16 --vary prefetch-cache=off,on
# NCCL's own cost model prices the dense all-reduce (README's what-if flag).
expect 0 out "^ *nccl |     1     8     4096" -- whatif --model dlrm-a-small --nodes 1 --vary algo.all_reduce=hierarchical,nccl
expect 0 out "^    1     8     4096" -- whatif --model dlrm-a-small --nodes 1 --algo all_reduce=nccl-2.13
# Host memory is a node's: model F on 16 nodes fills it (3 tables of 378 GB
# table-row-wise and 9 row-wise shares), within the 1,350 GB usable.
expect 0 out "^host memory (GB) *1345.599 *1345.599 *1345.599 *1.000$" -- plan --model dlrm-f --nodes 16
expect 0 out "^(of 1350.0 GB usable per node: 90% of 1500.0 GB)$" -- plan --model dlrm-f --nodes 16
# Zipf lookups: each host-memory table's hit rate is an LRU cache's, of 5%
# of its shards' rows: 91.5 M table-row-wise (48 tables), 5.7 M row-wise (9).
expect 0 out "hit rate 85.4% over their lookups (LRU, Zipf alpha 1.05)" -- plan --model dlrm-f --nodes 16 --index-zipf-alpha 1.05
expect 0 out '"cache_hit_rate": 0.8595' -- plan --model dlrm-f --nodes 16 --index-zipf-alpha 1.05 --per-table --format json
expect 0 out '"cache_hit_rate": 0.8218' -- plan --model dlrm-f --nodes 16 --index-zipf-alpha 1.05 --per-table --format json
# A plan whose busiest GPU carries well above the mean says so (DCNv2's few
# heavy tables on 16 GPUs). Model A's 4,096 tables over 768 GPUs (5 1/3
# each) balance: 256 of them split column-wise in three.
expect 0 out "^note: the busiest GPU's embedding work is 31.9% above the mean" -- plan --model dlrm-dcnv2 --nodes 2
expect 0 out "^column_wise  *256 " -- plan --model dlrm-a --nodes 96
expect 0 out "^balancing: 256 tables split column-wise into 768 shards to even out the GPUs' work (max/mean 1.125 whole)" -- plan --model dlrm-a --nodes 96
expect 0 out "^embedding fwd+bwd (ms) .* 1\.000$" -- plan --model dlrm-a --nodes 96
# A size too large for the machine is refused before it starts, with the numbers.
expect 2 err "^zionsim: error: --nodes: 4096 nodes (32768 GPUs) would need about 1300 GiB to simulate (about 1.3 KB per pair" -- whatif --model dlrm-a --nodes 4096
expect 2 err "^zionsim: error: --nodes: 2048 nodes (16384 GPUs) would need about 325 GiB to simulate" -- plan --model dlrm-a --nodes 2048 --search
# A timeline keeps every flow's record: the estimate says so.
expect 2 err "^zionsim: error: --nodes: 4096 nodes (32768 GPUs) would need about 1328 GiB to simulate and write as a timeline or trace" -- whatif --model dlrm-a --nodes 4096 --timeline "$out.timeline.json"
# run: a trace's memory grows with its largest all-to-all (32,768 ranks here),
# not with its ranks (the same ranks computing only run at once).
big_trace=$(mktemp)
{
  printf '{"schema_version": 1, "ranks": 32768, "streams": ["s"], "collectives": [{"id": 0, "kind": "all_to_all", "size_bytes": 1048576, "ranks": [0'
  for ((r = 1; r < 32768; ++r)); do printf ',%d' "$r"; done
  printf ']}], "ops": [{"id": 0, "rank": 0, "stream": "s", "kind": "collective", "collective": 0}'
  for ((r = 1; r < 32768; ++r)); do printf ',{"id": %d, "rank": %d, "stream": "s", "kind": "collective", "collective": 0}' "$r" "$r"; done
  printf ']}\n'
} >"$big_trace"
expect 2 err "^zionsim: error: --trace: a run whose all-to-alls span 32768 GPUs would need about 1300 GiB to simulate" -- run --trace "$big_trace" --nodes 4096
sed -e 's/"kind": "collective", "collective": 0/"kind": "compute", "duration_ns": 10/g' -e 's/"collectives": \[.*\]}\], "ops"/"ops"/' "$big_trace" >"$big_trace.compute"
expect 0 out "^iteration time: 0.000010 ms" -- run --trace "$big_trace.compute" --nodes 4096
rm -f "$big_trace" "$big_trace.compute"
expect 2 err "give --prefetch-cache or --vary prefetch-cache=..., not both" -- whatif --model dlrm-f --nodes 16 --prefetch-cache --vary prefetch-cache=off,on

# A what-if iteration emitted as a trace and run back simulates to the same
# picosecond: the fingerprints of the two runs agree.
trace=$(mktemp --suffix=.json)
w=$("$zionsim" whatif --model dlrm-a-small --nodes 2 --format json --emit-trace "$trace" | grep '"fingerprint"')
r=$("$zionsim" run --nodes 2 --trace "$trace" --format json | grep '"fingerprint"' | tr -d ' ,')
if [[ -z $w || "$(echo "$w" | tr -d ' ,')" != "$r" ]]; then
  echo "FAIL: whatif and run of its emitted trace differ: '$w' vs '$r'"
  failures=$((failures + 1))
fi
# --options reach the algorithms of whatif and run alike: hierarchical
# collectives in two pipelined slices change the iteration, and its emitted
# trace, run with the same options, simulates to the same picosecond.
sliced=$(mktemp --suffix=.json)
wo=$("$zionsim" whatif --model dlrm-a-small --nodes 2 --format json --options 'hierarchical={"chunks":2}' --emit-trace "$sliced" | grep '"fingerprint"' | tr -d ' ,')
ro=$("$zionsim" run --nodes 2 --trace "$sliced" --format json --options 'hierarchical={"chunks":2}' | grep '"fingerprint"' | tr -d ' ,')
if [[ -z $wo || "$wo" != "$ro" || "$wo" == "$r" ]]; then
  echo "FAIL: --options: whatif '$wo', run of its trace '$ro', without options '$r'"
  failures=$((failures + 1))
fi
expect 0 out '"chunks": 2' -- whatif --model dlrm-a-small --nodes 1 --options 'hierarchical={"chunks":2}' --format json
rm -f "$sliced"
# --algo KIND=auto: whatif and run of its emitted trace tune alike (one
# HGX server: NVLink SHARP wins the all-reduce, so the run differs from the
# default's) and both say what they ran.
tuned=$(mktemp --suffix=.json)
wa=$("$zionsim" whatif --model dlrm-a-small --cluster hgx --nodes 1 --algo all_reduce=auto --format json --emit-trace "$tuned" | grep '"fingerprint"' | tr -d ' ,')
ra=$("$zionsim" run --cluster hgx --nodes 1 --trace "$tuned" --algo all_reduce=auto --format json | grep '"fingerprint"' | tr -d ' ,')
wd=$("$zionsim" whatif --model dlrm-a-small --cluster hgx --nodes 1 --format json | grep '"fingerprint"' | tr -d ' ,')
if [[ -z $wa || "$wa" != "$ra" || "$wa" == "$wd" ]]; then
  echo "FAIL: --algo all_reduce=auto: whatif '$wa', run of its trace '$ra', the default '$wd'"
  failures=$((failures + 1))
fi
expect 0 out '^  1 node: all_reduce: nvls x1 ' -- whatif --model dlrm-a-small --cluster hgx --nodes 1 --algo all_reduce=auto
expect 0 out '"chosen": "nvls"' -- run --cluster hgx --nodes 1 --trace "$tuned" --algo all_reduce=auto --format json
expect 0 out '^  all_reduce: nvls x1 ' -- run --cluster hgx --nodes 1 --trace "$tuned" --algo all_reduce=auto
rm -f "$tuned"
# Writing a timeline does not change the run; the timeline has a process per
# NIC with matched tx/rx transfer slices and transfer arrows.
timeline=$(mktemp --suffix=.json)
t=$("$zionsim" run --nodes 2 --trace "$trace" --format json --timeline "$timeline" | grep '"fingerprint"' | tr -d ' ,')
if [[ "$t" != "$r" ]]; then
  echo "FAIL: run with --timeline has another fingerprint: '$t' vs '$r'"
  failures=$((failures + 1))
fi
# A timeline with a process per NIC, matched tx/rx slices and transfer arrows.
timeline_has_nics_and_arrows() {
  python3 - "$1" <<'PY'
import collections, json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
names = [e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
assert sum(n.startswith("NIC node") for n in names) == 16, names
kinds = collections.Counter((e["ph"], e.get("cat")) for e in ev)
assert kinds[("b", "tx")] == kinds[("e", "tx")] == kinds[("b", "rx")] == kinds[("e", "rx")] > 0, kinds
assert kinds[("s", "transfer")] == kinds[("f", "transfer")] > 0, kinds
assert kinds[("X", None)] == 0 and sum(v for (ph, _), v in kinds.items() if ph == "X") > 0, kinds
assert t["otherData"]["zionsim"]["transfers_left_out"] == 0
PY
}
if ! timeline_has_nics_and_arrows "$timeline"; then
  echo "FAIL: the timeline of the run lacks NIC tracks or transfer arrows"
  failures=$((failures + 1))
fi
# At linkshare a step's transfers are one bundle: the timeline still has
# every transfer, drawn over its step's time, and the NICs it crossed.
t=$("$zionsim" run --nodes 2 --trace "$trace" --fidelity linkshare --format json --timeline "$timeline" | grep -c '"fingerprint"')
if [[ "$t" != 1 ]] || ! timeline_has_nics_and_arrows "$timeline"; then
  echo "FAIL: the linkshare timeline of the run lacks NIC tracks or transfer arrows"
  failures=$((failures + 1))
fi
# run --vary: every variant is the run of the same settings alone (the
# fingerprints agree; 200 Gb/s is the preset's own NIC), and a slower NIC
# changes the run.
v=$("$zionsim" run --nodes 2 --trace "$trace" --format json --vary nic-gbit=100,200 | grep '"fingerprint"' | tr -d ' ,')
a=$("$zionsim" run --nodes 2 --trace "$trace" --format json --set nic.bandwidth_gbit_per_s=100 | grep '"fingerprint"' | tr -d ' ,')
if [[ "$v" != "$(printf '%s\n%s' "$a" "$r")" || "$a" == "$r" ]]; then
  echo "FAIL: run --vary differs from the variants run alone: '$v' vs '$a' and '$r'"
  failures=$((failures + 1))
fi
# run --vary cluster=...: each variant is the run on that cluster alone (HGX
# B200's NVLink and 400 Gb/s NICs run the trace's collectives faster).
vc=$("$zionsim" run --nodes 2 --trace "$trace" --format json --vary cluster=zionex,hgx-b200 | grep '"fingerprint"' | tr -d ' ,')
b=$("$zionsim" run --nodes 2 --trace "$trace" --format json --cluster hgx-b200 | grep '"fingerprint"' | tr -d ' ,')
if [[ "$vc" != "$(printf '%s\n%s' "$r" "$b")" || "$b" == "$r" ]]; then
  echo "FAIL: run --vary cluster differs from the clusters run alone: '$vc' vs '$r' and '$b'"
  failures=$((failures + 1))
fi
expect 0 out "^hgx-b200 |" -- run --nodes 2 --trace "$trace" --vary cluster=zionex,hgx-b200
expect 2 err "^zionsim: error: --vary: cluster: give --cluster or --vary cluster=..., not both" -- run --nodes 2 --trace "$trace" --cluster hgx --vary cluster=zionex,hgx-b200
expect 2 err "^zionsim: error: --vary: cluster: unknown cluster 'hgx-h200'" -- run --nodes 2 --trace "$trace" --vary cluster=zionex,hgx-h200
expect 0 out "nic-gbit algo.all_to_all |" -- run --nodes 2 --trace "$trace" --vary nic-gbit=100 --vary algo.all_to_all=direct,pairwise
one=$("$zionsim" run --nodes 2 --trace "$trace" --format json --vary nic-gbit=100,200,400 --threads 1)
all=$("$zionsim" run --nodes 2 --trace "$trace" --format json --vary nic-gbit=100,200,400)
if [[ -z $one || "$one" != "$all" ]]; then
  echo "FAIL: run --vary prints differently on one thread and on all"
  failures=$((failures + 1))
fi
# collective simulates its rows in parallel: the table is the same on one thread.
one=$("$zionsim" collective --nodes 2 --op all_to_all --algo direct --algo pairwise -b 1K -e 16M -f 16 --threads 1)
all=$("$zionsim" collective --nodes 2 --op all_to_all --algo direct --algo pairwise -b 1K -e 16M -f 16)
if [[ -z $one || "$one" != "$all" ]]; then
  echo "FAIL: collective prints differently on one thread and on all"
  failures=$((failures + 1))
fi
plot=$(mktemp --suffix=.svg)
expect 0 out "busbw" -- collective --nodes 1 --algo ring --algo tree --op broadcast -b 1K -e 1M -f 32 --plot "$plot"
if [[ $(grep -c '<path' "$plot") != 4 ]]; then
  echo "FAIL: collective --plot did not draw two curves per algorithm"
  failures=$((failures + 1))
fi
rm -f "$plot"
# --degrade: the header names what is degraded; a straggler at half speed
# slows model A-small's iteration; the topology of a degraded cluster reads
# back with the degraded bandwidth.
expect 0 out "degraded: gpu:0=0.5, device:node0/nic0=0.5" -- whatif --nodes 1 --model dlrm-a-small --degrade gpu:0=0.5 --degrade device:node0/nic0=0.5
# A cluster file's own degrade list is in the header and the JSON too,
# before the flag's.
degraded_file=$(mktemp --suffix=.json)
echo '{"schema_version": 1, "preset": "zionex", "degrade": ["gpu:1=0.5"]}' >"$degraded_file"
expect 0 out "degraded: gpu:1=0.5, gpu:0=0.9\$" -- whatif --nodes 1 --model dlrm-a-small --cluster "$degraded_file" --degrade gpu:0=0.9
expect 0 out '"degrade": \[' -- whatif --nodes 1 --model dlrm-a-small --cluster "$degraded_file" --format json
healthy_ms=$("$zionsim" whatif --nodes 1 --model dlrm-a-small --format csv 2>/dev/null | awk -F, 'NR==2 {print $5}')
slow_ms=$("$zionsim" whatif --nodes 1 --model dlrm-a-small --degrade gpu:3=0.5 --format csv 2>/dev/null | awk -F, 'NR==2 {print $5}')
if ! awk -v a="$healthy_ms" -v b="$slow_ms" 'BEGIN { exit !(a > 0 && b > a) }'; then
  echo "FAIL: a straggler at half speed did not slow the iteration ($healthy_ms -> $slow_ms ms)"
  failures=$((failures + 1))
fi
expect 0 out "degrade=device:node1/nic3=0.5: 16 ranks of preset zionex, degraded: device:node1/nic3=0.5" -- collective --nodes 2 -b 1M -e 1M --vary degrade=none,device:node1/nic3=0.5
expect 2 err "runs no GPU kernels" -- collective --nodes 2 --vary degrade=gpu:1=0.5
# whatif and plan take a cluster file in the explicit form at its own size:
# ZionEX's 2-node graph as a file trains model A-small to the preset's bits;
# another --nodes is refused with the size the file has.
w=$("$zionsim" whatif --cluster "$golden" --nodes 2 --model dlrm-a-small --format json 2>/dev/null | grep '"fingerprint"')
p=$("$zionsim" whatif --nodes 2 --model dlrm-a-small --format json 2>/dev/null | grep '"fingerprint"')
if [[ -z $w || "$w" != "$p" ]]; then
  echo "FAIL: whatif on the explicit 2-node graph differs from the preset: '$w' vs '$p'"
  failures=$((failures + 1))
fi
expect 2 err "lists its graph explicitly, with GPUs on 2 servers: give --nodes 2 (got 4)" -- whatif --cluster "$golden" --nodes 4 --model dlrm-a-small
expect 0 out "16 GPUs" -- plan --cluster "$golden" --nodes 2 --model dlrm-a-small
# plan takes --degrade only with --search (the planner plans for healthy hardware).
expect 2 err "add --search" -- plan --nodes 1 --model dlrm-a-small --degrade gpu:0=0.5
expect 0 out "^search: 4 simulated iterations" -- plan --nodes 1 --model dlrm-a-small --degrade gpu:0=0.5 --search --search-budget 4
# run --degrade gpu:1=0.5 on tests' two-rank trace: rank 1's kernels (150 +
# 300 + 50 ns) take twice as long, rank 0's (450 ns) keep their time, and the
# iteration grows by rank 1's first and last kernels' extra 150 + 50 ns, the
# all-reduce between them waiting for it: 27,720 -> 27,920 ns (with
# communication taking no SMs from compute; the executor's tests check that;
# 7,400 ns of it are the communication library's: the 6,600 ns launch and
# two ring steps' 400 ns per transfer).
two_ranks="${TEST_SRCDIR}/${TEST_WORKSPACE}/workloads/testdata/two_ranks.trace.json"
if ! "$zionsim" run --nodes 1 --trace "$two_ranks" --degrade gpu:1=0.5 --set gpu.communication_sms=0 --format json | python3 -c '
import json, sys
r = json.load(sys.stdin)
assert abs(r["iteration_time_ms"] - 0.02792) < 1e-12, r["iteration_time_ms"]
assert abs(r["ranks"][0]["compute_ms"] - 0.00045) < 1e-12, r["ranks"][0]
assert abs(r["ranks"][1]["compute_ms"] - 0.001) < 1e-12, r["ranks"][1]
assert "degraded: gpu:1=0.5" in r["cluster"], r["cluster"]
'; then
  echo "FAIL: run --degrade gpu:1=0.5 of the two-rank trace is not the closed form"
  failures=$((failures + 1))
fi
# The trace a degraded what-if emits carries the straggler's kernels: run
# without --degrade gpu replays it to the same fingerprint.
straggler=$(mktemp --suffix=.json)
w=$("$zionsim" whatif --model dlrm-a-small --nodes 2 --degrade gpu:3=0.7 --format json --emit-trace "$straggler" 2>/dev/null |
    grep '"fingerprint"' | tr -d ' ,')
r=$("$zionsim" run --nodes 2 --trace "$straggler" --format json | grep '"fingerprint"' | tr -d ' ,')
if [[ -z $w || "$w" != "$r" ]]; then
  echo "FAIL: a straggler's emitted trace does not replay to its what-if: '$w' vs '$r'"
  failures=$((failures + 1))
fi
rm -f "$straggler"
degraded=$(mktemp --suffix=.json)
"$zionsim" topology --nodes 2 --degrade 'link:node0/nic0->rack0/rsw=0.5' --format json >"$degraded"
if [[ $(grep -c '"kind":"roce","bandwidth_gbyte_per_s":12.5,' "$degraded") != 1 ||
      $(grep -c '"kind":"roce","bandwidth_gbyte_per_s":25.0,' "$degraded") != 31 ]]; then
  echo "FAIL: topology --degrade link:...=0.5 did not write one RoCE link at 12.5 GB/s and 31 at 25"
  failures=$((failures + 1))
fi
rm -f "$degraded"
# docs/output_formats.md names every JSON key whatif, plan, collective, run and list write.
jsons=$(mktemp -d)
"$zionsim" whatif --nodes 1 --vary model=dlrm-a-small,dlrm-a --format json >"$jsons/whatif.json" 2>/dev/null
"$zionsim" whatif --nodes 1 --model dlrm-a-small --degrade gpu:0=0.5 --format json >"$jsons/whatif_degrade.json" 2>/dev/null
"$zionsim" plan --nodes 2 --model dlrm-dcnv2 --format json >"$jsons/plan.json"
"$zionsim" plan --nodes 1 --model dlrm-a --format json >"$jsons/plan_does_not_fit.json"
"$zionsim" plan --nodes 1 --model dlrm-dcnv2 --search --search-budget 12 --format json >"$jsons/plan_search.json"
"$zionsim" whatif --nodes 1 --model dlrm-dcnv2 --sharding search --search-budget 6 --format json >"$jsons/whatif_search.json" 2>/dev/null
"$zionsim" collective --nodes 1 -b 1K -e 1K --quantize fp16 --format json >"$jsons/collective.json"
"$zionsim" collective --nodes 1 -b 1K -e 1K --vary nic-gbit=100,200 --format json >"$jsons/collective_vary.json"
"$zionsim" run --nodes 2 --trace "$trace" --format json >"$jsons/run.json"
"$zionsim" run --nodes 2 --trace "$trace" --vary nic-gbit=100 --format json >"$jsons/run_vary.json"
"$zionsim" list --format json >"$jsons/list.json"
if ! python3 - "${TEST_SRCDIR}/${TEST_WORKSPACE}/docs/output_formats.md" "$jsons"/*.json <<'PY'
import json, sys
doc = open(sys.argv[1]).read()
missing = set()
def walk(value, path):
    # Keys of a list's objects are named from the object: results[].breakdown_ms.compute
    # is `breakdown_ms.compute`; the knob names inside variant and vary are the user's.
    if isinstance(value, dict):
        for k, v in value.items():
            name = path + "." + k if path else k
            if f"`{name}`" not in doc:
                missing.add(name)
            if k not in ("variant", "vary"):
                walk(v, name)
    elif isinstance(value, list):
        for item in value:
            walk(item, "")
for f in sys.argv[2:]:
    walk(json.load(open(f)), "")
assert not missing, sorted(missing)
PY
then
  echo "FAIL: docs/output_formats.md lacks keys the commands write"
  failures=$((failures + 1))
fi
rm -rf "$jsons"
# A run that fails leaves the files it would have written as they were, and
# no temporary file beside them; one that succeeds replaces them.
keepdir=$(mktemp -d)
for flag in --timeline --plot --emit-trace; do
  echo precious > "$keepdir/keep"
  expect 2 err "do not split evenly over 96 GPUs" -- whatif --model dlrm-a --nodes 8,12 --global-batch 65536 "$flag" "$keepdir/keep"
  if [[ "$(cat "$keepdir/keep")" != precious || $(ls "$keepdir" | wc -l) -ne 1 ]]; then
    echo "FAIL: a failed whatif changed $flag's file or left files: $(ls "$keepdir")"
    failures=$((failures + 1))
  fi
done
expect 0 out "iter" -- whatif --model dlrm-a-small --nodes 1 --plot "$keepdir/keep"
if ! grep -q "<svg" "$keepdir/keep" || [[ $(ls "$keepdir" | wc -l) -ne 1 ]]; then
  echo "FAIL: whatif --plot did not replace the file: $(head -c 100 "$keepdir/keep"), $(ls "$keepdir")"
  failures=$((failures + 1))
fi
rm -rf "$keepdir"

rm -f "$trace" "$timeline"

# Plug-ins and schedule files join the registry from the command line: they
# appear in `list` and run in `collective`.
plugin="${TEST_SRCDIR}/${TEST_WORKSPACE}/models/collectives/plugins/libbidirectional_ring.so"
schedule="${TEST_SRCDIR}/${TEST_WORKSPACE}/models/collectives/plugins/testdata/allreduce_4ranks_halving_doubling.schedule.json"
expect 0 out "bidirectional_ring .*\[plug-in libbidirectional_ring.so\]" -- list collectives --plugin "$plugin"
expect 0 out "hd4_all_reduce" -- list collectives --schedule "$schedule"
expect 0 out "bidirectional_ring" -- collective --ranks 4 --plugin "$plugin" --schedule "$schedule" \
  --algo bidirectional_ring --algo hd4_all_reduce -b 1M -e 1M
expect 2 err "plug-in nope.so: no such file" -- list --plugin nope.so

# Calibration end to end: synthetic measurements (known parameters) ->
# zionsim calibrate -> a profile that whatif --profile uses.
measurements=$(mktemp --suffix=.jsonl); profile=$(mktemp --suffix=.json)
"${TEST_SRCDIR}/${TEST_WORKSPACE}/calibration/write_synthetic" >"$measurements"
expect 0 out "hold-out MAPE" -- calibrate --measurements "$measurements" --out "$profile"
# --out and --report naming one file: refused before the fit, the profile
# as it was, no temporary file left.
before=$(md5sum <"$profile")
expect 2 err "--report: the same file as --out" -- \
  calibrate --measurements "$measurements" --out "$profile" --report "$(dirname "$profile")/./$(basename "$profile")"
if [[ $(md5sum <"$profile") != "$before" ]] || compgen -G "$profile.zionsim-*.tmp" >/dev/null; then
  echo "FAIL: a refused calibrate changed the profile or left a temporary file"; failures=$((failures + 1))
fi
if ! grep -q '"compute": 0.7' "$profile"; then
  echo "FAIL: the calibrated profile lacks the fitted compute efficiency (~0.78)"; failures=$((failures + 1))
fi
expect 0 out "samples/s" -- whatif --model dlrm-a-small --nodes 1 --profile "$profile"
# --gpu FILE.json is --profile FILE.json (the same figures), so --vary gpu
# sets a built-in and the calibrated profile side by side.
"$zionsim" whatif --model dlrm-a-small --nodes 1 --profile "$profile" --format csv >"$out" 2>"$err"
"$zionsim" whatif --model dlrm-a-small --nodes 1 --gpu "$profile" --format csv >"$out.gpu" 2>"$err"
if ! cmp -s "$out" "$out.gpu"; then
  echo "FAIL: --gpu FILE.json differs from --profile FILE.json"; diff "$out" "$out.gpu"; failures=$((failures + 1))
fi
expect 0 out "$profile" -- whatif --model dlrm-a-small --nodes 1 --vary gpu=h200,"$profile"
expect 2 err "give --gpu or --profile, not both" -- whatif --model dlrm-a-small --nodes 1 --gpu "$profile" --profile "$profile"
# A run without its TBE points (their check failed, so none were timed):
# refused, naming --partial; with it, the base's embedding efficiency kept.
partial=$(mktemp --suffix=.jsonl)
grep -v '"kernel":"tbe_' "$measurements" >"$partial"
expect 2 err "embedding: expected at least 3 points to fit, got 0; with --partial" -- \
  calibrate --measurements "$partial" --out "$profile"
expect 0 out "kept embedding_hbm_efficiency = 0.6500, embedding_row_access_ns = 0.0000, embedding_backward_overhead_ns = 0 (from 'h200')" -- \
  calibrate --measurements "$partial" --out "$profile" --partial
if ! grep -q '"kept_from_base"' "$profile"; then
  echo "FAIL: the --partial profile does not say what it kept"; failures=$((failures + 1))
fi
rm -f "$measurements" "$profile" "$partial"

# Imported traces run: Chakra (a directory of per-rank files, detected) and
# PyTorch profiler (Kineto) files given one by one.
data="${TEST_SRCDIR}/${TEST_WORKSPACE}/workloads/testdata"
expect 0 out "(2 ranks, 11 ops)" -- run --nodes 1 --trace "$data/chakra"
# (the all-reduce, 20.12 us on the links and 7.4 us in the communication
# library, ends at 77.52 us, after the GEMM beside it: the reduction kernel
# that waits for it ends at 82.52 us, not 80)
expect 0 out "iteration time: 0.082520 ms" -- run --nodes 1 --trace "$data/kineto/rank0.json" "$data/kineto/rank1.json"

# Errors go to stderr only.
"$zionsim" frobnicate >"$out" 2>/dev/null
if [[ -s $out ]]; then
  echo "FAIL: bad usage wrote to stdout"; failures=$((failures + 1))
fi

# Output that cannot be written is a failure, with the reason, not exit 0.
"$zionsim" list >/dev/full 2>"$err"
status=$?
if [[ $status != 1 ]] || ! grep -q "zionsim: error: writing the standard output failed: No space left on device" "$err"; then
  echo "FAIL: list >/dev/full: status $status (want 1)"; cat "$err"; failures=$((failures + 1))
fi

rm -f "$out" "$err"
exit $((failures > 0))
