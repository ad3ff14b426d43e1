/* The HIP runtime part of tilegen (tilegen/hip.h): the HIP runtime loaded at run time, device
 * archs, module loading and launches. No HIP header: the few entry points used are declared
 * here with the C ABI of HIP's API (hipError_t is an int, handles are pointers).
 *
 * Caching: the runtime is loaded once per process (pthread_once); each ordinal below
 * TG_HIP_CACHED_DEVICES is probed once under a mutex and published with a release store; a
 * module's per-device functions likewise. Reason sentences live in static buffers written
 * before the store and never again. */
#define _GNU_SOURCE
#include "tilegen/hip.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHY_SIZE 200

typedef int hip_err;
typedef struct api {
  hip_err (*get_device_count)(int*);
  hip_err (*get_device)(int*);
  hip_err (*set_device)(int);
  const char* (*error_name)(hip_err);
  /* fills `arch` (size bytes) with the device's arch name; 0 on success */
  hip_err (*arch_name)(int device, char* arch, size_t size);
  hip_err (*module_load_data)(void** module, const void* image);
  hip_err (*module_get_function)(void** fn, void* module, const char* name);
  hip_err (*module_launch)(void* fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                           unsigned by, unsigned bz, unsigned smem, void* stream, void** params,
                           void** extra);
  /* dynamic LDS past the default limit (the NVIDIA platform's 48 KiB); NULL: none needed */
  hip_err (*allow_smem)(void* fn, int bytes);
} api;

static pthread_once_t api_once = PTHREAD_ONCE_INIT;
static api hip;        /* all NULL when no runtime was loaded */
static int hip_loaded; /* 1 once every entry point above resolved */
static char load_why[WHY_SIZE];

#ifndef TILEGEN_HIP_PLATFORM_NVIDIA
/* ---- AMD: libamdhip64 through dlopen ------------------------------------------------------- */

static hip_err (*hip_get_device_properties)(void* props, int device);

/* hipDeviceProp_t differs between ROCm releases (R0000 in 5.x, R0600 in 6.x, each resolved by
 * its own symbol); rather than hard-code one layout, the properties are read into a zeroed
 * buffer larger than any of them and gcnArchName is found as the string that starts with "gfx"
 * and carries the target features after ':' (or, failing that, the first "gfx" string): no
 * other member holds such a string. */
static hip_err amd_arch_name(int device, char* arch, size_t size) {
  static const size_t kProps = 16384;
  unsigned char* buf = calloc(1, kProps);
  const char* found = NULL;
  hip_err e;
  size_t i;
  if (!buf)
    return 2; /* hipErrorOutOfMemory */
  e = hip_get_device_properties(buf, device);
  for (i = 0; e == 0 && i + 4 < kProps; ++i) {
    const char* s = (const char*)buf + i;
    if ((i == 0 || buf[i - 1] == 0) && strncmp(s, "gfx", 3) == 0 && memchr(s, 0, kProps - i)) {
      if (!found || (!strchr(found, ':') && strchr(s, ':')))
        found = s;
    }
  }
  if (e == 0)
    snprintf(arch, size, "%s", found ? found : "");
  free(buf);
  return e;
}

static void* sym(void* lib, const char* name) { return lib ? dlsym(lib, name) : NULL; }

static void load_api(void) {
  const char* env = getenv("TILEGEN_HIP_LIBRARY");
  const char* names[] = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"};
  void* lib = NULL;
  size_t i;
  if (env && env[0]) {
    lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      snprintf(load_why, sizeof load_why, "no HIP runtime: %s", dlerror());
  } else {
    for (i = 0; i < sizeof names / sizeof names[0] && !lib; ++i) {
      lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
      if (!lib && i == 0)
        snprintf(load_why, sizeof load_why, "no HIP runtime: %s", dlerror());
    }
  }
  if (!lib)
    return;
  *(void**)&hip.get_device_count = sym(lib, "hipGetDeviceCount");
  *(void**)&hip.get_device = sym(lib, "hipGetDevice");
  *(void**)&hip.set_device = sym(lib, "hipSetDevice");
  *(void**)&hip.error_name = sym(lib, "hipGetErrorName");
  *(void**)&hip_get_device_properties = sym(lib, "hipGetDevicePropertiesR0600");
  if (!hip_get_device_properties)
    *(void**)&hip_get_device_properties = sym(lib, "hipGetDeviceProperties");
  *(void**)&hip.module_load_data = sym(lib, "hipModuleLoadData");
  *(void**)&hip.module_get_function = sym(lib, "hipModuleGetFunction");
  *(void**)&hip.module_launch = sym(lib, "hipModuleLaunchKernel");
  hip.arch_name = amd_arch_name;
  hip.allow_smem = NULL; /* LDS needs no opt-in */
  if (!hip.get_device_count || !hip.get_device || !hip.set_device || !hip.error_name ||
      !hip_get_device_properties || !hip.module_load_data || !hip.module_get_function ||
      !hip.module_launch) {
    snprintf(load_why, sizeof load_why,
             "no HIP runtime: the loaded libamdhip64 lacks an entry point tilegen needs");
    return;
  }
  hip_loaded = 1;
}

