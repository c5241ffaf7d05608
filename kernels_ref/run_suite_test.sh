#!/usr/bin/env bash
# run_suite.sh without a GPU: cmake and nvcc are stand-ins on PATH that
# record how they were called and build a fake suite binary, so what the
# script promises can be checked here. That OUTDIR receives exactly its four
# result files (the GPU machine returns at most 8 files, so a build tree
# there would crowd the measurements out), that the commit reaches both the
# build and environment.txt (from ZX_GIT_COMMIT, from git, or "unknown"),
# that the suite's time limit and exit status pass through, and that a
# failed build or a bad variable is an error with its own status.
set -uo pipefail

script="${TEST_SRCDIR}/${TEST_WORKSPACE}/kernels_ref/run_suite.sh"
root=$(mktemp -d "${TEST_TMPDIR:-/tmp}/run_suite_test.XXXXXX")
export GIT_CEILING_DIRECTORIES=$root  # the test tree is never inside a checkout
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# A copy of the script in a tree of its own (repo/kernels_ref/run_suite.sh).
make_repo() {
  mkdir -p "$1/kernels_ref"
  cp "$script" "$1/kernels_ref/run_suite.sh"
  chmod +x "$1/kernels_ref/run_suite.sh"
}

# Stand-ins: cmake records its arguments; its build step writes the suite
# binary, a script that records its own arguments, writes one measurement
# line to --out and exits with $FAKE_STATUS. FAKE_BUILD_FAILS makes the
# build fail.
bin=$root/bin
mkdir -p "$bin"
cat > "$bin/cmake" << 'EOF'
#!/usr/bin/env bash
echo "cmake $*" >> "$FAKE_LOG"
if [[ $1 == --version ]]; then echo "cmake version 0.0-fake"; exit 0; fi
if [[ $1 == -S ]]; then mkdir -p "$4"; exit 0; fi  # -S SRC -B BUILD ...: configure
if [[ $1 == --build ]]; then
  if [[ -n ${FAKE_BUILD_FAILS:-} ]]; then echo "suite.cu(1): error: fake"; exit 1; fi
  cat > "$2/zx_kernel_suite" << 'SUITE'
