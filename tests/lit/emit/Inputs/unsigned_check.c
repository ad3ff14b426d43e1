/* Runs the C variant of unsigned.yaml on inputs that cover every byte, 16-bit values at the
 * edges, 32- and 64-bit words with their extremes, zero divisors and shift counts inside and
 * past the width, and compares with a reference written from docs/spec.md "Unsigned integers"
 * in uint64_t arithmetic with explicit masks (wrap-around modulo 2^n, logical shifts, a / 0 = 0,
 * a % 0 = a, conversions wrap, bitcast = the same bits). */
#include "us.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const uint64_t M32 = 0xffffffffu;

enum { N = 700 };
static uint8_t b[N], b8[N];
static uint16_t h[N], h16[N];
static uint32_t w[N], d[N], o[N * 16];
static uint64_t l[N], o64[N * 4];
static float f[N], y[N];
static double g[N];
static int8_t q[N], q8[N];

static uint32_t f32_bits(float v) {
  uint32_t r;
  memcpy(&r, &v, sizeof r);
  return r;
}
static float bits_f32(uint32_t v) {
  float r;
  memcpy(&r, &v, sizeof r);
  return r;
}

static int run(uint32_t s) {
  for (int j = 0; j < N * 16; ++j)
    o[j] = 12345u;
  tg_status st = us_unsigned_ops(NULL, b, h, w, d, l, f, g, q, o, o64, b8, h16, q8, y, N, s);
  if (st != TG_OK) {
    printf("S=%u: status %d\n", s, (int)st);
    return 1;
  }
  int bad = 0;
  for (int j = 0; j < N; ++j) {
    const uint64_t B = b[j], H = h[j], W = w[j], D = d[j], L = l[j];
    const uint64_t qw = (uint64_t)(int64_t)q[j] & M32; /* u32(q): the i8's value modulo 2^32 */
    const uint64_t mx = W > D ? W : D, mn = W < 7 ? W : 7;
    const uint64_t want[16] = {
        (B + H * 3) & M32,
        (W - D) & M32,
        (W * D) & M32,
        W >> 28,
        s >= 32 ? 0 : W >> s,
        s >= 32 ? 0 : (W << s) & M32,
        D == 0 ? 0 : W / D,
        D == 0 ? W : W % D,
        W / 16 + W % 16,
        (~W ^ 255) & M32,
        W > D ? 1 : 0,
        (uint64_t)f[j], /* f is in [0, 2^32) */
        f32_bits(f[j]),
        (qw + (qw & 255)) & M32,
        (B >> 4) | ((B & 15) << 8),
        (0 - W + mx - mn) & M32,
    };
    for (int k = 0; k < 16; ++k)
      if (o[j * 16 + k] != want[k] && bad++ < 10)
        printf("S=%u j=%d column %d: %u, want %llu (b=%u h=%u w=%u d=%u)\n", s, j, k, o[j * 16 + k],
               (unsigned long long)want[k], (unsigned)B, (unsigned)H, (unsigned)W, (unsigned)D);
    const uint64_t want64[4] = {
        L * W + L, /* modulo 2^64 */
        s >= 64 ? 0 : L >> s,
        0,
        D == 0 ? L : L / D + L % D,
    };
    for (int k = 0; k < 4; ++k)
      if (o64[j * 4 + k] != want64[k] && bad++ < 10)
        printf("S=%u j=%d u64 column %d: %llu, want %llu\n", s, j, k, (unsigned long long)o64[j * 4 + k],
               (unsigned long long)want64[k]);
    if (b8[j] != (uint8_t)((B + B) & 255) && bad++ < 10)
      printf("j=%d B8: %u, want %u\n", j, b8[j], (unsigned)((B + B) & 255));
    if (h16[j] != (uint16_t)((((H * H) & 0xffff) + 1) & 0xffff) && bad++ < 10)
      printf("j=%d H16: %u\n", j, h16[j]);
    if ((uint8_t)q8[j] != b[j] && bad++ < 10)
      printf("j=%d Q8: %d, want the bits of %u\n", j, q8[j], b[j]);
    float yw = bits_f32(w[j]) + (float)d[j];
    yw += (float)l[j];
    if (!(y[j] == yw || (isnan(y[j]) && isnan(yw))) && bad++ < 10)
      printf("j=%d Y: %g, want %g\n", j, (double)y[j], (double)yw);
  }
  printf("S=%u: %d elements, %d mismatches\n", s, N, bad);
  return bad != 0;
}

int main(void) {
  uint64_t r = 12345u;
  for (int j = 0; j < N; ++j) {
    b[j] = (uint8_t)(j % 256); /* every byte */
    q[j] = (int8_t)(j % 256 - 128);
    r = r * 6364136223846793005u + 1442695040888963407u;
    h[j] = (uint16_t)(r >> 48);
    w[j] = (uint32_t)(r >> 32);
    d[j] = j % 5 == 0 ? 0u : (uint32_t)(r >> 7) >> (j % 29); /* zeros, small and large divisors */
    l[j] = r ^ (r << 13);
    f[j] = (float)j * 1234.567f;
    g[j] = (double)(j % 2 ? -1.0 : 1.0) * ldexp(1.0 + (double)j, j % 100 - 50);
  }
  h[0] = 0, h[1] = 65535, h[2] = 256;
  w[0] = 0, w[1] = 0xffffffffu, w[2] = 0x80000000u, w[3] = 0x12345678u, w[4] = 7;
  d[1] = 1, d[2] = 0xffffffffu, d[3] = 0x10u, d[4] = 0xffffffffu;
  l[0] = 0, l[1] = UINT64_MAX, l[2] = (uint64_t)1 << 63, l[3] = 0x123456789abcdef0u;
  f[1] = 4294967040.0f; /* the largest f32 below 2^32 */
  g[0] = -0.0, g[1] = INFINITY, g[2] = NAN;
  const uint32_t counts[] = {0, 1, 4, 31, 32, 33, 63, 64, 100, 0xffffffffu};
  int failed = 0;
  for (unsigned i = 0; i < sizeof counts / sizeof counts[0]; ++i)
    failed |= run(counts[i]);
  /* Hand-checked values: w[3] = 0x12345678, d[3] = 16; w[4] = 7, d[4] = 0xffffffff; S = 4. */
  run(4);
  printf("w=0x12345678 d=16 S=4: - 0x%x, >> 0x%x, << 0x%x, / 0x%x, %% 0x%x; w=7 d=0xffffffff: -w + max - min 0x%x\n",
         o[3 * 16 + 1], o[3 * 16 + 4], o[3 * 16 + 5], o[3 * 16 + 6], o[3 * 16 + 7], o[4 * 16 + 15]);
  printf("w=0xffffffff d=1: * 0x%x, ~^255 0x%x; l=2^64-1: >> 4 0x%llx\n", o[1 * 16 + 2], o[1 * 16 + 9],
         (unsigned long long)o64[1 * 4 + 1]);
  printf("%s\n", failed ? "FAILED" : "PASSED");
  return failed;
}
