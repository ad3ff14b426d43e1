// Argument validation of the generated C API, on the shipped kernels: every bad call returns
// the documented status, its query twin reports the same status, and nothing is written (the
// output and its guard bytes are unchanged).
#include "KernelApi.h"
#include "Numeric.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace tgtest {
namespace {

const KernelSet& c_f32() { return all_libs()[0][Dt::F32]; }
const KernelSet& c_bf16() { return all_libs()[0][Dt::BF16]; }

// A gemm call set up with valid 8x8x8 tensors; tests break one argument at a time.
struct GemmCall {
  Dt dt;
  GuardedBuffer A, B, C;
  int64_t M = 8, N = 8, K = 8;
  explicit GemmCall(Dt d) : dt(d), A(d, 64), B(d, 64), C(d, 64) {
    std::mt19937_64 rng(1);
    fill_random(A, rng);
    fill_random(B, rng);
  }
};

void expect_rejected(tg_status got, tg_status query_got, const tg_selection& sel, tg_status want,
                     const GuardedBuffer& out) {
  EXPECT_EQ(got, want) << "got " << tg_status_string(got);
  EXPECT_EQ(query_got, want) << "query got " << tg_status_string(query_got);
  EXPECT_EQ(sel.status, want);
  EXPECT_GT(std::strlen(sel.reason), 0u) << "the query should say why";
  EXPECT_TRUE(out.untouched()) << "a rejected call wrote its output";
  EXPECT_TRUE(out.guards_intact());
}

TEST(ArgCheck, NullPointer) {
  for (Dt dt : {Dt::F32, Dt::BF16}) {
    const KernelSet& ks = all_libs()[0][dt];
    GemmCall g(dt);
    tg_selection sel{};
    tg_status q = ks.gemm_query(nullptr, nullptr, g.B.data(), g.C.data(), 8, 8, 8, &sel);
    tg_status r = ks.gemm(nullptr, nullptr, g.B.data(), g.C.data(), 8, 8, 8);
    expect_rejected(r, q, sel, TG_ERR_NULL_POINTER, g.C);
    EXPECT_STREQ(sel.variant, "");
  }
  // Null output.
  GemmCall g(Dt::F32);
  tg_selection sel{};
  tg_status q = c_f32().gemm_query(nullptr, g.A.data(), g.B.data(), nullptr, 8, 8, 8, &sel);
  EXPECT_EQ(q, TG_ERR_NULL_POINTER);
  EXPECT_EQ(c_f32().gemm(nullptr, g.A.data(), g.B.data(), nullptr, 8, 8, 8), TG_ERR_NULL_POINTER);
}

TEST(ArgCheck, EmptyTensorsMayBeNull) {
  // M = 0: A and C are empty, so NULL is fine and nothing runs.
  GuardedBuffer B(Dt::F32, 64);
  EXPECT_EQ(c_f32().gemm(nullptr, nullptr, B.data(), nullptr, 0, 8, 8), TG_OK);
  // K = 0: A and B are empty; C = A @ B is all zeros (an empty sum), and gemm_bias_gelu gives
  // gelu(bias) in every row.
  GuardedBuffer C(Dt::F32, 3 * 5);
  EXPECT_EQ(c_f32().gemm(nullptr, nullptr, nullptr, C.data(), 3, 5, 0), TG_OK);
  for (size_t i = 0; i < C.count(); ++i)
    EXPECT_EQ(C.get(i), 0.0) << i;
  GuardedBuffer bias(Dt::F32, 5), C2(Dt::F32, 3 * 5);
  std::mt19937_64 rng(2);
  auto b = fill_random(bias, rng);
  EXPECT_EQ(c_f32().gemm_bias_gelu(nullptr, nullptr, nullptr, bias.data(), C2.data(), 3, 5, 0),
            TG_OK);
  for (size_t i = 0; i < C2.count(); ++i) {
    double x = b[i % 5];
    EXPECT_NEAR(C2.get(i), 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))), 1e-6) << i;
  }
  EXPECT_TRUE(C2.guards_intact());
  // Flash attention with S = 0 and B = 0.
  EXPECT_EQ(c_f32().flash(nullptr, nullptr, nullptr, nullptr, nullptr, 1, 1, 0, 64, 0.125f, 0),
            TG_OK);
  EXPECT_EQ(c_f32().flash(nullptr, nullptr, nullptr, nullptr, nullptr, 0, 4, 16, 128, 0.1f, 1),
            TG_OK);
}

