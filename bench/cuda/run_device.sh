#!/usr/bin/env bash
# The one command for the device machine (issue #3, points 9 and 10), from the repository
# root, with build-bench-cuda/dist carried (bench/cuda/build.sh makes it here):
#
#   bash bench/cuda/run_device.sh [all|bench|sanitize|grid|odd|decode|grouped|dequant|ncu] [--quick]
#
#   all (default)  environment, host cost, bench.py (verification + copy bandwidth + timings
#                  vs cuBLAS / PyTorch / SDPA flash + cuDNN + the table of targets), then
#                  compute-sanitizer memcheck and racecheck once per kernel
#   bench          the same without the sanitizers;  sanitize: only the sanitizers
#   grid           grids over CUDA's 65535 blocks in y or z (tgb_sanitize grid: attention over
#                  70000 heads or batches, a GEMM of 65537 row tiles) against the CPU variant,
#                  as shipped (sm_90a) and on the sm_90 path (the folded tg_kernel<0>), then
#                  both under compute-sanitizer memcheck
#   odd            the odd layouts (bench/cuda/odd.py: tests/lit/cuda/Inputs/odd on the GPU and
#                  its C variants against float64), then under compute-sanitizer memcheck and
#                  racecheck; `all` runs it too
#   decode         decode_attention (bench/cuda/decode.py): verification against float64 at ragged
#                  paged shapes, split and whole, then KV bytes/s against the copy bandwidth and
#                  torch SDPA (enable_gqa) at B 32 ctx 8192 and B 1 ctx 131072, then
#                  compute-sanitizer memcheck on its verification (--quick); its own mode, so
#                  that `all` keeps its time budget for the steps it had
#   grouped        grouped_gemm (bench/cuda/grouped.py): verification against float64 at ragged
#                  expert groups (empty experts, groups smaller than a tile, rows past the last
#                  offset), then issue #34's bar shapes (E 8 and 64, K 4096, N 14336, 16384
#                  tokens, uneven) verified and timed against torch._grouped_mm, then
#                  compute-sanitizer memcheck on its verification (--quick); its own mode
#   dequant        gemm_w4a16 and gemm_mxfp4 (bench/cuda/dequant.py): verification against float64
#                  at ragged shapes, zero points, odd offsets and e8m0 edges, then timings at
#                  N = K = 8192 against torch.matmul (cuBLAS bf16) and torch._weight_int4pack_mm,
#                  then compute-sanitizer memcheck on its verification (--quick); its own mode
#   ncu            Nsight Compute (--clock-control none) on one call of ours per timed case
#
# Every step runs whatever the previous ones did, under its own timeout; logs and tables go
# to $OUT (default ./bench-cuda-out). The steps stop being started when the time budget
# TGB_BUDGET_S (default 540 s, under the tool's 600 s) runs low. The tables are printed last,
# so they are what the tool's output tail shows. Exit status: 0 if every step passed.
set -u
export PYTHONDONTWRITEBYTECODE=1
mode=${1:-all}
quick=""
[[ ${2:-} == --quick || ${1:-} == --quick ]] && quick=--quick
[[ $mode == --quick ]] && mode=all
OUT=${OUT:-$PWD/bench-cuda-out}
mkdir -p "$OUT"
dist=${TGB_DIST:-build-bench-cuda/dist}
budget=${TGB_BUDGET_S:-540}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
status=0
steps="$OUT/steps.md"
echo "| step | exit | seconds | log |" > "$steps"
echo "|---|---|---|---|" >> "$steps"

# step NAME TIMEOUT_S LOG CMD...: runs CMD with a timeout (capped by what is left of the
# budget), records its exit status, never stops the script.
step() {
  local name=$1 limit=$2 log=$3
  shift 3
  local left=$((budget - SECONDS))
  if ((left < 15)); then
    echo "| $name | skipped: budget (${SECONDS}s used of ${budget}s) | - | - |" >> "$steps"
    status=1
    return
  fi
  ((limit > left)) && limit=$left
  local t0=$SECONDS
  echo "== $name (timeout ${limit}s): $*" >> "$OUT/run.log"
  timeout -k 10 "$limit" "$@" > "$log" 2>&1
  local rc=$?
  ((rc == 124 || rc == 137)) && rc="$rc (timeout ${limit}s)"
  echo "| $name | $rc | $((SECONDS - t0)) | ${log#$OUT/} |" >> "$steps"
  [[ $rc == 0 ]] || status=1
}

find_tool() { # PATH first, then the usual install folders
  command -v "$1" 2>/dev/null && return
  ls /usr/local/cuda/bin/"$1" /opt/nvidia/nsight-compute/*/"$1" /usr/local/cuda/*/bin/"$1" \
    2>/dev/null | head -1
}
sanitizer=$(find_tool compute-sanitizer)
ncu=$(find_tool ncu)

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu,utilization.gpu --format=csv 2>&1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU")' 2>&1
  echo "compute-sanitizer: ${sanitizer:-not found}; ncu: ${ncu:-not found}"
  cat "$dist/MANIFEST.txt" 2>&1 | head -12
  cuobjdump=$(find_tool cuobjdump)
  if [[ -n $cuobjdump ]]; then
    echo "device code in libtgb.so (cubins by arch, then PTX):"
    "$cuobjdump" --list-elf "$dist/libtgb.so" 2>&1 | grep -o 'sm_[0-9a-z]*' | sort | uniq -c
    "$cuobjdump" --list-ptx "$dist/libtgb.so" 2>&1 | grep -o 'sm_[0-9a-z]*' | sort | uniq -c
  fi
} > "$OUT/env.txt" 2>&1

