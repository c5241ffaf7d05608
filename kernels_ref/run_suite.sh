#!/usr/bin/env bash
# kernels_ref/run_suite.sh OUTDIR: builds the CUDA reference kernel suite
# with CMake (or nvcc directly when CMake is missing) and runs the whole
# suite on GPU 0, writing into OUTDIR:
#   measurements.jsonl  provenance, check and measurement records
#   suite.log           the run's stderr (every check says passed or FAILED)
#   build.log           the build's output
#   environment.txt     nvidia-smi, nvcc --version, the commit
#
# Budget: the whole run fits in 8 minutes on one H200. Sizing (estimated
# from datasheet rates, 5 warm-ups + 20 repetitions per point): 316 GEMMs
# (79 shapes x 4 dtypes; the largest, 8192^3 fp32 at ~50 TFLOP/s, 22 ms x 25)
# ~ 60 s; 42 TBE configs x 2
# directions (32 tables x 100k rows, B = 512) ~ 15 s plus index generation;
# 3 x 21 copies up to 1 GiB (H2D 1 GiB at ~50 GB/s: 21 ms x 25, the sum over
# sizes twice the largest) ~ 3 s; streaming kernels up to 2^28 elements ~ 10 s;
# builds ~2 minutes. --max-seconds (ZX_MAX_SECONDS, default 300) stops
# timing (never checking) if a slower GPU runs long, and `timeout` bounds the
# run at that plus 60 s, so build + run stay within 8 minutes even then.
#
# OUTDIR receives those four files and nothing else: the build goes to a
# temporary directory, removed at the end (ZX_BUILD_DIR=DIR builds there
# instead and keeps it). A machine that receives a copy of the sources
# without .git (the GPU machine of a lease) cannot name the commit: give it
# as ZX_GIT_COMMIT=SHA. Exit status: the suite's (0, 1 when a kernel failed
# its check against the CPU reference, 2 on a usage or CUDA error, 124 when
# it ran out of time), 3 when the build failed.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUTDIR   (environment: ZX_GIT_COMMIT, ZX_BUILD_DIR, ZX_MAX_SECONDS, ZX_CUBLAS_ROOT)" >&2
  exit 2
fi
out_dir=$1
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
max_seconds=${ZX_MAX_SECONDS:-300}
if ! [[ $max_seconds =~ ^[0-9]+$ ]] || ((max_seconds < 1)); then
  echo "$0: ZX_MAX_SECONDS: expected a whole number of seconds >= 1, got '$max_seconds'" >&2
  exit 2
fi
if [[ -n ${ZX_BUILD_DIR:-} ]]; then
  build_dir=$ZX_BUILD_DIR
else
  build_dir=$(mktemp -d "${TMPDIR:-/tmp}/zx_kernels_build.XXXXXX")
  trap 'rm -rf "$build_dir"' EXIT
fi

# The commit: as given, else git's (with -dirty when the tree has changes).
if [[ -n ${ZX_GIT_COMMIT:-} ]]; then
  commit=$ZX_GIT_COMMIT
elif git -C "$repo" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  commit=$(git -C "$repo" rev-parse HEAD)
  if ! git -C "$repo" diff --quiet HEAD 2> /dev/null; then commit="$commit-dirty"; fi
else
  commit=unknown
fi
if ! [[ $commit =~ ^[A-Za-z0-9._-]+$ ]]; then
  echo "$0: ZX_GIT_COMMIT: expected letters, digits, '.', '_' or '-', got '$commit'" >&2
  exit 2
fi

nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cuda_home=$(dirname "$(dirname "$nvcc_bin")")
# cuBLAS outside the toolkit, for a toolkit without it: ZX_CUBLAS_ROOT, else
# the nvidia-cublas pip wheel PyTorch brings (include/ and lib/ in one
# directory). CMake uses it only when the toolkit has no cuBLAS; without
# either the suite is built without its GEMM families.
cublas_root=${ZX_CUBLAS_ROOT:-}
if [[ -z $cublas_root ]]; then
  cublas_root=$(python3 -c 'import nvidia.cublas as m; print(list(m.__path__)[0])' 2> /dev/null || true)
fi
if [[ -n $cublas_root && ! -e $cublas_root/include/cublas_v2.h ]]; then cublas_root=""; fi
{
  echo "commit: $commit"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi || true
  "$nvcc_bin" --version || true
  cmake --version 2> /dev/null | head -1 || true
  # Where cuBLAS is (the suite links it): a build that cannot find it is
  # diagnosed from here, e.g. a pip wheel's copy outside the toolkit.
  echo "libcublas found:"
  find /usr/local /opt /usr/lib -name 'libcublas.so*' 2> /dev/null | head -n 8 || true
  echo "cuBLAS outside the toolkit (ZX_CUBLAS_ROOT or the pip wheel): ${cublas_root:-none}"
} > "$out_dir/environment.txt" 2>&1

binary=$build_dir/zx_kernel_suite
build() {
  if command -v cmake > /dev/null; then
    export PATH="$(dirname "$nvcc_bin"):$PATH"
    local generator=()
    if command -v ninja > /dev/null; then generator=(-G Ninja); fi
    cmake -S "$here" -B "$build_dir" "${generator[@]}" -DZX_GIT_COMMIT="$commit" \
      -DCMAKE_CUDA_COMPILER="$nvcc_bin" -DZX_CUBLAS_ROOT="$cublas_root" &&
      cmake --build "$build_dir" -j "$(nproc)"
  else
    local cublas=()
    if [[ -e $cuda_home/include/cublas_v2.h ]]; then
      cublas=(-lcublas)
    elif [[ -n $cublas_root ]] && compgen -G "$cublas_root/lib/libcublas.so*" > /dev/null; then
      local lib
      lib=$(compgen -G "$cublas_root/lib/libcublas.so*" | sort | head -n 1)
      # The wheel has no unversioned libcublas.so: name the file (ld's -l:).
      cublas=(-isystem "$cublas_root/include" -L"$cublas_root/lib" "-l:$(basename "$lib")"
        -Xlinker "-rpath=$cublas_root/lib")
    else
      echo "kernels_ref: no cuBLAS: building without the GEMM and dot-interaction families"
      cublas=(-DZX_HAVE_CUBLAS=0)
    fi
    mkdir -p "$build_dir" &&
      "$nvcc_bin" -std=c++17 -O2 -gencode arch=compute_80,code=sm_80 \
        -gencode arch=compute_90,code=sm_90 -I"$repo" -DZX_GIT_COMMIT="\"$commit\"" \
        -o "$binary" "$here/suite.cu" "$here/reference.cc" "$here/harness_util.cc" "${cublas[@]}"
  fi
}
if ! build > "$out_dir/build.log" 2>&1; then
  echo "kernels_ref: the build failed; the last lines of $out_dir/build.log:" >&2
  tail -n 20 "$out_dir/build.log" >&2
  exit 3
fi
echo "built $binary" >&2

set +o errexit
timeout $((max_seconds + 60)) "$binary" --out "$out_dir/measurements.jsonl" \
  --max-seconds "$max_seconds" 2>&1 | tee "$out_dir/suite.log" >&2
status=${PIPESTATUS[0]}
set -o errexit
echo "kernels_ref: exit status $status; results in $out_dir" >&2
exit $status
