/* What generated dispatch files (<lib>_dispatch.c) build on: the variant table, selection and
 * argument checks. Users do not include this header; they include <lib>.h.
 *
 * A dispatch function validates its arguments with the tg_check_* helpers (each returns a
 * status and, on failure, writes one sentence into `why`), finds the instance its flags and
 * value-set dims select, then asks tg_select_cached() for the best variant of that instance
 * that can run here. See docs/dispatch.md. */
#ifndef TILEGEN_DISPATCH_H
#define TILEGEN_DISPATCH_H

#include "tilegen/variant.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a variant runs. */
typedef enum tg_backend {
  TG_BACKEND_CPU = 0,
  TG_BACKEND_CUDA = 1,
  TG_BACKEND_HIP = 2,
  TG_BACKEND_METAL = 3 /* Apple GPUs (docs/metal.md): `cc` is the GPU family x 10 */
} tg_backend;

/* One row of a generated variant table. The GPU fields come last so that CPU-only tables may
 * leave them out of their initializers. */
typedef struct tg_variant_entry {
  int instance;                /* index into the kernel's instance list */
  const char* instance_name;   /* "bf16_causal1_D128" */
  const char* target;          /* "c_avx2", "sm_80" */
  const char* symbol;          /* "tgv_<lib>__<kernel>__<inst>__<target>" */
  tg_backend backend;
  const char* arch;            /* device arch for GPU variants ("sm_80"), "" on CPU */
  int preference;              /* higher wins among variants that can run */
  const char* const* features; /* runtime features required (NULL-terminated list) */
  tg_variant_fn fn;
  int cc;                      /* GPU rows: compute capability x 10 the variant is built for */
  int arch_specific;           /* GPU rows: 1 = runs only where cc matches exactly (sm_90a);
                                  0 = embeds PTX, runs on cc >= this cc */
  tg_gpu_desc_fn desc;         /* GPU rows: the variant's _desc twin (describe, don't launch) */
  int shape_class;             /* GPU rows: the shape class (schedule.classes) the row serves,
                                  as the index the dispatch code's class test returns
                                  (declared classes in order, then "large"); 0 for kernels
                                  without classes. CPU rows serve every class (0). */
} tg_variant_entry;

/* Feature test used by selection; tg_cpu_has in production, a fake in tests. */
typedef int (*tg_feature_fn)(const char* feature);

/* Compute capability x 10 of GPU `device` (80 for 8.0), or 0 if no GPU variant can run there;
 * then *why (if why is not NULL) points at a static sentence saying why ("no CUDA device:
 * cudaGetDeviceCount returned cudaErrorNoDevice"). tg_cuda_device_cc (tilegen/cuda.h) in
 * production, a fake in tests. Must be cheap after the first call for a device. */
typedef int (*tg_device_cc_fn)(int device, const char** why);

/* 1 if GPU row `e` can run on a device of compute capability `cc` (x 10): an arch-specific
 * variant (SASS only) needs cc == e->cc, any other (SASS + PTX) cc >= e->cc. */
int tg_gpu_row_runs_on(const tg_variant_entry* e, int cc);

/* Index into `table` of the variant to run for `instance`, or -1 if none can run.
 * The device is launch->device, and 0 for a NULL launch; -1 means the CPU.
 *  1. If the instance has GPU rows, the device is >= 0, `device_cc` is not NULL and reports
 *     a compute capability cc > 0, the highest-preference GPU row that runs on cc
 *     (tg_gpu_row_runs_on) wins, whatever the CPU rows (tensors are then device pointers).
 *  2. Otherwise, among the CPU rows whose features all satisfy `has` (tg_cpu_has if NULL), the
 *     highest preference wins. Ties go to the earlier row.
 * If `why` is not NULL, writes one sentence saying why, including why the GPU was not used
 * (docs/dispatch.md). */
int tg_select_variant_gpu(const tg_variant_entry* table, size_t n, int instance,
                          const tg_launch* launch, tg_feature_fn has, tg_device_cc_fn device_cc,
                          char* why, size_t why_size);

