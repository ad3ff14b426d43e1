// Numeric verification of every shipped kernel (kernels/*.yaml) on the C backend: for each
// library (one per C target, plus one with all of them), dtype and size, fresh seeded random
// inputs go through the generated C API and the result is compared with a float64 reference
// computed from the same (rounded) inputs. Tolerances: Numeric.h tolerance(), justified in
// docs/kernels.md. Each size prints one line with its error, so `ctest -V` (or running the
// binary) shows what was checked.
#include "KernelApi.h"
#include "Numeric.h"
#include "Reference.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <string>

namespace tgtest {
namespace {

struct Param {
  size_t lib;
  Dt dt;
};

std::vector<Param> all_params() {
  std::vector<Param> out;
  for (size_t l = 0; l < all_libs().size(); ++l)
    for (Dt dt : kAllDts)
      out.push_back({l, dt});
  return out;
}

std::vector<Param> fp8_params() {
  std::vector<Param> out;
  for (size_t l = 0; l < all_libs().size(); ++l)
    for (Dt dt : kFp8Dts)
      out.push_back({l, dt});
  return out;
}

// Readable parameter values in test listings (instead of gtest's byte dump).
void PrintTo(const Param& p, std::ostream* os) {
  const LibApi& lib = all_libs()[p.lib];
  *os << lib.name << " " << dt_name(p.dt);
}

std::string param_name(const testing::TestParamInfo<Param>& info) {
  const LibApi& lib = all_libs()[info.param.lib];
  std::string target = lib.forced_target.empty() ? "all" : lib.forced_target;
  return target + "_" + dt_name(info.param.dt);
}

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

class KernelTest : public testing::TestWithParam<Param> {
protected:
  void SetUp() override {
    target_ = expected_target(lib().forced_target);
    if (target_.empty())
      GTEST_SKIP() << "this CPU cannot run target '" << lib().forced_target << "'";
  }

  const LibApi& lib() const { return all_libs()[GetParam().lib]; }
  const KernelSet& ks() const { return lib()[GetParam().dt]; }
  Dt dt() const { return GetParam().dt; }

  // Alternate between the default launch (NULL) and an explicit single-thread launch, so both
  // paths run; results must not depend on it.
  const tg_launch* launch(int i) {
    one_thread_ = tg_launch{};
    one_thread_.struct_size = sizeof(tg_launch);
    one_thread_.device = -1;
    one_thread_.num_threads = 1;
    return i % 2 ? &one_thread_ : nullptr;
  }

  // The query must accept the call and name the expected target and instance.
  void expect_selection(tg_status st, const tg_selection& sel, const std::string& instance) {
    EXPECT_EQ(st, TG_OK) << tg_status_string(st) << ": " << sel.reason;
    EXPECT_EQ(sel.status, TG_OK) << sel.reason;
    EXPECT_STREQ(sel.target, target_.c_str()) << sel.reason;
    EXPECT_STREQ(sel.instance, instance.c_str()) << sel.reason;
  }

  void check(const char* kernel, const std::string& sizes, const GuardedBuffer& out,
             const std::vector<double>& ref, int64_t reduction_len, double scale = 0) {
    ErrorStats s = compare(out.values(), ref, scale);
    double tol = tolerance(dt(), reduction_len);
    std::printf("[numeric] %-20s %-9s %-5s %-34s max_err %.3e rel %.3e tol %.3e %s\n", kernel,
                target_.c_str(), dt_name(dt()), sizes.c_str(), s.max_abs_err, s.rel, tol,
                s.rel <= tol && s.nonfinite == 0 ? "ok" : "FAIL");
    EXPECT_TRUE(out.guards_intact()) << "write outside the output tensor";
    EXPECT_EQ(s.nonfinite, 0u) << "NaN/inf (or unwritten) output elements, first at index "
                               << s.worst;
    if (!ref.empty())
      EXPECT_LE(s.rel, tol) << "worst element " << s.worst << ": got " << out.get(s.worst)
                            << ", expected " << ref[s.worst] << " (scale " << s.scale << ")";
  }

