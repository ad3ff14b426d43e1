#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static int PF = 0;
static double cpu_s(void) { struct timespec ts; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); return ts.tv_sec + 1e-9 * ts.tv_nsec; }
static inline __m256 ld_bf16(const uint16_t* p) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)p)), 16)); }
static inline __m256 ld_f16(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p)); }
static inline __m256i rne(__m256 v) { __m256i u = _mm256_castps_si256(v);
  __m256i r = _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1))));
  return _mm256_srli_epi32(r, 16); }
/* 16 floats (a, b) -> 16 bf16 */
static inline __m256i st_bf16(__m256 a, __m256 b) { return _mm256_permute4x64_epi64(_mm256_packus_epi32(rne(a), rne(b)), 0xD8); }
static inline __m256i st_f16(__m256 a, __m256 b) { return _mm256_insertf128_si256(_mm256_castsi128_si256(_mm256_cvtps_ph(a, 0)), _mm256_cvtps_ph(b, 0), 1); }
#define RMS(NAME, LD, ST) \
static void NAME(const uint16_t* X, const uint16_t* W, uint16_t* Y, int64_t M, int64_t N, int nt) { \
  float w[4096] __attribute__((aligned(64))); \
  for (int64_t j = 0; j < N; j += 8) _mm256_store_ps(w + j, LD(W + j)); \
  for (int64_t i = 0; i < M; ++i) { const uint16_t* x = X + i * N; uint16_t* y = Y + i * N; \
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0; \
    for (int64_t j = 0; j < N; j += 32) { __m256 v0 = LD(x + j), v1 = LD(x + j + 8), v2 = LD(x + j + 16), v3 = LD(x + j + 24); \
      a0 = _mm256_fmadd_ps(v0, v0, a0); a1 = _mm256_fmadd_ps(v1, v1, a1); a2 = _mm256_fmadd_ps(v2, v2, a2); a3 = _mm256_fmadd_ps(v3, v3, a3); } \
    __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)); float t[8]; _mm256_storeu_ps(t, s); \
    float ss = t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7]; \
    __m256 r = _mm256_set1_ps(1.0f / sqrtf(ss / N + 1e-5f)); \
    for (int64_t j = 0; j < N; j += 16) { if (PF && i + PF < M && (j & 31) == 0) _mm_prefetch((const char*)(x + PF * N + j), _MM_HINT_T0); \
      __m256i h = ST(_mm256_mul_ps(_mm256_mul_ps(LD(x + j), r), _mm256_load_ps(w + j)), _mm256_mul_ps(_mm256_mul_ps(LD(x + j + 8), r), _mm256_load_ps(w + j + 8))); \
      if (nt) _mm256_stream_si256((__m256i*)(y + j), h); else _mm256_storeu_si256((__m256i*)(y + j), h); } \
  } \
  _mm_sfence(); \
}
RMS(rms_bf16, ld_bf16, st_bf16)
RMS(rms_f16, ld_f16, st_f16)
int main(int argc, char** argv) { PF = argc > 1 ? atoi(argv[1]) : 0; int64_t N = 4096; int rounds = 9;
  for (int s = 0; s < 2; ++s) { int64_t M = s ? 16384 : 4096; size_t bytes = M * N * 2;
    uint16_t *x = aligned_alloc(64, bytes), *y = aligned_alloc(64, bytes), *w = aligned_alloc(64, N * 2);
    for (size_t i = 0; i < (size_t)(M * N); ++i) x[i] = 0x3c00 + (i * 7919 % 97); for (int j = 0; j < N; ++j) w[j] = 0x3c00;
    memset(y, 1, bytes);
    for (int k = 0; k < 2; ++k) { double b[3] = {1e9, 1e9, 1e9};
      for (int r = 0; r < rounds; ++r) for (int v = 0; v < 3; ++v) { double t0 = cpu_s();
        if (v == 0) memcpy(y, x, bytes); else if (v == 1) (k ? rms_f16 : rms_bf16)(x, w, y, M, N, 0); else (k ? rms_f16 : rms_bf16)(x, w, y, M, N, 1);
        double dt = cpu_s() - t0; if (dt < b[v]) b[v] = dt; }
      printf("%s %lldx%lld prefetch %d: memcpy %.1f GB/s; hand-written AVX2 rmsnorm: cached stores %.2fx, streaming stores %.2fx of memcpy\n", k ? "f16" : "bf16", (long long)M, (long long)N, PF, 2.0 * bytes / b[0] * 1e-9, b[0] / b[1], b[0] / b[2]); }
    free(x); free(y); free(w); }
}
