// Helper bodies are plain C11 that gcc/clang vectorize (no branches that block if-conversion).
// The 16-bit conversions match ir/FloatBits.cpp bit for bit, so constants folded by the
// generator agree with values computed at run time.
#include "emit/CRuntimeHelpers.h"
#include "emit/CFamilyPrinter.h"

#include "support/InternalError.h"

#include <string>
#include <vector>

namespace tilegen::emit {

namespace {

struct Helper {
  const char* name;
  std::vector<const char*> deps;
  std::string text;
};

// Every occurrence of key in s replaced by value (the helpers' templates: @T, @GUARD, ...).
void replace_all(std::string& s, const std::string& key, const std::string& value) {
  for (size_t at = s.find(key); at != std::string::npos; at = s.find(key, at + value.size()))
    s.replace(at, key.size(), value);
}

// tg_stream_row_<t> for a 16-bit float type t ("f16", "bf16"), after its vector conversions
// tg_cvt16_f32_<t> (AVX-512F) and tg_cvt8_f32_<t> (where `guard` holds): dst[0, n) := the
// values of tg_f32_to_<t>, through streaming stores when nt (prefetching pf as
// tg_stream_row_f32 does), the whole vectors converted in registers either way.
std::string stream_row_16(const std::string& t, const std::string& guard) {
  const std::string fn = "static inline void tg_stream_row_" + t + "(";
  std::string s = R"(/* dst[0, n) := @T of src[0, n) (the values of tg_f32_to_@T); streaming stores when nt,
   prefetching pf as tg_stream_row_f32 does. */
@FNuint16_t* dst, const float* src, int64_t n, int nt,
@PADconst void* pf) {
  /* With nt, the elements before dst's first 64-byte boundary (all of them for an odd
     address) are the head: it and the tail are stored apart from the whole vectors. */
  const uintptr_t mis = (uintptr_t)dst & 63u;
  const int64_t head = !nt ? 0 : mis == 0 ? 0 : (mis & 1u) ? n : (int64_t)((64u - mis) / 2u);
  int64_t i = 0;
#if defined(__AVX512F__) || @GUARD
#if defined(__AVX512F__)
  enum { VL = 32 };
#define TG_CVT_STORE(p, s) _mm512_storeu_si512((p), _mm512_inserti64x4(_mm512_castsi256_si512(tg_cvt16_f32_@T(s)), tg_cvt16_f32_@T((s) + 16), 1))
#else
  enum { VL = 16 };
#define TG_CVT_STORE(p, s) _mm256_storeu_si256((__m256i*)(p), _mm256_insertf128_si256(_mm256_castsi128_si256(tg_cvt8_f32_@T(s)), tg_cvt8_f32_@T((s) + 8), 1))
#endif
  /* A head or tail of fewer than VL elements: a whole vector converted into t (the VL source
     elements that start at the part's start, or end at its end), then the part's elements
     stored: with nt, 16-byte streaming stores where dst and the part are multiples of 16 bytes
     (the tail of one call and the head of the next fill one line's write-combining buffer:
     the common case of a buffer 16 bytes past a line, as malloc gives), else one by one. */
  _Alignas(64) uint16_t t[VL];
#define TG_PUT_PART(at, len)                                                                  \
  do {                                                                                        \
    if (nt && (((uintptr_t)(dst + i) | (uintptr_t)(len) * 2u) & 15u) == 0) {                  \
      for (int64_t k = 0; k < (len); k += 8)                                                  \
        _mm_stream_si128((__m128i*)(dst + i + k), _mm_loadu_si128((const __m128i*)(t + (i - (at)) + k))); \
    } else {                                                                                  \
      for (int64_t k = 0; k < (len); ++k)                                                     \
        dst[i + k] = t[i - (at) + k];                                                         \
    }                                                                                         \
  } while (0)
  for (int64_t e = head < n ? head : n; i < e;) {
    const int64_t len = e - i < VL ? e - i : VL;
    const int64_t at = i + VL <= n ? i : n - VL;
    if (at < 0)
      break; /* a row shorter than one vector: converted below */
    TG_CVT_STORE(t, src + at);
    TG_PUT_PART(at, len);
    i += len;
  }
#if defined(__AVX512F__)
  for (; i + 32 <= n; i += 32) {
    const __m512i h = _mm512_inserti64x4(_mm512_castsi256_si512(tg_cvt16_f32_@T(src + i)),
                                         tg_cvt16_f32_@T(src + i + 16), 1);
    if (nt) {
      _mm512_stream_si512((__m512i*)(dst + i), h);
      if (pf)
        tg_prefetch((const char*)pf + i * (int64_t)sizeof(uint16_t));
    } else
      _mm512_storeu_si512(dst + i, h);
  }
#else
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm256_insertf128_si256(_mm256_castsi128_si256(tg_cvt8_f32_@T(src + i)),
                                              tg_cvt8_f32_@T(src + i + 8), 1);
    if (nt) {
      _mm256_stream_si256((__m256i*)(dst + i), h);
      if (pf)
        tg_prefetch((const char*)pf + i * (int64_t)sizeof(uint16_t));
    } else
      _mm256_storeu_si256((__m256i*)(dst + i), h);
  }
#endif
  if (i < n && n >= VL) {
    TG_CVT_STORE(t, src + n - VL);
    TG_PUT_PART(n - VL, n - i);
    i = n;
  }
#undef TG_PUT_PART
#undef TG_CVT_STORE
#else
  if (nt) {
    for (; i < head && i < n; ++i)
      dst[i] = tg_f32_to_@T(src[i]);
    for (; i + 32 <= n; i += 32) {
      _Alignas(64) uint16_t t[32];
      #pragma omp simd
      for (int j = 0; j < 32; ++j)
        t[j] = tg_f32_to_@T(src[i + j]);
      tg_stream_line(dst + i, t);
      if (pf)
        tg_prefetch((const char*)pf + i * (int64_t)sizeof(uint16_t));
    }
  }
#endif
  #pragma omp simd
  for (int64_t j = i; j < n; ++j)
    dst[j] = tg_f32_to_@T(src[j]);
}
)";
  replace_all(s, "@FN", fn);
  replace_all(s, "@PAD", std::string(fn.size(), ' '));
  replace_all(s, "@GUARD", guard);
  replace_all(s, "@T", t);
  return s;
}

// tg_put16_<t> for a 16-bit float type t (f16; bf16 outputs keep the chunks, emit/CViews.cpp): 16
// values converted as tg_stream_row_<t> does (its vector conversions, where `guard` holds),
// stored whole.
std::string put16_16(const std::string& t, const std::string& guard) {
  std::string s = R"(/* dst[0, 16) := @T of src[0, 16) (the values of tg_f32_to_@T); with nt (dst a multiple of 16
   bytes) streaming stores, the widest the address allows, and a prefetch of pf (unless NULL). */
