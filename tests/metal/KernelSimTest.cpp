// Every shipped kernel (kernels/*.yaml) x type, generated for target `metal`, executed on the
// CPU by the MSL threadgroup simulator (tests/metal/sim) through the generated host launchers
// (<lib>_metal.c, the variant ABI) and compared with the float64 references of tests/kernels
// on small ragged shapes; and deliberately broken copies of generated kernels (a removed
// barrier, a transposed SIMD-group matrix lane mapping, a dropped SIMD-group reduction) that
// the same checks must reject. docs/metal.md, "Verification".
#include "Numeric.h"
#include "Reference.h"

#include "tgm.h"
#include "tilegen/metal.h"
#include "tilegen/variant.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

struct TgLauncher {
  const char* name;
  tg_variant_fn fn;
};
extern const TgLauncher tg_launchers[];

namespace tgsim {
void set_kernel_prefix(const std::string& prefix);
}

namespace tgtest {
namespace {

const char* kLib = TGM_LIB;

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

tg_variant_fn launcher(const std::string& kernel, const std::string& inst) {
  const std::string name = std::string("tgv_") + kLib + "__" + kernel + "__" + inst + "__metal";
  for (const TgLauncher* l = tg_launchers; l->name; ++l)
    if (name == l->name)
      return l->fn;
  ADD_FAILURE() << "no Metal launcher " << name;
  return nullptr;
}

// Runs a launcher: tensors in spec order, dims in params order, scalars.
int call(tg_variant_fn fn, std::vector<void*> tensors, std::vector<int64_t> dims,
         std::vector<double> scalars = {}) {
  tg_variant_args a{};
  a.tensors = tensors.data();
  a.dims = dims.data();
  a.scalars = scalars.empty() ? nullptr : scalars.data();
  a.flags = nullptr;
  return fn(nullptr, &a);
}

// The numeric verdict of tests/kernels (KernelNumericTest.cpp): rel error within tolerance,
// no NaN/inf/unwritten element, the guards intact. Returns whether it passed; prints a line.
bool verdict(const char* kernel, Dt dt, const std::string& sizes, const GuardedBuffer& out,
             const std::vector<double>& ref, int64_t reduction_len, double scale = 0,
             bool quiet = false) {
  ErrorStats s = compare(out.values(), ref, scale);
  const double tol = tolerance(dt, reduction_len);
  const bool ok = s.rel <= tol && s.nonfinite == 0 && out.guards_intact();
  if (!quiet)
    std::printf("[metal-sim] %-20s %-5s %-34s max_err %.3e rel %.3e tol %.3e %s\n", kernel,
                dt_name(dt), sizes.c_str(), s.max_abs_err, s.rel, tol, ok ? "ok" : "FAIL");
  return ok;
}

class SimTest : public testing::TestWithParam<Dt> {
protected:
  Dt dt() const { return GetParam(); }
  void TearDown() override { tgsim::set_kernel_prefix(""); }
};

std::string dt_param_name(const testing::TestParamInfo<Dt>& i) { return dt_name(i.param); }

} // namespace
// Readable parameter values in test listings (instead of gtest's byte dump).
void PrintTo(Dt dt, std::ostream* os) { *os << dt_name(dt); }
namespace {

// ---- gemm, gemm_bias_gelu -------------------------------------------------------------------

struct GemmSize {
  int64_t M, N, K;
};
// Ragged against BM = BN = 64, BK = 32 (and the 8x8 matrices), one block and several, empty.
constexpr GemmSize kGemmSizes[] = {{1, 1, 1},  {7, 9, 5},  {65, 70, 33}, {130, 67, 100},
                                   {8, 64, 64}, {0, 7, 5}, {7, 0, 5},    {7, 5, 0}};

bool run_gemm(Dt dt, const GemmSize& z, bool quiet = false) {
  const auto [M, N, K] = z;
  const std::string sizes = fmt("M=%" PRId64 " N=%" PRId64 " K=%" PRId64, M, N, K);
  std::mt19937_64 rng(seed_of(std::string("metal/gemm/") + dt_name(dt) + "/" + sizes));
  GuardedBuffer A(dt, M * K), B(dt, K * N), C(dt, M * N);
  auto a = fill_random(A, rng), b = fill_random(B, rng);
  auto a0 = A.snapshot(), b0 = B.snapshot();
  EXPECT_EQ(call(launcher("gemm", dt_name(dt)), {A.data(), B.data(), C.data()}, {M, N, K}), TG_OK)
      << tg_metal_last_error();
  EXPECT_TRUE(A.same_as(a0) && B.same_as(b0)) << "an input tensor was modified";
  if (M * N == 0)
    return C.untouched() && C.guards_intact();
  return verdict("gemm", dt, sizes, C, ref::gemm(a, b, M, N, K), K, 0, quiet);
}

TEST_P(SimTest, Gemm) {
  for (const auto& z : kGemmSizes)
    EXPECT_TRUE(run_gemm(dt(), z)) << z.M << "x" << z.N << "x" << z.K;
}

TEST_P(SimTest, GemmBiasGelu) {
  for (const auto& [M, N, K] : kGemmSizes) {
    const std::string sizes = fmt("M=%" PRId64 " N=%" PRId64 " K=%" PRId64, M, N, K);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of(std::string("metal/gemm_bias_gelu/") + dt_name(dt()) + "/" + sizes));
    GuardedBuffer A(dt(), M * K), B(dt(), K * N), bias(dt(), N), C(dt(), M * N);
    auto a = fill_random(A, rng), b = fill_random(B, rng), bb = fill_random(bias, rng);
    ASSERT_EQ(call(launcher("gemm_bias_gelu", dt_name(dt())),
                   {A.data(), B.data(), bias.data(), C.data()}, {M, N, K}),
              TG_OK)
        << tg_metal_last_error();
    if (M * N == 0) {
      EXPECT_TRUE(C.untouched());
      continue;
    }
    EXPECT_TRUE(verdict("gemm_bias_gelu", dt(), sizes, C,
                        ref::gemm_bias_gelu(a, b, bb, M, N, K), K + 1));
  }
}

// ---- gemm_fp8 ---------------------------------------------------------------------------------

class SimFp8Test : public SimTest {};

TEST_P(SimFp8Test, GemmFp8) {
  for (const auto& [M, N, K] : kGemmSizes) {
    const float sa = 0.37f, sb = 2.5f;
    const std::string sizes = fmt("M=%" PRId64 " N=%" PRId64 " K=%" PRId64, M, N, K);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of(std::string("metal/gemm_fp8/") + dt_name(dt()) + "/" + sizes));
    GuardedBuffer A(dt(), M * K), B(dt(), N * K), C(Dt::BF16, M * N);
    auto a = fill_random_fp8(A, rng), b = fill_random_fp8(B, rng);
    ASSERT_EQ(call(launcher("gemm_fp8", dt_name(dt())), {A.data(), B.data(), C.data()}, {M, N, K},
                   {sa, sb}),
              TG_OK)
        << tg_metal_last_error();
    if (M * N == 0) {
      EXPECT_TRUE(C.untouched());
      continue;
    }
    const auto ref = ref::gemm_fp8(a, b, M, N, K, sa, sb);
    const auto absref = ref::gemm_fp8(a, b, M, N, K, sa, sb, true);
    std::vector<double> bound(ref.size());
    for (size_t i = 0; i < ref.size(); ++i)
      bound[i] = fp8_gemm_bound(ref[i], absref[i], K);
    size_t worst = 0;
    const double ratio = max_bound_ratio(C.values(), ref, bound, &worst);
    std::printf("[metal-sim] %-20s %-5s %-34s err/bound %.3f %s\n", "gemm_fp8", dt_name(dt()),
                sizes.c_str(), ratio, ratio <= 1 ? "ok" : "FAIL");
    EXPECT_LE(ratio, 1.0) << "element " << worst;
    EXPECT_TRUE(verdict("gemm_fp8", Dt::BF16, sizes, C, ref, K));
  }
}

