// A generated dispatch library with GPU rows (gfixlib: sm_80, sm_90, c, c_avx2; hand-written
// CUDA variants in GpuFixtureVariants.cu). Without a GPU: the calls run the CPU variants,
// _query says why, _desc has nothing to describe. With a GPU: the GPU variant runs on
// launch->stream (also under CUDA graph capture), _desc describes the same launch, and the
// dispatch function's host cost is compared with a raw cudaLaunchKernel.
#include "gfixlib.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

extern "C" const char* gfix_last_cpu_variant;
extern "C" const char* gfix_last_gpu_variant;

namespace {

int device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

std::string cpu_target() {
  return tg_cpu_has("avx2") && tg_cpu_has("fma") && tg_cpu_has("f16c") ? "c_avx2" : "c";
}

// Arguments of gfixlib_mix_f32 (instance f32_causal0_D64); pointers host or device.
struct Call {
  float* X = nullptr;
  uint16_t* W = nullptr;
  float* Y = nullptr;
  int8_t* Z = nullptr;
  int64_t M = 3, N = 8, D = 64;
  float scale = 2.0f;
  tg_status run(const tg_launch* l) {
    return gfixlib_mix_f32(l, X, W, Y, Z, M, N, D, scale, 0x3C00, 1, 0);
  }
  tg_status query(const tg_launch* l, tg_selection* out) {
    return gfixlib_mix_f32_query(l, X, W, Y, Z, M, N, D, scale, 0x3C00, 1, 0, out);
  }
  tg_status desc(const tg_launch* l, tg_gpu_launch_desc* out) {
    return gfixlib_mix_f32_desc(l, X, W, Y, Z, M, N, D, scale, 0x3C00, 1, 0, out);
  }
};

struct HostBuffers {
  std::vector<float> X, Y;
  std::vector<uint16_t> W;
  std::vector<int8_t> Z;
  Call call;
  HostBuffers() : X(3 * 8, 1.0f), Y(3 * 16), W(64), Z(3) {
    call.X = X.data();
    call.W = W.data();
    call.Y = Y.data();
    call.Z = Z.data();
  }
};

TEST(DispatchGpu, NoDeviceFallsBackToTheCpu) {
  if (device_count() > 0)
    GTEST_SKIP() << "a CUDA device is present";
  HostBuffers h;
  gfix_last_cpu_variant = "";
  gfix_last_gpu_variant = "";
  ASSERT_EQ(h.call.run(nullptr), TG_OK); // NULL launch = device 0, which does not exist
  EXPECT_EQ(std::string(gfix_last_cpu_variant),
            "tgv_gfixlib__mix__f32_causal0_D64__" + cpu_target());
  EXPECT_STREQ(gfix_last_gpu_variant, "");

  tg_selection sel;
  ASSERT_EQ(h.call.query(nullptr, &sel), TG_OK);
  EXPECT_EQ(std::string(sel.target), cpu_target());
  std::string why = sel.reason;
  EXPECT_EQ(why.rfind("no CUDA device: cudaGetDeviceCount returned cudaError", 0), 0u) << why;
  EXPECT_NE(why.find("; fell back to " + cpu_target() + ": "), std::string::npos) << why;

  tg_gpu_launch_desc d;
  EXPECT_EQ(h.call.desc(nullptr, &d), TG_ERR_NO_VARIANT);
}

TEST(DispatchGpu, DeviceMinusOneIsTheCpu) {
  HostBuffers h;
  tg_launch l{};
  l.device = -1;
  gfix_last_cpu_variant = "";
  ASSERT_EQ(h.call.run(&l), TG_OK);
  EXPECT_EQ(std::string(gfix_last_cpu_variant),
            "tgv_gfixlib__mix__f32_causal0_D64__" + cpu_target());
  tg_selection sel;
  ASSERT_EQ(h.call.query(&l, &sel), TG_OK);
  EXPECT_EQ(std::string(sel.reason).rfind("launch->device = -1 selects the CPU; fell back to " +
                                              cpu_target(),
                                          0),
            0u)
      << sel.reason;
}

TEST(DispatchGpu, ArgumentsAreStillChecked) {
  HostBuffers h;
  tg_launch bad{};
  bad.device = -2;
  EXPECT_EQ(h.call.run(&bad), TG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(h.call.desc(nullptr, nullptr), TG_ERR_INVALID_ARGUMENT);
  h.call.D = 96;
  tg_gpu_launch_desc d;
  EXPECT_EQ(h.call.desc(nullptr, &d), TG_ERR_UNSUPPORTED_SHAPE);
}

// ---- with a GPU ----------------------------------------------------------------------------

struct DeviceBuffers {
  Call call;
  DeviceBuffers(int64_t M, int64_t N) {
    call.M = M;
    call.N = N;
    cudaMalloc(reinterpret_cast<void**>(&call.X), sizeof(float) * (size_t)(M * N) + 1);
    cudaMalloc(reinterpret_cast<void**>(&call.Y), sizeof(float) * (size_t)(M * 2 * N) + 1);
    cudaMalloc(reinterpret_cast<void**>(&call.W), 2 * 64);
    cudaMalloc(reinterpret_cast<void**>(&call.Z), (size_t)(N + 2) / 3 + 1);
    std::vector<float> x((size_t)(M * N));
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = (float)i;
    cudaMemcpy(call.X, x.data(), sizeof(float) * x.size(), cudaMemcpyHostToDevice);
    cudaMemset(call.Y, 0, sizeof(float) * (size_t)(M * 2 * N));
  }
  ~DeviceBuffers() {
    cudaFree(call.X);
    cudaFree(call.Y);
    cudaFree(call.W);
    cudaFree(call.Z);
  }
  // Y[m, j] == X[m, j / 2] * scale everywhere?
  bool result_ok() {
    std::vector<float> y((size_t)(call.M * 2 * call.N));
    cudaMemcpy(y.data(), call.Y, sizeof(float) * y.size(), cudaMemcpyDeviceToHost);
    for (int64_t m = 0; m < call.M; ++m)
      for (int64_t j = 0; j < 2 * call.N; ++j)
        if (y[(size_t)(m * 2 * call.N + j)] != (float)(m * call.N + j / 2) * call.scale)
          return false;
    return true;
  }
};

TEST(DispatchGpuDevice, RunsTheClosestGpuVariant) {
  if (device_count() == 0)
    GTEST_SKIP() << "no CUDA device";
  cudaDeviceProp p;
  ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
  int cc = p.major * 10 + p.minor;
  DeviceBuffers b(37, 136); // N: multiple of 8 (the fixture), M ragged
  gfix_last_gpu_variant = "";
  ASSERT_EQ(b.call.run(nullptr), TG_OK);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(b.result_ok());
  std::string want = cc >= 90 ? "sm_90" : "sm_80";
  EXPECT_EQ(std::string(gfix_last_gpu_variant), "tgv_gfixlib__mix__f32_causal0_D64__" + want);
  tg_selection sel;
  ASSERT_EQ(b.call.query(nullptr, &sel), TG_OK);
  EXPECT_EQ(std::string(sel.target), want);
  std::printf("query: %s\n", sel.reason);
}

TEST(DispatchGpuDevice, EmptyCallLaunchesNothing) {
  if (device_count() == 0)
    GTEST_SKIP() << "no CUDA device";
  DeviceBuffers b(0, 8);
  EXPECT_EQ(b.call.run(nullptr), TG_OK);
  tg_gpu_launch_desc d;
  EXPECT_EQ(b.call.desc(nullptr, &d), TG_ERR_INVALID_ARGUMENT); // nothing to launch
}

TEST(DispatchGpuDevice, StreamAndGraphCapture) {
  if (device_count() == 0)
    GTEST_SKIP() << "no CUDA device";
  DeviceBuffers b(5, 64);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  tg_launch l{};
  l.stream = s;
  cudaGraph_t g;
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  ASSERT_EQ(b.call.run(&l), TG_OK); // captured, not run: nothing synchronizes
  ASSERT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
  EXPECT_FALSE(b.result_ok());
  cudaGraphExec_t ge;
  ASSERT_EQ(cudaGraphInstantiate(&ge, g, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(ge, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_TRUE(b.result_ok());
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
}

TEST(DispatchGpuDevice, DescDescribesTheSameLaunch) {
  if (device_count() == 0)
    GTEST_SKIP() << "no CUDA device";
  DeviceBuffers b(7, 32);
  tg_gpu_launch_desc d;
  ASSERT_EQ(b.call.desc(nullptr, &d), TG_OK);
  ASSERT_EQ(cudaLaunchKernel(d.func, dim3(d.grid[0], d.grid[1], d.grid[2]),
                             dim3(d.block[0], d.block[1], d.block[2]), d.args, d.smem_bytes,
                             nullptr),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(b.result_ok());
}

// The host cost of a dispatch call (checks, cached selection, current device, the variant's
// own launch) against a raw cudaLaunchKernel of the same kernel, in one binary. Printed; the
// bound is loose (the fake variant rebuilds a 1 KB launch description on every call).
TEST(DispatchGpuDevice, HostCostAgainstRawLaunch) {
  if (device_count() == 0)
    GTEST_SKIP() << "no CUDA device";
  DeviceBuffers b(1, 8);
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  tg_launch l{};
  l.stream = s;
  tg_gpu_launch_desc d;
  ASSERT_EQ(b.call.desc(&l, &d), TG_OK);
  const int reps = 20000;
  auto time = [&](auto&& fn) {
    double best = 1e30;
    for (int round = 0; round < 5; ++round) {
      cudaStreamSynchronize(s);
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < reps; ++i)
        fn();
      auto t1 = std::chrono::steady_clock::now();
      cudaStreamSynchronize(s);
      best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / reps);
    }
    return best;
  };
  double raw = time([&] {
    cudaLaunchKernel(d.func, dim3(d.grid[0]), dim3(d.block[0]), d.args, d.smem_bytes, s);
  });
  double dispatch = time([&] { b.call.run(&l); });
  std::printf("host cost per call: raw cudaLaunchKernel %.0f ns, dispatch %.0f ns (%.2fx)\n",
              raw, dispatch, dispatch / raw);
  EXPECT_LT(dispatch, 2.0 * raw);
  cudaStreamDestroy(s);
}

} // namespace