static inline void tg_put16_@T(uint16_t* dst, const float* src, int nt, const void* pf) {
#if defined(__AVX512F__) || @GUARD
#if defined(__AVX512F__)
  const __m256i h = tg_cvt16_f32_@T(src);
#else
  const __m256i h = _mm256_insertf128_si256(_mm256_castsi128_si256(tg_cvt8_f32_@T(src)),
                                            tg_cvt8_f32_@T(src + 8), 1);
#endif
  if (!nt)
    _mm256_storeu_si256((__m256i*)dst, h);
  else if (((uintptr_t)dst & 31u) == 0)
    _mm256_stream_si256((__m256i*)dst, h);
  else {
    _mm_stream_si128((__m128i*)dst, _mm256_castsi256_si128(h));
    _mm_stream_si128((__m128i*)dst + 1, _mm256_extractf128_si256(h, 1));
  }
#else
  #pragma omp simd
  for (int j = 0; j < 16; ++j)
    dst[j] = tg_f32_to_@T(src[j]);
#endif
  if (nt && pf)
    tg_prefetch(pf);
}
)";
  replace_all(s, "@GUARD", guard);
  replace_all(s, "@T", t);
  return s;
}

// Fixed helpers, in the order they are printed (dependencies first).
// tg_exp_row_f32 and its vector bodies: tg_exp16_f32 (AVX-512) and tg_exp8_f32 (AVX2 + FMA) are
// tg_exp_f32's steps in one text, @V the vector type and @P the intrinsics' prefix; only the
// scaling by 2^n differs (vscalefps, or tg_scale2_f32's two products).
std::string exp_row_source() {
  auto body = [](const std::string& bits, const std::string& scaling) {
    std::string s = R"(static inline @V tg_exp@N_f32(@V x) {
  const @V shift = @Pset1_ps(0x1.8p23f);
  x = @Pmax_ps(@Pset1_ps(-104.0f), x); /* NaN passes both (the second operand) */
  x = @Pmin_ps(@Pset1_ps(89.0f), x);
  const @V t = @Pfmadd_ps(x, @Pset1_ps(0x1.715476p+0f), shift);
  const @V kn = @Psub_ps(t, shift);
  @V r = @Pfmadd_ps(kn, @Pset1_ps(-0x1.62e4p-1f), x);
  r = @Pfmadd_ps(kn, @Pset1_ps(-0x1.7f7d1cp-20f), r);
  @V q = @Pfmadd_ps(@Pset1_ps(0x1.6d10fcp-10f), r, @Pset1_ps(0x1.120b62p-7f));
  q = @Pfmadd_ps(q, r, @Pset1_ps(0x1.55551ap-5f));
  q = @Pfmadd_ps(q, r, @Pset1_ps(0x1.5554dep-3f));
  q = @Pfmadd_ps(q, r, @Pset1_ps(0x1p-1f));
  const @V p = @Padd_ps(@Pfmadd_ps(@Pmul_ps(r, r), q, r), @Pset1_ps(1.0f));
)" + scaling + "}\n";
    const std::string v = "__m" + bits, pre = "_mm" + bits + "_", n = bits == "512" ? "16" : "8";
    replace_all(s, "@V", v);
    replace_all(s, "@P", pre);
    replace_all(s, "@N", n);
    return s;
  };
  return R"(#if defined(__AVX512F__)
#include <immintrin.h>
/* e^x of 16 floats: tg_exp_f32's steps; vscalefps multiplies by 2^n (n = kn, an integer-valued
   float in [-150, 128]) with one rounding, subnormal results and overflow to +inf included. */
)" + body("512", "  return _mm512_scalef_ps(p, kn);\n") +
         R"(#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
/* e^x of 8 floats: tg_exp_f32's steps, its scaling by 2^n included (p * 2^(n >> 1) * 2^(n -
   (n >> 1)), the two factors built in the exponent field). */
)" + body("256", R"(  const __m256i n = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(shift));
  const __m256i n1 = _mm256_srai_epi32(n, 1), n2 = _mm256_sub_epi32(n, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 f1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 f2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, f1), f2);
)") + R"(#endif
/* v[0, n) := e^v[0, n), the values of tg_exp_f32 (16 at a time with vscalefps on AVX-512, 8 at
   a time on AVX2). */
static inline void tg_exp_row_f32(float* v, int64_t n) {
#if defined(__AVX512F__)
  const int64_t nv = n - n % 16;
  for (int64_t i = 0; i < nv; i += 16)
    _mm512_storeu_ps(v + i, tg_exp16_f32(_mm512_loadu_ps(v + i)));
#elif defined(__AVX2__) && defined(__FMA__)
  const int64_t nv = n - n % 8;
  for (int64_t i = 0; i < nv; i += 8)
    _mm256_storeu_ps(v + i, tg_exp8_f32(_mm256_loadu_ps(v + i)));
#else
  const int64_t nv = 0;
#endif
  #pragma omp simd
  for (int64_t j = nv; j < n; ++j)
    v[j] = tg_exp_f32(v[j]);
}
)";
}

