/* CPU benchmark of the C backend against its baselines, in one run:
 *   - sgemm 1024^3 (tilegen gemm_f32) vs OpenBLAS cblas_sgemm, same thread count;
 *   - softmax, rmsnorm and layernorm_bias (tests/kernels/layernorm_bias.yaml, a spec without
 *     C tile pins) in f32, f16 and bf16, at 4096x4096 and 16384x4096, on 1 thread and on
 *     `threads`: GB/s (bytes read once + bytes written) vs a plain memcpy of the same bytes
 *     with the same threads, and the ratio.
 * Every timing is the median of `reps` runs after a warm-up; each result is checked against
 * the baseline or a float64 reference before it is timed, so a wrong kernel cannot "win".
 * Usage: bench_cpu [threads=2] [reps=15] */
#include "tg_bench.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

extern void openblas_set_num_threads(int);

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

typedef void (*bench_fn)(void* ctx);

/* Median wall time of fn over reps runs, after two warm-ups. */
static double median_time(bench_fn fn, void* ctx, int reps) {
  double* t = malloc(sizeof(double) * (size_t)reps);
  fn(ctx);
  fn(ctx);
  for (int r = 0; r < reps; ++r) {
    double t0 = now_s();
    fn(ctx);
    t[r] = now_s() - t0;
  }
  qsort(t, (size_t)reps, sizeof(double), cmp_double);
  double m = t[reps / 2];
  free(t);
  return m;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static float frand(void) { /* uniform in [-1, 1), never all zeros */
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (float)((double)(rng_state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}
static uint16_t f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
static float bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static int g_threads = 2;
static tg_launch g_launch;

/* ---- GEMM ---- */
typedef struct {
  int64_t m, n, k;
  float *a, *b, *c;
} gemm_ctx;
static void run_tilegen_gemm(void* p) {
  gemm_ctx* g = p;
  tg_status s = tg_bench_gemm_f32(&g_launch, g->a, g->b, g->c, g->m, g->n, g->k);
  if (s != TG_OK) {
    fprintf(stderr, "tilegen gemm failed: %s\n", tg_status_string(s));
    exit(1);
  }
}
static void run_openblas_gemm(void* p) {
  gemm_ctx* g = p;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)g->m, (int)g->n, (int)g->k, 1.0f,
              g->a, (int)g->k, g->b, (int)g->n, 0.0f, g->c, (int)g->n);
}

/* ---- row kernels ---- */
enum { F32, F16, BF16 };
static const char* const dt_names[] = {"f32", "f16", "bf16"};
enum { SOFTMAX, RMSNORM, LAYERNORM };
static const char* const kernel_names[] = {"softmax", "rmsnorm", "layernorm_bias"};
typedef struct {
  int64_t m, n;
  int kernel, dt;
  void *x, *y, *w, *b;
} row_ctx;
static void row_fail(const char* k, tg_status s) {
  fprintf(stderr, "%s failed: %s\n", k, tg_status_string(s));
  exit(1);
}
static void run_row(void* p) {
  row_ctx* r = p;
  tg_status s = TG_OK;
#define TG_ROW_CALL(TY, CT, EPS)                                                                   \
  switch (r->kernel) {                                                                             \
  case SOFTMAX: s = tg_bench_softmax_##TY(&g_launch, (const CT*)r->x, (CT*)r->y, r->m, r->n); break; \
  case RMSNORM:                                                                                    \
    s = tg_bench_rmsnorm_##TY(&g_launch, (const CT*)r->x, (const CT*)r->w, (CT*)r->y, r->m, r->n,  \
                              EPS);                                                                \
    break;                                                                                         \
  default:                                                                                         \
    s = tg_bench_layernorm_bias_##TY(&g_launch, (const CT*)r->x, (const CT*)r->w,                 \
                                     (const CT*)r->b, (CT*)r->y, r->m, r->n, EPS);                \
  }
  if (r->dt == F32) {
    TG_ROW_CALL(f32, float, 1e-5f)
  } else if (r->dt == F16) {
    TG_ROW_CALL(f16, tg_f16, 1e-5f)
  } else {
    TG_ROW_CALL(bf16, tg_bf16, 1e-5f)
  }
