// Calls a dispatch library generated from the fixture kernel (with fake variants that record
// how they were called): argument validation, instance selection, argument marshalling,
// the query API.
#include "fixlib.h"
#include "fixlib_fakes.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

struct Args {
  std::vector<float> X, Y;
  std::vector<uint16_t> W;
  std::vector<int8_t> Z;
  int64_t M = 5, N = 16, D = 64;
  float scale = 0.5f;
  tg_f16 bias = 0x3C00; // 1.0
  int32_t count = 7;
  int causal = 0;

  Args() { resize(); }
  void resize() {
    X.assign(static_cast<size_t>(M * N), 1.0f);
    Y.assign(static_cast<size_t>(M * N * 2), 0.0f);
    W.assign(static_cast<size_t>(D), 0);
    Z.assign(static_cast<size_t>((N + 2) / 3), 0);
  }
  tg_status call(const tg_launch* l = nullptr) {
    return fixlib_mix_f32(l, X.data(), W.data(), Y.data(), Z.data(), M, N, D, scale, bias, count,
                          causal);
  }
  tg_status query(tg_selection* out, const tg_launch* l = nullptr) {
    return fixlib_mix_f32_query(l, X.data(), W.data(), Y.data(), Z.data(), M, N, D, scale, bias,
                                count, causal, out);
  }
};

std::string expected_target() {
  if (tg_cpu_has("avx512f") && tg_cpu_has("avx512bw") && tg_cpu_has("avx512vl") &&
      tg_cpu_has("avx512dq") && tg_cpu_has("avx2") && tg_cpu_has("fma") && tg_cpu_has("f16c"))
    return "c_avx512";
  if (tg_cpu_has("avx2") && tg_cpu_has("fma") && tg_cpu_has("f16c"))
    return "c_avx2";
  return "c";
}

TEST(Generated, CallReachesTheRightVariantWithTheArguments) {
  Args a;
  a.causal = 1;
  a.D = 128;
  a.resize();
  fix_last_variant = "";
  ASSERT_EQ(a.call(), TG_OK);
  EXPECT_EQ(std::string(fix_last_variant),
            "tgv_fixlib__mix__f32_causal1_D128__" + expected_target());
  EXPECT_EQ(fix_last_args.tensors[0], a.X.data());
  EXPECT_EQ(fix_last_args.tensors[1], a.W.data());
  EXPECT_EQ(fix_last_args.tensors[2], a.Y.data());
  EXPECT_EQ(fix_last_args.tensors[3], a.Z.data());
  EXPECT_EQ(fix_last_args.dims[0], 5);
  EXPECT_EQ(fix_last_args.dims[1], 16);
  EXPECT_EQ(fix_last_args.dims[2], 128);
  EXPECT_EQ(fix_last_args.scalars[0], 0.5);
  EXPECT_EQ(fix_last_args.scalars[1], 1.0); // f16 bits converted
  EXPECT_EQ(fix_last_args.scalars[2], 7.0);
  EXPECT_EQ(fix_last_args.flags[0], 1);

  a.causal = 0;
  a.D = 64;
  a.resize();
  ASSERT_EQ(a.call(), TG_OK);
  EXPECT_EQ(std::string(fix_last_variant), "tgv_fixlib__mix__f32_causal0_D64__" + expected_target());
}

TEST(Generated, Validation) {
  {
    Args a;
    a.D = 96;
    EXPECT_EQ(a.call(), TG_ERR_UNSUPPORTED_SHAPE);
    tg_selection sel;
    EXPECT_EQ(a.query(&sel), TG_ERR_UNSUPPORTED_SHAPE);
    EXPECT_EQ(sel.status, TG_ERR_UNSUPPORTED_SHAPE);
    EXPECT_STREQ(sel.reason, "no variant for D=96: built for D in {64, 128}");
    EXPECT_STREQ(sel.variant, "");
  }
  {
    Args a;
    a.N = 12; // not a multiple of 8
    EXPECT_EQ(a.call(), TG_ERR_INVALID_DIM);
    a.N = 4104; // above max
    EXPECT_EQ(a.call(), TG_ERR_INVALID_DIM);
    a.N = 16;
    a.M = -1;
    EXPECT_EQ(a.call(), TG_ERR_INVALID_DIM);
  }
  {
    Args a;
    a.causal = 2;
    EXPECT_EQ(a.call(), TG_ERR_INVALID_ARGUMENT);
  }
  {
    Args a;
    fix_last_variant = "";
    EXPECT_EQ(fixlib_mix_f32(nullptr, nullptr, a.W.data(), a.Y.data(), a.Z.data(), a.M, a.N,
                             a.D, 1.0f, 0, 0, 0),
              TG_ERR_NULL_POINTER);
    EXPECT_STREQ(fix_last_variant, ""); // no variant ran
    // An empty X may be NULL: M = 0 makes X and Y empty.
    EXPECT_EQ(fixlib_mix_f32(nullptr, nullptr, a.W.data(), nullptr, a.Z.data(), 0, a.N, a.D,
                             1.0f, 0, 0, 0),
              TG_OK);
    // Misaligned float pointer.
    const float* bad = reinterpret_cast<const float*>(reinterpret_cast<const char*>(a.X.data()) + 1);
    EXPECT_EQ(fixlib_mix_f32(nullptr, bad, a.W.data(), a.Y.data(), a.Z.data(), a.M, a.N, a.D,
                             1.0f, 0, 0, 0),
              TG_ERR_MISALIGNED);
    // int8 tensors have no alignment requirement.
    EXPECT_EQ(fixlib_mix_f32(nullptr, a.X.data(), a.W.data(), a.Y.data(), a.Z.data() + 1, a.M,
                             a.N, a.D, 1.0f, 0, 0, 0),
              TG_OK);
  }
  {
    // Y is [M, N * 2] f32: overflow of the byte size is caught before any pointer use.
    Args a;
    EXPECT_EQ(fixlib_mix_f32(nullptr, a.X.data(), a.W.data(), a.Y.data(), a.Z.data(),
                             INT64_MAX / 8, 8, 64, 1.0f, 0, 0, 0),
              TG_ERR_SIZE_OVERFLOW);
  }
  {
    Args a;
    tg_launch bad{};
    bad.device = -7;
    EXPECT_EQ(a.call(&bad), TG_ERR_INVALID_ARGUMENT);
  }
}

TEST(Generated, Query) {
  Args a;
  tg_selection sel;
  std::memset(&sel, 0x5A, sizeof sel);
  ASSERT_EQ(a.query(&sel), TG_OK);
  EXPECT_EQ(sel.status, TG_OK);
  EXPECT_EQ(std::string(sel.target), expected_target());
  EXPECT_STREQ(sel.instance, "f32_causal0_D64");
  EXPECT_EQ(std::string(sel.variant), "tgv_fixlib__mix__f32_causal0_D64__" + expected_target());
  EXPECT_EQ(std::string(sel.reason).rfind(expected_target() + ": ", 0), 0u) << sel.reason;
  EXPECT_EQ(a.query(nullptr), TG_ERR_INVALID_ARGUMENT);

  tg_launch cpu{};
  cpu.device = -1;
  ASSERT_EQ(a.query(&sel, &cpu), TG_OK);
  EXPECT_EQ(std::string(sel.target), expected_target());
}

} // namespace
