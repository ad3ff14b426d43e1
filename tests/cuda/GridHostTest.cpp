// The host code of CUDA variants for grids over CUDA's limits (2^31 - 1 blocks in x, 65535 in
// y and z), without a GPU: grid_fold.yaml's variants for sm_80 (triple-chevron launches) and
// sm_90 (cudaLaunchKernelEx, programmatic dependent launch) are generated and compiled by nvcc
// into this test, and the CUDA runtime entry points they call are replaced here by recorders
// (the executable's definitions win over libcudart's). Each call records the launches it would
// have made: kernel, grid, block and the parameter block. A grid that fits launches as it
// always did (tg_kernel<16> for aligned tensors, its grid as is, not folded); one over a limit
// runs folded: tg_kernel<0> along x, over as many launches of at most 2^31 - 1 blocks as it
// takes, each with the grid's x and y extents and its first block in tg_fold. (Before, such a
// call returned TG_ERR_UNSUPPORTED_SHAPE.) The device side (the block decode) is checked on a
// GPU by bench/cuda/grid_check.cpp.
#include "GridVariant.h"

#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace {

struct Launch {
  const void* func;
  dim3 grid, block;
  size_t smem;
  std::vector<unsigned char> params;
};
std::vector<Launch> g_launches;
size_t g_params_bytes = 0;

void record(const void* func, dim3 grid, dim3 block, size_t smem, void** args) {
  Launch l{func, grid, block, smem, {}};
  const auto* p = static_cast<const unsigned char*>(args[0]);
  l.params.assign(p, p + g_params_bytes);
  g_launches.push_back(std::move(l));
}

} // namespace

// ---- stand-ins for what the variants call (CUDA runtime, tilegen_runtime_cuda) ------------

namespace {
struct CallConfiguration {
  dim3 grid, block;
  size_t smem;
  cudaStream_t stream;
} g_config;
} // namespace

extern "C" {
// Triple-chevron launches (sm_80): nvcc pushes the configuration, then its stub pops it and
// launches through __cudaLaunchKernel with the handle of __cudaGetKernel (CUDA 13), or through
// cudaLaunchKernel (earlier toolkits).
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t smem, struct CUstream_st* stream) {
  g_config = {grid, block, smem, stream};
  return 0;
}
cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block, size_t* smem, void* stream) {
  *grid = g_config.grid;
  *block = g_config.block;
  *smem = g_config.smem;
  *static_cast<cudaStream_t*>(stream) = g_config.stream;
  return cudaSuccess;
}
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* func) {
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void*>(func));
  return cudaSuccess;
}
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 grid, dim3 block, void** args, size_t smem,
                               cudaStream_t) {
  record(reinterpret_cast<const void*>(kernel), grid, block, smem, args);
  return cudaSuccess;
}
cudaError_t cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t smem,
                             cudaStream_t) {
  record(func, grid, block, smem, args);
  return cudaSuccess;
}
cudaError_t cudaLaunchKernelExC(const cudaLaunchConfig_t* c, const void* func, void** args) {
  record(func, c->gridDim, c->blockDim, c->dynamicSmemBytes, args);
  return cudaSuccess;
}
cudaError_t cudaGetLastError(void) { return cudaSuccess; }
int tg_cuda_pdl(void) { return 1; }
void* tg_cuda_realign_workspace(void*, size_t, int* slot) {
  *slot = -1;
  return nullptr; // realigned copies: never here (aligned tensors), else in place
}
void tg_cuda_realign_release(int) {}
}

namespace {

// The tensors are never touched on the host: any 16-byte aligned addresses do.
void* const kX = reinterpret_cast<void*>(uintptr_t{1} << 40);
void* const kY = reinterpret_cast<void*>(uintptr_t{1} << 41);

struct Folded {
  int64_t gx, gy, first;
};
Folded fold_of(const GridVariant& v, const Launch& l) {
  int64_t f[3];
  std::memcpy(f, l.params.data() + v.fold_offset, sizeof f);
  return {f[0], f[1], f[2]};
}

// Runs the variant on dims (B, H, N); returns its status, the launches in g_launches.
int run(const GridVariant& v, int64_t B, int64_t H, int64_t N) {
  g_launches.clear();
  g_params_bytes = v.params_bytes;
  void* tensors[] = {kX, kY};
  int64_t dims[] = {B, H, N};
  tg_variant_args args{tensors, dims, nullptr, nullptr};
  return v.run(nullptr, &args);
}

class GridHost : public ::testing::TestWithParam<const char*> {
protected:
  GridVariant v() const {
    return std::string(GetParam()) == "sm_80" ? grid_variant_sm_80() : grid_variant_sm_90();
  }
};

TEST_P(GridHost, GridWithinLimitsLaunchesAsBefore) {
  const GridVariant gv = v();
  // grid (cdiv(N, 64), H, B) = (3, 65535, 65535): at the limits, one launch of the 16-byte kernel
  ASSERT_EQ(run(gv, 65535, 65535, 192), TG_OK);
  ASSERT_EQ(g_launches.size(), 1u);
  const Launch& l = g_launches[0];
  EXPECT_EQ(l.func, gv.kernel_vec16);
  EXPECT_EQ(l.grid.x, 3u);
  EXPECT_EQ(l.grid.y, 65535u);
  EXPECT_EQ(l.grid.z, 65535u);
  EXPECT_EQ(l.block.x, 64u);
  EXPECT_EQ(fold_of(gv, l).gx, 0) << "not folded";
}

TEST_P(GridHost, GridOverYOrZRunsFolded) {
  const GridVariant gv = v();
  struct Case {
    int64_t B, H, N, gx, gy, gz;
  } cases[] = {
      {1, 70000, 64, 1, 70000, 1},      // one row of 70000 rows: y over 65535
      {70000, 1, 1, 1, 1, 70000},       // z over 65535
      {65536, 3, 200, 4, 3, 65536},     // z just over, with x and y
      {2, 65536, 65, 2, 65536, 2},      // y just over
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << "B=" << c.B << " H=" << c.H << " N=" << c.N);
    ASSERT_EQ(run(gv, c.B, c.H, c.N), TG_OK);
    ASSERT_EQ(g_launches.size(), 1u);
    const Launch& l = g_launches[0];
    EXPECT_EQ(l.func, gv.kernel_vec0) << "folded grids run tg_kernel<0>";
    EXPECT_EQ(l.grid.x, static_cast<unsigned>(c.gx * c.gy * c.gz));
    EXPECT_EQ(l.grid.y, 1u);
    EXPECT_EQ(l.grid.z, 1u);
    EXPECT_EQ(l.block.x, 64u);
    const Folded f = fold_of(gv, l);
    EXPECT_EQ(f.gx, c.gx);
    EXPECT_EQ(f.gy, c.gy);
    EXPECT_EQ(f.first, 0);
  }
}

