/* The host side of Metal variants (docs/metal.md). Each Metal variant is a kernel function in
 * the library's metallib plus a C launcher generated into <lib>_metal.c: the launcher has the
 * variant ABI of tilegen/variant.h, packs the kernel's parameters and grid into a
 * tg_metal_dispatch_desc and hands it to tg_metal_dispatch, which encodes it. Two
 * implementations of tg_metal_dispatch exist:
 *   runtime/src/metal.cpp     macOS: metal-cpp, encodes into the launch's command buffer
 *                             (never waits; built only on Apple platforms);
 *   tests/metal/sim/          the CPU simulator the tests link instead (runs the kernel's
 *                             threadgroups on the CPU, synchronously).
 *
 * Tensors of a Metal call are MTL::Buffer objects (id<MTLBuffer>), passed as void*: element 0
 * of the tensor is at offset 0 of the buffer. tg_launch.stream carries the MTL::CommandBuffer
 * the dispatch is encoded into (the caller commits it and waits, or not); tg_launch.device = -1
 * selects the CPU variants, as on every backend. */
#ifndef TILEGEN_METAL_H
#define TILEGEN_METAL_H

#include "tilegen/runtime.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_metal_dispatch_desc {
  const char* function;          /* the kernel function's name in the metallib */
  const unsigned char* metallib; /* the library's embedded metallib (NULL in the simulator) */
  size_t metallib_bytes;
  void* const* buffers;          /* one MTL::Buffer* per tensor: [[buffer(0)]], ... */
  size_t n_buffers;
  const void* params;            /* the kernel's tg_params, bound at [[buffer(n_buffers)]] */
  size_t params_bytes;
  size_t threadgroup_bytes;      /* [[threadgroup(0)]] length (a multiple of 16) */
  unsigned threads;              /* threads per threadgroup (a multiple of 32) */
  unsigned grid[3];              /* threadgroups per grid dimension, all > 0 */
  int gpu_family;                /* the MTLGPUFamilyApple<N> the variant needs */
} tg_metal_dispatch_desc;

/* Encodes one dispatch of `d` into the launch's command buffer (a compute command encoder of
 * its own), never commits or waits. Returns a tg_status: TG_OK, TG_ERR_INVALID_ARGUMENT (no
 * command buffer in the launch), TG_ERR_DEVICE (the metallib or the pipeline could not be
 * built; the reason goes to tg_metal_last_error). */
int tg_metal_dispatch(const tg_launch* launch, const tg_metal_dispatch_desc* d);

/* The last error of tg_metal_dispatch on this thread, or "" (static storage). */
const char* tg_metal_last_error(void);

/* The Apple GPU family x 10 of Metal device `device` (70 for MTLGPUFamilyApple7: M1, A14; 80
 * M2; 90 M3, M4), or 0 if no Metal variant can run there, with *why (if not NULL) a static
 * sentence saying why: not built for Apple platforms (the metallib needs macOS), no Metal
 * device, a family below 7. A tg_device_cc_fn (tilegen/dispatch.h): generated dispatch code of
 * libraries with Metal rows selects with it. Only device 0 (the system default device) exists. */
int tg_metal_device_family(int device, const char** why);

#ifdef __cplusplus
}
#endif
#endif /* TILEGEN_METAL_H */