// ---- softmax, rmsnorm -------------------------------------------------------------------------

struct RowSize {
  int64_t M, N;
};
// BN = 1024 over 128 threads: one column chunk and several, ragged, empty.
constexpr RowSize kRowSizes[] = {{1, 1}, {7, 7}, {3, 129}, {2, 1030}, {3, 2049}, {0, 7}, {7, 0}};

bool run_softmax(Dt dt, const RowSize& z, bool quiet = false) {
  const auto [M, N] = z;
  const std::string sizes = fmt("M=%" PRId64 " N=%" PRId64, M, N);
  std::mt19937_64 rng(seed_of(std::string("metal/softmax/") + dt_name(dt) + "/" + sizes));
  GuardedBuffer X(dt, M * N), Y(dt, M * N);
  auto x = fill_random(X, rng, -4.0, 4.0);
  EXPECT_EQ(call(launcher("softmax", dt_name(dt)), {X.data(), Y.data()}, {M, N}), TG_OK)
      << tg_metal_last_error();
  if (M * N == 0)
    return Y.untouched();
  return verdict("softmax", dt, sizes, Y, ref::softmax(x, M, N), N, 0, quiet);
}

TEST_P(SimTest, Softmax) {
  for (const auto& z : kRowSizes)
    EXPECT_TRUE(run_softmax(dt(), z)) << z.M << "x" << z.N;
}

