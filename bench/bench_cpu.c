/* CPU benchmark of the C backend against its baselines, in one run:
 *   - sgemm 1024^3 (tilegen gemm_f32) vs OpenBLAS cblas_sgemm, same thread count;
 *   - softmax and rmsnorm (f32, bf16) GB/s vs a plain memcpy of the same bytes, same threads.
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
typedef struct {
  int64_t m, n;
  int bf16;
  void *x, *y, *w;
} row_ctx;
static void run_softmax(void* p) {
  row_ctx* r = p;
  tg_status s = r->bf16 ? tg_bench_softmax_bf16(&g_launch, r->x, r->y, r->m, r->n)
                        : tg_bench_softmax_f32(&g_launch, r->x, r->y, r->m, r->n);
  if (s != TG_OK) {
    fprintf(stderr, "softmax failed: %s\n", tg_status_string(s));
    exit(1);
  }
}
static void run_rmsnorm(void* p) {
  row_ctx* r = p;
  tg_status s = r->bf16 ? tg_bench_rmsnorm_bf16(&g_launch, r->x, r->w, r->y, r->m, r->n, 1e-5)
                        : tg_bench_rmsnorm_f32(&g_launch, r->x, r->w, r->y, r->m, r->n, 1e-5f);
  if (s != TG_OK) {
    fprintf(stderr, "rmsnorm failed: %s\n", tg_status_string(s));
    exit(1);
  }
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

static double row_value(const row_ctx* r, const void* buf, size_t i) {
  return r->bf16 ? bf16_to_f32(((const uint16_t*)buf)[i]) : ((const float*)buf)[i];
}

/* float64 reference check of one row kernel result (a sample of rows). */
static double check_rows(const row_ctx* r, int softmax) {
  double worst = 0;
  for (int64_t i = 0; i < r->m; i += r->m / 16 + 1) {
    double mx = -INFINITY, sum = 0, ss = 0;
    for (int64_t j = 0; j < r->n; ++j) {
      double v = row_value(r, r->x, (size_t)(i * r->n + j));
      mx = v > mx ? v : mx;
      ss += v * v;
    }
    for (int64_t j = 0; j < r->n; ++j)
      sum += exp(row_value(r, r->x, (size_t)(i * r->n + j)) - mx);
    double inv_rms = 1.0 / sqrt(ss / (double)r->n + 1e-5);
    for (int64_t j = 0; j < r->n; ++j) {
      double x = row_value(r, r->x, (size_t)(i * r->n + j));
      double want = softmax ? exp(x - mx) / sum : x * inv_rms * row_value(r, r->w, (size_t)j);
      double got = row_value(r, r->y, (size_t)(i * r->n + j));
      double err = fabs(got - want) / (fabs(want) + (softmax ? 1e-3 / (double)r->n : 1e-3));
      worst = err > worst ? err : worst;
    }
  }
  return worst;
}

int main(int argc, char** argv) {
  g_threads = argc > 1 ? atoi(argv[1]) : 2;
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

  /* softmax / rmsnorm 4096 x 4096 (f32: 64 MiB in + 64 MiB out) */
  for (int kernel = 0; kernel < 2; ++kernel) {
    for (int bf = 0; bf < 2; ++bf) {
      const int64_t m = 4096, n = 4096;
      size_t es = bf ? 2 : 4, bytes = (size_t)(m * n) * es;
      row_ctx r = {m, n, bf, malloc(bytes), malloc(bytes), malloc((size_t)n * es)};
      for (int64_t i = 0; i < m * n; ++i) {
        float v = frand() * 4.0f;
        if (bf)
          ((uint16_t*)r.x)[i] = f32_to_bf16(v);
        else
          ((float*)r.x)[i] = v;
      }
      for (int64_t j = 0; j < n; ++j) {
        float v = 0.5f + frand();
        if (bf)
          ((uint16_t*)r.w)[j] = f32_to_bf16(v);
        else
          ((float*)r.w)[j] = v;
      }
      bench_fn fn = kernel == 0 ? run_softmax : run_rmsnorm;
      fn(&r);
      double err = check_rows(&r, kernel == 0);
      double tol = bf ? 1.6e-2 : 1e-4;
      int ok = err < tol;
      failures += !ok;
      copy_ctx c = {malloc(bytes), r.x, bytes};
      memset(c.dst, 1, bytes);
      double tk = median_time(fn, &r, reps);
      double tm = median_time(run_memcpy, &c, reps);
      double moved = 2.0 * (double)bytes; /* read + write */
      printf("| %s %s %lldx%lld, %d threads | %.1f GB/s | memcpy %.1f GB/s | %.2fx | "
             "max rel err %.1e %s |\n",
             kernel == 0 ? "softmax" : "rmsnorm", bf ? "bf16" : "f32", (long long)m,
             (long long)n, g_threads, moved / tk * 1e-9, moved / tm * 1e-9, tm / tk, err,
             ok ? "ok" : "FAIL");
      free(r.x), free(r.y), free(r.w), free(c.dst);
    }
  }
  return failures ? 1 : 0;
}