if [[ ! -f $dist/libtgb.so ]]; then
  echo "run_device.sh: $dist/libtgb.so is missing: run bench/cuda/build.sh here and carry $dist" |
    tee -a "$OUT/run.log"
  exit 2
fi
if ldd "$dist/libtgb.so" | grep -q 'not found'; then
  export LD_LIBRARY_PATH="$PWD/$dist/fallback${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "using $dist/fallback for: $(ldd "$dist/libtgb.so" | grep 'not found')" >> "$OUT/env.txt"
fi

kernels="gemm gemm_bias_gelu gemm_fp8 softmax rmsnorm flash_attention_fwd"

if [[ $mode == all || $mode == bench ]]; then
  if [[ -x $dist/tgb_host_cost ]]; then
    step host_cost 90 "$OUT/host_cost.md" "$dist/tgb_host_cost" --json "$OUT/host_cost.json"
  else
    echo "| host_cost | not in the dist (a library without GPU targets has no _desc twins; or build.sh left it out for size) | - | - |" >> "$steps"
  fi
  # The unit tests' GPU cases (they skip themselves on CI): the runtime's stream slots, device
  # switching, the dispatch's launches, stream capture and _desc.
  for t in "$dist"/tests/*_test; do
    [[ -x $t ]] && step "unit $(basename "$t")" 120 "$OUT/$(basename "$t").log" "$t"
  done
  # Two passes: dispatch as shipped (sm_90a variants on an H200: issue #4's bars), then with
  # the sm_90a variants turned off (the sm_80-style path: issue #3's bars), each verified.
  step bench 300 "$OUT/bench.stdout" python3 "$here/bench.py" --dist "$dist" --out "$OUT" \
    --host-cost "$OUT/host_cost.json" $quick
  mkdir -p "$OUT/sm80path"
  step bench_sm80path 240 "$OUT/sm80path/bench.stdout" env TILEGEN_GPU_DISABLE=sm_90a \
    python3 "$here/bench.py" --dist "$dist" --out "$OUT/sm80path" \
    --host-cost "$OUT/host_cost.json" $quick
fi

if [[ $mode == decode ]]; then
  step decode 300 "$OUT/decode.log" python3 "$here/decode.py" --dist "$dist" --out "$OUT" $quick
  if [[ -n $sanitizer ]]; then
    step "decode memcheck" 240 "$OUT/decode_memcheck.log" "$sanitizer" --tool memcheck --error-exitcode 99 \
      python3 "$here/decode.py" --dist "$dist" --verify-only --quick
  fi
  grep -hE '^(ok|FAIL|\||device-to-device|bars|verification|==)|ERROR SUMMARY' "$OUT/decode.log" \
    "$OUT/decode_memcheck.log" 2>/dev/null > "$OUT/decode.md"
fi

if [[ $mode == grouped ]]; then
  step grouped 300 "$OUT/grouped.log" python3 "$here/grouped.py" --dist "$dist" --out "$OUT" $quick
  if [[ -n $sanitizer ]]; then
    step "grouped memcheck" 220 "$OUT/grouped_memcheck.log" "$sanitizer" --tool memcheck --error-exitcode 99 \
      python3 "$here/grouped.py" --dist "$dist" --verify-only --quick
  fi
  grep -hE '^(ok|FAIL|\||E[0-9]+ M|bar|verification|torch)|ERROR SUMMARY' "$OUT/grouped.log" \
    "$OUT/grouped_memcheck.log" 2>/dev/null > "$OUT/grouped.md"
fi

if [[ $mode == dequant ]]; then
  step dequant 300 "$OUT/dequant.log" python3 "$here/dequant.py" --dist "$dist" --out "$OUT" $quick
  if [[ -n $sanitizer ]]; then
    step "dequant memcheck" 240 "$OUT/dequant_memcheck.log" "$sanitizer" --tool memcheck --error-exitcode 99 \
      python3 "$here/dequant.py" --dist "$dist" --verify-only --quick
  fi
  grep -hE '^(ok|FAIL|\||bars|verification)|ERROR SUMMARY' "$OUT/dequant.log" \
    "$OUT/dequant_memcheck.log" 2>/dev/null > "$OUT/dequant.md"
fi

if [[ $mode == all || $mode == sanitize ]]; then
  if [[ -z $sanitizer ]]; then
    echo "| sanitizers | compute-sanitizer not found | - | - |" >> "$steps"
    status=1
  else
    # One run per tool x kernel. The kernels of one tool run side by side (small shapes: the
    # sanitizers' host-side work, not the GPU, is what takes the time).
    # racecheck instruments every shared-memory access (slow): the first shape of each
    # kernel x type only (bench/cuda/sanitize.cpp puts the most telling one first).
    for tool in memcheck racecheck; do
      extra=()
      shapes=()
      [[ $tool == memcheck ]] && extra=(--leak-check full)
      [[ $tool == racecheck ]] && shapes=(--shapes "${TGB_RACECHECK_SHAPES:-1}")
      for k in $kernels; do
        step "$tool $k" 240 "$OUT/sanitize_${tool}_$k.log" "$sanitizer" --tool "$tool" \
          "${extra[@]}" --error-exitcode 99 "$dist/tgb_sanitize" "${shapes[@]}" "$k" &
      done
      wait
    done
    # the `step` calls above ran in subshells: rebuild their status from the table
    grep -E '^\| (memcheck|racecheck) ' "$steps" | grep -vqE '^\| [a-z0-9_ ]+ \| 0 \|' && status=1
    {
      echo "| tool | kernel | exit | errors (sanitizer summary) | driver |"
      echo "|---|---|---|---|---|"
      for tool in memcheck racecheck; do
        for k in $kernels; do
          f="$OUT/sanitize_${tool}_$k.log"
          summ=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY' "$f" 2>/dev/null | tr '\n' ' ')
          drv=$(grep -E '^[0-9]+ passed' "$f" 2>/dev/null | tail -1)
          rc=$(grep -E "^\| $tool $k \|" "$steps" | cut -d'|' -f3)
          echo "| $tool | $k | $rc | ${summ:-no summary (see log)} | ${drv:-no result line} |"
        done
      done
    } > "$OUT/sanitize.md"
  fi
fi

if [[ $mode == grid ]]; then
  step "grid" 240 "$OUT/grid.log" "$dist/tgb_sanitize" grid
  step "grid sm_90 path" 240 "$OUT/grid_sm90.log" env TILEGEN_GPU_DISABLE=sm_90a "$dist/tgb_sanitize" grid
  if [[ -z $sanitizer ]]; then
    echo "| grid memcheck | compute-sanitizer not found | - | - |" >> "$steps"
    status=1
  else
    step "grid memcheck" 300 "$OUT/grid_memcheck.log" "$sanitizer" --tool memcheck --error-exitcode 99 \
      "$dist/tgb_sanitize" grid
    step "grid memcheck sm_90 path" 300 "$OUT/grid_memcheck_sm90.log" env TILEGEN_GPU_DISABLE=sm_90a \
      "$sanitizer" --tool memcheck --error-exitcode 99 "$dist/tgb_sanitize" grid
  fi
  for f in grid grid_sm90 grid_memcheck grid_memcheck_sm90; do
    [[ -f $OUT/$f.log ]] || continue
    echo "## $f"
    grep -hE '^(ok|FAIL|     )|passed|ERROR SUMMARY' "$OUT/$f.log"
  done > "$OUT/grid.md"
fi

if [[ $mode == all || $mode == odd ]]; then
  step "odd layouts" 180 "$OUT/odd.log" python3 "$here/odd.py" --dist "$dist"
  step "odd layouts sm_90 path" 180 "$OUT/odd_sm90.log" env TILEGEN_GPU_DISABLE=sm_90a \
    python3 "$here/odd.py" --dist "$dist" --devices cuda
  if [[ -n $sanitizer ]]; then
    step "odd memcheck" 240 "$OUT/odd_memcheck.log" "$sanitizer" --tool memcheck --error-exitcode 99 \
      python3 "$here/odd.py" --dist "$dist" --devices cuda
    step "odd racecheck" 240 "$OUT/odd_racecheck.log" "$sanitizer" --tool racecheck --error-exitcode 99 \
      python3 "$here/odd.py" --dist "$dist" --devices cuda
  fi
  for f in odd odd_sm90 odd_memcheck odd_racecheck; do
    [[ -f $OUT/$f.log ]] || continue
    echo "## $f"
    grep -E '^FAIL|odd.py:|ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$f.log"
  done > "$OUT/odd.md"
fi

if [[ $mode == ncu ]]; then
  if [[ -z $ncu ]]; then
    echo "| ncu | not found | - | - |" >> "$steps"
    status=1
  else
    step ncu 500 "$OUT/ncu.txt" "$ncu" --clock-control none --nvtx --nvtx-include "tgb/" \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats \
      --section Occupancy --section WarpStateStats --section SchedulerStats \
      --export "$OUT/tgb" --force-overwrite \
      python3 "$here/bench.py" --dist "$dist" --out "$OUT/ncu-bench" --profile
  fi
fi

# The tables last: the device tool returns the tail of the output.
echo
echo "## Steps"
cat "$steps"
for f in host_cost.md sanitize.md grid.md odd.md decode.md grouped.md dequant.md sm80path/summary.md summary.md; do
  if [[ -f $OUT/$f ]]; then
    echo
    echo "## $f"
    cat "$OUT/$f"
  fi
done
exit $status
