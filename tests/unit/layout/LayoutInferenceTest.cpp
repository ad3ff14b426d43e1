// LayoutInference on the shipped kernels (kernels/*.yaml) for sm_80, and its conflict error.
#include "passes/LayoutInference.h"
#include "passes/Pipeline.h"
#include "spec/Frontend.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tilegen;
using namespace tilegen::ir;

namespace {

struct Planned {
  Kernel kernel;
  passes::LayoutPlan plan;
};

Planned plan_for(const std::string& spec, const std::string& inst_name, const char* target = "sm_80") {
  std::ostringstream out;
  DiagEngine diag(out);
  auto ks = spec::load_kernels(std::string(TILEGEN_KERNELS_DIR) + "/" + spec, diag);
  EXPECT_TRUE(ks) << out.str();
  for (const auto& k : *ks)
    for (const auto& inst : passes::enumerate_instances(k))
      if (inst.name == inst_name) {
        auto ik = passes::instantiate(k, inst, *find_target(target), diag);
        EXPECT_TRUE(ik) << out.str();
        auto plan = passes::infer_layouts(*ik, *find_target(target), diag);
        EXPECT_TRUE(plan) << out.str();
        return {*ik, *plan};
      }
  ADD_FAILURE() << "no instance " << inst_name;
  return {};
}

const layout::FragmentLayout& frag(const Planned& p, const std::string& name) {
  for (const auto& [b, l] : p.plan.fragments)
    if (b->name == name)
      return l;
  throw std::runtime_error("no fragment " + name);
}

const passes::GemmPlan& only_gemm(const Planned& p, size_t i = 0) {
  std::vector<const passes::GemmPlan*> g;
  for (const auto& [s, gp] : p.plan.gemms)
    g.push_back(&gp);
  EXPECT_GT(g.size(), i);
  return *g.at(i);
}

} // namespace

TEST(LayoutInference, GemmBf16UsesMmaWithSquareWarpTiles) {
  auto p = plan_for("gemm.yaml", "bf16");
  const auto& g = only_gemm(p);
  EXPECT_EQ(g.kind, passes::GemmPlan::Mma);
  EXPECT_FALSE(g.a_in_regs);
  const auto& acc = frag(p, "acc");
  EXPECT_NE(acc.origin.find("mma.sync m16n8k16"), std::string::npos) << acc.origin;
  int64_t wtm = acc.shape[0] / g.wm, wtn = acc.shape[1] / g.wn;
  EXPECT_EQ(wtm, wtn) << "square warp tiles load the fewest operand bytes";
  // Both operand tiles are swizzled for ldmatrix.
  EXPECT_EQ(p.plan.swizzles.size(), 2u);
  for (const auto& [b, s] : p.plan.swizzles)
    EXPECT_GT(s.B, 0) << b->name;
}

TEST(LayoutInference, GemmF32UsesFmaTiles) {
  auto p = plan_for("gemm.yaml", "f32");
  EXPECT_EQ(only_gemm(p).kind, passes::GemmPlan::Simt);
  EXPECT_TRUE(p.plan.swizzles.empty());
}

TEST(LayoutInference, AttentionKeepsProbabilitiesInRegisters) {
  auto p = plan_for("flash_attention_fwd.yaml", "bf16_causal0_D128");
  // P feeds the second gemm's A operand from registers: both accumulators give warps whole
  // rows, P has S's layout, and the row statistics are S's row map, replicated.
  bool saw_regs = false;
  for (const auto& [s, g] : p.plan.gemms) {
    EXPECT_EQ(g.kind, passes::GemmPlan::Mma);
    EXPECT_EQ(g.wn, 1);
    saw_regs = saw_regs || g.a_in_regs;
  }
  EXPECT_TRUE(saw_regs);
  const auto& s = frag(p, "s");
  const auto& pp = frag(p, "p");
  EXPECT_EQ(pp.thread_modes, s.thread_modes);
  EXPECT_EQ(pp.regs, s.regs);
  for (const char* row : {"m", "m_blk", "l", "alpha"}) {
    EXPECT_EQ(frag(p, row).dim_map(0), s.dim_map(0)) << row;
    EXPECT_EQ(frag(p, row).replication(), 4) << row;
  }
  EXPECT_EQ(frag(p, "acc").dim_map(0), s.dim_map(0));
}

