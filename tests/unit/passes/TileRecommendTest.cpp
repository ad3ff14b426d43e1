// TileRecommend: the budget filter, shape classes and their representative shapes, the
// ranking (large tiles for 4096^3, a different choice for small M), ties, notes.
#include "passes/TileRecommend.h"

#include "passes/Pipeline.h"
#include "passes/ScheduleResolver.h"
#include "spec/Frontend.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace tilegen;
using namespace tilegen::ir;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A spec's kernels from text; `edit` is applied to the shipped text first (e.g. to add
// classes) so the tests follow the shipped kernels.
std::vector<Kernel> kernels_of(const std::string& text) {
  std::ostringstream out;
  DiagEngine diag(out);
  auto ks = spec::load_kernels_from_text("t.yaml", text, diag);
  EXPECT_TRUE(ks) << out.str();
  return ks ? *ks : std::vector<Kernel>{};
}

Kernel binding(const std::vector<Kernel>& ks, const std::string& type) {
  for (const auto& k : ks)
    if (k.type_suffix() == type)
      return k;
  ADD_FAILURE() << "no binding " << type;
  return {};
}

std::string shipped_text(const std::string& file) {
  return read_file(std::string(TILEGEN_KERNELS_DIR) + "/" + file);
}

// The shipped spec without its CUDA schedule overrides (`    sm_80: {...}` lines) and its
// shape classes (`  classes: ...`, flow or block form, which the tests add themselves), so that
// the recommender ranks the declared candidates whatever the shipped specs pin.
std::string declared_text(const std::string& file) {
  std::istringstream in(shipped_text(file));
  std::string out, line;
  bool in_classes = false;
  while (std::getline(in, line)) {
    auto first = line.find_first_not_of(' ');
    if (in_classes && first != std::string::npos && first > 2)
      continue; // a class of the block form
    in_classes = false;
    if (first != std::string::npos && line.compare(first, 3, "sm_") == 0 && first >= 4)
      continue;
    if (first == 2 && line.compare(first, 8, "classes:") == 0) {
      in_classes = true;
      continue;
    }
    out += line + "\n";
  }
  return out;
}

// gemm.yaml with `classes: {small_m: "M <= 64"}` in its schedule.
std::string gemm_with_classes(const std::string& classes) {
  std::string t = declared_text("gemm.yaml");
  auto at = t.find("  require:");
  EXPECT_NE(at, std::string::npos);
  return t.insert(at, "  classes: " + classes + "\n");
}

int64_t value_of(const passes::Recommendation& r, size_t cfg, const std::string& name) {
  for (size_t i = 0; i < r.const_names.size(); ++i)
    if (r.const_names[i] == name)
      return r.configs[cfg].values[i];
  ADD_FAILURE() << "no tile constant " << name;
  return -1;
}

passes::Recommendation rec(const Kernel& k, const std::map<std::string, int64_t>& inst,
                           const char* target) {
  std::ostringstream out;
  DiagEngine diag(out);
  auto r = passes::recommend(k, inst, *find_target(target), diag);
  EXPECT_TRUE(r) << out.str();
  return r ? *r : passes::Recommendation{};
}

TEST(TileRecommend, LargeGemmBf16OnSm90GetsALargeTile) {
  auto r = rec(binding(kernels_of(declared_text("gemm.yaml")), "bf16"), {}, "sm_90");
  ASSERT_EQ(r.classes.size(), 1u);
  const auto& large = r.classes[0];
  EXPECT_EQ(large.shape.name, "large");
  EXPECT_EQ(large.shape.shape_str(), "M=4096 N=4096 K=4096");
  size_t best = large.ranked.front().first;
  EXPECT_GE(value_of(r, best, "BM") * value_of(r, best, "BN"), 128 * 256) << r.config_str(best);
  const auto& m = large.ranked.front().second;
  EXPECT_STREQ(m.bound, "compute");
  EXPECT_DOUBLE_EQ(m.flops, 2.0 * 4096 * 4096 * 4096);
  // Ranked best first.
  for (size_t i = 1; i < large.ranked.size(); ++i)
    EXPECT_LE(large.ranked[i - 1].second.time_us, large.ranked[i].second.time_us);
}

