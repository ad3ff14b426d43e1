/* The CUDA runtime part of tilegen (tilegen/cuda.h): device capabilities, the current device
 * of a call, cudaError_t -> tg_status. Plain C over the CUDA runtime API; linked to the static
 * cudart, which dlopens the driver on first use.
 *
 * Caching: the device count is probed once per process (pthread_once); each ordinal below
 * CACHED_DEVICES is probed once, under a mutex, and published with a release store of its
 * state, so the hot path is one acquire load. The reason sentences live in static buffers
 * written before that store and never again. */
#include "tilegen/cuda.h"

#include <cuda_runtime_api.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CACHED_DEVICES 64
#define WHY_SIZE 160

static pthread_once_t count_once = PTHREAD_ONCE_INIT;
static int device_count;              /* 0 if the runtime reported an error or no device */
static char count_why[WHY_SIZE];      /* why device_count is 0 */

static pthread_mutex_t probe_mutex = PTHREAD_MUTEX_INITIALIZER;
static int cc_state[CACHED_DEVICES];  /* 0 = not probed, else cc + 1 (1: cannot run) */
static char cc_why[CACHED_DEVICES][WHY_SIZE];

static void probe_count(void) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    snprintf(count_why, sizeof count_why, "no CUDA device: cudaGetDeviceCount returned %s",
             cudaGetErrorName(e));
    n = 0;
  } else if (n <= 0) {
    snprintf(count_why, sizeof count_why, "no CUDA device: cudaGetDeviceCount found none");
    n = 0;
  }
  device_count = n;
}

/* Probes `device` (0 <= device < device_count): its cc, or 0 with a sentence in why. */
static int probe_cc(int device, char* why, size_t why_size) {
  int major = 0, minor = 0;
  cudaError_t e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (e == cudaSuccess)
    e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (e != cudaSuccess) {
    snprintf(why, why_size, "GPU %d: cudaDeviceGetAttribute(compute capability) returned %s",
             device, cudaGetErrorName(e));
    return 0;
  }
  return major * 10 + minor;
}