TEST(ArgCheck, Misaligned) {
  for (Dt dt : {Dt::F32, Dt::BF16}) {
    const KernelSet& ks = all_libs()[0][dt];
    GemmCall g(dt);
    // One byte past an element boundary: misaligned for 4- and 2-byte elements alike. The
    // pointer is only checked, never dereferenced.
    const void* bad = static_cast<const char*>(g.A.data()) + 1;
    tg_selection sel{};
    tg_status q = ks.gemm_query(nullptr, bad, g.B.data(), g.C.data(), 8, 8, 8, &sel);
    tg_status r = ks.gemm(nullptr, bad, g.B.data(), g.C.data(), 8, 8, 8);
    expect_rejected(r, q, sel, TG_ERR_MISALIGNED, g.C);
  }
  // f32 at a 2-byte offset is misaligned; bf16 at a 2-byte offset is fine.
  GemmCall g(Dt::F32);
  void* out2 = static_cast<char*>(g.C.data()) + 2;
  EXPECT_EQ(c_f32().gemm(nullptr, g.A.data(), g.B.data(), out2, 8, 8, 8), TG_ERR_MISALIGNED);
  EXPECT_TRUE(g.C.untouched());
}

TEST(ArgCheck, NegativeDim) {
  GemmCall g(Dt::F32);
  tg_selection sel{};
  for (int which = 0; which < 3; ++which) {
    int64_t M = which == 0 ? -1 : 8, N = which == 1 ? -1 : 8, K = which == 2 ? -1 : 8;
    tg_status q = c_f32().gemm_query(nullptr, g.A.data(), g.B.data(), g.C.data(), M, N, K, &sel);
    tg_status r = c_f32().gemm(nullptr, g.A.data(), g.B.data(), g.C.data(), M, N, K);
    expect_rejected(r, q, sel, TG_ERR_INVALID_DIM, g.C);
  }
  GuardedBuffer X(Dt::F32, 64), Y(Dt::F32, 64);
  EXPECT_EQ(c_f32().softmax(nullptr, X.data(), Y.data(), 8, INT64_MIN), TG_ERR_INVALID_DIM);
  EXPECT_TRUE(Y.untouched());
}

TEST(ArgCheck, SizeOverflow) {
  // 2^32 x 2^32 f32 elements = 2^66 bytes: rejected before anything is touched.
  GemmCall g(Dt::F32);
  int64_t big = int64_t{1} << 32;
  EXPECT_EQ(c_f32().gemm(nullptr, g.A.data(), g.B.data(), g.C.data(), big, big, 1),
            TG_ERR_SIZE_OVERFLOW);
  EXPECT_TRUE(g.C.untouched());
}

struct AttnCall {
  GuardedBuffer Q, K, V, O;
  explicit AttnCall(size_t n) : Q(Dt::F32, n), K(Dt::F32, n), V(Dt::F32, n), O(Dt::F32, n) {
    std::mt19937_64 rng(3);
    fill_random(Q, rng);
    fill_random(K, rng);
    fill_random(V, rng);
  }
};

TEST(ArgCheck, UnsupportedHeadDim) {
  AttnCall a(1 * 2 * 5 * 128);
  for (int64_t D : {96, 0, 32, 256}) {
    tg_selection sel{};
    tg_status q = c_f32().flash_query(nullptr, a.Q.data(), a.K.data(), a.V.data(), a.O.data(), 1,
                                      2, 5, D, 0.1f, 0, &sel);
    tg_status r = c_f32().flash(nullptr, a.Q.data(), a.K.data(), a.V.data(), a.O.data(), 1, 2, 5,
                                D, 0.1f, 0);
    SCOPED_TRACE(D);
    expect_rejected(r, q, sel, TG_ERR_UNSUPPORTED_SHAPE, a.O);
  }
}

