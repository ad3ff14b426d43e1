/* Variant selection for generated dispatch code (see tilegen/dispatch.h, docs/dispatch.md). */
#include "tilegen/dispatch.h"

#include "env_list.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

/* 1 if GPU target `target` is listed in TILEGEN_GPU_DISABLE (comma-separated target names,
 * e.g. "sm_90a"): for comparing a kernel's variants on one device, and for working around a
 * variant. Read when a selection is made (selections are cached: set it before the first call). */
static int gpu_disabled_by_env(const char* target) {
  return tg_env_list_has("TILEGEN_GPU_DISABLE", target);
}

/* Rows selected by a device probe (tg_device_cc_fn): CUDA's compute capability, or Metal's
 * Apple GPU family (a library has one or the other, never both). HIP rows have their own
 * selection (tg_select_variant_hip). */
static int probed_row(const tg_variant_entry* e) {
  return e->backend == TG_BACKEND_CUDA || e->backend == TG_BACKEND_METAL;
}

int tg_gpu_row_runs_on(const tg_variant_entry* e, int cc) {
  if (cc <= 0 || !probed_row(e) || gpu_disabled_by_env(e->target))
    return 0;
  return e->arch_specific ? cc == e->cc : cc >= e->cc;
}

/* Row e takes part in the selection for (instance, shape class): the instance's CPU rows serve
 * every class, its GPU rows only their own. */
static int in_selection(const tg_variant_entry* e, int instance, int shape_class) {
  return e->instance == instance &&
         (e->backend == TG_BACKEND_CPU || e->shape_class == shape_class);
}

