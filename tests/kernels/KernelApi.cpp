#include "KernelApi.h"

#include "tgk_all.h"
#include "tgk_c.h"
#include "tgk_c_avx2.h"
#include "tgk_c_avx512.h"

namespace tgtest {

// For library LIB and dtype TY (C type CT): every entry point as a non-capturing lambda.
#define TGK_KERNEL_SET(LIB, TY, CT)                                                              \
  KernelSet {                                                                                    \
    .gemm = [](const tg_launch* l, const void* A, const void* B, void* C, int64_t M, int64_t N,  \
               int64_t K) {                                                                      \
      return LIB##_gemm_##TY(l, static_cast<const CT*>(A), static_cast<const CT*>(B),           \
                             static_cast<CT*>(C), M, N, K);                                      \
    },                                                                                           \
    .gemm_query = [](const tg_launch* l, const void* A, const void* B, void* C, int64_t M,       \
                     int64_t N, int64_t K, tg_selection* s) {                                    \
      return LIB##_gemm_##TY##_query(l, static_cast<const CT*>(A), static_cast<const CT*>(B),   \
                                     static_cast<CT*>(C), M, N, K, s);                           \
    },                                                                                           \
    .softmax = [](const tg_launch* l, const void* X, void* Y, int64_t M, int64_t N) {            \
      return LIB##_softmax_##TY(l, static_cast<const CT*>(X), static_cast<CT*>(Y), M, N);       \
    },                                                                                           \
    .softmax_query = [](const tg_launch* l, const void* X, void* Y, int64_t M, int64_t N,        \
                        tg_selection* s) {                                                       \
      return LIB##_softmax_##TY##_query(l, static_cast<const CT*>(X), static_cast<CT*>(Y), M,   \
                                        N, s);                                                   \
    },                                                                                           \
    .rmsnorm = [](const tg_launch* l, const void* X, const void* W, void* Y, int64_t M,          \
                  int64_t N, float eps) {                                                        \
      return LIB##_rmsnorm_##TY(l, static_cast<const CT*>(X), static_cast<const CT*>(W),        \
                                static_cast<CT*>(Y), M, N, eps);                                 \
    },                                                                                           \
    .rmsnorm_query = [](const tg_launch* l, const void* X, const void* W, void* Y, int64_t M,    \
                        int64_t N, float eps, tg_selection* s) {                                 \
      return LIB##_rmsnorm_##TY##_query(l, static_cast<const CT*>(X),                           \
                                        static_cast<const CT*>(W), static_cast<CT*>(Y), M, N,    \
                                        eps, s);                                                 \
    },                                                                                           \
    .layernorm = [](const tg_launch* l, const void* X, const void* W, const void* Bi, void* Y,  \
                    int64_t M, int64_t N, float eps) {                                           \
      return LIB##_layernorm_bias_##TY(l, static_cast<const CT*>(X), static_cast<const CT*>(W), \
                                       static_cast<const CT*>(Bi), static_cast<CT*>(Y), M, N,    \
                                       eps);                                                     \
    },                                                                                           \
    .layernorm_query = [](const tg_launch* l, const void* X, const void* W, const void* Bi,      \
                          void* Y, int64_t M, int64_t N, float eps, tg_selection* s) {           \
      return LIB##_layernorm_bias_##TY##_query(                                                  \
          l, static_cast<const CT*>(X), static_cast<const CT*>(W), static_cast<const CT*>(Bi),   \
          static_cast<CT*>(Y), M, N, eps, s);                                                    \
    },                                                                                           \
    .gemm_bias_gelu = [](const tg_launch* l, const void* A, const void* B, const void* bias,     \
                         void* C, int64_t M, int64_t N, int64_t K) {                             \
      return LIB##_gemm_bias_gelu_##TY(l, static_cast<const CT*>(A), static_cast<const CT*>(B), \
                                       static_cast<const CT*>(bias), static_cast<CT*>(C), M, N,  \
                                       K);                                                       \
    },                                                                                           \
    .gemm_bias_gelu_query = [](const tg_launch* l, const void* A, const void* B,                 \
                               const void* bias, void* C, int64_t M, int64_t N, int64_t K,       \
                               tg_selection* s) {                                                \
      return LIB##_gemm_bias_gelu_##TY##_query(                                                  \
          l, static_cast<const CT*>(A), static_cast<const CT*>(B), static_cast<const CT*>(bias), \
          static_cast<CT*>(C), M, N, K, s);                                                      \
    },                                                                                           \
    .flash = [](const tg_launch* l, const void* Q, const void* K, const void* V, void* O,        \
                int64_t B, int64_t H, int64_t S, int64_t D, float sc, int causal) {              \
      return LIB##_flash_attention_fwd_##TY(l, static_cast<const CT*>(Q),                       \
                                            static_cast<const CT*>(K),                          \
                                            static_cast<const CT*>(V), static_cast<CT*>(O), B, H, \
                                            S, D, sc, causal);                                   \
    },                                                                                           \
    .flash_query = [](const tg_launch* l, const void* Q, const void* K, const void* V, void* O,  \
                      int64_t B, int64_t H, int64_t S, int64_t D, float sc, int causal,          \
                      tg_selection* s) {                                                         \
      return LIB##_flash_attention_fwd_##TY##_query(                                             \
          l, static_cast<const CT*>(Q), static_cast<const CT*>(K), static_cast<const CT*>(V),    \
          static_cast<CT*>(O), B, H, S, D, sc, causal, s);                                       \
    },                                                                                           \
  }