#undef TG_ROW_CALL
  if (s != TG_OK)
    row_fail(kernel_names[r->kernel], s);
}
typedef struct {
  void* dst;
  const void* src;
  size_t bytes;
} copy_ctx;
static void run_memcpy(void* p) { /* the same thread count as the kernels */
  copy_ctx* c = p;
#pragma omp parallel num_threads(g_threads)
  {
    int t = omp_get_thread_num(), nt = omp_get_num_threads();
    size_t chunk = (c->bytes / (size_t)nt + 63) & ~(size_t)63;
    size_t lo = chunk * (size_t)t, hi = lo + chunk > c->bytes ? c->bytes : lo + chunk;
    if (lo < hi)
      memcpy((char*)c->dst + lo, (const char*)c->src + lo, hi - lo);
  }
}

static size_t dt_size(int dt) { return dt == F32 ? 4 : 2; }
static double get_value(int dt, const void* buf, size_t i) {
  if (dt == F32)
    return ((const float*)buf)[i];
  if (dt == F16)
    return (double)((const _Float16*)buf)[i];
  return bf16_to_f32(((const uint16_t*)buf)[i]);
}
static void set_value(int dt, void* buf, size_t i, float v) {
  if (dt == F32)
    ((float*)buf)[i] = v;
  else if (dt == F16)
    ((_Float16*)buf)[i] = (_Float16)v;
  else
    ((uint16_t*)buf)[i] = f32_to_bf16(v);
}

/* float64 reference check of one row kernel result (a sample of rows): the largest error
 * relative to |want| + a floor (1e-3 / N for softmax's small values, plus 2^-14 in f16;
 * 1e-3 otherwise). */
static double check_rows(const row_ctx* r) {
  double worst = 0;
  for (int64_t i = 0; i < r->m; i += r->m / 16 + 1) {
    double mx = -INFINITY, sum = 0, ss = 0, s1 = 0, var = 0;
    for (int64_t j = 0; j < r->n; ++j) {
      double v = get_value(r->dt, r->x, (size_t)(i * r->n + j));
      mx = v > mx ? v : mx;
      ss += v * v;
      s1 += v;
    }
    const double mean = s1 / (double)r->n;
    for (int64_t j = 0; j < r->n; ++j) {
      double v = get_value(r->dt, r->x, (size_t)(i * r->n + j));
      sum += exp(v - mx);
      var += (v - mean) * (v - mean);
    }
    const double inv_rms = 1.0 / sqrt(ss / (double)r->n + 1e-5);
    const double inv_std = 1.0 / sqrt(var / (double)r->n + 1e-5);
    for (int64_t j = 0; j < r->n; ++j) {
      double x = get_value(r->dt, r->x, (size_t)(i * r->n + j));
      double w = get_value(r->dt, r->w, (size_t)j), b = get_value(r->dt, r->b, (size_t)j);
      double want = r->kernel == SOFTMAX   ? exp(x - mx) / sum
                    : r->kernel == RMSNORM ? x * inv_rms * w
                                           : (x - mean) * inv_std * w + b;
      double got = get_value(r->dt, r->y, (size_t)(i * r->n + j));
      /* softmax values fall below f16's smallest normal (2^-14), where f16 keeps an absolute
       * 2^-25, not a relative precision: the floor covers that range */
      double floor = r->kernel != SOFTMAX ? 1e-3 : 1e-3 / (double)r->n + (r->dt == F16 ? 0x1p-14 : 0);
      double err = fabs(got - want) / (fabs(want) + floor);
      worst = err > worst ? err : worst;
    }
  }
  return worst;
}

/* One row of the table: kernel x dtype x shape at g_threads, and memcpy of the same bytes
 * (read + write) with the same threads, interleaved in one run. */
