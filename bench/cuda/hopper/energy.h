// The board's energy per call, for bench/cuda/hopper's checks and the sweep: NVML's
// total-energy counter (nvmlDeviceGetTotalEnergyConsumption, mJ since the driver loaded) read
// around a batch of back-to-back calls. NVML is loaded with dlopen, so nothing links it; where
// it is missing the figures are negative. Under load the H200 runs at its power cap (about
// 800 W here, bench/RESULTS.md 2026-12-02), so energy per call bounds time per call.
#pragma once
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <functional>

inline double energy_mj() {
  static void* dev = nullptr;
  static int (*get)(void*, unsigned long long*) = nullptr;
  static bool tried = false;
  if (!tried) {
    tried = true;
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    auto init = h ? (int (*)())dlsym(h, "nvmlInit_v2") : nullptr;
    auto handle = h ? (int (*)(unsigned, void**))dlsym(h, "nvmlDeviceGetHandleByIndex_v2") : nullptr;
    auto total = h ? (int (*)(void*, unsigned long long*))dlsym(h, "nvmlDeviceGetTotalEnergyConsumption") : nullptr;
    if (init && handle && total && init() == 0 && handle(0, &dev) == 0)
      get = total;
  }
  unsigned long long mj = 0;
  return get && get(dev, &mj) == 0 ? (double)mj : -1;
}

// mJ and ms per call of fn over at least `calls` back-to-back calls and at least about a
// second: NVML's counter moves in steps (on the H200 it read 0 mJ over 35 ms of GEMMs), so
// shorter windows are not figures.
inline void energy_per_call(const std::function<void()>& fn, int calls, double* mj, double* ms) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  cudaEventRecord(a); // a short batch sizes the window
  for (int i = 0; i < 10; ++i)
    fn();
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float probe = 0;
  cudaEventElapsedTime(&probe, a, b);
  if (probe > 0 && calls * probe / 10 < 1000)
    calls = (int)(1000 / (probe / 10)) + 1;
  const double e0 = energy_mj();
  cudaEventRecord(a);
  for (int i = 0; i < calls; ++i)
    fn();
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  const double e1 = energy_mj();
  float t = 0;
  cudaEventElapsedTime(&t, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  *mj = e0 < 0 || e1 < 0 ? -1 : (e1 - e0) / calls;
  *ms = t / calls;
}
