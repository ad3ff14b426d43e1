/* Runs the C variant of bitwise.yaml on inputs that cover every byte, sign and shift count
 * (negative, in range, the width, past it) and compares with a reference written from
 * docs/spec.md's table, by arithmetic rather than shifts: x << n is x * 2^n reduced to the
 * width, x >> n is floor(x / 2^n); outside [0, width) 0 and the sign fill. */
#include "bw.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

static int64_t wrap(int64_t v, int bits) { /* v mod 2^bits as a signed value */
  if (bits == 64)
    return v;
  const int64_t m = (int64_t)1 << bits;
  v %= m;
  if (v < 0)
    v += m;
  return v >= m / 2 ? v - m : v;
}
static int64_t ref_shl(int64_t a, int64_t n, int bits) {
  if (n < 0 || n >= bits)
    return 0;
  int64_t v = wrap(a, bits);
  for (int64_t i = 0; i < n; ++i)
    v = wrap((int64_t)((uint64_t)v * 2u), bits);
  return v;
}
static int64_t ref_shr(int64_t a, int64_t n, int bits) {
  if (n < 0 || n >= bits)
    return a < 0 ? -1 : 0;
  int64_t p = (int64_t)1 << n, q = a / p;
  return (a % p != 0 && a < 0) ? q - 1 : q; /* floor */
}
static int64_t mod_nonneg(int64_t a, int64_t m) { return ((a % m) + m) % m; }
/* The biased exponent field of an f32, from its value (frexp), not its bits. */
static int64_t biased_exponent(float v) {
  if (isnan(v) || isinf(v))
    return 255;
  if (v == 0.0f || fabsf(v) < 0x1p-126f)
    return 0; /* zero and subnormals */
  int e;
  frexpf(v, &e);
  return e - 1 + 127;
}

enum { N = 700 };
static int8_t q8[N], c8[N];
static int32_t w[N], o[N * 9];
static float x[N], f[N], y[N];

static int run(int32_t s) {
  for (int j = 0; j < N * 9; ++j)
    o[j] = 12345;
  tg_status st = bw_bitwise(NULL, q8, c8, w, f, o, x, y, N, s);
  if (st != TG_OK) {
    printf("S=%d: status %d\n", (int)s, (int)st);
    return 1;
  }
  int bad = 0;
  for (int j = 0; j < N; ++j) {
    const int64_t q = q8[j], c = c8[j], W = w[j];
    const int64_t lo = mod_nonneg(q, 16), hi = mod_nonneg(ref_shr(q, 4, 64), 16);
    const int64_t nib = mod_nonneg(ref_shr(W, 28, 64), 16) + 16 * mod_nonneg(ref_shr(W, 4, 64), 16);
    const int64_t want[9] = {
        mod_nonneg(q, 256),                 /* the byte's bits as 0..255 */
        nib,
        ref_shl(W, s, 32),
        ref_shr(W, s, 32),
        ref_shl(q, c, 8),
        ref_shr(q, c, 8),
        ((-W - 1) ^ 1) | 4,                         /* (~W ^ 1) | (6 & 12) */
        wrap(W ^ (ref_shl(s, 8, 64) - mod_nonneg(ref_shl(s, 8, 64), 256)), 32), /* W ^ ((S << 8) & ~255) */
        biased_exponent(f[j]),
    };
    for (int k = 0; k < 9; ++k)
      if (o[j * 9 + k] != want[k] && bad++ < 10)
        printf("S=%d j=%d column %d: %d, want %lld (q=%d c=%d w=%d)\n", (int)s, j, k, (int)o[j * 9 + k],
               (long long)want[k], (int)q, (int)c, (int)W);
    const double xw = (double)(hi - 8) * 0.5 + (double)lo * 0.25;
    if (x[j] != (float)xw && bad++ < 10)
      printf("S=%d j=%d X: %g, want %g\n", (int)s, j, (double)x[j], xw);
    if (!(y[j] == -f[j] || (isnan(f[j]) && isnan(y[j]) && signbit(y[j]) != signbit(f[j]))) && bad++ < 10)
      printf("S=%d j=%d Y: %g, want %g\n", (int)s, j, (double)y[j], -(double)f[j]);
  }
  printf("S=%d: %d elements, %d mismatches\n", (int)s, N, bad);
  return bad != 0;
}

int main(void) {
  uint32_t r = 12345u;
  for (int j = 0; j < N; ++j) {
    q8[j] = (int8_t)(j % 256 - 128);            /* every byte */
    c8[j] = (int8_t)((j / 256 * 7 + j) % 12 - 2); /* counts -2 .. 9 */
    r = r * 1664525u + 1013904223u;
    w[j] = (int32_t)r;
  }
  w[0] = INT32_MIN, w[1] = INT32_MAX, w[2] = -1, w[3] = 0, w[4] = 0x12345678;
  for (int j = 0; j < N; ++j) /* |f| over many binades, both signs; specials at the start */
    f[j] = (float)((j % 2 ? -1.0 : 1.0) * ldexp(1.0 + (double)(j % 37) / 37.0, j % 300 - 150));
  f[0] = 0.0f, f[1] = -0.0f, f[2] = INFINITY, f[3] = -INFINITY, f[4] = NAN, f[5] = 0x1p-149f, f[6] = 3.0e38f;
  const int32_t counts[] = {0, 1, 4, 31, 32, 33, 100, -1, INT32_MIN};
  int failed = 0;
  for (unsigned i = 0; i < sizeof counts / sizeof counts[0]; ++i)
    failed |= run(counts[i]);
  /* Hand-checked values: w[4] = 0x12345678, S = 4. */
  run(4);
  printf("w=0x12345678 S=4: nibbles 0x%x, << 0x%x, >> 0x%x\n", (unsigned)o[4 * 9 + 1], (unsigned)o[4 * 9 + 2],
         (unsigned)o[4 * 9 + 3]);
  printf("F=3e38: exponent field %d, Y %g; F=inf: %d, Y %g; F=-0: %d, Y %g\n", (int)o[6 * 9 + 8], (double)y[6],
         (int)o[2 * 9 + 8], (double)y[2], (int)o[1 * 9 + 8], (double)y[1]);
  printf("%s\n", failed ? "FAILED" : "PASSED");
  return failed;
}
