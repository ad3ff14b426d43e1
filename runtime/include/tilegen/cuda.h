/* The CUDA part of the runtime: libtilegen_runtime_cuda (CMake: TileGen::runtime_cuda), built
 * only where the CUDA toolkit is found. Generated dispatch files of libraries with CUDA
 * variants include this header; CPU-only libraries never see it and never link cudart.
 *
 * The library is plain C over the CUDA runtime API, linked to the static cudart: cudart loads
 * the driver (libcuda.so) with dlopen when first used, so nothing here needs libcuda at link
 * time, and a machine without a driver or a GPU simply reports "no device" (cc 0) and the
 * dispatch code runs the CPU variants. This header needs no CUDA header: errors cross it as
 * ints (cudaError_t values). See docs/dispatch.md. */
#ifndef TILEGEN_CUDA_H
#define TILEGEN_CUDA_H

#include "tilegen/dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Compute capability x 10 of CUDA device `device` (80 for an A100, 90 for an H100/H200), or
 * 0 when no CUDA variant can run there: no driver, no device, an ordinal out of range, or a
 * negative ordinal. Then *why (if why is not NULL) points at a static sentence, e.g.
 * "no CUDA device: cudaGetDeviceCount returned cudaErrorInsufficientDriver". Detected once per
 * ordinal (and the device count once per process) and cached: later calls are one atomic
 * load. Thread-safe. A tg_device_cc_fn. */
int tg_cuda_device_cc(int device, const char** why);

/* The tg_status of a cudaError_t value: cudaSuccess -> TG_OK, cudaErrorMemoryAllocation ->
 * TG_ERR_OUT_OF_MEMORY, invalid values/handles -> TG_ERR_INVALID_ARGUMENT, no device / no
 * kernel image for it -> TG_ERR_NO_VARIANT, anything else -> TG_ERR_DEVICE. */
tg_status tg_cuda_status(int cuda_error);

/* Makes `device` the calling thread's current CUDA device for one call: if it already is
 * (the common case: one cudaGetDevice, a thread-local read), nothing changes and *restore is
 * -1; else cudaSetDevice(device) and *restore is the previous device, which
 * tg_cuda_device_leave(*restore) makes current again, so that a call leaves the caller's
 * current device as it found it. Returns TG_OK or the error of cudaGetDevice/cudaSetDevice
 * (tg_cuda_status). */
tg_status tg_cuda_device_enter(int device, int* restore);
void tg_cuda_device_leave(int restore);

/* Runs GPU row `e` for a call: enters launch's device (0 for a NULL launch), calls e->fn,
 * leaves. What the generated dispatch function does once it selected a CUDA row. */
tg_status tg_cuda_run(const tg_variant_entry* e, const tg_launch* launch,
                      const tg_variant_args* args);

/* The same for e->desc: fills *out with the launch e->fn would perform, launching nothing
 * (the dispatch library's _desc functions). TG_ERR_NO_VARIANT if `e` is not a GPU row. */
tg_status tg_cuda_describe(const tg_variant_entry* e, const tg_launch* launch,
                           const tg_variant_args* args, tg_gpu_launch_desc* out);

/* Frees the split and realign workspaces (tg_cuda_split_workspace and tg_cuda_realign_workspace
 * in tilegen/variant.h: device memory per stream that persistent Hopper kernels and calls with
 * misaligned tensors keep until the process exits) after synchronizing each workspace's device. Later launches allocate them again. For leak checkers and programs that
 * hand the memory back before they exit; not to be called while another thread launches. */
void tg_cuda_free_split_workspaces(void);

#ifdef __cplusplus
}
#endif
#endif /* TILEGEN_CUDA_H */
