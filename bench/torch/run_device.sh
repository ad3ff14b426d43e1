#!/usr/bin/env bash
# PyTorch operators on the GPU machine (docs/torch.md, issue 37 point 1), from the repository
# root, with build-torch-stage carried (bench/torch/stage.sh makes it here: tilegen + its
# libyaml-cpp):
#
#   bash bench/torch/run_device.sh [--dry-run] [--quick] [--targets "sm_90a;c"] [--work DIR]
#
# 1. environment (GPU, PyTorch, nvcc, cmake);
# 2. configure + build bench/torch/project: add_tile_kernels(tgb SPECS rmsnorm gemm
#    flash_attention_fwd softmax TARGETS <targets> TORCH) against this machine's PyTorch, with
#    the carried tilegen (no tilegen build here, no yaml-cpp needed);
# 3. bench/torch/model_check.py: RMSNorm -> GEMM -> attention -> GEMM of our operators vs the
#    eager torch model, under torch.compile(fullgraph=True) and CUDA graph replay, and the host
#    cost per call vs the built-in operators (bar <= 1.2x).
# --dry-run: the CPU path on a machine without a GPU (TARGETS c, f32, the CUDA steps skipped).
# Each step has its own timeout within TGB_BUDGET_S (default 560 s); logs go to $OUT/torch
# (default ./bench-torch-out); the summary is printed last. Exit 0 if every step passed.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
dry=0 quick="" targets="" work=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --dry-run) dry=1 ;;
    --quick) quick=--quick ;;
    --targets) targets=$2; shift ;;
    --work) work=$2; shift ;;
    *) echo "usage: $0 [--dry-run] [--quick] [--targets LIST] [--work DIR]"; exit 2 ;;
  esac
  shift
done
[[ -n $targets ]] || targets=$([[ $dry == 1 ]] && echo "c" || echo "sm_90a;c")
out=${OUT:-$PWD/bench-torch-out}/torch
mkdir -p "$out"
work=${work:-/tmp/tgb-torch}
mkdir -p "$work"
budget=${TGB_BUDGET_S:-560}
python=${PYTHON:-python3}
status=0
summary=$out/summary.md
echo "| step | exit | seconds | log |" > "$summary"
echo "|---|---|---|---|" >> "$summary"

# step NAME TIMEOUT LOG CMD...: CMD under a timeout capped by what is left of the budget.
step() {
  local name=$1 limit=$2 log=$3
  shift 3
  local left=$((budget - SECONDS))
  if ((left < 20)); then
    echo "| $name | skipped: budget (${SECONDS}s of ${budget}s used) | - | - |" >> "$summary"
    status=1
    return 1
  fi
  ((limit > left)) && limit=$left
  local t0=$SECONDS
  echo "== $name (timeout ${limit}s)" | tee -a "$out/run.log"
  timeout -k 10 "$limit" "$@" > "$log" 2>&1
  local rc=$?
  local shown=$rc
  ((rc == 124 || rc == 137)) && shown="$rc (timeout ${limit}s)"
  echo "| $name | $shown | $((SECONDS - t0)) | ${log#$out/} |" >> "$summary"
  if [[ $rc != 0 ]]; then
    status=1
    tail -40 "$log"
  fi
  return $rc
}

# tilegen: the carried one (with its libyaml-cpp beside it), else this tree's build.
tilegen=${TILEGEN:-}
for c in "$root/build-torch-stage/tilegen" "$root/build/generator/tools/tilegen"; do
  [[ -z $tilegen && -x $c ]] && tilegen=$c
done
if [[ -z $tilegen ]]; then
  echo "run_device.sh: no tilegen: run bench/torch/stage.sh here and carry build-torch-stage" >&2
  exit 2
fi
export LD_LIBRARY_PATH="$(dirname "$tilegen")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ! "$tilegen" targets > "$out/tilegen-targets.txt" 2>&1; then
  echo "run_device.sh: $tilegen does not run here:" >&2
  cat "$out/tilegen-targets.txt" >&2
  ldd "$tilegen" >&2
  exit 2
fi

{
  date -u
  echo "tilegen $tilegen (commit $(cat "$(dirname "$tilegen")/COMMIT" 2>/dev/null || git -C "$root" rev-parse HEAD 2>/dev/null))"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU")'
  command -v nvcc >/dev/null && nvcc --version | tail -1
  cmake --version | head -1
  echo "targets: $targets"
} 2>&1 | tee "$out/env.txt"

torch_dir=$("$python" -c 'import os, torch.utils; print(os.path.join(torch.utils.cmake_prefix_path, "Torch"))' 2>/dev/null)
[[ -f $torch_dir/TorchConfig.cmake ]] || torch_dir=/usr/lib/x86_64-linux-gnu/cmake/Torch
build=$work/build
cfg=(-S "$here/project" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
     "-DTILEGEN_SOURCE_DIR=$root" "-DTILEGEN_EXECUTABLE=$tilegen" "-DTGB_TARGETS=$targets"
     "-DTorch_DIR=$torch_dir" "-DPython_EXECUTABLE=$(command -v "$python")")
command -v nvcc >/dev/null && [[ $dry == 0 ]] && cfg+=("-DCMAKE_CUDA_COMPILER=$(command -v nvcc)" -DCMAKE_CUDA_ARCHITECTURES=90)
jobs=$(nproc 2>/dev/null || echo 4)
if step configure 180 "$out/configure.log" cmake "${cfg[@]}" &&
   step build 420 "$out/build.log" cmake --build "$build" --target tgb_torch -j "$jobs"; then
  grep -E "extension tgb_torch|CUDA" "$out/configure.log" | grep -v "^--.*Found CUDA" | head -5
  dev_args=()
  [[ $dry == 1 ]] && dev_args=(--device cpu)
  step model_check 300 "$out/model_check.log" env PYTHONUNBUFFERED=1 "$python" "$here/model_check.py" \
    --package-dir "$build" "${dev_args[@]}" $quick
  # the model check's own table and verdict, for the output tail
  sed -n '/^| what | value |/,$p' "$out/model_check.log"
  grep -E "^(FAIL|SKIP) " "$out/model_check.log"
fi
echo
cat "$summary"
echo "run_device.sh: $([[ $status == 0 ]] && echo "all steps passed" || echo "FAILED (logs in $out)")"
exit $status
