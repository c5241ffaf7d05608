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
# from datasheet rates, 5 warm-ups + 20 repetitions per point): 300 GEMMs
# (75 shapes x 4 dtypes; the largest, 8192^3 fp32 at ~50 TFLOP/s, 22 ms x 25)
# ~ 60 s; 42 TBE configs x 2
# directions (32 tables x 100k rows, B = 512) ~ 15 s plus index generation;
# 3 x 21 copies up to 1 GiB (H2D 1 GiB at ~50 GB/s: 21 ms x 25, the sum over
# sizes twice the largest) ~ 3 s; streaming kernels up to 2^28 elements ~ 10 s;
# builds ~2 minutes. --max-seconds 300 stops timing (never checking) if a
# slower GPU runs long, and `timeout` bounds the run at 360 s, so build + run
# stay within 8 minutes even then.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 OUTDIR" >&2
  exit 2
fi
out_dir=$1
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
build_dir=${ZX_BUILD_DIR:-$out_dir/build}

commit=${ZX_GIT_COMMIT:-$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)}
if ! git -C "$repo" diff --quiet 2>/dev/null; then commit="$commit-dirty"; fi

nvcc_bin=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
{
  echo "commit: $commit"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi || true
  "$nvcc_bin" --version || true
  cmake --version 2>/dev/null | head -1 || true
} > "$out_dir/environment.txt" 2>&1

binary=$build_dir/zx_kernel_suite
if command -v cmake > /dev/null; then
  export PATH="$(dirname "$nvcc_bin"):$PATH"
  generator=()
  if command -v ninja > /dev/null; then generator=(-G Ninja); fi
  cmake -S "$here" -B "$build_dir" "${generator[@]}" -DZX_GIT_COMMIT="$commit" \
    -DCMAKE_CUDA_COMPILER="$nvcc_bin" > "$out_dir/build.log" 2>&1
  cmake --build "$build_dir" -j "$(nproc)" >> "$out_dir/build.log" 2>&1
else
  mkdir -p "$build_dir"
  "$nvcc_bin" -std=c++17 -O2 -gencode arch=compute_80,code=sm_80 \
    -gencode arch=compute_90,code=sm_90 -I"$repo" -DZX_GIT_COMMIT="\"$commit\"" \
    -o "$binary" "$here/suite.cu" "$here/reference.cc" "$here/harness_util.cc" -lcublas \
    > "$out_dir/build.log" 2>&1
fi
echo "built $binary" >&2

status=0
timeout 360 "$binary" --out "$out_dir/measurements.jsonl" --max-seconds "${ZX_MAX_SECONDS:-300}" \
  2> >(tee "$out_dir/suite.log" >&2) || status=$?
echo "kernels_ref: exit status $status; results in $out_dir" >&2
exit $status