TEST(LayoutInference, SoftmaxRowsAreElementwiseWith16ByteAccesses) {
  auto p = plan_for("softmax.yaml", "bf16");
  const auto& x = frag(p, "x");
  EXPECT_NE(x.origin.find("elementwise"), std::string::npos);
  EXPECT_EQ(x.regs[1][0], (layout::RegMode{8, 1}));
  EXPECT_EQ(frag(p, "m").dim_map(0), x.dim_map(0));
}

TEST(LayoutInference, ConflictIsALocatedErrorNamingBothOps) {
  // r is first given acc's row map (the parallel loop), then the reduce over y demands y's.
  const char* spec = R"yaml(kernel: k
summary: conflict
types: {T: [bf16]}
params: {M: dim}
tensors:
  A: {type: T, shape: [M, 64]}
  X: {type: f32, shape: [M, 64]}
  C: {type: f32, shape: [M, 64], access: write}
grid: {bx: "cdiv(M, 64)"}
threads: 128
body:
  - shared: {A_s: [T, 64, 64], B_s: [T, 64, 64]}
  - fragment: {acc: [f32, 64, 64], y: [f32, 64, 64], r: [f32, 64]}
  - copy: {src: "A[bx * 64, 0]", dst: A_s}
  - copy: {src: "A[bx * 64, 0]", dst: B_s}
  - gemm: {a: A_s, b: B_s, c: acc, clear: true}
  - copy: {src: "X[bx * 64, 0]", dst: y}
  - parallel: {i: 64, j: 64}
    body:
      - "acc[i, j] = acc[i, j] + r[i]"
  - reduce: {op: sum, src: y, dst: r, dim: 1}
  - copy: {src: acc, dst: "C[bx * 64, 0]"}
)yaml";
  std::ostringstream out;
  DiagEngine diag(out);
  auto ks = spec::load_kernels_from_text("conflict.yaml", spec, diag);
  ASSERT_TRUE(ks) << out.str();
  auto inst = passes::enumerate_instances(ks->at(0)).at(0);
  auto r = passes::instantiate(ks->at(0), inst, *find_target("sm_80"), diag);
  EXPECT_FALSE(r);
  std::string msg = out.str();
  EXPECT_NE(msg.find("conflict.yaml:21:5: error: sm_80: layout conflict on fragment 'r'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("conflict.yaml:18:5: note: the layout of 'r' was decided here"), std::string::npos) << msg;
}

// Metal (docs/metal.md): every float gemm into an f32 accumulator runs on simdgroup_matrix 8x8,
// f32 operands included (the matrices are simdgroup_float8x8 whatever the operand type).
TEST(LayoutInference, MetalGemmUsesSimdgroupMatricesOnSquareTiles) {
  for (const char* inst : {"f32", "f16", "bf16"}) {
    auto p = plan_for("gemm.yaml", inst, "metal");
    const auto& g = only_gemm(p);
    EXPECT_EQ(g.kind, passes::GemmPlan::Simdgroup) << inst;
    EXPECT_EQ(g.wm, 2) << inst; // 4 SIMD-groups over a 64x64 tile: 2x2 of 32x32
    EXPECT_EQ(g.wn, 2) << inst;
    EXPECT_NE(frag(p, "acc").origin.find("simdgroup_matrix 8x8 accumulator"), std::string::npos);
    EXPECT_TRUE(p.plan.swizzles.empty()) << "threadgroup tiles are not swizzled on Metal";
  }
}

TEST(LayoutInference, MetalAttentionReadsProbabilitiesFromRegisters) {
  auto p = plan_for("flash_attention_fwd.yaml", "f16_causal1_D64", "metal");
  bool saw_regs = false;
  for (const auto& [s, g] : p.plan.gemms) {
    EXPECT_EQ(g.kind, passes::GemmPlan::Simdgroup);
    EXPECT_EQ(g.wn, 1) << "whole rows per SIMD-group: the scores feed p @ V from registers";
    saw_regs = saw_regs || g.a_in_regs;
  }
  EXPECT_TRUE(saw_regs);
  EXPECT_EQ(frag(p, "p").thread_modes, frag(p, "s").thread_modes);
}
