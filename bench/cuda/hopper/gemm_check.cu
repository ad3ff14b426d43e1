// Standalone check of generated GEMM variants on one GPU, without the dispatch library:
// every variant function named on the command line runs on each shape, is compared with a
// float64-accumulated reference of the same bf16 inputs (computed on the GPU), and is timed
// against cuBLAS (cublasGemmEx, bf16 in, f32 compute) in the same process, interleaved
// (time_interleaved: medians of rounds in rotating order).
//
//   gemm_check [--time] [--sets N] [--flush] SHAPE...
//                                    --flush: each timed call alone after a 256 MB memset
//                                    (bench.py's one call at a time)
//                                    --sets N: timed calls rotate among N copies of A, B and
//                                    C (cold L2, as bench.py's rotation); default 1
//                                    SHAPE = MxNxK[+o[E]] (+oE: A, B, C start E elements,
//                                    default 1, past 16 bytes, so the TMA path falls back:
//                                    +o2 to tg_kernel<4>, +o1 to tg_kernel<0>)
//
// Built by bench/cuda/hopper/build.sh with the generated variant sources of bench/cuda/hopper
// (TG_VARIANTS: the functions to check). Prints one line per variant and shape.
//
// Built with -DGEMM_CHECK_BIAS_GELU it is gelu_check: the variants are gemm_bias_gelu's
// (tensors A, B, bias, C; C = gelu(A B + bias) with the exact erf GELU), the reference applies
// the same epilogue, and cuBLAS still times the GEMM alone (a floor, not an equal).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tilegen/variant.h"

#include "check_common.h"
#include "energy.h"

extern "C" {
#define TG_VARIANT(fn) int fn(const tg_launch*, const tg_variant_args*);
TG_VARIANTS
#undef TG_VARIANT
}

namespace {

#ifdef GEMM_CHECK_BIAS_GELU
constexpr bool kBiasGelu = true;
#else
constexpr bool kBiasGelu = false;
#endif

struct Variant {
  const char* name;
  int (*fn)(const tg_launch*, const tg_variant_args*);
};
const Variant kVariants[] = {
#define TG_VARIANT(fn) {#fn, fn},
    TG_VARIANTS
#undef TG_VARIANT
};

__global__ void fill(__nv_bfloat16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    p[i] = __float2bfloat16(check_uniform(i, seed));
  }
}

// C_ref[m, n] = sum_k A[m, k] B[k, n] in double (gelu_check: gelu(that + bias[n])).
__global__ void reference(const __nv_bfloat16* A, const __nv_bfloat16* B, const __nv_bfloat16* bias,
                          double* C, int M, int N, int K) {
  int m = blockIdx.y * blockDim.y + threadIdx.y, n = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= M || n >= N)
    return;
  double s = 0;
  for (int k = 0; k < K; ++k)
    s += (double)__bfloat162float(A[(size_t)m * K + k]) *
         (double)__bfloat162float(B[(size_t)k * N + n]);
  if (bias) {
    s += (double)__bfloat162float(bias[n]);
    s = 0.5 * s * (1.0 + erf(s * 0.70710678118654752440));
  }
  C[(size_t)m * N + n] = s;
}

// Tolerance: bf16 output rounding (2^-8 relative) plus f32 accumulation error.
__global__ void compare(const __nv_bfloat16* C, const double* R, size_t n, int K,
                        unsigned long long* bad, float* worst) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    double c = __bfloat162float(C[i]), r = R[i];
    double tol = std::fabs(r) * (1.0 / 128) + 1e-6 * K + 1e-3;
    double err = std::fabs(c - r) / tol;
    if (!(err <= 1.0))
      atomicAdd(bad, 1ull);
    atomicMax((int*)worst, __float_as_int((float)fmin(err, 1e30)));
  }
}

struct Shape {
  int M, N, K;
  int offset; // elements every tensor starts past its 16-byte aligned allocation
};

Shape parse(const char* s) {
  Shape sh{};
  int n = std::sscanf(s, "%dx%dx%d", &sh.M, &sh.N, &sh.K);
  const char* plus = std::strchr(s, '+');
  if (n < 3 || (plus && std::strncmp(plus, "+o", 2))) {
    std::fprintf(stderr, "bad shape '%s' (want MxNxK[+o[N]])\n", s);
    std::exit(2);
  }
  sh.offset = plus ? (plus[2] ? std::atoi(plus + 2) : 1) : 0;
  if (sh.offset < 0 || sh.offset > 8) {
    std::fprintf(stderr, "bad offset in '%s' (0..8 elements)\n", s);
    std::exit(2);
  }
  return sh;
}

} // namespace

