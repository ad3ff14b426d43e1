// GPU-aware selection with a fake device probe: compute-capability compatibility (PTX rows run
// on later devices, arch-specific rows only on their own), preference among GPU rows, the CPU
// fallback and its reason (no driver, missing device, too old a device, device -1), NULL
// launch = device 0, and the per-instance-and-device cache.
#include "tilegen/dispatch.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

int fn_any(const tg_launch*, const tg_variant_args*) { return 0; }
int has_avx2(const char* f) { return std::string(f) == "avx2"; }

const char* const feat_none[] = {nullptr};
const char* const feat_avx2[] = {"avx2", nullptr};

// Instance 0 ("bf16"): CPU rows and the four sm_8x/sm_90 rows plus an arch-specific sm_90a.
// Instance 1 ("f32"): GPU rows only.
const tg_variant_entry table[] = {
    {0, "bf16", "c", "v_c", TG_BACKEND_CPU, "", 0, feat_none, fn_any, 0, 0, nullptr},
    {0, "bf16", "c_avx2", "v_avx2", TG_BACKEND_CPU, "", 10, feat_avx2, fn_any, 0, 0, nullptr},
    {0, "bf16", "sm_80", "v_80", TG_BACKEND_CUDA, "sm_80", 100, feat_none, fn_any, 80, 0, nullptr},
    {0, "bf16", "sm_86", "v_86", TG_BACKEND_CUDA, "sm_86", 106, feat_none, fn_any, 86, 0, nullptr},
    {0, "bf16", "sm_90", "v_90", TG_BACKEND_CUDA, "sm_90", 110, feat_none, fn_any, 90, 0, nullptr},
    {0, "bf16", "sm_90a", "v_90a", TG_BACKEND_CUDA, "sm_90a", 120, feat_none, fn_any, 90, 1,
     nullptr},
    {1, "f32", "sm_80", "w_80", TG_BACKEND_CUDA, "sm_80", 100, feat_none, fn_any, 80, 0, nullptr},
};
const size_t n = sizeof table / sizeof table[0];

// The fake machine: device ordinal -> cc; absent = no such device.
std::map<int, int> g_devices;
int g_probes = 0;
int fake_cc(int device, const char** why) {
  ++g_probes;
  auto it = g_devices.find(device);
  if (it == g_devices.end()) {
    *why = g_devices.empty() ? "no CUDA device: cudaGetDeviceCount returned "
                               "cudaErrorInsufficientDriver"
                             : "no CUDA device 3: cudaGetDeviceCount found 1";
    return 0;
  }
  return it->second;
}

std::string target_for(int cc, int instance = 0) {
  g_devices = {{0, cc}};
  tg_launch l{};
  int v = tg_select_variant_gpu(table, n, instance, &l, has_avx2, fake_cc, nullptr, 0);
  return v < 0 ? "none" : table[v].target;
}

TEST(SelectGpu, RowRunsOn) {
  EXPECT_TRUE(tg_gpu_row_runs_on(&table[2], 80));
  EXPECT_TRUE(tg_gpu_row_runs_on(&table[2], 120)); // PTX: JIT on later devices
  EXPECT_FALSE(tg_gpu_row_runs_on(&table[2], 75));
  EXPECT_TRUE(tg_gpu_row_runs_on(&table[5], 90));
  EXPECT_FALSE(tg_gpu_row_runs_on(&table[5], 100)); // sm_90a: SASS for cc 9.0 only
  EXPECT_FALSE(tg_gpu_row_runs_on(&table[5], 0));
  EXPECT_FALSE(tg_gpu_row_runs_on(&table[0], 90)); // a CPU row is never a GPU row
}

TEST(SelectGpu, ClosestArchWins) {
  EXPECT_EQ(target_for(80), "sm_80");
  EXPECT_EQ(target_for(86), "sm_86");
  EXPECT_EQ(target_for(87), "sm_86"); // Orin: no sm_87 row, sm_86's PTX/SASS family
  EXPECT_EQ(target_for(89), "sm_86"); // no sm_89 row in this table
  EXPECT_EQ(target_for(90), "sm_90a");
  EXPECT_EQ(target_for(100), "sm_90"); // Blackwell: sm_90's PTX, not the arch-specific row
  EXPECT_EQ(target_for(75), "c_avx2"); // Turing: too old for every row
  EXPECT_EQ(target_for(75, 1), "none");
  EXPECT_EQ(target_for(80, 1), "sm_80");
}

TEST(SelectGpu, ReasonsOnTheGpu) {
  char why[256];
  g_devices = {{0, 86}};
  EXPECT_EQ(tg_select_variant_gpu(table, n, 0, nullptr, has_avx2, fake_cc, why, sizeof why), 3);
  EXPECT_STREQ(why, "sm_86: GPU 0 has cc 8.6; preferred over sm_80; not usable here: sm_90 "
                    "(needs cc >= 9.0), sm_90a (needs cc == 9.0)");
}