TEST_P(GridHost, GridOverXTakesSeveralLaunches) {
  const GridVariant gv = v();
  // N = 64 * 2^31: 2^31 blocks along x, one more than a launch takes.
  const int64_t gx = int64_t{1} << 31;
  ASSERT_EQ(run(gv, 1, 1, 64 * gx), TG_OK);
  ASSERT_EQ(g_launches.size(), 2u);
  EXPECT_EQ(g_launches[0].grid.x, 2147483647u);
  EXPECT_EQ(g_launches[1].grid.x, 1u);
  int64_t next = 0;
  for (const Launch& l : g_launches) {
    EXPECT_EQ(l.func, gv.kernel_vec0);
    const Folded f = fold_of(gv, l);
    EXPECT_EQ(f.gx, gx);
    EXPECT_EQ(f.gy, 1);
    EXPECT_EQ(f.first, next) << "launches cover the blocks in order, without a gap";
    next += l.grid.x;
  }
  EXPECT_EQ(next, gx);
  // 2^31 x 2 x 3 blocks: launches of 2^31 - 1 and a remainder, 12884901888 blocks in all.
  ASSERT_EQ(run(gv, 3, 2, 64 * gx), TG_OK);
  int64_t total = 0;
  for (const Launch& l : g_launches) {
    EXPECT_EQ(fold_of(gv, l).first, total);
    total += l.grid.x;
  }
  EXPECT_EQ(total, gx * 6);
  EXPECT_EQ(g_launches.size(), 7u);
}

TEST_P(GridHost, GridPastInt64IsUnsupported) {
  const GridVariant gv = v();
  // (2^56, 2^40, 2^40) blocks: more than int64 can number.
  EXPECT_EQ(run(gv, int64_t{1} << 40, int64_t{1} << 40, int64_t{1} << 62), TG_ERR_UNSUPPORTED_SHAPE);
  EXPECT_TRUE(g_launches.empty());
}

TEST_P(GridHost, EmptyGridLaunchesNothing) {
  const GridVariant gv = v();
  EXPECT_EQ(run(gv, 0, 70000, 64), TG_OK);
  EXPECT_EQ(run(gv, 70000, 70000, 0), TG_OK);
  EXPECT_TRUE(g_launches.empty());
}

TEST_P(GridHost, DescDescribesTheFoldedLaunch) {
  const GridVariant gv = v();
  g_params_bytes = gv.params_bytes;
  void* tensors[] = {kX, kY};
  tg_gpu_launch_desc d;
  int64_t dims[] = {1, 70000, 64};
  tg_variant_args args{tensors, dims, nullptr, nullptr};
  ASSERT_EQ(gv.desc(nullptr, &args, &d), TG_OK);
  EXPECT_EQ(d.func, gv.kernel_vec0);
  EXPECT_EQ(d.grid[0], 70000u);
  EXPECT_EQ(d.grid[1], 1u);
  EXPECT_EQ(d.grid[2], 1u);
  int64_t f[3];
  std::memcpy(f, d.params + gv.fold_offset, sizeof f);
  EXPECT_EQ(f[0], 1);
  EXPECT_EQ(f[1], 70000);
  EXPECT_EQ(f[2], 0);
  // A grid that fits is described as before.
  int64_t small[] = {2, 3, 64};
  args.dims = small;
  ASSERT_EQ(gv.desc(nullptr, &args, &d), TG_OK);
  EXPECT_EQ(d.func, gv.kernel_vec16);
  EXPECT_EQ(d.grid[1], 3u);
  EXPECT_EQ(d.grid[2], 2u);
  // One launch cannot run more than 2^31 - 1 blocks: _desc cannot describe the call.
  int64_t wide[] = {1, 1, int64_t{64} << 31};
  args.dims = wide;
  EXPECT_EQ(gv.desc(nullptr, &args, &d), TG_ERR_UNSUPPORTED_SHAPE);
}

INSTANTIATE_TEST_SUITE_P(Targets, GridHost, ::testing::Values("sm_80", "sm_90"));

} // namespace
