// The CUDA runtime (tilegen/cuda.h). Everywhere: the probe's contract (negative and huge
// ordinals, cached answers with stable reasons, thread safety) and the error mapping. Without
// a driver or a GPU (the build machine): the "no device" answers. With a GPU: the compute
// capability, the current-device handling; those tests skip themselves elsewhere.
#include "tilegen/cuda.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

int device_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

TEST(CudaRuntime, NegativeAndHugeOrdinalsHaveNoCc) {
  const char* why = nullptr;
  EXPECT_EQ(tg_cuda_device_cc(-1, &why), 0);
  EXPECT_STREQ(why, "a negative device ordinal selects the CPU");
  why = nullptr;
  EXPECT_EQ(tg_cuda_device_cc(100000, &why), 0);
  ASSERT_NE(why, nullptr);
  EXPECT_NE(std::string(why), "");
  EXPECT_EQ(tg_cuda_device_cc(-1, nullptr), 0); // why is optional
}

TEST(CudaRuntime, OutOfRangeOrdinalIsNamed) {
  int n = device_count();
  const char* why = nullptr;
  EXPECT_EQ(tg_cuda_device_cc(n, &why), 0); // one past the last device
  ASSERT_NE(why, nullptr);
  if (n > 0)
    EXPECT_EQ(std::string(why),
              "no CUDA device " + std::to_string(n) + ": cudaGetDeviceCount found " +
                  std::to_string(n));
  else
    EXPECT_EQ(std::string(why).rfind("no CUDA device: cudaGetDeviceCount ", 0), 0u) << why;
}

TEST(CudaRuntime, AnswersAreCachedAndStable) {
  const char* why1 = nullptr;
  const char* why2 = nullptr;
  int cc1 = tg_cuda_device_cc(0, &why1);
  int cc2 = tg_cuda_device_cc(0, &why2);
  EXPECT_EQ(cc1, cc2);
  EXPECT_EQ(why1, why2); // the same static sentence, not a copy
}

TEST(CudaRuntime, ConcurrentFirstProbesAgree) {
  // Ordinals 5..12 were not probed by any other test: threads race on their first probe.
  std::vector<std::thread> threads;
  std::vector<int> cc(8 * 8, -1);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int d = 0; d < 8; ++d)
        cc[t * 8 + d] = tg_cuda_device_cc(5 + d, nullptr);
    });
  for (auto& th : threads)
    th.join();
  for (int t = 1; t < 8; ++t)
    for (int d = 0; d < 8; ++d)
      EXPECT_EQ(cc[t * 8 + d], cc[d]);
}

TEST(CudaRuntime, NoDeviceMeansCcZeroWithAReason) {
  if (device_count() > 0)
    GTEST_SKIP() << "a CUDA device is present";
  const char* why = nullptr;
  EXPECT_EQ(tg_cuda_device_cc(0, &why), 0);
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(std::string(why).rfind("no CUDA device: cudaGetDeviceCount returned cudaError", 0),
            0u)
      << why;
  // Entering the device fails with a status, never a crash, and runs nothing.
  tg_variant_entry e{};
  e.backend = TG_BACKEND_CUDA;
  e.fn = [](const tg_launch*, const tg_variant_args*) { return 1234; };
  EXPECT_NE(tg_cuda_run(&e, nullptr, nullptr), TG_OK);
  EXPECT_NE(tg_cuda_run(&e, nullptr, nullptr), 1234);
}

TEST(CudaRuntime, NoDeviceMeansNoStreamSlot) {
  if (device_count() > 0)
    GTEST_SKIP() << "a CUDA device is present";
  // A persistent kernel then walks its tiles in the fixed order (without a driver every
  // runtime call, cudaGetLastError too, reports the missing driver: nothing more to check).
  EXPECT_EQ(tg_cuda_stream_slot(nullptr), -1);
  EXPECT_EQ(tg_cuda_stream_slot((void*)cudaStreamPerThread), -1);
}

// GPU tests on two non-blocking streams of device 0 (skipped without a device).
class CudaRuntimeStreams : public ::testing::Test {
protected:
  void SetUp() override {
    if (device_count() == 0)
      GTEST_SKIP() << "no CUDA device";
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), cudaSuccess);
  }
  void TearDown() override {
    if (a)
      cudaStreamDestroy(a);
    if (b)
      cudaStreamDestroy(b);
  }
  cudaStream_t a = nullptr, b = nullptr;
};

