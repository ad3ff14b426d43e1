/* The ABI between a generated dispatch function and the variants it selects from. Users do
 * not call variants directly; the dispatch function validates arguments first. */
#ifndef TILEGEN_VARIANT_H
#define TILEGEN_VARIANT_H

#include "tilegen/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_variant_args {
  void* const* tensors;  /* one per spec tensor, declaration order */
  const int64_t* dims;   /* one per spec param, declaration order (value params included) */
  const double* scalars; /* one per spec scalar, declaration order (variant converts) */
  const int* flags;      /* one per spec flag, declaration order (0/1) */
} tg_variant_args;

/* Every variant function has this type. It computes its grid from args->dims, runs every
 * block and returns TG_OK or an error status. */
typedef int (*tg_variant_fn)(const tg_launch* launch, const tg_variant_args* args);

/* A GPU variant's launch, described instead of performed (the `_desc` twin of every GPU
 * variant function fills it): for benchmarks against a raw cudaLaunchKernel of the same
 * kernel, and for callers building CUDA graphs by hand. args[0] points at params, which holds
 * the kernel's single by-value parameter; copy the struct only together with fixing args[0]. */
#ifdef __cplusplus
#define TG_ALIGN16 alignas(16)
#else
#define TG_ALIGN16 _Alignas(16)
#endif
typedef struct tg_gpu_launch_desc {
  const void* func; /* the __global__ function (cudaLaunchKernel's `func`) */
  unsigned grid[3];
  unsigned block[3];
  size_t smem_bytes; /* dynamic shared memory */
  void* args[1];
  TG_ALIGN16 unsigned char params[1024];
} tg_gpu_launch_desc;

typedef int (*tg_gpu_desc_fn)(const tg_launch* launch, const tg_variant_args* args,
                              tg_gpu_launch_desc* out);

/* A CUDA driver function by name (cudaGetDriverEntryPointByVersion with the CUDA 12.0 ABI),
 * looked up once per process by tilegen_runtime_cuda; NULL without a driver or symbol. Hopper
 * variants get cuTensorMapEncodeTiled this way, so nothing links libcuda. `symbol` must
 * outlive the process (a string literal). */
void* tg_cuda_driver_entry(const char* symbol);

/* The slot of `stream` on the current device, 0 <= slot < TG_CUDA_STREAM_SLOTS, for persistent
 * kernels that draw their tiles at run time from a pair of counters per slot in their module's
 * device memory (zero when the module loads; each launch's last block zeroes its pair again).
 * Launches on one stream run one after another, which is what makes a pair per stream enough.
 * -1, and the kernel walks its tiles in a fixed order, when the stream is being captured into
 * a graph (a replay could run beside another launch on the stream's pair), when
 * TILEGEN_GPU_STATIC_TILES is set to a non-empty value other than 0, when every slot is taken,
 * or on a CUDA error (cleared). */
#define TG_CUDA_STREAM_SLOTS 256
int tg_cuda_stream_slot(void* stream);

/* Device memory of stream slot `slot` (tg_cuda_stream_slot of `stream`, on the current device)
 * for persistent kernels that run their last tiles in parts on several blocks (docs/hopper.md,
 * split tail): at least `bytes`, of which the first TG_CUDA_SPLIT_FLAG_BYTES are words the parts
 * meet on (TG_CUDA_SPLIT_CUTS arrival words, one per group of every level of a split tile's
 * join tree, then as many ready words, one per part's registers), zero between launches (each launch leaves the words it used at zero),
 * and the rest the parts' registers. Allocated on the first call and grown when a larger size is
 * asked for (the stream is synchronized before the old memory is freed); kept until the process
 * exits or tg_cuda_free_split_workspaces (tilegen/cuda.h). The zeroing is queued on `stream`, so
 * it is ordered before the launch that asked. NULL, and the kernel runs every tile whole, if it
 * cannot be allocated (the error is cleared) or the environment sets TILEGEN_GPU_SPLIT=0 (read
 * once per process; a diagnostic, like TILEGEN_GPU_PDL). */