#define TGK_FP8_SET(LIB, TY)                                                                     \
  Fp8KernelSet {                                                                                 \
    .gemm_fp8 = [](const tg_launch* l, const void* A, const void* B, void* C, int64_t M,         \
                   int64_t N, int64_t K, float sa, float sb) {                                   \
      return LIB##_gemm_fp8_##TY(l, static_cast<const tg_##TY*>(A),                             \
                                 static_cast<const tg_##TY*>(B), static_cast<tg_bf16*>(C), M, N, \
                                 K, sa, sb);                                                     \
    },                                                                                           \
    .gemm_fp8_query = [](const tg_launch* l, const void* A, const void* B, void* C, int64_t M,   \
                         int64_t N, int64_t K, float sa, float sb, tg_selection* s) {            \
      return LIB##_gemm_fp8_##TY##_query(l, static_cast<const tg_##TY*>(A),                     \
                                         static_cast<const tg_##TY*>(B),                        \
                                         static_cast<tg_bf16*>(C), M, N, K, sa, sb, s);          \
    },                                                                                           \
  }

#define TGK_LIB(LIB, FORCED)                                                                     \
  LibApi {                                                                                       \
    #LIB, FORCED,                                                                                \
        {TGK_KERNEL_SET(LIB, f32, float), TGK_KERNEL_SET(LIB, f16, tg_f16),                      \
         TGK_KERNEL_SET(LIB, bf16, tg_bf16)},                                                    \
    {                                                                                            \
      TGK_FP8_SET(LIB, e4m3), TGK_FP8_SET(LIB, e5m2)                                             \
    }                                                                                            \
  }

const std::vector<LibApi>& all_libs() {
  static const std::vector<LibApi> libs = {
      TGK_LIB(tgk_c, "c"),
      TGK_LIB(tgk_c_avx2, "c_avx2"),
      TGK_LIB(tgk_c_avx512, "c_avx512"),
      TGK_LIB(tgk_all, ""),
  };
  return libs;
}

namespace {
bool has_all(std::initializer_list<const char*> features) {
  for (const char* f : features)
    if (!tg_cpu_has(f))
      return false;
  return true;
}
bool can_run(const std::string& target) {
  if (target == "c")
    return true;
  if (target == "c_avx2")
    return has_all({"avx2", "fma", "f16c"});
  if (target == "c_avx512")
    return has_all({"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512dq"});
  return false;
}
} // namespace

std::string expected_target(const std::string& forced) {
  if (!forced.empty())
    return can_run(forced) ? forced : "";
  for (const char* t : {"c_avx512", "c_avx2", "c"}) // most specific first
    if (can_run(t))
      return t;
  return "";
}

} // namespace tgtest
