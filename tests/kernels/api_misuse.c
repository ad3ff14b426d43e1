/* C API misuse against a library generated from the shipped kernels (tgk_all: targets c,
 * c_avx2, c_avx512): every public function of every kernel and type gets the same battery of
 * bad calls -- malformed launch handles (struct_size, device, num_threads, stream), negative and
 * huge dims (products overflowing 64 bits, value-set dims off their set), NULL and misaligned
 * tensors, flags other than 0/1, NaN/inf/negative scalars, calls whose written tensors are empty
 * while other dims are huge, aliasing inputs and outputs, two bad arguments at once (the first
 * check wins) -- each through the function and its _query twin (which must agree), each in a
 * child process with a time limit. A case passes when the call returns the documented status
 * (docs/dispatch.md) without crashing, hanging or exiting. Exit status: 0 if every case passed.
 *
 *   kernel_api_misuse [-v] [SUBSTRING]   (-v lists every case; SUBSTRING: only cases naming it)
 */
#define _POSIX_C_SOURCE 200809L
#include "tgk_all.h"

#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_T 4 /* tensors */
#define MAX_D 4 /* dims */
#define CASE_SECONDS 20 /* a case that runs longer hangs (the bad calls take microseconds) */

/* One call, spelled generically: tensors, dims, scalars and the flag in spec order. */
typedef struct call {
  const tg_launch* launch;
  void* t[MAX_T];
  int64_t d[MAX_D];
  float s[2];
  int flag;
  int query;      /* call the _query twin instead */
  int query_null; /* ... with out = NULL */
} call;

typedef tg_status (*adapter)(const call*);

/* Adapters: the public functions and their _query twins behind one signature. */
#define QUERY_OR_CALL(fn, ...)                                                                     \
  do {                                                                                             \
    if (c->query) {                                                                                \
      tg_selection sel;                                                                            \
      return fn##_query(__VA_ARGS__, c->query_null ? NULL : &sel);                                 \
    }                                                                                              \
    return fn(__VA_ARGS__);                                                                        \
  } while (0)
#define GEMM(T, CT)                                                                                \
  static tg_status gemm_##T(const call* c) {                                                       \
    QUERY_OR_CALL(tgk_all_gemm_##T, c->launch, c->t[0], c->t[1], (CT*)c->t[2], c->d[0], c->d[1],  \
                  c->d[2]);                                                                        \
  }                                                                                                \
  static tg_status gelu_##T(const call* c) {                                                       \
    QUERY_OR_CALL(tgk_all_gemm_bias_gelu_##T, c->launch, c->t[0], c->t[1], c->t[2], (CT*)c->t[3], \
                  c->d[0], c->d[1], c->d[2]);                                                      \
  }                                                                                                \
  static tg_status softmax_##T(const call* c) {                                                    \
    QUERY_OR_CALL(tgk_all_softmax_##T, c->launch, c->t[0], (CT*)c->t[1], c->d[0], c->d[1]);       \
  }                                                                                                \
  static tg_status rmsnorm_##T(const call* c) {                                                    \
    QUERY_OR_CALL(tgk_all_rmsnorm_##T, c->launch, c->t[0], c->t[1], (CT*)c->t[2], c->d[0],        \
                  c->d[1], c->s[0]);                                                               \
  }                                                                                                \
  static tg_status flash_##T(const call* c) {                                                      \
    QUERY_OR_CALL(tgk_all_flash_attention_fwd_##T, c->launch, c->t[0], c->t[1], c->t[2],           \
                  (CT*)c->t[3], c->d[0], c->d[1], c->d[2], c->d[3], c->s[0], c->flag);             \
  }
GEMM(f32, float)
GEMM(f16, tg_f16)
GEMM(bf16, tg_bf16)
static tg_status fp8_e4m3(const call* c) {
  QUERY_OR_CALL(tgk_all_gemm_fp8_e4m3, c->launch, c->t[0], c->t[1], (tg_bf16*)c->t[2], c->d[0],
                c->d[1], c->d[2], c->s[0], c->s[1]);
}
static tg_status fp8_e5m2(const call* c) {
  QUERY_OR_CALL(tgk_all_gemm_fp8_e5m2, c->launch, c->t[0], c->t[1], (tg_bf16*)c->t[2], c->d[0],
                c->d[1], c->d[2], c->s[0], c->s[1]);
}

