// The generated dispatch libraries under test, behind one type-erased table so that every test
// runs against every library and dtype. Four libraries are built from kernels/*.yaml
// (tests/kernels/CMakeLists.txt): one per C target (forcing that target) and one with all three
// (exercising run-time selection).
#pragma once

#include "Numeric.h"

#include "tilegen/runtime.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tgtest {

// One function pointer per public entry point; tensors as void* (the lambdas in KernelApi.cpp
// cast them back to the generated prototypes, so no call goes through a mismatched type).
struct KernelSet {
  tg_status (*gemm)(const tg_launch*, const void* A, const void* B, void* C, int64_t M, int64_t N,
                    int64_t K);
  tg_status (*gemm_query)(const tg_launch*, const void* A, const void* B, void* C, int64_t M,
                          int64_t N, int64_t K, tg_selection* out);
  tg_status (*softmax)(const tg_launch*, const void* X, void* Y, int64_t M, int64_t N);
  tg_status (*softmax_query)(const tg_launch*, const void* X, void* Y, int64_t M, int64_t N,
                             tg_selection* out);
  tg_status (*rmsnorm)(const tg_launch*, const void* X, const void* W, void* Y, int64_t M,
                       int64_t N, float eps);
  tg_status (*rmsnorm_query)(const tg_launch*, const void* X, const void* W, void* Y, int64_t M,
                             int64_t N, float eps, tg_selection* out);
  // tests/kernels/layernorm_bias.yaml (not a shipped kernel: the C streaming tile rule's case)
  tg_status (*layernorm)(const tg_launch*, const void* X, const void* W, const void* Bias,
                         void* Y, int64_t M, int64_t N, float eps);
  tg_status (*layernorm_query)(const tg_launch*, const void* X, const void* W, const void* Bias,
                               void* Y, int64_t M, int64_t N, float eps, tg_selection* out);
  tg_status (*gemm_bias_gelu)(const tg_launch*, const void* A, const void* B, const void* bias,
                              void* C, int64_t M, int64_t N, int64_t K);
  tg_status (*gemm_bias_gelu_query)(const tg_launch*, const void* A, const void* B,
                                    const void* bias, void* C, int64_t M, int64_t N, int64_t K,
                                    tg_selection* out);
  tg_status (*flash)(const tg_launch*, const void* Q, const void* K, const void* V, void* O,
                     int64_t B, int64_t H, int64_t S, int64_t D, float sm_scale, int causal);
  tg_status (*flash_query)(const tg_launch*, const void* Q, const void* K, const void* V, void* O,
                           int64_t B, int64_t H, int64_t S, int64_t D, float sm_scale,
                           int causal, tg_selection* out);
};

// gemm_fp8 (A, B in one FP8 type, C bf16), per FP8 type.
struct Fp8KernelSet {
  tg_status (*gemm_fp8)(const tg_launch*, const void* A, const void* B, void* C, int64_t M,
                        int64_t N, int64_t K, float scale_a, float scale_b);
  tg_status (*gemm_fp8_query)(const tg_launch*, const void* A, const void* B, void* C, int64_t M,
                              int64_t N, int64_t K, float scale_a, float scale_b,
                              tg_selection* out);
};

struct LibApi {
  std::string name;          // "tgk_c", ..., "tgk_all"
  std::string forced_target; // the only target it was built for, or "" (all C targets)
  std::array<KernelSet, 3> by_dt; // indexed by Dt (F32, F16, BF16)
  std::array<Fp8KernelSet, 2> by_fp8; // E4M3, E5M2

  const KernelSet& operator[](Dt dt) const { return by_dt[static_cast<int>(dt)]; }
  const Fp8KernelSet& fp8(Dt dt) const { return by_fp8[dt == Dt::E4M3 ? 0 : 1]; }
};

const std::vector<LibApi>& all_libs();

// The target a library built for `forced` (or for all C targets if "") must select on this
// machine, or "" if none of its variants can run here.
std::string expected_target(const std::string& forced);

} // namespace tgtest
