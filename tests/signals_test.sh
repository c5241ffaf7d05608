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
    print(f"{'ok' if ok else 'FAIL'}: {name}: status {p.returncode} (want {want_status}), files {left}")
    if not ok:
        print(err[-2000:])
        failures += 1

for sig, status in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
    out = os.path.join(workdir, f"once_{sig.name}.json")
    p = start(out)
    p.send_signal(sig)
    check(f"one {sig.name}", p, out, status, "zionsim: interrupted", False)

# One row of a collective sweep does not look for a stop request (seconds at
# 128 nodes): the second signal ends it at once.
out = os.path.join(workdir, "twice.svg")
p = start(out, args=[zionsim, "collective", "--nodes", "128", "--op", "all_reduce", "--algo", "ring",
                     "-b", "1M", "-e", "1M", "--plot", out])
p.send_signal(signal.SIGINT)
time.sleep(0.3)
p.send_signal(signal.SIGINT)
check("two SIGINTs", p, out, 130, "zionsim: stopped", False)

out = os.path.join(workdir, "nohup.json")
p = start(out, ignore=(signal.SIGHUP,))
p.send_signal(signal.SIGHUP)
check("SIGHUP under nohup", p, out, 0, "", True)

print(f"{failures} failures")
sys.exit(1 if failures else 0)
PY
