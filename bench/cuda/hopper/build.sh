#!/usr/bin/env bash
# Builds bench/cuda/hopper/gemm_check, gelu_check and fp8_check (no GPU needed). gemm_check:
# kernels/gemm.yaml's bf16 variants for sm_90a (wgmma + TMA, warp-specialized) and sm_90 (the
# mma.sync path), linked with the runtime's driver-entry lookup and cuBLAS into one binary to
# carry; gelu_check: the same for gemm_bias_gelu's sm_90a variants; fp8_check: the gemm_fp8
# e4m3 sm_90a variant against cuBLASLt:
#   bash bench/cuda/hopper/build.sh [TILEGEN]  -> build-hopper/{gemm_check,gelu_check,fp8_check}
# then on the device: build-hopper/gemm_check --time 4096x4096x4096 ...; build-hopper/fp8_check
# (GEMM_CHECK_SPECS, GEMM_CHECK_BASE, GELU_CHECK_SPECS, FP8_CHECK_SPECS: experiments, see below)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
tg=${1:-$root/build-lead/generator/tools/tilegen}
out=$root/build-hopper
nvcc=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
rm -rf "$out/gen" && mkdir -p "$out/gen"
flags=(-std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -I "$root/runtime/include")
# experiments PREFIX TARGETS SPEC...: library PREFIX<i> for each spec
experiments() {
  local prefix=$1 targets=$2 i=0
  shift 2
  for spec in "$@"; do
    "$tg" generate --lib "$prefix$i" --targets "$targets" --out "$out/gen" "$spec"
    i=$((i + 1))
  done
}
# compile FILE...: objects into objs, variant names into variants (ptxas's register lines shown)
compile() {
  variants=""
  objs=()
  for f in "$@"; do
    local b
    b=$(basename "$f" .cu)
    variants+="TG_VARIANT(tgv_$b) "
    "$nvcc" "${flags[@]}" -c "$f" -o "$out/$b.o" 2> "$out/$b.o.log" || { cat "$out/$b.o.log"; exit 1; }
    grep -E "spill|registers" "$out/$b.o.log" | sed "s|^|$b: |" || true
    objs+=("$out/$b.o")
  done
}
"$tg" generate --lib hb --targets sm_90a,sm_90 --out "$out/gen" "$root/kernels/gemm.yaml"
# GEMM_CHECK_SPECS: more gemm-like specs (same tensors A, B, C and dims M, N, K) to compare,
# e.g. schedule experiments; library hx<i> each, for GEMM_CHECK_TARGETS (default sm_90a).
experiments hx "${GEMM_CHECK_TARGETS:-sm_90a}" ${GEMM_CHECK_SPECS:-}
# GEMM_CHECK_BASE: another tilegen binary (e.g. an earlier commit's) whose sm_90a variants of
# kernels/gemm.yaml go in as library ho, for A/B timings in one process.
if [[ -n ${GEMM_CHECK_BASE:-} ]]; then
  "$GEMM_CHECK_BASE" generate --lib ho --targets sm_90a --out "$out/gen" "$root/kernels/gemm.yaml"
fi
compile "$out"/gen/h*__gemm__bf16__sm_90*.cu
gcc -std=c11 -O2 -c -I "$root/runtime/include" -I "$(dirname "$nvcc")/../include" \
  "$root/runtime/src/cuda.c" -o "$out/rt_cuda.o"
"$nvcc" "${flags[@]}" "-DTG_VARIANTS=$variants" "$root/bench/cuda/hopper/gemm_check.cu" \
  "${objs[@]}" "$out/rt_cuda.o" -lcublas -ldl -o "$out/gemm_check" 2>&1 | grep -v "^ptxas info" || true
ls -la "$out/gemm_check"

# gelu_check: the same program for kernels/gemm_bias_gelu.yaml's bf16 sm_90a variants (library
# gb) and GELU_CHECK_SPECS experiments (gemm_bias_gelu-like specs, library gx<i> each)
"$tg" generate --lib gb --targets sm_90a --out "$out/gen" "$root/kernels/gemm_bias_gelu.yaml"
experiments gx sm_90a ${GELU_CHECK_SPECS:-}
compile "$out"/gen/g[bx]*__gemm_bias_gelu__bf16__sm_90a*.cu
"$nvcc" "${flags[@]}" -DGEMM_CHECK_BIAS_GELU "-DTG_VARIANTS=$variants" \
  "$root/bench/cuda/hopper/gemm_check.cu" "${objs[@]}" "$out/rt_cuda.o" -lcublas -ldl \
  -o "$out/gelu_check" 2>&1 | grep -v "^ptxas info" || true
ls -la "$out/gelu_check"

# fp8_check: kernels/gemm_fp8.yaml's e4m3 sm_90a variant (plus FP8_CHECK_SPECS experiments,
# library fx<i> each) against cuBLASLt's FP8 matmul -> build-hopper/fp8_check
"$tg" generate --lib fb --targets sm_90a --out "$out/gen" "$root/kernels/gemm_fp8.yaml"
experiments fx sm_90a ${FP8_CHECK_SPECS:-}
compile "$out"/gen/f*__gemm_fp8__e4m3__sm_90a*.cu
"$nvcc" "${flags[@]}" "-DTG_VARIANTS=$variants" "$root/bench/cuda/hopper/fp8_check.cu" \
  "${objs[@]}" "$out/rt_cuda.o" -lcublasLt -ldl -o "$out/fp8_check" 2>&1 | grep -v "^ptxas info" || true
ls -la "$out/fp8_check"