TEST_F(CudaRuntimeStreams, StreamSlotsAreStablePerStream) {
  const int sa = tg_cuda_stream_slot(a), sb = tg_cuda_stream_slot(b);
  ASSERT_GE(sa, 0);
  ASSERT_GE(sb, 0);
  EXPECT_LT(sa, TG_CUDA_STREAM_SLOTS);
  EXPECT_NE(sa, sb);
  EXPECT_EQ(tg_cuda_stream_slot(a), sa); // the same slot for the same stream
  EXPECT_EQ(tg_cuda_stream_slot(nullptr), tg_cuda_stream_slot((void*)cudaStreamLegacy));
  // Two threads' per-thread default streams are different streams.
  int other = -2;
  std::thread t([&] { other = tg_cuda_stream_slot((void*)cudaStreamPerThread); });
  t.join();
  EXPECT_NE(other, tg_cuda_stream_slot((void*)cudaStreamPerThread));
  // No slot inside a capture: a graph replay could overlap another launch on the stream.
  ASSERT_EQ(cudaStreamBeginCapture(b, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  EXPECT_EQ(tg_cuda_stream_slot(b), -1);
  cudaGraph_t g = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(b, &g), cudaSuccess);
  if (g)
    cudaGraphDestroy(g);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(CudaRuntimeGpu, SplitWorkspaceIsZeroedKeptAndGrown) {
  if (device_count() == 0)
    GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  const int slot = tg_cuda_stream_slot(s);
  ASSERT_GE(slot, 0);
  EXPECT_EQ(tg_cuda_split_workspace(-1, s, 1 << 20), nullptr);
  EXPECT_EQ(tg_cuda_split_workspace(TG_CUDA_STREAM_SLOTS, s, 1 << 20), nullptr);
  EXPECT_EQ(tg_cuda_split_workspace(slot, s, 16), nullptr); // smaller than the arrival words
  const size_t small = TG_CUDA_SPLIT_FLAG_BYTES + 4096, large = TG_CUDA_SPLIT_FLAG_BYTES + (8u << 20);
  void* p = tg_cuda_split_workspace(slot, s, small);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(tg_cuda_split_workspace(slot, s, small), p); // kept
  EXPECT_EQ(tg_cuda_split_workspace(slot, s, 64 + TG_CUDA_SPLIT_FLAG_BYTES), p);
  // The arrival and ready words are zero when the stream gets there (the zeroing is queued on
  // it), in new memory each time.
  auto words_are_zero = [&](void* w) {
    std::vector<unsigned> words(TG_CUDA_SPLIT_FLAG_BYTES / sizeof(unsigned), 1u);
    ASSERT_EQ(cudaMemcpyAsync(words.data(), w, TG_CUDA_SPLIT_FLAG_BYTES, cudaMemcpyDeviceToHost, s),
              cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    for (unsigned x : words)
      ASSERT_EQ(x, 0u);
  };
  words_are_zero(p);
  // Dirty words, then a larger request: new memory, zeroed again.
  ASSERT_EQ(cudaMemsetAsync(p, 0xff, TG_CUDA_SPLIT_FLAG_BYTES, s), cudaSuccess);
  void* q = tg_cuda_split_workspace(slot, s, large);
  ASSERT_NE(q, nullptr);
  words_are_zero(q);
  EXPECT_EQ(tg_cuda_split_workspace(slot, s, small), q); // a smaller request keeps the larger
  // Freed on request (leak checkers); the next request allocates again.
  tg_cuda_free_split_workspaces();
  void* r = tg_cuda_split_workspace(slot, s, small);
  ASSERT_NE(r, nullptr);
  words_are_zero(r);
  tg_cuda_free_split_workspaces();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  cudaStreamDestroy(s);
}

// tg_cuda_split_acquire: the stream slot's workspace outside a capture; inside one, memory the
// graph owns, its words zeroed by a node of the graph on every replay, freed by the graph.
TEST(CudaRuntimeGpu, SplitAcquireIsTheSlotsOutsideAndTheGraphsInACapture) {
  if (device_count() == 0)
    GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  const size_t bytes = TG_CUDA_SPLIT_FLAG_BYTES + 4096;
  int owned = -1;
  EXPECT_EQ(tg_cuda_split_acquire(s, 16, &owned), nullptr); // smaller than the words
  void* p = tg_cuda_split_acquire(s, bytes, &owned);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(owned, 0);
  EXPECT_EQ(p, tg_cuda_split_workspace(tg_cuda_stream_slot(s), s, bytes));
  // Captured: graph memory; the words it holds are copied out by the graph itself.
  unsigned* out = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&out), TG_CUDA_SPLIT_FLAG_BYTES), cudaSuccess);
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  void* g = tg_cuda_split_acquire(s, bytes, &owned);
  EXPECT_EQ(owned, 1);
  EXPECT_NE(g, nullptr);
  EXPECT_NE(g, p);
  if (g) {
    EXPECT_EQ(cudaMemcpyAsync(out, g, TG_CUDA_SPLIT_FLAG_BYTES, cudaMemcpyDeviceToDevice, s), cudaSuccess);
    tg_cuda_split_release(g, s);
  }
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (int replay = 0; replay < 2; ++replay) {
    ASSERT_EQ(cudaMemsetAsync(out, 0xff, TG_CUDA_SPLIT_FLAG_BYTES, s), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
    std::vector<unsigned> words(TG_CUDA_SPLIT_FLAG_BYTES / sizeof(unsigned), 1u);
    ASSERT_EQ(cudaMemcpyAsync(words.data(), out, TG_CUDA_SPLIT_FLAG_BYTES, cudaMemcpyDeviceToHost, s),
              cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    for (unsigned x : words)
      ASSERT_EQ(x, 0u);
  }
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  EXPECT_EQ(cudaFree(out), cudaSuccess);
  tg_cuda_free_split_workspaces();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  cudaStreamDestroy(s);
}

TEST_F(CudaRuntimeStreams, RealignWorkspaceIsPerStreamHeldKeptAndGrown) {
  int sa = -2, sb = -2;
  EXPECT_EQ(tg_cuda_realign_workspace(a, 0, &sa), nullptr);
  EXPECT_EQ(sa, -1);
  void* p = tg_cuda_realign_workspace(a, 4096, &sa);
  ASSERT_NE(p, nullptr);
  ASSERT_GE(sa, 0);
  EXPECT_EQ((uintptr_t)p % 256, 0u);
  // Held: another thread's request on the same stream waits for the release.
  std::atomic<bool> got{false};
  std::thread t([&] {
    int s2 = -1;
    void* p2 = tg_cuda_realign_workspace(a, 4096, &s2);
    got = true;
    EXPECT_EQ(p2, p); // kept
    tg_cuda_realign_release(s2);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(got.load());
  tg_cuda_realign_release(sa);
  t.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(tg_cuda_realign_workspace(a, 16, &sa), p); // a smaller request keeps it
  tg_cuda_realign_release(sa);
  void* q = tg_cuda_realign_workspace(b, 4096, &sb); // another stream, other memory, not held by a
  ASSERT_NE(q, nullptr);
  EXPECT_NE(q, p);
  EXPECT_NE(sb, sa);
  tg_cuda_realign_release(sb);
  // Grown: the whole size is usable.
  void* r = tg_cuda_realign_workspace(a, 8u << 20, &sa);
  ASSERT_NE(r, nullptr);
  ASSERT_EQ(cudaMemsetAsync(r, 0, 8u << 20, a), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(a), cudaSuccess);
  tg_cuda_realign_release(sa);
  // Not while the stream is captured: the call then runs in place, holding nothing.
  ASSERT_EQ(cudaStreamBeginCapture(b, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  EXPECT_EQ(tg_cuda_realign_workspace(b, 4096, &sb), nullptr);
  EXPECT_EQ(sb, -1);
  cudaGraph_t g = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(b, &g), cudaSuccess);
  if (g)
    cudaGraphDestroy(g);
  tg_cuda_free_split_workspaces(); // frees these too; the next request allocates again
  EXPECT_NE(tg_cuda_realign_workspace(a, 4096, &sa), nullptr);
  tg_cuda_realign_release(sa);
  tg_cuda_free_split_workspaces();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(CudaRuntime, ErrorMapping) {
  EXPECT_EQ(tg_cuda_status(cudaSuccess), TG_OK);
  EXPECT_EQ(tg_cuda_status(cudaErrorMemoryAllocation), TG_ERR_OUT_OF_MEMORY);
  EXPECT_EQ(tg_cuda_status(cudaErrorInvalidValue), TG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(tg_cuda_status(cudaErrorInvalidResourceHandle), TG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(tg_cuda_status(cudaErrorNoDevice), TG_ERR_NO_VARIANT);
  EXPECT_EQ(tg_cuda_status(cudaErrorInsufficientDriver), TG_ERR_NO_VARIANT);
  EXPECT_EQ(tg_cuda_status(cudaErrorNoKernelImageForDevice), TG_ERR_NO_VARIANT);
  EXPECT_EQ(tg_cuda_status(cudaErrorLaunchFailure), TG_ERR_DEVICE);
  EXPECT_EQ(tg_cuda_status(cudaErrorIllegalAddress), TG_ERR_DEVICE);
}

// Programmatic dependent launch is on unless TILEGEN_GPU_PDL is 0. The variable is read once per
// process, so each case runs in a process of its own (the threadsafe death-test style re-executes
// the test binary).
TEST(CudaRuntimeDeathTest, PdlFollowsTheEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto child = [](const char* v) {
    if (v)
      setenv("TILEGEN_GPU_PDL", v, 1);
    else
      unsetenv("TILEGEN_GPU_PDL");
    const int first = tg_cuda_pdl();
    setenv("TILEGEN_GPU_PDL", first ? "0" : "1", 1); // read once: a later change is not seen
    std::exit(first == tg_cuda_pdl() ? first : 2);
  };
  EXPECT_EXIT(child("0"), testing::ExitedWithCode(0), "");
  EXPECT_EXIT(child(nullptr), testing::ExitedWithCode(1), "");
  EXPECT_EXIT(child("1"), testing::ExitedWithCode(1), "");
  EXPECT_EXIT(child(""), testing::ExitedWithCode(1), "");
}

// TILEGEN_GPU_SPLIT=0 turns the split workspace off (every tile runs whole), read once per process
// as TILEGEN_GPU_PDL is; with a GPU the same call without it gets memory.
TEST(CudaRuntimeDeathTest, SplitWorkspaceFollowsTheEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto child = [](const char* v) {
    if (v)
      setenv("TILEGEN_GPU_SPLIT", v, 1);
    else
      unsetenv("TILEGEN_GPU_SPLIT");
    void* p = tg_cuda_split_workspace(0, nullptr, TG_CUDA_SPLIT_FLAG_BYTES + 4096);
    std::exit(p ? 1 : 0);
  };
  EXPECT_EXIT(child("0"), testing::ExitedWithCode(0), "");
  if (device_count() > 0)
    EXPECT_EXIT(child(nullptr), testing::ExitedWithCode(1), "");
}

TEST(CudaRuntime, DescribeNeedsAGpuRow) {
  tg_variant_entry cpu{};
  cpu.backend = TG_BACKEND_CPU;
  tg_gpu_launch_desc d;
  EXPECT_EQ(tg_cuda_describe(&cpu, nullptr, nullptr, &d), TG_ERR_NO_VARIANT);
}

// ---- with a GPU ----------------------------------------------------------------------------

TEST(CudaRuntimeGpu, CcMatchesTheDevice) {
  if (device_count() == 0)
    GTEST_SKIP() << "no CUDA device";
  cudaDeviceProp p;
  ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
  EXPECT_EQ(tg_cuda_device_cc(0, nullptr), p.major * 10 + p.minor);
}

TEST(CudaRuntimeGpu, EnterLeaveRestoresTheCurrentDevice) {
  int n = device_count();
  if (n == 0)
    GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  int restore = 7;
  ASSERT_EQ(tg_cuda_device_enter(0, &restore), TG_OK);
  EXPECT_EQ(restore, -1); // already current: nothing changed
  tg_cuda_device_leave(restore);
  int cur = -1;
  ASSERT_EQ(cudaGetDevice(&cur), cudaSuccess);
  EXPECT_EQ(cur, 0);
  EXPECT_EQ(tg_cuda_device_enter(n, &restore), TG_ERR_NO_VARIANT); // invalid ordinal
  if (n < 2)
    GTEST_SKIP() << "one CUDA device: switching not tested";
  ASSERT_EQ(tg_cuda_device_enter(1, &restore), TG_OK);
  EXPECT_EQ(restore, 0);
  ASSERT_EQ(cudaGetDevice(&cur), cudaSuccess);
  EXPECT_EQ(cur, 1);
  tg_cuda_device_leave(restore);
  ASSERT_EQ(cudaGetDevice(&cur), cudaSuccess);
  EXPECT_EQ(cur, 0);
}

TEST(CudaRuntimeGpu, RunCallsTheVariantOnTheLaunchDevice) {
  int n = device_count();
  if (n == 0)
    GTEST_SKIP() << "no CUDA device";
  static int seen_device;
  tg_variant_entry e{};
  e.backend = TG_BACKEND_CUDA;
  e.fn = [](const tg_launch*, const tg_variant_args*) {
    cudaGetDevice(&seen_device);
    return 0;
  };
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  tg_launch l{};
  l.device = n - 1;
  seen_device = -1;
  EXPECT_EQ(tg_cuda_run(&e, &l, nullptr), TG_OK);
  EXPECT_EQ(seen_device, n - 1);
  int cur = -1;
  ASSERT_EQ(cudaGetDevice(&cur), cudaSuccess);
  EXPECT_EQ(cur, 0); // restored
}

} // namespace
