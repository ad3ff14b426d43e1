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
#include <numeric>
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

// ---- decode_attention, mla_decode (paged caches) ---------------------------------------------

// Ragged lengths against BN = 16 and both page sizes: 0 (writes 0), 1, a page less one, a page
// plus one, several pages; GQA with G = 8 (one BG tile) and G = 9 (a second, ragged tile) and
// MHA. Pages dealt out of order by tgtest::paged_table; unused table columns hold ids out of range.
struct DecodeCase {
  int64_t Hkv, G, page;
};
constexpr DecodeCase kDecodeCases[] = {{2, 8, 16}, {1, 9, 64}, {3, 1, 16}};

// The kernels of f16 and bf16 only.
class SimHalfTest : public SimTest {};

TEST_P(SimHalfTest, DecodeAttention) {
  const int64_t D = 128;
  const std::vector<int32_t> lens = {1, 15, 0, 17, 70};
  const int64_t B = static_cast<int64_t>(lens.size());
  for (const auto& [Hkv, G, page] : kDecodeCases) {
    const std::string sizes = fmt("B=%" PRId64 " Hkv=%" PRId64 " G=%" PRId64 " page=%" PRId64, B,
                                  Hkv, G, page);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of(std::string("metal/decode/") + dt_name(dt()) + "/" + sizes));
    const PagedTable pt = paged_table(lens, page, 3, 1 << 30, rng);
    const size_t nq = static_cast<size_t>(B * Hkv * G * D);
    const size_t nkv = static_cast<size_t>(pt.NP * Hkv * page * D);
    GuardedBuffer q(dt(), nq), K(dt(), nkv), V(dt(), nkv), o(dt(), nq);
    auto qv = fill_random(q, rng, -1.0, 1.0);
    auto kv = fill_random(K, rng, -0.5, 0.5);
    auto vv = fill_random(V, rng, -1.0, 1.0);
    const auto q0 = q.snapshot(), k0 = K.snapshot(), v0 = V.snapshot();
    const float scale = 4.0f / std::sqrt(static_cast<float>(D));
    const std::string inst = fmt("%s_PAGE%" PRId64 "_D128", dt_name(dt()), page);
    ASSERT_EQ(call(launcher("decode_attention", inst),
                   {q.data(), K.data(), V.data(), const_cast<int32_t*>(pt.table.data()),
                    const_cast<int32_t*>(lens.data()), o.data()},
                   {B, Hkv, G, pt.NP, pt.MP, page, D}, {scale}),
              TG_OK)
        << tg_metal_last_error();
    EXPECT_TRUE(q.same_as(q0) && K.same_as(k0) && V.same_as(v0)) << "an input was modified";
    // |V| < 1: the error relative to 1, flash attention's bound over the longest sequence + D
    EXPECT_TRUE(verdict("decode_attention", dt(), sizes, o,
                        ref::decode_attention(qv, kv, vv, pt.table, lens, B, Hkv, G, pt.MP, page,
                                              D, scale),
                        70 + D, 1.0));
    const auto got = o.values();
    for (int64_t i = 0; i < Hkv * G * D; ++i)
      ASSERT_EQ(got[static_cast<size_t>(2 * Hkv * G * D + i)], 0.0) << "length-0 sequence, " << i;
  }
}

// ---- grouped_gemm -----------------------------------------------------------------------------

// Against BM = BN = 64, BK = 32: empty experts first, in the middle and last, several groups in
// one row tile, a group crossing a tile boundary, N and K ragged, rows past the last offset (not
// written), every expert empty.
struct GroupedCase {
  std::vector<int32_t> sizes;
  int64_t M, N, K;
};