TEST(ArgCheck, FlagNotZeroOrOne) {
  AttnCall a(1 * 1 * 5 * 64);
  for (int causal : {2, -1}) {
    tg_selection sel{};
    tg_status q = c_f32().flash_query(nullptr, a.Q.data(), a.K.data(), a.V.data(), a.O.data(), 1,
                                      1, 5, 64, 0.1f, causal, &sel);
    tg_status r = c_f32().flash(nullptr, a.Q.data(), a.K.data(), a.V.data(), a.O.data(), 1, 1, 5,
                                64, 0.1f, causal);
    SCOPED_TRACE(causal);
    expect_rejected(r, q, sel, TG_ERR_INVALID_ARGUMENT, a.O);
  }
}

// flash_attention_fwd declares `require: "sm_scale > 0 && sm_scale < inf"` (its body scales the
// row max of the unscaled scores): zero, negative, NaN and infinite scales are rejected with the
// value and the rule, and the output is untouched.
TEST(ArgCheck, ScalarRequirement) {
  AttnCall a(1 * 1 * 5 * 64);
  const float inf = std::numeric_limits<float>::infinity();
  for (float scale : {0.0f, -0.0f, -0.125f, std::numeric_limits<float>::quiet_NaN(), inf, -inf}) {
    tg_selection sel{};
    tg_status q = c_f32().flash_query(nullptr, a.Q.data(), a.K.data(), a.V.data(), a.O.data(), 1,
                                      1, 5, 64, scale, 0, &sel);
    tg_status r = c_f32().flash(nullptr, a.Q.data(), a.K.data(), a.V.data(), a.O.data(), 1, 1, 5,
                                64, scale, 0);
    SCOPED_TRACE(scale);
    expect_rejected(r, q, sel, TG_ERR_INVALID_ARGUMENT, a.O);
    EXPECT_NE(std::strstr(sel.reason, "sm_scale = "), nullptr) << sel.reason;
    EXPECT_NE(std::strstr(sel.reason, "requires sm_scale > 0 && sm_scale < inf"), nullptr) << sel.reason;
    EXPECT_NE(std::strstr(sel.reason, "flash_attention_fwd.yaml:"), nullptr) << sel.reason;
  }
  // The smallest positive scale passes the check.
  tg_selection sel{};
  EXPECT_EQ(c_f32().flash_query(nullptr, a.Q.data(), a.K.data(), a.V.data(), a.O.data(), 1, 1, 5,
                                64, std::numeric_limits<float>::denorm_min(), 0, &sel),
            TG_OK)
      << sel.reason;
}

