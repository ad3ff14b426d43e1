// Times every pinned-schedule variant of sweep.py on the device (median of 7 runs of 10 calls,
// CUDA events, after warm-up; SWEEP_FLUSH=1: median of 21 calls each after an L2 flush) and checks each output against the first variant of its kernel
// (GEMM: against cuBLAS). Prints one markdown table.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tilegen/variant.h"

#include "../hopper/energy.h"

struct Case {
  const char* kernel;
  const char* config;
  int (*fn)(const tg_launch*, const tg_variant_args*);
};
#include "cases.inc"

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA error %s at %d\n", cudaGetErrorString(e), __LINE__); exit(1); } } while (0)

__global__ void fill(__nv_bfloat16* p, size_t n, unsigned seed, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    p[i] = __float2bfloat16(((h & 0xffff) / 65536.0f - 0.5f) * scale);
  }
}

__global__ void fill_fp8(__nv_fp8_e4m3* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
    p[i] = __nv_fp8_e4m3(((h & 0xffff) / 65536.0f - 0.5f) * 4.0f);
  }
}

static float time_ms(const std::function<void()>& f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> t;
  // SWEEP_FLUSH=1: one call at a time (bench.py's second figure), each after a 256 MB memset
  // that evicts the L2: median of 21 calls
  static void* scratch = nullptr;
  if (getenv("SWEEP_FLUSH")) {
    const size_t bytes = size_t(256) << 20;
    if (!scratch && cudaMalloc(&scratch, bytes) != cudaSuccess) { printf("no flush buffer\n"); exit(1); }
    for (int r = 0; r < 21; ++r) {
      cudaMemsetAsync(scratch, r & 0xFF, bytes);
      cudaEventRecord(a);
      f();
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b);
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }
  for (int r = 0; r < 7; ++r) {
    cudaEventRecord(a);
    for (int i = 0; i < 10; ++i) f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    t.push_back(ms / 10);
  }
  std::sort(t.begin(), t.end());
  return t[3];
}

static double max_rel(const std::vector<__nv_bfloat16>& x, const std::vector<__nv_bfloat16>& ref) {
  double worst = 0, scale = 1e-6;
  for (auto v : ref) scale = std::max(scale, (double)std::fabs(__bfloat162float(v)));
  for (size_t i = 0; i < x.size(); ++i) {
    double d = std::fabs((double)__bfloat162float(x[i]) - (double)__bfloat162float(ref[i]));
    if (std::isnan(d)) return INFINITY;
    worst = std::max(worst, d / scale);
  }
  return worst;
}

