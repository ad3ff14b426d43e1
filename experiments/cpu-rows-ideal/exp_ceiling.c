/* How fast softmax could be on one AVX2 core with its exact exp (issue #38): the time per
 * element of tilegen's 8-lane exp alone (the steps of tg_exp8_f32, generated C of c_avx2) on
 * data in L1, of the fused pass sub + exp + store + sum, and of a glibc memcpy of 64 MiB per
 * f32 and per 16-bit element (read + write). Best of 7 rounds, wall time, 1 thread.
 *   gcc -O3 -mavx2 -mfma -o exp_ceiling exp_ceiling.c && ./exp_ceiling */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
/* e^x of 8 floats, the steps of the generated tg_exp8_f32 (c_avx2): clamp, n = round(x / ln 2)
 * by the 1.5 * 2^23 shift, r = x - n ln 2 in two parts, a degree-4 q(r), then p * 2^n as two
 * exponent-field factors (gradual underflow). */
static inline __m256 exp8(__m256 x) {
  const __m256 shift = _mm256_set1_ps(0x1.8p23f);
  x = _mm256_max_ps(_mm256_set1_ps(-104.0f), x);
  x = _mm256_min_ps(_mm256_set1_ps(89.0f), x);
  const __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), shift);
  const __m256 kn = _mm256_sub_ps(t, shift);
  __m256 r = _mm256_fmadd_ps(kn, _mm256_set1_ps(-0x1.62e4p-1f), x);
  r = _mm256_fmadd_ps(kn, _mm256_set1_ps(-0x1.7f7d1cp-20f), r);
  __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(0x1.6d10fcp-10f), r, _mm256_set1_ps(0x1.120b62p-7f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0x1.55551ap-5f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0x1.5554dep-3f));
  q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(0x1p-1f));
  const __m256 p = _mm256_add_ps(_mm256_fmadd_ps(_mm256_mul_ps(r, r), q, r), _mm256_set1_ps(1.0f));
  const __m256i n = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(shift));
  const __m256i n1 = _mm256_srai_epi32(n, 1), n2 = _mm256_sub_epi32(n, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 f1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 f2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, f1), f2);
}
__attribute__((noinline)) static void exp_row(float* v, int64_t n) {
  for (int64_t i = 0; i < n; i += 8)
    _mm256_storeu_ps(v + i, exp8(_mm256_loadu_ps(v + i)));
}
__attribute__((noinline)) static float fused(const float* x, float* e, int64_t n, float m) {
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, mm = _mm256_set1_ps(m);
  for (int64_t i = 0; i < n; i += 16) {
    __m256 a = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), mm));
    __m256 b = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), mm));
    _mm256_storeu_ps(e + i, a), _mm256_storeu_ps(e + i + 8, b);
    s0 = _mm256_add_ps(s0, a), s1 = _mm256_add_ps(s1, b);
  }
  float t[8];
  _mm256_storeu_ps(t, _mm256_add_ps(s0, s1));
  return t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
}
int main(void) {
  enum { N = 4096, REPS = 20000 };
  static float x[N] __attribute__((aligned(64))), e[N] __attribute__((aligned(64)));
  for (int i = 0; i < N; ++i)
    x[i] = -(float)(i % 97) / 10.f;
  double t_exp = 1e9, t_fused = 1e9, t_copy = 1e9;
  volatile float sink = 0;
  const size_t bytes = (size_t)64 << 20;
  char *src = aligned_alloc(64, bytes), *dst = aligned_alloc(64, bytes);
  memset(src, 1, bytes), memset(dst, 2, bytes);
  for (int r = 0; r < 7; ++r) {
    double t0 = now();
    for (int k = 0; k < REPS; ++k) {
      memcpy(e, x, sizeof e);
      exp_row(e, N);
      sink += e[k % N];
    }
    double t1 = now();
    for (int k = 0; k < REPS; ++k)
      sink += fused(x, e, N, 0.5f);
    double t2 = now();
    memcpy(dst, src, bytes);
    double t3 = now();
    sink += dst[r];
    t_exp = (t1 - t0) < t_exp ? t1 - t0 : t_exp;
    t_fused = (t2 - t1) < t_fused ? t2 - t1 : t_fused;
    t_copy = (t3 - t2) < t_copy ? t3 - t2 : t_copy;
  }
  const double ns_exp = t_exp / REPS / N * 1e9, ns_fused = t_fused / REPS / N * 1e9;
  const double ns_byte = t_copy / bytes * 1e9; /* per byte copied (read + write) */
  printf("exp alone (in L1, with a 16 KiB copy in): %.3f ns/element\n", ns_exp);
  printf("sub + exp + store + sum (in L1):          %.3f ns/element\n", ns_fused);
  printf("memcpy of 64 MiB: %.1f GB/s read + write; per element %.3f ns (f32), %.3f ns (16-bit)\n",
         2.0 / ns_byte, 4 * ns_byte, 2 * ns_byte);
  printf("softmax's ceiling with this exp, if nothing else cost anything: %.2fx memcpy (f32), %.2fx (16-bit)\n",
         4 * ns_byte / ns_fused, 2 * ns_byte / ns_fused);
  return sink == 12345.f;
}
