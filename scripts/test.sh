#!/usr/bin/env bash
# The whole test suite from clean build folders: installs missing packages, then
#   1. the release build (<build>): ctest runs everything (unit, lit golden + error corpus,
#      kernel numerics, schema, CMake integration, CUDA compile, WGSL);
#   2. the sanitized build (<build>-asan: clang 14, TILEGEN_SANITIZE=ON, ASan + UBSan, the first
#      report aborts): ctest runs the unit tests, lit and the fuzzers' short runs (tests/fuzz)
#      against the sanitized tilegen and tilegen_core (docs/testing.md).
# Usage: scripts/test.sh [build-dir]   (default: build-test; the sanitized build goes to
# <build-dir>-asan). TILEGEN_TEST_SANITIZE=0 skips step 2. Debian's PyTorch (for cmake.torch_ops)
# is installed in the background while the release build compiles; TILEGEN_TEST_TORCH=0 leaves
# it out (the test then skips itself).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$here/build-test"}
build=$(mkdir -p "$build" && cd "$build" && pwd)
asan="$build-asan"
jobs=$(nproc 2>/dev/null || echo 2)
status=0

"$here/scripts/install-deps.sh"
# ccache (when installed, and unless the caller chose a launcher): every CMake build tree of the
# run uses it, the tests' nested ones included (CMake reads these variables from the
# environment). The generator's host copy, compiled at configure time here and again by
# cmake.add_subdirectory's consumer project, is then compiled once: CCACHE_BASEDIR makes the
# paths in both command lines relative, and that test lays its copy out like this one
# (tests/cmake/add_subdirectory.sh).
if command -v ccache >/dev/null 2>&1 && [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ]; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$here}
fi
start=$SECONDS
rm -rf "$build" && mkdir -p "$build"
# PyTorch is the largest download (about 2 minutes of apt, mostly waiting on the network and the
# disk): it installs while the release build compiles, after the first apt run has released the
# package lock; the tests wait for it.
torch_pid="" torch_log="$build/torch-install.log"
if [ "${TILEGEN_TEST_TORCH:-1}" != 0 ]; then
  (t=$SECONDS; "$here/scripts/install-deps.sh" --torch; echo "install-deps --torch: $((SECONDS - t)) s") \
    >"$torch_log" 2>&1 &
  torch_pid=$!
fi
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILEGEN_BUILD_TESTS=ON
cmake --build "$build" -j "$jobs"
if [ -n "$torch_pid" ]; then
  if wait "$torch_pid"; then
    echo "test.sh: PyTorch: $(tail -1 "$torch_log")"
  else
    echo "test.sh: installing PyTorch failed (cmake.torch_ops will skip itself): $(tail -3 "$torch_log")"
  fi
fi
(cd "$build" && ctest --output-on-failure -j "$jobs" --timeout 900) || status=1
echo "test.sh: release build and tests: $((SECONDS - start)) s"

if [ "${TILEGEN_TEST_SANITIZE:-1}" != 0 ]; then
  # -O1 with line tables: a sanitizer's reports show file:line, at a third of -O0's run time.
  # Generated code is compiled by gcc in the tests, as in the release build.
  # The release build's tilegen times the fuzzers' slow runs; its tests/wgsl npm folder (Dawn)
  # validates their WGSL, if the WGSL tests installed it.
  start=$SECONDS
  rm -rf "$asan"
  cmake -S "$here" -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
    "-DCMAKE_C_FLAGS_DEBUG=-O1 -gline-tables-only" "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" \
    -DTILEGEN_SANITIZE=ON -DTILEGEN_BUILD_TESTS=ON \
    -DTILEGEN_TEST_C_COMPILER=gcc -DTILEGEN_TEST_CXX_COMPILER=g++ \
    "-DTILEGEN_FUZZ_TIMING_TILEGEN=$build/generator/tools/tilegen" \
    "-DTILEGEN_FUZZ_WGSL_NPM=$build/tests/wgsl/work/npm"
  cmake --build "$asan" -j "$jobs"
  (cd "$asan" && ctest --output-on-failure -j "$jobs" --timeout 900) || status=1
  echo "test.sh: sanitized build and tests: $((SECONDS - start)) s"
fi
exit $status