int tg_cuda_device_cc(int device, const char** why) {
  static const char negative[] = "a negative device ordinal selects the CPU";
  static const char beyond[] = "no such CUDA device (the ordinal is out of range)";
  static const char failed[] = "the compute capability query failed";
  if (device < 0) {
    if (why)
      *why = negative;
    return 0;
  }
  if (device < CACHED_DEVICES) {
    int state = __atomic_load_n(&cc_state[device], __ATOMIC_ACQUIRE);
    if (state > 0) {
      if (why)
        *why = cc_why[device];
      return state - 1;
    }
  }
  pthread_once(&count_once, probe_count);
  if (device >= CACHED_DEVICES) { /* never cached; only on machines with > 64 GPUs */
    if (device_count == 0 || device >= device_count) {
      if (why)
        *why = device_count == 0 ? count_why : beyond;
      return 0;
    }
    char scratch[WHY_SIZE];
    int cc = probe_cc(device, scratch, sizeof scratch);
    if (why)
      *why = cc ? "" : failed;
    return cc;
  }

  pthread_mutex_lock(&probe_mutex);
  int state = __atomic_load_n(&cc_state[device], __ATOMIC_ACQUIRE);
  if (state == 0) {
    int cc = 0;
    if (device_count == 0) {
      snprintf(cc_why[device], WHY_SIZE, "%s", count_why);
    } else if (device >= device_count) {
      snprintf(cc_why[device], WHY_SIZE, "no CUDA device %d: cudaGetDeviceCount found %d",
               device, device_count);
    } else {
      cc = probe_cc(device, cc_why[device], WHY_SIZE);
    }
    state = cc + 1;
    __atomic_store_n(&cc_state[device], state, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&probe_mutex);
  if (why)
    *why = cc_why[device];
  return state - 1;
}

tg_status tg_cuda_status(int cuda_error) {
  switch ((cudaError_t)cuda_error) {
  case cudaSuccess:
    return TG_OK;
  case cudaErrorMemoryAllocation:
    return TG_ERR_OUT_OF_MEMORY;
  case cudaErrorInvalidValue:
  case cudaErrorInvalidDevicePointer:
  case cudaErrorInvalidResourceHandle: /* e.g. a stream of another device, or destroyed */
    return TG_ERR_INVALID_ARGUMENT;
  case cudaErrorNoDevice:
  case cudaErrorInvalidDevice:
  case cudaErrorInsufficientDriver:
  case cudaErrorNoKernelImageForDevice:
  case cudaErrorUnsupportedPtxVersion:
    return TG_ERR_NO_VARIANT;
  default:
    return TG_ERR_DEVICE;
  }
}

tg_status tg_cuda_device_enter(int device, int* restore) {
  *restore = -1;
  int current = -1;
  cudaError_t e = cudaGetDevice(&current);
  if (e != cudaSuccess)
    return tg_cuda_status(e);
  if (current == device)
    return TG_OK;
  e = cudaSetDevice(device);
  if (e != cudaSuccess)
    return tg_cuda_status(e);
  *restore = current;
  return TG_OK;
}

void tg_cuda_device_leave(int restore) {
  /* Nothing useful can be done if this fails: the call itself succeeded or failed already,
   * and the next call sets its device explicitly. */
  if (restore >= 0)
    (void)cudaSetDevice(restore);
}

tg_status tg_cuda_run(const tg_variant_entry* e, const tg_launch* launch,
                      const tg_variant_args* args) {
  int restore;
  tg_status s = tg_cuda_device_enter(launch ? launch->device : 0, &restore);
  if (s != TG_OK)
    return s;
  s = (tg_status)e->fn(launch, args);
  tg_cuda_device_leave(restore);
  return s;
}

tg_status tg_cuda_describe(const tg_variant_entry* e, const tg_launch* launch,
                           const tg_variant_args* args, tg_gpu_launch_desc* out) {
  if (e->backend != TG_BACKEND_CUDA || !e->desc)
    return TG_ERR_NO_VARIANT;
  int restore;
  tg_status s = tg_cuda_device_enter(launch ? launch->device : 0, &restore);
  if (s != TG_OK)
    return s;
  s = (tg_status)e->desc(launch, args, out);
  tg_cuda_device_leave(restore);
  return s;
}

/* ---- driver entry points (variant.h) ----------------------------------------------------------
 * Hopper variants encode TMA tensor maps with cuTensorMapEncodeTiled, a driver function. It is
 * looked up through the runtime (cudaGetDriverEntryPointByVersion, the CUDA 12.0 ABI of the
 * symbol), so nothing links libcuda; one lookup per symbol name per process. */
#define ENTRY_SLOTS 8
static pthread_mutex_t entry_mutex = PTHREAD_MUTEX_INITIALIZER;
static const char* entry_names[ENTRY_SLOTS];
static void* entry_fns[ENTRY_SLOTS];

void* tg_cuda_driver_entry(const char* symbol) {
  void* fn = NULL;
  int i;
  if (!symbol)
    return NULL;
  pthread_mutex_lock(&entry_mutex);
  for (i = 0; i < ENTRY_SLOTS && entry_names[i]; ++i)
    if (entry_names[i] == symbol || strcmp(entry_names[i], symbol) == 0) {
      fn = entry_fns[i];
      pthread_mutex_unlock(&entry_mutex);
      return fn;
    }
  {
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      fn = NULL;
    (void)cudaGetLastError();
  }
  if (i < ENTRY_SLOTS) { /* cache successes and failures alike; the names are literals */
    entry_names[i] = symbol;
    entry_fns[i] = fn;
  }
  pthread_mutex_unlock(&entry_mutex);
  return fn;
}

/* ---- stream slots (variant.h) -----------------------------------------------------------------
 * Persistent kernels whose tiles differ in cost (causal attention) draw them from a pair of
 * counters in their module's device memory (a __device__ array, zero when the module loads,
 * also after cudaDeviceReset), one pair per slot. A slot stands for a (device, stream): launches
 * on one stream never overlap, and each launch's last block zeroes its pair, so the pair is
 * ready for the next launch on that stream. The per-thread default stream is a different stream
 * in every thread, so its key includes the thread. Nothing here allocates device memory. */
typedef struct stream_slot {
  int device;
  void* stream;
  pthread_t thread; /* only for cudaStreamPerThread */
} stream_slot;
static pthread_mutex_t slot_mutex = PTHREAD_MUTEX_INITIALIZER;
static stream_slot slots[TG_CUDA_STREAM_SLOTS];
static int slots_used;
static pthread_once_t slot_env_once = PTHREAD_ONCE_INIT;
static int slots_disabled;
static _Thread_local int last_device = -1;
static _Thread_local void* last_stream;
static _Thread_local int last_slot = -1;

static void slot_read_env(void) {
  const char* v = getenv("TILEGEN_GPU_STATIC_TILES");
  slots_disabled = v && v[0] && strcmp(v, "0") != 0;
}

/* Split workspaces, one per slot (a slot's launches are on one stream of one device). */
static void* split_mem[TG_CUDA_STREAM_SLOTS];
static size_t split_size[TG_CUDA_STREAM_SLOTS];
static pthread_mutex_t split_mutex = PTHREAD_MUTEX_INITIALIZER;
/* Realign workspaces, one per slot: contents are the calls' business (each call copies in what
 * it reads); a slot's pointer and size change under its realign_lock and split_mutex. */
static void* realign_mem[TG_CUDA_STREAM_SLOTS];
static size_t realign_size[TG_CUDA_STREAM_SLOTS];

/* Replaces *mem (of *size bytes) with at least `bytes` of new device memory whose first
 * `zero_bytes` are zeroed on `stream`: the old memory is freed once the stream is done with it
 * (launches and copies already queued may still use it). The pointer is published before the
 * size (the split workspace's lock-free path reads the size first). NULL, *mem kept or emptied,
 * on a CUDA error (cleared). The caller holds split_mutex. */
static void* grow_memory(void** mem, size_t* size, size_t bytes, size_t zero_bytes, void* stream) {
  void* p = NULL;
  if (*mem) {
    if (cudaStreamSynchronize((cudaStream_t)stream) != cudaSuccess || cudaFree(*mem) != cudaSuccess) {
      (void)cudaGetLastError();
      return NULL;
    }
    __atomic_store_n(size, 0, __ATOMIC_RELEASE);
    *mem = NULL;
  }
  if (cudaMalloc(&p, bytes) != cudaSuccess ||
      (zero_bytes && cudaMemsetAsync(p, 0, zero_bytes, (cudaStream_t)stream) != cudaSuccess)) {
    (void)cudaGetLastError();
    if (p)
      (void)cudaFree(p);
    (void)cudaGetLastError();
    return NULL;
  }
  __atomic_store_n(mem, p, __ATOMIC_RELAXED);
  __atomic_store_n(size, bytes, __ATOMIC_RELEASE);
  return p;
}

/* A feature switch that is on unless the environment sets it to 0. */
static int env_off(const char* name) {
  const char* v = getenv(name);
  return v && strcmp(v, "0") == 0;
}

static pthread_once_t split_once = PTHREAD_ONCE_INIT;
static int split_disabled;

static void split_read_env(void) { split_disabled = env_off("TILEGEN_GPU_SPLIT"); }

void* tg_cuda_split_workspace(int slot, void* stream, size_t bytes) {
  void* p;
  /* TILEGEN_GPU_SPLIT=0 (read once per process): no workspace, so every tile runs whole */
  pthread_once(&split_once, split_read_env);
  if (split_disabled)
    return NULL;
  if (slot < 0 || slot >= TG_CUDA_STREAM_SLOTS || bytes < TG_CUDA_SPLIT_FLAG_BYTES)
    return NULL;
  /* the launch path: no lock once the slot's memory is large enough (the size is published
   * after the pointer) */
  if (__atomic_load_n(&split_size[slot], __ATOMIC_ACQUIRE) >= bytes)
    return __atomic_load_n(&split_mem[slot], __ATOMIC_RELAXED);
  pthread_mutex_lock(&split_mutex);
  p = split_size[slot] >= bytes
          ? split_mem[slot]
          : grow_memory(&split_mem[slot], &split_size[slot], bytes, TG_CUDA_SPLIT_FLAG_BYTES, stream);
  pthread_mutex_unlock(&split_mutex);
  return p;
}

void tg_cuda_free_split_workspaces(void) {
  int i, current = -1;
  if (cudaGetDevice(&current) != cudaSuccess)
    current = -1;
  pthread_mutex_lock(&split_mutex);
  pthread_mutex_lock(&slot_mutex);
  for (i = 0; i < TG_CUDA_STREAM_SLOTS; ++i) {
    if (!split_mem[i] && !realign_mem[i])
      continue;
    /* the slot's device: launches on it may still use the memory */
    if (i < slots_used && cudaSetDevice(slots[i].device) == cudaSuccess)
      (void)cudaDeviceSynchronize();
    if (split_mem[i])
      (void)cudaFree(split_mem[i]);
    if (realign_mem[i])
      (void)cudaFree(realign_mem[i]);
    __atomic_store_n(&split_size[i], 0, __ATOMIC_RELEASE);
    __atomic_store_n(&realign_size[i], 0, __ATOMIC_RELEASE);
    split_mem[i] = NULL;
    realign_mem[i] = NULL;
  }
  pthread_mutex_unlock(&slot_mutex);
  pthread_mutex_unlock(&split_mutex);
  if (current >= 0)
    (void)cudaSetDevice(current);
  (void)cudaGetLastError();
}

/* The slot of `stream` on the current device, or -1 (capture, every slot taken, an error). */
static int slot_of(void* stream) {
  int device = -1, i, slot = -1;
  int per_thread = stream == (void*)cudaStreamPerThread;
  enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (stream == (void*)cudaStreamLegacy)
    stream = NULL; /* the same stream as 0 */
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaStreamIsCapturing((cudaStream_t)stream, &capture) != cudaSuccess) {
    (void)cudaGetLastError(); /* ours: the launch checks cudaGetLastError next */
    return -1;
  }
  if (capture != cudaStreamCaptureStatusNone)
    return -1;
  /* A slot never changes once given, so each thread keeps its last answer (no lock, no scan
   * on the launch path of a thread that keeps using one stream). */
  if (device == last_device && stream == last_stream && last_slot >= 0)
    return last_slot;
  pthread_mutex_lock(&slot_mutex);
  for (i = 0; i < slots_used; ++i)
    if (slots[i].device == device && slots[i].stream == stream &&
        (!per_thread || pthread_equal(slots[i].thread, pthread_self()))) {
      slot = i;
      break;
    }
  if (slot < 0 && slots_used < TG_CUDA_STREAM_SLOTS) {
    slot = slots_used++;
    memset(&slots[slot], 0, sizeof slots[slot]);
    slots[slot].device = device;
    slots[slot].stream = stream;
    if (per_thread)
      slots[slot].thread = pthread_self();
  }
  pthread_mutex_unlock(&slot_mutex);
  last_device = device;
  last_stream = stream;
  last_slot = slot;
  return slot;
}

