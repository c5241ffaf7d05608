#!/usr/bin/env bash
# The validation suite (zionsim validate, validation/cases): every case's
# error is within its pinned band (--check); docs/validation.md's table is
# the program's output, line for line; a case whose error leaves its band
# fails --check and names the case; --plot draws one point per case;
# --case picks a family; the JSON has every case with its source.
set -uo pipefail

root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
zionsim="${root}/tools/zionsim"
dir="${TEST_TMPDIR}/validation"
mkdir -p "$dir"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# 1. Every case within its pin; the JSON and the plot of the same run are
#    checked below.
if ! "$zionsim" validate --check --plot "$dir/plot.svg" --format json >"$dir/all.json" 2>"$dir/err.txt"; then
  fail "validate --check: $(cat "$dir/err.txt")"
fi

# 2. The table in docs/validation.md (between its two marker lines) is what
#    the program prints now.
sed -n '/^<!-- validate-table:begin -->$/,/^<!-- validate-table:end -->$/p' "${root}/docs/validation.md" |
  sed '1,2d;$d' | sed '$d' >"$dir/doc_table.txt"
"$zionsim" validate >"$dir/plain.txt"
if ! diff -u "$dir/doc_table.txt" "$dir/plain.txt" >"$dir/diff.txt"; then
  fail "docs/validation.md's table differs from 'zionsim validate' (update the doc and its explanations):"
  cat "$dir/diff.txt"
fi

# 3. A case moved out of its band fails --check, naming it.
python3 - "${root}/validation/cases/nccl-tests-175-a100-all_reduce-4GiB.json" "$dir/moved.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["pinned_error"]["value"] += 0.1
json.dump(d, open(sys.argv[2], "w"))
PY
"$zionsim" validate --check "$dir/moved.json" >/dev/null 2>"$dir/moved_err.txt"
status=$?
[[ $status -eq 1 ]] || fail "a moved case: exit $status, expected 1"
grep -q "case 'nccl-tests/issue-175-a100-all_reduce-4GiB' moved" "$dir/moved_err.txt" ||
  fail "a moved case is not named: $(cat "$dir/moved_err.txt")"

# 4. --plot: one point per case, and the y = x line; --case picks a family;
#    the JSON lists every case with its source and the families' summary.
#    (The JSON and the plot come from step 1's run.)
cases=$(ls "${root}"/validation/cases/*.json | wc -l)
points=$(grep -c '<circle cx="[0-9.]*" cy="[0-9.]*" r="4" fill="[^"]*"><title>' "$dir/plot.svg")
[[ $points -eq $cases ]] || fail "--plot drew $points points for $cases cases"
python3 - "$dir/all.json" "$cases" <<'PY' || failures=$((failures + 1))
import json, sys
d = json.load(open(sys.argv[1]))
cases = d["cases"]
assert len(cases) == int(sys.argv[2]), len(cases)
for c in cases:
    assert c["source"]["url"].startswith("https://"), c["id"]
    assert abs((c["simulated"] - c["measured"]) / c["measured"] - c["error"]) < 1e-12, c["id"]
    assert c["within_pin"], c["id"]
fams = {f["family"]: f for f in d["families"]}
for name, f in fams.items():
    members = [c for c in cases if c["family"] == name]
    assert f["cases"] == len(members), name
    mean = sum(abs(c["error"]) for c in members) / len(members)
    assert abs(f["mean_abs_error"] - mean) < 1e-12, name
    assert max(abs(c["error"]) for c in members) == abs(f["worst_error"]), name
PY
# 5. Every signed error the README quotes ("How far to trust it") is a
#    case's error now, rounded as quoted.
python3 - "$dir/all.json" "${root}/README.md" <<'PY' || failures=$((failures + 1))
import json, re, sys
errors = [c["error"] * 100 for c in json.load(open(sys.argv[1]))["cases"]]
text = open(sys.argv[2]).read()
para = text[text.index("### How far to trust it"):]
para = para[:para.index("###", 5)]
quoted = re.findall(r"([+-]\d+(?:\.\d)?)%", para)
assert len(quoted) >= 8, quoted
for q in quoted:
    digits = len(q.split(".")[1]) if "." in q else 0
    if not any(f"{e:+.{digits}f}" == q for e in errors):
        sys.exit(f"FAIL: README quotes {q}%, which is no case's error now")
PY
n=$("$zionsim" validate --case nccl-tests --case mlperf-training/v2.0-dlrm-dgxa100-1node --format csv | tail -n +2 | wc -l)
want=$(grep -l '"family": "nccl-tests"' "${root}"/validation/cases/*.json | wc -l)
[[ $n -eq $((want + 1)) ]] || fail "--case nccl-tests and one id gave $n rows, expected $((want + 1))"

if [[ $failures -ne 0 ]]; then
  echo "validation_test: $failures failure(s)"
  exit 1
fi
echo "validation_test: all checks passed"
