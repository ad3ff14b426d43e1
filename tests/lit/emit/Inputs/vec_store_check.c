/* Runs Inputs/vec_store.yaml's c_avx2 variants (the fused store in intrinsics, CVecStore.cpp)
 * and its portable c variants on the same inputs and compares every output bit for bit (any
 * NaN equals any NaN: operand order may pick another payload). X holds every kind of 16-bit
 * value (random bit patterns: NaN, inf, -0, subnormals); W and B are finite. Shapes: an output
 * of 8 MiB (streaming stores) with 32-byte aligned rows (the vector loop) and 2 bytes past
 * (the portable chunks), small ones with cached stores at both addresses, and ragged edges. */
#include "tilegen/variant.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DECL(t, target) int tgv_vs__vec_store__##t##__##target(const tg_launch*, const tg_variant_args*);
DECL(bf16, c)
DECL(bf16, c_avx2)
DECL(f16, c)
DECL(f16, c_avx2)

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint16_t bits16(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (uint16_t)(rng >> 24);
}
static float value(int f16, uint16_t u) {
  if (f16) {
    _Float16 h;
    memcpy(&h, &u, 2);
    return (float)h;
  }
  const uint32_t v = (uint32_t)u << 16;
  float f;
  memcpy(&f, &v, 4);
  return f;
}
static uint16_t finite16(int f16) { /* exponent field below its maximum */
  uint16_t u;
  do
    u = bits16();
  while (isinf(value(f16, u)) || isnan(value(f16, u)));
  return u;
}

static int run(int f16, int64_t m, int64_t n, int64_t off) {
  uint16_t* x = aligned_alloc(64, (size_t)(m * n) * 2 + 64);
  uint16_t* w = aligned_alloc(64, (size_t)n * 2 + 64);
  uint16_t* b = aligned_alloc(64, (size_t)n * 2 + 64);
  uint16_t* ya = aligned_alloc(64, (size_t)(m * n + off) * 2 + 64);
  uint16_t* yb = aligned_alloc(64, (size_t)(m * n + off) * 2 + 64);
  for (int64_t i = 0; i < m * n; ++i)
    x[i] = bits16();
  for (int64_t j = 0; j < n; ++j)
    w[j] = finite16(f16), b[j] = finite16(f16);
  memset(ya, 0x5a, (size_t)(m * n + off) * 2);
  memset(yb, 0xa5, (size_t)(m * n + off) * 2);
  tg_launch launch;
  memset(&launch, 0, sizeof launch);
  launch.struct_size = sizeof launch;
  launch.device = -1;
  launch.num_threads = 2;
  const int64_t dims[2] = {m, n};
  void* ta[4] = {x, w, b, ya + off};
  void* tb[4] = {x, w, b, yb + off};
  const tg_variant_args aa = {ta, dims, NULL, NULL}, ab = {tb, dims, NULL, NULL};
  const int sa = f16 ? tgv_vs__vec_store__f16__c(&launch, &aa) : tgv_vs__vec_store__bf16__c(&launch, &aa);
  const int sb = f16 ? tgv_vs__vec_store__f16__c_avx2(&launch, &ab) : tgv_vs__vec_store__bf16__c_avx2(&launch, &ab);
  long bad = 0, nan = 0;
  for (int64_t i = 0; i < m * n; ++i) {
    const uint16_t p = ya[off + i], q = yb[off + i];
    const int both_nan = isnan(value(f16, p)) && isnan(value(f16, q));
    nan += both_nan;
    if (p != q && !both_nan && bad++ < 5)
      printf("%s Y[%lld] = 0x%04x (c_avx2), 0x%04x (c)\n", f16 ? "f16" : "bf16", (long long)i, q, p);
  }
  printf("%s M=%lld N=%lld Y+%lld: status %d/%d, %lld values (%ld NaN), %ld differ\n",
         f16 ? "f16" : "bf16", (long long)m, (long long)n, (long long)off, sa, sb,
         (long long)(m * n), nan, bad);
  free(x), free(w), free(b), free(ya), free(yb);
  return bad != 0 || sa != 0 || sb != 0;
}

int main(void) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("f16c")) {
    printf("SKIPPED: this CPU has no AVX2 and F16C\n");
    return 0;
  }
  int fails = 0;
  for (int f16 = 0; f16 < 2; ++f16) {
    fails += run(f16, 2048, 2048, 0); /* 8 MiB: streaming, aligned rows: the vector loop */
    fails += run(f16, 2048, 2048, 1); /* streaming, rows 2 bytes past: the chunks */
    fails += run(f16, 3, 1024, 1);    /* cached stores: the vector loop at any address */
    fails += run(f16, 7, 1040, 0);    /* ragged columns and rows */
  }
  printf(fails ? "FAILED\n" : "PASSED\n");
  return fails != 0;
}
