// What GridHostTest.cpp sees of one CUDA variant of grid_fold.yaml (GridVariant.cu.in).
#pragma once

#include "tilegen/variant.h"

#include <cstddef>

struct GridVariant {
  tg_variant_fn run;      // the variant function (tgv_...)
  tg_gpu_desc_fn desc;    // its _desc twin
  size_t params_bytes;    // sizeof(tg_params): the kernels' one by-value parameter
  size_t fold_offset;     // offsetof(tg_params, tg_fold)
  const void* kernel_vec16; // tg_kernel<16>: 16-byte vectors (aligned tensors)
  const void* kernel_vec0;  // tg_kernel<0>: element by element; also runs folded grids
};

extern "C" GridVariant grid_variant_sm_80();
extern "C" GridVariant grid_variant_sm_90();
