/* Runs the C variant of packed.yaml at ragged shapes and compares every output bit for bit
 * with a reference written from docs/spec.md "Packed types": two u4/i4/e2m1 elements per byte,
 * low nibble first, rows of N / 2 bytes; i4 is two's complement; e2m1 is S.EE.M (magnitudes 0,
 * 0.5, 1, 1.5, 2, 3, 4, 6); e8m0 is 2^(e - 127), 0xff NaN. Writes: u4/i4 keep the low 4 bits,
 * e2m1 rounds to the nearest magnitude (ties to the even code), saturates at 6 (inf too), NaN
 * gives a signed 0; e8m0 takes the exponent field of |x| (NaN and inf: 0xff). The reference
 * finds the nearest magnitude by distance, not by the thresholds the generated code uses. */
#include "pk.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const float kE2m1[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};

static uint32_t f32_bits(float v) {
  uint32_t r;
  memcpy(&r, &v, sizeof r);
  return r;
}

static unsigned nib(const uint8_t* t, int64_t row_bytes, int64_t k, int64_t n) {
  uint8_t b = t[k * row_bytes + n / 2];
  return n % 2 ? b >> 4 : b & 15u;
}
static float e2m1_value(unsigned c) { return c & 8u ? -kE2m1[c & 7u] : kE2m1[c & 7u]; }
static float e8m0_value(unsigned e) { return e == 255 ? NAN : ldexpf(1.0f, (int)e - 127); }

static unsigned e2m1_code(float x) {
  unsigned sign = f32_bits(x) >> 31 ? 8u : 0u;
  if (isnan(x))
    return sign;
  float a = fabsf(x);
  unsigned best = 0;
  for (unsigned c = 1; c < 8; ++c) {
    float d = fabsf(a - kE2m1[c]), db = fabsf(a - kE2m1[best]);
    if (d < db || (d == db && c % 2 == 0))
      best = c;
  }
  if (a > 6.0f)
    best = 7;
  return sign | best;
}

static int same(float a, float b) { return (isnan(a) && isnan(b)) || f32_bits(a) == f32_bits(b); }

