#!/usr/bin/env bash
# A/B of the C row kernels of two tilegen binaries on one thread (bench/ab_rows.c): softmax,
# rmsnorm and layernorm_bias (tests/kernels/layernorm_bias.yaml) x f32/f16/bf16 x 4096^2 and
# 16384x4096, the variants of one C target (AB_TARGET: c_avx512, the default, or c_avx2 on a
# CPU without AVX-512) of each generator compiled as add_tile_kernels does (-O3, the target's
# flags, C11, OpenMP), timed in turn with a memcpy of the same bytes in one process. Prints the load average before and after (ratios are within one row, but a loaded
# machine still moves them).
# Usage: [AB_TARGET=c_avx2] bench/ab_cpu.sh TILEGEN_A TILEGEN_B [rounds=9] [build-dir=build]
#   e.g. a tilegen built from main as A and this tree's build/generator/tools/tilegen as B.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
a=$1 b=$2 rounds=${3:-9} build=${4:-"$here/build"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
specs=("$here/kernels/softmax.yaml" "$here/kernels/rmsnorm.yaml" "$here/tests/kernels/layernorm_bias.yaml")
target=${AB_TARGET:-c_avx512}
case $target in # the target rows' flags (generator/targets/Targets.cpp)
  c_avx512) flags="-mavx2 -mfma -mf16c -mavx512f -mavx512bw -mavx512vl -mavx512dq -mprefer-vector-width=512" ;;
  c_avx2) flags="-mavx2 -mfma -mf16c" ;;
  *) echo "ab_cpu.sh: AB_TARGET is c_avx512 or c_avx2, not '$target'" >&2; exit 2 ;;
esac
flags="-O3 -std=c11 -fopenmp $flags -fno-trapping-math"
"$a" generate --lib A --targets "$target" --out "$tmp/A" "${specs[@]}"
"$b" generate --lib B --targets "$target" --out "$tmp/B" "${specs[@]}"
for f in "$tmp"/A/*__"$target".c "$tmp"/B/*__"$target".c; do
  cc $flags -I "$here/runtime/include" -c "$f" -o "${f%.c}.o" &
  while [ "$(jobs -r | wc -l)" -ge 2 ]; do sleep 0.2; done
done
wait
cc -O2 -std=c11 -fopenmp "-DTG_AB_TARGET=$target" -I "$here/runtime/include" "$here/bench/ab_rows.c" "$tmp"/A/*.o "$tmp"/B/*.o \
  "$build/runtime/libtilegen_runtime.a" -lm -ldl -o "$tmp/ab_rows"
echo "date: $(date -u +%Y-%m-%d)  A: $a  B: $b  target: $target  rounds: $rounds"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $(cc --version | head -1)"
OMP_NUM_THREADS=1 "$tmp/ab_rows" "$rounds"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
