// passes/IndexThreshold: every comparison form it accepts is checked by brute force against the
// comparison it replaces (all vars substituted and folded), over ranges that cross every bound;
// forms it must refuse are refused; the shipped attention mask is found as one threshold.
#include "passes/IndexThreshold.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "passes/Pipeline.h"
#include "spec/Frontend.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tilegen;
using namespace tilegen::ir;

namespace {

const DType I = DType::i64();
Expr c(int64_t v) { return IntImm::make(I, v); }
Expr add(Expr a, Expr b) { return Binary::make(BinaryOp::Add, a, b); }
Expr sub(Expr a, Expr b) { return Binary::make(BinaryOp::Sub, a, b); }
Expr mul(Expr a, Expr b) { return Binary::make(BinaryOp::Mul, a, b); }
Expr cmp(BinaryOp op, Expr a, Expr b) { return Binary::make(op, a, b); }

struct Vars {
  VarPtr j = make_var("j", VarKind::ParallelVar, I), i = make_var("i", VarKind::ParallelVar, I),
         k = make_var("k", VarKind::LoopVar, I), S = make_var("S", VarKind::Dim, I),
         kv = make_var("kv", VarKind::Let, I);
  Expr J = VarRef::make(j), Iv = VarRef::make(i), K = VarRef::make(k), Sv = VarRef::make(S),
       KV = VarRef::make(kv);
  VarMap lets{{kv.get(), add(mul(K, c(32)), J)}}; // kv = k * 32 + j
};

int64_t eval(const Expr& e, const Vars& v, int64_t j, int64_t i, int64_t k, int64_t S) {
  VarMap m{{v.j.get(), c(j)}, {v.i.get(), c(i)}, {v.k.get(), c(k)}, {v.S.get(), c(S)}};
  Expr x = simplify(substitute(substitute(e, v.lets), m));
  auto r = as_const_int(x);
  EXPECT_TRUE(r) << to_string(x);
  return r.value_or(-1);
}

// The threshold of e agrees with e for every j in [0, 64) and a grid of the other vars.
void expect_exact(const Expr& e, const Vars& v) {
  auto t = passes::index_threshold(e->as<Binary>(), v.j.get(), v.lets);
  ASSERT_TRUE(t) << to_string(e);
  for (int64_t S : {0, 1, 31, 32, 33, 63, 64, 95, 200})
    for (int64_t k : {0, 1, 2})
      for (int64_t i = 0; i < 70; i += 3) {
        const int64_t bound = eval(t->bound, v, 0, i, k, S);
        for (int64_t j = 0; j < 64; ++j)
          ASSERT_EQ(eval(e, v, j, i, k, S) != 0, t->ge ? j >= bound : j < bound)
              << to_string(e) << " vs " << (t->ge ? "j >= " : "j < ") << to_string(t->bound)
              << " at j=" << j << " i=" << i << " k=" << k << " S=" << S;
      }
}

TEST(IndexThreshold, EveryAcceptedFormIsExact) {
  Vars v;
  using B = BinaryOp;
  for (B op : {B::Lt, B::Le, B::Gt, B::Ge}) {
    expect_exact(cmp(op, v.KV, v.Sv), v);                    // kv op S, through the let
    expect_exact(cmp(op, v.Sv, v.KV), v);                    // mirrored
    expect_exact(cmp(op, sub(v.J, c(3)), v.Iv), v);          // j - 3 op i
    expect_exact(cmp(op, v.Iv, add(c(5), add(v.J, v.K))), v); // i op 5 + (j + k)
  }
  // attention's mask and the other same-direction combinations
  for (B lg : {B::Or, B::And}) {
    expect_exact(Binary::make(lg, cmp(B::Ge, v.KV, v.Sv), cmp(B::Gt, v.KV, v.Iv)), v);
    expect_exact(Binary::make(lg, cmp(B::Lt, v.KV, v.Sv), cmp(B::Le, v.J, v.Iv)), v);
    expect_exact(Binary::make(lg, cmp(B::Ge, v.J, v.Iv),
                              Binary::make(lg, cmp(B::Gt, v.KV, v.Sv), cmp(B::Le, v.Sv, v.J))),
                 v);
  }
}

TEST(IndexThreshold, RefusesOtherForms) {
  Vars v;
  using B = BinaryOp;
  auto refused = [&](const Expr& e) {
    EXPECT_FALSE(passes::index_threshold(e->as<Binary>(), v.j.get(), v.lets)) << to_string(e);
  };
  refused(cmp(B::Ge, mul(v.J, c(2)), v.Sv));                 // coefficient 2
  refused(cmp(B::Ge, add(v.J, v.J), v.Sv));                  // j twice
  refused(cmp(B::Ge, sub(c(10), v.J), v.Sv));                // coefficient -1
  refused(cmp(B::Ge, v.KV, add(v.Sv, v.J)));                 // j on both sides
  refused(cmp(B::Eq, v.J, v.Sv));                            // not an ordering
  refused(cmp(B::Ge, v.Iv, v.Sv));                           // free of j
  refused(Binary::make(B::Or, cmp(B::Ge, v.J, v.Sv), cmp(B::Lt, v.J, v.Iv))); // two directions
  refused(Binary::make(B::Or, cmp(B::Ge, v.J, v.Sv), cmp(B::Ge, v.Iv, v.Sv))); // one part free
  // a bound that loads (it would be read once per row, outside the body's ifs)
  BufferPtr len = make_buffer("len", MemScope::Global, I, {c(64)});
  refused(cmp(B::Lt, v.J, Load::make(len, {v.Iv})));
}

// The shipped causal mask, instantiated for sm_90a: one threshold (the Or), whose bound is the
// min of the ragged and the causal limits.
TEST(IndexThreshold, FindsTheAttentionMask) {
  std::ostringstream out;
  DiagEngine diag(out);
  auto ks = spec::load_kernels(std::string(TILEGEN_KERNELS_DIR) + "/flash_attention_fwd.yaml", diag);
  ASSERT_TRUE(ks) << out.str();
  std::optional<Kernel> ik; // one kernel per type binding
  for (const auto& k : *ks)
    for (const auto& inst : passes::enumerate_instances(k))
      if (inst.name == "bf16_causal1_D128")
        ik = passes::instantiate(k, inst, *find_target("sm_90a"), diag);
  ASSERT_TRUE(ik) << out.str();
  struct Find : IRVisitor {
    std::vector<std::string> bounds;

  protected:
    void visit_Parallel(const Parallel* p) override {
      for (const auto& [b, t] : passes::find_index_thresholds(p->body, p->vars.back().get()))
        bounds.push_back(std::string(t.ge ? ">= " : "< ") + to_string(t.bound));
    }
  } f;
  f.visit(ik->body);
  ASSERT_EQ(f.bounds.size(), 1u);
  EXPECT_EQ(f.bounds[0], ">= min(S - k * 128, bx * 128 + i - k * 128 + 1)");
}

} // namespace