#!/usr/bin/env bash
echo "suite $*" >> "$FAKE_LOG"
while [[ $# -gt 0 ]]; do
  if [[ $1 == --out ]]; then echo '{"record":"measurement"}' > "$2"; fi
  shift
done
echo "check fake passed" >&2
exit "${FAKE_STATUS:-0}"
SUITE
  chmod +x "$2/zx_kernel_suite"
fi
EOF
cat > "$bin/nvcc" << 'EOF'
#!/usr/bin/env bash
echo "nvcc: fake"
EOF
cat > "$bin/nvidia-smi" << 'EOF'
#!/usr/bin/env bash
echo "NVIDIA-SMI fake"
EOF
chmod +x "$bin"/*
export PATH="$bin:$PATH"
export TMPDIR=$root/tmp
mkdir -p "$TMPDIR"

# run NAME [VAR=VALUE...]: runs the copy in $root/NAME into $root/NAME.out;
# sets status, log (the stand-ins' calls) and err (the script's stderr).
run() {
  local name=$1
  shift
  export FAKE_LOG=$root/$name.calls
  : > "$FAKE_LOG"
  env "$@" "$root/$name/kernels_ref/run_suite.sh" "$root/$name.out" 2> "$root/$name.err"
  status=$?
  log=$(cat "$FAKE_LOG")
  err=$(cat "$root/$name.err")
}

# 1. ZX_GIT_COMMIT given, suite fails a check (status 1).
make_repo "$root/given"
run given ZX_GIT_COMMIT=abc123 ZX_MAX_SECONDS=42 FAKE_STATUS=1
[[ $status -eq 1 ]] || fail "given: status $status, want the suite's 1"
files=$(cd "$root/given.out" && ls -A | tr '\n' ' ')
[[ $files == "build.log environment.txt measurements.jsonl suite.log " ]] ||
  fail "given: OUTDIR holds '$files', want exactly build.log environment.txt measurements.jsonl suite.log"
grep -q '^commit: abc123$' "$root/given.out/environment.txt" || fail "given: environment.txt lacks 'commit: abc123'"
grep -q -- '-DZX_GIT_COMMIT=abc123' <<< "$log" || fail "given: cmake not given the commit: $log"
grep -q -- '--max-seconds 42' <<< "$log" || fail "given: suite not given --max-seconds 42: $log"
grep -q '"record":"measurement"' "$root/given.out/measurements.jsonl" || fail "given: no measurements.jsonl"
grep -q 'check fake passed' "$root/given.out/suite.log" || fail "given: suite.log lacks the suite's output"
grep -q 'check fake passed' <<< "$err" || fail "given: the suite's output is not shown as it runs"
[[ -z $(ls -A "$TMPDIR") ]] || fail "given: the temporary build directory was left: $(ls -A "$TMPDIR")"

# 2. No .git and no ZX_GIT_COMMIT (the GPU machine's copy): "unknown".
make_repo "$root/bare"
run bare
[[ $status -eq 0 ]] || fail "bare: status $status, want 0: $err"
grep -q '^commit: unknown$' "$root/bare.out/environment.txt" || fail "bare: commit is not 'unknown'"
grep -q -- '-DZX_GIT_COMMIT=unknown' <<< "$log" || fail "bare: cmake not given 'unknown': $log"

# 3. A git checkout: its HEAD, and -dirty once a tracked file changes.
make_repo "$root/git"
(
  cd "$root/git" && git init -q && git add -A &&
    git -c user.name=t -c user.email=t@example.com commit -q -m init
) || fail "git: could not make a repository"
head=$(git -C "$root/git" rev-parse HEAD)
run git
grep -q "^commit: $head\$" "$root/git.out/environment.txt" || fail "git: commit is not HEAD ($head)"
echo "# changed" >> "$root/git/kernels_ref/run_suite.sh"
run git
grep -q "^commit: $head-dirty\$" "$root/git.out/environment.txt" || fail "git: a changed tree is not '$head-dirty'"

# 4. ZX_BUILD_DIR keeps the build where it says.
make_repo "$root/kept"
run kept ZX_BUILD_DIR="$root/kept.build"
[[ -x $root/kept.build/zx_kernel_suite ]] || fail "kept: no suite binary in ZX_BUILD_DIR"
[[ ! -e $root/kept.out/build ]] || fail "kept: a build directory in OUTDIR"

# 5. A failed build: status 3, the compiler's last lines on stderr.
make_repo "$root/broken"
run broken FAKE_BUILD_FAILS=1
[[ $status -eq 3 ]] || fail "broken: status $status, want 3"
grep -q 'the build failed' <<< "$err" || fail "broken: stderr does not say the build failed: $err"
grep -q 'suite.cu(1): error: fake' <<< "$err" || fail "broken: stderr lacks the compiler's error: $err"
grep -q '^suite ' <<< "$log" && fail "broken: the suite ran after a failed build"

# 6. Bad variables and usage: status 2, nothing built.
make_repo "$root/bad"
run bad ZX_MAX_SECONDS=5m
[[ $status -eq 2 ]] || fail "bad: ZX_MAX_SECONDS=5m: status $status, want 2"
grep -q "ZX_MAX_SECONDS: expected a whole number of seconds >= 1, got '5m'" <<< "$err" ||
  fail "bad: ZX_MAX_SECONDS=5m: $err"
run bad 'ZX_GIT_COMMIT=a b'
[[ $status -eq 2 ]] || fail "bad: ZX_GIT_COMMIT='a b': status $status, want 2"
[[ -z $log ]] || fail "bad: something ran: $log"
"$root/bad/kernels_ref/run_suite.sh" > /dev/null 2>&1
[[ $? -eq 2 ]] || fail "bad: no OUTDIR is not a usage error (status 2)"

# 7. cuBLAS outside the toolkit (the stand-in toolkit has none): given as
# ZX_CUBLAS_ROOT, or found as the nvidia-cublas pip wheel, it reaches CMake
# and environment.txt; a directory without cublas_v2.h is not used.
make_repo "$root/wheel"
mkdir -p "$root/cublas/include" "$root/cublas/lib"
touch "$root/cublas/include/cublas_v2.h" "$root/cublas/lib/libcublas.so.12"
run wheel ZX_CUBLAS_ROOT="$root/cublas"
grep -q -- "-DZX_CUBLAS_ROOT=$root/cublas" <<< "$log" || fail "wheel: cmake not given ZX_CUBLAS_ROOT: $log"
grep -q "pip wheel): $root/cublas\$" "$root/wheel.out/environment.txt" ||
  fail "wheel: environment.txt does not name it: $(cat "$root/wheel.out/environment.txt")"
run wheel ZX_CUBLAS_ROOT="$root/wheel"
grep -qE -- '-DZX_CUBLAS_ROOT=( |$)' <<< "$log" || fail "wheel: a root without cublas_v2.h was passed on: $log"
grep -q 'pip wheel): none$' "$root/wheel.out/environment.txt" || fail "wheel: a root without cublas_v2.h is named"
if command -v python3 > /dev/null; then
  # The wheel's layout: site-packages/nvidia/cublas/{include,lib}, a namespace package.
  mkdir -p "$root/site/nvidia"
  cp -r "$root/cublas" "$root/site/nvidia/cublas"
  run wheel PYTHONPATH="$root/site"
  grep -q -- "-DZX_CUBLAS_ROOT=$root/site/nvidia/cublas" <<< "$log" ||
    fail "wheel: the pip wheel was not found: $log"
fi

rm -rf "$root"
if [[ $failures -eq 0 ]]; then
  echo "run_suite_test: all passed"
  exit 0
fi
echo "run_suite_test: $failures failed"
exit 1
