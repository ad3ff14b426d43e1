// passes/VersionByRange through instantiate(): the attention score mask is versioned on C and
// CUDA targets with the predicate the range analysis derives (nothing is left to fold there: the
// `if` runs the masked original only where the predicate fails), kernels without tile-uniform
// conditions are untouched, and the fold direction follows the arm that does the work.
#include "passes/VersionByRange.h"

#include "ir/IRPrinter.h"
#include "ir/IRVerifier.h"
#include "ir/IRVisitor.h"
#include "passes/Pipeline.h"
#include "spec/Frontend.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tilegen;
using namespace tilegen::ir;

namespace {

Kernel instantiate_named(std::optional<std::vector<Kernel>> ks, const std::string& inst_name,
                         const char* target, std::ostringstream& out) {
  DiagEngine diag(out);
  EXPECT_TRUE(ks) << out.str();
  if (ks)
    for (const auto& k : *ks)
      for (const auto& inst : passes::enumerate_instances(k))
        if (inst.name == inst_name || inst_name.empty()) {
          auto ik = passes::instantiate(k, inst, *find_target(target), diag);
          EXPECT_TRUE(ik) << out.str();
          return ik ? *ik : Kernel{};
        }
  ADD_FAILURE() << "no instance " << inst_name;
  return {};
}

Kernel shipped(const std::string& spec, const std::string& inst, const char* target) {
  std::ostringstream out;
  DiagEngine diag(out);
  auto ks = spec::load_kernels(std::string(TILEGEN_KERNELS_DIR) + "/" + spec, diag);
  return instantiate_named(ks, inst, target, out);
}

Kernel from_text(const std::string& text, const std::string& inst, const char* target) {
  std::ostringstream out;
  DiagEngine diag(out);
  auto ks = spec::load_kernels_from_text("test.yaml", text, diag);
  return instantiate_named(ks, inst, target, out);
}

// Every statement-level `if` whose branches are parallel loops (what the pass emits).
std::vector<const IfThenElse*> versions(const Kernel& k) {
  class Find : public IRVisitor {
  public:
    std::vector<const IfThenElse*> found;

  protected:
    void visit_IfThenElse(const IfThenElse* i) override {
      // if (pred) folded else original, or if (!pred) original when nothing is left folded
      if (i->then_case && i->then_case->as<Parallel>() &&
          (!i->else_case || i->else_case->as<Parallel>()))
        found.push_back(i);
      IRVisitor::visit_IfThenElse(i);
    }
  } f;
  f.visit(k.body);
  return f.found;
}

// Counts selects and integer comparisons in a statement.
struct Conditions : IRVisitor {
  int selects = 0, int_compares = 0;

protected:
  void visit_Select(const Select* s) override {
    ++selects;
    IRVisitor::visit_Select(s);
  }
  void visit_Binary(const Binary* b) override {
    int_compares += is_comparison(b->op) && b->a->type.is_int();
    IRVisitor::visit_Binary(b);
  }
};

Conditions conditions(const Stmt& s) {
  Conditions c;
  c.visit(s);
  return c;
}

std::string expected_mask_predicate(const Kernel& k, bool causal) {
  const std::string bn = std::to_string(k.bindings.at("BN")), bm = std::to_string(k.bindings.at("BM"));
  const std::string last = "k * " + bn + " + " + std::to_string(k.bindings.at("BN") - 1);
  std::string p = last + " < S";
  if (causal)
    p += " && " + last + " <= bx * " + bm;
  return p;
}

class AttentionMask : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(AttentionMask, ScoreLoopIsVersioned) {
  auto [target, inst] = GetParam();
  Kernel k = shipped("flash_attention_fwd.yaml", inst, target);
  const bool causal = std::string(inst).find("causal1") != std::string::npos;
  EXPECT_TRUE(verify(k, VerifyOptions{true}).empty());
  auto vs = versions(k);
  ASSERT_EQ(vs.size(), 1u) << to_string(k);
  // The spec's mask leaves s as it is on interior blocks (the scale is folded into the exponent,
  // kernels/flash_attention_fwd.yaml): the folded copy is `s = s`, dropped, so only the original
  // remains, run where the tile predicate fails.
  const std::string pred = expected_mask_predicate(k, causal);
  EXPECT_EQ(to_string(vs[0]->cond), "!(" + pred + ")");
  EXPECT_EQ(vs[0]->else_case, nullptr) << to_string(vs[0]->else_case);
  // The original keeps its mask.
  Conditions slow = conditions(vs[0]->then_case);
  EXPECT_EQ(slow.selects, 1);
  EXPECT_EQ(slow.int_compares, causal ? 2 : 1);
  bool noted = false;
  for (const auto& n : k.notes)
    noted = noted || n.find("versioned: conditions folded when " + pred + " (nothing left to do)") !=
                         std::string::npos;
  EXPECT_TRUE(noted);
}

INSTANTIATE_TEST_SUITE_P(Targets, AttentionMask,
                         ::testing::Values(std::make_tuple("c", "f32_causal0_D64"),
                                           std::make_tuple("c", "bf16_causal1_D128"),
                                           std::make_tuple("sm_80", "bf16_causal0_D128"),
                                           std::make_tuple("sm_80", "f16_causal1_D64"),
                                           std::make_tuple("sm_90", "bf16_causal1_D128")));

TEST(VersionByRange, KernelsWithoutUniformConditionsAreUnchanged) {
  for (const char* spec : {"softmax.yaml", "rmsnorm.yaml", "gemm.yaml", "gemm_bias_gelu.yaml"})
    for (const char* target : {"c", "sm_80"}) {
      std::ostringstream out;
      DiagEngine diag(out);
      auto ks = spec::load_kernels(std::string(TILEGEN_KERNELS_DIR) + "/" + spec, diag);
      ASSERT_TRUE(ks) << out.str();
      auto inst = passes::enumerate_instances(ks->at(0)).at(0);
      auto k = passes::instantiate(ks->at(0), inst, *find_target(target), diag);
      ASSERT_TRUE(k) << out.str();
      passes::VersionStats stats;
      Kernel again = passes::version_by_range(*k, &stats);
      EXPECT_EQ(stats.versioned + stats.folded, 0) << spec << " " << target;
      EXPECT_EQ(to_string(again), to_string(*k)) << spec;
      EXPECT_TRUE(versions(*k).empty()) << spec;
    }
}

const char* kClamp = R"yaml(kernel: clamp_tail
summary: test kernel for loop versioning
params:
  N: dim
tensors:
  X: {type: f32, shape: [N]}
  Y: {type: f32, shape: [N], access: write}
schedule:
  BN: [64]
  threads: [64]
grid: {bx: "cdiv(N, BN)"}
threads: threads
body:
  - fragment:
      x: [f32, BN]
  - copy: {src: "X[bx * BN]", dst: x}
  - parallel: {j: BN}
    body:
      - "let n = bx * BN + j"
      - "x[j] = n < N ? x[j] * 2.0 : 0.0"
      - "x[j] = x[j] > 1.0 ? 1.0 : x[j]"
  - parallel: {j: BN}
    body:
      - "x[j] = j % 2 == 0 ? x[j] : -x[j]"
  - copy: {src: x, dst: "Y[bx * BN]"}
)yaml";

TEST(VersionByRange, FoldsTowardTheArmDoingTheWork) {
  Kernel k = from_text(kClamp, "", "c");
  auto vs = versions(k);
  ASSERT_EQ(vs.size(), 1u) << to_string(k);
  // `n < N ? work : 0.0`: true inside; the float clamp stays in both copies.
  EXPECT_EQ(to_string(vs[0]->cond), "bx * 64 + 63 < N");
  Conditions fast = conditions(vs[0]->then_case);
  EXPECT_EQ(fast.selects, 1) << to_string(vs[0]->then_case);
  EXPECT_EQ(fast.int_compares, 0);
  // j % 2 alternates inside every tile: no predicate, no versioning.
  EXPECT_NE(to_string(k).find("j % 2 == 0"), std::string::npos);
}

TEST(VersionByRange, AppliedOnEveryBackend) {
  for (const char* target : {"c", "c_avx2", "sm_80", "sm_90a", "wgsl"}) {
    Kernel k = from_text(kClamp, "", target);
    auto vs = versions(k);
    ASSERT_EQ(vs.size(), 1u) << target;
    EXPECT_EQ(to_string(vs[0]->cond), "bx * 64 + 63 < N") << target;
  }
}

} // namespace