int main() {
  cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
  printf("sweep on %s\n\n| kernel | schedule | ms | rate | baseline | ratio | max rel diff |\n|---|---|---|---|---|---|---|\n", prop.name);
  const int64_t G = 4096, SM = 16384, SN = 8192, B = 4, H = 32, S = 4096, D = 128;
  size_t big = std::max<size_t>({(size_t)G * G, (size_t)SM * SN, (size_t)B * H * S * D});
  __nv_bfloat16 *x, *y, *z, *o, *w;
  CK(cudaMalloc(&x, big * 2)); CK(cudaMalloc(&y, big * 2)); CK(cudaMalloc(&z, big * 2));
  CK(cudaMalloc(&o, big * 2)); CK(cudaMalloc(&w, SN * 2));
  fill<<<1024, 256>>>(x, big, 1, 2.0f); fill<<<1024, 256>>>(y, big, 2, 2.0f); fill<<<1024, 256>>>(z, big, 3, 2.0f);
  fill<<<64, 256>>>(w, SN, 4, 2.0f);
  CK(cudaDeviceSynchronize());
  cublasHandle_t h; cublasCreate(&h);
  std::vector<__nv_bfloat16> ref, got;
  std::map<std::string, std::vector<__nv_bfloat16>> firsts;
  double copy_gbs = 0;
  {
    size_t bytes = (size_t)SM * SN * 2;
    float ms = time_ms([&] { cudaMemcpyAsync(o, x, bytes, cudaMemcpyDeviceToDevice); });
    copy_gbs = 2.0 * bytes / ms / 1e6;
    printf("| copy | D2D %zu MB | %.4f | %.0f GB/s | | | |\n", bytes >> 20, ms, copy_gbs);
  }
  // SWEEP_ROUNDS=n times every case n times, round-robin (interleaved A/B of variants)
  const int rounds = getenv("SWEEP_ROUNDS") ? std::max(1, atoi(getenv("SWEEP_ROUNDS"))) : 1;
  for (int round = 0; round < rounds; ++round)
  for (const Case& c : kCases) {
    tg_launch L{}; L.struct_size = sizeof L;
    int64_t dims[4]; void* tens[4]; double scal[2] = {0.08838834764831845, 1.0}; int flags[1] = {0};
    tg_variant_args a{};
    a.tensors = tens; a.dims = dims; a.scalars = scal; a.flags = flags;
    size_t out_elems = 0; double work = 0; bool flops = true; double base_ms = 0; const char* base = "";
    std::string k = c.kernel;
    if (k == "gemm" || k == "gemm_bias_gelu") {
      const bool gelu = k == "gemm_bias_gelu"; // baseline: cuBLAS without the epilogue
      tens[0] = x; tens[1] = y; tens[2] = gelu ? (void*)w : (void*)o; tens[3] = o;
      dims[0] = dims[1] = dims[2] = G;
      out_elems = G * G; work = 2.0 * G * G * G;
      float alpha = 1, beta = 0;
      auto cub = [&] { cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, G, G, G, &alpha, y, CUDA_R_16BF, G, x, CUDA_R_16BF, G, &beta, z, CUDA_R_16BF, G, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT); };
      base_ms = time_ms(cub); base = "cuBLAS";
      cub(); CK(cudaDeviceSynchronize());
      if (!gelu) { // gemm_bias_gelu: checked against its first variant below
        ref.resize(out_elems);
        CK(cudaMemcpy(ref.data(), z, out_elems * 2, cudaMemcpyDeviceToHost));
      }
    } else if (k == "gemm_fp8") { // FP8 A [F, F] and B [F, F] (K-major), bf16 C; F = 8192
      const int64_t F = 8192;
      static __nv_fp8_e4m3* f8 = nullptr;
      if (!f8) {
        CK(cudaMalloc(&f8, 2 * F * F));
        fill_fp8<<<1024, 256>>>(f8, (size_t)2 * F * F, 5);
      }
      tens[0] = f8; tens[1] = f8 + F * F; tens[2] = o;
      dims[0] = dims[1] = dims[2] = F; scal[0] = 0.5; scal[1] = 0.25;
      out_elems = (size_t)F * F; work = 2.0 * F * F * F;
    } else if (k == "flash_attention_fwd") { // non-causal: B4 H32 S4096 D128, or the D64 bar's B8 H16 S2048
      const bool d64 = strstr(c.config, "D64") != nullptr;
      int64_t b = d64 ? 8 : B, hh = d64 ? 16 : H, sq = d64 ? 2048 : S;
      const int64_t d = d64 ? 64 : D;
      // SWEEP_ATTN=B,H,S: another shape (ragged S, more or fewer tiles), at most the buffers' size
      if (const char* e = getenv("SWEEP_ATTN")) {
        long long eb, eh, es;
        if (sscanf(e, "%lld,%lld,%lld", &eb, &eh, &es) == 3 && (size_t)(eb * eh * es * d) <= big) { b = eb; hh = eh; sq = es; }
      }
      tens[0] = x; tens[1] = y; tens[2] = z; tens[3] = o; dims[0] = b; dims[1] = hh; dims[2] = sq; dims[3] = d;
      out_elems = (size_t)b * hh * sq * d; work = 4.0 * b * hh * sq * sq * d;
    } else {
      tens[0] = x; if (k == "rmsnorm") { tens[1] = w; tens[2] = o; scal[0] = 1e-5; } else tens[1] = o;
      dims[0] = SM; dims[1] = SN; out_elems = (size_t)SM * SN; work = 2.0 * SM * SN * 2; flops = false;
    }
    int st = c.fn(&L, &a);
    CK(cudaDeviceSynchronize());
    if (st != 0) { printf("| %s | %s | status %d | | | | |\n", c.kernel, c.config, st); continue; }
    got.resize(out_elems); CK(cudaMemcpy(got.data(), o, out_elems * 2, cudaMemcpyDeviceToHost));
    // every kernel but gemm: checked against its first variant (kept across rounds)
    // (per instance: the config's last word, e.g. bf16_causal1_D128)
    if (k != "gemm") {
      const char* inst = strrchr(c.config, ' ');
      const std::string key = k + (inst ? inst : "");
      if (!firsts.count(key)) firsts[key] = got;
      ref = firsts[key];
    }
    double diff = max_rel(got, ref);
    if (getenv("SWEEP_CHECK_ONLY")) { // correctness only (under compute-sanitizer)
      printf("| %s | %s | - | - | - | - | %.2e |\n", c.kernel, c.config, diff);
      continue;
    }
    float ms = time_ms([&] { c.fn(&L, &a); });
    if (getenv("SWEEP_ENERGY")) { // NVML's energy counter around 200 calls
      double mj, per;
      energy_per_call([&] { c.fn(&L, &a); }, 200, &mj, &per);
      printf("energy %s: %.1f mJ per call, %.4f ms per call, %.0f W\n", c.config, mj, per, mj / per);
    }
    CK(cudaGetLastError());
    double rate = work / ms / 1e6; // per second / 1e9: GFLOP/s or GB/s
    if (flops)
      printf("| %s | %s | %.4f | %.1f TFLOP/s | %s %.4f ms | %.2fx | %.2e |\n", c.kernel, c.config, ms, rate / 1e3, base, base_ms, base_ms > 0 ? base_ms / ms : 0.0, diff);
    else
      printf("| %s | %s | %.4f | %.0f GB/s | copy %.0f GB/s | %.2f of copy | %.2e |\n", c.kernel, c.config, ms, rate, copy_gbs, rate / copy_gbs, diff);
    fflush(stdout);
  }
  return 0;
}
