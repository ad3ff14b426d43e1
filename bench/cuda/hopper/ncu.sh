#!/usr/bin/env bash
# Nsight Compute on the sm_90a kernels, on the device (with build-hopper and
# build-bench-cuda/dist carried): what limits the warp-specialized GEMM and attention.
#   bash bench/cuda/hopper/ncu.sh
# Prints, per kernel, the speed-of-light, tensor-pipe and warp-stall lines.
set -u
OUT=${OUT:-$PWD/ncu-hopper-out}
mkdir -p "$OUT"
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[[ -n $ncu ]] || { echo "ncu not found"; exit 2; }
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats
          --section MemoryWorkloadAnalysis --section Occupancy)
show() { grep -E "tg_kernel|Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L2 Cache Throughput|Executed Ipc Active|Issue Slots Busy|Warp Cycles Per Issued|Stall|Registers Per|Achieved Occupancy|One or More Eligible|No Eligible|Tensor|pipe" "$1" | head -60; }
if [[ -x build-hopper/gemm_check ]]; then
  timeout 240 "$ncu" --clock-control none -k regex:tg_kernel_ws --launch-skip 2 --launch-count 1 \
    "${sections[@]}" build-hopper/gemm_check --time 4096x4096x4096 > "$OUT/gemm.txt" 2>&1
  echo "== gemm bf16 4096^3 (sm_90a, cooperative 128x256)"; show "$OUT/gemm.txt"
fi
if [[ -f build-bench-cuda/dist/libtgb.so ]]; then
  timeout 300 "$ncu" --clock-control none -k regex:tg_kernel_ws --launch-count 1 "${sections[@]}" \
    python3 bench/cuda/bench.py --dist build-bench-cuda/dist --out "$OUT/bench" --profile \
    --only flash_attention_fwd > "$OUT/fa.txt" 2>&1
  echo "== flash_attention_fwd (sm_90a), first profiled call"; show "$OUT/fa.txt"
fi