TEST(ArgCheck, MalformedLaunch) {
  GemmCall g(Dt::F32);
  tg_launch l{};
  l.struct_size = 1; // neither 0 nor a known size
  EXPECT_EQ(c_f32().gemm(&l, g.A.data(), g.B.data(), g.C.data(), 8, 8, 8), TG_ERR_INVALID_ARGUMENT);
  l = tg_launch{};
  l.num_threads = -3;
  EXPECT_EQ(c_f32().gemm(&l, g.A.data(), g.B.data(), g.C.data(), 8, 8, 8), TG_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(g.C.untouched());
  // A zeroed launch is the default and works.
  l = tg_launch{};
  GemmCall h(Dt::BF16);
  EXPECT_EQ(c_bf16().gemm(&l, h.A.data(), h.B.data(), h.C.data(), 8, 8, 8), TG_OK);
  EXPECT_TRUE(h.C.guards_intact());
}

// gemm_fp8: FP8 tensors are 1-byte elements (any address is aligned), bf16 output (2 bytes).
TEST(ArgCheck, GemmFp8) {
  for (Dt dt : kFp8Dts) {
    SCOPED_TRACE(dt_name(dt));
    const Fp8KernelSet& k8 = all_libs()[0].fp8(dt);
    GuardedBuffer A(dt, 64 + 1), B(dt, 64), C(Dt::BF16, 64);
    std::mt19937_64 rng(4);
    fill_random_fp8(A, rng);
    fill_random_fp8(B, rng);
    tg_selection sel{};
    tg_status q = k8.gemm_fp8_query(nullptr, nullptr, B.data(), C.data(), 8, 8, 8, 1, 1, &sel);
    tg_status r = k8.gemm_fp8(nullptr, nullptr, B.data(), C.data(), 8, 8, 8, 1, 1);
    expect_rejected(r, q, sel, TG_ERR_NULL_POINTER, C);
    q = k8.gemm_fp8_query(nullptr, A.data(), B.data(), C.data(), 8, -1, 8, 1, 1, &sel);
    r = k8.gemm_fp8(nullptr, A.data(), B.data(), C.data(), 8, -1, 8, 1, 1);
    expect_rejected(r, q, sel, TG_ERR_INVALID_DIM, C);
    void* c_odd = static_cast<char*>(C.data()) + 1; // bf16 at an odd address
    EXPECT_EQ(k8.gemm_fp8(nullptr, A.data(), B.data(), c_odd, 8, 8, 8, 1, 1), TG_ERR_MISALIGNED);
    EXPECT_TRUE(C.untouched());
    // An FP8 input at an odd address is fine (1-byte elements).
    const void* a_odd = static_cast<const char*>(A.data()) + 1;
    EXPECT_EQ(k8.gemm_fp8(nullptr, a_odd, B.data(), C.data(), 8, 8, 8, 1, 1), TG_OK);
    EXPECT_TRUE(C.guards_intact());
    // K = 0: A and B are empty (NULL is fine) and C is all zeros, whatever the scales.
    GuardedBuffer Z(Dt::BF16, 3 * 5);
    EXPECT_EQ(k8.gemm_fp8(nullptr, nullptr, nullptr, Z.data(), 3, 5, 0, 0.37f, 2.5f), TG_OK);
    for (size_t i = 0; i < Z.count(); ++i)
      EXPECT_EQ(Z.get(i), 0.0) << i;
    EXPECT_TRUE(Z.guards_intact());
    // M = 0 or N = 0: nothing to write.
    EXPECT_EQ(k8.gemm_fp8(nullptr, nullptr, B.data(), nullptr, 0, 8, 8, 1, 1), TG_OK);
    EXPECT_EQ(k8.gemm_fp8(nullptr, A.data(), nullptr, nullptr, 8, 0, 8, 1, 1), TG_OK);
  }
}

// FP8 special codes reach the output as IEEE rules say: a NaN code in row 0 of A makes row 0 of
// C NaN (e4m3: S.1111.111; e5m2: E = 31, M != 0); an e5m2 infinity in row 1 of A times
// positive B values makes row 1 +inf (the bf16 store keeps infinities; only FP8 stores saturate).
TEST(ArgCheck, GemmFp8SpecialCodes) {
  for (Dt dt : kFp8Dts) {
    SCOPED_TRACE(dt_name(dt));
    const Fp8KernelSet& k8 = all_libs()[0].fp8(dt);
    const int64_t M = 3, N = 4, K = 5;
    GuardedBuffer A(dt, M * K), B(dt, N * K), C(Dt::BF16, M * N);
    for (size_t i = 0; i < A.count(); ++i)
      A.set(i, 1.0);
    for (size_t i = 0; i < B.count(); ++i)
      B.set(i, 0.5);
    static_cast<unsigned char*>(A.data())[2] = 0x7F; // A[0, 2]: NaN in both formats
    if (dt == Dt::E5M2)
      static_cast<unsigned char*>(A.data())[K + 1] = 0x7C; // A[1, 1] = +inf
    ASSERT_EQ(k8.gemm_fp8(nullptr, A.data(), B.data(), C.data(), M, N, K, 1.0f, 2.0f), TG_OK);
    for (int64_t j = 0; j < N; ++j) {
      EXPECT_TRUE(std::isnan(C.get(j))) << j;
      if (dt == Dt::E5M2)
        EXPECT_EQ(C.get(N + j), INFINITY) << j;
      else
        EXPECT_EQ(C.get(N + j), 5.0) << j;
      EXPECT_EQ(C.get(2 * N + j), 5.0) << j; // 5 * (1 * 0.5) * 2
    }
  }
}

// The all-targets library picks the most specific target this CPU runs.
TEST(Selection, AllTargetsLibraryPicksBest) {
  GemmCall g(Dt::F32);
  tg_selection sel{};
  ASSERT_EQ(all_libs()[3][Dt::F32].gemm_query(nullptr, g.A.data(), g.B.data(), g.C.data(), 8, 8,
                                              8, &sel),
            TG_OK)
      << sel.reason;
  EXPECT_EQ(std::string(sel.target), expected_target("")) << sel.reason;
  EXPECT_NE(std::string(sel.variant).find(sel.target), std::string::npos) << sel.variant;
}

} // namespace
} // namespace tgtest
