// Shape-class dispatch of the shipped gemm on a real GPU (library g: sm_90 + c, generated from
// kernels/gemm.yaml): each class reaches its variant (gemv_narrow: M <= 16 with rows of whole
// 16-byte chunks and 512-4096 columns, no long K over few columns -> __sm_90__gemv_narrow;
// gemv: the same from 4097 columns -> __sm_90__gemv, and 17-32 rows
// below N 8192 too, and M <= 16 from N 8192 with rows of any width (N % 8 != 0: shifted chunks);
// gemv32: M <= 32 from N 8192 (any N) -> __sm_90__gemv32; small_m: M <= 32 otherwise (odd N
// below 8192 columns, K % 8 != 0) -> __sm_90__small_m, and
// m64 (M <= 64, N <= 8192) and wide_m (M <= 64) too, whose sm_90 tiles are small_m's;
// narrow: M * N <= 1048576 -> __sm_90__narrow; mid: M * N <= 2097152 -> narrow's variant too, its
// tiles on sm_90; larger -> the plain sm_90 variant), results match a host reference (ragged shapes too), _query names
// the class, f32 (whose classes share one variant) and the CPU path; and the host cost of a
// dispatch call against a raw cudaLaunchKernel of its _desc. Run by run.sh (needs nvcc and a GPU).
#include "g.h"
#include <cuda_runtime.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

static float bf2f(uint16_t b) { uint32_t u = (uint32_t)b << 16; float f; memcpy(&f, &u, 4); return f; }
static uint16_t f2bf(float f) { uint32_t u; memcpy(&u, &f, 4); u += 0x7FFF + ((u >> 16) & 1); return (uint16_t)(u >> 16); }
static int fails = 0;