TEST(TileRecommend, BudgetFilterFollowsTheTarget) {
  Kernel k = binding(kernels_of(declared_text("gemm.yaml")), "bf16");
  for (const char* t : {"sm_80", "sm_86", "sm_89", "sm_90"}) {
    const Target& target = *find_target(t);
    auto r = rec(k, {}, t);
    size_t eligible = 0;
    for (const auto& c : r.configs) {
      bool fits = c.use.smem_bytes <= target.gpu.smem_per_block &&
                  c.use.threads <= target.max_threads &&
                  c.use.registers <= target.gpu.regs_per_thread &&
                  (c.use.registers + 7) / 8 * 8 * c.use.threads <= target.gpu.regs_per_sm;
      EXPECT_EQ(c.eligible, fits) << t << " " << c.why_not;
      eligible += fits;
    }
    EXPECT_EQ(r.eligible, eligible);
    for (const auto& cls : r.classes) {
      EXPECT_EQ(cls.ranked.size(), eligible);
      for (const auto& [i, m] : cls.ranked)
        EXPECT_TRUE(r.configs[i].eligible);
    }
  }
  // sm_86's 101376 B rule out configurations sm_90's 232448 B keep: BM=128 BN=128 BK=64
  // stages=4 needs 131072 B.
  auto r86 = rec(k, {}, "sm_86"), r90 = rec(k, {}, "sm_90");
  EXPECT_LT(r86.eligible, r90.eligible);
  bool seen = false;
  for (size_t i = 0; i < r86.configs.size(); ++i)
    if (r86.config_str(i) == "BM=128 BN=128 BK=64 stages=4 threads=256") {
      seen = true;
      EXPECT_FALSE(r86.configs[i].eligible);
      EXPECT_EQ(r86.configs[i].why_not, "smem 131072 B > 101376 B");
      EXPECT_TRUE(r90.configs[i].eligible);
    }
  EXPECT_TRUE(seen);
}

TEST(TileRecommend, SmallMClassChoosesDifferently) {
  Kernel k = binding(kernels_of(gemm_with_classes("{small_m: \"M <= 64\"}")), "bf16");
  ASSERT_EQ(k.shape_classes.size(), 1u);
  for (const char* t : {"sm_80", "sm_90"}) {
    auto r = rec(k, {}, t);
    ASSERT_EQ(r.classes.size(), 2u);
    const auto* small = r.find("small_m");
    const auto* large = r.find("large");
    ASSERT_TRUE(small && large);
    EXPECT_EQ(small->shape.shape_str(), "M=64 N=4096 K=4096");
    EXPECT_EQ(&r.classes[0], small); // declared classes first, "large" last
    size_t s = small->ranked.front().first, l = large->ranked.front().first;
    EXPECT_NE(s, l) << t;
    // For M = 64 the large tile leaves the device nearly idle: the small_m choice runs more
    // blocks and the model ranks the large choice strictly worse at the small shape.
    const auto& sm = small->ranked.front().second;
    double large_at_small = -1;
    for (const auto& [i, m] : small->ranked)
      if (i == l) {
        EXPECT_GT(sm.blocks, m.blocks) << t;
        large_at_small = m.time_us;
      }
    EXPECT_GT(large_at_small, sm.time_us) << t;
    EXPECT_LT(value_of(r, s, "BM") * value_of(r, s, "BN"),
              value_of(r, l, "BM") * value_of(r, l, "BN"))
        << t;
  }
}

