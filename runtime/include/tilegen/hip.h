/* The HIP part of the runtime: libtilegen_runtime_hip (CMake: TileGen::runtime_hip). Dispatch
 * libraries with HIP variants link it; others never see it (docs/hip.md).
 *
 * Plain C with no HIP header and no link-time dependency on libamdhip64: the HIP runtime is
 * loaded with dlopen on first use (TILEGEN_HIP_LIBRARY if set, else libamdhip64.so.6,
 * libamdhip64.so.5, libamdhip64.so), so one binary runs on machines without ROCm, where
 * tg_hip_device_arch reports no device and the dispatch code runs the C variants, with
 * _query saying why. HIP variants are compiled device-only into code objects that the build
 * embeds in the variant's host object (tg_hip_image); the runtime loads the device's image with
 * hipModuleLoadData once per device and launches with hipModuleLaunchKernel on the call's
 * stream, never synchronizing.
 *
 * Built with TILEGEN_HIP_PLATFORM_NVIDIA (bench/hip), the same layer runs HIP's NVIDIA
 * platform: device queries through the CUDA runtime, modules through the CUDA driver API (the
 * calls HIP's nvidia_detail headers make), images are cubins with arch "nvidia". */
#ifndef TILEGEN_HIP_H
#define TILEGEN_HIP_H

#include "tilegen/dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One code object of a variant: the arch it was built for ("gfx942"; "nvidia" for a cubin)
 * and its bytes [begin, end). */
typedef struct tg_hip_image {
  const char* arch;
  const unsigned char* begin;
  const unsigned char* end;
} tg_hip_image;

#define TG_HIP_CACHED_DEVICES 16
#define TG_HIP_MAX_KERNELS 4

/* A variant's module: its images, its kernels by name, and (zero-initialized static storage)
 * the runtime's per-device cache of the loaded module and functions. */
typedef struct tg_hip_module {
  const tg_hip_image* images;
  size_t n_images;
  const char* const* kernels;
  int n_kernels;
  struct {
    int state; /* 0: not loaded; 1: loaded; 2: failed (status in `error`) */
    int error;
    void* module;
    void* fn[TG_HIP_MAX_KERNELS];
  } dev[TG_HIP_CACHED_DEVICES];
} tg_hip_module;

/* The target a HIP device runs: "gfx90a", "gfx942" or "gfx1100" for those archs (the part
 * of gcnArchName before ':'), "hip" for any other device (only portable variants run there;
 * on the NVIDIA platform every device), or NULL when no HIP variant can run there: no HIP
 * runtime, no device, an ordinal out of range, a negative ordinal. Then *why (if why is not
 * NULL) points at a static sentence, e.g. "no HIP runtime: libamdhip64.so.6: cannot open
 * shared object file". Probed once per ordinal and cached; thread-safe. A tg_device_arch_fn. */
const char* tg_hip_device_arch(int device, const char** why);

/* The device's arch as the runtime reports it ("gfx942:sramecc+:xnack-"), or "" (no device). */
const char* tg_hip_device_arch_name(int device);

/* The tg_status of a hipError_t value: hipSuccess -> TG_OK, out of memory ->
 * TG_ERR_OUT_OF_MEMORY, invalid values/handles -> TG_ERR_INVALID_ARGUMENT, no device or no
 * code object for it -> TG_ERR_NO_VARIANT, anything else -> TG_ERR_DEVICE. */
tg_status tg_hip_status(int hip_error);

/* Runs HIP row `e`: makes launch's device (0 for a NULL launch) current for the call, calls
 * e->fn, restores the caller's current device. */
tg_status tg_hip_run(const tg_variant_entry* e, const tg_launch* launch,
                     const tg_variant_args* args);

/* Launches kernel `kernel` of `m` on the current device: the image for its arch (loaded once
 * per device), grid[0..2] blocks of `block` threads, `smem` bytes of dynamic LDS, on `stream`
 * (NULL: the null stream), with the kernel's one by-value parameter at `params` (`size` bytes).
 * Never synchronizes. TG_ERR_NO_VARIANT when no image is for the device's arch. */
tg_status tg_hip_launch(tg_hip_module* m, int kernel, const unsigned grid[3], unsigned block,
                        size_t smem, void* stream, void* params, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* TILEGEN_HIP_H */