int main(int argc, char** argv) {
  bool timing = false;
  int sets = 1;
  bool flush = false;
  std::vector<Shape> shapes;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--time"))
      timing = true;
    else if (!std::strcmp(argv[i], "--flush"))
      flush = true;
    else if (!std::strcmp(argv[i], "--sets") && i + 1 < argc && std::atoi(argv[i + 1]) >= 1)
      sets = std::atoi(argv[++i]);
    else
      shapes.push_back(parse(argv[i]));
  }
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "cublasCreate failed\n");
    return 1;
  }
  void* scratch = nullptr; // --flush: written before each timed call, evicting the L2
  const size_t kFlushBytes = size_t(256) << 20;
  unsigned flushes = 0;
  int failures = 0;
  std::printf("%-44s %-18s %10s %10s %8s %9s %9s\n", "variant", "shape", "worst/tol", "bad", "ms",
              "cublas_ms", "ratio");
  for (const Shape& s : shapes) {
    const size_t o = (size_t)s.offset;
    size_t na = (size_t)s.M * s.K, nb = (size_t)s.K * s.N, nc = (size_t)s.M * s.N;
    __nv_bfloat16 *A, *B, *C, *Cb, *bias = nullptr;
    double* R;
    if (kBiasGelu) {
      CK(cudaMalloc(&bias, ((size_t)s.N + 8) * 2));
      fill<<<64, 256>>>(bias + o, (size_t)s.N, 555u + s.N);
    }
    CK(cudaMalloc(&A, (na + 8) * 2));
    CK(cudaMalloc(&B, (nb + 8) * 2));
    CK(cudaMalloc(&C, (nc + 8) * 2));
    CK(cudaMalloc(&Cb, (nc + 8) * 2));
    CK(cudaMalloc(&R, (nc + 1) * 8));
    fill<<<1024, 256>>>(A + o, na, 1234u + s.M);
    fill<<<1024, 256>>>(B + o, nb, 987u + s.N);
    dim3 rb(16, 16), rg((s.N + 15) / 16, (s.M + 15) / 16);
    if (nc)
      reference<<<rg, rb>>>(A + o, B + o, bias ? bias + o : nullptr, R, s.M, s.N, s.K);
    CK(cudaGetLastError());
    unsigned long long* bad;
    float* worst;
    CK(cudaMallocManaged(&bad, 8));
    CK(cudaMallocManaged(&worst, 4));
    // Timing sets: set 0 is the checked one; the others are copies (same values, other memory).
    std::vector<__nv_bfloat16*> As{A}, Bs{B}, Cs{C}, Cbs{Cb};
    for (int i = 1; i < (timing ? sets : 1); ++i) {
      __nv_bfloat16 *a, *b, *c, *cb;
      CK(cudaMalloc(&a, (na + 8) * 2));
      CK(cudaMalloc(&b, (nb + 8) * 2));
      CK(cudaMalloc(&c, (nc + 8) * 2));
      CK(cudaMalloc(&cb, (nc + 8) * 2));
      CK(cudaMemcpy(a, A, (na + 8) * 2, cudaMemcpyDeviceToDevice));
      CK(cudaMemcpy(b, B, (nb + 8) * 2, cudaMemcpyDeviceToDevice));
      As.push_back(a), Bs.push_back(b), Cs.push_back(c), Cbs.push_back(cb);
    }
    size_t cur_cublas = 0, cur_ours = 0; // the set of the next timed call
    auto cublas = [&] {
      const size_t i = cur_cublas++ % As.size();
      float alpha = 1, beta = 0;
      // Row-major C = A B is column-major C^T = B^T A^T.
      cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, s.N, s.M, s.K, &alpha, Bs[i] + o, CUDA_R_16BF, s.N,
                   As[i] + o, CUDA_R_16BF, s.K, &beta, Cbs[i], CUDA_R_16BF, s.N, CUBLAS_COMPUTE_32F,
                   CUBLAS_GEMM_DEFAULT);
    };
    // gemm's tensors are A, B, C; gemm_bias_gelu's A, B, bias, C (the bias shared by the sets)
    auto tensor_list = [&](__nv_bfloat16* a, __nv_bfloat16* b, __nv_bfloat16* c) {
      std::vector<void*> t{a + o, b + o, c + o};
      if (kBiasGelu)
        t.insert(t.begin() + 2, bias + o);
      return t;
    };
    std::vector<std::vector<void*>> set_tensors; // [0]: the checked set (A, B, C)
    for (size_t i = 0; i < As.size(); ++i)
      set_tensors.push_back(tensor_list(As[i], Bs[i], Cs[i]));
    int64_t dims[3] = {s.M, s.N, s.K};
    tg_variant_args args{set_tensors[0].data(), dims, nullptr, nullptr};
    tg_launch launch{sizeof(tg_launch), 0, nullptr, 0};
    auto ours = [&](tg_variant_fn fn) {
      const size_t i = cur_ours++ % As.size();
      tg_variant_args a{set_tensors[i].data(), dims, nullptr, nullptr};
      fn(&launch, &a);
    };
    // Every variant checked first; then cuBLAS and the variants that ran timed interleaved.
    std::vector<int> status;
    std::vector<float> worsts;
    std::vector<unsigned long long> bads;
    std::vector<std::function<void()>> fns;
    const bool with_cublas = timing && nc && s.K;
    if (with_cublas)
      fns.push_back(cublas);
    for (const Variant& v : kVariants) {
      CK(cudaMemset(C, 0xFF, (nc + 8) * 2)); // NaN: unwritten outputs fail
      int st = v.fn(&launch, &args);
      CK(cudaDeviceSynchronize());
      *bad = 0;
      *worst = 0;
      if (nc)
        compare<<<1024, 256>>>(C + o, R, nc, s.K, bad, worst);
      CK(cudaDeviceSynchronize());
      status.push_back(st);
      worsts.push_back(*worst);
      bads.push_back(*bad);
      if (timing && st == 0)
        fns.push_back([&, fn = v.fn] { ours(fn); });
    }
    std::function<void()> flusher;
    if (flush) {
      if (!scratch)
        CK(cudaMalloc(&scratch, kFlushBytes));
      flusher = [&] { CK(cudaMemsetAsync(scratch, (int)(++flushes & 0xFF), kFlushBytes)); };
    }
    std::vector<float> ms_all =
        fns.empty() ? std::vector<float>() : time_interleaved(fns, flush ? 10 : 20, 9, flusher);
    // CHECK_ENERGY=SUFFIX: mJ per call of cuBLAS and of each timed variant whose name ends
    // with SUFFIX (bf16__sm_90a: the default class), 200 calls each, in turn, twice
    if (const char* sub = getenv("CHECK_ENERGY"))
      for (int r = 0; r < 2 && !fns.empty(); ++r) {
        size_t f = 0;
        auto one = [&](const char* name) {
          double mj, per;
          energy_per_call(fns[f], 200, &mj, &per);
          std::printf("energy %dx%dx%d round %d %s: %.1f mJ per call, %.4f ms per call\n", s.M, s.N,
                      s.K, r, name, mj, per);
        };
        if (with_cublas)
          one("cuBLAS"), ++f;
        for (size_t vi = 0; vi < sizeof kVariants / sizeof kVariants[0]; ++vi)
          if (status[vi] == 0 && timing) {
            if (std::strlen(kVariants[vi].name) >= std::strlen(sub) &&
                !std::strcmp(kVariants[vi].name + std::strlen(kVariants[vi].name) - std::strlen(sub), sub))
              one(kVariants[vi].name);
            ++f;
          }
      }
    const float cublas_ms = with_cublas ? ms_all[0] : 0.0f;
    size_t next = with_cublas ? 1 : 0;
    for (size_t vi = 0; vi < sizeof kVariants / sizeof kVariants[0]; ++vi) {
      const Variant& v = kVariants[vi];
      const int st = status[vi];
      const float ms = timing && st == 0 ? ms_all[next++] : 0.0f;
      char shape[64];
      char off[16] = "";
      if (s.offset)
        std::snprintf(off, sizeof off, "+o%d", s.offset);
      std::snprintf(shape, sizeof shape, "%dx%dx%d%s", s.M, s.N, s.K, off);
      bool ok = st == 0 && bads[vi] == 0;
      failures += !ok;
      std::printf("%-44s %-18s %10.3f %10llu %8.4f %9.4f %9.3f %s%s\n", v.name, shape, worsts[vi],
                  bads[vi], ms, cublas_ms, ms > 0 && cublas_ms > 0 ? cublas_ms / ms : 0.0,
                  ok ? "ok" : "FAIL", st ? " (status)" : "");
      if (timing && ms > 0)
        std::printf("  %.1f TFLOP/s (cuBLAS %.1f)\n", 2.0 * s.M * s.N * s.K / ms / 1e9,
                    cublas_ms > 0 ? 2.0 * s.M * s.N * s.K / cublas_ms / 1e9 : 0.0);
    }
    for (size_t i = 0; i < As.size(); ++i) {
      cudaFree(As[i]);
      cudaFree(Bs[i]);
      cudaFree(Cs[i]);
      cudaFree(Cbs[i]);
    }
    cudaFree(R);
    cudaFree(bias);
    cudaFree(bad);
    cudaFree(worst);
  }
  std::printf("%d failure(s)\n", failures);
  return failures ? 1 : 0;
}