/* What a function takes: tensors (shapes as index lists into the dims, element bytes, written
 * or not), dims (a valid small value each; the value-set dim and its values), scalars (a valid
 * value each, and whether the spec's require limits them), the flag. */
enum { GEMM_K, GELU_K, SOFTMAX_K, RMSNORM_K, FLASH_K, FP8_K };
typedef struct kernel {
  const char* name;
  adapter fn;
  int kind;
  int nt, nd, ns, has_flag;
  int rank[MAX_T];
  int shape[MAX_T][4]; /* dim indices */
  size_t bytes[MAX_T];
  int written[MAX_T];
  int64_t base[MAX_D];
  int value_dim; /* index of the value-set dim, or -1 */
  float scalar[2];
  int required_scalars; /* scalars with a `require` */
  const char* dim_names[MAX_D];
} kernel;

static kernel make(const char* name, adapter fn, int kind, size_t eb) {
  kernel k;
  memset(&k, 0, sizeof k);
  k.name = name;
  k.fn = fn;
  k.kind = kind;
  k.value_dim = -1;
  static const int mk[2] = {0, 2}, kn[2] = {2, 1}, mn[2] = {0, 1}, nk[2] = {1, 2};
  const int* sh[MAX_T] = {0};
  int rk[MAX_T] = {0};
  switch (kind) {
  case GEMM_K:
  case FP8_K:
    k.nt = 3, k.nd = 3;
    sh[0] = mk, sh[1] = kind == FP8_K ? nk : kn, sh[2] = mn;
    rk[0] = rk[1] = rk[2] = 2;
    k.written[2] = 1;
    k.base[0] = 7, k.base[1] = 9, k.base[2] = 5;
    k.dim_names[0] = "M", k.dim_names[1] = "N", k.dim_names[2] = "K";
    for (int i = 0; i < 3; ++i)
      k.bytes[i] = eb;
    if (kind == FP8_K) {
      k.bytes[2] = 2; /* C is bf16 */
      k.ns = 2;
      k.scalar[0] = 0.5f, k.scalar[1] = 2.0f;
    }
    break;
  case GELU_K:
    k.nt = 4, k.nd = 3;
    static const int n1[1] = {1};
    sh[0] = mk, sh[1] = kn, sh[2] = n1, sh[3] = mn;
    rk[0] = rk[1] = rk[3] = 2, rk[2] = 1;
    k.written[3] = 1;
    k.base[0] = 7, k.base[1] = 9, k.base[2] = 5;
    k.dim_names[0] = "M", k.dim_names[1] = "N", k.dim_names[2] = "K";
    for (int i = 0; i < 4; ++i)
      k.bytes[i] = eb;
    break;
  case SOFTMAX_K:
  case RMSNORM_K: {
    static const int n1b[1] = {1};
    k.nd = 2;
    k.base[0] = 5, k.base[1] = 37;
    k.dim_names[0] = "M", k.dim_names[1] = "N";
    if (kind == SOFTMAX_K) {
      k.nt = 2;
      sh[0] = sh[1] = mn;
      rk[0] = rk[1] = 2;
      k.written[1] = 1;
    } else {
      k.nt = 3;
      sh[0] = mn, sh[1] = n1b, sh[2] = mn;
      rk[0] = rk[2] = 2, rk[1] = 1;
      k.written[2] = 1;
      k.ns = 1, k.scalar[0] = 1e-5f, k.required_scalars = 1;
    }
    for (int i = 0; i < k.nt; ++i)
      k.bytes[i] = eb;
    break;
  }
  case FLASH_K: {
    static const int bhsd[4] = {0, 1, 2, 3};
    k.nt = 4, k.nd = 4, k.ns = 1, k.has_flag = 1;
    for (int i = 0; i < 4; ++i)
      sh[i] = bhsd, rk[i] = 4, k.bytes[i] = eb;
    k.written[3] = 1;
    k.base[0] = 1, k.base[1] = 2, k.base[2] = 9, k.base[3] = 64;
    k.value_dim = 3;
    k.dim_names[0] = "B", k.dim_names[1] = "H", k.dim_names[2] = "S", k.dim_names[3] = "D";
    k.scalar[0] = 0.125f, k.required_scalars = 1;
    break;
  }
  }
  for (int i = 0; i < k.nt; ++i) {
    k.rank[i] = rk[i];
    for (int j = 0; j < rk[i]; ++j)
      k.shape[i][j] = sh[i][j];
  }
  return k;
}

