/* The Arm test driver (tests/arm/run.sh, docs/c-backend.md "Arm"): every shipped kernel x type
 * of library `armk` (the shipped kernels, add_tile_kernels' default targets for aarch64: c c_neon
 * c_sve) on ragged shapes against a float64 reference computed here from the same rounded
 * inputs, plus `armmix` (rmsnorm for c, c_sve and the x86 c_avx512: a library of both
 * architectures). Plain C (no C++ or GoogleTest for the target needed). Tolerances as
 * tests/kernels/Numeric.h: rel = max|got - ref| / max|ref| <= 3 u_T + 4 u_f32 sqrt(L) for a
 * reduction of length L; gemm_fp8 per element against its summation-order-free bound.
 *
 *   arm_numeric <target>   every call must select <target> (the query API says which variant a
 *                          call runs); armmix must select c_sve where <target> is c_sve, else c.
 * Prints one line per check; exits 0 when all hold, 1 otherwise. */
#include "armk.h"
#include "armmix.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { F32, F16, BF16, E4M3, E5M2 } dt;
static const char* const dt_name[] = {"f32", "f16", "bf16", "e4m3", "e5m2"};

static const char* g_expect = "";
static int g_fail = 0, g_checks = 0;
static double g_worst = 0; /* largest error / tolerance over the checks */

static double unit_roundoff(dt t) {
  return t == F32 ? ldexp(1.0, -24) : t == F16 ? ldexp(1.0, -11) : ldexp(1.0, -8);
}

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static double uniform(double lo, double hi) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return lo + (hi - lo) * (double)(g_rng >> 11) * ldexp(1.0, -53);
}

static double quant(dt t, double x) {
  switch (t) {
  case F32: return (float)x;
  case F16: return tg_f16_to_float(tg_float_to_f16((float)x));
  case BF16: return tg_bf16_to_float(tg_float_to_bf16((float)x));
  case E4M3: return tg_e4m3_to_float(tg_float_to_e4m3((float)x));
  case E5M2: return tg_e5m2_to_float(tg_float_to_e5m2((float)x));
  }
  return x;
}

static size_t dt_size(dt t) { return t == F32 ? 4 : t == E4M3 || t == E5M2 ? 1 : 2; }

/* n values in [lo, hi], rounded to t (v) and packed in t's layout (the returned buffer). */
static void* make(dt t, double* v, size_t n, double lo, double hi) {
  unsigned char* buf = malloc(n * dt_size(t) + 1);
  for (size_t i = 0; i < n; ++i) {
    v[i] = quant(t, uniform(lo, hi));
    float f = (float)v[i];
    switch (t) {
    case F32: memcpy(buf + 4 * i, &f, 4); break;
    case F16: ((tg_f16*)buf)[i] = tg_float_to_f16(f); break;
    case BF16: ((tg_bf16*)buf)[i] = tg_float_to_bf16(f); break;
    case E4M3: buf[i] = tg_float_to_e4m3(f); break;
    case E5M2: buf[i] = tg_float_to_e5m2(f); break;
    }
  }
  return buf;
}

static void unpack(dt t, const void* buf, double* out, size_t n) {
  for (size_t i = 0; i < n; ++i)
    out[i] = t == F32 ? ((const float*)buf)[i]
             : t == F16 ? tg_f16_to_float(((const tg_f16*)buf)[i])
                        : tg_bf16_to_float(((const tg_bf16*)buf)[i]);
}

static void* out_buf(dt t, size_t n) {
  void* p = malloc(n * dt_size(t) + 1);
  memset(p, 0xff, n * dt_size(t)); /* NaN in every type: unwritten elements fail */
  return p;
}

static void check_target(const char* what, tg_status s, const tg_selection* sel,
                         const char* expect) {
  static int logged = 0;
  if (!logged++) /* the reason sentence of the first selection, for the log */
    printf("[arm] %s selection: %s\n", what, sel->reason);
  if (s != TG_OK || strcmp(sel->target, expect) != 0) {
    printf("[arm] FAIL %s: selected '%s', expected %s (status %d: %s)\n", what, sel->target,
           expect, (int)s, sel->reason);
    ++g_fail;
  }
}