TEST(TileRecommend, RepresentativeShapesFollowClassOrderAndDimConstraints) {
  std::string text = gemm_with_classes("{tiny: \"M <= 8\", small_m: \"M <= 64\", "
                                       "skinny: \"N < 1000 && K >= 2 * N\"}");
  auto ks = kernels_of(text);
  Kernel k = binding(ks, "f16");
  std::ostringstream out;
  DiagEngine diag(out);
  auto reps = passes::shape_class_reps(k, {}, diag);
  ASSERT_TRUE(reps) << out.str();
  ASSERT_EQ(reps->size(), 4u);
  EXPECT_EQ((*reps)[0].shape_str(), "M=8 N=4096 K=4096");
  EXPECT_EQ((*reps)[1].shape_str(), "M=64 N=4096 K=4096");  // M <= 8 went to tiny
  EXPECT_EQ((*reps)[2].shape_str(), "M=4096 N=512 K=4096"); // largest N < 1000 with K >= 2N
  EXPECT_EQ((*reps)[3].shape_str(), "M=4096 N=4096 K=4096");
  EXPECT_TRUE((*reps)[3].reachable);

  // With M a multiple of 16, tiny's M <= 8 has no shape left: a located error.
  std::string constrained = text;
  constrained.replace(constrained.find("  M: dim"), 8, "  M: {dim: dynamic, multiple_of: 16}");
  Kernel kc = binding(kernels_of(constrained), "f16");
  std::ostringstream out2;
  DiagEngine diag2(out2);
  EXPECT_FALSE(passes::shape_class_reps(kc, {}, diag2));
  EXPECT_NE(out2.str().find("shape class 'tiny' takes no shape"), std::string::npos) << out2.str();
}

TEST(TileRecommend, PinnedShapesOverrideTheLadder) {
  Kernel k = binding(kernels_of(gemm_with_classes(
                         "{decode: {when: \"M <= 16\", shape: {M: 4}}, small_m: \"M <= 64\", "
                         "large: {shape: {M: 2048, K: 1024}}}")),
                     "bf16");
  ASSERT_EQ(k.shape_classes.size(), 2u);
  ASSERT_EQ(k.class_shapes.size(), 2u);
  std::ostringstream out;
  DiagEngine diag(out);
  auto reps = passes::shape_class_reps(k, {}, diag);
  ASSERT_TRUE(reps) << out.str();
  ASSERT_EQ(reps->size(), 3u);
  EXPECT_EQ((*reps)[0].shape_str(), "M=4 N=4096 K=4096");
  EXPECT_EQ((*reps)[1].shape_str(), "M=64 N=4096 K=4096");
  EXPECT_EQ((*reps)[2].shape_str(), "M=2048 N=4096 K=1024");
  auto r = rec(k, {}, "sm_90");
  ASSERT_EQ(r.classes.size(), 3u);
  EXPECT_EQ(r.classes[2].ranked.front().second.flops, 2.0 * 2048 * 4096 * 1024);
}

TEST(TileRecommend, LargeIsMarkedUnreachableWhenClassesTakeEverything) {
  Kernel k = binding(kernels_of(gemm_with_classes("{all: \"M >= 0\"}")), "f32");
  std::ostringstream out;
  DiagEngine diag(out);
  auto reps = passes::shape_class_reps(k, {}, diag);
  ASSERT_TRUE(reps) << out.str();
  EXPECT_FALSE(reps->back().reachable);
  EXPECT_EQ(reps->back().shape_str(), "M=4096 N=4096 K=4096");
}

TEST(TileRecommend, TiesGoToTheEarliestConfiguration) {
  // `unused` changes nothing the model sees: every value ties, the first declared wins.
  auto ks = kernels_of(R"Y(kernel: copy_rows
summary: Y = X by row tiles
params: {M: dim, N: dim}
tensors:
  X: {type: f32, shape: [M, N]}
  Y: {type: f32, shape: [M, N], access: write}
schedule:
  unused: [7, 3, 5]
grid: {bx: "cdiv(M, 4)"}
threads: 128
body:
  - fragment: {x: [f32, 4, 1024]}
  - for: {var: k, extent: "cdiv(N, 1024)"}
    body:
      - copy: {src: "X[bx * 4, k * 1024]", dst: x}
      - copy: {src: x, dst: "Y[bx * 4, k * 1024]"}
)Y");
  auto r = rec(ks.front(), {}, "sm_89");
  ASSERT_EQ(r.classes.size(), 1u);
  EXPECT_EQ(r.config_str(r.classes[0].ranked.front().first), "unused=7");
  EXPECT_EQ(r.config_str(r.classes[0].ranked.back().first), "unused=5");
  // Traffic: every element of X read once and of Y written once (f32).
  EXPECT_DOUBLE_EQ(r.classes[0].ranked.front().second.traffic_bytes, 2.0 * 4096 * 4096 * 4);
}

