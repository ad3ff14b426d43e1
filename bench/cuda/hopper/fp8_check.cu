// Standalone timing of generated FP8 GEMM variants (kernels/gemm_fp8.yaml, e4m3) against
// cuBLASLt's FP8 matmul with per-tensor scales, bf16 out and f32 accumulation without fast
// accumulation (what torch._scaled_mm calls by default), in the same process, on one GPU:
//
//   fp8_check [M N K [ROUNDS]]      default 8192 8192 8192 3
//
// Prints each variant's largest difference from cuBLASLt's result, then per round the median
// of 7 batches of 20 back-to-back launches of cuBLASLt and of each variant, in turn (variants
// timed one after another drift with the GPU's power state: compare within a round). Built by
// bench/cuda/hopper/build.sh (TG_VARIANTS: the functions; FP8_CHECK_SPECS: more gemm_fp8-like
// specs to compare, e.g. schedule experiments).
#include "check_common.h"
#include "energy.h"
#include "tilegen/variant.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <vector>
#define CL(x)                                                                                      \
  do {                                                                                             \
    cublasStatus_t s_ = (x);                                                                       \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                             \
      printf("%s:%d cublas %d\n", __FILE__, __LINE__, (int)s_);                                    \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)
#define TG_VARIANT(f) extern "C" int f(const tg_launch*, const tg_variant_args*);
TG_VARIANTS
#undef TG_VARIANT
struct V {
  const char* name;
  tg_variant_fn fn;
};
#define TG_VARIANT(f) {#f, f},
static const V kV[] = {TG_VARIANTS};
__global__ void fill(__nv_fp8_e4m3* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    const float v = check_uniform(i, seed);
    p[i] = __nv_fp8_e4m3(v == 0 ? 0.5f : v);
  }
}
__global__ void diff(const __nv_bfloat16* a, const __nv_bfloat16* b, size_t n, float* worst,
                     float* maxref) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x) {
    float x = __bfloat162float(a[i]), y = __bfloat162float(b[i]);
    atomicMax((int*)worst, __float_as_int(fabsf(x - y)));
    atomicMax((int*)maxref, __float_as_int(fabsf(y)));
  }
}
int main(int argc, char** argv) {
  int M = argc > 1 ? atoi(argv[1]) : 8192, N = argc > 2 ? atoi(argv[2]) : 8192,
      K = argc > 3 ? atoi(argv[3]) : 8192;
  int rounds = argc > 4 ? atoi(argv[4]) : 3;
  if (M <= 0 || N <= 0 || K <= 0 || K % 16 || rounds < 0) {
    printf("usage: fp8_check [M N K [ROUNDS]] with positive dims and K a multiple of 16\n");
    return 2;
  }
  __nv_fp8_e4m3 *A, *B;
  __nv_bfloat16 *C, *R;
  float *sa, *sb, *w, *mr;
  CK(cudaMalloc(&A, (size_t)M * K));
  CK(cudaMalloc(&B, (size_t)N * K));
  CK(cudaMalloc(&C, (size_t)M * N * 2));
  CK(cudaMalloc(&R, (size_t)M * N * 2));
  CK(cudaMalloc(&sa, 4));
  CK(cudaMalloc(&sb, 4));
  CK(cudaMallocManaged(&w, 4));
  CK(cudaMallocManaged(&mr, 4));
  const float s_a = 0.37f, s_b = 0.37f;
  CK(cudaMemcpy(sa, &s_a, 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(sb, &s_b, 4, cudaMemcpyHostToDevice));
  fill<<<1024, 256>>>(A, (size_t)M * K, 11u);
  fill<<<1024, 256>>>(B, (size_t)N * K, 29u);
  // Column-major view: C^T [N, M] = B [K, N]^T A [K, M] ("TN", the layout FP8 needs); B's
  // scale goes with cuBLASLt's A and A's with its B.
  cublasLtHandle_t lt;
  CL(cublasLtCreate(&lt));
  cublasLtMatmulDesc_t op;
  CL(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  CL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  CL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sb, sizeof sb));
  CL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sa, sizeof sa));
  cublasLtMatrixLayout_t la, lb, lc;
  CL(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, K, N, K));
  CL(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, K, M, K));
  CL(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, N, M, N));
  size_t ws_bytes = 64 << 20;
  void* ws;
  CK(cudaMalloc(&ws, ws_bytes));
  cublasLtMatmulPreference_t pref;
  CL(cublasLtMatmulPreferenceCreate(&pref));
  CL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                          sizeof ws_bytes));
  cublasLtMatmulHeuristicResult_t heur;
  int found = 0;
  CL(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heur, &found));
  if (!found) {
    printf("cuBLASLt has no FP8 algorithm for %dx%dx%d\n", M, N, K);
    return 1;
  }
  float one = 1, zero = 0;
  auto ref = [&] {
    CL(cublasLtMatmul(lt, op, &one, B, la, A, lb, &zero, R, lc, R, lc, &heur.algo, ws, ws_bytes,
                      0));
  };
  ref();
  CK(cudaDeviceSynchronize());
  void* tensors[3] = {A, B, C};
  int64_t dims[3] = {M, N, K};
  double sc[2] = {s_a, s_b};
  tg_variant_args args{tensors, dims, sc, nullptr};
  tg_launch launch{sizeof(tg_launch), 0, nullptr, 0};
  const double fl = 2.0 * M * N * K;
  for (const V& v : kV) {
    CK(cudaMemset(C, 0xFF, (size_t)M * N * 2));
    if (v.fn(&launch, &args) != 0) {
      printf("%s: status\n", v.name);
      return 1;
    }
    CK(cudaDeviceSynchronize());
    *w = 0;
    *mr = 0;
    diff<<<1024, 256>>>(C, R, (size_t)M * N, w, mr);
    CK(cudaDeviceSynchronize());
    printf("%-40s max|C - cuBLASLt| %.4g (max|cuBLASLt| %.4g)\n", v.name, *w, *mr);
  }
  // Each round times cuBLASLt and every variant interleaved (time_interleaved), so no variant
  // gains from its place in the order.
  std::vector<std::function<void()>> fns{ref};
  for (const V& v : kV)
    fns.push_back([&, fn = v.fn] { fn(&launch, &args); });
  for (int r = 0; r < rounds; ++r) {
    const std::vector<float> t = time_interleaved(fns, 20, 5);
    const float c = t[0];
    printf("round %d: cublasLt %.4f ms %.0f TF", r, c, fl / c / 1e9);
    for (size_t i = 0; i < sizeof kV / sizeof kV[0]; ++i)
      printf(" | %s %.4f ms %.0f TF %.3fx", kV[i].name + 4, t[i + 1], fl / t[i + 1] / 1e9, c / t[i + 1]);
    printf("\n");
  }
  // CHECK_ENERGY=1: mJ per call of cuBLASLt and each variant, 200 calls each, twice
  if (getenv("CHECK_ENERGY"))
    for (int r = 0; r < 2; ++r) {
      printf("energy round %d:", r);
      for (const auto& f : fns) {
        double mj, per;
        energy_per_call(f, 200, &mj, &per);
        printf(" | %.1f mJ %.4f ms", mj, per);
      }
      printf("\n");
    }
  return 0;
}