int tg_cuda_stream_slot(void* stream) {
  pthread_once(&slot_env_once, slot_read_env);
  if (slots_disabled)
    return -1;
  return slot_of(stream);
}

void* tg_cuda_split_acquire(void* stream, size_t bytes, int* graph_owned) {
  enum cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  void* p = NULL;
  int slot;
  *graph_owned = 0;
  pthread_once(&slot_env_once, slot_read_env);
  pthread_once(&split_once, split_read_env);
  if (slots_disabled || split_disabled || bytes < TG_CUDA_SPLIT_FLAG_BYTES)
    return NULL;
  if (stream == (void*)cudaStreamLegacy)
    stream = NULL;
  if (cudaStreamIsCapturing((cudaStream_t)stream, &capture) != cudaSuccess) {
    (void)cudaGetLastError();
    return NULL;
  }
  if (capture == cudaStreamCaptureStatusNone)
    return (slot = slot_of(stream)) >= 0 ? tg_cuda_split_workspace(slot, stream, bytes) : NULL;
  if (capture != cudaStreamCaptureStatusActive)
    return NULL;
  /* Captured: memory the graph owns (an allocation node, the words zeroed by a memset node; each
   * replay gets them zero), so that no replay shares the stream slot's workspace with launches
   * outside the graph or with another graph, and none outlives a workspace that grew. */
  if (cudaMallocAsync(&p, bytes, (cudaStream_t)stream) != cudaSuccess) {
    (void)cudaGetLastError();
    return NULL;
  }
  if (cudaMemsetAsync(p, 0, TG_CUDA_SPLIT_FLAG_BYTES, (cudaStream_t)stream) != cudaSuccess) {
    (void)cudaGetLastError();
    (void)cudaFreeAsync(p, (cudaStream_t)stream);
    (void)cudaGetLastError();
    return NULL;
  }
  *graph_owned = 1;
  return p;
}