TEST(TileRecommend, PackedTensorsCountHalfAByteAnElement) {
  // u4 X read by a tile copy (one byte load per element, half of it the element's) and u4 Y
  // written as whole bytes (two elements each): 0.5 byte per element both ways.
  auto ks = kernels_of(R"Y(kernel: copy_nibbles
summary: Y = X (u4) by row tiles
params: {M: dim, N: {dim: dynamic, multiple_of: 2}}
tensors:
  X: {type: u4, shape: [M, N]}
  Y: {type: u4, shape: [M, N], access: write}
schedule:
  unused: [7]
grid: {bx: "cdiv(M, 4)"}
threads: 128
body:
  - shared: {x: [u8, 4, 1024]}
  - for: {var: k, extent: "cdiv(N, 1024)"}
    body:
      - copy: {src: "X[bx * 4, k * 1024]", dst: x}
      - copy: {src: x, dst: "Y[bx * 4, k * 1024]"}
)Y");
  auto r = rec(ks.front(), {}, "sm_89");
  ASSERT_EQ(r.classes.size(), 1u);
  EXPECT_DOUBLE_EQ(r.classes[0].ranked.front().second.traffic_bytes, 2.0 * 4096 * 4096 * 0.5);
  EXPECT_DOUBLE_EQ(r.classes[0].ranked.front().second.unique_bytes, 2.0 * 4096 * 4096 * 0.5);
}

TEST(TileRecommend, CausalFlashAttentionCountsTheAverageBlock) {
  Kernel k = binding(kernels_of(declared_text("flash_attention_fwd.yaml")), "bf16");
  auto dense = rec(k, {{"causal", 0}, {"D", 128}}, "sm_90");
  auto causal = rec(k, {{"causal", 1}, {"D", 128}}, "sm_90");
  ASSERT_FALSE(dense.classes.empty());
  ASSERT_FALSE(causal.classes.empty());
  // Same configuration, causal: the midpoint block runs about half the key blocks.
  size_t i = dense.classes[0].ranked.front().first;
  double f_dense = 0, f_causal = 0;
  for (const auto& [j, m] : dense.classes[0].ranked)
    if (j == i)
      f_dense = m.flops;
  for (const auto& [j, m] : causal.classes[0].ranked)
    if (j == i)
      f_causal = m.flops;
  EXPECT_GT(f_dense, 0);
  EXPECT_GT(f_causal, 0.4 * f_dense);
  EXPECT_LT(f_causal, 0.6 * f_dense);
}