/* tg_select_variant_gpu for a call of shape class `shape_class`: only the GPU rows of that
 * class compete (CPU rows serve every class). `class_why` (may be NULL) describes the class
 * for `why` when a GPU row wins, e.g. "class small_m (M <= 64)". tg_select_variant_gpu is
 * this with class 0 and no description. */
int tg_select_variant_class(const tg_variant_entry* table, size_t n, int instance,
                            int shape_class, const char* class_why, const tg_launch* launch,
                            tg_feature_fn has, tg_device_cc_fn device_cc, char* why,
                            size_t why_size);

/* tg_select_variant_gpu without a device runtime: GPU rows never run (libraries without
 * GPU variants use this). */
int tg_select_variant(const tg_variant_entry* table, size_t n, int instance,
                      const tg_launch* launch, tg_feature_fn has, char* why, size_t why_size);

/* Per-instance memo of the choice: 0 = not yet chosen, else row index + 1. `state` holds the
 * CPU choice (device -1, or a library without GPU rows), gpu[d] the choice for device d.
 * Filled with atomic stores; a race on the first call makes both threads compute the same
 * answer (device compute capabilities are cached by the runtime and never change). */
#define TG_SELECT_CACHED_DEVICES 16
typedef struct tg_select_cache {
  int state;
  int gpu[TG_SELECT_CACHED_DEVICES];
} tg_select_cache;

/* tg_select_variant with tg_cpu_has, memoized in cache[instance]. */
int tg_select_cached(const tg_variant_entry* table, size_t n, int instance,
                     const tg_launch* launch, tg_select_cache* cache);

/* tg_select_variant_gpu with tg_cpu_has, memoized per instance and device (devices beyond
 * TG_SELECT_CACHED_DEVICES are selected afresh on every call). The hot path is one atomic
 * load. */
int tg_select_cached_gpu(const tg_variant_entry* table, size_t n, int instance,
                         const tg_launch* launch, tg_select_cache* cache,
                         tg_device_cc_fn device_cc);

/* tg_select_variant_class with tg_cpu_has, memoized per instance, class and device in
 * cache[instance * n_classes + shape_class] (n_classes >= 1 caches per instance and class).
 * The hot path is one atomic load, as for tg_select_cached_gpu (which is this with one
 * class). */
int tg_select_cached_class(const tg_variant_entry* table, size_t n, int instance,
                           int shape_class, int n_classes, const tg_launch* launch,
                           tg_select_cache* cache, tg_device_cc_fn device_cc);

/* ---- HIP rows (docs/hip.md) ----
 * The tilegen target a HIP device runs ("gfx942"; "hip" for a device only the portable variants
 * run on), or NULL when no HIP variant can run there, with *why (if not NULL) a static sentence.
 * tg_hip_device_arch (tilegen/hip.h) in production, a fake in tests. */
typedef const char* (*tg_device_arch_fn)(int device, const char** why);

/* 1 if HIP row `e` runs on a device of target `target`: the portable row (arch "hip") on every
 * HIP device, a gfx row on its own arch only; 0 for other rows and when TILEGEN_GPU_DISABLE
 * names e's target. */
int tg_hip_row_runs_on(const tg_variant_entry* e, const char* target);

/* tg_select_variant_class for a library with HIP rows: a CUDA row that runs wins first (as
 * there), then the highest-preference HIP row that runs on the device's target
 * (`device_arch`), then the CPU rows; `why` says why the HIP rows did not run before the CPU
 * choice's sentence. `device_cc` may be NULL (no CUDA rows). */
int tg_select_variant_hip(const tg_variant_entry* table, size_t n, int instance,
                          int shape_class, const char* class_why, const tg_launch* launch,
                          tg_feature_fn has, tg_device_cc_fn device_cc,
                          tg_device_arch_fn device_arch, char* why, size_t why_size);

/* tg_select_variant_hip with tg_cpu_has, memoized per instance, class and device as
 * tg_select_cached_class. */
int tg_select_cached_hip(const tg_variant_entry* table, size_t n, int instance,
                         int shape_class, int n_classes, const tg_launch* launch,
                         tg_select_cache* cache, tg_device_cc_fn device_cc,
                         tg_device_arch_fn device_arch);

