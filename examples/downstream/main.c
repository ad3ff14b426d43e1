/* downstream_demo: calls the tilegen-generated library `mykernels` (gemm, softmax, and the
 * README tutorial's scale_rows) on random
 * data at ragged sizes, checks every result against a float64 reference computed here, and
 * prints which variant ran and why (the query API). Exit status 0 iff everything matched.
 * TILEGEN_CPU_DISABLE=avx512f (or avx2) makes it exercise the other variants. */
#include "mykernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static float frand(void) { /* uniform in [-1, 1) */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static int failures = 0;

static void report(const char* what, const tg_selection* sel) {
  printf("%-28s -> %s\n%-28s    %s\n", what, sel->variant, "", sel->reason);
}

static void expect_status(const char* what, tg_status got, tg_status want) {
  if (got != want) {
    printf("FAIL %s: status %d (%s), expected %d\n", what, (int)got, tg_status_string(got),
           (int)want);
    ++failures;
  }
}

/* max |got - ref| / (|ref| + 1) over n values must stay below tol. */
static void expect_close(const char* what, const double* ref, const float* got, size_t n,
                         double tol) {
  double worst = 0;
  size_t at = 0;
  for (size_t i = 0; i < n; ++i) {
    double err = fabs((double)got[i] - ref[i]) / (fabs(ref[i]) + 1.0);
    if (!(err <= worst)) { /* also catches NaN */
      worst = err;
      at = i;
    }
  }
  printf("%-28s max rel err %.3g %s\n", what, worst, worst <= tol ? "ok" : "MISMATCH");
  if (!(worst <= tol)) {
    printf("  at %zu: got %.9g, expected %.9g\n", at, (double)got[at], ref[at]);
    ++failures;
  }
}

static void check_gemm(int64_t M, int64_t N, int64_t K) {
  size_t na = (size_t)(M * K), nb = (size_t)(K * N), nc = (size_t)(M * N);
  float* A = malloc(sizeof(float) * (na ? na : 1));
  float* B = malloc(sizeof(float) * (nb ? nb : 1));
  float* C = malloc(sizeof(float) * (nc ? nc : 1));
  double* R = calloc(nc ? nc : 1, sizeof(double));
  for (size_t i = 0; i < na; ++i) A[i] = frand();
  for (size_t i = 0; i < nb; ++i) B[i] = frand();
  for (size_t i = 0; i < nc; ++i) C[i] = NAN; /* every element must be written */
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < N; ++j)
        R[i * N + j] += (double)A[i * K + k] * (double)B[k * N + j];

  char what[64];
  snprintf(what, sizeof what, "gemm_f32 %lldx%lldx%lld", (long long)M, (long long)N,
           (long long)K);
  tg_selection sel;
  expect_status("gemm_f32_query", mykernels_gemm_f32_query(NULL, A, B, C, M, N, K, &sel), TG_OK);
  report(what, &sel);
  expect_status(what, mykernels_gemm_f32(NULL, A, B, C, M, N, K), TG_OK);
  expect_close(what, R, C, nc, 1e-5 * (double)(K > 0 ? K : 1));
  free(A), free(B), free(C), free(R);
}

static void softmax_ref(const float* X, double* R, int64_t M, int64_t N) {
  for (int64_t i = 0; i < M; ++i) {
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < N; ++j) m = fmax(m, X[i * N + j]);
    for (int64_t j = 0; j < N; ++j) s += exp(X[i * N + j] - m);
    for (int64_t j = 0; j < N; ++j) R[i * N + j] = exp(X[i * N + j] - m) / s;
  }
}