TEST(SimGrouped, GroupedGemm) {
  const GroupedCase cases[] = {{{0, 5, 70, 0, 1, 0}, 80, 70, 33},
                               {{3, 2}, 5, 9, 5},
                               {{0, 0}, 7, 64, 32}};
  for (const GroupedCase& c : cases) {
    const int64_t E = static_cast<int64_t>(c.sizes.size());
    std::vector<int32_t> offs(c.sizes.size());
    std::partial_sum(c.sizes.begin(), c.sizes.end(), offs.begin());
    const int64_t end = offs.back();
    const std::string sizes = fmt("M=%" PRId64 " N=%" PRId64 " K=%" PRId64 " E=%" PRId64 " end=%" PRId64,
                                  c.M, c.N, c.K, E, end);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of("metal/grouped_gemm/" + sizes));
    GuardedBuffer A(Dt::BF16, c.M * c.K), W(Dt::BF16, E * c.K * c.N), C(Dt::BF16, c.M * c.N);
    auto a = fill_random(A, rng), w = fill_random(W, rng);
    ASSERT_EQ(call(launcher("grouped_gemm", "bf16"),
                   {A.data(), W.data(), offs.data(), C.data()}, {c.M, c.N, c.K, E}),
              TG_OK)
        << tg_metal_last_error();
    const auto ref = ref::grouped_gemm(a, w, offs, c.M, c.N, c.K);
    const size_t n = static_cast<size_t>(end * c.N);
    const auto got = C.values();
    if (n > 0) {
      // the experts' rows against the reference, through verdict's checks on a copy
      GuardedBuffer rows(Dt::BF16, n);
      for (size_t i = 0; i < n; ++i)
        rows.set(i, got[i]);
      EXPECT_TRUE(verdict("grouped_gemm", Dt::BF16, sizes, rows,
                          std::vector<double>(ref.begin(), ref.begin() + n), c.K));
    }
    EXPECT_TRUE(C.guards_intact());
    const auto bytes = C.snapshot();
    for (size_t b = n * 2; b < bytes.size(); ++b)
      ASSERT_EQ(bytes[b], GuardedBuffer::kPattern) << "row " << b / 2 / c.N << " was written";
  }
}

// ---- gemm_w4a16, gemm_mxfp4 -------------------------------------------------------------------

// The bound of tests/kernels/DequantGemmTest.cpp (any summation order; weights rounded to T once,
// as the kernel does): worst error / bound <= 1.
bool dequant_verdict(const char* kernel, Dt dt, const std::string& sizes, const GuardedBuffer& C,
                     const std::vector<double>& a, const std::vector<double>& w, int64_t M,
                     int64_t N, int64_t K) {
  const auto ref = ref::gemm(a, w, M, N, K);
  const auto absref = ref::gemm(abs_of(a), abs_of(w), M, N, K);
  size_t worst = 0;
  const double r = gemm_bound_ratio(C.values(), ref, absref, dt, K, &worst);
  const bool ok = r <= 1.0 && C.guards_intact();
  std::printf("[metal-sim] %-20s %-5s %-34s err/bound %.3f %s\n", kernel, dt_name(dt),
              sizes.c_str(), r, ok ? "ok" : "FAIL");
  return ok;
}

struct W4Case {
  int64_t M, N, K, group;
  bool zp;
};

TEST_P(SimHalfTest, GemmW4A16) {
  // ragged against BM 32, BN 64, BK 32; K no multiple of the group; both zero-point forms
  const W4Case cases[] = {{1, 64, 64, 32, false}, {5, 70, 100, 64, true}, {33, 66, 96, 96, true}};
  for (const auto& [M, N, K, group, zp] : cases) {
    const std::string sizes = fmt("M=%" PRId64 " N=%" PRId64 " K=%" PRId64 " group=%" PRId64
                                  " zp=%d", M, N, K, group, zp ? 1 : 0);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of(std::string("metal/w4a16/") + dt_name(dt()) + "/" + sizes));
    const int64_t G = (K + group - 1) / group;
    std::uniform_int_distribution<int> code(0, 15);
    std::vector<uint8_t> q(static_cast<size_t>(K * N)), z(static_cast<size_t>(G * N));
    for (auto& v : q)
      v = static_cast<uint8_t>(code(rng));
    for (auto& v : z)
      v = static_cast<uint8_t>(code(rng));
    GuardedBuffer A(dt(), M * K), S(dt(), G * N), C(dt(), M * N);
    const auto a = fill_random(A, rng, -1.0, 1.0);
    const auto s = fill_random(S, rng, 0.001, 0.1);
    auto bq = ref::pack_nibbles(q, K, N);
    auto zq = zp ? ref::pack_nibbles(z, G, N) : std::vector<uint8_t>{};
    ASSERT_EQ(call(launcher("gemm_w4a16", dt_name(dt())),
                   {A.data(), bq.data(), S.data(), zp ? zq.data() : nullptr, C.data()},
                   {M, N, K, group, zp ? 1 : 0}),
              TG_OK)
        << tg_metal_last_error();
    auto w = ref::w4a16_weights(q, s, zp ? &z : nullptr, N, K, group);
    for (auto& v : w)
      v = round_to(dt(), v);
    EXPECT_TRUE(dequant_verdict("gemm_w4a16", dt(), sizes, C, a, w, M, N, K));
  }
}