const std::vector<Helper>& fixed_helpers() {
  static const std::vector<Helper> table = {
      {"tg_inb", {}, R"(/* 0 <= i < n, in one unsigned comparison (n >= 0). */
static inline int tg_inb(int64_t i, int64_t n) { return (uint64_t)i < (uint64_t)n; }
)"},
      {"tg_span_inb", {}, R"(/* [o, o + len) lies inside [0, n). */
static inline int tg_span_inb(int64_t o, int64_t len, int64_t n) {
  return o >= 0 && len <= n && o <= n - len;
}
)"},
      {"tg_bf16_to_f32", {}, R"(/* bf16 bits -> f32 (exact). */
static inline float tg_bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
)"},
      {"tg_f32_to_bf16", {}, R"(/* f32 -> bf16 bits, round to nearest even; NaN stays a (quiet) NaN. */
static inline uint16_t tg_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  const uint32_t nan = (u & 0x7fffffffu) > 0x7f800000u;
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return (uint16_t)(nan ? ((u >> 16) | 0x40u) : rounded);
}
)"},
      {"tg_round_bf16", {"tg_bf16_to_f32", "tg_f32_to_bf16"}, R"(/* f32 rounded to the nearest bf16 value, held as f32. */
static inline float tg_round_bf16(float f) { return tg_bf16_to_f32(tg_f32_to_bf16(f)); }
)"},
      // f16 <-> f32 in integer and float arithmetic, not through _Float16 casts: gcc 12 does not
      // vectorize those even with F16C (rmsnorm f16 was 3x slower with them).
      {"tg_f16_to_f32", {}, R"(/* f16 bits -> f32 (exact). */
static inline float tg_f16_to_f32(uint16_t h) {
  /* Branch-free (vectorizes): normal values rebias the exponent; inf/NaN rebias once more;
     zero/subnormal values are the 10-bit mantissa times 2^-24, converted exactly. */
  const uint32_t e = (uint32_t)h & 0x7c00u;
  uint32_t o = (((uint32_t)h & 0x7fffu) << 13) + ((127u - 15u) << 23);
  o += (0u - (uint32_t)(e == 0x7c00u)) & ((128u - 16u) << 23);
  float sub = (float)((uint32_t)h & 0x3ffu) * 0x1p-24f;
  uint32_t sub_bits;
  memcpy(&sub_bits, &sub, sizeof sub_bits);
  const uint32_t is_sub = 0u - (uint32_t)(e == 0);
  o = ((sub_bits & is_sub) | (o & ~is_sub)) | (((uint32_t)h & 0x8000u) << 16);
  float r;
  memcpy(&r, &o, sizeof r);
  return r;
}
)"},
      {"tg_f32_to_f16", {}, R"(/* f32 -> f16 bits, round to nearest even; overflow -> inf, NaN -> quiet NaN. */
static inline uint16_t tg_f32_to_f16(float f) {
  /* Branch-free (vectorizes): every case is computed and one is selected with masks.
     |f| >= 65536: inf, or a quiet NaN; below 2^-14: rounded to a multiple of 2^-24 by a float
     addition of 0.5 (round to nearest even in hardware); else the exponent is rebiased and
     the mantissa rounded to nearest even (a carry into the exponent is the right result,
     up to inf). */
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  const uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  const uint32_t special = u > 0x7f800000u ? 0x7e00u : 0x7c00u;
  float fa, fr;
  memcpy(&fa, &u, sizeof fa);
  fr = fa + 0.5f;
  uint32_t r;
  memcpy(&r, &fr, sizeof r);
  const uint32_t sub = r - 0x3f000000u;
  const uint32_t norm = (u + ((uint32_t)(15 - 127) << 23) + 0xfffu + ((u >> 13) & 1u)) >> 13;
  const uint32_t is_big = 0u - (uint32_t)(u >= ((127u + 16u) << 23));
  const uint32_t is_sub = 0u - (uint32_t)(u < (113u << 23));
  const uint32_t o = (special & is_big) | (sub & is_sub & ~is_big) | (norm & ~is_sub & ~is_big);
  return (uint16_t)(o | sign);
}
)"},
      {"tg_round_f16", {"tg_f16_to_f32", "tg_f32_to_f16"}, R"(/* f32 rounded to the nearest f16 value, held as f32. */
static inline float tg_round_f16(float f) { return tg_f16_to_f32(tg_f32_to_f16(f)); }
)"},
      // ---- f32 math (docs/c-backend.md "Math functions"). libm's expf & co are scalar calls
      // that gcc vectorizes only under -ffast-math; these are branch-free (selects only, no
      // tables), so a `#pragma omp simd` loop calling them vectorizes. Polynomials are
      // Chebyshev fits computed with mpmath by tests/unit/emit/math_coefficients.py (the fit
      // error of each is quoted); measured accuracy is checked by tests/unit/emit/MathTest.cpp.
      {"tg_fmaf", {}, R"(/* a * b + c: one rounding where the target has FMA; two otherwise (a libm fmaf call
   would be slow and would not vectorize). */
static inline float tg_fmaf(float a, float b, float c) {
#if defined(__FMA__) || defined(__AVX512F__) || defined(__ARM_FEATURE_FMA)
  return fmaf(a, b, c);
#else
  return a * b + c;
#endif
}
)"},
      {"tg_f32_bits", {}, R"(static inline uint32_t tg_f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static inline float tg_bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
/* c ? a : b with both a and b computed, as bit masks. A `?:` would let gcc sink the
   computation of a or b into a branch, and with -ftrapping-math (its default) it then
   refuses to if-convert the loop back ("control flow in loop": no vectorization). */
static inline float tg_select_f32(int c, float a, float b) {
  const uint32_t m = 0u - (uint32_t)(c != 0);
  return tg_bits_f32((tg_f32_bits(a) & m) | (tg_f32_bits(b) & ~m));
}
)"},
      // The OCP FP8 formats (ir/DType.h), matching ir/FloatBits.cpp bit for bit. Decoding is
      // branch-free (it sits in the gemm's tile loads); encoding is only used for fp8 outputs.
      {"tg_e4m3_to_f32", {"tg_f32_bits"}, R"(/* e4m3 bits -> f32 (exact): bias 7, S.1111.111 is NaN, no infinities. */
static inline float tg_e4m3_to_f32(uint8_t b) {
  const uint32_t e = (b >> 3) & 15u, m = b & 7u;
  float v = tg_select_f32(e != 0, tg_bits_f32(((e + 120u) << 23) | (m << 20)), (float)m * 0x1p-9f);
  v = tg_select_f32((b & 0x7fu) == 0x7fu, NAN, v);
  return tg_select_f32(b & 0x80u, -v, v);
}
)"},
      {"tg_e5m2_to_f32", {"tg_f16_to_f32"}, R"(/* e5m2 bits -> f32 (exact): the high byte of an f16. */
static inline float tg_e5m2_to_f32(uint8_t b) { return tg_f16_to_f32((uint16_t)((uint16_t)b << 8)); }
)"},
      {"tg_f32_to_fp8", {"tg_f32_bits"}, R"(/* f32 -> FP8 bits with `mbits` mantissa bits and exponent bias `bias`: round to nearest even,
   finite overflow and infinities saturate to max_code (PTX cvt.rn.satfinite), NaN -> NaN. */
static inline uint8_t tg_f32_to_fp8(float f, int mbits, int bias, uint32_t max_code) {
  const uint32_t sign = (tg_f32_bits(f) >> 24) & 0x80u;
  if (f != f)
    return (uint8_t)(sign | 0x7fu);
  const float a = fabsf(f);
  if (a > 0x1p100f)
    return (uint8_t)(sign | max_code);
  int x = 0;
  (void)frexpf(a, &x); /* a = r 2^x, r in [0.5, 1) */
  int e = x - 1 < 1 - bias ? 1 - bias : x - 1; /* subnormals share the smallest normal's quantum */
  float q = nearbyintf(ldexpf(a, mbits - e)); /* exact scaling, then round to nearest even */
  if (q >= (float)(2 << mbits)) {
    q *= 0.5f;
    ++e;
  }
  uint32_t code = q < (float)(1 << mbits)
                      ? (uint32_t)q
                      : ((uint32_t)(e + bias) << mbits) | ((uint32_t)q - (1u << mbits));
  code = code > max_code ? max_code : code;
  return (uint8_t)(sign | code);
}
)"},
      {"tg_f32_to_e4m3", {"tg_f32_to_fp8"}, R"(static inline uint8_t tg_f32_to_e4m3(float f) { return tg_f32_to_fp8(f, 3, 7, 0x7eu); }
)"},
      {"tg_f32_to_e5m2", {"tg_f32_to_fp8"}, R"(static inline uint8_t tg_f32_to_e5m2(float f) { return tg_f32_to_fp8(f, 2, 15, 0x7bu); }
)"},
      {"tg_round_e4m3", {"tg_e4m3_to_f32", "tg_f32_to_e4m3"}, R"(/* f32 rounded to the nearest e4m3 value (saturating), held as f32. */
static inline float tg_round_e4m3(float f) { return tg_e4m3_to_f32(tg_f32_to_e4m3(f)); }
)"},
      {"tg_round_e5m2", {"tg_e5m2_to_f32", "tg_f32_to_e5m2"}, R"(/* f32 rounded to the nearest e5m2 value (saturating), held as f32. */
static inline float tg_round_e5m2(float f) { return tg_e5m2_to_f32(tg_f32_to_e5m2(f)); }
)"},
      {"tg_scale2_f32", {"tg_f32_bits"}, R"(/* p * 2^n for p in [0.5, 2] and n in [-152, 130], as two power-of-two factors that are
   normal floats: p * 2^n1 is exact, the second product rounds once, so a subnormal result
   is correctly rounded (gradual underflow) and a too large one becomes +inf. n >> 1 (one
   instruction; n / 2 takes four) relies on >> of a negative int being arithmetic, as gcc and
   clang define it. */
static inline float tg_scale2_f32(float p, int32_t n) {
  const int32_t n1 = n >> 1, n2 = n - n1;
  return p * tg_bits_f32((uint32_t)(n1 + 127) << 23) * tg_bits_f32((uint32_t)(n2 + 127) << 23);
}
)"},
      {"tg_exp_f32", {"tg_fmaf", "tg_f32_bits", "tg_scale2_f32"}, R"(/* e^x, branch-free. x = n ln2 + r with |r| <= ln2/2 (ln2 split in two; n * ln2_hi is exact),
   e^r = 1 + r + r^2 q(r), q a degree-4 fit of (e^r - 1 - r) / r^2 (fit error 6.5e-8);
   n is read from the mantissa of x / ln2 + 1.5 * 2^23 (no float -> int conversion).
   Error <= 1.5 ulp (exhaustive: 1.08), subnormal results included; x > 88.73 -> +inf, x < -103.98 -> 0
   (-inf too), NaN -> NaN. */
static inline float tg_exp_f32(float x) {
  const float shift = 0x1.8p23f;
  x = tg_select_f32(x < -104.0f, -104.0f, x); /* NaN passes both clamps */
  x = tg_select_f32(x > 89.0f, 89.0f, x);
  const float t = tg_fmaf(x, 0x1.715476p+0f, shift);
  const float kn = t - shift;
  float r = tg_fmaf(kn, -0x1.62e4p-1f, x);
  r = tg_fmaf(kn, -0x1.7f7d1cp-20f, r);
  float q = tg_fmaf(0x1.6d10fcp-10f, r, 0x1.120b62p-7f);
  q = tg_fmaf(q, r, 0x1.55551ap-5f);
  q = tg_fmaf(q, r, 0x1.5554dep-3f);
  q = tg_fmaf(q, r, 0x1p-1f);
  const float p = tg_fmaf(r * r, q, r) + 1.0f;
  return tg_scale2_f32(p, (int32_t)(tg_f32_bits(t) - tg_f32_bits(shift)));
}
)"},
      // Chunks of exp (targets with c_exp_rows, emit/CExpRows.cpp). The AVX-512 body is
      // tg_exp_f32 step for step (same clamps, reduction and polynomial) with the scaling by 2^n
      // done by vscalefps, which rounds p * 2^n once as tg_scale2_f32's two exact factors do; the
      // AVX2 body does tg_scale2_f32's two products (1.28x gcc's vectorized tg_exp_f32 on a Zen 3
      // VM, bench/RESULTS.md 2026-12-07): the results are bit-identical (all 2^32 inputs checked once by hand;
      // tests/unit/emit/MathTest.cpp ExpRowMatchesScalarBits checks every 61st).
      {"tg_exp_row_f32", {"tg_exp_f32"}, exp_row_source()},
      {"tg_exp2_f32", {"tg_fmaf", "tg_f32_bits", "tg_scale2_f32"}, R"(/* 2^x, branch-free. x = n + r with |r| <= 1/2 (exact), 2^r = 1 + r p(r), p a degree-5 fit of
   (2^r - 1) / r (fit error 7.8e-9). Error <= 1.5 ulp (exhaustive: 1.15), subnormals included;
   x >= 128 -> +inf, x < -150 -> 0 (-inf too), NaN -> NaN. */
static inline float tg_exp2_f32(float x) {
  const float shift = 0x1.8p23f;
  x = tg_select_f32(x < -151.0f, -151.0f, x); /* NaN passes both clamps */
  x = tg_select_f32(x > 129.0f, 129.0f, x);
  const float t = x + shift;
  const float r = x - (t - shift);
  float p = tg_fmaf(0x1.44138ap-13f, r, 0x1.5f089p-10f);
  p = tg_fmaf(p, r, 0x1.3b2a54p-7f);
  p = tg_fmaf(p, r, 0x1.c6af6cp-5f);
  p = tg_fmaf(p, r, 0x1.ebfbep-3f);
  p = tg_fmaf(p, r, 0x1.62e43p-1f);
  return tg_scale2_f32(tg_fmaf(r, p, 1.0f), (int32_t)(tg_f32_bits(t) - tg_f32_bits(shift)));
}
)"},
      {"tg_log_parts_f32", {"tg_fmaf", "tg_f32_bits"}, R"(/* For finite x > 0: x = 2^e (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)); returns log(1 + f)
   as f - s (f - z R(z)), s = f / (2 + f), z = s^2 (log(1+f) = 2 atanh(s)); R a degree-3 fit
   of (2 atanh(s) - 2 s) / s^3 in z (fit error 1.2e-9). Subnormal x is scaled by 2^23 first. */
static inline float tg_log_parts_f32(float x, float* e) {
  const int sub = x < 0x1p-126f;
  const uint32_t u = tg_f32_bits(tg_select_f32(sub, x * 0x1p23f, x)) + (0x3f800000u - 0x3f3504f3u);
  *e = (float)((int32_t)(u >> 23) - 127 - 23 * sub);
  const float f = tg_bits_f32((u & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
  const float s = f / (2.0f + f), z = s * s;
  float rz = tg_fmaf(0x1.ddced8p-3f, z, 0x1.245c44p-2f);
  rz = tg_fmaf(rz, z, 0x1.9999ecp-2f);
  rz = tg_fmaf(rz, z, 0x1.555556p-1f);
  return f - s * (f - z * rz);
}
/* The value of log/log2 at x outside (0, inf) (and at inf), given the computed value y. */
static inline float tg_log_special_f32(float x, float y) {
  y = tg_select_f32(x == 0.0f, -INFINITY, y);
  y = tg_select_f32(x < 0.0f, NAN, y);
  return tg_select_f32((x == INFINITY) | (x != x), x, y);
}
)"},
      {"tg_log_f32", {"tg_log_parts_f32"}, R"(/* Natural log, branch-free: e ln2 + log(1 + f) (ln2 split in two; e * ln2_hi is exact).
   Error <= 1.5 ulp (exhaustive: 0.95); log(0) = -inf, log(x < 0) = NaN, log(inf) = inf. */
static inline float tg_log_f32(float x) {
  float e;
  const float l = tg_log_parts_f32(x, &e);
  return tg_log_special_f32(x, tg_fmaf(e, 0x1.62e4p-1f, tg_fmaf(e, 0x1.7f7d1cp-20f, l)));
}
)"},
      {"tg_log2_f32", {"tg_log_parts_f32"}, R"(/* Base-2 log, branch-free: e + log(1 + f) / ln2. Error <= 2 ulp (exhaustive: 1.87); log2(0) = -inf,
   log2(x < 0) = NaN, log2(inf) = inf. */
static inline float tg_log2_f32(float x) {
  float e;
  const float l = tg_log_parts_f32(x, &e);
  return tg_log_special_f32(x, e + tg_fmaf(l, 0x1.715476p+0f, l * 0x1.4ae0cp-26f));
}
)"},
      {"tg_tanh_f32", {"tg_fmaf", "tg_f32_bits", "tg_exp_f32"}, R"(/* tanh, branch-free: both forms are computed and one selected. |x| < 0.625:
   x + x^3 P(x^2), P a degree-5 fit of (tanh(a) - a) / a^3 in a^2 (fit error 1.6e-9); else
   sign(x) (1 - 2 / (e^(2|x|) + 1)), which is exactly +-1 from |x| ~ 9 (e^(2|x|) = inf
   included). Error <= 2 ulp (exhaustive: 1.33); tanh(-0) = -0, NaN -> NaN. */
static inline float tg_tanh_f32(float x) {
  const uint32_t sign = tg_f32_bits(x) & 0x80000000u;
  const float a = tg_bits_f32(tg_f32_bits(x) ^ sign), z = a * a;
  float p = tg_fmaf(0x1.2c83cp-9f, z, -0x1.116a16p-7f);
  p = tg_fmaf(p, z, 0x1.64a976p-6f);
  p = tg_fmaf(p, z, -0x1.ba08c4p-5f);
  p = tg_fmaf(p, z, 0x1.1110eap-3f);
  p = tg_fmaf(p, z, -0x1.555556p-2f);
  const float small = tg_fmaf(a * z, p, a);
  const float big = 1.0f - 2.0f / (tg_exp_f32(a + a) + 1.0f); /* NaN for a NaN */
  return tg_bits_f32(tg_f32_bits(tg_select_f32(a < 0.625f, small, big)) | sign);
}
)"},
      {"tg_erf_f32", {"tg_fmaf", "tg_f32_bits", "tg_exp_f32"}, R"(/* erf, branch-free: both forms are computed and one selected. |x| < 0.875: x E(x^2), E a
   degree-5 fit of erf(a) / a in a^2 (fit error 8.9e-9); else sign(x) (1 - e^(-x^2) G(1/|x|)),
   G a degree-9 fit of erfc(a) e^(a^2) in t = 1/a on [1/4, 1/0.875] (fit error 1.6e-8);
   |x| is clamped to 4, where erf is 1 in f32. Error <= 3 ulp (exhaustive: 2.49); erf(-0) = -0,
   NaN -> NaN. */
static inline float tg_erf_f32(float x) {
  const float z = x * x;
  float e = tg_fmaf(-0x1.45d2cp-11f, z, 0x1.49eebap-8f);
  e = tg_fmaf(e, z, -0x1.b6f9c4p-6f);
  e = tg_fmaf(e, z, 0x1.ce218ep-4f);
  e = tg_fmaf(e, z, -0x1.81270ep-2f);
  e = tg_fmaf(e, z, 0x1.20dd74p+0f);
  const float small = x * e;
  const uint32_t sign = tg_f32_bits(x) & 0x80000000u;
  float a = tg_bits_f32(tg_f32_bits(x) ^ sign);
  a = tg_select_f32(a < 4.0f, a, 4.0f);
  a = tg_select_f32(a < 0.875f, 0.875f, a); /* the large form is not used there: keep 1/a in the fit range */
  const float t = 1.0f / a;
  float g = tg_fmaf(0x1.59eaaap-7f, t, -0x1.0909fp-4f);
  g = tg_fmaf(g, t, 0x1.39d792p-3f);
  g = tg_fmaf(g, t, -0x1.14865ap-3f);
  g = tg_fmaf(g, t, -0x1.dd5ee8p-4f);
  g = tg_fmaf(g, t, 0x1.bbe456p-2f);
  g = tg_fmaf(g, t, -0x1.cde74ap-2f);
  g = tg_fmaf(g, t, 0x1.366ebp-5f);
  g = tg_fmaf(g, t, 0x1.1e776ap-1f);
  g = tg_fmaf(g, t, 0x1.040ccap-12f);
  const float big = tg_bits_f32(tg_f32_bits(1.0f - tg_exp_f32(-(a * a)) * g) | sign);
  return tg_select_f32((z < 0x1.88p-1f) | (x != x), small, big);
}
)"},
      // ---- Streaming (non-temporal) stores of whole rows of an output tile (docs/c-backend.md,
      // "Memory-bound kernels"). A row is converted in registers and written 64 bytes at a
      // time with the widest streaming store of the target, so it goes to memory without the
      // read for ownership of a cached store. The scalar conversions above stay the reference:
      // the same helpers convert each element, only the store instruction differs.
      {"tg_stream_line", {}, R"(#if defined(__SSE2__)
#include <immintrin.h>
#endif
/* Outputs of at least this many bytes are written with streaming stores: they do not fit the
   caches, so a consumer would not find them there anyway (docs/c-backend.md). */
static inline int tg_stream_ok(int64_t bytes) { return bytes >= ((int64_t)8 << 20); }
/* dst (64-byte aligned) := the 64 bytes at src, bypassing the caches where the target can. */
static inline void tg_stream_line(void* dst, const void* src) {
#if defined(__AVX512F__)
  _mm512_stream_si512((__m512i*)dst, _mm512_loadu_si512(src));
#elif defined(__AVX__)
  _mm256_stream_si256((__m256i*)dst, _mm256_loadu_si256((const __m256i*)src));
  _mm256_stream_si256((__m256i*)dst + 1, _mm256_loadu_si256((const __m256i*)src + 1));
#elif defined(__SSE2__)
  for (int q = 0; q < 4; ++q)
    _mm_stream_si128((__m128i*)dst + q, _mm_loadu_si128((const __m128i*)src + q));
#else
  memcpy(dst, src, 64);
#endif
}
/* Asks for the line at p in the caches (a hint: never faults, may do nothing). */
static inline void tg_prefetch(const void* p) {
#if defined(__SSE2__)
  _mm_prefetch((const char*)p, _MM_HINT_T0);
#elif defined(__GNUC__)
  __builtin_prefetch(p);
#else
  (void)p;
#endif
}
/* Orders this thread's streaming stores before what follows (the end of a block). */
static inline void tg_stream_fence(void) {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}
)"},
      {"tg_stream_ok", {"tg_stream_line"}, ""},
      // Inputs read in place (emit/CViews.cpp) are staged instead when they overlap an output.
      {"tg_overlap", {}, R"(/* Whether the bytes [a, a + na) and [b, b + nb) overlap. */
static inline int tg_overlap(const void* a, int64_t na, const void* b, int64_t nb) {
  const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return na > 0 && nb > 0 && x < y + (uintptr_t)nb && y < x + (uintptr_t)na;
}
)"},
      {"tg_stream_fence", {"tg_stream_line"}, ""},
      {"tg_load_row_f16", {"tg_f16_to_f32", "tg_stream_line"}, R"(/* dst[0, n) := f32 of the f16 bits src[0, n): vcvtph2ps (F16C) where the target has it,
   exact for every value like tg_f16_to_f32 (a signaling NaN arrives quiet: the same NaN once
   stored, since every store of a NaN gives the canonical quiet NaN). */
static inline void tg_load_row_f16(float* dst, const uint16_t* src, int64_t n) {
#if defined(__AVX512F__)
  const int64_t nv = n - n % 16;
  for (int64_t i = 0; i < nv; i += 16)
    _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(src + i))));
#elif defined(__F16C__)
  const int64_t nv = n - n % 8;
  for (int64_t i = 0; i < nv; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(src + i))));
