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
exec "$build/examples/verify_all/tilegen_verify_all"
