/* tilegen runtime: what every generated dispatch library and its callers share.
 * Status codes, the launch handle, the selection report of the query API.
 * C11, no allocation on the call path; nothing here calls exit() or abort(). */
#ifndef TILEGEN_RUNTIME_H
#define TILEGEN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 16-bit floats cross the C API as their bit patterns (IEEE binary16 and bfloat16). */
typedef uint16_t tg_f16;
typedef uint16_t tg_bf16;
/* 8-bit floats (OCP FP8) likewise: e4m3 (bias 7, no infinities, max 448) and e5m2 (bias 15,
 * IEEE-like, max 57344). */
typedef uint8_t tg_e4m3;
typedef uint8_t tg_e5m2;

typedef enum tg_status {
  TG_OK = 0,
  TG_ERR_NULL_POINTER = 1,       /* a tensor pointer is NULL (and the tensor is not empty) */
  TG_ERR_MISALIGNED = 2,         /* a tensor pointer is not aligned to its element size */
  TG_ERR_INVALID_DIM = 3,        /* a dim is negative, or violates min/max/multiple_of */
  TG_ERR_UNSUPPORTED_SHAPE = 4,  /* a specialized dim has a value no variant was built for */
  TG_ERR_NO_VARIANT = 5,         /* no variant of this library can run on this machine */
  TG_ERR_INVALID_ARGUMENT = 6,   /* a flag is not 0/1, the launch handle is malformed, ... */
  TG_ERR_SIZE_OVERFLOW = 7,      /* a tensor's byte size does not fit in 64 bits */
  TG_ERR_DEVICE = 8,             /* the device runtime reported an error */
  TG_ERR_INTERNAL = 9,           /* a bug in tilegen: please report it */
  TG_ERR_OUT_OF_MEMORY = 10      /* a CPU variant could not get its per-thread tile scratch */
} tg_status;

/* A short, static, human-readable message for a status. Never NULL. */
const char* tg_status_string(tg_status s);

/* How to run a call. A NULL launch pointer means "defaults". Zero-initialise and set what
 * you need; later fields may be added at the end (struct_size tells the runtime which). */
typedef struct tg_launch {
  size_t struct_size;  /* sizeof(tg_launch) or 0 (= current) */
  int device;          /* GPU ordinal; -1 = force the CPU variants */
  void* stream;        /* cudaStream_t / hipStream_t for GPU variants; ignored on CPU */
  int num_threads;     /* CPU worker threads; 0 = OpenMP's default; at most tg_cpu_count() are
                          used (tg_launch_num_threads), and never more than the call's blocks */
} tg_launch;

/* What the query function of a kernel reports: the variant a call with the same arguments
 * would run, and why. Strings are static. */
typedef struct tg_selection {
  tg_status status;        /* what the call would return before running (argument checks) */
  const char* variant;     /* symbol of the chosen variant, or "" if none */
  const char* target;      /* target name ("c_avx512", "c", ...), or "" */
  const char* instance;    /* specialization ("bf16_causal1_D128"), or "" */
  char reason[256];        /* one sentence: why this variant (or why none) */
} tg_selection;

/* CPU feature names the runtime understands: on x86 "avx2", "fma", "f16c", "avx512f",
 * "avx512bw", "avx512vl", "avx512dq"; on AArch64 Linux (getauxval) "asimd" (alias "neon"),
 * "fphp", "asimdhp", "sve", "sve2". A name of the other architecture is absent. Detected once,
 * cached. Returns 1 if present.
 * The environment variable TILEGEN_CPU_DISABLE (comma-separated names, read once) makes the
 * runtime treat those features as absent, e.g. TILEGEN_CPU_DISABLE=avx512f to exercise the
 * c_avx2 variants on an AVX-512 machine, or TILEGEN_CPU_DISABLE=sve for c_neon on an SVE one. */
int tg_cpu_has(const char* feature);

/* Worker threads a CPU variant should use for `launch`: launch->num_threads if positive, at
 * most tg_cpu_count() (more threads than processors would only contend, and a request OpenMP
 * cannot start, such as INT_MAX, would make libgomp exit the process); else 0 (= OpenMP's
 * default). NULL launch = defaults. */
int tg_launch_num_threads(const tg_launch* launch);

/* Processors this process may run on (its CPU affinity mask on Linux, else the online
 * processors), at least 1; probed once per process. */
int tg_cpu_count(void);

/* Conversions of the 16-bit float bit patterns (round to nearest even on the way down), for
 * callers preparing data. (Variant files carry their own static inline copies, named
 * tg_f16_to_f32 etc., so that the compiler can inline them into the hot loops.) */
float tg_f16_to_float(tg_f16 h);
float tg_bf16_to_float(tg_bf16 h);
tg_f16 tg_float_to_f16(float f);
tg_bf16 tg_float_to_bf16(float f);
/* FP8: exact on the way up; on the way down round to nearest even, saturate finite overflow
 * and infinities to the largest finite value (PTX cvt.rn.satfinite), NaN stays NaN. */
float tg_e4m3_to_float(tg_e4m3 b);
float tg_e5m2_to_float(tg_e5m2 b);
tg_e4m3 tg_float_to_e4m3(float f);
tg_e5m2 tg_float_to_e5m2(float f);

#ifdef __cplusplus
}
#endif
#endif /* TILEGEN_RUNTIME_H */
