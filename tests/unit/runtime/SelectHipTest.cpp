// Selection in libraries with HIP rows (tg_select_variant_hip, docs/hip.md) with fake device
// probes: a gfx row runs on its own arch only, the portable row ("hip") on every HIP device,
// the highest preference wins; CUDA rows that run come first; no HIP runtime / device -1 fall
// back to the CPU with the reason first; TILEGEN_GPU_DISABLE; the per-device cache.
#include "tilegen/dispatch.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

namespace {

int fn_any(const tg_launch*, const tg_variant_args*) { return 0; }
int has_none(const char*) { return 0; }
const char* const feat_none[] = {nullptr};

// Instance 0: C, the portable HIP row, gfx90a and gfx942 rows, and an sm_80 CUDA row.
const tg_variant_entry table[] = {
    {0, "f16", "c", "v_c", TG_BACKEND_CPU, "", 0, feat_none, fn_any, 0, 0, nullptr, 0},
    {0, "f16", "hip", "v_hip", TG_BACKEND_HIP, "hip", 100, feat_none, fn_any, 0, 0, nullptr, 0},
    {0, "f16", "gfx90a", "v_90a", TG_BACKEND_HIP, "gfx90a", 110, feat_none, fn_any, 0, 0, nullptr, 0},
    {0, "f16", "gfx942", "v_942", TG_BACKEND_HIP, "gfx942", 120, feat_none, fn_any, 0, 0, nullptr, 0},
    {0, "f16", "sm_80", "v_80", TG_BACKEND_CUDA, "sm_80", 100, feat_none, fn_any, 80, 0, nullptr, 0},
};
const size_t n = sizeof table / sizeof table[0];

std::map<int, const char*> g_hip;   // device -> target
std::map<int, int> g_cuda;          // device -> cc
const char* g_hip_why = "no HIP runtime: libamdhip64.so.6: cannot open shared object file";
int g_arch_probes = 0;

const char* fake_arch(int device, const char** why) {
  ++g_arch_probes;
  auto it = g_hip.find(device);
  if (it == g_hip.end()) {
    *why = g_hip_why;
    return nullptr;
  }
  return it->second;
}
int fake_cc(int device, const char** why) {
  auto it = g_cuda.find(device);
  if (it == g_cuda.end()) {
    *why = "no CUDA device: cudaGetDeviceCount returned cudaErrorNoDevice";
    return 0;
  }
  return it->second;
}

std::string pick(int device, std::string* why_out = nullptr, bool cuda = false) {
  tg_launch l{};
  l.device = device;
  char why[512];
  int v = tg_select_variant_hip(table, n, 0, 0, nullptr, &l, has_none, cuda ? fake_cc : nullptr,
                                fake_arch, why, sizeof why);
  if (why_out)
    *why_out = why;
  return v < 0 ? "none" : table[v].target;
}

TEST(SelectHip, RowRunsOn) {
  EXPECT_TRUE(tg_hip_row_runs_on(&table[1], "gfx1100"));  // portable: every HIP device
  EXPECT_TRUE(tg_hip_row_runs_on(&table[1], "hip"));
  EXPECT_TRUE(tg_hip_row_runs_on(&table[2], "gfx90a"));
  EXPECT_FALSE(tg_hip_row_runs_on(&table[2], "gfx942"));   // code objects of another arch
  EXPECT_FALSE(tg_hip_row_runs_on(&table[3], "hip"));      // a device of no gfx row
  EXPECT_FALSE(tg_hip_row_runs_on(&table[0], "gfx942"));   // CPU row
  EXPECT_FALSE(tg_hip_row_runs_on(&table[4], "gfx942"));   // CUDA row
  EXPECT_FALSE(tg_hip_row_runs_on(&table[2], nullptr));
}

TEST(SelectHip, ArchPicksRow) {
  g_cuda.clear();
  g_hip = {{0, "gfx942"}, {1, "gfx90a"}, {2, "gfx1100"}, {3, "hip"}};
  std::string why;
  EXPECT_EQ(pick(0, &why), "gfx942");
  EXPECT_NE(why.find("HIP device 0 is gfx942"), std::string::npos) << why;
  EXPECT_NE(why.find("hip also runs here"), std::string::npos) << why;
  EXPECT_NE(why.find("gfx90a not usable here"), std::string::npos) << why;
  EXPECT_EQ(pick(1), "gfx90a");
  EXPECT_EQ(pick(2), "hip"); // gfx1100: no row of its own, the portable one
  EXPECT_EQ(pick(3), "hip"); // HIP's NVIDIA platform, or an AMD arch of no row
}

TEST(SelectHip, FallbackSaysWhy) {
  g_cuda.clear();
  g_hip.clear();
  std::string why;
  EXPECT_EQ(pick(0, &why), "c");
  EXPECT_EQ(why.rfind("no HIP variant runs: no HIP runtime: libamdhip64.so.6", 0), 0u) << why;
  EXPECT_NE(why.find("c: portable variant"), std::string::npos) << why;
  g_hip = {{0, "gfx942"}};
  EXPECT_EQ(pick(-1, &why), "c");
  EXPECT_NE(why.find("launch->device = -1 selects the CPU"), std::string::npos) << why;
}

TEST(SelectHip, CudaRowFirst) {
  g_hip = {{0, "hip"}}; // an NVIDIA GPU seen through HIP's NVIDIA platform ...
  g_cuda = {{0, 90}};   // ... and through CUDA: the CUDA row wins
  EXPECT_EQ(pick(0, nullptr, true), "sm_80");
  g_cuda.clear();
  EXPECT_EQ(pick(0, nullptr, true), "hip");
}

TEST(SelectHip, DisabledByEnv) {
  g_cuda.clear();
  g_hip = {{0, "gfx942"}};
  setenv("TILEGEN_GPU_DISABLE", "gfx942", 1);
  EXPECT_EQ(pick(0), "hip");
  setenv("TILEGEN_GPU_DISABLE", "gfx942,hip", 1);
  EXPECT_EQ(pick(0), "c");
  unsetenv("TILEGEN_GPU_DISABLE");
}

TEST(SelectHip, CachedPerDevice) {
  g_cuda.clear();
  g_hip = {{0, "gfx942"}, {1, "gfx90a"}};
  tg_select_cache cache[1] = {};
  tg_launch l0{}, l1{};
  l1.device = 1;
  g_arch_probes = 0;
  EXPECT_EQ(table[tg_select_cached_hip(table, n, 0, 0, 1, &l0, cache, nullptr, fake_arch)].target,
            std::string("gfx942"));
  EXPECT_EQ(table[tg_select_cached_hip(table, n, 0, 0, 1, &l1, cache, nullptr, fake_arch)].target,
            std::string("gfx90a"));
  const int probes = g_arch_probes;
  EXPECT_EQ(table[tg_select_cached_hip(table, n, 0, 0, 1, &l0, cache, nullptr, fake_arch)].target,
            std::string("gfx942"));
  EXPECT_EQ(g_arch_probes, probes); // served from the cache
}

} // namespace