/* rel = max |got - ref| / max |ref| against 3 u_T + 4 u_f32 sqrt(L). */
static void check(const char* kernel, dt t, const char* shape, const char* target,
                  const double* got, const double* ref, size_t n, double L) {
  double err = 0, scale = 0;
  size_t nonfinite = 0;
  for (size_t i = 0; i < n; ++i) {
    scale = fmax(scale, fabs(ref[i]));
    if (!isfinite(got[i]))
      ++nonfinite;
    else
      err = fmax(err, fabs(got[i] - ref[i]));
  }
  double rel = err / (scale > 0 ? scale : 1);
  double tol = 3 * unit_roundoff(t) + 4 * ldexp(1.0, -24) * sqrt(L < 1 ? 1 : L);
  int ok = nonfinite == 0 && rel <= tol;
  g_worst = fmax(g_worst, nonfinite ? INFINITY : rel / tol);
  printf("[arm] %-20s %-5s %-22s %-7s max_err %.3e rel %.3e tol %.3e %s\n", kernel, dt_name[t],
         shape, target, err, rel, tol, ok ? "ok" : "FAIL");
  g_fail += !ok;
  ++g_checks;
}

/* ---- gemm, gemm_bias_gelu ---------------------------------------------------------------- */
static void test_gemm(dt t, int gelu, int64_t M, int64_t N, int64_t K) {
  double *a = malloc(sizeof(double) * M * K), *b = malloc(sizeof(double) * K * N),
         *bias = malloc(sizeof(double) * N), *ref = malloc(sizeof(double) * M * N),
         *got = malloc(sizeof(double) * M * N);
  void* A = make(t, a, M * K, -1, 1);
  void* B = make(t, b, K * N, -1, 1);
  void* Bias = make(t, bias, N, -1, 1);
  void* C = out_buf(t, M * N);
  tg_selection sel;
  tg_status s, q;
#define GEMM_CALL(T)                                                                          \
  gelu ? (q = armk_gemm_bias_gelu_##T##_query(NULL, A, B, Bias, C, M, N, K, &sel),           \
          armk_gemm_bias_gelu_##T(NULL, A, B, Bias, C, M, N, K))                             \
       : (q = armk_gemm_##T##_query(NULL, A, B, C, M, N, K, &sel),                           \
          armk_gemm_##T(NULL, A, B, C, M, N, K))
  s = t == F32 ? GEMM_CALL(f32) : t == F16 ? GEMM_CALL(f16) : GEMM_CALL(bf16);
#undef GEMM_CALL
  const char* kernel = gelu ? "gemm_bias_gelu" : "gemm";
  check_target(kernel, q, &sel, g_expect);
  if (s != TG_OK) {
    printf("[arm] FAIL %s %s: status %d\n", kernel, dt_name[t], (int)s);
    ++g_fail;
  }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += a[i * K + k] * b[k * N + j];
      if (gelu) {
        acc += bias[j];
        acc = 0.5 * acc * (1 + erf(acc / sqrt(2.0)));
      }
      ref[i * N + j] = acc;
    }
  unpack(t, C, got, M * N);
  char shape[64];
  snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)M, (long long)N, (long long)K);
  check(kernel, t, shape, sel.target, got, ref, M * N, (double)K);
  free(a), free(b), free(bias), free(ref), free(got), free(A), free(B), free(Bias), free(C);
}

