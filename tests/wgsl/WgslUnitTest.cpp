// Unit tests of the WGSL backend's decisions: the legalization (no infinity literal, no on-chip
// 16-bit buffer), the layout the emitter picks for the shipped kernels (invocation grid,
// workgroup memory, storage of 16-bit tensors per target), the subgroup path, the limits it
// enforces, the host glue's expression printer, and determinism.
#include "dispatch/JsModuleEmitter.h"
#include "emit/Emitter.h"
#include "emit/WgslEmitter.h"
#include "ir/IRVisitor.h"
#include "passes/Pipeline.h"
#include "spec/Frontend.h"
#include "support/InternalError.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

namespace tilegen {
namespace {

using namespace ir;

// The instantiated kernel `name` with type suffix `type` (first instance) for `target`.
Kernel instantiate(const std::string& spec_text, const std::string& type, const std::string& target) {
  std::ostringstream errs;
  DiagEngine diag(errs);
  auto kernels = spec::load_kernels_from_text("test.yaml", spec_text, diag);
  EXPECT_TRUE(kernels) << errs.str();
  for (const auto& k : *kernels)
    if (k.type_suffix() == type) {
      auto inst = passes::enumerate_instances(k).front();
      auto ik = passes::instantiate(k, inst, *find_target(target), diag);
      EXPECT_TRUE(ik) << errs.str();
      return *ik;
    }
  ADD_FAILURE() << "no binding " << type;
  return {};
}

std::string shipped(const std::string& name) {
  std::ostringstream s;
  std::FILE* f = std::fopen((std::string(TILEGEN_SOURCE_DIR) + "/kernels/" + name).c_str(), "rb");
  EXPECT_NE(f, nullptr) << name;
  char buf[4096];
  for (size_t n; f && (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
    s.write(buf, static_cast<std::streamsize>(n));
  if (f)
    std::fclose(f);
  return s.str();
}

std::string emit(const Kernel& k, const std::string& target) {
  emit::VariantInfo info{"tgv_t__" + k.name + "__x__" + target, "kernels/x.yaml"};
  return emit::emit_variant(k, *find_target(target), info);
}

TEST(WgslTargets, RowsCarryWebGpuDefaultsAndFeatures) {
  for (const char* n : {"wgsl", "wgsl_f16", "wgsl_subgroups", "wgsl_f16_subgroups"}) {
    const Target* t = find_target(n);
    ASSERT_NE(t, nullptr) << n;
    EXPECT_EQ(t->backend, Backend::WGSL);
    EXPECT_EQ(t->wgsl.max_invocations, 256);
    EXPECT_EQ(t->wgsl.workgroup_storage_bytes, 16384);
    EXPECT_EQ(t->wgsl.shader_f16, std::string(n).find("f16") != std::string::npos);
    EXPECT_EQ(t->wgsl.subgroups, std::string(n).find("subgroups") != std::string::npos);
  }
  EXPECT_TRUE(find_target("wgsl")->runtime_features.empty());
  EXPECT_EQ(find_target("wgsl_subgroups")->fallbacks, std::vector<std::string>{"wgsl"});
}

TEST(LegalizeWgsl, NoInfinityNoOnChip16Bit) {
  Kernel k = instantiate(shipped("softmax.yaml"), "bf16", "wgsl");
  class Check : public IRVisitor {
  public:
    int inf = 0, narrow = 0;

  protected:
    void visit_FloatImm(const FloatImm* n) override { inf += std::isinf(n->value); }
    void visit_buffer_use(const BufferPtr& b) override {
      narrow += b->scope != MemScope::Global && b->dtype.is_16bit_float();
    }
  } c;
  c.visit(k.body);
  EXPECT_EQ(c.inf, 0);
  EXPECT_EQ(c.narrow, 0);
}

TEST(WgslLayout, GemmIsRegisterBlocked) {
  Kernel k = instantiate(shipped("gemm.yaml"), "f32", "wgsl");
  auto l = emit::wgsl_layout(k, *find_target("wgsl"));
  EXPECT_EQ(l.threads, 256);
  EXPECT_EQ(l.ty, 16);
  EXPECT_EQ(l.tx, 16);
  EXPECT_EQ(l.workgroup_bytes, 2 * 64 * 32 * 4); // A_s and B_s; acc is in registers
  EXPECT_EQ(l.binding_types, (std::vector<std::string>{"read-only-storage", "read-only-storage", "storage"}));
  const std::string src = emit(k, "wgsl");
  EXPECT_NE(src.find("var acc: array<f32, 16>;"), std::string::npos) << src;
  EXPECT_NE(src.find("fma(tg_av[tg_a], tg_bv[tg_b]"), std::string::npos) << src;
  EXPECT_NE(src.find("@compute @workgroup_size(256)"), std::string::npos);
}

TEST(WgslLayout, SixteenBitTensorsPerTarget) {
  Kernel bf = instantiate(shipped("gemm.yaml"), "bf16", "wgsl");
  auto l = emit::wgsl_layout(bf, *find_target("wgsl"));
  EXPECT_EQ(l.element_types, (std::vector<std::string>{"u32", "u32", "atomic<u32>"}));
  EXPECT_EQ(l.packed, (std::vector<bool>{true, true, true}));
  Kernel h = instantiate(shipped("gemm.yaml"), "f16", "wgsl_f16");
  auto lh = emit::wgsl_layout(h, *find_target("wgsl_f16"));
  EXPECT_EQ(lh.element_types, (std::vector<std::string>{"f16", "f16", "f16"}));
  EXPECT_EQ(lh.enables, std::vector<std::string>{"f16"});
  // bf16 stays packed even with shader-f16: no WGSL has bf16.
  Kernel bh = instantiate(shipped("gemm.yaml"), "bf16", "wgsl_f16");
  EXPECT_EQ(emit::wgsl_layout(bh, *find_target("wgsl_f16")).element_types[0], "u32");
}

TEST(WgslLayout, SubgroupReductionsOnlyOnSubgroupTargets) {
  Kernel core = instantiate(shipped("softmax.yaml"), "f32", "wgsl");
  Kernel sg = instantiate(shipped("softmax.yaml"), "f32", "wgsl_subgroups");
  const std::string a = emit(core, "wgsl"), b = emit(sg, "wgsl_subgroups");
  EXPECT_EQ(a.find("subgroup"), std::string::npos);
  EXPECT_NE(b.find("enable subgroups;"), std::string::npos);
  EXPECT_NE(b.find("subgroupShuffleXor"), std::string::npos);
  EXPECT_NE(b.find("workgroupUniformLoad(&tg_sg_mode)"), std::string::npos); // the layout check
  EXPECT_NE(b.find("} else {"), std::string::npos);                          // the tree fallback
}

TEST(WgslEmitter, WorkgroupMemoryOverTheLimitIsRefused) {
  const std::string spec2 = R"Y(kernel: big
summary: a shared tile over 16 KiB
params: {N: dim}
tensors:
  Y: {type: f32, shape: [N], access: write}
grid: {bx: "cdiv(N, 64)"}
threads: 256
body:
  - shared: {t: [f32, 64, 128]}
  - fill: {dst: t, value: 1}
  - parallel: {i: 64}
    body:
      - "Y[bx * 64 + i] = t[i, 0]"
)Y";
  std::ostringstream errs;
  DiagEngine diag(errs);
  auto ks = spec::load_kernels_from_text("big.yaml", spec2, diag);
  ASSERT_TRUE(ks) << errs.str();
  auto ik = passes::instantiate(ks->front(), passes::enumerate_instances(ks->front()).front(),
                                *find_target("wgsl"), diag);
  ASSERT_TRUE(ik) << errs.str();
  // A user-facing reason (the driver reports it at the kernel, exit 1) ...
  const std::string problem = emit::wgsl_layout(*ik, *find_target("wgsl")).problem;
  EXPECT_NE(problem.find("needs 32768 B of workgroup memory (t=32768), more than the 16384 B"),
            std::string::npos)
      << problem;
  // ... and the emitter itself never prints such a variant.
  EXPECT_THROW(emit(*ik, "wgsl"), InternalError);
}

TEST(JsExpr, GridExpressions) {
  auto n = make_var("N", VarKind::Dim, DType::i64());
  Expr e = Binary::make(BinaryOp::CeilDiv, VarRef::make(n), make_i64(64));
  // the module's exact integer helpers (defined for every divisor; past 2^53 an error)
  EXPECT_EQ(dispatch::js_expr(e, "d"), "icdiv(d.N, 64)");
  Expr f = Binary::make(BinaryOp::Div, VarRef::make(n), make_i64(3));
  EXPECT_EQ(dispatch::js_expr(f, "d"), "idiv(d.N, 3)");
  Expr g = Binary::make(BinaryOp::Mod, Binary::make(BinaryOp::Mul, VarRef::make(n), VarRef::make(n)),
                        VarRef::make(n));
  EXPECT_EQ(dispatch::js_expr(g, "d"), "imod(imul(d.N, d.N), d.N)");
  Expr m = Binary::make(BinaryOp::Min, VarRef::make(n), make_i64(7));
  EXPECT_EQ(dispatch::js_expr(m, "d"), "Math.min(d.N, 7)");
}

TEST(WgslEmitter, Deterministic) {
  Kernel a = instantiate(shipped("flash_attention_fwd.yaml"), "bf16", "wgsl_f16_subgroups");
  Kernel b = instantiate(shipped("flash_attention_fwd.yaml"), "bf16", "wgsl_f16_subgroups");
  EXPECT_EQ(emit(a, "wgsl_f16_subgroups"), emit(b, "wgsl_f16_subgroups"));
}

} // namespace
} // namespace tilegen