void tg_cuda_split_release(void* mem, void* stream) {
  if (stream == (void*)cudaStreamLegacy)
    stream = NULL;
  if (mem && cudaFreeAsync(mem, (cudaStream_t)stream) != cudaSuccess)
    (void)cudaGetLastError();
}

static pthread_once_t pdl_once = PTHREAD_ONCE_INIT;
static int pdl_disabled;

static void pdl_read_env(void) { pdl_disabled = env_off("TILEGEN_GPU_PDL"); }

int tg_cuda_pdl(void) {
  pthread_once(&pdl_once, pdl_read_env);
  return !pdl_disabled;
}

static pthread_once_t realign_once = PTHREAD_ONCE_INIT;
static int realign_disabled;
/* held by a call from tg_cuda_realign_workspace to tg_cuda_realign_release */
static pthread_mutex_t realign_lock[TG_CUDA_STREAM_SLOTS];

static void realign_init(void) {
  int i;
  realign_disabled = env_off("TILEGEN_GPU_REALIGN");
  for (i = 0; i < TG_CUDA_STREAM_SLOTS; ++i)
    pthread_mutex_init(&realign_lock[i], NULL);
}

void* tg_cuda_realign_workspace(void* stream, size_t bytes, int* slot_out) {
  void* p = NULL;
  int slot;
  pthread_once(&realign_once, realign_init);
  if (slot_out)
    *slot_out = -1;
  if (!slot_out || realign_disabled || bytes == 0 || (slot = slot_of(stream)) < 0)
    return NULL;
  pthread_mutex_lock(&realign_lock[slot]);
  if (realign_size[slot] < bytes) {
    pthread_mutex_lock(&split_mutex);
    p = grow_memory(&realign_mem[slot], &realign_size[slot], bytes, 0, stream);
    pthread_mutex_unlock(&split_mutex);
    if (!p) {
      pthread_mutex_unlock(&realign_lock[slot]);
      return NULL;
    }
  }
  *slot_out = slot;
  return realign_mem[slot];
}

void tg_cuda_realign_release(int slot) {
  if (slot >= 0 && slot < TG_CUDA_STREAM_SLOTS)
    pthread_mutex_unlock(&realign_lock[slot]);
}
