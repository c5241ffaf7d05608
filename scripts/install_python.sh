#!/usr/bin/env bash
# Builds the zionsim Python package (optimised) and installs its wheel with
# Debian's python3 and pip, offline:
#
#   scripts/install_python.sh               for this user (~/.local)
#   scripts/install_python.sh --venv DIR    into a virtual environment DIR
#                                           (created with Debian's packages
#                                           visible: pandas, matplotlib)
#
# Then `python3 -c "import zionsim"` works from any directory. Debian marks
# its Python "externally managed" (PEP 668): a user install needs pip's
# --break-system-packages, which touches only ~/.local, never /usr; a venv
# needs nothing of the kind (and Debian's python3-venv).
set -euo pipefail
cd "$(dirname "$0")/.."

venv=""
if [[ ${1:-} == --venv && -n ${2:-} ]]; then
  venv=$2
elif [[ $# -gt 0 ]]; then
  echo "usage: scripts/install_python.sh [--venv DIR]" >&2
  exit 2
fi

bazel build --config=opt //python:package
bin=$(bazel info --config=opt bazel-bin)
name=$(/usr/bin/python3 python/make_wheel.py --name tools/version.h)
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
cp "$bin/python/zionsim.whl" "$staging/$name"

if [[ -n $venv ]]; then
  [[ -x $venv/bin/python3 ]] || /usr/bin/python3 -m venv --system-site-packages "$venv"
  "$venv/bin/python3" -m pip install --no-index --force-reinstall --no-deps "$staging/$name"
  echo "installed $name into $venv ($venv/bin/python3 -c 'import zionsim')"
else
  /usr/bin/python3 -m pip install --user --break-system-packages --no-index --force-reinstall --no-deps \
    "$staging/$name"
  echo "installed $name for $(id -un) (/usr/bin/python3 -c 'import zionsim')"
fi
