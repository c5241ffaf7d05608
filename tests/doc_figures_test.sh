#!/usr/bin/env bash
# Runs tests/doc_figures_test.py (Debian's python3: only the standard
# library) on README.md and every document in docs/.
set -uo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
exec /usr/bin/python3 "${root}/tests/doc_figures_test.py" "${root}/tools/zionsim" "${root}/README.md" "${root}"/docs/*.md
