/* Runs the C variant of packed_pad.yaml at ragged shapes and compares every value with a
 * reference from docs/spec.md "Packed types": Y[k, c] and Z[k, c] hold element n = c - 8 of row
 * k of Wu (u4: low nibble first, rows of N / 2 bytes) and S (e8m0: 2^(e - 127), 0xff NaN), and
 * the pads (9, 0.5) where n is outside [0, N). */
#include "pp.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float e8m0_value(unsigned e) { return e == 255 ? NAN : ldexpf(1.0f, (int)e - 127); }
static int same(float a, float b) { return (isnan(a) && isnan(b)) || memcmp(&a, &b, 4) == 0; }

static int run(int64_t K, int64_t N) {
  const int64_t RB = N / 2, W = N + 16;
  uint8_t* wu = malloc((size_t)(K * RB) + 1);
  uint8_t* s = malloc((size_t)(K * N) + 1);
  float* y = malloc(sizeof(float) * (size_t)(K * W));
  float* z = malloc(sizeof(float) * (size_t)(K * W));
  for (int64_t i = 0; i < K * RB; ++i)
    wu[i] = (uint8_t)(i * 37 + 11);
  for (int64_t i = 0; i < K * N; ++i) /* 0 (2^-127) and 255 (NaN) included */
    s[i] = (uint8_t)(i * 71 + 3);
  for (int64_t i = 0; i < K * W; ++i)
    y[i] = z[i] = -1.0f;
  tg_status st = pp_packed_pad(NULL, wu, s, y, z, K, N);
  if (st != TG_OK) {
    printf("K=%lld N=%lld: status %d\n", (long long)K, (long long)N, (int)st);
    return 1;
  }
  long bad = 0, checked = 0;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < W; ++c) {
      const int64_t n = c - 8;
      const int in = n >= 0 && n < N;
      const uint8_t b = in ? wu[k * RB + n / 2] : 0;
      const float want_y = in ? (float)(n % 2 ? b >> 4 : b & 15u) : 9.0f;
      const float want_z = in ? e8m0_value(s[k * N + n]) : 0.5f;
      checked += 2;
      if (!same(y[k * W + c], want_y) && bad++ < 10)
        printf("Y[%lld, %lld] = %g, want %g\n", (long long)k, (long long)c, y[k * W + c], want_y);
      if (!same(z[k * W + c], want_z) && bad++ < 10)
        printf("Z[%lld, %lld] = %g, want %g\n", (long long)k, (long long)c, z[k * W + c], want_z);
    }
  printf("K=%lld N=%lld: %ld values, %ld mismatches\n", (long long)K, (long long)N, checked, bad);
  free(wu), free(s), free(y), free(z);
  return bad != 0;
}

int main(void) {
  int fail = 0;
  fail |= run(7, 38); /* ragged in both dims */
  fail |= run(8, 64); /* whole tiles */
  fail |= run(1, 2);  /* one byte per row */
  fail |= run(5, 22); /* N / 2 odd */
  printf(fail ? "FAILED\n" : "PASSED\n");
  return fail;
}
