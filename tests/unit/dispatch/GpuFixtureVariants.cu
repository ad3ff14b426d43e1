// Hand-written CUDA variants of the dispatch fixture's GPU library (gfixlib: kernel "mix",
// instances f32_causal{0,1}_D{64,128}, targets sm_80 and sm_90), following the CUDA variant
// ABI (.agents/SESSION2.md, docs/internals.md) the generated .cu files export:
//   int tgv_..(const tg_launch*, const tg_variant_args*)          launch on launch->stream
//   int tgv_.._desc(const tg_launch*, const tg_variant_args*, tg_gpu_launch_desc*)
// The kernel is trivial and checkable: Y[m, j] = X[m, j / 2] * scale for Y of shape [M, 2N].
// It lets the dispatch and runtime tests run a real launch on a GPU (and a no-device fallback
// everywhere) before the generated kernels exist.
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "tilegen/variant.h"

namespace {

struct MixParams {
  const float* X;
  float* Y;
  int64_t M, N;
  float scale;
};

__global__ void mix_kernel(MixParams p) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  int64_t width = 2 * p.N;
  if (i >= p.M * width)
    return;
  int64_t m = i / width, j = i % width;
  p.Y[i] = p.X[m * p.N + j / 2] * p.scale;
}

// Tensors: X, W, Y, Z; dims: M, N, D; scalars: scale, bias, count (docs/internals.md order).
int describe(const tg_variant_args* a, tg_gpu_launch_desc* d) {
  MixParams p;
  p.X = static_cast<const float*>(a->tensors[0]);
  p.Y = static_cast<float*>(a->tensors[2]);
  p.M = a->dims[0];
  p.N = a->dims[1];
  p.scale = static_cast<float>(a->scalars[0]);
  int64_t total = p.M * 2 * p.N;
  if (total == 0)
    return TG_ERR_INVALID_ARGUMENT; // empty grid: nothing to launch
  static_assert(sizeof(MixParams) <= sizeof d->params, "params do not fit");
  d->func = reinterpret_cast<const void*>(mix_kernel);
  d->block[0] = 256;
  d->block[1] = d->block[2] = 1;
  d->grid[0] = static_cast<unsigned>((total + 255) / 256);
  d->grid[1] = d->grid[2] = 1;
  d->smem_bytes = 0;
  memcpy(d->params, &p, sizeof p);
  d->args[0] = d->params;
  return TG_OK;
}

int launch(const tg_launch* l, const tg_variant_args* a) {
  tg_gpu_launch_desc d;
  int s = describe(a, &d);
  if (s == TG_ERR_INVALID_ARGUMENT)
    return TG_OK; // empty: done without a launch
  cudaStream_t stream = l ? static_cast<cudaStream_t>(l->stream) : nullptr;
  cudaError_t e = cudaLaunchKernel(d.func, dim3(d.grid[0], d.grid[1], d.grid[2]),
                                   dim3(d.block[0], d.block[1], d.block[2]), d.args,
                                   d.smem_bytes, stream);
  return e == cudaSuccess ? TG_OK : TG_ERR_DEVICE;
}

} // namespace

extern "C" const char* gfix_last_gpu_variant = "";

#define GFIX_VARIANT(inst, target)                                                             \
  extern "C" int tgv_gfixlib__mix__##inst##__##target(const tg_launch* l,                      \
                                                        const tg_variant_args* a) {            \
    gfix_last_gpu_variant = "tgv_gfixlib__mix__" #inst "__" #target;                           \
    return launch(l, a);                                                                       \
  }                                                                                            \
  extern "C" int tgv_gfixlib__mix__##inst##__##target##_desc(                                  \
      const tg_launch*, const tg_variant_args* a, tg_gpu_launch_desc* out) {                   \
    return describe(a, out);                                                                   \
  }

#define GFIX_TARGETS(inst) GFIX_VARIANT(inst, sm_80) GFIX_VARIANT(inst, sm_90)
GFIX_TARGETS(f32_causal0_D64)
GFIX_TARGETS(f32_causal0_D128)
GFIX_TARGETS(f32_causal1_D64)
GFIX_TARGETS(f32_causal1_D128)
