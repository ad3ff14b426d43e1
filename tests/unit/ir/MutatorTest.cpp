#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

#include "emit/TestKernels.h"

#include <gtest/gtest.h>

using namespace tilegen::ir;
using namespace tilegen::testing;

namespace {

class CountLoads : public IRVisitor {
public:
  int loads = 0, stmts = 0;

protected:
  void visit_Load(const Load* n) override {
    ++loads;
    IRVisitor::visit_Load(n);
  }
  void visit_Store(const Store* n) override {
    ++stmts;
    IRVisitor::visit_Store(n);
  }
};

TEST(Visitor, WalksEveryNode) {
  Kernel k = make_softmax_kernel(DType::f32());
  CountLoads c;
  c.visit(k.body);
  EXPECT_EQ(c.stmts, 4);  // l, m, x (pass 1), x (pass 2)
  EXPECT_EQ(c.loads, 10); // 4 in the rescale, 3 + 3 in the two exp passes
}

TEST(Mutator, IdentityAllocatesNothing) {
  Kernel k = make_softmax_kernel(DType::bf16());
  IRMutator m;
  Kernel out = m.mutate_kernel(k);
  EXPECT_EQ(out.body, k.body);
  EXPECT_EQ(out.tensors, k.tensors);
}

// A mutator that widens every f32 fragment to f64: all uses must follow the new buffer.
class Widen : public IRMutator {
protected:
  BufferPtr rewrite_buffer(const BufferPtr& b) override {
    if (b->scope != MemScope::Fragment)
      return IRMutator::rewrite_buffer(b);
    return make_buffer(b->name, b->scope, DType::f64(), b->shape, b->access, b->loc);
  }
};

TEST(Mutator, BufferMapKeepsReferencesConsistent) {
  Kernel k = make_gemm_kernel(DType::f32());
  Widen w;
  Stmt out = w.mutate(k.body);
  std::string text = to_string(out);
  EXPECT_NE(text.find("fragment acc: f64[BM, BN]"), std::string::npos) << text;
  // The copy out of acc and the gemm refer to the same (new) buffer object.
  auto seq = out->as<Seq>();
  auto alloc = seq->stmts[2]->as<Alloc>();
  auto copy = seq->stmts.back()->as<Copy>();
  EXPECT_EQ(copy->src.buffer, alloc->buffer);
  auto loop = seq->stmts[4]->as<For>();
  auto gemm = loop->body->as<Seq>()->stmts[2]->as<Gemm>();
  EXPECT_EQ(gemm->c, alloc->buffer);
  EXPECT_EQ(w.mutate_buffer(k.tensors[0]), k.tensors[0]);
}

} // namespace
