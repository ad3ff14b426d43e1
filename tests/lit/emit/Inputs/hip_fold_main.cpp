// Host pass of a generated HIP variant (the file TG_VARIANT_SOURCE names) with a recording
// tg_hip_launch instead of runtime/src/hip.c: prints every launch (kernel, grid, block and the
// params' tg_fold, the struct's last member) and the blocks launched, for the grids the args
// give (dims from the command line). tests/lit/emit/hip_grid_fold.test.
#define TG_HIP_IMAGES "hip_fold_images.h"
#include TG_VARIANT_SOURCE

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static int64_t tg_blocks = 0;

extern "C" tg_status tg_hip_launch(tg_hip_module* m, int kernel, const unsigned grid[3],
                                   unsigned block, size_t smem, void* stream, void* params,
                                   size_t size) {
  (void)smem;
  (void)stream;
  int64_t fold[3];
  std::memcpy(fold, static_cast<char*>(params) + size - sizeof fold, sizeof fold);
  std::printf("launch %s grid %u %u %u block %u fold %" PRId64 " %" PRId64 " %" PRId64 "\n",
              m->kernels[kernel], grid[0], grid[1], grid[2], block, fold[0], fold[1], fold[2]);
  tg_blocks += int64_t(grid[0]) * grid[1] * grid[2];
  return TG_OK;
}

int main(int argc, char** argv) {
  int64_t dims[8] = {0};
  for (int i = 1; i < argc && i <= 8; ++i)
    dims[i - 1] = std::strtoll(argv[i], nullptr, 10);
  void* tensors[8] = {nullptr};
  double scalars[8] = {0};
  int flags[8] = {0};
  tg_variant_args args = {tensors, dims, scalars, flags};
  const int s = TG_VARIANT_FUNCTION(nullptr, &args);
  std::printf("status %d blocks %" PRId64 "\n", s, tg_blocks);
  return 0;
}