static int64_t elements(const kernel* k, int t, const int64_t* d) {
  int64_t n = 1;
  for (int j = 0; j < k->rank[t]; ++j)
    n *= d[k->shape[t][j]];
  return n;
}

/* ---- cases --------------------------------------------------------------------------------- */

typedef struct mutation {
  char what[160];
  tg_status want;
  tg_launch launch;
  int use_launch;   /* 0: NULL launch */
  int64_t d[MAX_D];
  int null_t;       /* tensor to pass as NULL, or -1 */
  int misalign_t;   /* tensor to pass one byte off, or -1 */
  int alias;        /* pass the first input as the output */
  int empty_ptrs;   /* every tensor NULL (an empty problem) */
  float s[2];
  int flag;
} mutation;

static int g_verbose = 0, g_cases = 0, g_failed = 0;
static const char* g_only = NULL;

static const char* status_name(int s) {
  static const char* names[] = {"TG_OK", "TG_ERR_NULL_POINTER", "TG_ERR_MISALIGNED",
                                "TG_ERR_INVALID_DIM", "TG_ERR_UNSUPPORTED_SHAPE",
                                "TG_ERR_NO_VARIANT", "TG_ERR_INVALID_ARGUMENT",
                                "TG_ERR_SIZE_OVERFLOW", "TG_ERR_DEVICE", "TG_ERR_INTERNAL",
                                "TG_ERR_OUT_OF_MEMORY"};
  return s >= 0 && s <= 10 ? names[s] : "(not a status)";
}

/* Runs one call in a child: exit code 100 + status; a signal or an alarm is a failure. */
static void run_case(const kernel* k, const mutation* m, int query) {
  char name[320];
  snprintf(name, sizeof name, "%s%s: %s", k->name, query ? "_query" : "", m->what);
  if (g_only && !strstr(name, g_only))
    return;
  ++g_cases;
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    perror("fork");
    exit(2);
  }
  if (pid == 0) {
    alarm(CASE_SECONDS);
    /* valid buffers for the base dims (the mutated dims only decide the status) */
    call c;
    memset(&c, 0, sizeof c);
    void* buf[MAX_T];
    int small = 1; /* the mutated dims are valid small ones: size the buffers for them */
    for (int i = 0; i < k->nd; ++i)
      small = small && m->d[i] >= 0 && m->d[i] <= 256;
    for (int i = 0; i < k->nt; ++i) {
      int64_t n = elements(k, i, small ? m->d : k->base);
      size_t bytes = (size_t)(n + 16) * k->bytes[i];
      buf[i] = aligned_alloc(64, (bytes + 63) / 64 * 64);
      memset(buf[i], 0, bytes);
      c.t[i] = buf[i];
    }
    if (m->alias) /* the output is the first input */
      for (int i = 0; i < k->nt; ++i)
        if (k->written[i])
          c.t[i] = c.t[0];
    if (m->null_t >= 0)
      c.t[m->null_t] = NULL;
    if (m->misalign_t >= 0)
      c.t[m->misalign_t] = (char*)c.t[m->misalign_t] + 1;
    if (m->empty_ptrs)
      for (int i = 0; i < k->nt; ++i)
        c.t[i] = NULL;
    c.launch = m->use_launch ? &m->launch : NULL;
    memcpy(c.d, m->d, sizeof c.d);
    c.s[0] = m->s[0], c.s[1] = m->s[1];
    c.flag = m->flag;
    c.query = query;
    c.query_null = query == 2;
    tg_status s = k->fn(&c);
    _exit(100 + (int)s);
  }
  int st = 0;
  while (waitpid(pid, &st, 0) < 0)
    ;
  const char* verdict = NULL;
  char got[96];
  int want = query == 2 ? TG_ERR_INVALID_ARGUMENT : (int)m->want;
  if (WIFSIGNALED(st)) {
    snprintf(got, sizeof got, "%s", WTERMSIG(st) == SIGALRM ? "hung (no return within the limit)"
                                                              : strsignal(WTERMSIG(st)));
    verdict = "FAIL";
  } else if (WEXITSTATUS(st) < 100) {
    snprintf(got, sizeof got, "exited with %d: the library ended the process", WEXITSTATUS(st));
    verdict = "FAIL";
  } else {
    int s = WEXITSTATUS(st) - 100;
    snprintf(got, sizeof got, "%s", status_name(s));
    verdict = s == want ? NULL : "FAIL";
  }
  if (verdict) {
    ++g_failed;
    printf("FAIL %s: got %s, want %s\n", name, got, status_name(want));
  } else if (g_verbose) {
    printf("ok   %s: %s\n", name, got);
  }
}