#else
  const int64_t nv = 0;
#endif
  for (int64_t j = nv; j < n; ++j)
    dst[j] = tg_f16_to_f32(src[j]);
}
)"},
      {"tg_stream_row_f32", {"tg_stream_line"}, R"(/* dst[0, n) := src[0, n); streaming stores for the 64-byte lines inside dst when nt. With
   nt, pf (unless NULL) is the next block's input row: each line stored prefetches the line of
   pf at the same byte offset, so the next block's loads are in flight while this one's stores
   drain (docs/c-backend.md, "Memory-bound kernels"). */
static inline void tg_stream_row_f32(float* dst, const float* src, int64_t n, int nt,
                                     const void* pf) {
  int64_t i = 0;
  if (nt) {
    while (i < n && ((uintptr_t)(dst + i) & 63u) != 0) {
      dst[i] = src[i];
      ++i;
    }
    for (; i + 16 <= n; i += 16) {
      tg_stream_line(dst + i, src + i);
      if (pf)
        tg_prefetch((const char*)pf + i * (int64_t)sizeof(float));
    }
  }
  #pragma omp simd
  for (int64_t j = i; j < n; ++j)
    dst[j] = src[j];
}
)"},
      // The rounding of one register of 8 floats to 16-bit bits, shared by the streaming rows
      // (tg_cvt8_f32_*) and the intrinsic stores (tg_v16_put_*).
      {"tg_v8_bf16_bits", {}, R"(#if defined(__AVX2__)
#include <immintrin.h>
/* 8 floats -> their bf16 bits in the low halves of 32-bit lanes, as tg_f32_to_bf16 rounds. */
static inline __m256i tg_v8_bf16_bits(__m256 f) {
  const __m256i u = _mm256_castps_si256(f);
  const __m256i hi = _mm256_srli_epi32(u, 16);
  const __m256i half = _mm256_add_epi32(_mm256_set1_epi32(0x7fff), _mm256_and_si256(hi, _mm256_set1_epi32(1)));
  const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(u, half), 16);
  const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)); /* NaN lanes */
  return _mm256_blendv_epi8(r, _mm256_or_si256(hi, _mm256_set1_epi32(0x40)), nan);
}
#endif
)"},
      {"tg_v8_f16_bits", {}, R"(#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
/* 8 floats -> f16 bits, as tg_f32_to_f16 (NaN: the quiet NaN of its sign). */
static inline __m128i tg_v8_f16_bits(__m256 v) {
  const __m256 qnan = _mm256_or_ps(_mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN))),
                                   _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)));
  v = _mm256_blendv_ps(v, qnan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
#endif
)"},
      // bf16 rows: the rounding of tg_f32_to_bf16 in integer vector operations (AVX-512F: 16
      // lanes, AVX2: 8), bit for bit, NaN included: converted in registers and stored straight,
      // instead of through a 64-byte staging line per store (rmsnorm bf16, 1 thread: 7-10 % in
      // an A/B of the kernel alone, +3-4 % in bench/ab_cpu.sh, whose noise is about 5 %). Not
      // vcvtneps2bf16 (AVX512_BF16): it flushes subnormals to zero.
      {"tg_stream_row_bf16", {"tg_stream_line", "tg_f32_to_bf16", "tg_v8_bf16_bits"}, R"(#if defined(__AVX512F__)
/* 16 floats -> bf16 bits, the values of tg_f32_to_bf16. */
static inline __m256i tg_cvt16_f32_bf16(const float* src) {
  const __m512i u = _mm512_castps_si512(_mm512_loadu_ps(src));
  const __m512i hi = _mm512_srli_epi32(u, 16);
  const __m512i half = _mm512_add_epi32(_mm512_set1_epi32(0x7fff), _mm512_and_si512(hi, _mm512_set1_epi32(1)));
  const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, half), 16);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  return _mm512_cvtepi32_epi16(_mm512_mask_or_epi32(r, nan, hi, _mm512_set1_epi32(0x40)));
}
#elif defined(__AVX2__)
/* 8 floats -> bf16 bits, the values of tg_f32_to_bf16. */
static inline __m128i tg_cvt8_f32_bf16(const float* src) {
  const __m256i v = tg_v8_bf16_bits(_mm256_loadu_ps(src));
  return _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}
