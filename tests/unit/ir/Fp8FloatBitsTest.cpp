// The generator's FP8 folding (ir/FloatBits.cpp: f32_to_fp8_bits, fp8_bits_to_f32,
// round_to_float_type) against the independent model of the formats in Fp8Reference.h:
// every one of the 256 codes of both formats decoded, every finite code encoded back, and the
// encoder on midpoints (ties to even), their neighbours, overflow, subnormals, zeros and NaNs.
#include "Fp8Reference.h"
#include "ir/FloatBits.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using tilegen::ir::DType;

struct Case {
  fp8ref::Format fmt;
  DType type;
};
const Case kCases[] = {{fp8ref::kE4M3, DType::e4m3()}, {fp8ref::kE5M2, DType::e5m2()}};

// The model itself, on the numbers every FP8 document quotes (so a slip in the model cannot
// make every implementation "agree" with a wrong reference).
TEST(Fp8Reference, FormatConstants) {
  using fp8ref::decode;
  using fp8ref::kE4M3;
  using fp8ref::kE5M2;
  EXPECT_EQ(fp8ref::max_finite_code(kE4M3), 0x7e);
  EXPECT_EQ(decode(kE4M3, 0x7e), 448.0);
  EXPECT_EQ(decode(kE4M3, 0x01), std::ldexp(1.0, -9)); // smallest subnormal
  EXPECT_EQ(decode(kE4M3, 0x08), std::ldexp(1.0, -6)); // smallest normal
  EXPECT_EQ(decode(kE4M3, 0x38), 1.0);
  EXPECT_EQ(decode(kE4M3, 0xb9), -1.125);
  EXPECT_TRUE(std::isnan(decode(kE4M3, 0x7f)) && std::isnan(decode(kE4M3, 0xff)));
  EXPECT_EQ(decode(kE4M3, 0x78), 256.0); // E = 15 is a normal binade in e4m3
  EXPECT_EQ(fp8ref::max_finite_code(kE5M2), 0x7b);
  EXPECT_EQ(decode(kE5M2, 0x7b), 57344.0);
  EXPECT_EQ(decode(kE5M2, 0x01), std::ldexp(1.0, -16));
  EXPECT_EQ(decode(kE5M2, 0x04), std::ldexp(1.0, -14));
  EXPECT_EQ(decode(kE5M2, 0x3c), 1.0);
  EXPECT_EQ(decode(kE5M2, 0x7c), INFINITY);
  EXPECT_EQ(decode(kE5M2, 0xfc), -INFINITY);
  for (uint8_t c : {0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff})
    EXPECT_TRUE(std::isnan(decode(kE5M2, c))) << int(c);
  // Encoding by search: ties to even, saturation, signed zero.
  EXPECT_EQ(fp8ref::encode(kE4M3, 1.0625f), 0x38);   // 1 + 1/16: tie between 0x38 and 0x39
  EXPECT_EQ(fp8ref::encode(kE4M3, 1.1875f), 0x3a);   // tie between 0x39 and 0x3a
  EXPECT_EQ(fp8ref::encode(kE4M3, 464.0f), 0x7e);    // half-way past the max
  EXPECT_EQ(fp8ref::encode(kE4M3, 1e6f), 0x7e);
  EXPECT_EQ(fp8ref::encode(kE4M3, -INFINITY), 0xfe);
  EXPECT_EQ(fp8ref::encode(kE4M3, 0x1p-10f), 0x00);  // half the smallest subnormal: to even 0
  EXPECT_EQ(fp8ref::encode(kE4M3, -0x1p-10f), 0x80);
  EXPECT_EQ(fp8ref::encode(kE4M3, 0x1.8p-9f), 0x02); // 1.5 subnormal quanta: to even 2
  EXPECT_EQ(fp8ref::encode(kE5M2, 61440.0f), 0x7b);
  EXPECT_EQ(fp8ref::encode(kE5M2, INFINITY), 0x7b);
}

TEST(Fp8FloatBits, DecodesEveryCode) {
  for (const auto& [fmt, type] : kCases)
    for (int c = 0; c < 256; ++c) {
      const double want = fp8ref::decode(fmt, static_cast<uint8_t>(c));
      const float got = tilegen::ir::fp8_bits_to_f32(static_cast<uint8_t>(c), type);
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got)) << fmt.name << " code 0x" << std::hex << c;
      else
        EXPECT_EQ(fp8ref::f32_bits(got), fp8ref::f32_bits(static_cast<float>(want)))
            << fmt.name << " code 0x" << std::hex << c << ": " << got << ", want " << want;
    }
}

TEST(Fp8FloatBits, EncodesEveryFiniteCodeBack) {
  for (const auto& [fmt, type] : kCases)
    for (int c = 0; c < 256; ++c) {
      const uint8_t code = static_cast<uint8_t>(c);
      const float v = tilegen::ir::fp8_bits_to_f32(code, type);
      const uint8_t back = tilegen::ir::f32_to_fp8_bits(v, type);
      if (fp8ref::is_nan_code(fmt, code))
        EXPECT_TRUE(fp8ref::is_nan_code(fmt, back)) << fmt.name << " 0x" << std::hex << c;
      else if (std::isinf(v)) // e5m2 infinities saturate (satfinite)
        EXPECT_EQ(back, (code & 0x80) | fp8ref::max_finite_code(fmt)) << fmt.name;
      else
        EXPECT_EQ(back, code) << fmt.name << " 0x" << std::hex << c << " (" << v << ")";
    }
}

TEST(Fp8FloatBits, EncodesLikeTheReference) {
  for (const auto& [fmt, type] : kCases) {
    int bad = 0;
    const std::vector<float> xs = fp8ref::encoder_inputs(fmt);
    for (float x : xs) {
      const uint8_t want = fp8ref::encode(fmt, x);
      const uint8_t got = tilegen::ir::f32_to_fp8_bits(x, type);
      const bool ok = std::isnan(x) ? fp8ref::is_nan_code(fmt, got) : got == want;
      if (!ok && ++bad <= 10)
        ADD_FAILURE() << fmt.name << " " << std::hexfloat << x << ": 0x" << std::hex << int(got)
                      << ", want 0x" << int(want);
      // round_to_float_type is decode(encode()): the value constant folding produces.
      const double r = tilegen::ir::round_to_float_type(x, type);
      const double rw = fp8ref::decode(fmt, want);
      if (!(std::isnan(x) ? std::isnan(r) : r == rw) && ++bad <= 10)
        ADD_FAILURE() << fmt.name << " round_to_float_type(" << std::hexfloat << x << ") = " << r
                      << ", want " << rw;
    }
    EXPECT_EQ(bad, 0) << fmt.name << ": " << bad << " of " << xs.size() << " inputs differ";
    EXPECT_GT(xs.size(), 100000u);
  }
}

} // namespace
