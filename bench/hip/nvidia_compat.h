/* Pre-included (nvcc -include) by the device pass of .hip variants on HIP's NVIDIA platform
 * (bench/hip/run_device.sh, docs/hip.md "HIP on NVIDIA"). ROCm 5.2's nvidia_detail host-API
 * wrappers (nvidia_hip_runtime_api.h) do not compile against CUDA 12.8+/13 (cudaDeviceProp
 * members, cudaMemPrefetchAsync, texture references and cudaGraph* signatures changed: 38
 * errors with nvcc 13.0). The generated kernels use none of that host API, only the device
 * side of hip/hip_runtime.h (nvidia_detail/nvidia_hip_runtime.h) and hip/hip_fp16.h, so the
 * wrapper header is skipped through its include guard and the two constants the remaining
 * hip_runtime_api.h templates name are defined as that header defines them. */
#ifndef TG_HIP_NVIDIA_COMPAT_H
#define TG_HIP_NVIDIA_COMPAT_H
#define HIP_INCLUDE_HIP_NVIDIA_DETAIL_HIP_RUNTIME_API_H 1
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#define hipHostMallocDefault cudaHostAllocDefault
#define hipMemAttachGlobal cudaMemAttachGlobal
#endif
