#!/usr/bin/python3
"""Reruns the figures README.md and docs/ quote, so that none drifts.

A figure is tied to the command that produces it by an HTML comment (not
rendered) placed after the text that quotes it, in the same paragraph or
table:

    <!-- figure: TEXT | ARGS | POINTER FORMAT ; POINTER FORMAT ... -->

TEXT is the figure as the document prints it (for instance `66.4 -> 73.4`)
and must occur in the document between the comment and the blank line
before it: put the comment right after the paragraph, table or code block
(no blank line between) that quotes the figure.
ARGS are zionsim's arguments (split like a shell's words; they must ask for
`--format json`). Each POINTER is a JSON pointer into the output and FORMAT
how the document rounds it: a printf conversion (`%.1f`, `%+.3f`, `%d`;
`%,d` or `%,.2f` with thousands separators) applied to the value; `pct:` before one
(`pct:%+.0f`) shows (value - 1) x 100, a ratio as a percentage, and `M:` or
`G:` the value in millions or billions. POINTER may be two pointers,
`A / B`, for their ratio. The formatted
values must appear in TEXT, in order (TEXT may contain '|': the last two
' | ' separate the fields). A comment with no POINTER only checks
that the command succeeds.

`<!-- figure (slow): ... -->` marks a figure whose command takes more than a
few seconds in an optimised build (64 nodes and more, searches): the test
suite, which runs an unoptimised build, checks its comment and quote but
reruns it only with ZIONSIM_DOC_FIGURES_SLOW=1, as
scripts/check_doc_figures.sh does (with the --config=opt binary).

Commands that are the same run once. Under the sanitizers
(ZIONSIM_SANITIZED=1, set by .bazelrc's asan configuration) only the
comments and their quotes are checked: the simulation gives the same bits in
every build (-ffp-contract=off), and the plain suite reruns them. Exit status 1 names every figure that
differs from the program, with the value the program gives now.

Usage: doc_figures_test.py ZIONSIM DOC.md...
"""

import json
import os
import re
import shlex
import subprocess
import sys

COMMENT = re.compile(r"<!--\s*figure(\s*\(slow\))?:(.*?)-->", re.S)


def resolve(doc, pointer):
    if pointer == "":
        return doc
    node = doc
    for part in pointer.lstrip("/").split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            node = node[int(part)]
        else:
            node = node[part]
    return node


def evaluate(doc, expr):
    if " / " in expr:
        a, b = expr.split(" / ", 1)
        return float(resolve(doc, a.strip())) / float(resolve(doc, b.strip()))
    return resolve(doc, expr.strip())


def render(value, spec):
    if spec.startswith("pct:"):
        value = (float(value) - 1.0) * 100.0
        spec = spec[4:]
    elif spec.startswith("M:") or spec.startswith("G:"):
        value = float(value) / (1e6 if spec[0] == "M" else 1e9)
        spec = spec[2:]
    if "," in spec:  # thousands separators: %,d or %,.2f
        return format(int(round(value)) if spec.endswith("d") else float(value), spec[1:])
    if spec.endswith("d"):
        return spec % int(round(value))
    if spec == "%s":
        return str(value)
    return spec % float(value)


def main(argv):
    zionsim = argv[1]
    failures = []
    checks = 0
    skipped = 0
    cache = {}
    for path in argv[2:]:
        text = open(path, encoding="utf-8").read()
        for m in COMMENT.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            where = f"{path}:{line}"
            slow = m.group(1) is not None
            parts = [p.strip() for p in m.group(2).rsplit(" | ", 2)]
            if len(parts) != 3:
                failures.append(f"{where}: expected 'TEXT | ARGS | POINTERS', got {m.group(2)!r}")
                continue
            figure, args, pointers = parts
            checks += 1
            before = text[text.rfind("\n\n", 0, m.start()) + 1:m.start()]
            if figure not in before:
                failures.append(f"{where}: the paragraph before the comment does not quote {figure!r}")
                continue
            if os.environ.get("ZIONSIM_SANITIZED") == "1":
                continue
            if slow and os.environ.get("ZIONSIM_DOC_FIGURES_SLOW") != "1":
                skipped += 1
                continue
            words = shlex.split(args)
            if "--format" not in words:
                failures.append(f"{where}: the command must ask for --format json: {args}")
                continue
            key = tuple(words)
            if key not in cache:
                run = subprocess.run([zionsim] + words, capture_output=True, text=True)
                if run.returncode != 0:
                    cache[key] = (None, f"exit status {run.returncode}: {run.stderr.strip()[-500:]}")
                else:
                    try:
                        cache[key] = (json.loads(run.stdout), None)
                    except json.JSONDecodeError as e:
                        cache[key] = (None, f"not JSON: {e}")
            doc, error = cache[key]
            if error is not None:
                failures.append(f"{where}: zionsim {args}: {error}")
                continue
            position = 0
            for item in filter(None, (p.strip() for p in pointers.split(";"))):
                pointer, _, spec = item.rpartition(" ")
                try:
                    value = evaluate(doc, pointer)
                except (KeyError, IndexError, ValueError, TypeError, ZeroDivisionError):
                    failures.append(f"{where}: zionsim {args}: no value at {pointer.strip()}")
                    break
                shown = render(value, spec)
                found = figure.find(shown, position)
                if found < 0:
                    failures.append(
                        f"{where}: {figure!r}: the program now gives {shown} ({pointer.strip()} = {value}) "
                        f"for zionsim {args}")
                    break
                position = found  # the next value may be the same figure ("66.350 either way")
    for f in failures:
        print("FAIL:", f)
    print(f"doc figures: {checks} quoted, {checks - skipped} rerun, {len(failures)} failed"
          + (f"; {skipped} slow ones not rerun (scripts/check_doc_figures.sh reruns them)" if skipped else ""))
    if checks == 0:
        print("FAIL: no figure comments found")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
