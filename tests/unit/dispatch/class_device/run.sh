#!/usr/bin/env bash
# Shape-class dispatch on a GPU (not part of ctest: the build machine has no GPU).
# Usage: run.sh WORK_DIR [TILEGEN]
#   with TILEGEN: generate library g (sm_90 + c) from kernels/gemm.yaml into WORK_DIR/gen;
#   then, where nvcc is found: compile the variants, dispatch file and runtime, and run
#   ClassDeviceCheck (prints DEVTEST OK, exit 0; exit 77 without a GPU). Generation and the GPU run may happen on two
#   machines: generate here, carry WORK_DIR, run again there without TILEGEN.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../../.." && pwd)
work=$1
mkdir -p "$work"
if [[ $# -ge 2 ]]; then
  rm -rf "$work/gen"
  "$2" generate --lib g --targets sm_90,c --out "$work/gen" "$src/kernels/gemm.yaml"
fi
nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
if [[ ! -x $nvcc ]]; then
  echo "no nvcc: generated $work/gen; run again on a GPU machine"
  exit 0
fi
cuda_inc=$(dirname "$(dirname "$nvcc")")/include
rt=$src/runtime
rm -rf "$work/o" && mkdir -p "$work/o"
pids=()
for f in "$work"/gen/*.cu; do
  "$nvcc" -std=c++17 -O3 -gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90 \
    -I"$rt/include" -c "$f" -o "$work/o/$(basename "$f").o" & pids+=($!)
done
for f in "$work"/gen/*.c; do
  cc -O2 -std=c11 -fno-trapping-math -I"$rt/include" -I"$work/gen" -I"$cuda_inc" -c "$f" \
    -o "$work/o/$(basename "$f").o" & pids+=($!)
done
for f in "$rt"/src/*.c; do
  cc -O2 -std=c11 -I"$rt/include" -I"$cuda_inc" -c "$f" -o "$work/o/rt_$(basename "$f").o" & pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
"$nvcc" -std=c++17 -O2 -I"$rt/include" -I"$work/gen" "$here/ClassDeviceCheck.cu" "$work"/o/*.o \
  -o "$work/class_device_check" -lpthread
"$work/class_device_check"