static mutation base_of(const kernel* k, const char* what, tg_status want) {
  mutation m;
  memset(&m, 0, sizeof m);
  snprintf(m.what, sizeof m.what, "%s", what);
  m.want = want;
  m.null_t = m.misalign_t = -1;
  memcpy(m.d, k->base, sizeof m.d);
  m.s[0] = k->scalar[0], m.s[1] = k->scalar[1];
  return m;
}

/* The case through the function and its _query twin (which report the same status). */
static void both(const kernel* k, const mutation* m) {
  run_case(k, m, 0);
  run_case(k, m, 1);
}

static void launch_cases(const kernel* k) {
  struct {
    const char* what;
    size_t struct_size;
    int device, num_threads;
    void* stream;
    tg_status want;
  } cases[] = {
      {"zeroed launch", 0, 0, 0, NULL, TG_OK},
      {"struct_size = sizeof(tg_launch)", sizeof(tg_launch), 0, 0, NULL, TG_OK},
      {"struct_size = 1", 1, 0, 0, NULL, TG_ERR_INVALID_ARGUMENT},
      {"struct_size = sizeof(tg_launch) - 1", sizeof(tg_launch) - 1, 0, 0, NULL, TG_ERR_INVALID_ARGUMENT},
      {"struct_size = SIZE_MAX (a later version)", SIZE_MAX, 0, 0, NULL, TG_OK},
      {"device = -1 (the CPU)", 0, -1, 0, NULL, TG_OK},
      {"device = -2", 0, -2, 0, NULL, TG_ERR_INVALID_ARGUMENT},
      {"device = INT_MIN", 0, INT_MIN, 0, NULL, TG_ERR_INVALID_ARGUMENT},
      {"device = INT_MAX (no such GPU: the CPU runs)", 0, INT_MAX, 0, NULL, TG_OK},
      {"num_threads = 1", 0, -1, 1, NULL, TG_OK},
      {"num_threads = -1", 0, -1, -1, NULL, TG_ERR_INVALID_ARGUMENT},
      {"num_threads = INT_MIN", 0, -1, INT_MIN, NULL, TG_ERR_INVALID_ARGUMENT},
      {"num_threads = 100000 (clamped)", 0, -1, 100000, NULL, TG_OK},
      {"num_threads = INT_MAX (clamped)", 0, -1, INT_MAX, NULL, TG_OK},
      {"stream = a junk pointer (ignored on the CPU)", 0, -1, 0, (void*)(uintptr_t)0xdeadbeef, TG_OK},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    mutation m = base_of(k, cases[i].what, cases[i].want);
    m.use_launch = 1;
    m.launch.struct_size = cases[i].struct_size;
    m.launch.device = cases[i].device;
    m.launch.num_threads = cases[i].num_threads;
    m.launch.stream = cases[i].stream;
    both(k, &m);
  }
  mutation m = base_of(k, "NULL launch (defaults)", TG_OK);
  both(k, &m);
  m = base_of(k, "_query with out = NULL", TG_ERR_INVALID_ARGUMENT);
  run_case(k, &m, 2);
}