TEST_P(SimTest, RmsNorm) {
  const float eps = 1e-5f;
  for (const auto& [M, N] : kRowSizes) {
    const std::string sizes = fmt("M=%" PRId64 " N=%" PRId64, M, N);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of(std::string("metal/rmsnorm/") + dt_name(dt()) + "/" + sizes));
    GuardedBuffer X(dt(), M * N), W(dt(), N), Y(dt(), M * N);
    auto x = fill_random(X, rng), w = fill_random(W, rng);
    ASSERT_EQ(call(launcher("rmsnorm", dt_name(dt())), {X.data(), W.data(), Y.data()}, {M, N},
                   {eps}),
              TG_OK)
        << tg_metal_last_error();
    if (M * N == 0) {
      EXPECT_TRUE(Y.untouched());
      continue;
    }
    EXPECT_TRUE(verdict("rmsnorm", dt(), sizes, Y, ref::rmsnorm(x, w, M, N, eps), N));
  }
}

// ---- flash_attention_fwd ----------------------------------------------------------------------

struct AttnSize {
  int64_t B, H, S, D;
};
// S ragged against BM = BN = 16; both head dims; empty B and S.
constexpr AttnSize kAttnSizes[] = {{1, 1, 1, 64},  {2, 3, 7, 64},  {1, 2, 37, 64}, {1, 1, 1, 128},
                                   {2, 1, 7, 128}, {1, 1, 33, 128}, {0, 2, 7, 64},  {1, 1, 0, 128}};

TEST_P(SimTest, FlashAttention) {
  for (int causal = 0; causal <= 1; ++causal)
    for (const auto& [B, H, S, D] : kAttnSizes) {
      const std::string sizes = fmt("B=%" PRId64 " H=%" PRId64 " S=%" PRId64 " D=%" PRId64
                                    " causal=%d", B, H, S, D, causal);
      SCOPED_TRACE(sizes);
      std::mt19937_64 rng(seed_of(std::string("metal/flash/") + dt_name(dt()) + "/" + sizes));
      const size_t count = static_cast<size_t>(B * H * S * D);
      GuardedBuffer Q(dt(), count), K(dt(), count), V(dt(), count), O(dt(), count);
      auto q = fill_random(Q, rng), k = fill_random(K, rng), v = fill_random(V, rng);
      const float sm_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
      const std::string inst = fmt("%s_causal%d_D%" PRId64, dt_name(dt()), causal, D);
      ASSERT_EQ(call(launcher("flash_attention_fwd", inst), {Q.data(), K.data(), V.data(), O.data()},
                     {B, H, S, D}, {sm_scale}),
                TG_OK)
          << tg_metal_last_error();
      if (count == 0) {
        EXPECT_TRUE(O.untouched());
        continue;
      }
      double vmax = 0;
      for (double x : v)
        vmax = std::max(vmax, std::fabs(x));
      EXPECT_TRUE(verdict("flash_attention_fwd", dt(), sizes, O,
                          ref::flash_attention(q, k, v, B, H, S, D, sm_scale, causal != 0),
                          S + D, vmax));
    }
}

INSTANTIATE_TEST_SUITE_P(Metal, SimTest, testing::ValuesIn(kAllDts), dt_param_name);
INSTANTIATE_TEST_SUITE_P(Metal, SimFp8Test, testing::ValuesIn(kFp8Dts), dt_param_name);

// ---- the public C API (tgm.h): Metal rows on the simulated GPU, C rows with device -1 ----------

