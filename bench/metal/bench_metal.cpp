// Timing of the shipped kernels' Metal variants on an Apple GPU, through the generated C API
// (docs/metal.md, "Benchmarking on a Mac"). NEVER RUN: written without a Mac; on Linux it is only
// compiled against a stub of the metal-cpp declarations it uses (test metal.bench_compiles).
//
// Build and run on macOS 14+ (bench/metal/run.sh): the library `tgm` (add_tile_kernels, TARGETS
// metal c) and this program with Apple's metal-cpp. Each case checks that the call selects the
// Metal variant (_query), then times `iters` dispatches, each in its own command buffer, by the
// GPU's own clock (GPUEndTime - GPUStartTime), and prints the median.
#include <Foundation/Foundation.hpp>
#include <Metal/Metal.hpp>

#include "tgm.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

MTL::Device* g_dev = nullptr;
MTL::CommandQueue* g_queue = nullptr;

// A shared-storage buffer of `count` 16-bit values in [-1, 1) (f16 or bf16 bit patterns).
MTL::Buffer* random_16bit(size_t count, bool bf16, std::mt19937& rng) {
  MTL::Buffer* b = g_dev->newBuffer(std::max<size_t>(count * 2, 16), MTL::ResourceStorageModeShared);
  auto* p = static_cast<uint16_t*>(b->contents());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (size_t i = 0; i < count; ++i)
    p[i] = bf16 ? tg_float_to_bf16(u(rng)) : tg_float_to_f16(u(rng));
  return b;
}

MTL::Buffer* zeros(size_t bytes) {
  MTL::Buffer* b = g_dev->newBuffer(std::max<size_t>(bytes, 16), MTL::ResourceStorageModeShared);
  std::memset(b->contents(), 0, std::max<size_t>(bytes, 16));
  return b;
}

// Median GPU time in ms of `iters` calls (after 3 warm-up calls), each in a command buffer of its
// own; `call` encodes one dispatch given a launch whose stream is that command buffer.
template <class Call> double median_ms(Call call, int iters) {
  std::vector<double> ms;
  for (int i = 0; i < iters + 3; ++i) {
    MTL::CommandBuffer* cb = g_queue->commandBuffer();
    tg_launch l{};
    l.struct_size = sizeof l;
    l.device = 0;
    l.stream = cb;
    const tg_status s = call(&l);
    if (s != TG_OK) {
      std::fprintf(stderr, "call failed: %s\n", tg_status_string(s));
      std::exit(1);
    }
    cb->commit();
    cb->waitUntilCompleted();
    if (i >= 3)
      ms.push_back((cb->GPUEndTime() - cb->GPUStartTime()) * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void require_metal(tg_status st, const tg_selection& sel, const char* what) {
  if (st != TG_OK || std::strcmp(sel.target, "metal") != 0) {
    std::fprintf(stderr, "%s does not run on Metal here: %s (%s)\n", what, sel.reason,
                 tg_status_string(st));
    std::exit(1);
  }
}

} // namespace

int main(int argc, char** argv) {
  const int iters = argc > 1 ? std::atoi(argv[1]) : 20;
  g_dev = MTL::CreateSystemDefaultDevice();
  if (!g_dev) {
    std::fprintf(stderr, "no Metal device\n");
    return 1;
  }
  g_queue = g_dev->newCommandQueue();
  std::mt19937 rng(1);
  std::printf("kernel                 shape                          ms       TFLOP/s\n");

  for (int64_t n : {1024, 2048, 4096}) {
    const int64_t M = n, N = n, K = n;
    MTL::Buffer* A = random_16bit(size_t(M * K), false, rng);
    MTL::Buffer* B = random_16bit(size_t(K * N), false, rng);
    MTL::Buffer* C = zeros(size_t(M * N) * 2);
    auto a = static_cast<const tg_f16*>(static_cast<const void*>(A));
    auto b = static_cast<const tg_f16*>(static_cast<const void*>(B));
    auto c = static_cast<tg_f16*>(static_cast<void*>(C));
    tg_selection sel{};
    require_metal(tgm_gemm_f16_query(nullptr, a, b, c, M, N, K, &sel), sel, "gemm f16");
    const double ms = median_ms([&](const tg_launch* l) { return tgm_gemm_f16(l, a, b, c, M, N, K); }, iters);
    std::printf("gemm f16               %-30s %8.3f %8.2f\n",
                (std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K)).c_str(), ms,
                2.0 * double(M) * double(N) * double(K) / (ms * 1e-3) / 1e12);
    A->release();
    B->release();
    C->release();
  }

  {
    const int64_t M = 4096, N = 4096;
    MTL::Buffer* X = random_16bit(size_t(M * N), true, rng);
    MTL::Buffer* Y = zeros(size_t(M * N) * 2);
    auto x = static_cast<const tg_bf16*>(static_cast<const void*>(X));
    auto y = static_cast<tg_bf16*>(static_cast<void*>(Y));
    tg_selection sel{};
    require_metal(tgm_softmax_bf16_query(nullptr, x, y, M, N, &sel), sel, "softmax bf16");
    const double ms = median_ms([&](const tg_launch* l) { return tgm_softmax_bf16(l, x, y, M, N); }, iters);
    std::printf("softmax bf16           %-30s %8.3f %8.1f GB/s\n", "4096x4096", ms,
                4.0 * double(M) * double(N) / (ms * 1e-3) / 1e9);
    X->release();
    Y->release();
  }

  {
    const int64_t Bn = 1, H = 16, S = 2048, D = 128;
    const size_t count = size_t(Bn * H * S * D);
    MTL::Buffer* Q = random_16bit(count, false, rng);
    MTL::Buffer* Kb = random_16bit(count, false, rng);
    MTL::Buffer* V = random_16bit(count, false, rng);
    MTL::Buffer* O = zeros(count * 2);
    auto q = static_cast<const tg_f16*>(static_cast<const void*>(Q));
    auto k = static_cast<const tg_f16*>(static_cast<const void*>(Kb));
    auto v = static_cast<const tg_f16*>(static_cast<const void*>(V));
    auto o = static_cast<tg_f16*>(static_cast<void*>(O));
    tg_selection sel{};
    require_metal(tgm_flash_attention_fwd_f16_query(nullptr, q, k, v, o, Bn, H, S, D, 0.0883883f, 1, &sel),
                  sel, "flash_attention_fwd f16");
    const double ms = median_ms(
        [&](const tg_launch* l) { return tgm_flash_attention_fwd_f16(l, q, k, v, o, Bn, H, S, D, 0.0883883f, 1); },
        iters);
    // causal: half of the S x S score matrix, two gemms of 2 S S D / 2 flops each
    std::printf("flash_attention f16    %-30s %8.3f %8.2f\n", "B1 H16 S2048 D128 causal", ms,
                2.0 * double(H) * double(S) * double(S) * double(D) / (ms * 1e-3) / 1e12);
    Q->release();
    Kb->release();
    V->release();
    O->release();
  }
  g_queue->release();
  g_dev->release();
  return 0;
}
