#!/usr/bin/env bash
# Nsight Compute on the anchors' kernels and ours at the shapes of issue #4's bars, side by
# side (--clock-control none, one profiled call each): the kernel each library runs (name,
# grid, cluster, block, registers, shared memory), its duration and the SM clock it ran at,
# and the L2 throughput. On the device, with build-hopper (bench/cuda/hopper/
# build.sh) and a bench dist (bench/cuda/build.sh) carried:
#   bash bench/cuda/hopper/anchor_profile.sh [DIST]      (DIST default build-bench-cuda/dist)
set -u
dist=${1:-build-bench-cuda/dist}
OUT=${OUT:-$PWD/anchor-profile-out}
mkdir -p "$OUT"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[[ -n $ncu ]] || { echo "ncu not found"; exit 2; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__t_bytes.sum.per_second,dram__bytes_read.sum,launch__grid_size,launch__cluster_dim_x,launch__cluster_dim_y,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_dynamic
# show LOG: one line per profiled kernel
show() {
  awk '
    function flush() { if (name != "") print name line }
    /^  [^ ].*\(.*\)x\(.*\)/ { flush(); name = $0; sub(/^  /, "", name); sub(/, Context.*/, "", name); line = "" }
    /gpu__time_duration.sum/ { line = line sprintf(" | %s %s", $NF, $(NF - 1)) }
    /sm__cycles_elapsed.avg.per_second/ { line = line sprintf(" | %s GHz", $NF) }
    /lts__t_bytes.sum.per_second/ { line = line sprintf(" | L2 %s TB/s", $NF) }
    /launch__cluster_dim_x/ { cx = $NF }
    /launch__cluster_dim_y/ { line = line sprintf(" | cluster %sx%s", cx, $NF) }
    /launch__registers_per_thread/ { line = line sprintf(" | %s regs", $NF) }
    /launch__shared_mem_per_block_dynamic/ { line = line sprintf(" | smem %s KB", $NF) }
    END { flush() }' "$1"
}
prof() { timeout 240 "$ncu" --clock-control none --metrics "$metrics" "$@" 2>&1; }
if [[ -x build-hopper/gemm_check ]]; then
  for s in 4096x4096x4096 8192x8192x8192 4096x4096x512; do
    echo "== GEMM bf16 $s: cuBLAS, then ours"
    prof -k regex:'nvjet|xmma|gemm|cutlass|sm90_' --launch-skip 3 --launch-count 1 build-hopper/gemm_check --time $s > "$OUT/gemm_cublas_$s.txt"
    show "$OUT/gemm_cublas_$s.txt"
    prof -k regex:tg_kernel_ws --launch-skip 2 --launch-count 1 build-hopper/gemm_check --time $s > "$OUT/gemm_ours_$s.txt"
    show "$OUT/gemm_ours_$s.txt"
  done
fi
if [[ -x build-hopper/fp8_check ]]; then
  echo "== FP8 e4m3 8192^3: cuBLASLt, then ours"
  prof -k regex:'nvjet|xmma|gemm|cutlass|sm90_' --launch-skip 3 --launch-count 1 build-hopper/fp8_check 8192 8192 8192 1 > "$OUT/fp8_cublaslt.txt"
  show "$OUT/fp8_cublaslt.txt"
  prof -k regex:tg_kernel_ws --launch-skip 2 --launch-count 1 build-hopper/fp8_check 8192 8192 8192 1 > "$OUT/fp8_ours.txt"
  show "$OUT/fp8_ours.txt"
fi
if [[ -f $dist/libtgb.so ]]; then
  echo "== attention bf16 (per shape: ours, then torch SDPA cuDNN)"
  prof --nvtx --nvtx-include prof/ python3 "$here/anchor_profile.py" --dist "$dist" > "$OUT/fa.txt"
  show "$OUT/fa.txt"
fi