// sm_90a attention as shipped: D64 f16/bf16 takes three consumer warpgroups (BM 192, the
// 160-register setmaxnreg budget fits its ~159), and of the two compute-bound BM 192 tiles the
// one with more memory headroom (BN 128); D128's fragments do not fit 160, so it keeps two
// warpgroups (BM 128 BN 128 at the 240 budget). Measured on the H200: bench/RESULTS.md.
TEST(TileRecommend, HopperAttentionTakesThreeWarpgroupsAtD64) {
  Kernel k = binding(kernels_of(shipped_text("flash_attention_fwd.yaml")), "bf16");
  auto d64 = rec(k, {{"causal", 0}, {"D", 64}}, "sm_90a");
  auto d128 = rec(k, {{"causal", 0}, {"D", 128}}, "sm_90a");
  ASSERT_FALSE(d64.classes.empty());
  ASSERT_FALSE(d128.classes.empty());
  size_t a = d64.classes[0].ranked.front().first, b = d128.classes[0].ranked.front().first;
  EXPECT_EQ(d64.config_str(a), "BM=192 BN=128 stages=2 threads=384 WR=16");
  EXPECT_EQ(d64.configs[a].use.register_budget, 160);
  EXPECT_LE(d64.configs[a].use.registers, 160);
  EXPECT_EQ(d128.config_str(b), "BM=128 BN=128 stages=2 threads=256 WR=16");
  EXPECT_EQ(d128.configs[b].use.register_budget, 240);
  // BM 192 BN 128 at D128 needs more than the three warpgroups' budget.
  for (size_t i = 0; i < d128.configs.size(); ++i)
    if (d128.config_str(i) == "BM=192 BN=128 stages=2 threads=384 WR=16") {
      EXPECT_FALSE(d128.configs[i].eligible);
      EXPECT_NE(d128.configs[i].why_not.find("setmaxnreg"), std::string::npos)
          << d128.configs[i].why_not;
    }
}

TEST(TileRecommend, GpuInstantiationNotesTheChoiceAndItsModel) {
  Kernel k = binding(kernels_of(gemm_with_classes("{small_m: \"M <= 64\"}")), "bf16");
  std::ostringstream out;
  DiagEngine diag(out);
  passes::Instance inst{"bf16", {}};
  auto ik = passes::instantiate(k, inst, *find_target("sm_90"), diag);
  ASSERT_TRUE(ik) << out.str();
  ASSERT_GE(ik->notes.size(), 2u);
  EXPECT_NE(ik->notes[0].find("smem "), std::string::npos) << ik->notes[0];
  EXPECT_NE(ik->notes[0].find("registers/thread (estimate"), std::string::npos) << ik->notes[0];
  EXPECT_NE(ik->notes[1].find("class large (M=4096 N=4096 K=4096)"), std::string::npos)
      << ik->notes[1];
  EXPECT_NE(ik->notes[1].find("model: "), std::string::npos) << ik->notes[1];
  EXPECT_EQ(ik->shape_classes.size(), 1u); // kept for dispatch

  auto small = passes::resolve_schedule(k, {}, *find_target("sm_90"), diag, "small_m");
  ASSERT_TRUE(small) << out.str();
  EXPECT_EQ(small->shape_class, "small_m");
  EXPECT_NE(small->reason.find("class small_m (M=64 N=4096 K=4096)"), std::string::npos);
}

TEST(TileRecommend, EveryShippedKernelResolvesOnEveryCudaTarget) {
  for (const char* file : {"gemm.yaml", "softmax.yaml", "rmsnorm.yaml", "gemm_bias_gelu.yaml",
                           "flash_attention_fwd.yaml"})
    for (const auto& k : kernels_of(shipped_text(file)))
      for (const auto& inst : passes::enumerate_instances(k))
        for (const Target& t : cuda_targets()) {
          std::ostringstream out;
          DiagEngine diag(out);
          auto c = passes::resolve_schedule(k, inst.values, t, diag);
          EXPECT_TRUE(c) << file << " " << inst.name << " " << t.name << "\n" << out.str();
        }
}

TEST(TileRecommend, TableListsClassesAndIneligibleConfigurations) {
  Kernel k = binding(kernels_of(gemm_with_classes("{small_m: \"M <= 64\"}")), "bf16");
  auto r = rec(k, {}, "sm_86");
  std::string table = passes::format_recommendation(r, *find_target("sm_86"), 3);
  EXPECT_NE(table.find("class small_m (M <= 64): shape M=64 N=4096 K=4096"), std::string::npos)
      << table;
  EXPECT_NE(table.find("class large: shape M=4096 N=4096 K=4096"), std::string::npos);
  EXPECT_NE(table.find("not eligible"), std::string::npos);
  EXPECT_NE(table.find(" B > 101376 B"), std::string::npos);
  // top = 3: three rows per class, then a count of the rest.
  EXPECT_NE(table.find("   3  BM="), std::string::npos);
  EXPECT_EQ(table.find("   4  BM="), std::string::npos);
  EXPECT_NE(table.find(" more\n"), std::string::npos);
}

} // namespace

