// kernels/gemm_w4a16.yaml and kernels/gemm_mxfp4.yaml on the C targets (tgk_dequant: c, c_avx2
// and c_avx512, selected at run time) against float64 references (Reference.h): ragged M, N and
// K (K not a multiple of the group or of the 32-weight MX block), groups of 32, 64, 96 and 128,
// zero points (0 and 15 among them) and the symmetric form, odd element offsets of every
// pointer, and the MX scale edges: e8m0 0 (2^-127: subnormal weights and outputs), 254 (2^127)
// and 255 (NaN: the column's outputs are NaN).
//
// Each element must lie within a bound that holds for any summation order: the dequantized
// weights are rounded to T once (the reference does the same), A and w are exact in f32 and so
// are their products, so the only roundings are the K - 1 f32 additions (gamma_K S, S the sum of
// |a w|) and the store to T (u_T |ref|), plus f32 and T subnormal spacing for tiny results.
#include "Numeric.h"
#include "Reference.h"

#include "tgk_dequant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using tgtest::Dt;
using tgtest::GuardedBuffer;

// A GuardedBuffer of `count` elements that starts `off` elements into its storage (an odd
// element offset: aligned to the element, not to 16 bytes).
struct Offset {
  GuardedBuffer buf;
  int64_t off;
  Offset(Dt dt, int64_t count, int64_t off) : buf(dt, static_cast<size_t>(count + off)), off(off) {}
  void* p() { return static_cast<unsigned char*>(buf.data()) + off * tgtest::dt_bytes(buf.dtype()); }
  std::vector<double> fill(std::mt19937_64& rng, double lo, double hi) {
    auto v = tgtest::fill_random(buf, rng, lo, hi);
    return std::vector<double>(v.begin() + off, v.end());
  }
  std::vector<double> values() const {
    auto v = buf.values();
    return std::vector<double>(v.begin() + off, v.end());
  }
};

// bytes at an odd offset inside a larger vector
struct Bytes {
  std::vector<uint8_t> store;
  int64_t off;
  Bytes(const std::vector<uint8_t>& v, int64_t off) : store(v.size() + off + 16, 0xA5), off(off) {
    std::copy(v.begin(), v.end(), store.begin() + off);
  }
  const uint8_t* p() const { return v_empty() ? nullptr : store.data() + off; }
  bool v_empty() const { return store.size() == static_cast<size_t>(off + 16); }
};

struct W4Case {
  int64_t M, N, K, group;
  bool zp;
  int64_t off;  // element offset of every pointer
};

tg_status call_w4(Dt dt, const void* A, const uint8_t* Bq, const void* S, const uint8_t* Z, void* C,
                  int64_t M, int64_t N, int64_t K, int64_t G, int64_t ZP, tg_selection* sel) {
  if (dt == Dt::F16)
    return sel ? tgk_dequant_gemm_w4a16_f16_query(nullptr, (const tg_f16*)A, Bq, (const tg_f16*)S,
                                                  Z, (tg_f16*)C, M, N, K, G, ZP, sel)
               : tgk_dequant_gemm_w4a16_f16(nullptr, (const tg_f16*)A, Bq, (const tg_f16*)S, Z,
                                            (tg_f16*)C, M, N, K, G, ZP);
  return sel ? tgk_dequant_gemm_w4a16_bf16_query(nullptr, (const tg_bf16*)A, Bq, (const tg_bf16*)S,
                                                 Z, (tg_bf16*)C, M, N, K, G, ZP, sel)
             : tgk_dequant_gemm_w4a16_bf16(nullptr, (const tg_bf16*)A, Bq, (const tg_bf16*)S, Z,
                                           (tg_bf16*)C, M, N, K, G, ZP);
}

class GemmW4A16 : public ::testing::TestWithParam<Dt> {};