static int bench_row(int kernel, int dt, int64_t m, int64_t n, int reps, void* x, void* y,
                     void* w, void* b, void* copy_dst) {
  const size_t bytes = (size_t)(m * n) * dt_size(dt);
  row_ctx r = {m, n, kernel, dt, x, y, w, b};
  run_row(&r);
  const double err = check_rows(&r);
  const double tol = dt == F32 ? 1e-4 : 1.6e-2;
  const int ok = err < tol;
  copy_ctx c = {copy_dst, x, bytes};
  const double tk = median_time(run_row, &r, reps);
  const double tm = median_time(run_memcpy, &c, reps);
  const double moved = 2.0 * (double)bytes; /* read + write */
  printf("| %s %s %lldx%lld, %d thread%s | %.1f GB/s | memcpy %.1f GB/s | %.2fx | "
         "max rel err %.1e %s |\n",
         kernel_names[kernel], dt_names[dt], (long long)m, (long long)n, g_threads,
         g_threads == 1 ? "" : "s", moved / tk * 1e-9, moved / tm * 1e-9, tm / tk, err,
         ok ? "ok" : "FAIL");
  fflush(stdout);
  return !ok;
}

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 2;
  g_threads = threads;
  int reps = argc > 2 ? atoi(argv[2]) : 15;
  memset(&g_launch, 0, sizeof g_launch);
  g_launch.struct_size = sizeof g_launch;
  g_launch.device = -1;
  g_launch.num_threads = g_threads;
  openblas_set_num_threads(g_threads);
  omp_set_num_threads(g_threads);
  int failures = 0;

  printf("| benchmark | tilegen | baseline | ratio | check |\n|---|---|---|---|---|\n");

  /* GEMM 1024^3 f32 */
  {
    const int64_t n = 1024;
    gemm_ctx g = {n, n, n, malloc(4 * n * n), malloc(4 * n * n), malloc(4 * n * n)};
    float* ref = malloc(4 * n * n);
    for (int64_t i = 0; i < n * n; ++i) {
      g.a[i] = frand();
      g.b[i] = frand();
    }
    gemm_ctx o = g;
    o.c = ref;
    run_tilegen_gemm(&g);
    run_openblas_gemm(&o);
    double maxdiff = 0;
    for (int64_t i = 0; i < n * n; ++i)
      maxdiff = fmax(maxdiff, fabs((double)g.c[i] - ref[i]));
    int ok = maxdiff < 1e-3;
    failures += !ok;
    tg_selection sel;
    tg_bench_gemm_f32_query(&g_launch, g.a, g.b, g.c, n, n, n, &sel);
    double tt = median_time(run_tilegen_gemm, &g, reps);
    double tb = median_time(run_openblas_gemm, &o, reps);
    double flops = 2.0 * (double)n * n * n;
    printf("| sgemm 1024^3, %d threads (%s) | %.1f GFLOP/s | OpenBLAS %.1f GFLOP/s | %.2fx | "
           "max |diff| %.1e %s |\n",
           g_threads, sel.target, flops / tt * 1e-9, flops / tb * 1e-9, tb / tt, maxdiff,
           ok ? "ok" : "FAIL");
    free(g.a), free(g.b), free(g.c), free(ref);
  }

  /* Row kernels: every dtype, 4096 x 4096 and 16384 x 4096, on 1 thread and on `threads`
   * (the memcpy baseline moves the same bytes with the same threads, in the same run). */
  {
    const int64_t shapes[2][2] = {{4096, 4096}, {16384, 4096}};
    const size_t most = (size_t)(16384 * 4096) * 4;
    void *x = malloc(most), *y = malloc(most), *cd = malloc(most);
    void *w = malloc(4096 * 4), *b = malloc(4096 * 4);
    memset(y, 0, most);
    memset(cd, 1, most);
    int tcounts[2] = {1, threads}, ntc = threads == 1 ? 1 : 2;
    for (int dt = F32; dt <= BF16; ++dt) {
      const int64_t n = 4096, mmax = 16384;
      for (int64_t i = 0; i < mmax * n; ++i)
        set_value(dt, x, (size_t)i, frand() * 4.0f);
      for (int64_t j = 0; j < n; ++j) {
        set_value(dt, w, (size_t)j, 0.5f + frand());
        set_value(dt, b, (size_t)j, frand());
      }
      for (int ti = 0; ti < ntc; ++ti) {
        g_threads = tcounts[ti];
        g_launch.num_threads = g_threads;
        omp_set_num_threads(g_threads);
        for (int s = 0; s < 2; ++s)
          for (int kernel = SOFTMAX; kernel <= LAYERNORM; ++kernel)
            failures += bench_row(kernel, dt, shapes[s][0], shapes[s][1], reps, x, y, w, b, cd);
      }
    }
    free(x), free(y), free(cd), free(w), free(b);
  }
  return failures ? 1 : 0;
}
