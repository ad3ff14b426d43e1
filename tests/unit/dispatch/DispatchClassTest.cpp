// Calls the dispatch library generated for the fixture kernel with shape classes (cfixlib):
// the class predicates are evaluated over the call's dims in order (small_m: M <= 64, narrow:
// N * D <= 1024, else large), GPU rows are keyed by (target, class), classes that share a
// variant reach the same function, the selection cache is per class, CPU rows ignore classes,
// and _query names the class. The CUDA runtime is replaced by stand-ins (cfixlib_fakes.c):
// cfix_device_cc is the compute capability device 0 reports.
#include "cfixlib.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

extern "C" {
extern const char* cfix_last_variant;
extern int cfix_device_cc;
extern int cfix_device_cc_calls;
}

namespace {

struct Call {
  std::vector<float> X, Y;
  std::vector<uint16_t> W;
  std::vector<int8_t> Z;
  int64_t M, N, D;
  Call(int64_t m, int64_t n, int64_t d) : M(m), N(n), D(d) {
    X.assign(static_cast<size_t>(M * N), 1.0f);
    Y.assign(static_cast<size_t>(M * N * 2), 0.0f);
    W.assign(static_cast<size_t>(D), 0);
    Z.assign(static_cast<size_t>((N + 2) / 3), 0);
  }
  std::string run(const tg_launch* l = nullptr) {
    cfix_last_variant = "";
    EXPECT_EQ(cfixlib_mix_f32(l, X.data(), W.data(), Y.data(), Z.data(), M, N, D, 0.5f, 0, 1, 0),
              TG_OK);
    return cfix_last_variant;
  }
  tg_selection query(const tg_launch* l = nullptr) {
    tg_selection s;
    EXPECT_EQ(cfixlib_mix_f32_query(l, X.data(), W.data(), Y.data(), Z.data(), M, N, D, 0.5f, 0,
                                    1, 0, &s),
              TG_OK);
    return s;
  }
  std::string desc() {
    tg_gpu_launch_desc d;
    cfix_last_variant = "";
    EXPECT_EQ(cfixlib_mix_f32_desc(nullptr, X.data(), W.data(), Y.data(), Z.data(), M, N, D, 0.5f,
                                   0, 1, 0, &d),
              TG_OK);
    return cfix_last_variant;
  }
};

const std::string kInst = "tgv_cfixlib__mix__f32_causal0_D64__";

TEST(ClassDispatch, Sm90PicksTheVariantOfTheClass) {
  cfix_device_cc = 90;
  EXPECT_EQ(Call(64, 512, 64).run(), kInst + "sm_90__small_m");  // M <= 64
  EXPECT_EQ(Call(1, 512, 64).run(), kInst + "sm_90__small_m");
  EXPECT_EQ(Call(65, 512, 64).run(), kInst + "sm_90");           // large
  EXPECT_EQ(Call(65, 16, 64).run(), kInst + "sm_90");            // narrow: shares large's
  EXPECT_EQ(Call(64, 16, 64).run(), kInst + "sm_90__small_m");   // first class wins
  EXPECT_EQ(Call(0, 512, 64).run(), kInst + "sm_90__small_m");   // empty M is small
  // The _desc twin selects the same way.
  EXPECT_EQ(Call(8, 512, 64).desc(), kInst + "sm_90__small_m_desc");
  EXPECT_EQ(Call(4096, 512, 64).desc(), kInst + "sm_90_desc");
}

TEST(ClassDispatch, CacheIsPerClassAndDevice) {
  cfix_device_cc = 90;
  Call small(8, 512, 64), large(1000, 512, 64);
  // Alternate: a per-instance cache would return the first class's row for both.
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(small.run(), kInst + "sm_90__small_m");
    EXPECT_EQ(large.run(), kInst + "sm_90");
  }
  // Once cached, a call probes no device.
  int before = cfix_device_cc_calls;
  small.run();
  large.run();
  EXPECT_EQ(cfix_device_cc_calls, before);
  // The CPU (device -1) ignores classes.
  tg_launch cpu = {};
  cpu.device = -1;
  EXPECT_EQ(small.run(&cpu), kInst + "c");
  EXPECT_EQ(large.run(&cpu), kInst + "c");
}

TEST(ClassDispatch, QueryNamesTheClass) {
  cfix_device_cc = 90;
  tg_selection s = Call(32, 512, 64).query();
  EXPECT_EQ(std::string(s.variant), kInst + "sm_90__small_m");
  EXPECT_EQ(std::string(s.target), "sm_90");
  EXPECT_NE(std::string(s.reason).find("sm_90 for class small_m (M <= 64): GPU 0 has cc 9.0"),
            std::string::npos)
      << s.reason;
  EXPECT_NE(std::string(s.reason).find("preferred over sm_80"), std::string::npos) << s.reason;
  s = Call(100, 8, 64).query();
  EXPECT_EQ(std::string(s.variant), kInst + "sm_90");
  EXPECT_NE(std::string(s.reason).find("class narrow (N * D <= 1024)"), std::string::npos)
      << s.reason;
  s = Call(100, 512, 64).query();
  EXPECT_NE(std::string(s.reason).find("class large (none of M <= 64, N * D <= 1024)"),
            std::string::npos)
      << s.reason;
}

TEST(ClassDispatch, OlderDeviceRunsSm80ForEveryClass) {
  // A cc 8.6 device: sm_90 rows cannot run; sm_80's plain variant serves every class (the
  // cache of device 0 already holds sm_90 choices from the tests above, so use device 0 only
  // through _query, which never caches).
  cfix_device_cc = 86;
  tg_selection s = Call(8, 512, 64).query();
  EXPECT_EQ(std::string(s.variant), kInst + "sm_80");
  EXPECT_NE(std::string(s.reason).find("not usable here: sm_90 (needs cc >= 9.0)"),
            std::string::npos)
      << s.reason;
  s = Call(1000, 512, 64).query();
  EXPECT_EQ(std::string(s.variant), kInst + "sm_80");
}

TEST(ClassDispatch, NoDeviceFallsBackToTheCpu) {
  cfix_device_cc = 0;
  tg_selection s = Call(8, 512, 64).query();
  EXPECT_EQ(std::string(s.target), "c");
  EXPECT_NE(std::string(s.reason).find("no CUDA device: fake; fell back to c"), std::string::npos)
      << s.reason;
  EXPECT_EQ(std::string(s.reason).find("class"), std::string::npos) << s.reason;
}

TEST(ClassDispatch, ValueParamsTakeTheInstanceValue) {
  // narrow is N * D <= 1024: with D = 128 (another instance) N = 8 is narrow, N = 16 is not;
  // both run that instance's plain sm_90 variant (narrow shares large's), small M its own.
  cfix_device_cc = 90;
  const std::string d128 = "tgv_cfixlib__mix__f32_causal0_D128__sm_90";
  EXPECT_NE(std::string(Call(100, 8, 128).query().reason).find("class narrow"), std::string::npos);
  EXPECT_NE(std::string(Call(100, 16, 128).query().reason).find("class large"), std::string::npos);
  EXPECT_EQ(Call(100, 16, 128).run(), d128);
  EXPECT_EQ(Call(10, 16, 128).run(), d128 + "__small_m");
}

} // namespace