#endif
)" + stream_row_16("bf16", "defined(__AVX2__)")},
      // f16 rows: vcvtps2ph (F16C, AVX-512F) rounds to nearest even, gives inf on overflow and
      // f16 subnormals exactly as tg_f32_to_f16 does; NaN differs (it keeps the payload's top
      // bits), so NaN lanes are first replaced by the f32 quiet NaN of their sign, which
      // converts to tg_f32_to_f16's 0x7e00 | sign. The whole-vector part does not depend on nt.
      {"tg_stream_row_f16", {"tg_stream_line", "tg_f32_to_f16", "tg_v8_f16_bits"}, R"(#if defined(__AVX512F__)
/* 16 floats -> f16 bits, the values of tg_f32_to_f16 (NaN: the quiet NaN of its sign). */
static inline __m256i tg_cvt16_f32_f16(const float* src) {
  __m512 v = _mm512_loadu_ps(src);
  const __m512i qnan = _mm512_or_si512(_mm512_and_si512(_mm512_castps_si512(v),
                                                        _mm512_set1_epi32(INT32_MIN)),
                                       _mm512_set1_epi32(0x7fc00000));
  v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_castsi512_ps(qnan));
  return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}
#elif defined(__F16C__) && defined(__AVX__)
/* 8 floats -> f16 bits, the values of tg_f32_to_f16 (NaN: the quiet NaN of its sign). */
static inline __m128i tg_cvt8_f32_f16(const float* src) {
  return tg_v8_f16_bits(_mm256_loadu_ps(src));
}
#endif
)" + stream_row_16("f16", "defined(__F16C__) && defined(__AVX__)")},
      // tg_put16_<t>: 16 values of a fused store's sub-chunk (emit/CViews.cpp), whose f32
      // buffer gcc keeps in registers when the sub-chunk's loop and this store are inlined
      // together; with nt the destination is a multiple of 16 bytes (the caller's test).
      {"tg_put16_f32", {"tg_stream_line"}, R"(/* dst[0, 16) := src[0, 16); with nt (dst a multiple of 16 bytes) streaming stores, the widest
   the address allows, and a prefetch of pf (unless NULL) as tg_stream_row_f32 does. */
static inline void tg_put16_f32(float* dst, const float* src, int nt, const void* pf) {
#if defined(__AVX512F__)
  const __m512 v = _mm512_loadu_ps(src);
  if (!nt)
    _mm512_storeu_ps(dst, v);
  else if (((uintptr_t)dst & 63u) == 0)
    _mm512_stream_ps(dst, v);
  else { /* the lane index of vextractf32x4 is an immediate */
    _mm_stream_ps(dst, _mm512_castps512_ps128(v));
    _mm_stream_ps(dst + 4, _mm512_extractf32x4_ps(v, 1));
    _mm_stream_ps(dst + 8, _mm512_extractf32x4_ps(v, 2));
    _mm_stream_ps(dst + 12, _mm512_extractf32x4_ps(v, 3));
  }
#elif defined(__AVX__)
  const __m256 a = _mm256_loadu_ps(src), b = _mm256_loadu_ps(src + 8);
  if (!nt) {
    _mm256_storeu_ps(dst, a);
    _mm256_storeu_ps(dst + 8, b);
  } else if (((uintptr_t)dst & 31u) == 0) {
    _mm256_stream_ps(dst, a);
    _mm256_stream_ps(dst + 8, b);
  } else {
    _mm_stream_ps(dst, _mm256_castps256_ps128(a));
    _mm_stream_ps(dst + 4, _mm256_extractf128_ps(a, 1));
    _mm_stream_ps(dst + 8, _mm256_castps256_ps128(b));
    _mm_stream_ps(dst + 12, _mm256_extractf128_ps(b, 1));
  }
#else
  memcpy(dst, src, 16 * sizeof(float));
#endif
  if (nt && pf)
    tg_prefetch(pf);
}
)"},
      {"tg_put16_f16", {"tg_stream_row_f16"}, put16_16("f16", "defined(__F16C__) && defined(__AVX__)")},
      // Fused stores in intrinsics (emit/CVecStore.cpp): 8 values of a 16-bit view in f32, and
      // 16 values in two vectors stored as the 16-bit output's type. The emitted loop that calls
      // them is under the same guard. Conversions are the scalar helpers' bit for bit: bf16 -> f32
      // and f16 -> f32 are exact; f32 -> bf16 rounds as tg_f32_to_bf16 (tg_v8_bf16_bits's
      // steps), f32 -> f16 as tg_f32_to_f16 (NaN: the quiet NaN of its sign, then vcvtps2ph).
      {"tg_v8_load_bf16", {}, R"(#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
/* 8 bf16 values at p, as floats (exact: the bits move to the high half). */
static inline __m256 tg_v8_load_bf16(const uint16_t* p) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)p)), 16));
}
#endif
)"},
      {"tg_v8_load_f16", {}, R"(#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
/* 8 f16 values at p, as floats (vcvtph2ps: exact, as tg_f16_to_f32). */
static inline __m256 tg_v8_load_f16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)p));
}
#endif
)"},
      {"tg_v16_store", {"tg_stream_line"}, R"(#if defined(__AVX2__) && defined(__F16C__)
/* dst[0, 16) := the 16 16-bit values of h; with nt a streaming store (dst 32-byte aligned) and
   a prefetch of pf unless NULL. */
static inline void tg_v16_store(uint16_t* dst, __m256i h, int nt, const void* pf) {
  if (nt) {
    _mm256_stream_si256((__m256i*)dst, h);
    if (pf)
      tg_prefetch(pf);
  } else {
    _mm256_storeu_si256((__m256i*)dst, h);
  }
}
#endif
)"},
      {"tg_v16_put_bf16", {"tg_v16_store", "tg_v8_bf16_bits"}, R"(#if defined(__AVX2__) && defined(__F16C__)
/* dst[0, 16) := bf16 of (a, b), stored by tg_v16_store. */
static inline void tg_v16_put_bf16(uint16_t* dst, __m256 a, __m256 b, int nt, const void* pf) {
  /* packus interleaves the 128-bit halves; the permute puts a's 8 before b's */
  const __m256i h = _mm256_permute4x64_epi64(_mm256_packus_epi32(tg_v8_bf16_bits(a), tg_v8_bf16_bits(b)), 0xD8);
  tg_v16_store(dst, h, nt, pf);
}
#endif
)"},
      {"tg_v16_put_f16", {"tg_v16_store", "tg_v8_f16_bits"}, R"(#if defined(__AVX2__) && defined(__F16C__)
/* dst[0, 16) := f16 of (a, b), stored by tg_v16_store. */
static inline void tg_v16_put_f16(uint16_t* dst, __m256 a, __m256 b, int nt, const void* pf) {
  const __m256i h = _mm256_insertf128_si256(_mm256_castsi128_si256(tg_v8_f16_bits(a)), tg_v8_f16_bits(b), 1);
  tg_v16_store(dst, h, nt, pf);
}
#endif
)"},
  };
  return table;
}

