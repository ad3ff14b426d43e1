/* Argument checks of generated dispatch functions. They read only their scalar arguments and
 * pointer values, never the memory a tensor pointer points to. */
#include "tilegen/dispatch.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

static tg_status fail(tg_status s, char* why, size_t why_size, const char* fmt, ...) {
  if (why && why_size) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_size, fmt, ap);
    va_end(ap);
  }
  return s;
}

/* The size of the first tg_launch layout: struct_size, device, stream, num_threads. */
#define TG_LAUNCH_V1_SIZE sizeof(tg_launch)

tg_status tg_check_launch(const tg_launch* launch, char* why, size_t why_size) {
  if (!launch)
    return TG_OK;
  if (launch->struct_size != 0 && launch->struct_size < TG_LAUNCH_V1_SIZE)
    return fail(TG_ERR_INVALID_ARGUMENT, why, why_size,
                "launch->struct_size = %zu is smaller than any tg_launch version (%zu)",
                launch->struct_size, (size_t)TG_LAUNCH_V1_SIZE);
  if (launch->device < -1)
    return fail(TG_ERR_INVALID_ARGUMENT, why, why_size,
                "launch->device = %d; use a device ordinal >= 0, or -1 for the CPU",
                launch->device);
  if (launch->num_threads < 0)
    return fail(TG_ERR_INVALID_ARGUMENT, why, why_size,
                "launch->num_threads = %d is negative (0 = OpenMP's default)",
                launch->num_threads);
  return TG_OK;
}

tg_status tg_check_dim(const char* name, int64_t value, int64_t min, int64_t max,
                       int64_t multiple_of, char* why, size_t why_size) {
  if (value < 0)
    return fail(TG_ERR_INVALID_DIM, why, why_size, "%s = %" PRId64 " is negative", name, value);
  if (value < min)
    return fail(TG_ERR_INVALID_DIM, why, why_size,
                "%s = %" PRId64 " is below its declared min %" PRId64, name, value, min);
  if (value > max)
    return fail(TG_ERR_INVALID_DIM, why, why_size,
                "%s = %" PRId64 " is above its declared max %" PRId64, name, value, max);
  if (multiple_of > 1 && value % multiple_of != 0)
    return fail(TG_ERR_INVALID_DIM, why, why_size,
                "%s = %" PRId64 " is not a multiple of %" PRId64, name, value, multiple_of);
  return TG_OK;
}

tg_status tg_check_value_dim(const char* name, int64_t value, const int64_t* values, size_t n,
                             char* why, size_t why_size) {
  if (value < 0)
    return fail(TG_ERR_INVALID_DIM, why, why_size, "%s = %" PRId64 " is negative", name, value);
  for (size_t i = 0; i < n; ++i)
    if (values[i] == value)
      return TG_OK;
  if (why && why_size) {
    int len = snprintf(why, why_size, "no variant for %s=%" PRId64 ": built for %s in {", name,
                       value, name);
    for (size_t i = 0; i < n && len >= 0 && (size_t)len < why_size; ++i)
      len += snprintf(why + len, why_size - (size_t)len, "%s%" PRId64, i ? ", " : "", values[i]);
    if (len >= 0 && (size_t)len < why_size)
      snprintf(why + len, why_size - (size_t)len, "}");
  }
  return TG_ERR_UNSUPPORTED_SHAPE;
}

tg_status tg_check_flag(const char* name, int value, char* why, size_t why_size) {
  if (value != 0 && value != 1)
    return fail(TG_ERR_INVALID_ARGUMENT, why, why_size, "flag %s = %d; flags are 0 or 1", name,
                value);
  return TG_OK;
}

tg_status tg_check_tensor(const char* name, const void* ptr, const int64_t* shape, size_t rank,
                          int shape_ok, size_t elem_bytes, char* why, size_t why_size) {
  if (!shape_ok)
    return fail(TG_ERR_SIZE_OVERFLOW, why, why_size,
                "the shape of %s overflows 64-bit arithmetic", name);
  int64_t count = 1;
  int overflow = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (shape[d] < 0)
      return fail(TG_ERR_INVALID_DIM, why, why_size,
                  "dim %zu of %s evaluates to %" PRId64 ", which is negative", d, name, shape[d]);
    if (!overflow && __builtin_mul_overflow(count, shape[d], &count))
      overflow = 1;
  }
  /* An empty tensor never overflows, whatever its other extents. */
  for (size_t d = 0; d < rank; ++d)
    if (shape[d] == 0)
      return TG_OK;
  int64_t bytes;
  if (overflow || __builtin_mul_overflow(count, (int64_t)elem_bytes, &bytes) ||
      (uint64_t)bytes > (uint64_t)PTRDIFF_MAX)
    return fail(TG_ERR_SIZE_OVERFLOW, why, why_size,
                "%s has more bytes than fit in the address space", name);
  if (!ptr)
    return fail(TG_ERR_NULL_POINTER, why, why_size, "%s is NULL but has %" PRId64 " elements",
                name, count);
  if (elem_bytes > 1 && (uintptr_t)ptr % elem_bytes != 0)
    return fail(TG_ERR_MISALIGNED, why, why_size,
                "%s = %p is not aligned to its %zu-byte elements", name, ptr, elem_bytes);
  return TG_OK;
}

void tg_note_idle(char* why, size_t why_size) {
  if (!why || why_size == 0)
    return;
  size_t len = 0;
  while (len < why_size && why[len] != '\0')
    ++len;
  if (len + 1 < why_size)
    snprintf(why + len, why_size - len,
             "; no tensor it writes has an element: the call returns TG_OK without running it");
}
