/* A/B of two generators' C variants of the row kernels (bench/ab_cpu.sh builds it): softmax,
 * rmsnorm and layernorm_bias (tests/kernels/layernorm_bias.yaml) in f32, f16 and bf16 at
 * 4096x4096 and 16384x4096 on one thread, each variant of library A (`tgv_A__...`), of
 * library B (`tgv_B__...`) and a glibc memcpy of the same bytes timed in turn, `rounds`
 * times; each keeps its best time. Times are process CPU time (CLOCK_PROCESS_CPUTIME_ID):
 * on a loaded machine a descheduled run does not count against the variant. B's output must
 * match A's within a few roundings of the type (sums vectorized in another order round
 * differently), else the row says DIFF and the exit status is 1.
 * The variants' target is TG_AB_TARGET (a macro, c_avx512 unless -D says otherwise: ab_cpu.sh
 * passes AB_TARGET).
 * Usage: ab_rows [rounds=9] */
#include "tilegen/variant.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VARIANTS(X, lib)                                                                            \
  X(lib, softmax, f32) X(lib, softmax, f16) X(lib, softmax, bf16) X(lib, rmsnorm, f32)             \
  X(lib, rmsnorm, f16) X(lib, rmsnorm, bf16) X(lib, layernorm_bias, f32)                           \
  X(lib, layernorm_bias, f16) X(lib, layernorm_bias, bf16)
#ifndef TG_AB_TARGET
#define TG_AB_TARGET c_avx512
#endif
#define TG_CAT4(lib, k, t, target) tgv_##lib##__##k##__##t##__##target
#define TG_VARIANT(lib, k, t, target) TG_CAT4(lib, k, t, target)
#define DECL(lib, k, t) int TG_VARIANT(lib, k, t, TG_AB_TARGET)(const tg_launch*, const tg_variant_args*);
VARIANTS(DECL, A)
VARIANTS(DECL, B)
#define ENTRY(lib, k, t) TG_VARIANT(lib, k, t, TG_AB_TARGET),
static tg_variant_fn const fa[] = {VARIANTS(ENTRY, A)};
static tg_variant_fn const fb[] = {VARIANTS(ENTRY, B)};
static const char* const kname[] = {"softmax", "rmsnorm", "layernorm_bias"};
static const char* const tname[] = {"f32", "f16", "bf16"};

static double cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static float value(int t, const void* p, size_t i) {
  if (t == 0)
    return ((const float*)p)[i];
  const uint16_t u = ((const uint16_t*)p)[i];
  if (t == 1) {
    _Float16 h;
    memcpy(&h, &u, 2);
    return (float)h;
  }
  const uint32_t v = (uint32_t)u << 16;
  float f;
  memcpy(&f, &v, 4);
  return f;
}
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static float frand(void) { /* [-1, 1) */
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}
static uint16_t to16(int t, float f) { /* f16 or bf16 bits, round to nearest even */
  if (t == 1) {
    _Float16 h = (_Float16)f;
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
  }
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? atoi(argv[1]) : 9;
  const int64_t n = 4096, mmax = 16384;
  const size_t most = (size_t)(mmax * n) * 4;
  char *x = aligned_alloc(64, most), *y = aligned_alloc(64, most);
  char *w = aligned_alloc(64, n * 4), *b = aligned_alloc(64, n * 4);
  tg_launch launch;
  memset(&launch, 0, sizeof launch);
  launch.struct_size = sizeof launch;
  launch.device = -1;
  launch.num_threads = 1;
  int fails = 0;
  printf("| kernel | A x memcpy | B x memcpy | B / A | memcpy GB/s | check |\n|---|---|---|---|---|---|\n");
  for (int t = 0; t < 3; ++t) {
    const size_t es = t == 0 ? 4 : 2;
    for (int64_t i = 0; i < mmax * n; ++i) {
      const float v = frand() * 4.0f;
      if (t == 0)
        ((float*)x)[i] = v;
      else
        ((uint16_t*)x)[i] = to16(t, v);
    }
    for (int64_t j = 0; j < n; ++j) {
      const float vw = 0.5f + frand(), vb = frand();
      if (t == 0)
        ((float*)w)[j] = vw, ((float*)b)[j] = vb;
      else
        ((uint16_t*)w)[j] = to16(t, vw), ((uint16_t*)b)[j] = to16(t, vb);
    }
    for (int s = 0; s < 2; ++s) {
      const int64_t m = s == 0 ? 4096 : mmax;
      const size_t bytes = (size_t)(m * n) * es;
      for (int k = 0; k < 3; ++k) {
        void* tens[4];
        int nt = 0;
        tens[nt++] = x;
        if (k >= 1)
          tens[nt++] = w;
        if (k == 2)
          tens[nt++] = b;
        tens[nt++] = y;
        const int64_t dims[2] = {m, n};
        const double scalars[1] = {1e-5};
        const tg_variant_args args = {tens, dims, scalars, NULL};
        const tg_variant_fn va = fa[k * 3 + t], vb = fb[k * 3 + t];
        char* ya = aligned_alloc(64, bytes);
        va(&launch, &args);
        memcpy(ya, y, bytes);
        memset(y, 0, bytes);
        vb(&launch, &args);
        double diff = 0; /* largest difference relative to |A| + 1e-3 */
        for (size_t i = 0; i < bytes / es; ++i) {
          const double p = value(t, ya, i), q = value(t, y, i);
          const double e = p == q ? 0 : fabs(p - q) / (fabs(p) + 1e-3);
          diff = e > diff || e != e ? e : diff;
        }
        free(ya);
        const int same = diff <= (t == 0 ? 1e-5 : t == 1 ? 4e-3 : 3e-2);
        double best[3] = {INFINITY, INFINITY, INFINITY};
        for (int r = 0; r < rounds; ++r)
          for (int v = 0; v < 3; ++v) {
            const double t0 = cpu_s();
            if (v == 2)
              memcpy(y, x, bytes);
            else
              (v == 0 ? va : vb)(&launch, &args);
            const double dt = cpu_s() - t0;
            best[v] = dt < best[v] ? dt : best[v];
          }
        fails += !same;
        printf("| %s %s %lldx%lld | %.2f | %.2f | %.2f | %.1f | max rel diff %.1e %s |\n",
               kname[k], tname[t], (long long)m, (long long)n, best[2] / best[0],
               best[2] / best[1], best[0] / best[1], 2.0 * (double)bytes / best[2] * 1e-9, diff,
               same ? "ok" : "DIFF");
        fflush(stdout);
      }
    }
  }
  free(x), free(y), free(w), free(b);
  return fails != 0;
}