// FP8 on sm_90a: the promoted gemm's partial fragment is counted beside the accumulator (as
// shipped, BN 128: 64 + 64 registers per thread; BN 256: 128 + 64), two partials where the
// chunks alternate (BN 192: 96 + 2 x 48), and none with fast_accum.
TEST(TileRecommend, HopperFp8CountsThePromotedPartials) {
  const std::string text = shipped_text("gemm_fp8.yaml");
  auto words = [&](const std::string& spec, int64_t bn) {
    auto r = rec(binding(kernels_of(spec), "e4m3"), {}, "sm_90a");
    for (size_t i = 0; i < r.configs.size(); ++i)
      if (value_of(r, i, "BN") == bn)
        return std::make_pair(r.configs[i].use.fragment_words, r.configs[i].use.operand_words);
    ADD_FAILURE() << "no BN " << bn;
    return std::make_pair(int64_t(-1), int64_t(-1));
  };
  auto with = [&](std::string s, const std::string& from, const std::string& to) {
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? s : s.replace(at, from.size(), to);
  };
  const std::string tile = "sm_90a: {BM: [128], BN: [128], BK: [256]";
  EXPECT_EQ(words(text, 128), std::make_pair(int64_t(64), int64_t(64)));
  EXPECT_EQ(words(with(text, tile, "sm_90a: {BM: [128], BN: [256], BK: [128]"), 256),
            std::make_pair(int64_t(128), int64_t(64)));
  EXPECT_EQ(words(with(text, tile, "sm_90a: {BM: [128], BN: [192], BK: [128]"), 192),
            std::make_pair(int64_t(96), int64_t(96)));
  const std::string fast =
      with(text, "transpose_b: true}", "transpose_b: true, fast_accum: true}");
  EXPECT_EQ(words(fast, 128), std::make_pair(int64_t(64), int64_t(0)));
}

// A class's own candidates (schedule.classes.<class>.targets): only that class ranks them, in a
// candidate set of its own; the other classes keep the schedule's; a class whose lists equal
// another's shares its set.
TEST(TileRecommend, ClassOwnCandidatesRankOnlyForTheirClass) {
  Kernel k = binding(
      kernels_of(gemm_with_classes("{small_m: {when: \"M <= 64\", targets: {sm_80: {BM: [64], "
                                   "BN: [64]}}}, tiny2: {when: \"M <= 128\", targets: {sm_80: "
                                   "{BN: [64], BM: [64]}}}}")),
      "bf16");
  auto r = rec(k, {}, "sm_90"); // sm_90 falls back to sm_80 for both classes' entries
  ASSERT_EQ(r.classes.size(), 3u);
  ASSERT_EQ(r.sets.size(), 2u);
  const auto *small = r.find("small_m"), *tiny2 = r.find("tiny2"), *large = r.find("large");
  ASSERT_TRUE(small && tiny2 && large);
  EXPECT_EQ(small->set, tiny2->set);
  EXPECT_NE(small->set, large->set);
  EXPECT_TRUE(small->own_candidates && tiny2->own_candidates);
  EXPECT_FALSE(large->own_candidates);
  EXPECT_EQ(r.sets[small->set].owner, "small_m");
  EXPECT_EQ(r.sets[large->set].owner, "");
  for (const auto& [i, m] : small->ranked) {
    EXPECT_EQ(value_of(r, i, "BM"), 64);
    EXPECT_EQ(value_of(r, i, "BN"), 64);
    EXPECT_GE(i, r.sets[small->set].first);
    EXPECT_LT(i, r.sets[small->set].end);
  }
  bool large_has_other = false;
  for (const auto& [i, m] : large->ranked)
    large_has_other |= value_of(r, i, "BM") != 64 || value_of(r, i, "BN") != 64;
  EXPECT_TRUE(large_has_other);
  EXPECT_EQ(r.total, r.sets[0].total + r.sets[1].total);
}