/* Index of the row of `keys` (n_inst rows of n_key values) equal to `key`, or -1. */
int tg_find_instance(const int64_t* keys, size_t n_inst, size_t n_key, const int64_t* key);

/* ---- argument checks (each: TG_OK, or an error status plus a sentence in why) ---- */

#define TG_NO_MAX INT64_MAX

/* struct_size 0 or >= the first version's size, device >= -1, num_threads >= 0. */
tg_status tg_check_launch(const tg_launch* launch, char* why, size_t why_size);
/* value >= max(min, 0), <= max, multiple of multiple_of (1 = any). */
tg_status tg_check_dim(const char* name, int64_t value, int64_t min, int64_t max,
                       int64_t multiple_of, char* why, size_t why_size);
/* value is one of `values` (ascending), else TG_ERR_UNSUPPORTED_SHAPE; a negative value is
 * TG_ERR_INVALID_DIM, as for any dim. */
tg_status tg_check_value_dim(const char* name, int64_t value, const int64_t* values, size_t n,
                             char* why, size_t why_size);
/* value is 0 or 1. */
tg_status tg_check_flag(const char* name, int value, char* why, size_t why_size);
/* The shape extents are >= 0 (else TG_ERR_INVALID_DIM), element count times elem_bytes fits
 * in int64 (else TG_ERR_SIZE_OVERFLOW), ptr is non-NULL unless the tensor is empty, and ptr
 * is aligned to elem_bytes. `shape_ok` is 0 if computing the extents overflowed. */
tg_status tg_check_tensor(const char* name, const void* ptr, const int64_t* shape, size_t rank,
                          int shape_ok, size_t elem_bytes, char* why, size_t why_size);

/* Appends to a _query reason (why, a NUL-terminated sentence in why_size bytes) that the call
 * has nothing to do: no tensor it writes has an element, so it returns TG_OK without running
 * the variant (docs/dispatch.md). */
void tg_note_idle(char* why, size_t why_size);

/* Checked int64 arithmetic for shape expressions: on overflow the result is 0 and *ok is
 * cleared. Integer division follows the spec language (docs/spec.md "Operators and typing"):
 * floor division and modulo for every divisor of either sign; a zero divisor gives a / 0 = 0,
 * a % 0 = a and cdiv(a, 0) = 0 (not an error); INT64_MIN / -1, whose quotient 2^63 does not
 * fit, is an overflow here. */
static inline int64_t tg_add_i64(int64_t a, int64_t b, int* ok) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) { *ok = 0; return 0; }
  return r;
}
static inline int64_t tg_sub_i64(int64_t a, int64_t b, int* ok) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) { *ok = 0; return 0; }
  return r;
}
static inline int64_t tg_mul_i64(int64_t a, int64_t b, int* ok) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) { *ok = 0; return 0; }
  return r;
}
static inline int64_t tg_div_i64(int64_t a, int64_t b, int* ok) {
  if (b == 0)
    return 0;
  if (a == INT64_MIN && b == -1) { *ok = 0; return 0; }
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t tg_mod_i64(int64_t a, int64_t b, int* ok) {
  (void)ok; /* never overflows: INT64_MIN % -1 is 0 */
  if (b == 0)
    return a;
  if (b == -1)
    return 0;
  int64_t m = a % b;
  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}
static inline int64_t tg_cdiv_i64(int64_t a, int64_t b, int* ok) {
  if (b == 0)
    return 0;
  if (a == INT64_MIN && b == -1) { *ok = 0; return 0; }
  int64_t q = a / b; /* truncated; ceil rounds it up when the exact quotient is positive */
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}
/* A double truncated to int64 (a float cast to an integer in a scalar's require); NaN and values
 * outside int64 clear *ok (C leaves them undefined). */
static inline int64_t tg_double_to_i64(double v, int* ok) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) {
    *ok = 0;
    return 0;
  }
  return (int64_t)v;
}
static inline int64_t tg_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t tg_max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

#ifdef __cplusplus
}
#endif
#endif /* TILEGEN_DISPATCH_H */