TEST_P(GemmW4A16, RaggedGroupsZeroPointsAgainstFloat64) {
  const Dt dt = GetParam();
  const W4Case cases[] = {
      {1, 64, 256, 128, false, 0},   {5, 70, 300, 128, true, 1},  {16, 198, 200, 32, true, 0},
      {33, 130, 129, 64, false, 1},  {130, 66, 260, 96, true, 3}, {7, 2, 32, 32, true, 1},
  };
  for (const W4Case& c : cases) {
    const std::string what = std::string(tgtest::dt_name(dt)) + " M=" + std::to_string(c.M) +
                             " N=" + std::to_string(c.N) + " K=" + std::to_string(c.K) +
                             " group=" + std::to_string(c.group) + " zp=" + std::to_string(c.zp) +
                             " offset=" + std::to_string(c.off);
    SCOPED_TRACE(what);
    std::mt19937_64 rng(tgtest::seed_of("w4a16/" + what));
    const int64_t G = (c.K + c.group - 1) / c.group;
    std::uniform_int_distribution<int> code(0, 15);
    std::vector<uint8_t> q(static_cast<size_t>(c.K * c.N)), z(static_cast<size_t>(G * c.N));
    for (auto& v : q)
      v = static_cast<uint8_t>(code(rng));
    // zero points 0 and 15 (the extremes) in two thirds of the columns, random in the rest
    for (int64_t g = 0; g < G; ++g)
      for (int64_t n = 0; n < c.N; ++n)
        z[g * c.N + n] = n % 3 == 0 ? 0 : n % 3 == 1 ? 15 : static_cast<uint8_t>(code(rng));
    Offset A(dt, c.M * c.K, c.off), S(dt, G * c.N, c.off), C(dt, c.M * c.N, c.off);
    const auto a = A.fill(rng, -1.0, 1.0);
    const auto s = S.fill(rng, 0.001, 0.1);
    const Bytes Bq(tgtest::ref::pack_nibbles(q, c.K, c.N), c.off);
    const Bytes Z(c.zp ? tgtest::ref::pack_nibbles(z, G, c.N) : std::vector<uint8_t>{}, c.off);

    tg_selection sel{};
    ASSERT_EQ(call_w4(dt, A.p(), Bq.p(), S.p(), Z.p(), C.p(), c.M, c.N, c.K, c.group, c.zp, &sel),
              TG_OK);
    ASSERT_EQ(call_w4(dt, A.p(), Bq.p(), S.p(), Z.p(), C.p(), c.M, c.N, c.K, c.group, c.zp, nullptr),
              TG_OK);
    EXPECT_TRUE(C.buf.guards_intact());
    auto w = tgtest::ref::w4a16_weights(q, s, c.zp ? &z : nullptr, c.N, c.K, c.group);
    for (auto& v : w)
      v = tgtest::round_to(dt, v);
    const auto ref = tgtest::ref::gemm(a, w, c.M, c.N, c.K);
    const auto absref = tgtest::ref::gemm(tgtest::abs_of(a), tgtest::abs_of(w), c.M, c.N, c.K);
    const auto got = C.values();
    size_t worst;
    const double r = tgtest::gemm_bound_ratio(got, ref, absref, dt, c.K, &worst);
    std::printf("[numeric] gemm_w4a16 %s (%s): worst error / bound %.3g\n", what.c_str(),
                sel.target, r);
    EXPECT_LE(r, 1.0) << "element " << worst << ": got " << got[worst] << ", expected "
                      << ref[worst] << " (variant " << sel.variant << ")";
  }
}

// The dispatch rejects what the layout cannot hold: an odd N (a u4 row of half a byte), a group
// that is not a multiple of 32, ZP other than 0 or 1.
TEST_P(GemmW4A16, DispatchChecks) {
  const Dt dt = GetParam();
  GuardedBuffer A(dt, 64 * 64), S(dt, 64 * 64), C(dt, 64 * 64);
  std::vector<uint8_t> Bq(64 * 64, 0), Z(64 * 64, 0);
  EXPECT_EQ(call_w4(dt, A.data(), Bq.data(), S.data(), Z.data(), C.data(), 4, 63, 64, 32, 1, nullptr),
            TG_ERR_INVALID_DIM);
  EXPECT_EQ(call_w4(dt, A.data(), Bq.data(), S.data(), Z.data(), C.data(), 4, 64, 64, 48, 1, nullptr),
            TG_ERR_INVALID_DIM);
  EXPECT_EQ(call_w4(dt, A.data(), Bq.data(), S.data(), Z.data(), C.data(), 4, 64, 64, 16, 1, nullptr),
            TG_ERR_INVALID_DIM);
  EXPECT_EQ(call_w4(dt, A.data(), Bq.data(), S.data(), Z.data(), C.data(), 4, 64, 64, 32, 2, nullptr),
            TG_ERR_INVALID_DIM);
  EXPECT_TRUE(C.untouched());
}

INSTANTIATE_TEST_SUITE_P(Types, GemmW4A16, ::testing::Values(Dt::F16, Dt::BF16),
                         [](const auto& info) { return std::string(tgtest::dt_name(info.param)); });

tg_status call_mx(const void* A, const uint8_t* B, const uint8_t* E, void* C, int64_t M,
                  int64_t N, int64_t K, tg_selection* sel) {
  return sel ? tgk_dequant_gemm_mxfp4_bf16_query(nullptr, (const tg_bf16*)A, B, E, (tg_bf16*)C, M,
                                                 N, K, sel)
             : tgk_dequant_gemm_mxfp4_bf16(nullptr, (const tg_bf16*)A, B, E, (tg_bf16*)C, M, N, K);
}

struct MxCase {
  int64_t M, N, K, off;
  bool edges;  // scale edges (below) instead of scales around 1
};

