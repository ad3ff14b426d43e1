#!/usr/bin/env bash
# The shipped kernels' `schedule.targets.c` overrides apply to every C target (a target without
# its own entry uses the nearest fallback's: c_avx512 -> c_avx2 -> c), and the resolution rule
# picks the documented tiles (docs/kernels.md "Tiles on the C targets"), for memory-bound specs
# by the streaming rule, also on tests/kernels/layernorm_bias.yaml, which pins no C tiles.
#   check_c_schedules.sh <tilegen> <source root>
set -u
tilegen=$1
src=$2
fail=0
expect() { # <target> <spec> <instance> <expected bindings line>
  local got
  local spec="$src/kernels/$2.yaml"
  case $2 in */*) spec="$src/$2.yaml" ;; esac
  got=$("$tilegen" dump --stage=instantiated --target="$1" --instance="$3" "$spec" 2>&1 |
        grep -m1 '^bindings') || true
  if [ "$got" != "bindings $4" ]; then
    echo "FAIL: $2 $3 on $1: expected 'bindings $4', got '$got'"
    fail=1
  else
    echo "ok: $2 $3 on $1: $4"
  fi
}
for t in c c_avx2; do
  expect $t gemm f32 "BK=256 BM=64 BN=128 stages=2 threads=128"
  # the streaming rule (docs/spec.md "The tile-resolution rule"): a row of 4096 in one tile,
  # the largest footprint within 64 KiB (a quarter of the budget)
  expect $t softmax f32 "BM=1 BN=4096 threads=128"
  expect $t rmsnorm f32 "BM=1 BN=4096 threads=128"
  expect $t tests/kernels/layernorm_bias bf16 "BM=1 BN=4096 threads=128"
  expect $t flash_attention_fwd f32_causal0_D64 "BM=128 BN=64 D=64 WR=16 causal=0 stages=1 threads=256"
  expect $t flash_attention_fwd f32_causal1_D128 "BM=128 BN=32 D=128 WR=16 causal=1 stages=1 threads=256"
done
# gemm_fp8: the footprint counts the FP8 tiles at 1 byte per element (docs/kernels.md gemm_fp8)
for t in c c_avx2 c_avx512; do
  expect $t gemm_fp8 e4m3 "BK=256 BM=128 BN=256 stages=2 threads=128"
  expect $t gemm_fp8 e5m2 "BK=256 BM=128 BN=256 stages=2 threads=128"
done
expect c_avx512 gemm f32 "BK=256 BM=128 BN=256 stages=2 threads=128"
expect c_avx512 gemm_bias_gelu bf16 "BK=256 BM=128 BN=256 stages=2 threads=128"
# streaming rule on c_avx512: within 128 KiB
expect c_avx512 softmax f32 "BM=2 BN=4096 threads=128"
expect c_avx512 rmsnorm bf16 "BM=2 BN=4096 threads=128"
expect c_avx512 tests/kernels/layernorm_bias f32 "BM=2 BN=4096 threads=128"
expect c_avx512 flash_attention_fwd f32_causal0_D128 "BM=128 BN=128 D=128 WR=16 causal=0 stages=1 threads=256"
exit $fail
