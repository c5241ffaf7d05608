#!/usr/bin/env python3
"""Counts test results of one `bazel test --test_summary=short` run.

For every test target in the summary: if it PASSED, each GoogleTest case in
its test.xml counts as passed (test.xml is fresh for targets that ran or were
cached); if it FAILED, the cases in its test.xml count as passed or failed
as they say; any other status (FAILED TO BUILD, TIMEOUT, NO STATUS, ...)
counts as one failure. Prints "tests: N passed, M failed" as the last line.

usage: test_summary.py BAZEL_LOG TESTLOGS_DIR [EXTRA_FAILURES]
"""

import os
import re
import sys
import xml.etree.ElementTree as ET

SUMMARY = re.compile(r"^(//\S+)\s+(?:\(cached\)\s+)?(PASSED|FAILED TO BUILD|FAILED|TIMEOUT|"
                     r"NO STATUS|FLAKY|INCOMPLETE|REMOTE FAILURE|SKIPPED)\b")


def cases(xml_path):
    """(passed, failed) GoogleTest cases in one test.xml, or None if unreadable."""
    try:
        root = ET.parse(xml_path).getroot()
    except (OSError, ET.ParseError):
        return None
    passed = failed = 0
    for case in root.iter("testcase"):
        if case.get("status", "run") != "run" or case.find("skipped") is not None:
            continue
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        else:
            passed += 1
    return passed, failed


def main():
    log_path, testlogs = sys.argv[1], sys.argv[2]
    extra_failures = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    passed = failed = 0
    targets = 0
    with open(log_path, encoding="utf-8", errors="replace") as log:
        for line in log:
            m = SUMMARY.match(line.strip())
            if not m:
                continue
            targets += 1
            label, status = m.group(1), m.group(2)
            package, _, name = label[2:].partition(":")
            xml_path = os.path.join(testlogs, package, name, "test.xml")
            counted = cases(xml_path) if status in ("PASSED", "FAILED", "FLAKY") else None
            if counted is None or counted == (0, 0):
                if status == "PASSED":
                    passed += 1
                else:
                    failed += 1
                continue
            p, f = counted
            if status == "FAILED" and f == 0:
                f = 1  # the target failed outside any test case (crash, leak report)
            passed += p
            failed += f
    if targets == 0:
        failed += 1
        print("test_summary: no test results found in the bazel output", file=sys.stderr)
    failed += extra_failures
    print(f"tests: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
