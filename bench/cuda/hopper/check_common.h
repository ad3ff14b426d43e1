// Shared by the standalone checks of bench/cuda/hopper (gemm_check, fp8_check): CUDA error
// checks and the timing of launches.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
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

// Median per-call ms of each of `fns`, timed interleaved: `rounds` rounds, each one batch of
// `reps` back-to-back calls of every fn, in an order that rotates by one each round and runs
// backwards every other round. Timing one fn after another was biased by position: under
// load the H200's clock drifts within a second (power-bound), and in one process the first
// variant after a pause ran 4096^3 in 0.175 ms where the same kernel later in the list took
// 0.198 (bench/RESULTS.md, 2026-11-30 session 15). Every fn runs once first (warm-up).
// With `flush` set, each call instead runs alone after it (bench.py's one call at a time after
// an L2 flush): the time of a call is between two events around it, a batch's the mean.
inline std::vector<float> time_interleaved(const std::vector<std::function<void()>>& fns, int reps,
                                           int rounds = 9, const std::function<void()>& flush = {}) {
  const size_t n = fns.size();
  std::vector<std::vector<float>> t(n);
  for (const auto& f : fns)
    f();
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int r = 0; r < rounds; ++r)
    for (size_t j = 0; j < n; ++j) {
      const size_t pos = r % 2 ? n - 1 - j : j;
      const size_t i = (pos + (size_t)r / 2) % n;
      float sum = 0;
      for (int k = 0; k < (flush ? reps : 1); ++k) {
        if (flush)
          flush();
        CK(cudaEventRecord(a));
        for (int c = 0; c < (flush ? 1 : reps); ++c)
          fns[i]();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        sum += ms;
      }
      t[i].push_back(sum / reps);
    }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  std::vector<float> med(n);
  for (size_t i = 0; i < n; ++i) {
    std::sort(t[i].begin(), t[i].end());
    med[i] = t[i][t[i].size() / 2];
  }
  return med;
}