/* ---- softmax, rmsnorm (library armk, or armmix for rmsnorm) ---------------------------------- */
static void test_rows(dt t, int rms, int mix, int64_t M, int64_t N) {
  double *x = malloc(sizeof(double) * M * N), *w = malloc(sizeof(double) * N),
         *ref = malloc(sizeof(double) * M * N), *got = malloc(sizeof(double) * M * N);
  void* X = make(t, x, M * N, rms ? -2 : -4, rms ? 2 : 4);
  void* W = make(t, w, N, 0.5, 1.5);
  void* Y = out_buf(t, M * N);
  const float eps = 1e-5f;
  tg_selection sel;
  tg_status s, q;
#define ROWS_CALL(T)                                                                          \
  mix   ? (q = armmix_rmsnorm_##T##_query(NULL, X, W, Y, M, N, eps, &sel),                   \
           armmix_rmsnorm_##T(NULL, X, W, Y, M, N, eps))                                     \
  : rms ? (q = armk_rmsnorm_##T##_query(NULL, X, W, Y, M, N, eps, &sel),                     \
           armk_rmsnorm_##T(NULL, X, W, Y, M, N, eps))                                       \
        : (q = armk_softmax_##T##_query(NULL, X, Y, M, N, &sel), armk_softmax_##T(NULL, X, Y, M, N))
  s = t == F32 ? ROWS_CALL(f32) : t == F16 ? ROWS_CALL(f16) : ROWS_CALL(bf16);
#undef ROWS_CALL
  const char* kernel = mix ? "armmix:rmsnorm" : rms ? "rmsnorm" : "softmax";
  const char* expect = !mix || strcmp(g_expect, "c_sve") == 0 ? g_expect : "c";
  check_target(kernel, q, &sel, expect);
  if (s != TG_OK) {
    printf("[arm] FAIL %s %s: status %d\n", kernel, dt_name[t], (int)s);
    ++g_fail;
  }
  for (int64_t i = 0; i < M; ++i) {
    const double* r = x + i * N;
    double* o = ref + i * N;
    if (rms) {
      double ss = 0;
      for (int64_t j = 0; j < N; ++j)
        ss += r[j] * r[j];
      double inv = 1 / sqrt(ss / N + (double)eps);
      for (int64_t j = 0; j < N; ++j)
        o[j] = r[j] * inv * w[j];
    } else {
      double m = -INFINITY, sum = 0;
      for (int64_t j = 0; j < N; ++j)
        m = fmax(m, r[j]);
      for (int64_t j = 0; j < N; ++j)
        sum += o[j] = exp(r[j] - m);
      for (int64_t j = 0; j < N; ++j)
        o[j] /= sum;
    }
  }
  unpack(t, Y, got, M * N);
  char shape[64];
  snprintf(shape, sizeof shape, "%lldx%lld", (long long)M, (long long)N);
  check(kernel, t, shape, sel.target, got, ref, M * N, (double)N);
  free(x), free(w), free(ref), free(got), free(X), free(W), free(Y);
}

/* ---- flash_attention_fwd -------------------------------------------------------------------- */
static void test_attention(dt t, int64_t B, int64_t H, int64_t S, int64_t D, int causal) {
  size_t n = (size_t)(B * H * S * D);
  double *q = malloc(sizeof(double) * n), *k = malloc(sizeof(double) * n),
         *v = malloc(sizeof(double) * n), *ref = malloc(sizeof(double) * n),
         *got = malloc(sizeof(double) * n), *p = malloc(sizeof(double) * S);
  void* Q = make(t, q, n, -1, 1);
  void* K = make(t, k, n, -1, 1);
  void* V = make(t, v, n, -1, 1);
  void* O = out_buf(t, n);
  const float scale = (float)(1 / sqrt((double)D));
  tg_selection sel;
  tg_status s, qs;
#define ATT_CALL(T)                                                                            \
  (qs = armk_flash_attention_fwd_##T##_query(NULL, Q, K, V, O, B, H, S, D, scale, causal, &sel), \
   armk_flash_attention_fwd_##T(NULL, Q, K, V, O, B, H, S, D, scale, causal))
  s = t == F32 ? ATT_CALL(f32) : t == F16 ? ATT_CALL(f16) : ATT_CALL(bf16);
#undef ATT_CALL
  check_target("flash_attention_fwd", qs, &sel, g_expect);
  if (s != TG_OK) {
    printf("[arm] FAIL flash_attention_fwd %s: status %d\n", dt_name[t], (int)s);
    ++g_fail;
  }
  for (int64_t bh = 0; bh < B * H; ++bh)
    for (int64_t i = 0; i < S; ++i) {
      const double* qi = q + (bh * S + i) * D;
      int64_t last = causal ? i : S - 1;
      double m = -INFINITY, sum = 0;
      for (int64_t j = 0; j <= last; ++j) {
        const double* kj = k + (bh * S + j) * D;
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += qi[d] * kj[d];
        p[j] = dot * scale;
        m = fmax(m, p[j]);
      }
      for (int64_t j = 0; j <= last; ++j)
        sum += p[j] = exp(p[j] - m);
      for (int64_t d = 0; d < D; ++d) {
        double acc = 0;
        for (int64_t j = 0; j <= last; ++j)
          acc += p[j] * v[(bh * S + j) * D + d];
        ref[(bh * S + i) * D + d] = acc / sum;
      }
    }
  unpack(t, O, got, n);
  char shape[64];
  snprintf(shape, sizeof shape, "%lldx%lldx%lldx%lld c%d", (long long)B, (long long)H,
           (long long)S, (long long)D, causal);
  check("flash_attention_fwd", t, shape, sel.target, got, ref, n, (double)(S + D));
  free(q), free(k), free(v), free(ref), free(got), free(p), free(Q), free(K), free(V), free(O);
}

/* ---- gemm_fp8: per element, |got - ref| <= u_bf16 |ref| + (1 + u_bf16) g S (Numeric.h) -------- */
static void test_fp8(dt t, int64_t M, int64_t N, int64_t K) {
  double *a = malloc(sizeof(double) * M * K), *b = malloc(sizeof(double) * N * K),
         *got = malloc(sizeof(double) * M * N);
  void* A = make(t, a, M * K, -2, 2);
  void* B = make(t, b, N * K, -2, 2);
  void* C = out_buf(BF16, M * N);
  const float sa = 0.75f, sb = 1.25f;
  tg_selection sel;
  tg_status q = t == E4M3 ? armk_gemm_fp8_e4m3_query(NULL, A, B, C, M, N, K, sa, sb, &sel)
                          : armk_gemm_fp8_e5m2_query(NULL, A, B, C, M, N, K, sa, sb, &sel);
  tg_status s = t == E4M3 ? armk_gemm_fp8_e4m3(NULL, A, B, C, M, N, K, sa, sb)
                          : armk_gemm_fp8_e5m2(NULL, A, B, C, M, N, K, sa, sb);
  check_target("gemm_fp8", q, &sel, g_expect);
  if (s != TG_OK) {
    printf("[arm] FAIL gemm_fp8 %s: status %d\n", dt_name[t], (int)s);
    ++g_fail;
  }
  unpack(BF16, C, got, M * N);
  const double u32 = ldexp(1.0, -24), u16 = ldexp(1.0, -8), nn = (double)(K + 2);
  const double g = nn * u32 / (1 - nn * u32);
  double worst = 0, err = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        acc += a[i * K + k] * b[j * K + k];
        mag += fabs(a[i * K + k] * b[j * K + k]);
      }
      double ref = acc * sa * sb, abs_ref = mag * fabs((double)sa * sb);
      double bound = u16 * fabs(ref) + (1 + u16) * g * abs_ref + ldexp(1.0, -134);
      double e = fabs(got[i * N + j] - ref);
      double r = !isfinite(got[i * N + j]) ? INFINITY : e == 0 ? 0 : e / bound;
      worst = fmax(worst, r);
      err = fmax(err, e);
    }
  int ok = worst <= 1;
  g_worst = fmax(g_worst, worst);
  char shape[64];
  snprintf(shape, sizeof shape, "%lldx%lldx%lld", (long long)M, (long long)N, (long long)K);
  printf("[arm] %-20s %-5s %-22s %-7s max_err %.3e bound ratio %.3f %s\n", "gemm_fp8",
         dt_name[t], shape, sel.target, err, worst, ok ? "ok" : "FAIL");
  g_fail += !ok;
  ++g_checks;
  free(a), free(b), free(got), free(A), free(B), free(C);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: arm_numeric <expected target: c, c_neon or c_sve>\n");
    return 2;
  }
  g_expect = argv[1];
  printf("[arm] CPU features: asimd %d fphp %d asimdhp %d sve %d sve2 %d; x86's avx2 %d\n",
         tg_cpu_has("asimd"), tg_cpu_has("fphp"), tg_cpu_has("asimdhp"), tg_cpu_has("sve"),
         tg_cpu_has("sve2"), tg_cpu_has("avx2"));
  if (tg_cpu_has("avx2") || tg_cpu_has("avx512f")) {
    printf("[arm] FAIL: an x86 feature is reported present\n");
    ++g_fail;
  }
  for (dt t = F32; t <= BF16; ++t) {
    test_gemm(t, 0, 37, 45, 29);
    test_gemm(t, 1, 33, 70, 19);
    test_rows(t, 0, 0, 5, 333);
    test_rows(t, 1, 0, 6, 517);
    test_rows(t, 1, 1, 3, 131);
    for (int causal = 0; causal <= 1; ++causal) {
      test_attention(t, 1, 2, 37, 64, causal);
      test_attention(t, 1, 1, 21, 128, causal);
    }
  }
  test_fp8(E4M3, 29, 41, 67);
  test_fp8(E5M2, 29, 41, 67);
  printf("[arm] %d checks, %d failures, largest error/tolerance %.3f (expected target %s)\n",
         g_checks, g_fail, g_worst, g_expect);
  return g_fail ? 1 : 0;
}
