/* Launch-handle helpers and 16- and 8-bit float conversions shared by dispatch code and variants. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#elif !defined(__linux__) && !defined(_POSIX_C_SOURCE) && !defined(__APPLE__)
#define _POSIX_C_SOURCE 200809L /* sysconf */
#endif
#include "tilegen/runtime.h"
#include "tilegen/variant.h"

#include <limits.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#if defined(__linux__)
#include <sched.h>
#endif

/* Processors this process may run on: its affinity mask where the system has one, else the
 * online processors; at least 1. Probed once (relaxed atomics: racing first calls compute the
 * same value). */
int tg_cpu_count(void) {
  static int cached;
  int n = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (n > 0)
    return n;
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    n = CPU_COUNT(&set);
#endif
  if (n <= 0) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    n = online > 0 && online < INT_MAX ? (int)online : 1;
  }
  __atomic_store_n(&cached, n, __ATOMIC_RELAXED);
  return n;
}

int tg_launch_num_threads(const tg_launch* launch) {
  if (!launch || launch->num_threads <= 0)
    return 0;
  const int cpus = tg_cpu_count();
  return launch->num_threads < cpus ? launch->num_threads : cpus;
}

int tg_cpu_threads(const tg_launch* launch, int default_threads, int64_t gx, int64_t gy,
                   int64_t gz) {
  int n = tg_launch_num_threads(launch);
  if (n == 0)
    n = default_threads > 0 ? default_threads : 1;
  /* the blocks, saturated: a thread without a block would only be started and joined */
  int64_t blocks = gx > 0 ? gx : 1;
  if (gy > 1)
    blocks = blocks > INT_MAX / gy ? INT_MAX : blocks * gy;
  if (gz > 1)
    blocks = blocks > INT_MAX / gz ? INT_MAX : blocks * gz;
  return blocks < n ? (int)blocks : n;
}

float tg_bf16_to_float(tg_bf16 h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

tg_bf16 tg_float_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) /* NaN: keep it a (quiet) NaN, don't round to inf */
    return (tg_bf16)((u >> 16) | 0x0040u);
  u += 0x7FFFu + ((u >> 16) & 1u); /* round to nearest, ties to even */
  return (tg_bf16)(u >> 16);
}

float tg_f16_to_float(tg_f16 h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t man = h & 0x3FFu;
  uint32_t u;
  if (exp == 0x1F) { /* inf / NaN */
    u = sign | 0x7F800000u | (man << 13);
  } else if (exp != 0) { /* normal */
    u = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) { /* zero */
    u = sign;
  } else { /* subnormal: normalize */
    int e = -1;
    do {
      ++e;
      man <<= 1;
    } while ((man & 0x400u) == 0);
    u = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3FFu) << 13);
  }
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

tg_f16 tg_float_to_f16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t abs = u & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) /* NaN */
    return (tg_f16)(sign | 0x7E00u);
  if (abs >= 0x477FF000u) /* rounds to >= 65520: inf */
    return (tg_f16)(sign | 0x7C00u);
  if (abs < 0x38800000u) { /* below the smallest normal half (2^-14): subnormal or zero */
    if (abs < 0x33000000u) /* < 2^-25: rounds to zero */
      return (tg_f16)sign;
    uint32_t man = (abs & 0x7FFFFFu) | 0x800000u;
    int shift = 126 - (int)(abs >> 23); /* 14..24 */
    uint32_t half = man >> shift;
    uint32_t rem = man & ((1u << shift) - 1u);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u)))
      ++half;
    return (tg_f16)(sign | half);
  }
  uint32_t r = abs + 0xFFFu + ((abs >> 13) & 1u) - 0x38000000u; /* rebias 127 -> 15, round */
  return (tg_f16)(sign | (r >> 13));
}

/* FP8 (ir/FloatBits.cpp has the same algorithms; the generated code carries its own copies). */
static float fp8_to_float(uint8_t b, int mbits, int bias, uint32_t max_code, int has_inf) {
  const int e = (b & 0x7F) >> mbits, m = b & ((1 << mbits) - 1);
  float v;
  if ((uint32_t)(b & 0x7F) > max_code)
    v = has_inf && m == 0 ? INFINITY : NAN;
  else if (e == 0)
    v = ldexpf((float)m, 1 - bias - mbits);
  else
    v = ldexpf((float)(m + (1 << mbits)), e - bias - mbits);
  return (b & 0x80) ? -v : v;
}

static uint8_t float_to_fp8(float f, int mbits, int bias, uint32_t max_code) {
  const uint8_t sign = signbit(f) ? 0x80 : 0x00;
  if (isnan(f))
    return sign | 0x7F;
  const float a = fabsf(f);
  if (a > 0x1p100f)
    return (uint8_t)(sign | max_code);
  int x = 0;
  (void)frexpf(a, &x);
  int e = x - 1 < 1 - bias ? 1 - bias : x - 1;
  float q = nearbyintf(ldexpf(a, mbits - e));
  if (q >= (float)(2 << mbits)) {
    q *= 0.5f;
    ++e;
  }
  uint32_t code = q < (float)(1 << mbits) ? (uint32_t)q
                                          : ((uint32_t)(e + bias) << mbits) | ((uint32_t)q - (1u << mbits));
  return (uint8_t)(sign | (code > max_code ? max_code : code));
}

float tg_e4m3_to_float(tg_e4m3 b) { return fp8_to_float(b, 3, 7, 0x7E, 0); }
float tg_e5m2_to_float(tg_e5m2 b) { return fp8_to_float(b, 2, 15, 0x7B, 1); }
tg_e4m3 tg_float_to_e4m3(float f) { return float_to_fp8(f, 3, 7, 0x7E); }
tg_e5m2 tg_float_to_e5m2(float f) { return float_to_fp8(f, 2, 15, 0x7B); }
