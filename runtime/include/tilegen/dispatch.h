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

/* Where a variant runs. GPU variants carry the device arch they were built for in `arch`;
 * only CPU variants exist in this release, the field is there so GPU rows slot in. */
typedef enum tg_backend { TG_BACKEND_CPU = 0, TG_BACKEND_CUDA = 1, TG_BACKEND_HIP = 2 } tg_backend;

/* One row of a generated variant table. */
typedef struct tg_variant_entry {
  int instance;                /* index into the kernel's instance list */
  const char* instance_name;   /* "bf16_causal1_D128" */
  const char* target;          /* "c_avx2" */
  const char* symbol;          /* "tgv_<lib>__<kernel>__<inst>__<target>" */
  tg_backend backend;
  const char* arch;            /* device arch for GPU variants, "" on CPU */
  int preference;              /* higher wins among variants that can run */
  const char* const* features; /* runtime features required (NULL-terminated list) */
  tg_variant_fn fn;
} tg_variant_entry;

/* Feature test used by selection; tg_cpu_has in production, a fake in tests. */
typedef int (*tg_feature_fn)(const char* feature);

/* Index into `table` of the variant to run for `instance`, or -1 if none can run. Among the
 * instance's rows whose backend is usable (CPU when launch is NULL, launch->device == -1 or no
 * GPU runtime) and whose features all satisfy `has`, the highest preference wins; ties go to
 * the earlier row. If `why` is not NULL, writes one sentence saying why (see docs). */
int tg_select_variant(const tg_variant_entry* table, size_t n, int instance,
                      const tg_launch* launch, tg_feature_fn has, char* why, size_t why_size);

/* Per-instance memo of the CPU choice: 0 = not yet chosen, else row index + 1. Filled with
 * atomic stores; a race on the first call makes both threads compute the same answer. */
typedef struct tg_select_cache {
  int state;
} tg_select_cache;

/* tg_select_variant with tg_cpu_has, memoized in cache[instance]. */
int tg_select_cached(const tg_variant_entry* table, size_t n, int instance,
                     const tg_launch* launch, tg_select_cache* cache);

/* Index of the row of `keys` (n_inst rows of n_key values) equal to `key`, or -1. */
int tg_find_instance(const int64_t* keys, size_t n_inst, size_t n_key, const int64_t* key);

/* ---- argument checks (each: TG_OK, or an error status plus a sentence in why) ---- */

#define TG_NO_MAX INT64_MAX

/* struct_size 0 or >= the first version's size, device >= -1, num_threads >= 0. */
tg_status tg_check_launch(const tg_launch* launch, char* why, size_t why_size);
/* value >= max(min, 0), <= max, multiple of multiple_of (1 = any). */
tg_status tg_check_dim(const char* name, int64_t value, int64_t min, int64_t max,
                       int64_t multiple_of, char* why, size_t why_size);
/* value is one of `values` (ascending), else TG_ERR_UNSUPPORTED_SHAPE. */
tg_status tg_check_value_dim(const char* name, int64_t value, const int64_t* values, size_t n,
                             char* why, size_t why_size);
/* value is 0 or 1. */
tg_status tg_check_flag(const char* name, int value, char* why, size_t why_size);
/* The shape extents are >= 0 (else TG_ERR_INVALID_DIM), element count times elem_bytes fits
 * in int64 (else TG_ERR_SIZE_OVERFLOW), ptr is non-NULL unless the tensor is empty, and ptr
 * is aligned to elem_bytes. `shape_ok` is 0 if computing the extents overflowed. */
tg_status tg_check_tensor(const char* name, const void* ptr, const int64_t* shape, size_t rank,
                          int shape_ok, size_t elem_bytes, char* why, size_t why_size);

/* Checked int64 arithmetic for shape expressions: on overflow (or division by zero) the
 * result is 0 and *ok is cleared. */
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
/* Floor division and modulo (the IR's integer semantics). */
static inline int64_t tg_div_i64(int64_t a, int64_t b, int* ok) {
  if (b == 0 || (a == INT64_MIN && b == -1)) { *ok = 0; return 0; }
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t tg_mod_i64(int64_t a, int64_t b, int* ok) {
  if (b == 0 || (a == INT64_MIN && b == -1)) { *ok = 0; return 0; }
  int64_t m = a % b;
  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}
static inline int64_t tg_cdiv_i64(int64_t a, int64_t b, int* ok) {
  return tg_div_i64(tg_add_i64(a, tg_sub_i64(b, 1, ok), ok), b, ok);
}
static inline int64_t tg_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t tg_max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

#ifdef __cplusplus
}
#endif
#endif /* TILEGEN_DISPATCH_H */
