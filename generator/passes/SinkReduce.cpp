// sink_reduces(): see SinkReduce.h.
#include "passes/SinkReduce.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"

namespace tilegen::passes {

using namespace ir;

namespace {

// The parallel a branch consists of (directly or as the only statement of a Seq), or null.
const Parallel* only_parallel(const Stmt& s) {
  if (!s)
    return nullptr;
  if (auto seq = s->as<Seq>(); seq && seq->stmts.size() == 1)
    return only_parallel(seq->stmts[0]);
  return s->as<Parallel>();
}

bool stores_into(const Parallel* p, const Buffer* b) {
  struct V : IRVisitor {
    const Buffer* b = nullptr;
    bool found = false;
    void visit_Store(const Store* n) override {
      found = found || n->buffer.get() == b;
      IRVisitor::visit_Store(n);
    }
  } v;
  v.b = b;
  v.visit(p->body);
  return v.found;
}

class Sink : public IRMutator {
protected:
  Stmt mutate_Seq(const Seq* n, const Stmt& self) override {
    Stmt base = IRMutator::mutate_Seq(n, self);
    const auto& in = base->as<Seq>()->stmts;
    std::vector<Stmt> out;
    bool changed = false;
    for (size_t i = 0; i < in.size(); ++i) {
      auto ite = in[i]->as<IfThenElse>();
      auto r = i + 1 < in.size() ? in[i + 1]->as<Reduce>() : nullptr;
      const Parallel* p1 = ite ? only_parallel(ite->then_case) : nullptr;
      const Parallel* p2 = ite ? only_parallel(ite->else_case) : nullptr;
      if (r && p1 && p2 && stores_into(p1, r->src.get()) && stores_into(p2, r->src.get())) {
        out.push_back(IfThenElse::make(ite->cond, Seq::make({ite->then_case, in[i + 1]}, ite->loc),
                                       Seq::make({ite->else_case, in[i + 1]}, ite->loc), ite->loc));
        ++i;
        changed = true;
      } else {
        out.push_back(in[i]);
      }
    }
    return changed ? Seq::make(std::move(out), n->loc) : base;
  }
};

} // namespace

Kernel sink_reduces(const Kernel& k) { return Sink().mutate_kernel(k); }

} // namespace tilegen::passes