// Along the fallback chain the nearest target naming a constant wins; at one target the
// class's entry comes before schedule.targets.
TEST(TileRecommend, ClassOverrideFollowsTheFallbackChain) {
  TileConst tc;
  tc.var = make_var("BM", VarKind::TileConst, DType::i64(), {});
  tc.candidates = {16, 32, 64};
  tc.per_target["sm_80"] = {64};
  tc.per_target["sm_90a"] = {128};
  tc.per_class_target["small"]["sm_80"] = {32};
  tc.per_class_target["big"]["sm_90"] = {256};
  const Target& sm90a = *find_target("sm_90a");
  const Target& sm90 = *find_target("sm_90");
  const Target& sm86 = *find_target("sm_86");
  bool from_class = true;
  // sm_90a names BM itself: its schedule.targets entry comes before any class entry further
  // down the chain.
  ASSERT_TRUE(passes::class_override(tc, sm90a, "small", &from_class));
  EXPECT_EQ(*passes::class_override(tc, sm90a, "small", &from_class), std::vector<int64_t>{128});
  EXPECT_FALSE(from_class);
  // sm_86 -> sm_80: the class's sm_80 entry before schedule.targets.sm_80.
  EXPECT_EQ(*passes::class_override(tc, sm86, "small", &from_class), std::vector<int64_t>{32});
  EXPECT_TRUE(from_class);
  EXPECT_EQ(*passes::class_override(tc, sm86, "large", &from_class), std::vector<int64_t>{64});
  EXPECT_FALSE(from_class);
  // A class entry for sm_90 serves sm_90, not sm_86 (not on its chain).
  EXPECT_EQ(*passes::class_override(tc, sm90, "big", &from_class), std::vector<int64_t>{256});
  EXPECT_TRUE(from_class);
  EXPECT_EQ(*passes::class_override(tc, sm86, "big", &from_class), std::vector<int64_t>{64});
  // No entry anywhere: the declared candidates.
  TileConst plain;
  plain.var = tc.var;
  plain.candidates = {8};
  EXPECT_EQ(passes::class_override(plain, sm90a, "small", &from_class), nullptr);
  EXPECT_FALSE(from_class);
}

// A loop whose trip count is a tensor's value (decode_attention's `cdiv(seq_lens[b], BN)`) is
// bounded by the block-table columns its variable indexes: at the class's shape (32 sequences,
// 128 pages of 16 tokens, 8 KV heads of 128) every block reads its whole sequence, so the
// traffic is at least K and V, 2 x 32 x 2048 x 8 x 128 x 2 bytes. (Counted as one trip
// before: 3.4 MB.) A trip count chosen by a condition on a tensor's values (grouped_gemm's
// "expert e's rows meet this tile") stays one trip: how often it holds is data.
TEST(TileRecommend, TensorTripCountsAreBoundedByWhatTheLoopIndexes) {
  Kernel k = binding(kernels_of(shipped_text("decode_attention.yaml")), "bf16");
  auto r = rec(k, {{"PAGE", 16}, {"D", 128}}, "sm_90a");
  ASSERT_EQ(r.classes.size(), 1u);
  const double kv = 2.0 * 32 * 2048 * 8 * 128 * 2;
  const auto& best = r.classes[0].ranked.front().second;
  EXPECT_GE(best.traffic_bytes, kv);
  EXPECT_LT(best.traffic_bytes, 1.5 * kv);
  Kernel g = binding(kernels_of(shipped_text("grouped_gemm.yaml")), "bf16");
  auto rg = rec(g, {}, "sm_90a");
  ASSERT_EQ(rg.classes.size(), 1u);
  EXPECT_LT(rg.classes[0].ranked.front().second.flops, 2.0 * 8192 * 4096 * 4096);
}
