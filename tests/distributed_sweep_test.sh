#!/usr/bin/env bash
# Sweeps spread beyond one process print what one process prints
# (docs/sweeps.md): shards merged (`--shard K/N`, Slurm's array variables,
# `zionsim merge`) and `mpirun -n 3` give the one-process table, CSV and JSON
# byte for byte (JSON's wall times aside); a missing, repeated, foreign or
# edited shard is an error naming it, exit status 2; a rank that dies ends
# the MPI job with an error that names it, without a hang. Under the
# sanitizers the MPI runs are left out (Open MPI's own allocations at exit
# are not this program's leaks).
set -uo pipefail

zionsim="${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/zionsim"
example="${TEST_SRCDIR}/${TEST_WORKSPACE}/examples/sweep_fabric.json"
trace="${TEST_SRCDIR}/${TEST_WORKSPACE}/workloads/testdata/two_ranks.trace.json"
dir="${TEST_TMPDIR}/sweeps"
mkdir -p "$dir"

exec python3 - "$zionsim" "$dir" "$example" "$trace" <<'PY'
import json, os, shutil, subprocess, sys, time

zionsim, work, example, trace = sys.argv[1:5]
os.chdir(work)
failures = 0
# A small sweep of 8 points: two variants of four sizes, one too small to
# fit, so that the merge also carries a point that does not fit.
SWEEP = ["whatif", "--model", "dlrm-a-small", "--nodes", "1,2,4,8", "--vary", "nic-gbit=200,400"]

def run(args, env=None, timeout=300):
    e = dict(os.environ)
    for name in ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN"):
        e.pop(name, None)
    e.update(env or {})
    p = subprocess.run(args, capture_output=True, env=e, timeout=timeout)
    return p.returncode, p.stdout, p.stderr.decode()

def check(name, ok, detail=""):
    global failures
    print(f"{'ok' if ok else 'FAIL'}: {name}{': ' + detail if detail and not ok else ''}")
    if not ok:
        failures += 1

def comparable(fmt, data):
    if fmt != "json":
        return data
    doc = json.loads(data)
    for r in doc["results"]:
        r.pop("wall_seconds")
    return json.dumps(doc, sort_keys=True).encode()

# One process, the reference.
reference = {}
for fmt in ("table", "csv", "json"):
    status, out, err = run([zionsim] + SWEEP + ["--format", fmt])
    check(f"one process, {fmt}", status == 0 and out, err)
    reference[fmt] = out

# Shards: given as --shard, or taken from a Slurm job array's variables.
for fmt in ("table", "csv", "json"):
    files = []
    for k in range(3):
        path = f"{fmt}.shard{k}.json"
        if k == 1:  # --array=5-7, task 6: share 1 of 3
            status, out, err = run([zionsim] + SWEEP + ["--format", fmt],
                                   env={"SLURM_ARRAY_TASK_ID": "6", "SLURM_ARRAY_TASK_COUNT": "3",
                                        "SLURM_ARRAY_TASK_MIN": "5"})
        else:
            status, out, err = run([zionsim] + SWEEP + ["--format", fmt, "--shard", f"{k}/3"])
        check(f"shard {k}/3, {fmt}", status == 0, err)
        open(path, "wb").write(out)
        files.append(path)
    status, out, err = run([zionsim] + SWEEP + ["--format", fmt, "--shard", "off"],
                           env={"SLURM_ARRAY_TASK_ID": "6", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "5"})
    check(f"--shard off in a Slurm array runs the whole sweep, {fmt}",
          status == 0 and comparable(fmt, out) == comparable(fmt, reference[fmt]), err)
    doc = json.loads(open(files[1]).read())
    check(f"the Slurm array's task is share 1 of 3 ({fmt})", doc["shard"] == {"index": 1, "count": 3}, str(doc["shard"]))
    tasks = sorted(r["task"] for f in files for r in json.loads(open(f).read())["results"])
    check(f"the shares hold every point once ({fmt})", tasks == list(range(8)), str(tasks))
    status, out, err = run([zionsim, "merge", files[2], files[0], files[1]])
    check(f"merge of 3 shards = one process, {fmt}",
          status == 0 and comparable(fmt, out) == comparable(fmt, reference[fmt]), err)