const char* c_type_of_suffix(const std::string& t) {
  if (t == "f32") return "float";
  if (t == "f64") return "double";
  if (t == "i8") return "int8_t";
  if (t == "i32") return "int32_t";
  if (t == "i64") return "int64_t";
  if (t == "u32") return "uint32_t";
  if (t == "u64") return "uint64_t";
  return nullptr;
}

// Typed helpers: tg_<op>_<type>.
std::string typed_helper(const std::string& name) {
  auto us = name.rfind('_');
  TG_ASSERT(us != std::string::npos && name.rfind("tg_", 0) == 0, "unknown C helper " + name);
  const std::string op = name.substr(3, us - 3), suffix = name.substr(us + 1);
  if (op.rfind("bitcast_", 0) == 0) { // tg_bitcast_<to>_<from>: the bits of a <from> as a <to>
    const char *to = c_type_of_suffix(op.substr(8)), *from = c_type_of_suffix(suffix);
    TG_ASSERT(to && from, "unknown C bitcast helper " + name);
    return "/* bitcast<" + op.substr(8) + ">(" + suffix + "): the same bits (memcpy: no aliasing). */\n" +
           "static inline " + to + " " + name + "(" + from + " v) {\n  " + to +
           " r;\n  memcpy(&r, &v, sizeof r);\n  return r;\n}\n";
  }
  const char* ty = c_type_of_suffix(suffix);
  TG_ASSERT(ty != nullptr, "unknown C helper type in " + name);
  const std::string T = ty;
  if (suffix[0] == 'u') {
    std::string text = unsigned_helper_text("static inline ", name, op, T, suffix == "u32" ? 32 : 64);
    TG_ASSERT(!text.empty(), "unknown C helper " + name);
    return text;
  }
  const std::string sig = "static inline " + T + " " + name;
  if (op == "min")
    return "/* min(a, b) = a < b ? a : b (a NaN b gives b). */\n" + sig + "(" + T + " a, " + T +
           " b) { return a < b ? a : b; }\n";
  if (op == "max")
    return "/* max(a, b) = a > b ? a : b (a NaN b gives b). */\n" + sig + "(" + T + " a, " + T +
           " b) { return a > b ? a : b; }\n";
  if (op == "fma") {
    if (T == "float" || T == "double") {
      const std::string f = T == "float" ? "fmaf" : "fma";
      return "/* a * b + c, fused where the target has FMA (one rounding), else two roundings. */\n" +
             sig + "(" + T + " a, " + T + " b, " + T + " c) {\n#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)\n  return " +
             f + "(a, b, c);\n#else\n  return a * b + c;\n#endif\n}\n";
    }
    return sig + "(" + T + " a, " + T + " b, " + T + " c) { return a * b + c; }\n";
  }
  if (op == "abs")
    return sig + "(" + T + " a) { return a < 0 ? -a : a; }\n";
  if (op == "shl" || op == "shr") {
    const bool shl = op == "shl";
    const int bits = suffix == "i8" ? 8 : suffix == "i32" ? 32 : 64;
    return std::string(shl ? "/* a << n wrapping; 0 for n outside [0, width). */\n"
                           : "/* a >> n, arithmetic; the sign fill for n outside [0, width). */\n") +
           shift_helper_text("static inline ", name, shl ? ir::BinaryOp::Shl : ir::BinaryOp::Shr, T,
                             bits == 64 ? "uint64_t" : "uint32_t", "", bits);
  }
  if (op == "cdiv")
    return "/* ceil(a / b) for b > 0, without the overflow of (a + b - 1) / b. */\n" + sig + "(" +
           T + " a, " + T + " b) {\n  " + T + " q = a / b;\n  return q + ((a % b != 0) & ((a < 0) == (b < 0)));\n}\n";
  if (op == "floordiv")
    return "/* floor(a / b) (C's / truncates toward zero). */\n" + sig + "(" + T + " a, " + T +
           " b) {\n  " + T + " q = a / b;\n  return q - ((a % b != 0) & ((a < 0) != (b < 0)));\n}\n";
  if (op == "floormod")
    return "/* a - b * floor(a / b): the sign of b. */\n" + sig + "(" + T + " a, " + T +
           " b) {\n  " + T + " r = a % b;\n  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}\n";
  // Every divisor (CFamilyPrinter's divisor_needs_guard; docs/spec.md "Operators and typing"):
  // C's / and % trap (SIGFPE on x86) for b == 0 and for INT_MIN / -1.
  const std::string U = "u" + T; // uint64_t, ...
  const std::string neg = "(" + T + ")(0u - (" + U + ")a)"; // -a, wrapping at INT_MIN
  if (op == "floordiv_any")
    return "/* floor(a / b) for any b: a / 0 = 0; INT_MIN / -1 wraps to INT_MIN. */\n" + sig + "(" +
           T + " a, " + T + " b) {\n  if (b == 0)\n    return 0;\n  if (b == -1)\n    return " + neg +
           ";\n  " + T + " q = a / b;\n  return q - ((a % b != 0) & ((a < 0) != (b < 0)));\n}\n";
  if (op == "floormod_any")
    return "/* a - b * floor(a / b) for any b: a % 0 = a; a % -1 = 0. */\n" + sig + "(" + T + " a, " +
           T + " b) {\n  if (b == 0)\n    return a;\n  if (b == -1)\n    return 0;\n  " + T +
           " r = a % b;\n  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}\n";
  if (op == "cdiv_any")
    return "/* ceil(a / b) for any b: cdiv(a, 0) = 0; INT_MIN / -1 wraps to INT_MIN. */\n" + sig +
           "(" + T + " a, " + T + " b) {\n  if (b == 0)\n    return 0;\n  if (b == -1)\n    return " +
           neg + ";\n  " + T + " q = a / b;\n  return q + ((a % b != 0) & ((a < 0) == (b < 0)));\n}\n";
  internal_error("unknown C helper " + name);
}

} // namespace

std::string c_helper_source(const std::set<std::string>& used) {
  std::set<std::string> want = used;
  // Close over dependencies (the table lists them; typed helpers have none). A dependency
  // comes earlier in the table, so one backward pass reaches the transitive closure.
  const auto& table = fixed_helpers();
  for (auto h = table.rbegin(); h != table.rend(); ++h)
    if (want.count(h->name))
      for (const char* d : h->deps)
        want.insert(d);
  std::string out;
  std::set<std::string> done;
  for (const auto& h : fixed_helpers())
    if (want.count(h.name)) {
      if (!h.text.empty()) // "": defined in the text of its dependency
        out += h.text + "\n";
      done.insert(h.name);
    }
  for (const auto& name : want) // sorted: deterministic
    if (!done.count(name))
      out += typed_helper(name) + "\n";
  return out;
}

} // namespace tilegen::emit