static void dim_cases(const kernel* k) {
  for (int i = 0; i < k->nd; ++i) {
    const char* n = k->dim_names[i];
    char what[160];
    const int64_t bad[] = {-1, INT64_MIN};
    for (int b = 0; b < 2; ++b) {
      snprintf(what, sizeof what, "%s = %lld", n, (long long)bad[b]);
      mutation m = base_of(k, what, TG_ERR_INVALID_DIM);
      m.d[i] = bad[b];
      both(k, &m);
    }
    if (i == k->value_dim) {
      const int64_t off[] = {0, 96, 256, INT64_MAX};
      for (int b = 0; b < 4; ++b) {
        snprintf(what, sizeof what, "%s = %lld (not in its value set)", n, (long long)off[b]);
        mutation m = base_of(k, what, TG_ERR_UNSUPPORTED_SHAPE);
        m.d[i] = off[b];
        both(k, &m);
      }
      continue;
    }
    /* one huge dim: a tensor that has it holds more bytes than the address space */
    const int64_t huge[] = {INT64_MAX, INT64_MAX / 2, (int64_t)1 << 62, (int64_t)1 << 61};
    for (int b = 0; b < 4; ++b) {
      snprintf(what, sizeof what, "%s = %lld (bytes overflow)", n, (long long)huge[b]);
      mutation m = base_of(k, what, TG_ERR_SIZE_OVERFLOW);
      m.d[i] = huge[b];
      both(k, &m);
    }
  }
  /* every dim huge at once: products overflow 64 bits */
  mutation m = base_of(k, "every dim 2^32 (products overflow)", TG_ERR_SIZE_OVERFLOW);
  for (int i = 0; i < k->nd; ++i)
    if (i != k->value_dim)
      m.d[i] = (int64_t)1 << 32;
  both(k, &m);
}

static void tensor_cases(const kernel* k) {
  const char* names[6][MAX_T] = {{"A", "B", "C"}, {"A", "B", "bias", "C"}, {"X", "Y"},
                                 {"X", "W", "Y"}, {"Q", "K", "V", "O"}, {"A", "B", "C"}};
  for (int i = 0; i < k->nt; ++i) {
    char what[160];
    snprintf(what, sizeof what, "%s = NULL", names[k->kind][i]);
    mutation m = base_of(k, what, TG_ERR_NULL_POINTER);
    m.null_t = i;
    both(k, &m);
    snprintf(what, sizeof what, "%s one byte off", names[k->kind][i]);
    m = base_of(k, what, k->bytes[i] > 1 ? TG_ERR_MISALIGNED : TG_OK);
    m.misalign_t = i;
    both(k, &m);
  }
  /* in place (softmax, rmsnorm, attention: O = Q), or a GEMM writing into A: the results are
   * whatever the kernel computes, but the call must return normally */
  mutation m = base_of(k, "output aliases the first input", TG_OK);
  if (k->kind == GEMM_K || k->kind == GELU_K) /* A and C of the same size */
    m.d[0] = m.d[1] = m.d[2] = 8;
  if (k->kind == FP8_K) /* A [M, K] of 1-byte elements, C [M, N] of 2-byte ones */
    m.d[0] = 8, m.d[1] = 8, m.d[2] = 16;
  m.alias = 1;
  both(k, &m);
}

/* Calls whose written tensors are empty, whatever the other dims: nothing can happen, the call
 * returns at once (a grid over them once walked cdiv(M, BM) empty blocks for hours). */
