#!/usr/bin/env bash
# CPU benchmark run: generator time for the whole kernels/ library, then bench_cpu (sgemm vs
# OpenBLAS; softmax, rmsnorm and layernorm_bias in f32/f16/bf16 at 4096x4096 and 16384x4096 on
# 1 thread and on `threads`, each against memcpy of the same bytes) — one run, one table,
# ready for bench/RESULTS.md. The load average is printed before and after: re-run on a quiet
# machine (bandwidth figures under load are not comparable between runs; the ratios are
# taken within one row, kernel and memcpy back to back).
# Usage: bench/run_cpu.sh [threads=2] [build-dir=build-bench]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
threads=${1:-2}
build=${2:-"$here/build-bench"}

"$here/scripts/install-deps.sh" >/dev/null
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTILEGEN_BUILD_TESTS=OFF \
      -DTILEGEN_BUILD_BENCH=ON >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null

tilegen="$build/generator/tools/tilegen"
# The C targets of this machine (add_tile_kernels' defaults, bench/CMakeLists.txt) and, on x86,
# OpenBLAS pinned to the kernels of the widest vectors the CPU has (under a hypervisor that
# reports a generic "AMD EPYC" it falls back to slower ones): SkylakeX with AVX-512, Haswell
# with AVX2 (SkylakeX there dies of an illegal instruction); on aarch64 it detects the core.
case "$(uname -m)" in
  aarch64|arm64) c_targets=c,c_neon,c_sve; blas_env=() ;;
  *)
    c_targets=c,c_avx2,c_avx512
    if grep -qw avx512f /proc/cpuinfo; then
      blas_env=(OPENBLAS_CORETYPE=SkylakeX)
    elif grep -qw avx2 /proc/cpuinfo; then
      blas_env=(OPENBLAS_CORETYPE=Haswell)
    else
      blas_env=()
    fi ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Generator time: every shipped spec, every C target, fresh output dir each time; best of 5.
best=""
for i in 1 2 3 4 5; do
  rm -rf "$tmp/out"
  t0=$(date +%s.%N)
  "$tilegen" generate --lib all_kernels --targets "$c_targets" --out "$tmp/out" \
    "$here"/kernels/*.yaml
  t1=$(date +%s.%N)
  best=$(awk -v a="$t0" -v b="$t1" -v best="$best" \
    'BEGIN { t = b - a; if (best == "" || t < best) best = t; printf "%.4f", best }')
done
nfiles=$(ls "$tmp/out" | wc -l)
nlines=$(cat "$tmp/out"/* | wc -l)

echo "date: $(date -u +%Y-%m-%d)  commit: $(git -C "$here" rev-parse --short HEAD)$(git -C "$here" diff --quiet || echo +dirty)"
echo "load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //' || true)
[ -n "$cpu" ] || cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1) # aarch64
echo "machine: $cpu ($(uname -m)), $(nproc) cores; $(cc --version | head -1)"
echo
printf '| benchmark | tilegen | baseline | ratio | check |\n|---|---|---|---|---|\n'
printf '| generator: kernels/*.yaml x {%s} -> %s files, %s lines | %.3f s (best of 5) | aim < 1 s | — | — |\n' \
  "${c_targets//,/, }" "$nfiles" "$nlines" "$best"
# No OMP_PROC_BIND: on the 2-vCPU VMs of this project `OMP_PROC_BIND=spread` ran both OpenMP
# threads of a kernel on one CPU (sgemm 1024^3 158 against 308 GFLOP/s for the same variant in
# one process, 2026-12-05; bench/RESULTS.md), which hid every 2-thread figure.
env "${blas_env[@]}" "$build/bench/bench_cpu" "$threads" 15 | tail -n +3
echo
echo "load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)"
