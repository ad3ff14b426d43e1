// The ceiling of the sm_80-style path: mma.sync m16n8k16 bf16 throughput on this GPU. Each warp
// issues independent mma into NACC accumulator sets from registers only (no memory traffic),
// so the tensor pipe is the only limit. Build here, run on the device:
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a bench/cuda/micro/mma_peak.cu -o build-hopper/mma_peak
// H200 (1980 MHz): 644 TFLOP/s, about 60% of wgmma's dense bf16 peak (bench/RESULTS.md).
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
template <int NACC>
__global__ void k(float* out, int iters, uint32_t seed) {
  uint32_t a[4] = {seed, seed * 3, seed * 5, seed * 7}, b0 = seed * 11, b1 = seed * 13;
  float d[NACC][4] = {};
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int j = 0; j < NACC; ++j)
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                   : "+f"(d[j][0]), "+f"(d[j][1]), "+f"(d[j][2]), "+f"(d[j][3])
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < NACC; ++j) s += d[j][0] + d[j][1] + d[j][2] + d[j][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
template <int NACC> void run(int blocks, int threads) {
  float* out; cudaMalloc(&out, sizeof(float) * blocks * threads);
  int iters = 4096;
  k<NACC><<<blocks, threads>>>(out, iters, 1);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  cudaEventRecord(e0);
  for (int r = 0; r < 5; ++r) k<NACC><<<blocks, threads>>>(out, iters, 1);
  cudaEventRecord(e1); cudaEventSynchronize(e1);
  float ms; cudaEventElapsedTime(&ms, e0, e1);
  double flops = 5.0 * blocks * (threads / 32) * (double)iters * NACC * 16 * 8 * 16 * 2;
  printf("mma.sync bf16 acc-sets %2d, %4d blocks x %3d threads: %.1f TFLOP/s\n", NACC, blocks, threads, flops / ms / 1e9);
  cudaFree(out);
}
int main() {
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  run<32>(sms * 2, 128); run<32>(sms * 1, 256); run<32>(sms * 4, 128); run<16>(sms * 4, 128); run<8>(sms * 8, 128);
  return 0;
}