#define TG_CUDA_SPLIT_CUTS 1024
#define TG_CUDA_SPLIT_FLAG_BYTES (8 * TG_CUDA_SPLIT_CUTS)
void* tg_cuda_split_workspace(int slot, void* stream, size_t bytes);

/* The workspace of one split launch on `stream` (the split loops of docs/cuda-backend.md, the
 * split tail of docs/hopper.md): outside a graph capture, tg_cuda_split_workspace of the stream's
 * slot (*graph_owned = 0); while `stream` is being captured into a CUDA graph, `bytes` of memory
 * the graph owns (*graph_owned = 1): a cudaMallocAsync node, a cudaMemsetAsync node zeroing the
 * first TG_CUDA_SPLIT_FLAG_BYTES, and the caller's tg_cuda_split_release after its launches adds
 * the cudaFreeAsync node, so every replay starts from zeroed words and no replay shares memory
 * with launches outside the graph. NULL (every tile runs whole) where TILEGEN_GPU_SPLIT=0 or
 * TILEGEN_GPU_STATIC_TILES is set, the stream has no slot, or on a CUDA error (cleared). */
void* tg_cuda_split_acquire(void* stream, size_t bytes, int* graph_owned);
void tg_cuda_split_release(void* mem, void* stream);

/* Device memory for realigned copies (docs/cuda-backend.md, "Realigned copies"): a call whose
 * tensors would run a CUDA variant's element-by-element kernel only because some of them start
 * off a 16-byte boundary copies those tensors here, runs the vectorized kernel on the copies and
 * copies its outputs back, all on `stream`. At least `bytes` of the memory of `stream`'s slot on
 * the current device (tg_cuda_stream_slot, without its TILEGEN_GPU_STATIC_TILES test), grown like
 * the split workspace and kept until the process exits or tg_cuda_free_split_workspaces
 * (tilegen/cuda.h). The call holds the slot's workspace from here to tg_cuda_realign_release
 * (*slot): it enqueues several operations that use it, and another thread's call on the same
 * stream must not enqueue its copies in between, so that call waits. NULL, and the call runs the
 * slow kernel in place, while the stream is being captured into a graph, when TILEGEN_GPU_REALIGN
 * is 0, when every slot is taken, or when the memory cannot be allocated (the error is
 * cleared); nothing is held then. Calls whose misaligned tensors total no more than
 * TG_CUDA_REALIGN_MIN_BYTES do not ask: the copies cost more than the slow kernel there (H200,
 * bf16 GEMM one element off: 0.027 ms with the copies at any size up to 256^3; the slow kernel
 * 0.021 ms at 64^3, 24 KB, and 0.046 ms at 128^3, 96 KB). */
#define TG_CUDA_REALIGN_MIN_BYTES 65536
void* tg_cuda_realign_workspace(void* stream, size_t bytes, int* slot);
void tg_cuda_realign_release(int slot);

/* Whether variants for cc 9.0+ targets (sm_90, sm_90a) launch their kernels with programmatic
 * dependent launch (cudaLaunchAttributeProgrammaticStreamSerialization; docs/hopper.md point 8):
 * 1 unless the environment sets TILEGEN_GPU_PDL=0 (read once per process). The kernels wait
 * (griddepcontrol.wait) before their first access to global memory, so the launch only overlaps
 * their prologue with the tail of the stream's previous kernel. */
int tg_cuda_pdl(void);

/* Worker threads of a CPU variant whose grid has gx x gy x gz blocks (each >= 1):
 * tg_launch_num_threads(launch), or `default_threads` (omp_get_max_threads()) when that is 0,
 * and never more than the blocks; at least 1. */
int tg_cpu_threads(const tg_launch* launch, int default_threads, int64_t gx, int64_t gy,
                   int64_t gz);

/* Per-thread scratch for CPU variants whose block tiles are too large for a thread's stack:
 * returns 64-byte aligned memory of at least `bytes`, owned by the calling thread, reused
 * across calls (grown when a larger size is asked for, freed when the thread exits), or NULL
 * if it cannot be allocated. Contents are undefined. Not async-signal-safe. */
void* tg_cpu_scratch(size_t bytes);

#ifdef __cplusplus
}
#endif
#endif /* TILEGEN_VARIANT_H */