static int run(int64_t K, int64_t N, unsigned seed) {
  const int64_t G = (N + 31) / 32, RB = N / 2;
  uint8_t* wu = malloc((size_t)(K * RB) + 1);
  uint8_t* wi = malloc((size_t)(K * RB) + 1);
  uint8_t* wf = malloc((size_t)(K * RB) + 1);
  uint8_t* s = malloc((size_t)(K * G) + 1);
  float* x = malloc(sizeof(float) * (size_t)(K * N) + 4);
  float* y = malloc(sizeof(float) * (size_t)(K * N * 4) + 4);
  float* z = malloc(sizeof(float) * (size_t)(K * N * 3) + 4);
  uint8_t* ou = malloc((size_t)(K * RB) + 1);
  uint8_t* oi = malloc((size_t)(K * RB) + 1);
  uint8_t* of = malloc((size_t)(K * RB) + 1);
  uint8_t* ox = malloc((size_t)(K * RB) + 1);
  uint8_t* os = malloc((size_t)(K * N) + 1);
  srand(seed);
  for (int64_t i = 0; i < K * RB; ++i) {
    wu[i] = (uint8_t)(i * 37 + 11);
    wi[i] = (uint8_t)(i * 53 + 5);
    wf[i] = (uint8_t)(i * 29 + 3);
  }
  for (int64_t i = 0; i < K * G; ++i) /* every code, NaN (255) and 2^-127 (0) included */
    s[i] = (uint8_t)(i % 3 == 0 ? 127 + (int)(i % 9) - 4 : (i * 71) % 256);
  static const float special[] = {0.0f, -0.0f, 0.25f, -0.25f, 0.75f, 1.25f, -1.75f, 2.5f, 3.5f,
                                  5.0f, -5.0f, 5.0001f, 6.0f, 100.0f, INFINITY, -INFINITY, NAN,
                                  1e-40f, 0.2499f, 0.2501f, 2.9999f, 1e30f, -0.7f};
  const int nspecial = (int)(sizeof special / sizeof special[0]);
  for (int64_t i = 0; i < K * N; ++i)
    x[i] = i % 2 ? special[(i / 2) % nspecial] : ((float)(rand() % 2001) - 1000.0f) / 128.0f;
  memset(y, 0xAB, sizeof(float) * (size_t)(K * N * 4));
  memset(ou, 0xAA, (size_t)(K * RB));
  memset(oi, 0xAA, (size_t)(K * RB));
  memset(of, 0xAA, (size_t)(K * RB));
  memset(ox, 0xAA, (size_t)(K * RB));
  memset(os, 0xAA, (size_t)(K * N));
  tg_status st = pk_packed_ops(NULL, wu, wi, wf, s, x, y, z, ou, oi, of, ox, os, K, N, G);
  if (st != TG_OK) {
    printf("K=%lld N=%lld: status %d\n", (long long)K, (long long)N, (int)st);
    return 1;
  }
  long bad = 0, checked = 0;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) {
      const unsigned u = nib(wu, RB, k, n), ic = nib(wi, RB, k, n), fc = nib(wf, RB, k, n);
      const int iv = (int)((ic ^ 8u)) - 8;
      const float sc = e8m0_value(s[k * G + n / 32]);
      const int64_t r = N - 1 - n;
      const unsigned ur = nib(wu, RB, k, r);
      const int ir = (int)((nib(wi, RB, k, r) ^ 8u)) - 8;
      float want_y[4] = {(float)u, (float)iv, e2m1_value(fc) * sc,
                         n + 1 < N ? e2m1_value(nib(wf, RB, k, n + 1)) : 7.0f};
      float want_z[3] = {(float)(uint32_t)(ur + (uint32_t)(ir + 8) * 16u),
                         e2m1_value(nib(wf, RB, k, r)), sc};
      for (int c = 0; c < 4; ++c, ++checked)
        if (!same(y[(k * N + n) * 4 + c], want_y[c]) && bad++ < 10)
          printf("Y[%lld, %lld, %d] = %g, want %g\n", (long long)k, (long long)n, c,
                 y[(k * N + n) * 4 + c], want_y[c]);
      for (int c = 0; c < 3; ++c, ++checked)
        if (!same(z[(k * N + n) * 3 + c], want_z[c]) && bad++ < 10)
          printf("Z[%lld, %lld, %d] = %g, want %g\n", (long long)k, (long long)n, c,
                 z[(k * N + n) * 3 + c], want_z[c]);
      const unsigned want_n[4] = {(u * 3u + 1u) & 15u, (unsigned)(-iv) & 15u,
                                  e2m1_code(e2m1_value(fc) * 1.25f), e2m1_code(x[k * N + n])};
      const uint8_t* outs[4] = {ou, oi, of, ox};
      for (int c = 0; c < 4; ++c, ++checked)
        if (nib(outs[c], RB, k, n) != want_n[c] && bad++ < 10)
          printf("out %d [%lld, %lld] = %u, want %u (x %g)\n", c, (long long)k, (long long)n,
                 nib(outs[c], RB, k, n), want_n[c], x[k * N + n]);
      const unsigned want_s = (f32_bits(x[k * N + n]) >> 23) & 255u;
      ++checked;
      if (os[k * N + n] != want_s && bad++ < 10)
        printf("Os[%lld, %lld] = %u, want %u\n", (long long)k, (long long)n, os[k * N + n], want_s);
    }
  printf("K=%lld N=%lld: %ld values, %ld mismatches\n", (long long)K, (long long)N, checked, bad);
  free(wu), free(wi), free(wf), free(s), free(x), free(y), free(z);
  free(ou), free(oi), free(of), free(ox), free(os);
  return bad != 0;
}

int main(void) {
  int fail = 0;
  fail |= run(7, 38, 1);   /* ragged in both dims: tiles 4 x 16 */
  fail |= run(8, 64, 2);   /* whole tiles, two scale groups */
  fail |= run(1, 2, 3);    /* one byte per row */
  fail |= run(13, 102, 4); /* odd K, N / 2 odd */
  /* N must be even (multiple_of: 2): the dispatch rejects an odd N. */
  {
    uint8_t b[64] = {0};
    float f[256] = {0};
    tg_status st = pk_packed_ops(NULL, b, b, b, b, f, f, f, b, b, b, b, b, 1, 3, 1);
    printf("N=3: status %s\n", st == TG_ERR_INVALID_DIM ? "TG_ERR_INVALID_DIM" : "other");
    fail |= st != TG_ERR_INVALID_DIM;
  }
  printf(fail ? "FAILED\n" : "PASSED\n");
  return fail;
}