static void run_bf16(int64_t M, int64_t N, int64_t K, const std::string& want) {
  std::mt19937 rng((unsigned)(M * 131 + N * 7 + K));
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<uint16_t> A(M * K), B(K * N), C(M * N);
  for (auto& x : A) x = f2bf(d(rng));
  for (auto& x : B) x = f2bf(d(rng));
  void *dA, *dB, *dC;
  cudaMalloc(&dA, A.size() * 2 + 16); cudaMalloc(&dB, B.size() * 2 + 16); cudaMalloc(&dC, C.size() * 2 + 16);
  cudaMemcpy(dA, A.data(), A.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, B.data(), B.size() * 2, cudaMemcpyHostToDevice);
  tg_selection s;
  g_gemm_bf16_query(NULL, (tg_bf16*)dA, (tg_bf16*)dB, (tg_bf16*)dC, M, N, K, &s);
  printf("bf16 M=%ld N=%ld K=%ld -> %s | %s\n", (long)M, (long)N, (long)K, s.variant, s.reason);
  if (std::string(s.variant) != want) { printf("  FAIL: want %s\n", want.c_str()); ++fails; }
  int st = g_gemm_bf16(NULL, (tg_bf16*)dA, (tg_bf16*)dB, (tg_bf16*)dC, M, N, K);
  cudaError_t e = cudaDeviceSynchronize();
  if (st != TG_OK || e != cudaSuccess) { printf("  FAIL: status %d cuda %s\n", st, cudaGetErrorString(e)); ++fails; }
  cudaMemcpy(C.data(), dC, C.size() * 2, cudaMemcpyDeviceToHost);
  double maxerr = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0;
      for (int64_t k = 0; k < K; ++k) ref += (double)bf2f(A[i * K + k]) * bf2f(B[k * N + j]);
      double err = std::fabs(bf2f(C[i * N + j]) - ref) / (1.0 + std::fabs(ref));
      if (err > maxerr) maxerr = err;
    }
  printf("  max rel err %.3g\n", maxerr);
  if (maxerr > 2e-2) { printf("  FAIL: numerics\n"); ++fails; }
  // Host cost: dispatch call vs raw cudaLaunchKernel of its _desc, same stream (legacy default).
  tg_gpu_launch_desc ds;
  if (g_gemm_bf16_desc(NULL, (tg_bf16*)dA, (tg_bf16*)dB, (tg_bf16*)dC, M, N, K, &ds) != TG_OK) { printf("  FAIL desc\n"); ++fails; }
  // Interleaved rounds, best of each: enqueue cost varies run to run on a shared host.
  const int n = 1000;
  double best_d = 1e9, best_r = 1e9;
  for (int rep = 0; rep < 30; ++rep) {
    cudaDeviceSynchronize();
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) g_gemm_bf16(NULL, (tg_bf16*)dA, (tg_bf16*)dB, (tg_bf16*)dC, M, N, K);
    auto t1 = std::chrono::steady_clock::now();
    cudaDeviceSynchronize();
    auto t2 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i)
      cudaLaunchKernel(ds.func, dim3(ds.grid[0], ds.grid[1], ds.grid[2]), dim3(ds.block[0], ds.block[1], ds.block[2]), ds.args, ds.smem_bytes, 0);
    auto t3 = std::chrono::steady_clock::now();
    cudaDeviceSynchronize();
    best_d = std::min(best_d, std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
    best_r = std::min(best_r, std::chrono::duration<double, std::micro>(t3 - t2).count() / n);
  }
  printf("  host cost per call: dispatch %.2f us, raw cudaLaunchKernel %.2f us, ratio %.2f\n", best_d, best_r, best_d / best_r);
  cudaFree(dA); cudaFree(dB); cudaFree(dC);
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("SKIP: no CUDA device\n");
    return 77;
  }
  const std::string p = "tgv_g__gemm__bf16__sm_90";
  run_bf16(5, 4096, 1024, p + "__gemv_narrow");
  run_bf16(3, 640, 1000, p + "__gemv_narrow"); // K not a whole k tile
  run_bf16(5, 8192, 256, p + "__gemv");
  run_bf16(17, 1024, 8, p + "__gemv");       // two 16-row tiles, K inside one k tile
  run_bf16(24, 8192, 520, p + "__gemv32");
  run_bf16(5, 8193, 256, p + "__gemv");      // odd N from 8192 columns: 2-byte shifted chunks
  run_bf16(16, 8198, 136, p + "__gemv");     // N % 8 == 6: 4-byte chunks
  run_bf16(24, 8195, 264, p + "__gemv32");   // odd N, 17-32 rows
  run_bf16(5, 8193, 257, p + "__small_m");   // K % 8 != 0: A's rows too
  run_bf16(5, 4097, 1024, p + "__small_m");  // odd N: rows of no whole 16 bytes
  run_bf16(1, 1024, 8192, p + "__small_m");  // long K over few columns
  run_bf16(64, 512, 256, p + "__small_m");   // m64
  run_bf16(40, 8200, 64, p + "__small_m");   // wide_m
  run_bf16(1, 256, 128, p + "__small_m");
  run_bf16(37, 200, 72, p + "__small_m");   // ragged
  run_bf16(37, 201, 72, p + "__small_m");   // odd N
  run_bf16(65, 512, 256, p + "__narrow");    // M * N <= 1048576
  run_bf16(300, 264, 136, p + "__narrow");   // ragged narrow
  run_bf16(1100, 1500, 72, p + "__narrow");  // mid (M * N <= 2097152): narrow's tiles on sm_90
  run_bf16(1000, 2304, 256, p);              // large
  run_bf16(1030, 2050, 72, p);               // ragged large
  // f32: both classes share the plain variant; the reason still names the class.
  tg_selection s;
  float* d; cudaMalloc(&d, 1 << 20);
  g_gemm_f32_query(NULL, d, d, d, 16, 64, 64, &s);
  printf("f32 M=16 -> %s | %s\n", s.variant, s.reason);
  if (std::string(s.variant) != "tgv_g__gemm__f32__sm_90" || !strstr(s.reason, "class small_m (M <= 32)")) { printf("  FAIL f32\n"); ++fails; }
  tg_launch cpu = {}; cpu.device = -1;
  g_gemm_f32_query(&cpu, d, d, d, 16, 64, 64, &s);
  printf("f32 CPU -> %s | %s\n", s.variant, s.reason);
  printf(fails ? "DEVTEST FAILED (%d)\n" : "DEVTEST OK\n", fails);
  return fails != 0;
}