#else
/* ---- HIP's NVIDIA platform: the CUDA runtime (static cudart) and driver entry points ------------
 * What HIP's nvidia_detail headers do (hipModuleLoadData -> cuModuleLoadData, ...), written
 * against the CUDA headers directly: the nvidia_detail runtime header of ROCm 5.2 does not
 * compile against CUDA 13 (bench/hip/README.md). */
#include <cuda.h>
#include <cuda_runtime_api.h>

static CUresult (*cu_module_load_data)(CUmodule*, const void*);
static CUresult (*cu_module_get_function)(CUfunction*, CUmodule, const char*);
static CUresult (*cu_launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    unsigned, unsigned, CUstream, void**, void**);
static CUresult (*cu_func_set_attribute)(CUfunction, CUfunction_attribute, int);

/* CUresult and cudaError_t values of the failures that matter here map onto hipError_t's
 * (HIP's nvidia_detail hipCUResultTohipError): 2 out of memory, 1 invalid value, 100 no
 * device, 101 invalid device, 209 no binary for the GPU, 400 invalid handle. */
static hip_err from_cu(CUresult r) {
  switch (r) {
  case CUDA_SUCCESS: return 0;
  case CUDA_ERROR_OUT_OF_MEMORY: return 2;
  case CUDA_ERROR_INVALID_VALUE: return 1;
  case CUDA_ERROR_NO_DEVICE: return 100;
  case CUDA_ERROR_INVALID_DEVICE: return 101;
  case CUDA_ERROR_NO_BINARY_FOR_GPU: case CUDA_ERROR_INVALID_IMAGE: return 209;
  case CUDA_ERROR_INVALID_HANDLE: return 400;
  default: return 999;
  }
}
static hip_err from_cuda(cudaError_t e) {
  switch (e) {
  case cudaSuccess: return 0;
  case cudaErrorMemoryAllocation: return 2;
  case cudaErrorInvalidValue: return 1;
  case cudaErrorNoDevice: return 100;
  case cudaErrorInvalidDevice: return 101;
  default: return 999;
  }
}
static hip_err nv_count(int* n) { return from_cuda(cudaGetDeviceCount(n)); }
static hip_err nv_get(int* d) { return from_cuda(cudaGetDevice(d)); }
static hip_err nv_set(int d) {
  hip_err e = from_cuda(cudaSetDevice(d));
  return e ? e : from_cuda(cudaFree(0)); /* the primary context, current for the driver API */
}
static const char* nv_error_name(hip_err e) {
  switch (e) {
  case 0: return "hipSuccess";
  case 1: return "hipErrorInvalidValue";
  case 2: return "hipErrorOutOfMemory";
  case 100: return "hipErrorNoDevice";
  case 101: return "hipErrorInvalidDevice";
  case 209: return "hipErrorNoBinaryForGpu";
  case 400: return "hipErrorInvalidHandle";
  default: return "hipErrorUnknown";
  }
}
static hip_err nv_arch(int device, char* arch, size_t size) {
  (void)device;
  snprintf(arch, size, "nvidia");
  return 0;
}
static hip_err nv_load(void** m, const void* image) {
  return from_cu(cu_module_load_data((CUmodule*)m, image));
}
static hip_err nv_get_function(void** f, void* m, const char* name) {
  return from_cu(cu_module_get_function((CUfunction*)f, (CUmodule)m, name));
}
static hip_err nv_launch(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                         unsigned bz, unsigned smem, void* stream, void** params, void** extra) {
  return from_cu(cu_launch_kernel((CUfunction)f, gx, gy, gz, bx, by, bz, smem, (CUstream)stream,
                                  params, extra));
}
static hip_err nv_allow_smem(void* f, int bytes) {
  return from_cu(cu_func_set_attribute((CUfunction)f,
                                       CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
}

static void* entry(const char* name) {
  void* fn = NULL;
  enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    fn = NULL;
  (void)cudaGetLastError();
  return fn;
}

static void load_api(void) {
  *(void**)&cu_module_load_data = entry("cuModuleLoadData");
  *(void**)&cu_module_get_function = entry("cuModuleGetFunction");
  *(void**)&cu_launch_kernel = entry("cuLaunchKernel");
  *(void**)&cu_func_set_attribute = entry("cuFuncSetAttribute");
  if (!cu_module_load_data || !cu_module_get_function || !cu_launch_kernel || !cu_func_set_attribute) {
    snprintf(load_why, sizeof load_why, "no HIP (NVIDIA platform) runtime: no CUDA driver");
    return;
  }
  hip.get_device_count = nv_count;
  hip.get_device = nv_get;
  hip.set_device = nv_set;
  hip.error_name = nv_error_name;
  hip.arch_name = nv_arch;
  hip.module_load_data = nv_load;
  hip.module_get_function = nv_get_function;
  hip.module_launch = nv_launch;
  hip.allow_smem = nv_allow_smem;
  hip_loaded = 1;
}
#endif

/* ---- devices ----------------------------------------------------------------------------------- */

static pthread_once_t count_once = PTHREAD_ONCE_INIT;
static int device_count;
static char count_why[WHY_SIZE];

static void probe_count(void) {
  int n = 0;
  hip_err e;
  pthread_once(&api_once, load_api);
  if (!hip_loaded) {
    snprintf(count_why, sizeof count_why, "%s", load_why);
    return;
  }
  e = hip.get_device_count(&n);
  if (e != 0) {
    snprintf(count_why, sizeof count_why, "no HIP device: hipGetDeviceCount returned %s",
             hip.error_name(e));
    n = 0;
  } else if (n <= 0) {
    snprintf(count_why, sizeof count_why, "no HIP device: hipGetDeviceCount found none");
    n = 0;
  }
  device_count = n;
}

static pthread_mutex_t probe_mutex = PTHREAD_MUTEX_INITIALIZER;
static int arch_state[TG_HIP_CACHED_DEVICES]; /* 0: not probed, 1: probed */
static char arch_names[TG_HIP_CACHED_DEVICES][64];
static const char* arch_targets[TG_HIP_CACHED_DEVICES];
static char arch_why[TG_HIP_CACHED_DEVICES][WHY_SIZE];

/* The target of an arch name: the part before ':' if it is a gfx target of the table. */
static const char* target_of(const char* arch) {
  static const char* const known[] = {"gfx90a", "gfx942", "gfx1100"};
  size_t i, n = strcspn(arch, ":");
  for (i = 0; i < sizeof known / sizeof known[0]; ++i)
    if (strlen(known[i]) == n && strncmp(arch, known[i], n) == 0)
      return known[i];
  return "hip";
}

const char* tg_hip_device_arch(int device, const char** why) {
  static const char negative[] = "a negative device ordinal selects the CPU";
  static const char beyond[] = "no such HIP device (the ordinal is out of range)";
  const char* target;
  if (device < 0 || device >= TG_HIP_CACHED_DEVICES) {
    if (why)
      *why = device < 0 ? negative : beyond;
    return NULL;
  }
  if (__atomic_load_n(&arch_state[device], __ATOMIC_ACQUIRE)) {
    if (why)
      *why = arch_why[device];
    return arch_targets[device];
  }
  pthread_once(&count_once, probe_count);
  pthread_mutex_lock(&probe_mutex);
  if (!arch_state[device]) {
    arch_targets[device] = NULL;
    if (device_count == 0) {
      snprintf(arch_why[device], WHY_SIZE, "%s", count_why);
    } else if (device >= device_count) {
      snprintf(arch_why[device], WHY_SIZE, "no HIP device %d: hipGetDeviceCount found %d", device,
               device_count);
    } else {
      hip_err e = hip.arch_name(device, arch_names[device], sizeof arch_names[device]);
      if (e != 0)
        snprintf(arch_why[device], WHY_SIZE, "HIP device %d: hipGetDeviceProperties returned %s",
                 device, hip.error_name(e));
      else if (!arch_names[device][0])
        snprintf(arch_why[device], WHY_SIZE, "HIP device %d: its properties name no gfx arch", device);
      else
        arch_targets[device] = target_of(arch_names[device]);
    }
    __atomic_store_n(&arch_state[device], 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&probe_mutex);
  target = arch_targets[device];
  if (why)
    *why = arch_why[device];
  return target;
}

const char* tg_hip_device_arch_name(int device) {
  return tg_hip_device_arch(device, NULL) ? arch_names[device] : "";
}

tg_status tg_hip_status(int e) {
  switch (e) {
  case 0: return TG_OK;
  case 2: return TG_ERR_OUT_OF_MEMORY;       /* hipErrorOutOfMemory */
  case 1: case 400: case 401:                /* invalid value, handle, resource handle */
    return TG_ERR_INVALID_ARGUMENT;
  case 100: case 101: case 35: case 200: case 209: /* no / invalid device, insufficient
                                                       driver, invalid image, no binary */
    return TG_ERR_NO_VARIANT;
  default: return TG_ERR_DEVICE;
  }
}

tg_status tg_hip_run(const tg_variant_entry* e, const tg_launch* launch,
                     const tg_variant_args* args) {
  int device = launch ? launch->device : 0, current = -1;
  hip_err err;
  tg_status s;
  pthread_once(&api_once, load_api);
  if (!hip_loaded)
    return TG_ERR_NO_VARIANT;
  err = hip.get_device(&current);
  if (err == 0 && current != device)
    err = hip.set_device(device);
  if (err != 0)
    return tg_hip_status(err);
  s = (tg_status)e->fn(launch, args);
  if (current != device && current >= 0)
    (void)hip.set_device(current);
  return s;
}

/* ---- modules ----------------------------------------------------------------------------------- */

static pthread_mutex_t module_mutex = PTHREAD_MUTEX_INITIALIZER;

/* Loads m's image for `device` (the current device) and its kernels: returns the state to
 * publish, 1 on success, 2 with the status in `error` otherwise. Called with module_mutex held. */
static int load_module(tg_hip_module* m, int device) {
  const char* want = arch_names[device];
  size_t n = strcspn(want, ":"), i;
  const tg_hip_image* img = NULL;
  hip_err e = 0;
  int k;
  for (i = 0; i < m->n_images && !img; ++i)
    if (strlen(m->images[i].arch) == n && strncmp(m->images[i].arch, want, n) == 0)
      img = &m->images[i];
  m->dev[device].error = TG_ERR_NO_VARIANT;
  if (!img || m->n_kernels > TG_HIP_MAX_KERNELS)
    return 2;
  e = hip.module_load_data(&m->dev[device].module, img->begin);
  for (k = 0; e == 0 && k < m->n_kernels; ++k)
    e = hip.module_get_function(&m->dev[device].fn[k], m->dev[device].module, m->kernels[k]);
  m->dev[device].error = tg_hip_status(e);
  if (e == 0 && hip.allow_smem)
    for (k = 0; k < m->n_kernels; ++k)
      (void)hip.allow_smem(m->dev[device].fn[k], 64 * 1024);
  return e == 0 ? 1 : 2;
}

tg_status tg_hip_launch(tg_hip_module* m, int kernel, const unsigned grid[3], unsigned block,
                        size_t smem, void* stream, void* params, size_t size) {
  int device = -1, state;
  void* args[1];
  hip_err e;
  (void)size;
  pthread_once(&api_once, load_api);
  if (!hip_loaded || kernel < 0 || kernel >= m->n_kernels)
    return TG_ERR_NO_VARIANT;
  e = hip.get_device(&device);
  if (e != 0)
    return tg_hip_status(e);
  if (device < 0 || device >= TG_HIP_CACHED_DEVICES || !tg_hip_device_arch(device, NULL))
    return TG_ERR_NO_VARIANT;
  state = __atomic_load_n(&m->dev[device].state, __ATOMIC_ACQUIRE);
  if (state == 0) {
    pthread_mutex_lock(&module_mutex);
    if (m->dev[device].state == 0)
      __atomic_store_n(&m->dev[device].state, load_module(m, device), __ATOMIC_RELEASE);
    state = m->dev[device].state;
    pthread_mutex_unlock(&module_mutex);
  }
  if (state != 1)
    return (tg_status)m->dev[device].error;
  args[0] = params;
  e = hip.module_launch(m->dev[device].fn[kernel], grid[0], grid[1], grid[2], block, 1, 1,
                        (unsigned)smem, stream, args, NULL);
  return tg_hip_status(e);
}
