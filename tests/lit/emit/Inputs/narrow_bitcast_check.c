/* Runs the C variant of narrow_bitcast.yaml over every u16 and u8 pattern and compares with the
 * runtime's conversions (tilegen/runtime.h, written independently of the generator): the value
 * of a pattern as f16/bf16/e4m3/e5m2 is the runtime's decoding of it, bit for bit (NaN: any
 * NaN); the bits of a narrow float value are the pattern it was stored as (a NaN: a NaN
 * pattern of the same sign), and R rounds bitcast<f16>(H) * 2 to bf16 like the runtime. */
#include "nb.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { N = 65536 };
static uint16_t h[N], fh[N], fb[N], r[N];
static uint8_t b[N], f8[N], f5[N];
static float v[N * 4];
static uint32_t u[N * 4];

static uint32_t f32_bits(float x) {
  uint32_t y;
  memcpy(&y, &x, sizeof y);
  return y;
}
static int same(float a, float w) { return (isnan(a) && isnan(w)) || f32_bits(a) == f32_bits(w); }

/* Is pattern p (width bits, format kind) a NaN? */
static int is_nan_bits(unsigned p, int kind) {
  switch (kind) {
  case 0: return (p & 0x7c00u) == 0x7c00u && (p & 0x3ffu) != 0;   /* f16 */
  case 1: return (p & 0x7f80u) == 0x7f80u && (p & 0x7fu) != 0;    /* bf16 */
  case 2: return (p & 0x7fu) == 0x7fu;                            /* e4m3 */
  default: return (p & 0x7cu) == 0x7cu && (p & 0x3u) != 0;        /* e5m2 */
  }
}

int main(void) {
  for (int j = 0; j < N; ++j) {
    h[j] = fh[j] = fb[j] = (uint16_t)j;
    b[j] = f8[j] = f5[j] = (uint8_t)j;
  }
  tg_status st = nb_narrow_bits(NULL, h, b, fh, fb, f8, f5, v, u, r, N);
  if (st != TG_OK) {
    printf("status %d\n", (int)st);
    return 1;
  }
  long bad = 0;
  for (int j = 0; j < N; ++j) {
    const float want_v[4] = {tg_f16_to_float((tg_f16)j), tg_bf16_to_float((tg_bf16)j),
                             tg_e4m3_to_float((tg_e4m3)(j & 255)), tg_e5m2_to_float((tg_e5m2)(j & 255))};
    const unsigned pat[4] = {(unsigned)j, (unsigned)j, (unsigned)(j & 255), (unsigned)(j & 255)};
    const unsigned sign[4] = {0x8000u, 0x8000u, 0x80u, 0x80u};
    for (int c = 0; c < 4; ++c) {
      if (!same(v[j * 4 + c], want_v[c]) && bad++ < 10)
        printf("V[%d, %d] = %a, want %a\n", j, c, v[j * 4 + c], want_v[c]);
      const unsigned got = u[j * 4 + c];
      const int ok = is_nan_bits(pat[c], c) ? is_nan_bits(got, c) && (got & sign[c]) == (pat[c] & sign[c])
                                            : got == pat[c];
      if (!ok && bad++ < 10)
        printf("U[%d, %d] = 0x%x, want 0x%x\n", j, c, got, pat[c]);
    }
    const uint16_t want_r = tg_float_to_bf16(tg_f16_to_float((tg_f16)j) * 2.0f);
    const int rok = is_nan_bits(want_r, 1) ? is_nan_bits(r[j], 1) : r[j] == want_r;
    if (!rok && bad++ < 10)
      printf("R[%d] = 0x%x, want 0x%x\n", j, r[j], want_r);
  }
  printf("%d patterns x 9 values, %ld mismatches\n", N, bad);
  printf(bad ? "FAILED\n" : "PASSED\n");
  return bad != 0;
}
