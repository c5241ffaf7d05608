#!/usr/bin/env bash
# Signals: SIGTERM (or Ctrl-C) stops a run, exit status 128 + the signal,
# and leaves neither its output nor a temporary file; a second signal stops
# it at once, its temporary files removed (as does the first one when the
# run has not stopped within 5 s); a signal the program was started
# ignoring (nohup's SIGHUP) stays ignored. Each signal is sent once the run
# has opened its output, so a slow start (the sanitizers) cannot race it.
set -uo pipefail

zionsim="${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/zionsim"
dir="${TEST_TMPDIR}/signals"
mkdir -p "$dir"

exec python3 - "$zionsim" "$dir" <<'PY'
import glob, os, signal, subprocess, sys, time

zionsim, workdir = sys.argv[1], sys.argv[2]
failures = 0

def start(output, ignore=(), args=None):
    def child_setup():
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN if s in ignore else signal.SIG_DFL)
    args = args or [zionsim, "whatif", "--model", "dlrm-a", "--nodes", "32", "--timeline", output]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=child_setup)
    deadline = time.monotonic() + 120
    while not glob.glob(output + ".zionsim-*.tmp"):
        if p.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"FAIL: the run ended or never opened {output}: status {p.poll()}")
        time.sleep(0.02)
    return p

def check(name, p, output, want_status, want_err, want_output):
    global failures
    err = p.communicate(timeout=300)[1].decode()
    left = glob.glob(output + "*")
    ok = p.returncode == want_status and want_err in err and (left == [output] if want_output else left == [])
    how = "ended" if "zionsim: stopped" in err else "stopped" if "zionsim: interrupted" in err else "ran"
    print(f"{'ok' if ok else 'FAIL'}: {name}: status {p.returncode} (want {want_status}), {how}, files {left}")
    if not ok:
        print(err[-2000:])
        failures += 1

for sig, status in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
    out = os.path.join(workdir, f"once_{sig.name}.json")
    p = start(out)
    p.send_signal(sig)
    check(f"one {sig.name}", p, out, status, "zionsim: interrupted", False)

# One row of a collective sweep does not look for a stop request (seconds at
# 128 nodes): the second signal ends it at once. (Sent 2 s after the output
# opens, when the row runs; a signal during the set-up before it stops the
# run at the row's first look instead, also correct.)
out = os.path.join(workdir, "twice.svg")
collective = [zionsim, "collective", "--nodes", "128", "--op", "all_reduce", "--algo", "ring", "-b", "1M", "-e", "1M",
              "--plot", out]
p = start(out, args=collective)
time.sleep(2)
p.send_signal(signal.SIGINT)
time.sleep(0.3)
p.send_signal(signal.SIGINT)
check("two SIGINTs", p, out, 130, "zionsim: ", False)

# One signal, and the row does not look: ended at the grace time (5 s), or,
# where the row finished first, stopped before its output was put in place.
out = os.path.join(workdir, "grace.svg")
collective[-1] = out
p = start(out, args=collective)
time.sleep(2)
sent = time.monotonic()
p.send_signal(signal.SIGTERM)
err = p.communicate(timeout=300)[1].decode()
waited = time.monotonic() - sent
forced = "zionsim: stopped" in err
ok = p.returncode == 143 and not glob.glob(out + "*") and (waited >= 4.9 if forced else "zionsim: interrupted" in err)
print(f"{'ok' if ok else 'FAIL'}: one SIGTERM, no look: status {p.returncode}, {'ended' if forced else 'stopped'} after {waited:.1f} s")
if not ok:
    print(err[-2000:])
    failures += 1

out = os.path.join(workdir, "nohup.json")
p = start(out, ignore=(signal.SIGHUP,),
          args=[zionsim, "whatif", "--model", "dlrm-a", "--nodes", "16", "--timeline", out])
p.send_signal(signal.SIGHUP)
check("SIGHUP under nohup", p, out, 0, "", True)

print(f"{failures} failures")
sys.exit(1 if failures else 0)
PY
