// Tests of the test support itself (no generated code involved): the f16/bf16 conversions of
// Numeric.cpp and the float64 references on cases small enough to work out by hand. A wrong
// reference would otherwise be blamed on the generator.
#include "Numeric.h"
#include "Reference.h"

#include "tilegen/runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

namespace tgtest {
namespace {

// The independent conversions of Numeric.cpp: exact values from the formats, and agreement with
// the runtime's conversions (written separately) on a million random floats.
TEST(Conversions, KnownValues) {
  EXPECT_EQ(f32_to_f16_bits(1.0f), 0x3C00);
  EXPECT_EQ(f32_to_f16_bits(-2.0f), 0xC000);
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7BFF);
  EXPECT_EQ(f32_to_f16_bits(65519.0f), 0x7BFF);
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7C00);
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -25)), 0x0000);          // tie to even (0)
  EXPECT_EQ(f32_to_f16_bits(std::ldexp(3.0f, -25)), 0x0002);          // tie to even (2)
  EXPECT_EQ(f32_to_f16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);   // tie to even
  EXPECT_EQ(f32_to_f16_bits(1.0f + std::ldexp(3.0f, -11)), 0x3C02);   // tie to even
  EXPECT_EQ(f16_bits_to_f32(0x3555), 0.333251953125f);
  EXPECT_EQ(f32_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(f32_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3F80);   // tie to even
  EXPECT_EQ(f32_to_bf16_bits(1.0f + std::ldexp(3.0f, -8)), 0x3F82);   // tie to even
  EXPECT_EQ(bf16_bits_to_f32(0xC040), -3.0f);
}

TEST(Conversions, AgreeWithRuntime) {
  std::mt19937_64 rng(4);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 1000000; ++i) {
    uint32_t u = bits(rng);
    float f;
    std::memcpy(&f, &u, 4);
    if (std::isnan(f))
      continue;
    ASSERT_EQ(f32_to_f16_bits(f), tg_float_to_f16(f)) << std::hexfloat << f;
    ASSERT_EQ(f32_to_bf16_bits(f), tg_float_to_bf16(f)) << std::hexfloat << f;
  }
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float a = f16_bits_to_f32(static_cast<uint16_t>(h)), b = tg_f16_to_float(static_cast<uint16_t>(h));
    if (std::isnan(a))
      EXPECT_TRUE(std::isnan(b)) << h;
    else
      EXPECT_EQ(a, b) << h;
  }
}

TEST(Reference, Gemm) {
  // [1 2; 3 4] @ [5 6; 7 8] = [19 22; 43 50]
  auto C = ref::gemm({1, 2, 3, 4}, {5, 6, 7, 8}, 2, 2, 2);
  EXPECT_EQ(C, (ref::Vec{19, 22, 43, 50}));
  EXPECT_EQ(ref::gemm({}, {}, 2, 3, 0), ref::Vec(6, 0.0)); // empty sum
}

TEST(Reference, GemmBiasGelu) {
  // gelu(0) = 0, gelu(x) -> x for large x, gelu(-x) = gelu(x) - x
  auto C = ref::gemm_bias_gelu({1}, {2}, {-2}, 1, 1, 1);
  EXPECT_EQ(C[0], 0.0);
  C = ref::gemm_bias_gelu({1}, {10}, {0}, 1, 1, 1);
  EXPECT_NEAR(C[0], 10.0, 1e-12);
  double g1 = ref::gemm_bias_gelu({1}, {1}, {0}, 1, 1, 1)[0];
  double gm1 = ref::gemm_bias_gelu({1}, {-1}, {0}, 1, 1, 1)[0];
  EXPECT_NEAR(g1, 0.8413447460685429, 1e-15); // Phi(1)
  EXPECT_NEAR(g1 - gm1, 1.0, 1e-15);
}

TEST(Reference, Softmax) {
  auto Y = ref::softmax({0, std::log(3.0), 5, 5}, 2, 2);
  EXPECT_NEAR(Y[0], 0.25, 1e-15);
  EXPECT_NEAR(Y[1], 0.75, 1e-15);
  EXPECT_NEAR(Y[2], 0.5, 1e-15);
  EXPECT_NEAR(Y[3], 0.5, 1e-15);
}

TEST(Reference, RmsNorm) {
  // row [3, 4]: mean square 12.5; eps 0 -> y = x / sqrt(12.5) * w
  auto Y = ref::rmsnorm({3, 4}, {1, 2}, 1, 2, 0.0);
  EXPECT_NEAR(Y[0], 3 / std::sqrt(12.5), 1e-15);
  EXPECT_NEAR(Y[1], 8 / std::sqrt(12.5), 1e-15);
}

TEST(Reference, FlashAttention) {
  // One key: the output is that key's value row, whatever the scores.
  auto O = ref::flash_attention({1, 2}, {3, 4}, {5, 6}, 1, 1, 1, 2, 0.5, false);
  EXPECT_EQ(O, (ref::Vec{5, 6}));
  // Two keys, D = 1, q = [0, 1], k = [0, ln 3], v = [1, 2], scale 1:
  //   row 0 (q=0): equal weights -> 1.5 (non-causal) / 1 (causal: key 0 only)
  //   row 1 (q=1): weights 1 : 3 -> 1.75
  auto Q = ref::Vec{0, 1}, K = ref::Vec{0, std::log(3.0)}, V = ref::Vec{1, 2};
  auto O1 = ref::flash_attention(Q, K, V, 1, 1, 2, 1, 1.0, false);
  EXPECT_NEAR(O1[0], 1.5, 1e-15);
  EXPECT_NEAR(O1[1], 1.75, 1e-15);
  auto O2 = ref::flash_attention(Q, K, V, 1, 1, 2, 1, 1.0, true);
  EXPECT_NEAR(O2[0], 1.0, 1e-15);
  EXPECT_NEAR(O2[1], 1.75, 1e-15);
}

TEST(Numeric, GuardedBufferCatchesWrites) {
  GuardedBuffer b(Dt::BF16, 10);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u);
  EXPECT_TRUE(b.untouched());
  EXPECT_TRUE(b.guards_intact());
  static_cast<unsigned char*>(b.data())[20] = 0; // one past the end
  EXPECT_FALSE(b.guards_intact());
  EXPECT_TRUE(std::isnan(b.get(3))); // unwritten elements read as NaN
}

TEST(Numeric, CompareAndTolerance) {
  auto s = compare({1.0, 2.0, 3.5}, {1.0, 2.0, 4.0});
  EXPECT_DOUBLE_EQ(s.rel, 0.125);
  EXPECT_EQ(s.worst, 2u);
  s = compare({NAN, 1.0}, {1.0, 1.0});
  EXPECT_EQ(s.nonfinite, 1u);
  EXPECT_GT(tolerance(Dt::BF16, 1), 3 * 0.00390625 - 1e-12);
  EXPECT_LT(tolerance(Dt::F32, 1000), 1e-4);
}

} // namespace
} // namespace tgtest