static void idle_cases(const kernel* k) {
  int64_t sets[5][MAX_D];
  const char* what[5];
  int n = 0;
  switch (k->kind) {
  case GEMM_K:
  case GELU_K:
  case FP8_K:
    sets[n][0] = INT64_MAX, sets[n][1] = 0, sets[n][2] = 0, what[n++] = "M = INT64_MAX, N = K = 0";
    sets[n][0] = 0, sets[n][1] = 0, sets[n][2] = INT64_MAX, what[n++] = "K = INT64_MAX, M = N = 0";
    if (k->kind != GELU_K) /* (bias [N] is read: N = INT64_MAX overflows there) */
      sets[n][0] = 0, sets[n][1] = INT64_MAX, sets[n][2] = 0, what[n++] = "N = INT64_MAX, M = K = 0";
    sets[n][0] = 0, sets[n][1] = 9, sets[n][2] = 5, what[n++] = "M = 0 (the inputs B, bias not empty)";
    break;
  case SOFTMAX_K:
  case RMSNORM_K:
    sets[n][0] = INT64_MAX, sets[n][1] = 0, what[n++] = "M = INT64_MAX, N = 0";
    if (k->kind == SOFTMAX_K) /* (W [N] is read: N = INT64_MAX overflows there) */
      sets[n][0] = 0, sets[n][1] = INT64_MAX, what[n++] = "M = 0, N = INT64_MAX";
    else
      sets[n][0] = 0, sets[n][1] = 37, what[n++] = "M = 0 (W not empty)";
    break;
  case FLASH_K:
    sets[n][0] = INT64_MAX, sets[n][1] = 1, sets[n][2] = 0, sets[n][3] = 64, what[n++] = "B = INT64_MAX, S = 0";
    sets[n][0] = 1, sets[n][1] = INT64_MAX, sets[n][2] = 0, sets[n][3] = 128, what[n++] = "H = INT64_MAX, S = 0";
    sets[n][0] = 0, sets[n][1] = INT64_MAX, sets[n][2] = INT64_MAX, sets[n][3] = 64, what[n++] = "B = 0, H = S = INT64_MAX";
    break;
  }
  for (int i = 0; i < n; ++i) {
    mutation m = base_of(k, what[i], TG_OK);
    memcpy(m.d, sets[i], sizeof m.d);
    m.empty_ptrs = 1; /* NULL for the empty tensors (all of them, or the small sets' buffers) */
    for (int t = 0; t < k->nt; ++t)
      if (elements(k, t, sets[i]) != 0)
        m.empty_ptrs = 0;
    both(k, &m);
    /* the same with num_threads = INT_MAX and huge grids in every other dim */
    char w2[160];
    snprintf(w2, sizeof w2, "%s, num_threads = INT_MAX", what[i]);
    m = base_of(k, w2, TG_OK);
    memcpy(m.d, sets[i], sizeof m.d);
    m.use_launch = 1;
    m.launch.device = -1;
    m.launch.num_threads = INT_MAX;
    both(k, &m);
  }
}

static void scalar_and_flag_cases(const kernel* k) {
  const float bad[] = {NAN, INFINITY, -INFINITY, -1.0f, -1e-30f};
  for (int s = 0; s < k->ns; ++s)
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; ++b) {
      char what[160];
      snprintf(what, sizeof what, "scalar %d = %g", s, (double)bad[b]);
      /* rmsnorm eps and attention sm_scale have a require; gemm_fp8's scales run (NaN out) */
      mutation m = base_of(k, what, k->required_scalars ? TG_ERR_INVALID_ARGUMENT : TG_OK);
      m.s[s] = bad[b];
      both(k, &m);
    }
  if (k->kind == RMSNORM_K) {
    mutation m = base_of(k, "eps = 0 (plain RMS)", TG_OK);
    m.s[0] = 0.0f;
    both(k, &m);
    m = base_of(k, "eps = -0.0", TG_OK);
    m.s[0] = -0.0f;
    both(k, &m);
  }
  if (k->kind == FLASH_K) {
    mutation m = base_of(k, "sm_scale = 0", TG_ERR_INVALID_ARGUMENT);
    m.s[0] = 0.0f;
    both(k, &m);
    const int flags[] = {2, -1, INT_MAX, INT_MIN};
    for (int f = 0; f < 4; ++f) {
      char what[160];
      snprintf(what, sizeof what, "causal = %d", flags[f]);
      m = base_of(k, what, TG_ERR_INVALID_ARGUMENT);
      m.flag = flags[f];
      both(k, &m);
    }
    m = base_of(k, "causal = 1", TG_OK);
    m.flag = 1;
    both(k, &m);
  }
}