  std::string target_;
  tg_launch one_thread_{};
};

// ---------------------------------------------------------------------------------------------
// gemm and gemm_bias_gelu

struct GemmSize {
  int64_t M, N, K;
};
// 1, 7, 129, 1000 and non-multiples of every C tile (BM 64/96/128, BN 64/128/256, BK 64..256);
// empty M, N and K.
constexpr GemmSize kGemmSizes[] = {{1, 1, 1},    {7, 7, 7},      {129, 129, 129}, {1000, 129, 257},
                                   {65, 257, 300}, {33, 1, 513}, {1, 1000, 31},   {0, 7, 5},
                                   {7, 0, 5},    {7, 5, 0}};

using GemmTest = KernelTest;

TEST_P(GemmTest, RandomSizes) {
  int n = 0;
  for (const auto& [M, N, K] : kGemmSizes) {
    std::string sizes = fmt("M=%" PRId64 " N=%" PRId64 " K=%" PRId64, M, N, K);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of(std::string("gemm/") + dt_name(dt()) + "/" + sizes));
    GuardedBuffer A(dt(), M * K), B(dt(), K * N), C(dt(), M * N);
    auto a = fill_random(A, rng), b = fill_random(B, rng);
    auto a0 = A.snapshot(), b0 = B.snapshot();
    tg_selection sel{};
    const tg_launch* l = launch(n++);
    expect_selection(ks().gemm_query(l, A.data(), B.data(), C.data(), M, N, K, &sel), sel,
                     dt_name(dt()));
    ASSERT_EQ(ks().gemm(l, A.data(), B.data(), C.data(), M, N, K), TG_OK);
    EXPECT_TRUE(A.same_as(a0) && B.same_as(b0)) << "an input tensor was modified";
    EXPECT_TRUE(A.guards_intact() && B.guards_intact());
    check("gemm", sizes, C, ref::gemm(a, b, M, N, K), K);

    // Same call again, other thread count: bitwise identical (blocks are independent).
    if (M * N > 0 && n == 4) {
      auto first = C.snapshot();
      ASSERT_EQ(ks().gemm(launch(n), A.data(), B.data(), C.data(), M, N, K), TG_OK);
      EXPECT_TRUE(C.same_as(first)) << "result depends on the thread count";
    }
  }
}

using GemmBiasGeluTest = KernelTest;

TEST_P(GemmBiasGeluTest, RandomSizes) {
  int n = 0;
  for (const auto& [M, N, K] : kGemmSizes) {
    std::string sizes = fmt("M=%" PRId64 " N=%" PRId64 " K=%" PRId64, M, N, K);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of(std::string("gemm_bias_gelu/") + dt_name(dt()) + "/" + sizes));
    GuardedBuffer A(dt(), M * K), B(dt(), K * N), bias(dt(), N), C(dt(), M * N);
    auto a = fill_random(A, rng), b = fill_random(B, rng), bb = fill_random(bias, rng);
    tg_selection sel{};
    const tg_launch* l = launch(n++);
    expect_selection(ks().gemm_bias_gelu_query(l, A.data(), B.data(), bias.data(), C.data(), M, N,
                                               K, &sel),
                     sel, dt_name(dt()));
    ASSERT_EQ(ks().gemm_bias_gelu(l, A.data(), B.data(), bias.data(), C.data(), M, N, K), TG_OK);
    EXPECT_TRUE(bias.guards_intact());
    check("gemm_bias_gelu", sizes, C, ref::gemm_bias_gelu(a, b, bb, M, N, K), K + 1);
  }
}

// ---------------------------------------------------------------------------------------------
// gemm_fp8: C (bf16) = (A @ B^T) * scale_a * scale_b, A [M, K] and B [N, K] in e4m3 or e5m2

using GemmFp8Test = KernelTest;