static int cpu_row_runs(const tg_variant_entry* e, tg_feature_fn has) {
  if (e->backend != TG_BACKEND_CPU)
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

/* What selection learned about the GPU of a call: `cc` > 0 if GPU rows may run. */
typedef struct gpu_probe {
  int has_gpu_rows; /* the instance has GPU rows */
  int device;       /* launch->device, 0 for a NULL launch */
  int cc;           /* compute capability x 10, 0 = GPU rows cannot run */
  const char* why;  /* when cc == 0 and has_gpu_rows: why not (static) */
} gpu_probe;

static gpu_probe probe_gpu(const tg_variant_entry* table, size_t n, int instance, int cls,
                           const tg_launch* launch, tg_device_cc_fn device_cc) {
  gpu_probe p = {0, launch ? launch->device : 0, 0, ""};
  for (size_t i = 0; i < n && !p.has_gpu_rows; ++i)
    p.has_gpu_rows = in_selection(&table[i], instance, cls) && probed_row(&table[i]);
  if (!p.has_gpu_rows)
    return p;
  if (p.device < 0) {
    p.why = "launch->device = -1 selects the CPU";
  } else if (!device_cc) {
    p.why = "this library was built without a GPU runtime";
  } else {
    const char* why = NULL;
    p.cc = device_cc(p.device, &why);
    if (p.cc <= 0) {
      p.cc = 0;
      p.why = why && why[0] ? why : "the GPU cannot run GPU variants";
    }
  }
  return p;
}

/* Which rows of a table may run: CPU rows whose features `has` reports, or GPU rows that run on
 * compute capability `cc` (0: none). */
typedef struct row_filter {
  tg_feature_fn has;
  int cc;
  int cls; /* the call's shape class: GPU rows of other classes are not considered */
} row_filter;

static int row_ok(const row_filter* f, const tg_variant_entry* e) {
  return f->cc > 0 ? tg_gpu_row_runs_on(e, f->cc) : cpu_row_runs(e, f->has);
}

/* Among the instance's rows that `f` accepts, the highest preference (earliest on ties). */
static int best_row(const tg_variant_entry* table, size_t n, int instance, const row_filter* f) {
  int best = -1;
  for (size_t i = 0; i < n; ++i)
    if (in_selection(&table[i], instance, f->cls) && row_ok(f, &table[i]) &&
        (best < 0 || table[i].preference > table[best].preference))
      best = (int)i;
  return best;
}

static void explain_rejected(why_buf* w, const row_filter* f, const tg_variant_entry* e);

/* "; preferred over X, Y" for the other rows `f` accepts, highest preference first, then
 * "; not usable here: A (reason), ..." for the instance's rows of the same kind it rejects. */
static void list_others(why_buf* w, const tg_variant_entry* table, size_t n, int instance,
                        int best, const row_filter* f) {
  int last_pref = table[best].preference + 1, prefix = 1;
  for (;;) {
    int next = -1;
    for (size_t i = 0; i < n; ++i) {
      if (!in_selection(&table[i], instance, f->cls) || (int)i == best || !row_ok(f, &table[i]))
        continue;
      if (table[i].preference < last_pref &&
          (next < 0 || table[i].preference > table[next].preference))
        next = (int)i;
    }
    if (next < 0)
      break;
    int pref = table[next].preference;
    for (size_t i = 0; i < n; ++i) {
      if (!in_selection(&table[i], instance, f->cls) || (int)i == best ||
          table[i].preference != pref ||
          !row_ok(f, &table[i]))
        continue;
      why_add(w, "%s%s", prefix ? "; preferred over " : ", ", table[i].target);
      prefix = 0;
    }
    last_pref = pref;
  }
  prefix = 1;
  int want_gpu = f->cc > 0;
  for (size_t i = 0; i < n; ++i) {
    const tg_variant_entry* e = &table[i];
    if (!in_selection(e, instance, f->cls) || probed_row(e) != want_gpu ||
        (!want_gpu && e->backend != TG_BACKEND_CPU) ||
        row_ok(f, e))
      continue;
    why_add(w, "%s%s (", prefix ? "; not usable here: " : ", ", e->target);
    explain_rejected(w, f, e);
    why_add(w, ")");
    prefix = 0;
  }
}

/* "cc >= 8.0" / "cc == 9.0": what a GPU row needs. */
static void gpu_need(why_buf* w, const tg_variant_entry* e) {
  if (gpu_disabled_by_env(e->target))
    why_add(w, "disabled by TILEGEN_GPU_DISABLE");
  else
    why_add(w, "needs cc %s %d.%d", e->arch_specific ? "==" : ">=", e->cc / 10, e->cc % 10);
}

static void explain_rejected(why_buf* w, const row_filter* f, const tg_variant_entry* e) {
  if (f->cc > 0) {
    gpu_need(w, e);
  } else {
    why_add(w, "CPU lacks ");
    list_features(w, e, f->has, 0);
  }
}

int tg_select_variant_class(const tg_variant_entry* table, size_t n, int instance,
                            int shape_class, const char* class_why, const tg_launch* launch,
                            tg_feature_fn has, tg_device_cc_fn device_cc, char* why,
                            size_t why_size) {
  why_buf w = {why, why_size, 0};
  if (why && why_size)
    why[0] = '\0';
  if (!has)
    has = tg_cpu_has;

  gpu_probe g = probe_gpu(table, n, instance, shape_class, launch, device_cc);
  if (g.cc > 0) {
    row_filter gf = {has, g.cc, shape_class};
    int best = best_row(table, n, instance, &gf);
    if (best >= 0) {
      if (why) {
        if (class_why && class_why[0])
          why_add(&w, "%s for %s: ", table[best].target, class_why);
        else
          why_add(&w, "%s: ", table[best].target);
        why_add(&w, "GPU %d has cc %d.%d", g.device, g.cc / 10, g.cc % 10);
        list_others(&w, table, n, instance, best, &gf);
      }
      return best;
    }
  }
  row_filter cf = {has, 0, shape_class};
  int best = best_row(table, n, instance, &cf);
  if (!why)
    return best;

  /* Why the GPU rows did not run, first. */
  const char* inst_name = "";
  for (size_t i = 0; i < n && !inst_name[0]; ++i)
    if (table[i].instance == instance)
      inst_name = table[i].instance_name;
  if (best < 0)
    why_add(&w, "no variant of %s can run here: ", inst_name[0] ? inst_name : "this kernel");
  if (g.has_gpu_rows && g.cc == 0) {
    why_add(&w, "%s", g.why);
  } else if (g.has_gpu_rows) {
    why_add(&w, "GPU %d has cc %d.%d, which no GPU variant runs on (", g.device, g.cc / 10,
            g.cc % 10);
    const char* sep = "";
    for (size_t i = 0; i < n; ++i)
      if (in_selection(&table[i], instance, shape_class) && probed_row(&table[i])) {
        why_add(&w, "%s%s ", sep, table[i].target);
        gpu_need(&w, &table[i]);
        sep = ", ";
      }
    why_add(&w, ")");
  }

  if (best < 0) {
    const char* sep = g.has_gpu_rows ? "; " : "";
    for (size_t i = 0; i < n; ++i) {
      if (table[i].instance != instance || table[i].backend != TG_BACKEND_CPU)
        continue;
      why_add(&w, "%s%s needs ", sep, table[i].target);
      list_features(&w, &table[i], has, 0);
      sep = "; ";
    }
    return best;
  }

  const tg_variant_entry* b = &table[best];
  if (g.has_gpu_rows)
    why_add(&w, "; fell back to ");
  if (b->features && b->features[0]) {
    why_add(&w, "%s: CPU has ", b->target);
    list_features(&w, b, has, 1);
  } else {
    why_add(&w, "%s: portable variant, needs no CPU features", b->target);
  }
  list_others(&w, table, n, instance, best, &cf);
  return best;
}

int tg_select_variant_gpu(const tg_variant_entry* table, size_t n, int instance,
                          const tg_launch* launch, tg_feature_fn has, tg_device_cc_fn device_cc,
                          char* why, size_t why_size) {
  return tg_select_variant_class(table, n, instance, 0, NULL, launch, has, device_cc, why,
                                 why_size);
}

int tg_select_variant(const tg_variant_entry* table, size_t n, int instance,
                      const tg_launch* launch, tg_feature_fn has, char* why, size_t why_size) {
  return tg_select_variant_gpu(table, n, instance, launch, has, NULL, why, why_size);
}

int tg_select_cached_class(const tg_variant_entry* table, size_t n, int instance,
                           int shape_class, int n_classes, const tg_launch* launch,
                           tg_select_cache* cache, tg_device_cc_fn device_cc) {
  /* The choice depends on the instance, the shape class, the CPU features (fixed per process)
   * and, with a device runtime, the device's compute capability (fixed per device): one slot
   * each. */
  int* slot = NULL;
  if (cache) {
    tg_select_cache* c = &cache[instance * n_classes + shape_class];
    int device = launch ? launch->device : 0;
    if (!device_cc || device < 0)
      slot = &c->state;
    else if (device < TG_SELECT_CACHED_DEVICES)
      slot = &c->gpu[device];
  }
  if (slot) {
    int state = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (state > 0)
      return state - 1;
  }
  int best = tg_select_variant_class(table, n, instance, shape_class, NULL, launch, tg_cpu_has,
                                     device_cc, NULL, 0);
  if (slot && best >= 0)
    __atomic_store_n(slot, best + 1, __ATOMIC_RELEASE);
  return best;
}

int tg_select_cached_gpu(const tg_variant_entry* table, size_t n, int instance,
                         const tg_launch* launch, tg_select_cache* cache,
                         tg_device_cc_fn device_cc) {
  return tg_select_cached_class(table, n, instance, 0, 1, launch, cache, device_cc);
}

int tg_select_cached(const tg_variant_entry* table, size_t n, int instance,
                     const tg_launch* launch, tg_select_cache* cache) {
  return tg_select_cached_gpu(table, n, instance, launch, cache, NULL);
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

/* ---- HIP rows (docs/hip.md) ---------------------------------------------------------------- */

int tg_hip_row_runs_on(const tg_variant_entry* e, const char* target) {
  if (!target || e->backend != TG_BACKEND_HIP || gpu_disabled_by_env(e->target))
    return 0;
  /* the portable row ("hip") runs on every HIP device; a gfx row on its own arch only */
  return strcmp(e->arch, "hip") == 0 || strcmp(e->arch, target) == 0;
}

int tg_select_variant_hip(const tg_variant_entry* table, size_t n, int instance,
                          int shape_class, const char* class_why, const tg_launch* launch,
                          tg_feature_fn has, tg_device_cc_fn device_cc,
                          tg_device_arch_fn device_arch, char* why, size_t why_size) {
  int device = launch ? launch->device : 0, has_hip = 0, best = -1;
  const char* target = NULL;
  const char* hip_why = "";
  size_t i;
  why_buf w = {why, why_size, 0};
  /* CUDA rows first (tg_select_variant_class, which sees CUDA and CPU rows only) */
  int c = tg_select_variant_class(table, n, instance, shape_class, class_why, launch, has,
                                  device_cc, why, why_size);
  if (c >= 0 && table[c].backend == TG_BACKEND_CUDA)
    return c;
  for (i = 0; i < n && !has_hip; ++i)
    has_hip = in_selection(&table[i], instance, shape_class) && table[i].backend == TG_BACKEND_HIP;
  if (!has_hip)
    return c;
  if (device < 0)
    hip_why = "launch->device = -1 selects the CPU";
  else if (!device_arch)
    hip_why = "this library was built without the HIP runtime";
  else {
    const char* r = NULL;
    target = device_arch(device, &r);
    if (!target)
      hip_why = r && r[0] ? r : "the device cannot run HIP variants";
  }
  for (i = 0; target && i < n; ++i)
    if (in_selection(&table[i], instance, shape_class) && tg_hip_row_runs_on(&table[i], target) &&
        (best < 0 || table[i].preference > table[best].preference))
      best = (int)i;
  if (!why)
    return best >= 0 ? best : c;
  if (best >= 0) {
    why[0] = '\0';
    if (class_why && class_why[0])
      why_add(&w, "%s for %s: ", table[best].target, class_why);
    else
      why_add(&w, "%s: ", table[best].target);
    why_add(&w, "HIP device %d is %s", device, target);
    for (i = 0; i < n; ++i)
      if ((int)i != best && in_selection(&table[i], instance, shape_class) &&
          table[i].backend == TG_BACKEND_HIP)
        why_add(&w, "; %s %s", table[i].target,
                tg_hip_row_runs_on(&table[i], target) ? "also runs here (lower preference)"
                                                      : "not usable here (built for another arch)");
    return best;
  }
  /* the CPU choice (or none): its sentence, after why the HIP rows did not run */
  {
    char rest[512];
    snprintf(rest, sizeof rest, "%s", why);
    why[0] = '\0';
    w.len = 0;
    if (target)
      why_add(&w, "HIP device %d is %s, for which no HIP variant is built", device, target);
    else
      why_add(&w, "no HIP variant runs: %s", hip_why);
    if (rest[0])
      why_add(&w, "; %s", rest);
  }
  return c;
}

int tg_select_cached_hip(const tg_variant_entry* table, size_t n, int instance,
                         int shape_class, int n_classes, const tg_launch* launch,
                         tg_select_cache* cache, tg_device_cc_fn device_cc,
                         tg_device_arch_fn device_arch) {
  /* as tg_select_cached_class: the device's arch is fixed per device */
  int* slot = NULL;
  if (cache) {
    tg_select_cache* c = &cache[instance * n_classes + shape_class];
    int device = launch ? launch->device : 0;
    if ((!device_cc && !device_arch) || device < 0)
      slot = &c->state;
    else if (device < TG_SELECT_CACHED_DEVICES)
      slot = &c->gpu[device];
  }
  if (slot) {
    int state = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (state > 0)
      return state - 1;
  }
  int best = tg_select_variant_hip(table, n, instance, shape_class, NULL, launch, tg_cpu_has,
                                   device_cc, device_arch, NULL, 0);
  if (slot && best >= 0)
    __atomic_store_n(slot, best + 1, __ATOMIC_RELEASE);
  return best;
}