TEST(SimDequant, GemmMxfp4) {
  // ragged against BM 32, BN 64, BK 32 and the 32-weight blocks; scales 2^-3 .. 2^3
  struct {
    int64_t M, N, K;
  } const cases[] = {{1, 64, 64}, {5, 67, 102}, {33, 70, 64}};
  for (const auto& [M, N, K] : cases) {
    const std::string sizes = fmt("M=%" PRId64 " N=%" PRId64 " K=%" PRId64, M, N, K);
    SCOPED_TRACE(sizes);
    std::mt19937_64 rng(seed_of("metal/mxfp4/" + sizes));
    const int64_t KB = (K + 31) / 32;
    std::uniform_int_distribution<int> code(0, 15), expo(124, 130);
    std::vector<uint8_t> b(static_cast<size_t>(N * K)), e(static_cast<size_t>(N * KB));
    for (auto& v : b)
      v = static_cast<uint8_t>(code(rng));
    for (auto& v : e)
      v = static_cast<uint8_t>(expo(rng));
    GuardedBuffer A(Dt::BF16, M * K), C(Dt::BF16, M * N);
    const auto a = fill_random(A, rng, -1.0, 1.0);
    auto bp = ref::pack_nibbles(b, N, K);
    ASSERT_EQ(call(launcher("gemm_mxfp4", "bf16"), {A.data(), bp.data(), e.data(), C.data()},
                   {M, N, K}),
              TG_OK)
        << tg_metal_last_error();
    auto w = ref::mxfp4_weights_kn(b, e, N, K);
    for (auto& v : w)
      v = round_to(Dt::BF16, v);
    EXPECT_TRUE(dequant_verdict("gemm_mxfp4", Dt::BF16, sizes, C, a, w, M, N, K));
  }
}

TEST_P(SimHalfTest, MlaDecode) {
  const int64_t page = 64, DL = 512, DR = 64, D = DL + DR;
  // H = 9: a full BH = 8 tile and a ragged one; lengths 0, 1, a page plus one (BN = 16 ragged)
  const int64_t H = 9;
  const std::vector<int32_t> lens = {1, 0, 65};
  const int64_t B = static_cast<int64_t>(lens.size());
  const std::string sizes = fmt("B=%" PRId64 " H=%" PRId64 " lens=1,0,65", B, H);
  std::mt19937_64 rng(seed_of(std::string("metal/mla/") + dt_name(dt()) + "/" + sizes));
  const PagedTable pt = paged_table(lens, page, 3, 1 << 30, rng);
  GuardedBuffer q(dt(), B * H * D), KV(dt(), pt.NP * page * D), o(dt(), B * H * DL);
  auto qv = fill_random(q, rng, -1.0, 1.0);
  auto kvv = fill_random(KV, rng, -1.0, 1.0);
  const auto q0 = q.snapshot(), kv0 = KV.snapshot();
  const float scale = 2.0f / std::sqrt(static_cast<float>(D));
  ASSERT_EQ(call(launcher("mla_decode", fmt("%s_PAGE64_DL512_DR64", dt_name(dt()))),
                 {q.data(), KV.data(), const_cast<int32_t*>(pt.table.data()),
                  const_cast<int32_t*>(lens.data()), o.data()},
                 {B, H, pt.NP, pt.MP, page, DL, DR}, {scale}),
            TG_OK)
      << tg_metal_last_error();
  EXPECT_TRUE(q.same_as(q0) && KV.same_as(kv0)) << "an input was modified";
  EXPECT_TRUE(verdict("mla_decode", dt(), sizes, o,
                      ref::mla_decode(qv, kvv, pt.table, lens, B, H, pt.MP, page, DL, DR, scale),
                      65 + D, 1.0));
  const auto got = o.values();
  for (int64_t i = 0; i < H * DL; ++i)
    ASSERT_EQ(got[static_cast<size_t>(H * DL + i)], 0.0) << "length-0 sequence, element " << i;
}

INSTANTIATE_TEST_SUITE_P(Metal, SimTest, testing::ValuesIn(kAllDts), dt_param_name);
INSTANTIATE_TEST_SUITE_P(Metal, SimFp8Test, testing::ValuesIn(kFp8Dts), dt_param_name);
INSTANTIATE_TEST_SUITE_P(Metal, SimHalfTest, testing::Values(Dt::F16, Dt::BF16), dt_param_name);

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
