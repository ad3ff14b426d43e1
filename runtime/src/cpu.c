/* CPU feature detection for selecting C variants. Each feature is probed once; the answer is
 * cached in an int per feature, read and written with relaxed atomics: two threads racing on
 * the first call both compute the same value, so either store is right. */
#include "env_list.h"
#include "tilegen/runtime.h"

#include <stdlib.h>
#include <string.h>

typedef struct feature {
  const char* name;
  int (*probe)(void);
} feature;

#if defined(__x86_64__) || defined(__i386__)
/* __builtin_cpu_supports needs a literal argument, hence one probe per feature. */
static int probe_avx2(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx2"); }
static int probe_fma(void) { __builtin_cpu_init(); return __builtin_cpu_supports("fma"); }
#if defined(__clang__) && __clang_major__ < 16
/* clang before 16 has no "f16c" for __builtin_cpu_supports: CPUID.1:ECX.F16C, usable where AVX
 * is (F16C instructions use the VEX encoding, enabled by the OS together with AVX). */
#include <cpuid.h>
static int probe_f16c(void) {
  unsigned a, b, c, d;
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}
#else
static int probe_f16c(void) { __builtin_cpu_init(); return __builtin_cpu_supports("f16c"); }
#endif
static int probe_avx512f(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx512f"); }
static int probe_avx512bw(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx512bw"); }
static int probe_avx512vl(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx512vl"); }
static int probe_avx512dq(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx512dq"); }
static const feature features[] = {
    {"avx2", probe_avx2},         {"fma", probe_fma},           {"f16c", probe_f16c},
    {"avx512f", probe_avx512f},   {"avx512bw", probe_avx512bw}, {"avx512vl", probe_avx512vl},
    {"avx512dq", probe_avx512dq},
};
#elif defined(__aarch64__) && defined(__linux__)
/* Linux reports what the CPU (and the kernel) support in the auxiliary vector: the bits
 * /proc/cpuinfo lists under the same names. Values from the kernel's <asm/hwcap.h>, spelled
 * here for C libraries whose headers predate them. */
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1UL << 1)
#endif
#ifndef HWCAP_FPHP
#define HWCAP_FPHP (1UL << 9)
#endif
#ifndef HWCAP_ASIMDHP
#define HWCAP_ASIMDHP (1UL << 10)
#endif
#ifndef HWCAP_SVE
#define HWCAP_SVE (1UL << 22)
#endif
#ifndef HWCAP2_SVE2
#define HWCAP2_SVE2 (1UL << 1)
#endif
static int hwcap(unsigned long bit) { return (getauxval(AT_HWCAP) & bit) != 0; }
static int probe_asimd(void) { return hwcap(HWCAP_ASIMD); }
static int probe_fphp(void) { return hwcap(HWCAP_FPHP); }       /* FP16 scalar arithmetic */
static int probe_asimdhp(void) { return hwcap(HWCAP_ASIMDHP); } /* FP16 vector arithmetic */
static int probe_sve(void) { return hwcap(HWCAP_SVE); }
static int probe_sve2(void) { return (getauxval(AT_HWCAP2) & HWCAP2_SVE2) != 0; }
/* "neon": the name before asimd (Advanced SIMD), kept for TILEGEN_CPU_DISABLE users. */
static const feature features[] = {
    {"asimd", probe_asimd}, {"neon", probe_asimd}, {"fphp", probe_fphp},
    {"asimdhp", probe_asimdhp}, {"sve", probe_sve}, {"sve2", probe_sve2},
};
#elif defined(__aarch64__)
/* Other AArch64 systems: Advanced SIMD is mandatory; the rest is not probed (yet), so the
 * c_neon/c_sve rows do not run there and `c` does. */
static int probe_asimd(void) { return 1; }
static const feature features[] = {{"asimd", probe_asimd}, {"neon", probe_asimd}};
#else
static const feature features[] = {{"", 0}};
#endif

#define TG_NFEATURES (sizeof(features) / sizeof(features[0]))
static int cache[TG_NFEATURES]; /* 0 = unknown, 1 = absent, 2 = present */

int tg_env_list_has(const char* var, const char* name) {
  const char* list = getenv(var);
  if (!list || !name)
    return 0;
  size_t len = strlen(name);
  for (const char* p = list; *p;) {
    const char* end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == len && strncmp(p, name, n) == 0)
      return 1;
    if (!end)
      break;
    p = end + 1;
  }
  return 0;
}

/* 1 if `name` is listed in TILEGEN_CPU_DISABLE (comma-separated). */
static int disabled_by_env(const char* name) { return tg_env_list_has("TILEGEN_CPU_DISABLE", name); }

int tg_cpu_has(const char* name) {
  if (!name)
    return 0;
  for (size_t i = 0; i < TG_NFEATURES; ++i) {
    if (!features[i].probe || strcmp(features[i].name, name) != 0)
      continue;
    int state = __atomic_load_n(&cache[i], __ATOMIC_RELAXED);
    if (state == 0) {
      state = features[i].probe() && !disabled_by_env(name) ? 2 : 1;
      __atomic_store_n(&cache[i], state, __ATOMIC_RELAXED);
    }
    return state == 2;
  }
  return 0;
}
