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
expect 2 err "zionsim: error: expected a command" --
expect 2 err "not expected: frobnicate" -- frobnicate
expect 2 err "zionsim: error:" -- list --no-such-flag

# Errors go to stderr only.
"$zionsim" frobnicate >"$out" 2>/dev/null
if [[ -s $out ]]; then
  echo "FAIL: bad usage wrote to stdout"; failures=$((failures + 1))
fi

rm -f "$out" "$err"
exit $((failures > 0))
