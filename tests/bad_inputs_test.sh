#!/usr/bin/env bash
# Replays tests/bad_inputs/cases.txt: every mistake a user makes must give
# its exact exit status and error line, and nothing on stdout.
set -uo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
zionsim="$root/tools/zionsim"
cd "$root" || exit 1
failures=0
cases=0
while IFS='|' read -r name args status expected; do
  [[ -z $name || $name == \#* ]] && continue
  cases=$((cases + 1))
  name=$(echo "$name" | xargs); status=$(echo "$status" | xargs)
  expected="${expected# }"
  read -r -a argv <<<"${args//@/tests/bad_inputs/}"
  out=$("$zionsim" "${argv[@]}" 2>/tmp/bad_inputs_err.$$)
  got=$?
  if [[ $got != "$status" ]]; then
    echo "FAIL [$name]: exit status $got, expected $status"; failures=$((failures + 1))
  fi
  if ! grep -qxF -- "$expected" /tmp/bad_inputs_err.$$; then
    echo "FAIL [$name]: stderr lacks the line: $expected"; echo "--- stderr:"; cat /tmp/bad_inputs_err.$$
    failures=$((failures + 1))
  fi
  if [[ -n $out ]]; then echo "FAIL [$name]: wrote to stdout"; failures=$((failures + 1)); fi
done <tests/bad_inputs/cases.txt
rm -f /tmp/bad_inputs_err.$$
echo "$cases bad inputs replayed, $failures failures"
exit $((failures > 0))