# What merge refuses, naming the file.
def refused(name, args, want):
    status, out, err = run([zionsim, "merge"] + args)
    check(name, status == 2 and want in err and not out, f"status {status}, stderr {err!r}")

refused("a missing shard", ["table.shard0.json", "table.shard2.json"], "shard 1 of 3 missing")
refused("a shard given twice", ["table.shard0.json", "table.shard1.json", "table.shard0.json"],
        "shard 0 of 3 given twice: table.shard0.json and table.shard0.json")
refused("a shard of another sweep", ["table.shard0.json", "csv.shard1.json", "table.shard2.json"],
        "csv.shard1.json: /command: a shard of another sweep")
edited = json.loads(open("table.shard0.json").read())
edited["command"][2] = "dlrm-a"
open("edited.json", "w").write(json.dumps(edited))
refused("an edited shard", ["edited.json", "table.shard1.json", "table.shard2.json"],
        "edited.json: /sweep: expected")
dropped = json.loads(open("table.shard2.json").read())
dropped["results"].pop()
open("dropped.json", "w").write(json.dumps(dropped))
refused("a shard with a point cut out", ["table.shard0.json", "table.shard1.json", "dropped.json"],
        "is in none of")
open("not_a_shard.json", "w").write('{"schema_version": 1}')
refused("a file that is not a shard", ["not_a_shard.json"], "not_a_shard.json: expected a shard file")

status, out, err = run([zionsim] + SWEEP + ["--shard", "3/3"])
check("--shard 3/3 is refused", status == 2 and "--shard: expected K/N" in err, err)
status, out, err = run([zionsim] + SWEEP + ["--shard", "0/2", "--timeline", "t.json"])
check("--timeline with --shard is refused", status == 2 and "--timeline" in err and not os.path.exists("t.json"), err)

# --results DIR: points kept as they finish, reused by a rerun (their
# wall_seconds, kept too, show that they were not simulated again).
def points(data):
    return {(json.dumps(r["variant"], sort_keys=True), r["nodes"]): r for r in json.loads(data)["results"]}

status, first, err = run([zionsim] + SWEEP + ["--format", "json", "--results", "kept"])
check("--results: a first run = one process", status == 0 and comparable("json", first) == comparable("json", reference["json"]), err)
check("--results: one file per point", len(os.listdir("kept")) == 8, str(os.listdir("kept")))
status, again, err = run([zionsim] + SWEEP + ["--format", "json", "--results", "kept"])
check("--results: a rerun reads every point (the same wall_seconds too)", status == 0 and again == first, err)
grown = ["whatif", "--model", "dlrm-a-small", "--nodes", "1,2,4,8,16", "--vary", "nic-gbit=200,400", "--format", "json"]
status, out, err = run([zionsim] + grown + ["--results", "kept"])
old = points(first)
new = points(out)
check("--results: a grown sweep reuses the points it has",
      status == 0 and len(new) == 10 and all(new[k]["wall_seconds"] == v["wall_seconds"] for k, v in old.items()), err)
status, fresh, err = run([zionsim] + grown)
check("--results: a grown sweep = one process", comparable("json", out) == comparable("json", fresh), err)
victim = sorted(os.listdir("kept"))[0]
open(os.path.join("kept", victim), "w").write('{"zionsim_point": 1, "identity": ')
status, out, err = run([zionsim] + grown + ["--results", "kept"])
check("--results: a damaged kept point is named, exit 2",
      status == 2 and victim in err and "delete it to simulate that point again" in err and not out, err)
