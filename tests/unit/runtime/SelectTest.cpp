// Variant selection: preference order, feature gating, the reason sentence, caching.
#include "tilegen/dispatch.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

std::set<std::string> g_present;
int fake_has(const char* f) { return g_present.count(f) ? 1 : 0; }

int fn_c(const tg_launch*, const tg_variant_args*) { return 100; }
int fn_avx2(const tg_launch*, const tg_variant_args*) { return 102; }
int fn_avx512(const tg_launch*, const tg_variant_args*) { return 105; }

const char* const feat_none[] = {nullptr};
const char* const feat_avx2[] = {"avx2", "fma", "f16c", nullptr};
const char* const feat_avx512[] = {"avx2", "fma", "f16c", "avx512f", "avx512bw", nullptr};

// Two instances (f32: three targets; f32_causal1: only c and a GPU row).
const tg_variant_entry table[] = {
    {0, "f32", "c", "tgv_l__k__f32__c", TG_BACKEND_CPU, "", 0, feat_none, fn_c},
    {0, "f32", "c_avx2", "tgv_l__k__f32__c_avx2", TG_BACKEND_CPU, "", 10, feat_avx2, fn_avx2},
    {0, "f32", "c_avx512", "tgv_l__k__f32__c_avx512", TG_BACKEND_CPU, "", 20, feat_avx512,
     fn_avx512},
    {1, "f32_causal1", "sm_80", "tgv_l__k__f32_causal1__sm_80", TG_BACKEND_CUDA, "sm_80", 100,
     feat_none, fn_avx512},
    {1, "f32_causal1", "c", "tgv_l__k__f32_causal1__c", TG_BACKEND_CPU, "", 0, feat_none, fn_c},
};
const size_t n = sizeof table / sizeof table[0];

TEST(Select, HighestPreferenceThatRuns) {
  char why[256];
  g_present = {"avx2", "fma", "f16c", "avx512f", "avx512bw"};
  EXPECT_EQ(tg_select_variant(table, n, 0, nullptr, fake_has, why, sizeof why), 2);
  EXPECT_STREQ(why, "c_avx512: CPU has avx2, fma, f16c, avx512f, avx512bw; preferred over "
                    "c_avx2, c");

  g_present = {"avx2", "fma", "f16c"};
  EXPECT_EQ(tg_select_variant(table, n, 0, nullptr, fake_has, why, sizeof why), 1);
  EXPECT_STREQ(why, "c_avx2: CPU has avx2, fma, f16c; preferred over c; not usable here: "
                    "c_avx512 (CPU lacks avx512f, avx512bw)");

  g_present = {"avx2"}; // no fma: AVX2 variants need all three
  EXPECT_EQ(tg_select_variant(table, n, 0, nullptr, fake_has, why, sizeof why), 0);
  EXPECT_EQ(std::string(why).rfind("c: portable variant, needs no CPU features; not usable "
                                    "here: c_avx2 (CPU lacks fma, f16c)", 0),
            0u)
      << why;
}

TEST(Select, GpuRowsNeedADevice) {
  char why[256];
  g_present = {};
  tg_launch cpu{};
  cpu.device = -1;
  EXPECT_EQ(tg_select_variant(table, n, 1, &cpu, fake_has, why, sizeof why), 4);
  EXPECT_STREQ(why, "launch->device = -1 selects the CPU; fell back to c: portable variant, "
                    "needs no CPU features");
  tg_launch gpu{};
  gpu.device = 0; // no device runtime given: still the CPU
  EXPECT_EQ(tg_select_variant(table, n, 1, &gpu, fake_has, why, sizeof why), 4);
  EXPECT_STREQ(why, "this library was built without a GPU runtime; fell back to c: portable "
                    "variant, needs no CPU features");
}

TEST(Select, NoneCanRun) {
  const tg_variant_entry only_avx[] = {
      {0, "f32", "c_avx2", "tgv_x", TG_BACKEND_CPU, "", 10, feat_avx2, fn_avx2}};
  char why[256];
  g_present = {"fma"};
  EXPECT_EQ(tg_select_variant(only_avx, 1, 0, nullptr, fake_has, why, sizeof why), -1);
  EXPECT_STREQ(why, "no variant of f32 can run here: c_avx2 needs avx2, f16c");
  EXPECT_EQ(tg_select_variant(only_avx, 1, 7, nullptr, fake_has, why, sizeof why), -1);
}

TEST(Select, ReasonIsTruncatedSafely) {
  char why[16];
  g_present = {"avx2", "fma", "f16c"};
  EXPECT_EQ(tg_select_variant(table, n, 0, nullptr, fake_has, why, sizeof why), 1);
  EXPECT_EQ(std::string(why), std::string("c_avx2: CPU has avx2").substr(0, 15));
}

TEST(Select, CachedMatchesUncachedAndIsStable) {
  tg_select_cache cache[2] = {};
  int first = tg_select_cached(table, n, 0, nullptr, cache);
  int expect = tg_select_variant(table, n, 0, nullptr, tg_cpu_has, nullptr, 0);
  EXPECT_EQ(first, expect);
  EXPECT_EQ(cache[0].state, first + 1);
  EXPECT_EQ(tg_select_cached(table, n, 0, nullptr, cache), first);
  EXPECT_EQ(tg_select_cached(table, n, 1, nullptr, cache), 4);
}

TEST(Select, FindInstance) {
  const int64_t keys[] = {0, 64, 0, 128, 1, 64, 1, 128}; // (causal, D)
  const int64_t k1[] = {1, 64};
  const int64_t k2[] = {1, 96};
  EXPECT_EQ(tg_find_instance(keys, 4, 2, k1), 2);
  EXPECT_EQ(tg_find_instance(keys, 4, 2, k2), -1);
  EXPECT_EQ(tg_find_instance(nullptr, 1, 0, nullptr), 0); // no key: the only instance
}

TEST(Cpu, UnknownFeatureIsAbsent) {
  EXPECT_EQ(tg_cpu_has("warp-drive"), 0);
  EXPECT_EQ(tg_cpu_has(nullptr), 0);
}

} // namespace