TEST(SelectGpu, FallbackReasons) {
  char why[256];
  g_devices = {};
  tg_launch l{};
  EXPECT_EQ(tg_select_variant_gpu(table, n, 0, &l, has_avx2, fake_cc, why, sizeof why), 1);
  EXPECT_STREQ(why, "no CUDA device: cudaGetDeviceCount returned cudaErrorInsufficientDriver; "
                    "fell back to c_avx2: CPU has avx2; preferred over c");

  g_devices = {{0, 90}};
  l.device = 3;
  EXPECT_EQ(tg_select_variant_gpu(table, n, 0, &l, has_avx2, fake_cc, why, sizeof why), 1);
  EXPECT_EQ(std::string(why).rfind("no CUDA device 3: cudaGetDeviceCount found 1; fell back "
                                   "to c_avx2",
                                   0),
            0u)
      << why;

  l.device = -1; // the CPU on a machine with a GPU
  EXPECT_EQ(tg_select_variant_gpu(table, n, 0, &l, has_avx2, fake_cc, why, sizeof why), 1);
  EXPECT_EQ(std::string(why).rfind("launch->device = -1 selects the CPU; fell back to c_avx2",
                                   0),
            0u)
      << why;

  g_devices = {{0, 75}};
  EXPECT_EQ(tg_select_variant_gpu(table, n, 0, nullptr, has_avx2, fake_cc, why, sizeof why), 1);
  EXPECT_STREQ(why, "GPU 0 has cc 7.5, which no GPU variant runs on (sm_80 needs cc >= 8.0, "
                    "sm_86 needs cc >= 8.6, sm_90 needs cc >= 9.0, sm_90a needs cc == 9.0); "
                    "fell back to c_avx2: CPU has avx2; preferred over c");

  g_devices = {}; // an instance with GPU rows only, and no GPU
  EXPECT_EQ(tg_select_variant_gpu(table, n, 1, nullptr, has_avx2, fake_cc, why, sizeof why), -1);
  EXPECT_STREQ(why, "no variant of f32 can run here: no CUDA device: cudaGetDeviceCount "
                    "returned cudaErrorInsufficientDriver");
}

TEST(SelectGpu, ZeroedLaunchIsDeviceZero) {
  g_devices = {{0, 80}, {1, 90}};
  tg_launch zero{};
  EXPECT_EQ(tg_select_variant_gpu(table, n, 0, &zero, has_avx2, fake_cc, nullptr, 0), 2);
  EXPECT_EQ(tg_select_variant_gpu(table, n, 0, nullptr, has_avx2, fake_cc, nullptr, 0), 2);
  tg_launch one{};
  one.device = 1;
  EXPECT_EQ(tg_select_variant_gpu(table, n, 0, &one, has_avx2, fake_cc, nullptr, 0), 5);
}

TEST(SelectGpu, CachedPerInstanceAndDevice) {
  g_devices = {{0, 80}, {1, 90}, {20, 86}};
  tg_select_cache cache[2] = {};
  tg_launch l{};
  g_probes = 0;
  EXPECT_EQ(tg_select_cached_gpu(table, n, 0, &l, cache, fake_cc), 2);
  EXPECT_EQ(g_probes, 1);
  EXPECT_EQ(tg_select_cached_gpu(table, n, 0, &l, cache, fake_cc), 2);
  EXPECT_EQ(tg_select_cached_gpu(table, n, 0, nullptr, cache, fake_cc), 2);
  EXPECT_EQ(g_probes, 1); // served from cache[0].gpu[0]
  l.device = 1;
  EXPECT_EQ(tg_select_cached_gpu(table, n, 0, &l, cache, fake_cc), 5);
  EXPECT_EQ(cache[0].gpu[1], 5 + 1);
  l.device = -1;
  int cpu = tg_select_cached_gpu(table, n, 0, &l, cache, fake_cc);
  EXPECT_EQ(table[cpu].backend, TG_BACKEND_CPU);
  EXPECT_EQ(cache[0].state, cpu + 1);
  // Beyond the cached ordinals: selected afresh each time, still right.
  l.device = 20;
  g_probes = 0;
  EXPECT_EQ(tg_select_cached_gpu(table, n, 0, &l, cache, fake_cc), 3);
  EXPECT_EQ(tg_select_cached_gpu(table, n, 0, &l, cache, fake_cc), 3);
  EXPECT_EQ(g_probes, 2);
  // Instance 1 on device 0 has its own slot; "none" is not cached.
  g_devices = {{0, 75}};
  tg_select_cache fresh[2] = {};
  EXPECT_EQ(tg_select_cached_gpu(table, n, 1, nullptr, fresh, fake_cc), -1);
  EXPECT_EQ(fresh[1].gpu[0], 0);
}

} // namespace