// Every element within the sound bound of Numeric.h fp8_gemm_bound (inputs exact, f32
// accumulation, bf16 output), and the normwise bf16 rule of the other kernels as well.
TEST_P(GemmFp8Test, RandomSizes) {
  const Fp8KernelSet& k8 = lib().fp8(dt());
  // Non-trivial scales (neither is a power of two, so both multiplies round); the last pass
  // draws codes from the whole finite range (zeros, subnormals, the largest values) with a
  // negative scale.
  struct Pass {
    float scale_a, scale_b;
    double lo, hi;
  };
  const Pass passes[] = {{0.37f, 2.5f, 0.0625, 4.0}, {-1.3f, 0.01f, 0.0, 0.0}};
  int n = 0;
  for (const Pass& pass : passes)
    for (const auto& [M, N, K] : kGemmSizes) {
      std::string sizes = fmt("M=%" PRId64 " N=%" PRId64 " K=%" PRId64 " s=%g*%g%s", M, N, K,
                              pass.scale_a, pass.scale_b, pass.lo == 0 ? " full" : "");
      SCOPED_TRACE(sizes);
      std::mt19937_64 rng(seed_of(std::string("gemm_fp8/") + dt_name(dt()) + "/" + sizes));
      GuardedBuffer A(dt(), M * K), B(dt(), N * K), C(Dt::BF16, M * N);
      auto a = fill_random_fp8(A, rng, pass.lo, pass.hi), b = fill_random_fp8(B, rng, pass.lo, pass.hi);
      auto a0 = A.snapshot(), b0 = B.snapshot();
      tg_selection sel{};
      const tg_launch* l = launch(n++);
      expect_selection(k8.gemm_fp8_query(l, A.data(), B.data(), C.data(), M, N, K, pass.scale_a,
                                         pass.scale_b, &sel),
                       sel, dt_name(dt()));
      ASSERT_EQ(k8.gemm_fp8(l, A.data(), B.data(), C.data(), M, N, K, pass.scale_a,
                            pass.scale_b),
                TG_OK);
      EXPECT_TRUE(A.same_as(a0) && B.same_as(b0)) << "an input tensor was modified";
      EXPECT_TRUE(A.guards_intact() && B.guards_intact() && C.guards_intact());
      const auto ref = ref::gemm_fp8(a, b, M, N, K, pass.scale_a, pass.scale_b);
      const auto absref = ref::gemm_fp8(a, b, M, N, K, pass.scale_a, pass.scale_b, true);
      std::vector<double> bound(ref.size());
      for (size_t i = 0; i < ref.size(); ++i)
        bound[i] = fp8_gemm_bound(ref[i], absref[i], K);
      const auto got = C.values();
      size_t worst = 0;
      const double ratio = max_bound_ratio(got, ref, bound, &worst);
      const ErrorStats s = compare(got, ref);
      const double tol = tolerance(Dt::BF16, K);
      std::printf("[numeric] %-20s %-9s %-5s %-34s max_err %.3e rel %.3e tol %.3e "
                  "err/bound %.3f %s\n",
                  "gemm_fp8", target_.c_str(), dt_name(dt()), sizes.c_str(), s.max_abs_err, s.rel,
                  tol, ratio, ratio <= 1 && s.rel <= tol && s.nonfinite == 0 ? "ok" : "FAIL");
      EXPECT_EQ(s.nonfinite, 0u) << "NaN/inf (or unwritten) output elements, first at index "
                                 << s.worst;
      if (!ref.empty()) {
        EXPECT_LE(ratio, 1.0) << "element " << worst << ": got " << got[worst] << ", expected "
                              << ref[worst] << " (bound " << bound[worst] << ")";
        EXPECT_LE(s.rel, tol);
      }
      if (K == 0) // an empty sum: exact zeros
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_EQ(got[i], 0.0) << i;
      // Same call again, other thread count: bitwise identical (blocks are independent).
      if (M * N > 0 && n == 4) {
        auto first = C.snapshot();
        ASSERT_EQ(k8.gemm_fp8(launch(n), A.data(), B.data(), C.data(), M, N, K, pass.scale_a,
                              pass.scale_b),
                  TG_OK);
        EXPECT_TRUE(C.same_as(first)) << "result depends on the thread count";
      }
    }
}

// ---------------------------------------------------------------------------------------------
// softmax and rmsnorm

struct RowSize {
  int64_t M, N;
};
// BM 1..8 and BN 512..4096 on C: ragged rows and columns, several column chunks, empty M and
// N; 1030 x 4100 is over the 8 MiB at which whole-row tile writes stream (tg_stream_ok), with
// rows that do not start on a 64-byte line; 9 x 4096 is one tile per row, with blocks whose
// rows are read in place and a last block cut by M (emit/CViews.cpp).
constexpr RowSize kRowSizes[] = {{1, 1},    {7, 7},    {129, 129}, {1000, 129}, {3, 1000},
                                 {5, 2049}, {2, 4100}, {1001, 33}, {0, 7},      {7, 0},
                                 {1030, 4100}, {9, 4096}};
// In-place calls (Y == X): the C variants read X in place only when it overlaps no output, and
// copy it as the spec says otherwise (docs/c-backend.md "Limits").
constexpr RowSize kInPlaceSizes[] = {{7, 7}, {9, 4096}, {3, 4100}, {1030, 4100}};

using SoftmaxTest = KernelTest;