TEST(SimApi, GemmRunsOnMetalByDefaultAndOnTheCpuWithDeviceMinusOne) {
  const int64_t M = 65, N = 70, K = 33;
  std::mt19937_64 rng(seed_of("metal/api/gemm"));
  GuardedBuffer A(Dt::F32, M * K), B(Dt::F32, K * N), C(Dt::F32, M * N), C2(Dt::F32, M * N);
  auto a = fill_random(A, rng), b = fill_random(B, rng);
  const auto* pa = static_cast<const float*>(A.data());
  const auto* pb = static_cast<const float*>(B.data());
  tg_selection sel{};
  ASSERT_EQ(tgm_gemm_f32_query(nullptr, pa, pb, static_cast<float*>(C.data()), M, N, K, &sel), TG_OK)
      << sel.reason;
  EXPECT_STREQ(sel.target, "metal") << sel.reason;
  EXPECT_STREQ(sel.variant, "tgv_tgm__gemm__f32__metal");
  ASSERT_EQ(tgm_gemm_f32(nullptr, pa, pb, static_cast<float*>(C.data()), M, N, K), TG_OK);
  const auto ref = ref::gemm(a, b, M, N, K);
  EXPECT_TRUE(verdict("gemm (API, metal)", Dt::F32, "M=65 N=70 K=33", C, ref, K));

  tg_launch cpu{};
  cpu.struct_size = sizeof cpu;
  cpu.device = -1;
  ASSERT_EQ(tgm_gemm_f32_query(&cpu, pa, pb, static_cast<float*>(C2.data()), M, N, K, &sel), TG_OK);
  EXPECT_STREQ(sel.target, "c") << sel.reason;
  ASSERT_EQ(tgm_gemm_f32(&cpu, pa, pb, static_cast<float*>(C2.data()), M, N, K), TG_OK);
  EXPECT_TRUE(verdict("gemm (API, c)", Dt::F32, "M=65 N=70 K=33", C2, ref, K));
}

TEST(SimApi, FlashAttentionInstanceSelectedByFlagAndHeadDim) {
  const int64_t B = 1, H = 2, S = 37, D = 128;
  const size_t count = static_cast<size_t>(B * H * S * D);
  std::mt19937_64 rng(seed_of("metal/api/flash"));
  GuardedBuffer Q(Dt::BF16, count), K(Dt::BF16, count), V(Dt::BF16, count), O(Dt::BF16, count);
  auto q = fill_random(Q, rng), k = fill_random(K, rng), v = fill_random(V, rng);
  const float sm_scale = 0.125f;
  auto* pq = static_cast<const tg_bf16*>(Q.data());
  auto* pk = static_cast<const tg_bf16*>(K.data());
  auto* pv = static_cast<const tg_bf16*>(V.data());
  auto* po = static_cast<tg_bf16*>(O.data());
  tg_selection sel{};
  ASSERT_EQ(tgm_flash_attention_fwd_bf16_query(nullptr, pq, pk, pv, po, B, H, S, D, sm_scale, 1, &sel),
            TG_OK)
      << sel.reason;
  EXPECT_STREQ(sel.target, "metal") << sel.reason;
  EXPECT_STREQ(sel.instance, "bf16_causal1_D128");
  ASSERT_EQ(tgm_flash_attention_fwd_bf16(nullptr, pq, pk, pv, po, B, H, S, D, sm_scale, 1), TG_OK);
  double vmax = 0;
  for (double x : v)
    vmax = std::max(vmax, std::fabs(x));
  EXPECT_TRUE(verdict("flash (API, metal)", Dt::BF16, "B=1 H=2 S=37 D=128 causal=1", O,
                      ref::flash_attention(q, k, v, B, H, S, D, sm_scale, true), S + D, vmax));
}

// ---- mutants: the simulator must catch broken kernels -----------------------------------------

// The generated gemm f32 passes; the same source with its first barrier removed, or with the
// lanes' row and column in the 8x8 matrices swapped, fails at a multi-block ragged shape.
TEST(SimMutants, GemmWithoutBarrierFails) {
  const GemmSize z{65, 70, 33};
  ASSERT_TRUE(run_gemm(Dt::F32, z, true));
  tgsim::set_kernel_prefix("nobarrier/");
  EXPECT_FALSE(run_gemm(Dt::F32, z, true)) << "the simulator did not notice a missing barrier";
  tgsim::set_kernel_prefix("");
}

TEST(SimMutants, GemmWithSwappedLaneMappingFails) {
  const GemmSize z{65, 70, 33};
  ASSERT_TRUE(run_gemm(Dt::F32, z, true));
  tgsim::set_kernel_prefix("lanes/");
  EXPECT_FALSE(run_gemm(Dt::F32, z, true)) << "the simulator did not notice a wrong lane mapping";
  tgsim::set_kernel_prefix("");
}

TEST(SimMutants, SoftmaxWithoutSimdReductionFails) {
  const RowSize z{3, 129};
  ASSERT_TRUE(run_softmax(Dt::F32, z, true));
  tgsim::set_kernel_prefix("reduce/");
  EXPECT_FALSE(run_softmax(Dt::F32, z, true)) << "the simulator did not notice a lost reduction";
  tgsim::set_kernel_prefix("");
}

} // namespace
} // namespace tgtest