// Edge columns (n % 4): 0: every block's scale is e8m0 0 (2^-127: subnormal weights and
// outputs); 1: block 1's scale is 254 (2^127) with weights of magnitude <= 1.5 (finite in bf16)
// and A's block-1 columns scaled by 2^-120; 2: block 2's scale is 255 (NaN: the whole column of
// C is NaN); 3: scales 2^-3 .. 2^3.
TEST(GemmMxfp4, RaggedAndScaleEdgesAgainstFloat64) {
  const MxCase cases[] = {{1, 64, 256, 0, false}, {5, 67, 302, 1, false}, {16, 130, 96, 3, true},
                          {33, 200, 130, 1, true}, {130, 64, 64, 0, false}};
  for (const MxCase& c : cases) {
    const std::string what = "M=" + std::to_string(c.M) + " N=" + std::to_string(c.N) + " K=" +
                             std::to_string(c.K) + " offset=" + std::to_string(c.off) +
                             (c.edges ? " scale edges" : "");
    SCOPED_TRACE(what);
    std::mt19937_64 rng(tgtest::seed_of("mxfp4/" + what));
    const int64_t KB = (c.K + 31) / 32;
    std::uniform_int_distribution<int> code(0, 15), small(0, 3), expo(124, 130);
    std::vector<uint8_t> b(static_cast<size_t>(c.N * c.K)), e(static_cast<size_t>(c.N * KB));
    for (int64_t n = 0; n < c.N; ++n)
      for (int64_t k = 0; k < c.K; ++k) {
        const bool big = c.edges && n % 4 == 1 && k / 32 == 1;
        b[n * c.K + k] = static_cast<uint8_t>(big ? small(rng) | (code(rng) & 8) : code(rng));
      }
    for (int64_t n = 0; n < c.N; ++n)
      for (int64_t kb = 0; kb < KB; ++kb) {
        uint8_t v = static_cast<uint8_t>(expo(rng));
        if (c.edges && n % 4 == 0)
          v = 0;
        else if (c.edges && n % 4 == 1 && kb == 1)
          v = 254;
        else if (c.edges && n % 4 == 2 && kb == 2)
          v = 255;
        e[n * KB + kb] = v;
      }
    Offset A(Dt::BF16, c.M * c.K, c.off), C(Dt::BF16, c.M * c.K > 0 ? c.M * c.N : 0, c.off);
    auto a = A.fill(rng, -1.0, 1.0);
    if (c.edges)
      for (int64_t m = 0; m < c.M; ++m)
        for (int64_t k = 32; k < 64 && k < c.K; ++k) {
          a[m * c.K + k] = std::ldexp(a[m * c.K + k], -120);
          A.buf.set(static_cast<size_t>(c.off + m * c.K + k), a[m * c.K + k]);
        }
    const Bytes B(tgtest::ref::pack_nibbles(b, c.N, c.K), c.off);
    const Bytes E(e, c.off);

    tg_selection sel{};
    ASSERT_EQ(call_mx(A.p(), B.p(), E.p(), C.p(), c.M, c.N, c.K, &sel), TG_OK);
    ASSERT_EQ(call_mx(A.p(), B.p(), E.p(), C.p(), c.M, c.N, c.K, nullptr), TG_OK);
    EXPECT_TRUE(C.buf.guards_intact());
    auto w = tgtest::ref::mxfp4_weights_kn(b, e, c.N, c.K);
    for (auto& v : w)
      v = std::isnan(v) ? v : tgtest::round_to(Dt::BF16, v);
    const auto ref = tgtest::ref::gemm(a, w, c.M, c.N, c.K);
    const auto absref = tgtest::ref::gemm(tgtest::abs_of(a), tgtest::abs_of(w), c.M, c.N, c.K);
    const auto got = C.values();
    size_t worst;
    const double r = tgtest::gemm_bound_ratio(got, ref, absref, Dt::BF16, c.K, &worst);
    std::printf("[numeric] gemm_mxfp4 %s (%s): worst error / bound %.3g\n", what.c_str(),
                sel.target, r);
    EXPECT_LE(r, 1.0) << "element " << worst << ": got " << got[worst] << ", expected "
                      << ref[worst] << " (variant " << sel.variant << ")";
    if (c.edges) {
      // the edges are really exercised: tiny (not flushed) outputs in the e8m0-0 columns, NaN
      // columns
      size_t tiny = 0, nan = 0;
      for (int64_t m = 0; m < c.M; ++m)
        for (int64_t n = 0; n < c.N; ++n) {
          const double v = got[m * c.N + n];
          tiny += n % 4 == 0 && v != 0 && std::fabs(v) < std::ldexp(1.0, -110);
          nan += n % 4 == 2 && std::isnan(v);
        }
      EXPECT_GE(tiny, static_cast<size_t>(c.M * ((c.N + 3) / 4) * 95 / 100));  // a sum may cancel
      EXPECT_EQ(nan, static_cast<size_t>(c.M * ((c.N + 1) / 4)));
    }
  }
}

// An odd K (an e2m1 row of half a byte) is rejected.
TEST(GemmMxfp4, DispatchChecks) {
  GuardedBuffer A(Dt::BF16, 64 * 64), C(Dt::BF16, 64 * 64);
  std::vector<uint8_t> B(64 * 64, 0), E(64 * 64, 127);
  EXPECT_EQ(call_mx(A.data(), B.data(), E.data(), C.data(), 4, 64, 63, nullptr), TG_ERR_INVALID_DIM);
  EXPECT_TRUE(C.untouched());
}

} // namespace