TEST_P(SoftmaxTest, RandomSizes) {
  int n = 0;
  for (const auto& [M, N] : kRowSizes) {
    std::string sizes = fmt("M=%" PRId64 " N=%" PRId64, M, N);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of(std::string("softmax/") + dt_name(dt()) + "/" + sizes));
    GuardedBuffer X(dt(), M * N), Y(dt(), M * N);
    auto x = fill_random(X, rng, -4.0, 4.0); // e^8 dynamic range: the max subtraction matters
    tg_selection sel{};
    const tg_launch* l = launch(n++);
    expect_selection(ks().softmax_query(l, X.data(), Y.data(), M, N, &sel), sel, dt_name(dt()));
    ASSERT_EQ(ks().softmax(l, X.data(), Y.data(), M, N), TG_OK);
    EXPECT_TRUE(X.guards_intact());
    check("softmax", sizes, Y, ref::softmax(x, M, N), N);
  }
}

TEST_P(SoftmaxTest, InPlace) {
  int n = 0;
  for (const auto& [M, N] : kInPlaceSizes) {
    std::string sizes = fmt("M=%" PRId64 " N=%" PRId64 " in place", M, N);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of(std::string("softmax/") + dt_name(dt()) + "/" + sizes));
    GuardedBuffer X(dt(), M * N);
    auto x = fill_random(X, rng, -4.0, 4.0);
    ASSERT_EQ(ks().softmax(launch(n++), X.data(), X.data(), M, N), TG_OK);
    EXPECT_TRUE(X.guards_intact());
    check("softmax", sizes, X, ref::softmax(x, M, N), N);
  }
}

using RmsNormTest = KernelTest;

TEST_P(RmsNormTest, InPlace) {
  int n = 0;
  const float eps = 1e-5f;
  for (const auto& [M, N] : kInPlaceSizes) {
    std::string sizes = fmt("M=%" PRId64 " N=%" PRId64 " in place", M, N);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of(std::string("rmsnorm/") + dt_name(dt()) + "/" + sizes));
    GuardedBuffer X(dt(), M * N), W(dt(), N);
    auto x = fill_random(X, rng), w = fill_random(W, rng);
    ASSERT_EQ(ks().rmsnorm(launch(n++), X.data(), W.data(), X.data(), M, N, eps), TG_OK);
    EXPECT_TRUE(X.guards_intact() && W.guards_intact());
    check("rmsnorm", sizes, X, ref::rmsnorm(x, w, M, N, static_cast<double>(eps)), N);
  }
}

TEST_P(RmsNormTest, RandomSizes) {
  int n = 0;
  const float eps = 1e-5f;
  for (const auto& [M, N] : kRowSizes) {
    std::string sizes = fmt("M=%" PRId64 " N=%" PRId64, M, N);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of(std::string("rmsnorm/") + dt_name(dt()) + "/" + sizes));
    GuardedBuffer X(dt(), M * N), W(dt(), N), Y(dt(), M * N);
    auto x = fill_random(X, rng), w = fill_random(W, rng);
    tg_selection sel{};
    const tg_launch* l = launch(n++);
    expect_selection(ks().rmsnorm_query(l, X.data(), W.data(), Y.data(), M, N, eps, &sel), sel,
                     dt_name(dt()));
    ASSERT_EQ(ks().rmsnorm(l, X.data(), W.data(), Y.data(), M, N, eps), TG_OK);
    EXPECT_TRUE(X.guards_intact() && W.guards_intact());
    check("rmsnorm", sizes, Y, ref::rmsnorm(x, w, M, N, static_cast<double>(eps)), N);
  }
}

// tests/kernels/layernorm_bias.yaml: a spec with no C tile pins (the streaming rule picks BN
// 4096 on every C target), so these sizes cover one-tile rows, several chunks and ragged tiles.
using LayerNormTest = KernelTest;

TEST_P(LayerNormTest, RandomSizes) {
  int n = 0;
  const float eps = 1e-5f;
  for (const auto& [M, N] : kRowSizes) {
    std::string sizes = fmt("M=%" PRId64 " N=%" PRId64, M, N);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of(std::string("layernorm/") + dt_name(dt()) + "/" + sizes));
    GuardedBuffer X(dt(), M * N), W(dt(), N), Bias(dt(), N), Y(dt(), M * N);
    auto x = fill_random(X, rng, 1.0, 3.0); // a mean far from 0: the two-pass variance matters
    auto w = fill_random(W, rng), b = fill_random(Bias, rng);
    tg_selection sel{};
    const tg_launch* l = launch(n++);
    expect_selection(
        ks().layernorm_query(l, X.data(), W.data(), Bias.data(), Y.data(), M, N, eps, &sel), sel,
        dt_name(dt()));
    ASSERT_EQ(ks().layernorm(l, X.data(), W.data(), Bias.data(), Y.data(), M, N, eps), TG_OK);
    EXPECT_TRUE(X.guards_intact() && W.guards_intact() && Bias.guards_intact());
    check("layernorm", sizes, Y, ref::layernorm(x, w, b, M, N, static_cast<double>(eps)), N);
  }
}

