/* Variant selection for generated dispatch code (see tilegen/dispatch.h, docs/dispatch.md). */
#include "tilegen/dispatch.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A bounded sentence builder: appends never overflow and always leave a terminated string. */
typedef struct why_buf {
  char* s;
  size_t cap, len;
} why_buf;

static void why_add(why_buf* w, const char* fmt, ...) {
  if (!w->s || w->cap == 0 || w->len + 1 >= w->cap)
    return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(w->s + w->len, w->cap - w->len, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  w->len += (size_t)n;
  if (w->len >= w->cap)
    w->len = w->cap - 1;
}

/* No GPU backend ships in this release: GPU rows are never usable. When one does, this asks
 * the device runtime (loaded lazily, never linked) whether launch->device exists. */
static int gpu_usable(const tg_launch* launch, const tg_variant_entry* e) {
  (void)e;
  if (!launch || launch->device < 0)
    return 0;
  return 0;
}

static int row_runs(const tg_variant_entry* e, const tg_launch* launch, tg_feature_fn has) {
  if (e->backend != TG_BACKEND_CPU && !gpu_usable(launch, e))
    return 0;
  for (const char* const* f = e->features; f && *f; ++f)
    if (!has(*f))
      return 0;
  return 1;
}

/* Lists the features of e that `has` says are missing (present == 0) or present (== 1). */
static void list_features(why_buf* w, const tg_variant_entry* e, tg_feature_fn has, int present) {
  int first = 1;
  for (const char* const* f = e->features; f && *f; ++f) {
    if ((has(*f) != 0) != present)
      continue;
    why_add(w, "%s%s", first ? "" : ", ", *f);
    first = 0;
  }
}

int tg_select_variant(const tg_variant_entry* table, size_t n, int instance,
                      const tg_launch* launch, tg_feature_fn has, char* why, size_t why_size) {
  why_buf w = {why, why_size, 0};
  if (why && why_size)
    why[0] = '\0';
  if (!has)
    has = tg_cpu_has;

  int best = -1;
  const char* inst_name = "";
  for (size_t i = 0; i < n; ++i) {
    if (table[i].instance != instance)
      continue;
    inst_name = table[i].instance_name;
    if (row_runs(&table[i], launch, has) &&
        (best < 0 || table[i].preference > table[best].preference))
      best = (int)i;
  }
  if (!why)
    return best;

  if (best < 0) {
    why_add(&w, "no variant of %s can run here", inst_name[0] ? inst_name : "this kernel");
    const char* sep = ": ";
    for (size_t i = 0; i < n; ++i) {
      if (table[i].instance != instance)
        continue;
      if (table[i].backend != TG_BACKEND_CPU) {
        why_add(&w, "%s%s needs a GPU", sep, table[i].target);
      } else {
        why_add(&w, "%s%s needs ", sep, table[i].target);
        list_features(&w, &table[i], has, 0);
      }
      sep = "; ";
    }
    return best;
  }

  const tg_variant_entry* b = &table[best];
  if (b->features && b->features[0]) {
    why_add(&w, "%s: CPU has ", b->target);
    list_features(&w, b, has, 1);
  } else {
    why_add(&w, "%s: portable variant, needs no CPU features", b->target);
  }
  /* Other runnable rows, highest preference first. */
  int last_pref = b->preference + 1, prefix = 1;
  for (;;) {
    int next = -1;
    for (size_t i = 0; i < n; ++i) {
      if (table[i].instance != instance || (int)i == best || !row_runs(&table[i], launch, has))
        continue;
      if (table[i].preference < last_pref &&
          (next < 0 || table[i].preference > table[next].preference))
        next = (int)i;
    }
    if (next < 0)
      break;
    int pref = table[next].preference;
    for (size_t i = 0; i < n; ++i) {
      if (table[i].instance != instance || (int)i == best || table[i].preference != pref ||
          !row_runs(&table[i], launch, has))
        continue;
      why_add(&w, "%s%s", prefix ? "; preferred over " : ", ", table[i].target);
      prefix = 0;
    }
    last_pref = pref;
  }
  /* Rows that cannot run here, and why. */
  prefix = 1;
  for (size_t i = 0; i < n; ++i) {
    if (table[i].instance != instance || row_runs(&table[i], launch, has))
      continue;
    why_add(&w, "%s%s", prefix ? "; not usable here: " : ", ", table[i].target);
    if (table[i].backend != TG_BACKEND_CPU) {
      why_add(&w, launch && launch->device < 0 ? " (launch->device = -1 forces the CPU)"
                                               : " (no GPU)");
    } else {
      why_add(&w, " (CPU lacks ");
      list_features(&w, &table[i], has, 0);
      why_add(&w, ")");
    }
    prefix = 0;
  }
  return best;
}

int tg_select_cached(const tg_variant_entry* table, size_t n, int instance,
                     const tg_launch* launch, tg_select_cache* cache) {
  /* Only CPU choices are memoized: they depend on nothing but the instance. */
  int cpu_only = !launch || launch->device < 0 || 1 /* no GPU backend in this release */;
  if (cpu_only && cache) {
    int state = __atomic_load_n(&cache[instance].state, __ATOMIC_ACQUIRE);
    if (state > 0)
      return state - 1;
  }
  int best = tg_select_variant(table, n, instance, launch, tg_cpu_has, NULL, 0);
  if (cpu_only && cache && best >= 0)
    __atomic_store_n(&cache[instance].state, best + 1, __ATOMIC_RELEASE);
  return best;
}

int tg_find_instance(const int64_t* keys, size_t n_inst, size_t n_key, const int64_t* key) {
  for (size_t i = 0; i < n_inst; ++i) {
    size_t j = 0;
    while (j < n_key && keys[i * n_key + j] == key[j])
      ++j;
    if (j == n_key)
      return (int)i;
  }
  return -1;
}
