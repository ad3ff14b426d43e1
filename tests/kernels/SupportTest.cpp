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

// FP8 (Numeric.cpp): the format constants, ties to even, saturation, and agreement with the
// runtime's conversions (launch.c, written separately) on every code and a million floats.
TEST(Conversions, Fp8KnownValues) {
  EXPECT_EQ(fp8_bits_to_f32(Dt::E4M3, 0x7E), 448.0f);
  EXPECT_TRUE(std::isnan(fp8_bits_to_f32(Dt::E4M3, 0xFF)));
  EXPECT_EQ(fp8_bits_to_f32(Dt::E4M3, 0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(fp8_bits_to_f32(Dt::E4M3, 0xB8), -1.0f);
  EXPECT_EQ(fp8_bits_to_f32(Dt::E5M2, 0x7B), 57344.0f);
  EXPECT_EQ(fp8_bits_to_f32(Dt::E5M2, 0x7C), INFINITY);
  EXPECT_EQ(fp8_bits_to_f32(Dt::E5M2, 0x01), std::ldexp(1.0f, -16));
  EXPECT_EQ(f32_to_fp8_bits(Dt::E4M3, 1.0625f), 0x38);  // tie to even
  EXPECT_EQ(f32_to_fp8_bits(Dt::E4M3, 1.1875f), 0x3A);  // tie to even
  EXPECT_EQ(f32_to_fp8_bits(Dt::E4M3, 1e9f), 0x7E);     // satfinite
  EXPECT_EQ(f32_to_fp8_bits(Dt::E4M3, -INFINITY), 0xFE);
  EXPECT_EQ(f32_to_fp8_bits(Dt::E4M3, std::ldexp(1.0f, -10)), 0x00); // tie to even (0)
  EXPECT_EQ(f32_to_fp8_bits(Dt::E5M2, 1.125f), 0x3C);   // tie to even
  EXPECT_EQ(f32_to_fp8_bits(Dt::E5M2, 60000.0f), 0x7B); // satfinite
  EXPECT_EQ(round_to(Dt::E4M3, 0.3), 0.3125);
  EXPECT_EQ(dt_bytes(Dt::E5M2), 1u);
}

TEST(Conversions, Fp8AgreeWithRuntime) {
  for (uint32_t c = 0; c < 256; ++c) {
    const float a = fp8_bits_to_f32(Dt::E4M3, (uint8_t)c), b = fp8_bits_to_f32(Dt::E5M2, (uint8_t)c);
    if (std::isnan(a))
      EXPECT_TRUE(std::isnan(tg_e4m3_to_float((uint8_t)c))) << c;
    else
      EXPECT_EQ(a, tg_e4m3_to_float((uint8_t)c)) << c;
    if (std::isnan(b))
      EXPECT_TRUE(std::isnan(tg_e5m2_to_float((uint8_t)c))) << c;
    else
      EXPECT_EQ(b, tg_e5m2_to_float((uint8_t)c)) << c;
  }
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<uint32_t> bits;
  std::uniform_real_distribution<float> near(-500.0f, 500.0f); // the interesting range
  for (int i = 0; i < 1000000; ++i) {
    uint32_t u = bits(rng);
    float f;
    std::memcpy(&f, &u, 4);
    if (i % 2)
      f = near(rng);
    if (std::isnan(f))
      continue;
    ASSERT_EQ(f32_to_fp8_bits(Dt::E4M3, f), tg_float_to_e4m3(f)) << std::hexfloat << f;
    ASSERT_EQ(f32_to_fp8_bits(Dt::E5M2, f), tg_float_to_e5m2(f)) << std::hexfloat << f;
  }
}

// Random FP8 fills: only codes of the requested magnitudes, both signs, decoded values returned.
TEST(Conversions, Fp8RandomFill) {
  std::mt19937_64 rng(6);
  for (Dt dt : kFp8Dts) {
    GuardedBuffer b(dt, 4096);
    auto v = fill_random_fp8(b, rng);
    int neg = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      ASSERT_GE(std::fabs(v[i]), 0.0625);
      ASSERT_LE(std::fabs(v[i]), 4.0);
      ASSERT_EQ(v[i], b.get(i));
      neg += v[i] < 0;
    }
    EXPECT_GT(neg, 1500);
    EXPECT_LT(neg, 2600);
    EXPECT_TRUE(b.guards_intact());
  }
}

TEST(Reference, GemmFp8) {
  // A [2, 2] = [1 2; 3 4], B [N = 2, K = 2] = [5 7; 6 8] (B^T = [5 6; 7 8]):
  // A @ B^T = [19 22; 43 50], scaled by 0.5 * 3.
  auto C = ref::gemm_fp8({1, 2, 3, 4}, {5, 7, 6, 8}, 2, 2, 2, 0.5, 3);
  EXPECT_EQ(C, (ref::Vec{28.5, 33, 64.5, 75}));
  auto S = ref::gemm_fp8({1, -2, 3, 4}, {5, 7, 6, 8}, 2, 2, 2, -0.5, 3, true);
  EXPECT_EQ(S, (ref::Vec{28.5, 33, 64.5, 75}));
  // Error bound: exact output rounding term plus the accumulation term.
  EXPECT_EQ(fp8_gemm_bound(0, 0, 0), std::ldexp(1.0, -134));
  EXPECT_NEAR(fp8_gemm_bound(256, 0, 10), 1.0, 1e-30);
  EXPECT_NEAR(max_bound_ratio({1.5, 2}, {1, 2}, {1, 0}), 0.5, 0);
  EXPECT_EQ(max_bound_ratio({NAN}, {1}, {1}), INFINITY);
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