static void check_softmax(int64_t M, int64_t N) {
  size_t n = (size_t)(M * N);
  float* X = malloc(sizeof(float) * n);
  float* Y = malloc(sizeof(float) * n);
  double* R = malloc(sizeof(double) * n);
  for (size_t i = 0; i < n; ++i) X[i] = 8.0f * frand();
  for (size_t i = 0; i < n; ++i) Y[i] = NAN;
  softmax_ref(X, R, M, N);
  char what[64];
  snprintf(what, sizeof what, "softmax_f32 %lldx%lld", (long long)M, (long long)N);
  tg_selection sel;
  expect_status("softmax_f32_query", mykernels_softmax_f32_query(NULL, X, Y, M, N, &sel), TG_OK);
  report(what, &sel);
  expect_status(what, mykernels_softmax_f32(NULL, X, Y, M, N), TG_OK);
  expect_close(what, R, Y, n, 1e-5);

  /* bf16: inputs rounded to bf16, reference on the rounded inputs, output rounded to bf16. */
  tg_bf16* Xh = malloc(sizeof(tg_bf16) * n);
  tg_bf16* Yh = malloc(sizeof(tg_bf16) * n);
  for (size_t i = 0; i < n; ++i) {
    Xh[i] = tg_float_to_bf16(X[i]);
    X[i] = tg_bf16_to_float(Xh[i]);
  }
  softmax_ref(X, R, M, N);
  snprintf(what, sizeof what, "softmax_bf16 %lldx%lld", (long long)M, (long long)N);
  expect_status(what, mykernels_softmax_bf16(NULL, Xh, Yh, M, N), TG_OK);
  for (size_t i = 0; i < n; ++i) Y[i] = tg_bf16_to_float(Yh[i]);
  expect_close(what, R, Y, n, 1.0 / 128); /* bf16 has 8 significant bits */
  free(X), free(Y), free(R), free(Xh), free(Yh);
}

/* The README tutorial's kernel: Y[i, j] = X[i, j] * s[i], exactly as the README calls it. */
static void check_scale_rows(int64_t M, int64_t N) {
  size_t n = (size_t)(M * N);
  float* X = malloc(sizeof(float) * n + 1);
  float* s = malloc(sizeof(float) * (size_t)M + 1);
  float* Y = malloc(sizeof(float) * n + 1);
  double* R = malloc(sizeof(double) * n + 1);
  for (size_t i = 0; i < n; ++i) X[i] = frand();
  for (int64_t i = 0; i < M; ++i) s[i] = frand();
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) R[i * N + j] = (double)X[i * N + j] * s[i];

  tg_launch launch = {sizeof launch, /*device=*/-1, /*stream=*/NULL, /*num_threads=*/0};
  tg_status st = mykernels_scale_rows_f32(&launch, X, s, Y, M, N);
  if (st != TG_OK) fprintf(stderr, "scale_rows: %s\n", tg_status_string(st));
  tg_selection sel;
  mykernels_scale_rows_f32_query(&launch, X, s, Y, M, N, &sel);
  printf("%s: %s\n", sel.variant, sel.reason);

  char what[64];
  snprintf(what, sizeof what, "scale_rows_f32 %lldx%lld", (long long)M, (long long)N);
  expect_status(what, st, TG_OK);
  expect_close(what, R, Y, n, 1e-6);
  free(X), free(s), free(Y), free(R);
}

int main(void) {
  /* Ragged sizes: none is a multiple of the tile sizes. */
  check_gemm(37, 53, 29);
  check_gemm(130, 67, 201);
  check_gemm(1, 1, 1);
  check_gemm(64, 0, 16); /* empty output */
  check_softmax(7, 1000);
  check_softmax(5, 2500); /* several column blocks per row */
  check_scale_rows(13, 1031);

  /* Bad arguments are reported, never crash. */
  float x[4] = {0};
  expect_status("gemm NULL A", mykernels_gemm_f32(NULL, NULL, x, x, 2, 2, 1), TG_ERR_NULL_POINTER);
  expect_status("gemm M < 0", mykernels_gemm_f32(NULL, x, x, x, -1, 2, 2), TG_ERR_INVALID_DIM);
  tg_launch cpu;
  memset(&cpu, 0, sizeof cpu);
  cpu.device = -1;
  cpu.num_threads = 2;
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4];
  double r[4] = {4, 5, 10, 11};
  expect_status("gemm 2x2x3 on 2 threads", mykernels_gemm_f32(&cpu, a, b, c, 2, 2, 3), TG_OK);
  expect_close("gemm 2x2x3 on 2 threads", r, c, 4, 1e-6);

  printf("%s (%d failure%s)\n", failures ? "FAILED" : "all checks passed", failures,
         failures == 1 ? "" : "s");
  return failures ? 1 : 0;
}
