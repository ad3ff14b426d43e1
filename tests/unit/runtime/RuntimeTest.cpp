// Runtime unit tests: status strings, launch helpers, 16-bit float conversions, argument checks.
#include "tilegen/dispatch.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <string>

namespace {

TEST(Status, EveryCodeHasAMessage) {
  for (int s = TG_OK; s <= TG_ERR_INTERNAL; ++s) {
    const char* m = tg_status_string(static_cast<tg_status>(s));
    ASSERT_NE(m, nullptr);
    EXPECT_GT(std::strlen(m), 1u);
  }
  EXPECT_STREQ(tg_status_string(static_cast<tg_status>(1234)), "unknown status");
}

TEST(Launch, NumThreads) {
  EXPECT_EQ(tg_launch_num_threads(nullptr), 0);
  tg_launch l{};
  EXPECT_EQ(tg_launch_num_threads(&l), 0);
  l.num_threads = 1;
  EXPECT_EQ(tg_launch_num_threads(&l), 1);
  l.num_threads = -2;
  EXPECT_EQ(tg_launch_num_threads(&l), 0);
  // At most the processors this process may use: OpenMP is never asked for 100000 threads (a
  // stack overflow in libgomp) or INT_MAX (libgomp calls exit(1)).
  const int cpus = tg_cpu_count();
  EXPECT_GE(cpus, 1);
  for (int n : {2, 3, cpus, cpus + 1, 100000, INT_MAX}) {
    l.num_threads = n;
    EXPECT_EQ(tg_launch_num_threads(&l), n < cpus ? n : cpus) << n;
  }
}

TEST(Launch, VariantThreads) {
  tg_launch l{};
  const int cpus = tg_cpu_count();
  // Default: OpenMP's, but never more threads than blocks.
  EXPECT_EQ(tg_cpu_threads(nullptr, 8, 100, 1, 1), 8);
  EXPECT_EQ(tg_cpu_threads(nullptr, 8, 3, 1, 1), 3);
  EXPECT_EQ(tg_cpu_threads(nullptr, 8, 2, 1, 2), 4);
  EXPECT_EQ(tg_cpu_threads(nullptr, 0, 100, 1, 1), 1); // a nonsense default still gives a thread
  l.num_threads = INT_MAX;
  EXPECT_EQ(tg_cpu_threads(&l, 8, INT64_MAX, 1, 1), cpus);
  EXPECT_EQ(tg_cpu_threads(&l, 8, 1, 1, 1), 1);
  // Products of huge extents saturate instead of overflowing.
  EXPECT_EQ(tg_cpu_threads(&l, 8, INT64_MAX, INT64_MAX, INT64_MAX), cpus);
  EXPECT_EQ(tg_cpu_threads(&l, 8, 3, INT64_MAX, 2), cpus);
  l.num_threads = 1;
  EXPECT_EQ(tg_cpu_threads(&l, 8, 1000, 1000, 1000), 1);
}

TEST(Launch, Check) {
  char why[256];
  EXPECT_EQ(tg_check_launch(nullptr, why, sizeof why), TG_OK);
  tg_launch l{};
  EXPECT_EQ(tg_check_launch(&l, why, sizeof why), TG_OK);
  l.struct_size = sizeof(tg_launch);
  l.device = -1;
  EXPECT_EQ(tg_check_launch(&l, why, sizeof why), TG_OK);
  l.device = -2;
  EXPECT_EQ(tg_check_launch(&l, why, sizeof why), TG_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(why).find("launch->device = -2"), std::string::npos) << why;
  l.device = 0;
  l.struct_size = 3;
  EXPECT_EQ(tg_check_launch(&l, why, sizeof why), TG_ERR_INVALID_ARGUMENT);
  l.struct_size = 0;
  l.num_threads = -1;
  EXPECT_EQ(tg_check_launch(&l, nullptr, 0), TG_ERR_INVALID_ARGUMENT);
}

TEST(Half, BF16RoundTripAndRounding) {
  EXPECT_EQ(tg_bf16_to_float(tg_float_to_bf16(1.0f)), 1.0f);
  EXPECT_EQ(tg_bf16_to_float(tg_float_to_bf16(-3.5f)), -3.5f);
  // 1 + 2^-8 is exactly halfway between two bf16 values: ties to even (1.0).
  EXPECT_EQ(tg_bf16_to_float(tg_float_to_bf16(1.0f + std::ldexp(1.0f, -8))), 1.0f);
  EXPECT_EQ(tg_bf16_to_float(tg_float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8))),
            1.0f + std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(tg_bf16_to_float(tg_float_to_bf16(NAN))));
  EXPECT_TRUE(std::isinf(tg_bf16_to_float(tg_float_to_bf16(INFINITY))));
}