/* Two bad arguments: the documented order (launch, flags, dims, scalars' require, tensors). */
static void order_cases(const kernel* k) {
  mutation m = base_of(k, "device = -2 and a NULL tensor", TG_ERR_INVALID_ARGUMENT);
  m.use_launch = 1;
  m.launch.device = -2;
  m.null_t = 0;
  both(k, &m);
  m = base_of(k, "a negative dim and a NULL tensor", TG_ERR_INVALID_DIM);
  m.d[0] = -5;
  m.null_t = k->nt - 1;
  both(k, &m);
  m = base_of(k, "a huge dim and a misaligned tensor", TG_ERR_SIZE_OVERFLOW);
  m.d[0] = INT64_MAX;
  m.misalign_t = 0;
  both(k, &m);
  if (k->has_flag) {
    m = base_of(k, "causal = 3 and B = -1", TG_ERR_INVALID_ARGUMENT);
    m.flag = 3;
    m.d[0] = -1;
    both(k, &m);
  }
  if (k->required_scalars) {
    m = base_of(k, "a NaN scalar and a NULL tensor", TG_ERR_INVALID_ARGUMENT);
    m.s[0] = NAN;
    m.null_t = 0;
    both(k, &m);
  }
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "-v") == 0)
      g_verbose = 1;
    else
      g_only = argv[i];
  }
  kernel ks[] = {
      make("gemm_f32", gemm_f32, GEMM_K, 4),        make("gemm_f16", gemm_f16, GEMM_K, 2),
      make("gemm_bf16", gemm_bf16, GEMM_K, 2),      make("gemm_bias_gelu_f32", gelu_f32, GELU_K, 4),
      make("gemm_bias_gelu_f16", gelu_f16, GELU_K, 2), make("gemm_bias_gelu_bf16", gelu_bf16, GELU_K, 2),
      make("softmax_f32", softmax_f32, SOFTMAX_K, 4), make("softmax_f16", softmax_f16, SOFTMAX_K, 2),
      make("softmax_bf16", softmax_bf16, SOFTMAX_K, 2), make("rmsnorm_f32", rmsnorm_f32, RMSNORM_K, 4),
      make("rmsnorm_f16", rmsnorm_f16, RMSNORM_K, 2), make("rmsnorm_bf16", rmsnorm_bf16, RMSNORM_K, 2),
      make("flash_attention_fwd_f32", flash_f32, FLASH_K, 4),
      make("flash_attention_fwd_f16", flash_f16, FLASH_K, 2),
      make("flash_attention_fwd_bf16", flash_bf16, FLASH_K, 2),
      make("gemm_fp8_e4m3", fp8_e4m3, FP8_K, 1),   make("gemm_fp8_e5m2", fp8_e5m2, FP8_K, 1),
  };
  const time_t t0 = time(NULL);
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; ++i) {
    launch_cases(&ks[i]);
    dim_cases(&ks[i]);
    tensor_cases(&ks[i]);
    idle_cases(&ks[i]);
    scalar_and_flag_cases(&ks[i]);
    order_cases(&ks[i]);
  }
  printf("%d cases, %d failed (%ld s)\n", g_cases, g_failed, (long)(time(NULL) - t0));
  return g_failed == 0 && g_cases > 0 ? 0 : 1;
}
