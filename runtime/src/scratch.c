/* Per-thread tile scratch for CPU variants (tg_cpu_scratch in tilegen/variant.h).
 *
 * Why not stack arrays or static _Thread_local arrays in the variants: a block's tiles can
 * take hundreds of KiB, more than an OpenMP worker's stack may have; and glibc carves static
 * TLS out of every thread's stack, so a library with many variants, each with its own
 * _Thread_local tiles, exhausts worker stacks even if each variant alone would fit. One small
 * thread-local record per thread, pointing at heap memory reused across calls, avoids both. */
#include "tilegen/variant.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct scratch {
  void* data;
  size_t size;
} scratch;

static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;
static int scratch_key_ok;

static void scratch_free(void* p) {
  scratch* s = (scratch*)p;
  free(s->data);
  free(s);
}

static void scratch_init(void) { scratch_key_ok = pthread_key_create(&scratch_key, scratch_free) == 0; }

void* tg_cpu_scratch(size_t bytes) {
  pthread_once(&scratch_once, scratch_init);
  if (!scratch_key_ok)
    return NULL;
  scratch* s = (scratch*)pthread_getspecific(scratch_key);
  if (s == NULL) {
    s = (scratch*)calloc(1, sizeof *s);
    if (s == NULL)
      return NULL;
    if (pthread_setspecific(scratch_key, s) != 0) {
      free(s);
      return NULL;
    }
  }
  if (bytes == 0)
    bytes = 64;
  if (s->size < bytes) {
    /* aligned_alloc wants a multiple of the alignment */
    size_t rounded = (bytes + 63) & ~(size_t)63;
    if (rounded < bytes)
      return NULL;
    void* p = aligned_alloc(64, rounded);
    if (p == NULL)
      return NULL;
    free(s->data);
    s->data = p;
    s->size = rounded;
  }
  return s->data;
}