TEST(Half, F16AllBitPatternsRoundTrip) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = tg_f16_to_float(static_cast<tg_f16>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(tg_f16_to_float(tg_float_to_f16(f)))) << h;
      continue;
    }
    ASSERT_EQ(tg_float_to_f16(f), h) << "bits " << h << " value " << f;
  }
}

TEST(Half, F16Rounding) {
  EXPECT_EQ(tg_f16_to_float(tg_float_to_f16(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(tg_f16_to_float(tg_float_to_f16(65520.0f)))); // rounds up to inf
  EXPECT_EQ(tg_f16_to_float(tg_float_to_f16(65519.0f)), 65504.0f);
  EXPECT_EQ(tg_f16_to_float(tg_float_to_f16(std::ldexp(1.0f, -24))), std::ldexp(1.0f, -24));
  EXPECT_EQ(tg_f16_to_float(tg_float_to_f16(std::ldexp(1.0f, -25))), 0.0f); // tie to even: 0
  EXPECT_EQ(tg_f16_to_float(tg_float_to_f16(std::ldexp(3.0f, -26))), std::ldexp(1.0f, -24));
  EXPECT_EQ(tg_f16_to_float(tg_float_to_f16(1.0f + std::ldexp(1.0f, -11))), 1.0f); // tie: even
  EXPECT_EQ(tg_f16_to_float(tg_float_to_f16(-2.0f)), -2.0f);
}

TEST(Check, Dims) {
  char why[256];
  EXPECT_EQ(tg_check_dim("M", 0, 0, TG_NO_MAX, 1, why, sizeof why), TG_OK);
  EXPECT_EQ(tg_check_dim("M", -1, 0, TG_NO_MAX, 1, why, sizeof why), TG_ERR_INVALID_DIM);
  EXPECT_STREQ(why, "M = -1 is negative");
  EXPECT_EQ(tg_check_dim("N", 12, 1, 64, 8, why, sizeof why), TG_ERR_INVALID_DIM);
  EXPECT_STREQ(why, "N = 12 is not a multiple of 8");
  EXPECT_EQ(tg_check_dim("N", 0, 1, 64, 8, why, sizeof why), TG_ERR_INVALID_DIM);
  EXPECT_STREQ(why, "N = 0 is below its declared min 1");
  EXPECT_EQ(tg_check_dim("N", 72, 1, 64, 8, why, sizeof why), TG_ERR_INVALID_DIM);
  EXPECT_STREQ(why, "N = 72 is above its declared max 64");
  EXPECT_EQ(tg_check_dim("N", 64, 1, 64, 8, nullptr, 0), TG_OK);
}

TEST(Check, ValueDims) {
  char why[256];
  const int64_t values[] = {64, 128};
  EXPECT_EQ(tg_check_value_dim("D", 128, values, 2, why, sizeof why), TG_OK);
  EXPECT_EQ(tg_check_value_dim("D", 96, values, 2, why, sizeof why), TG_ERR_UNSUPPORTED_SHAPE);
  EXPECT_STREQ(why, "no variant for D=96: built for D in {64, 128}");
  char tiny[10];
  EXPECT_EQ(tg_check_value_dim("D", 96, values, 2, tiny, sizeof tiny), TG_ERR_UNSUPPORTED_SHAPE);
  EXPECT_EQ(std::strlen(tiny), sizeof tiny - 1); // truncated, still terminated
}

TEST(Check, Flags) {
  char why[256];
  EXPECT_EQ(tg_check_flag("causal", 0, why, sizeof why), TG_OK);
  EXPECT_EQ(tg_check_flag("causal", 1, why, sizeof why), TG_OK);
  EXPECT_EQ(tg_check_flag("causal", 2, why, sizeof why), TG_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(why, "flag causal = 2; flags are 0 or 1");
}

TEST(Check, Tensors) {
  char why[256];
  alignas(8) float data[4] = {};
  int64_t shape[2] = {2, 2};
  EXPECT_EQ(tg_check_tensor("A", data, shape, 2, 1, 4, why, sizeof why), TG_OK);
  EXPECT_EQ(tg_check_tensor("A", nullptr, shape, 2, 1, 4, why, sizeof why), TG_ERR_NULL_POINTER);
  EXPECT_STREQ(why, "A is NULL but has 4 elements");
  // Empty tensors may be NULL.
  int64_t empty[2] = {0, 5};
  EXPECT_EQ(tg_check_tensor("A", nullptr, empty, 2, 1, 4, why, sizeof why), TG_OK);
  // Misaligned.
  const char* bytes = reinterpret_cast<const char*>(data);
  EXPECT_EQ(tg_check_tensor("A", bytes + 2, shape, 2, 1, 4, why, sizeof why), TG_ERR_MISALIGNED);
  EXPECT_EQ(tg_check_tensor("A", bytes + 1, shape, 2, 1, 1, why, sizeof why), TG_OK); // i8
  EXPECT_EQ(tg_check_tensor("A", bytes + 1, shape, 2, 1, 2, why, sizeof why), TG_ERR_MISALIGNED);
  // Negative extents from a shape expression.
  int64_t neg[2] = {3, -1};
  EXPECT_EQ(tg_check_tensor("B", data, neg, 2, 1, 4, why, sizeof why), TG_ERR_INVALID_DIM);
  // Overflow: element count, and bytes.
  int64_t huge[2] = {INT64_MAX / 2, 3};
  EXPECT_EQ(tg_check_tensor("C", data, huge, 2, 1, 4, why, sizeof why), TG_ERR_SIZE_OVERFLOW);
  int64_t big[1] = {INT64_MAX / 4};
  EXPECT_EQ(tg_check_tensor("C", data, big, 1, 1, 8, why, sizeof why), TG_ERR_SIZE_OVERFLOW);
  // Overflowing extents do not matter when another extent is 0.
  int64_t huge_empty[3] = {INT64_MAX / 2, 3, 0};
  EXPECT_EQ(tg_check_tensor("C", nullptr, huge_empty, 3, 1, 4, why, sizeof why), TG_OK);
  // The shape computation itself overflowed.
  EXPECT_EQ(tg_check_tensor("C", data, shape, 2, 0, 4, why, sizeof why), TG_ERR_SIZE_OVERFLOW);
  // Rank 0: one element.
  EXPECT_EQ(tg_check_tensor("s", nullptr, nullptr, 0, 1, 4, why, sizeof why), TG_ERR_NULL_POINTER);
}

TEST(Check, CheckedArithmetic) {
  int ok = 1;
  EXPECT_EQ(tg_cdiv_i64(10, 4, &ok), 3);
  EXPECT_EQ(tg_cdiv_i64(0, 4, &ok), 0);
  EXPECT_EQ(tg_div_i64(-7, 2, &ok), -4); // floor
  EXPECT_EQ(tg_mod_i64(-7, 2, &ok), 1);
  EXPECT_EQ(ok, 1);
  tg_mul_i64(INT64_MAX, 2, &ok);
  EXPECT_EQ(ok, 0);
  ok = 1;
  tg_add_i64(INT64_MAX, 1, &ok);
  EXPECT_EQ(ok, 0);
}

// Floor division, modulo and ceil division as docs/spec.md defines them for every divisor,
// computed in 128 bits: a / 0 = 0, a % 0 = a, cdiv(a, 0) = 0.
__int128 floor_div(__int128 a, __int128 b) {
  if (b == 0)
    return 0;
  __int128 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__int128 floor_mod(__int128 a, __int128 b) { return b == 0 ? a : a - b * floor_div(a, b); }
__int128 ceil_div(__int128 a, __int128 b) { return b == 0 ? 0 : -floor_div(-a, b); }

TEST(Check, DivisionForEveryDivisor) {
  // Dispatch evaluates shapes, grids, class predicates and requirements with these: a zero
  // divisor has a value (it was an "overflow" once, and cdiv's (a + b - 1) / b overflowed near
  // INT64_MAX and was wrong for negative b); only a quotient past int64 clears ok.
  const int64_t v[] = {INT64_MIN, INT64_MIN + 1, -1000000007, -64, -7, -2, -1, 0, 1, 2, 7, 64,
                       1000000007, INT64_MAX - 1, INT64_MAX};
  for (int64_t a : v)
    for (int64_t b : v) {
      const bool fits_q = !(a == INT64_MIN && b == -1);
      int ok = 1;
      int64_t q = tg_div_i64(a, b, &ok);
      EXPECT_EQ(ok, fits_q ? 1 : 0) << a << " / " << b;
      if (fits_q)
        EXPECT_EQ((__int128)q, floor_div(a, b)) << a << " / " << b;
      ok = 1;
      int64_t m = tg_mod_i64(a, b, &ok);
      EXPECT_EQ(ok, 1) << a << " % " << b;
      EXPECT_EQ((__int128)m, floor_mod(a, b)) << a << " % " << b;
      ok = 1;
      int64_t c = tg_cdiv_i64(a, b, &ok);
      EXPECT_EQ(ok, fits_q ? 1 : 0) << "cdiv(" << a << ", " << b << ")";
      if (fits_q)
        EXPECT_EQ((__int128)c, ceil_div(a, b)) << "cdiv(" << a << ", " << b << ")";
    }
}

TEST(Check, DoubleToInt) {
  int ok = 1;
  EXPECT_EQ(tg_double_to_i64(-2.9, &ok), -2);
  EXPECT_EQ(tg_double_to_i64(-9223372036854775808.0, &ok), INT64_MIN);
  EXPECT_EQ(ok, 1);
  for (double bad : {(double)NAN, (double)INFINITY, -(double)INFINITY, 9223372036854775808.0, -1e30}) {
    ok = 1;
    EXPECT_EQ(tg_double_to_i64(bad, &ok), 0);
    EXPECT_EQ(ok, 0) << bad;
  }
}

TEST(Check, NegativeValueDimIsAnInvalidDim) {
  char why[256];
  const int64_t values[2] = {64, 128};
  EXPECT_EQ(tg_check_value_dim("D", 64, values, 2, why, sizeof why), TG_OK);
  EXPECT_EQ(tg_check_value_dim("D", 96, values, 2, why, sizeof why), TG_ERR_UNSUPPORTED_SHAPE);
  EXPECT_EQ(tg_check_value_dim("D", -64, values, 2, why, sizeof why), TG_ERR_INVALID_DIM);
  EXPECT_STREQ(why, "D = -64 is negative");
  EXPECT_EQ(tg_check_value_dim("D", INT64_MIN, values, 2, nullptr, 0), TG_ERR_INVALID_DIM);
}

TEST(Check, NoteIdle) {
  char why[256] = "c_avx2: CPU has avx2";
  tg_note_idle(why, sizeof why);
  EXPECT_STREQ(why, "c_avx2: CPU has avx2; no tensor it writes has an element: the call returns "
                    "TG_OK without running it");
  char small[8] = "abcdefg"; // full: nothing appended, still terminated
  tg_note_idle(small, sizeof small);
  EXPECT_STREQ(small, "abcdefg");
  tg_note_idle(nullptr, 0);
}

} // namespace
