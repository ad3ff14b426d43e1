#!/usr/bin/env bash
# The whole test suite from a clean build folder: installs missing packages, configures,
# builds, and runs ctest (unit, lit golden + error corpus, kernel numerics, schema, CMake
# integration). Usage: scripts/test.sh [build-dir]   (default: build-test)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$here/build-test"}
jobs=$(nproc 2>/dev/null || echo 2)

"$here/scripts/install-deps.sh"
rm -rf "$build"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILEGEN_BUILD_TESTS=ON
cmake --build "$build" -j "$jobs"
cd "$build"
ctest --output-on-failure -j "$jobs" --timeout 900