TEST_P(LayerNormTest, InPlace) {
  int n = 0;
  const float eps = 1e-5f;
  for (const auto& [M, N] : kInPlaceSizes) {
    std::string sizes = fmt("M=%" PRId64 " N=%" PRId64 " in place", M, N);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of(std::string("layernorm/") + dt_name(dt()) + "/" + sizes));
    GuardedBuffer X(dt(), M * N), W(dt(), N), Bias(dt(), N);
    auto x = fill_random(X, rng, 1.0, 3.0);
    auto w = fill_random(W, rng), b = fill_random(Bias, rng);
    ASSERT_EQ(ks().layernorm(launch(n++), X.data(), W.data(), Bias.data(), X.data(), M, N, eps),
              TG_OK);
    EXPECT_TRUE(X.guards_intact() && W.guards_intact() && Bias.guards_intact());
    check("layernorm", sizes, X, ref::layernorm(x, w, b, M, N, static_cast<double>(eps)), N);
  }
}

// ---------------------------------------------------------------------------------------------
// flash_attention_fwd

struct AttnSize {
  int64_t B, H, S, D;
};
// S: 1, 7, 129, 300 (non-multiples of BM 16..128 and BN 32..128); both head dims; empty B / S.
constexpr AttnSize kAttnSizes[] = {{1, 1, 1, 64},    {2, 3, 7, 64},    {1, 2, 129, 64},
                                   {1, 1, 300, 64},  {1, 1, 1, 128},   {2, 1, 7, 128},
                                   {1, 2, 129, 128}, {1, 1, 300, 128}, {0, 2, 7, 64},
                                   {1, 1, 0, 128}};

using FlashAttentionTest = KernelTest;

TEST_P(FlashAttentionTest, RandomSizes) {
  int n = 0;
  for (int causal = 0; causal <= 1; ++causal)
    for (const auto& [B, H, S, D] : kAttnSizes) {
      std::string sizes = fmt("B=%" PRId64 " H=%" PRId64 " S=%" PRId64 " D=%" PRId64 " causal=%d",
                              B, H, S, D, causal);
      SCOPED_TRACE(sizes);
      std::mt19937_64 rng(seed_of(std::string("flash/") + dt_name(dt()) + "/" + sizes));
      size_t count = static_cast<size_t>(B * H * S * D);
      GuardedBuffer Q(dt(), count), K(dt(), count), V(dt(), count), O(dt(), count);
      auto q = fill_random(Q, rng), k = fill_random(K, rng), v = fill_random(V, rng);
      const float sm_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
      tg_selection sel{};
      const tg_launch* l = launch(n++);
      std::string inst = fmt("%s_causal%d_D%" PRId64, dt_name(dt()), causal, D);
      expect_selection(ks().flash_query(l, Q.data(), K.data(), V.data(), O.data(), B, H, S, D,
                                        sm_scale, causal, &sel),
                       sel, inst);
      ASSERT_EQ(ks().flash(l, Q.data(), K.data(), V.data(), O.data(), B, H, S, D, sm_scale,
                           causal),
                TG_OK);
      EXPECT_TRUE(Q.guards_intact() && K.guards_intact() && V.guards_intact());
      // The output is a convex combination of V rows: measure errors against max |V|.
      double vmax = 0;
      for (double x : v)
        vmax = std::max(vmax, std::fabs(x));
      check("flash_attention_fwd", sizes, O,
            ref::flash_attention(q, k, v, B, H, S, D, sm_scale, causal != 0), S + D, vmax);
    }
}

#define TGK_INSTANTIATE(Suite)                                                                   \
  INSTANTIATE_TEST_SUITE_P(Kernels, Suite, testing::ValuesIn(all_params()), param_name)
TGK_INSTANTIATE(GemmTest);
TGK_INSTANTIATE(GemmBiasGeluTest);
TGK_INSTANTIATE(SoftmaxTest);
TGK_INSTANTIATE(RmsNormTest);
TGK_INSTANTIATE(LayerNormTest);
TGK_INSTANTIATE(FlashAttentionTest);
INSTANTIATE_TEST_SUITE_P(Kernels, GemmFp8Test, testing::ValuesIn(fp8_params()), param_name);

} // namespace
} // namespace tgtest
