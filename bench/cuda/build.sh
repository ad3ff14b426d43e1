#!/usr/bin/env bash
# Builds the CUDA benchmark on this machine (nvcc, no GPU needed) and gathers what the device
# machine needs into one small folder to carry: build-bench-cuda/dist.
#
#   bash bench/cuda/build.sh                 # TARGETS sm_80;sm_90;sm_90a;c (the default)
#   TGB_TARGETS=c bash bench/cuda/build.sh   # C variants only (CPU self-test of bench.py)
#
# dist/ holds libtgb.so + tgb.h (bench.py), tgb_host_cost, tgb_sanitize, MANIFEST.txt (commit,
# targets, toolchain, the SASS/PTX each binary embeds, dynamic deps) and fallback/libgomp.so.1
# (used by run_device.sh only if the device's loader cannot find one); with GPU targets also
# tests/: the unit tests whose GPU cases skip themselves without a device (runtime_cuda_test,
# dispatch_gpu_test), built in a second folder ($build-tests) and run by run_device.sh.
# TGB_GPU_TESTS=0 leaves them out.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${TGB_BUILD_DIR:-$root/build-bench-cuda}
targets=${TGB_TARGETS:-sm_80;sm_90;sm_90a;c}
nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}

mkdir -p "$build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DTILEGEN_BUILD_TESTS=OFF -DTILEGEN_BUILD_BENCH=ON -DTILEGEN_BENCH_CUDA=ON \
  "-DTGB_TARGETS=$targets" "-DCMAKE_CUDA_COMPILER=$nvcc" > "$build/configure.log" 2>&1 || {
  tail -40 "$build/configure.log"
  echo "build.sh: configure failed (log: $build/configure.log)" >&2
  exit 1
}
ninja_targets=(tgb_shared tgb_odd_shared tgb_sanitize)
[[ $targets =~ (^|;)sm_ ]] && ninja_targets+=(tgb_host_cost)
ninja -C "$build" "${ninja_targets[@]}"

dist=$build/dist
rm -rf "$dist"
mkdir -p "$dist/fallback"
lib=$(find "$build/bench/cuda" -maxdepth 1 -name 'libtgb.so*' -type f | head -1)
header=$(find "$build/bench/cuda" -name 'tgb.h' -path '*tgb_tilegen*' | head -1)
[[ -n $lib && -n $header ]] || { echo "build.sh: libtgb.so or tgb.h not found" >&2; exit 1; }
cp "$lib" "$dist/libtgb.so"
cp "$header" "$dist/tgb.h"
cp "$build/bench/cuda/tgb_sanitize" "$dist/"
odd_lib=$(find "$build/bench/cuda" -maxdepth 1 -name 'libtgb_odd.so*' -type f | head -1)
odd_header=$(find "$build/bench/cuda" -name 'tgb_odd.h' -path '*tgb_odd_tilegen*' | head -1)
[[ -n $odd_lib && -n $odd_header ]] || { echo "build.sh: libtgb_odd.so or tgb_odd.h not found" >&2; exit 1; }
cp "$odd_lib" "$dist/libtgb_odd.so"
cp "$odd_header" "$dist/tgb_odd.h"
# only if built now: a C-only build leaves an older host-cost binary where it was
[[ " ${ninja_targets[*]} " == *" tgb_host_cost "* ]] && cp "$build/bench/cuda/tgb_host_cost" "$dist/"
if [[ $targets =~ (^|;)sm_ && ${TGB_GPU_TESTS:-1} != 0 ]]; then
  tests_build=$build-tests
  mkdir -p "$tests_build" # its configure log goes inside it, like the bench build's
  cmake -S "$root" -B "$tests_build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILEGEN_BUILD_TESTS=ON \
    "-DCMAKE_CUDA_COMPILER=$nvcc" > "$tests_build/configure.log" 2>&1 || {
    tail -40 "$tests_build/configure.log"
    echo "build.sh: configure of the GPU unit tests failed (log: $tests_build/configure.log)" >&2
    exit 1
  }
  ninja -C "$tests_build" runtime_cuda_test dispatch_gpu_test
  mkdir -p "$dist/tests"
  cp "$tests_build/tests/unit/runtime/runtime_cuda_test" "$tests_build/tests/unit/dispatch/dispatch_gpu_test" "$dist/tests/"
fi
gomp=$(gcc -print-file-name=libgomp.so.1)
[[ -f $gomp ]] && cp -L "$gomp" "$dist/fallback/"

# Everything the library needs must resolve now, not at dlopen time on the device.
if undefined=$(ldd -r "$dist/libtgb.so" 2>&1 | grep 'undefined symbol'); then
  echo "$undefined" >&2
  echo "build.sh: libtgb.so has undefined symbols" >&2
  exit 1
fi

cuobjdump=$(dirname "$nvcc")/cuobjdump
{
  echo "commit: $(git -C "$root" rev-parse HEAD) ($(git -C "$root" status --short | wc -l) changed files in the tree)"
  echo "built: $(date -u '+%Y-%m-%d %H:%M:%S') UTC on $(hostname)"
  echo "targets: $targets"
  echo "nvcc: $("$nvcc" --version | tail -1)"
  echo
  for f in libtgb.so tgb_host_cost tgb_sanitize; do
    [[ -f $dist/$f ]] || { echo "== $f: not built (no GPU target)"; continue; }
    echo "== $f ($(stat -c %s "$dist/$f") bytes)"
    if [[ -x $cuobjdump ]]; then
      echo "-- device code (cuobjdump --list-elf / --list-ptx, counted by arch):"
      "$cuobjdump" --list-elf "$dist/$f" 2>&1 | sed 's/^.*\.\(sm_[0-9a-z]*\)\..*$/\1/' | sort | uniq -c || true
      "$cuobjdump" --list-ptx "$dist/$f" 2>&1 | sed 's/^.*\.\(sm_[0-9a-z]*\)\..*$/ptx \1/' | sort | uniq -c || true
    else
      echo "-- device code: no cuobjdump here (run_device.sh lists it on the device)"
    fi
    echo "-- dynamic deps:"
    ldd "$dist/$f" 2>&1 | sed 's/ (0x[0-9a-f]*)//' || true
    echo "-- exported cuda* symbols: $(nm -D --defined-only "$dist/$f" 2>/dev/null | grep -c ' cuda' || true)"
  done
} > "$dist/MANIFEST.txt"
du -sh "$dist"
size=$(du -sb "$dist" | cut -f1)
# tgb_host_cost links every variant statically (bench/cuda/CMakeLists.txt), as big as libtgb.so:
# where both do not fit in what the device tool carries, the host-cost binary stays in the build
# folder and run_device.sh skips that step (visibly)
if (( size > 60 * 1024 * 1024 )) && [[ -f $dist/tgb_host_cost ]]; then
  rm -f "$dist/tgb_host_cost"
  echo "build.sh: dist was $size bytes; tgb_host_cost left out (it stays in $build/bench/cuda)" >&2
  size=$(du -sb "$dist" | cut -f1)
fi
if (( size > 60 * 1024 * 1024 )); then
  echo "build.sh: dist is $size bytes; the device tool carries 64 MiB in all" >&2
  exit 1
fi
echo "build.sh: ready to carry: ${dist#$root/}"
