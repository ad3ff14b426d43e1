// grid_fold.yaml's CUDA variants (sm_80 and sm_90) on a GPU, for grids over CUDA's 65535 blocks
// in y or z: Y = 2 X + b for every (b, h, n), checked element by element, with the tensors
// aligned (the ordinary grids take tg_kernel<16>) and one element off (tg_kernel<0>). The
// folded grids run tg_kernel<0>, whose blocks decode (bx, by, bz) from their number along x:
// a wrong decode leaves elements unwritten or writes them twice with the wrong b. Skipped,
// visibly, without a GPU. (GridHostTest.cpp checks the host side without one; bench/cuda's
// `tgb_sanitize grid` runs the shipped kernels' folded grids.)
#include "GridVariant.h"

#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

bool have_gpu(int* cc) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    (void)cudaGetLastError();
    return false;
  }
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, 0) != cudaSuccess)
    return false;
  *cc = p.major * 10 + p.minor;
  return true;
}

class GridDevice : public ::testing::TestWithParam<const char*> {
protected:
  void SetUp() override {
    int cc = 0;
    if (!have_gpu(&cc))
      GTEST_SKIP() << "no CUDA device: the folded grids were not run";
    if (std::string(GetParam()) == "sm_90" && cc < 90)
      GTEST_SKIP() << "the sm_90 variant needs cc 9.0, this GPU has " << cc;
  }
  GridVariant v() const {
    return std::string(GetParam()) == "sm_80" ? grid_variant_sm_80() : grid_variant_sm_90();
  }
};

// Runs Y = 2 X + b on (B, H, N) with the tensors `off` elements past a 256-byte boundary;
// returns the number of wrong elements of Y (every one is written).
int64_t run_and_check(const GridVariant& gv, int64_t B, int64_t H, int64_t N, int off) {
  const int64_t n = B * H * N;
  std::vector<float> x(n), y(n, -12345.f);
  std::mt19937 rng(static_cast<unsigned>(B * 7 + H * 13 + N));
  std::uniform_real_distribution<float> u(-4.f, 4.f);
  for (auto& e : x)
    e = u(rng);
  float *dx = nullptr, *dy = nullptr;
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&dx), (n + 4) * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&dy), (n + 4) * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dx + off, x.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(dy + off, y.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  void* tensors[] = {dx + off, dy + off};
  int64_t dims[] = {B, H, N};
  tg_variant_args args{tensors, dims, nullptr, nullptr};
  tg_launch l{sizeof(tg_launch), 0, nullptr, 0};
  EXPECT_EQ(gv.run(&l, &args), TG_OK);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(y.data(), dy + off, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(dx);
  cudaFree(dy);
  int64_t bad = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < H * N; ++i) {
      const int64_t e = b * H * N + i;
      if (y[e] != 2.0f * x[e] + static_cast<float>(b)) {
        if (bad < 5)
          ADD_FAILURE() << "Y[" << b << ", " << i / N << ", " << i % N << "] = " << y[e] << ", want "
                        << 2.0f * x[e] + static_cast<float>(b);
        ++bad;
      }
    }
  return bad;
}

TEST_P(GridDevice, FoldedGridsComputeEveryElementOnce) {
  const GridVariant gv = v();
  struct Case {
    int64_t B, H, N;
  } cases[] = {
      {2, 3, 200},     // fits: as before
      {1, 70000, 100}, // y over 65535 (2 blocks along x)
      {70000, 1, 64},  // z over
      {3, 65537, 1},   // y just over, with z
      {65536, 2, 65},  // z just over, with x and y
  };
  for (const Case& c : cases)
    for (int off : {0, 1}) {
      SCOPED_TRACE(::testing::Message() << "B=" << c.B << " H=" << c.H << " N=" << c.N << " +" << off);
      EXPECT_EQ(run_and_check(gv, c.B, c.H, c.N, off), 0);
    }
}

INSTANTIATE_TEST_SUITE_P(Targets, GridDevice, ::testing::Values("sm_80", "sm_90"));

} // namespace
