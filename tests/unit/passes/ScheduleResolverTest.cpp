#include "passes/ScheduleResolver.h"

#include "emit/TestKernels.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tilegen;
using namespace tilegen::ir;
using namespace tilegen::testing;

namespace {

// A kernel whose footprint is easy to compute: one f32 fragment [BM, BN] plus a local [BM].
Kernel tiny_kernel(std::vector<int64_t> bm, std::vector<int64_t> bn) {
  Kernel k;
  k.name = "tiny";
  k.loc = test_loc(1);
  auto BM = tile_const("BM", std::move(bm), 5), BN = tile_const("BN", std::move(bn), 6);
  k.tile_consts = {BM, BN};
  auto f = make_buffer("f", MemScope::Fragment, DType::f32(), {vr(BM.var), vr(BN.var)});
  auto l = make_buffer("l", MemScope::Local, DType::f32(), {vr(BM.var)});
  k.body = Seq::make({Alloc::make(f), Alloc::make(l)});
  return k;
}

Target with_budget(const char* name, int64_t budget) {
  Target t = *find_target(name);
  t.tile_budget_bytes = budget;
  return t;
}

int64_t value(const passes::ScheduleChoice& c, const std::string& name) {
  for (const auto& [n, v] : c.values)
    if (n == name)
      return v;
  return -1;
}

TEST(ScheduleResolver, PicksLargestFootprintWithinBudget) {
  std::ostringstream out;
  DiagEngine diag(out);
  // Footprints: 4*BM*BN + 4*BM. Budget 600: (4, 32) = 528 fits; (8, 16) = 544 fits and is larger;
  // (8, 32) = 1056 does not.
  auto c = passes::resolve_schedule(tiny_kernel({2, 4, 8}, {16, 32}), {}, with_budget("c", 600), diag);
  ASSERT_TRUE(c) << out.str();
  EXPECT_EQ(value(*c, "BM"), 8);
  EXPECT_EQ(value(*c, "BN"), 16);
  EXPECT_EQ(c->footprint, 544);
  EXPECT_EQ(c->summary, "BM=8 BN=16: footprint 544 B of 600 B budget");
  EXPECT_EQ(c->configurations, 6u);
  EXPECT_EQ(c->feasible, 5u);
}

TEST(ScheduleResolver, TiesGoToTheEarliestConfiguration) {
  // Only the fragment counts here (no local): 4 * BM * BN; (2, 8) and (4, 4) and (8, 2) tie.
  Kernel k = tiny_kernel({8, 4, 2}, {2, 4, 8});
  k.body = Seq::make({k.body->as<Seq>()->stmts[0]});
  std::ostringstream out;
  DiagEngine diag(out);
  auto c = passes::resolve_schedule(k, {}, with_budget("c", 64), diag);
  ASSERT_TRUE(c);
  // Declaration order: BM varies slowest, so (8, 2) comes first among the 64-byte ones.
  EXPECT_EQ(value(*c, "BM"), 8);
  EXPECT_EQ(value(*c, "BN"), 2);
}

TEST(ScheduleResolver, RequirementsWithFlagBindings) {
  Kernel k = tiny_kernel({2, 4, 8}, {16, 32});
  auto flag = make_var("wide", VarKind::Flag, DType::boolean());
  k.flags = {flag};
  Requirement r;
  // wide || BN == 16
  r.pred = Binary::make(BinaryOp::Or, VarRef::make(flag),
                        Binary::make(BinaryOp::Eq, vr(k.tile_consts[1].var), i64(16)));
  r.text = "wide || BN == 16";
  r.loc = test_loc(9);
  k.requirements = {r};
  std::ostringstream out;
  DiagEngine diag(out);
  auto narrow = passes::resolve_schedule(k, {{"wide", 0}}, with_budget("c", 1 << 20), diag);
  auto wide = passes::resolve_schedule(k, {{"wide", 1}}, with_budget("c", 1 << 20), diag);
  ASSERT_TRUE(narrow && wide) << out.str();
  EXPECT_EQ(value(*narrow, "BN"), 16);
  EXPECT_EQ(value(*wide, "BN"), 32);
}

TEST(ScheduleResolver, PerTargetOverridesAndFallbacks) {
  Kernel k = tiny_kernel({2, 4, 8}, {16, 32});
  k.tile_consts[0].per_target["c"] = {2};
  k.tile_consts[1].per_target["c_avx512"] = {16};
  std::ostringstream out;
  DiagEngine diag(out);
  auto c = passes::resolve_schedule(k, {}, with_budget("c", 1 << 20), diag);
  auto avx2 = passes::resolve_schedule(k, {}, with_budget("c_avx2", 1 << 20), diag);
  auto avx512 = passes::resolve_schedule(k, {}, with_budget("c_avx512", 1 << 20), diag);
  ASSERT_TRUE(c && avx2 && avx512);
  EXPECT_EQ(value(*c, "BM"), 2);
  EXPECT_EQ(value(*c, "BN"), 32);
  EXPECT_EQ(value(*avx2, "BM"), 2); // c's override applies to c_avx2 (its fallback)
  EXPECT_EQ(value(*avx512, "BM"), 2);
  EXPECT_EQ(value(*avx512, "BN"), 16); // its own override wins
}

TEST(ScheduleResolver, UnsatisfiableIsALocatedErrorWithNumbers) {
  Kernel k = tiny_kernel({4, 8}, {16, 32});
  Requirement r;
  r.pred = Binary::make(BinaryOp::Ge, vr(k.tile_consts[0].var), i64(8));
  r.text = "BM >= 8";
  r.loc = test_loc(9);
  k.requirements = {r};
  std::ostringstream out;
  DiagEngine diag(out);
  auto c = passes::resolve_schedule(k, {}, with_budget("c", 256), diag);
  EXPECT_FALSE(c);
  ASSERT_GE(diag.diagnostics().size(), 4u);
  const auto& err = diag.diagnostics()[0];
  EXPECT_EQ(err.severity, Severity::Error);
  EXPECT_EQ(err.loc.line, 5); // the first tile constant of the schedule
  EXPECT_EQ(err.message, "unsatisfiable schedule for target 'c': no configuration of BM, BN "
                         "satisfies the requirements and fits the tile budget of 256 B");
  std::string notes;
  for (size_t i = 1; i < diag.diagnostics().size(); ++i)
    notes += diag.diagnostics()[i].message + "\n";
  EXPECT_NE(notes.find("BM candidates for target 'c': {4, 8}"), std::string::npos) << notes;
  EXPECT_NE(notes.find("requirement 'BM >= 8' holds for 2 of 4 configurations"), std::string::npos)
      << notes;
  // Smallest with BM = 8: 4 * 8 * 16 + 4 * 8 = 544 B.
  EXPECT_NE(notes.find("smallest footprint among the 2 configurations that satisfy the "
                       "requirements is 544 B (BM=8 BN=16), over the budget of 256 B"),
            std::string::npos)
      << notes;
}

TEST(ScheduleResolver, NonConstantRequirementIsAnError) {
  Kernel k = tiny_kernel({4}, {16});
  auto M = make_var("M", VarKind::Dim, DType::i64());
  k.dims = {DimParam{M, {}, {}, {}, {}}};
  Requirement r;
  r.pred = Binary::make(BinaryOp::Ge, VarRef::make(M), i64(8));
  r.text = "M >= 8";
  r.loc = test_loc(9);
  k.requirements = {r};
  std::ostringstream out;
  DiagEngine diag(out);
  EXPECT_FALSE(passes::resolve_schedule(k, {}, with_budget("c", 1 << 20), diag));
  EXPECT_EQ(diag.diagnostics().at(0).loc.line, 9);
}

TEST(ScheduleResolver, ShippedGemmOnC) {
  // kernels/gemm.yaml's c override: BM {64, 96, 128}, BN {64, 128, 256}, BK {64, 128, 256};
  // f32 footprint 4 * (BM*BK + BK*BN + BM*BN) within 256 KiB: 229376 B is the maximum, first
  // reached at BM=64 BN=128 BK=256.
  std::ostringstream out;
  DiagEngine diag(out);
  auto c = passes::resolve_schedule(make_gemm_kernel(DType::f32()), {}, *find_target("c"), diag);
  ASSERT_TRUE(c) << out.str();
  EXPECT_EQ(c->footprint, 229376);
  EXPECT_EQ(value(*c, "BM"), 64);
  EXPECT_EQ(value(*c, "BN"), 128);
  EXPECT_EQ(value(*c, "BK"), 256);
  EXPECT_EQ(value(*c, "stages"), 2);
  EXPECT_EQ(value(*c, "threads"), 128);
}

} // namespace