# A sweep stopped after its first point resumes with the rest.
slow = ["whatif", "--model", "dlrm-a", "--nodes", "2,16", "--threads", "1", "--format", "json", "--results", "resume"]
e = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_ARRAY")}
p = subprocess.Popen([zionsim] + slow, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
deadline = time.monotonic() + 120
while p.poll() is None and time.monotonic() < deadline and not (os.path.isdir("resume") and
        any(n.endswith(".json") for n in os.listdir("resume"))):
    time.sleep(0.01)
p.terminate()
p.communicate(timeout=60)
kept_before = sorted(n for n in os.listdir("resume") if n.endswith(".json"))
status, out, err = run([zionsim] + slow)
check("--results: a stopped sweep resumes: the points kept, the rest simulated",
      p.returncode == 143 and len(kept_before) == 1 and status == 0 and len(os.listdir("resume")) == 2 and
      comparable("json", out) == comparable("json", run([zionsim] + slow[:-2])[1]),
      f"stopped with {p.returncode}, kept {kept_before}, then {status}: {err}")

# collective's rows and run's variants: shards merged, and --results, give
# one process's bytes too.
OTHERS = [("collective", ["collective", "--op", "all_reduce", "--algo", "ring", "double_binary_tree", "-b", "1K",
                          "-e", "64K", "--nodes", "2", "--vary", "nic-gbit=200,400"], 28),
          ("run", ["run", "--trace", trace, "--vary", "nic-gbit=100,200,400"], 3)]
for name, args, tasks in OTHERS:
    for fmt in ("table", "json"):
        status, want, err = run([zionsim] + args + ["--format", fmt])
        check(f"{name}: one process, {fmt}", status == 0 and want, err)
        files = []
        for k in range(2):
            status, out, err = run([zionsim] + args + ["--format", fmt, "--shard", f"{k}/2"])
            check(f"{name} --shard {k}/2, {fmt}", status == 0 and json.loads(out)["tasks"] == tasks, err)
            files.append(f"{name}.{fmt}.shard{k}.json")
            open(files[-1], "wb").write(out)
        held = sorted(r["task"] for f in files for r in json.loads(open(f).read())["results"])
        check(f"{name}: the shares hold every task once ({fmt})", held == list(range(tasks)), str(held))
        status, out, err = run([zionsim, "merge", files[1], files[0]])
        check(f"{name}: merge of 2 shards = one process, {fmt}", status == 0 and out == want, err)
    status, want, err = run([zionsim] + args + ["--format", "csv"])
    status, first, err = run([zionsim] + args + ["--format", "csv", "--results", f"{name}_kept"])
    check(f"{name} --results: a first run = one process, a file per task",
          status == 0 and first == want and len(os.listdir(f"{name}_kept")) == tasks, err)
    # A kept result is what a rerun prints: edit one, and the rerun shows it.
    victim = os.path.join(f"{name}_kept", sorted(os.listdir(f"{name}_kept"))[0])
    doc = json.loads(open(victim).read())
    key = "time_us" if name == "collective" else "iteration_ms"
    doc["outcome"]["result"][key] = 12345.5
    open(victim, "w").write(json.dumps(doc))
    status, again, err = run([zionsim] + args + ["--format", "csv", "--results", f"{name}_kept"])
    check(f"{name} --results: a rerun reads the kept tasks instead of simulating them",
          status == 0 and again != want and b"12345.5" in again, err)
    open(victim, "w").write('{"zionsim_point": 1, "identity": ')
    status, out, err = run([zionsim] + args + ["--format", "csv", "--results", f"{name}_kept"])
    check(f"{name} --results: a damaged kept task is named, exit 2",
          status == 2 and os.path.basename(victim) in err and "delete it" in err and not out, err)
status, out, err = run([zionsim, "run", "--trace", trace, "--shard", "0/2"])
check("run --shard without --vary is refused", status == 2 and "--shard: shares out or keeps the variants of a --vary sweep" in err, err)
status, out, err = run([zionsim, "run", "--trace", trace, "--format", "csv"],
                       env={"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "2", "SLURM_ARRAY_TASK_MIN": "0"})
check("run without --vary in a Slurm array: the one run, not a share", status == 0 and b"zionsim_shard" not in out, err)

# zionsim sweep FILE: the whatif its flags and knobs spell, in the file's
# order; flags after the file added; shards of it merged.
example_doc = json.loads(open(example).read())
check("the example sweep file is a sweep of model A", example_doc["flags"]["model"] == "dlrm-a")
spec = {"schema_version": 1, "command": "whatif",
        "flags": {"model": "dlrm-a-small", "nodes": [1, 2, 4, 8], "unfused": True, "no-pipeline": False,
                  "set": ["nic.efficiency=0.9"], "batch-per-gpu": 256},
        "vary": {"nic-gbit": [200, 400.0], "a2a-precision": ["fp16", "bf16"]}}
open("spec.json", "w").write(json.dumps(spec))
status, want, err = run([zionsim, "whatif", "--model", "dlrm-a-small", "--nodes", "1,2,4,8", "--unfused", "--set",
                         "nic.efficiency=0.9", "--batch-per-gpu", "256", "--vary", "nic-gbit=200,400", "--vary",
                         "a2a-precision=fp16,bf16", "--format", "csv"])
status, out, err = run([zionsim, "sweep", "spec.json", "--format", "csv"])
check("sweep FILE = the whatif it spells", status == 0 and out == want and want, err)
for k in range(2):
    status, out, err = run([zionsim, "sweep", "spec.json", "--format", "csv", "--shard", f"{k}/2"])
    open(f"sweep.shard{k}.json", "wb").write(out)
status, out, err = run([zionsim, "merge", "sweep.shard1.json", "sweep.shard0.json"])
check("sweep FILE --shard K/2, merged = the whatif it spells", status == 0 and out == want, err)
for name, doc, message in [
        ("a misspelt flag", {"schema_version": 1, "command": "whatif", "flags": {"modle": "dlrm-a"}},
         "spec_bad.json: /flags/modle: not a flag of zionsim whatif (did you mean 'model'?)"),
        ("a flag that takes no value given one", {"schema_version": 1, "command": "whatif", "flags": {"unfused": 1}},
         "spec_bad.json: /flags/unfused: expected true or false, got 1"),
        ("a knob's values not a list", {"schema_version": 1, "command": "whatif", "vary": {"nic-gbit": 400}},
         "spec_bad.json: /vary/nic-gbit: expected a list of values, got 400"),
        ("another command", {"schema_version": 1, "command": "collective"},
         "spec_bad.json: /command: expected \"whatif\""),
        ("a bad value, found by whatif", {"schema_version": 1, "command": "whatif", "flags": {"model": "nope"}},
         "--model: unknown model 'nope'"),
        ]:
    open("spec_bad.json", "w").write(json.dumps(doc))
    status, out, err = run([zionsim, "sweep", "spec_bad.json"])
    check(f"sweep: {name}, exit 2", status == 2 and message in err and "(in the sweep spec_bad.json)" in err
          if name.startswith("a bad value") else status == 2 and message in err, err)

# --scenario: variants listed one by one are the product's rows for the same
# settings (the first variant is the same, so even the relative column is).
base = ["whatif", "--model", "dlrm-a-small", "--nodes", "2,4", "--format", "csv"]
status, product, err = run([zionsim] + base + ["--vary", "gpu=a100-40gb,h100-sxm", "--vary", "nic-gbit=200,400"])
status, listed, err = run([zionsim] + base + ["--scenario", "gpu=a100-40gb nic-gbit=200",
                                                 "--scenario", "gpu=h100-sxm nic-gbit=400"])
rows = product.decode().splitlines()
want_rows = [rows[0]] + [r for r in rows[1:] if r.startswith('"a100-40gb","200"') or r.startswith('"h100-sxm","400"')]
check("--scenario: listed variants = the product's rows for them", status == 0 and listed.decode().splitlines() == want_rows,
      err + listed.decode())
spec = {"schema_version": 1, "command": "whatif", "flags": {"model": "dlrm-a-small", "nodes": [2, 4], "format": "csv"},
        "scenarios": [{"gpu": "a100-40gb", "nic-gbit": 200}, {"gpu": "h100-sxm", "nic-gbit": 400}]}
open("scenarios.json", "w").write(json.dumps(spec))
status, out, err = run([zionsim, "sweep", "scenarios.json"])
check("sweep FILE with scenarios = whatif --scenario", status == 0 and out == listed, err)
for name, extra, message in [
        ("knobs in another order", ["--scenario", "nic-gbit=200 gpu=a100-40gb", "--scenario", "gpu=h100-sxm nic-gbit=400"],
         "expected the knobs of the first scenario, nic-gbit gpu, in that order"),
        ("a knob --vary sweeps too", ["--scenario", "nic-gbit=200", "--vary", "nic-gbit=400,800"],
         "'nic-gbit' is swept by --vary too"),
        ("a knob a flag sets too", ["--scenario", "nic-gbit=200", "--nic-gbit", "400"],
         "--scenario: nic-gbit: give --nic-gbit or --scenario nic-gbit=..., not both"),
        ("an unknown kind", ["--scenario", "algo.bogus=ring"], "--scenario: algo.bogus: unknown collective kind 'bogus'"),
        ("a scenario twice", ["--scenario", "nic-gbit=200", "--scenario", "nic-gbit=200"], "given twice")]:
    status, out, err = run([zionsim] + base + extra)
    check(f"--scenario: {name}, exit 2", status == 2 and message in err and not out, err)

# MPI: three ranks of one to three points each.
if os.environ.get("ZIONSIM_SANITIZED") == "1":
    print("skipped: mpirun under the sanitizers")
else:
    mpirun = shutil.which("mpirun")
    check("mpirun is installed (scripts/setup_debian.sh)", mpirun is not None)
    if mpirun:
        env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1"}
        mpi = [mpirun, "-n", "3", zionsim]
        for fmt in ("table", "csv", "json"):
            status, out, err = run(mpi + SWEEP + ["--format", fmt, "--threads", "1"], env=env)
            check(f"mpirun -n 3 = one process, {fmt}",
                  status == 0 and comparable(fmt, out) == comparable(fmt, reference[fmt]), err)
        # collective's and run's --vary: their rows and variants spread too.
        for name, args in [
                ("collective --vary", ["collective", "--op", "all_reduce", "--algo", "ring", "--algo", "auto", "-b",
                                       "1K", "-e", "1M", "--nodes", "2", "--vary", "nic-gbit=200,400"]),
                ("run --vary", ["run", "--trace", trace, "--vary", "nic-gbit=100,200,400", "--vary",
                                "fidelity=flow,analytical"])]:
            for fmt in ("table", "json"):
                status, want, err = run([zionsim] + args + ["--format", fmt])
                status, out, err = run(mpi + args + ["--format", fmt, "--threads", "1"], env=env)
                check(f"mpirun -n 3 {name} = one process, {fmt}", status == 0 and out == want and want, err)
        status, out, err = run(mpi + SWEEP + ["--format", "json", "--threads", "1", "--results", "mpi_kept"], env=env)
        check("mpirun -n 3 --results: rank 0 keeps every point", status == 0 and len(os.listdir("mpi_kept")) == 8, err)
        status, again, err = run([zionsim] + SWEEP + ["--format", "json", "--results", "mpi_kept"])
        check("... and one process reads them all", status == 0 and again == out, err)
        status, out, err = run(mpi + ["whatif", "--model", "nope"], env=env)
        check("a bad input under mpirun: exit 2, the error once",
              status == 2 and err.count("zionsim: error: --model: unknown model 'nope'") == 1 and not out, err)
        # Rank 1 killed mid-sweep (found by the rank mpirun put in its
        # environment): the job ends, naming it, instead of waiting.
        args = mpi + ["whatif", "--model", "dlrm-a", "--nodes", "16,24,32", "--vary", "nic-gbit=100,200,400",
                      "--threads", "1"]
        e = dict(os.environ, **env)
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
        killed = False
        deadline = time.monotonic() + 120
        while not killed and p.poll() is None and time.monotonic() < deadline:
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    environ = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
                    cmdline = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
                except OSError:
                    continue
                if b"OMPI_COMM_WORLD_RANK=1" in environ and cmdline[0].endswith(b"zionsim"):
                    time.sleep(0.5)
                    os.kill(int(pid), 9)
                    killed = True
                    break
            time.sleep(0.05)
        try:
            out, err = p.communicate(timeout=120)
            err = err.decode()
            check("a rank killed mid-sweep ends the job, naming the rank",
                  killed and p.returncode != 0 and "rank 1" in err and not out, f"status {p.returncode}, {err!r}")
        except subprocess.TimeoutExpired:
            p.kill()
            check("a rank killed mid-sweep ends the job (it hung)", False)

print(f"{failures} failed")
sys.exit(1 if failures else 0)
PY
