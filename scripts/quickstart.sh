#!/usr/bin/env bash
# The main job: install what is missing, build tilegen, generate every shipped kernel for this
# machine's CPU targets, run each kernel x type on fresh random inputs at ragged sizes, verify
# against a float64 reference, and print a table. Usage: scripts/quickstart.sh [build-dir]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$here/build"}

"$here/scripts/install-deps.sh"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILEGEN_BUILD_TESTS=OFF \
      -DTILEGEN_BUILD_DEMO=ON
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)"
echo
"$build/generator/tools/tilegen" targets
echo
"$build/examples/verify_all/tilegen_verify_all"

# With an NVIDIA GPU, nvcc and PyTorch present: the CUDA variants of every shipped kernel,
# verified on the GPU against float64 references (bench/cuda; no timing).
if command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
  if command -v nvcc > /dev/null && python3 -c "import torch; assert torch.cuda.is_available()" 2> /dev/null; then
    echo
    echo "GPU found ($(nvidia-smi -L | head -1)): building and verifying the CUDA variants"
    TGB_GPU_TESTS=0 TGB_BUILD_DIR="$build/cuda" bash "$here/bench/cuda/build.sh"
    python3 "$here/bench/cuda/bench.py" --dist "$build/cuda/dist" --no-perf --out "$build/cuda/out"
  else
    echo "GPU found, but nvcc or PyTorch with CUDA is missing: the CUDA variants were not verified"
    echo "(bench/cuda/README.md says what they need)."
  fi
else
  echo "No NVIDIA GPU: the CUDA variants were not run (they are compiled by the test suite)."
fi
