// Shared by the standalone checks of bench/cuda/hopper (gemm_check, fp8_check): CUDA error
// checks and the timing of a launch.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                                  \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));         \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

// A uniform value in [-1, 1) from an element index and a seed (a fixed hash: reruns see the
// same inputs).
__device__ inline float check_uniform(size_t i, unsigned seed) {
  unsigned x = (unsigned)i * 2654435761u ^ seed;
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return (x & 0xFFFF) / 32768.0f - 1.0f;
}

template <class F> float time_ms(F&& f, int reps) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  f(); // warm-up
  CK(cudaDeviceSynchronize());
  // Batches of `reps` back-to-back launches: the host stays ahead of the GPU, so the time is
  // the kernels' (host cost per call is bench/cuda/host_cost's subject); median of 7 batches.
  std::vector<float> t;
  for (int r = 0; r < 7; ++r) {
    CK(cudaEventRecord(a));
    for (int i = 0; i < reps; ++i)
      f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms / reps);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
