#!/usr/bin/env bash
# Installs what zionsim needs on a fresh Debian 12 machine (as root, or with
# sudo): Bazel 4 from Debian (bazel-bootstrap) and the -dev packages of the
# libraries third_party/ wraps. Installs only what is missing, so it is cheap
# to run before every build. No network access beyond Debian's mirrors.
#
#   scripts/setup_debian.sh            what the build and the tests need
#   scripts/setup_debian.sh --fuzz     also clang 14 and its libFuzzer runtime
#                                      (scripts/fuzz.sh, --config=fuzz)
set -euo pipefail

packages=(
  bazel-bootstrap bazel-platforms bazel-rules-java   # Bazel 4.2.3, offline
  g++ python3                                        # compiler; test summary
  gnuplot-nox                                        # calibration report plots
  libboost-graph-dev libeigen3-dev nlohmann-json3-dev libfmt-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  zlib1g-dev                                         # gzip inputs (.et.gz, .json.gz)
  protobuf-compiler python3-protobuf                 # Chakra .et files for the interop test
  pybind11-dev python3-dev                           # the Python package (python/)
  python3-pandas python3-pytest python3-matplotlib   # ... its frames, tests and example
  python3-pip                                        # scripts/install_python.sh
  libsimgrid-dev                                     # SimGrid 3.32: the flow model's differential test
  openmpi-bin libopenmpi-dev                         # Open MPI 4.1: sweeps over MPI ranks (docs/sweeps.md)
)
if [[ ${1:-} == --fuzz ]]; then
  packages+=(clang libclang-rt-14-dev)
elif [[ $# -gt 0 ]]; then
  echo "usage: scripts/setup_debian.sh [--fuzz]" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
