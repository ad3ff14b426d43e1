/* CPU feature detection for selecting C variants. Detected once; the answer is cached in a
 * plain int per feature (benign race: every thread computes the same value). */
#include "tilegen/runtime.h"

#include <string.h>

typedef struct feature {
  const char* name;
  int (*probe)(void);
} feature;

#if defined(__x86_64__) || defined(__i386__)
/* __builtin_cpu_supports needs a literal argument, hence one probe per feature. */
static int probe_avx2(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx2"); }
static int probe_fma(void) { __builtin_cpu_init(); return __builtin_cpu_supports("fma"); }
static int probe_f16c(void) { __builtin_cpu_init(); return __builtin_cpu_supports("f16c"); }
static int probe_avx512f(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx512f"); }
static int probe_avx512bw(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx512bw"); }
static int probe_avx512vl(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx512vl"); }
static int probe_avx512dq(void) { __builtin_cpu_init(); return __builtin_cpu_supports("avx512dq"); }
static const feature features[] = {
    {"avx2", probe_avx2},         {"fma", probe_fma},           {"f16c", probe_f16c},
    {"avx512f", probe_avx512f},   {"avx512bw", probe_avx512bw}, {"avx512vl", probe_avx512vl},
    {"avx512dq", probe_avx512dq},
};
#elif defined(__aarch64__)
static int probe_neon(void) { return 1; } /* NEON is mandatory on AArch64 */
static const feature features[] = {{"neon", probe_neon}};
#else
static const feature features[] = {{"", 0}};
#endif

#define TG_NFEATURES (sizeof(features) / sizeof(features[0]))
static int cache[TG_NFEATURES]; /* 0 = unknown, 1 = absent, 2 = present */

int tg_cpu_has(const char* name) {
  if (!name)
    return 0;
  for (size_t i = 0; i < TG_NFEATURES; ++i) {
    if (!features[i].probe || strcmp(features[i].name, name) != 0)
      continue;
    if (cache[i] == 0)
      cache[i] = features[i].probe() ? 2 : 1;
    return cache[i] == 2;
  }
  return 0;
}
