// OutputCoverage: see OutputCoverage.h.
#include "passes/OutputCoverage.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

#include <set>
#include <string>

namespace tilegen::passes {

using namespace ir;

bool writes_whole(const Kernel& k, const Buffer& g) {
  class Writes : public IRVisitor {
  public:
    const Buffer* g = nullptr;
    int writes = 0, nest = 0;
    const Copy* copy = nullptr;

  protected:
    void visit_For(const For* f) override {
      ++nest;
      IRVisitor::visit_For(f);
      --nest;
    }
    void visit_Parallel(const Parallel* p) override {
      ++nest;
      IRVisitor::visit_Parallel(p);
      --nest;
    }
    void visit_IfThenElse(const IfThenElse* i) override {
      ++nest;
      IRVisitor::visit_IfThenElse(i);
      --nest;
    }
    void visit_Combine(const Combine* c) override { // runs for split tiles only
      ++nest;
      IRVisitor::visit_Combine(c);
      --nest;
    }
    void visit_Copy(const Copy* c) override {
      if (c->dst.buffer.get() == g) {
        ++writes;
        if (nest == 0 && c->src.buffer->scope == MemScope::Fragment)
          copy = c;
      }
      IRVisitor::visit_Copy(c);
    }
    void visit_Store(const Store* st) override {
      writes += st->buffer.get() == g;
      IRVisitor::visit_Store(st);
    }
    void visit_AtomicAdd(const AtomicAdd* a) override {
      writes += a->dst.buffer.get() == g;
      IRVisitor::visit_AtomicAdd(a);
    }
    void visit_Fill(const Fill* f) override {
      writes += f->dst.get() == g;
      IRVisitor::visit_Fill(f);
    }
  } w;
  w.g = &g;
  w.visit(k.body);
  if (g.access != Access::Write || w.writes != 1 || !w.copy)
    return false;
  const Region& r = w.copy->dst;
  const size_t R = g.rank(), t = r.tile_rank();
  if (r.offsets.size() != R || t > R)
    return false;
  std::set<const Var*> used;
  const Expr one = make_i64(1);
  for (size_t d = 0; d < R; ++d) {
    const Expr& e = d < R - t ? one : r.extents[d - (R - t)];
    const Expr& o = r.offsets[d];
    const auto* zero = o->as<IntImm>();
    if (zero && zero->value == 0 && to_string(e) == to_string(g.shape[d]))
      continue;
    const Var* v = nullptr;
    std::string tile = "1";
    if (const auto* ref = o->as<VarRef>()) {
      v = ref->var.get();
    } else if (const auto* b = o->as<Binary>(); b && b->op == BinaryOp::Mul) {
      if (const auto* l = b->a->as<VarRef>())
        v = l->var.get(), tile = to_string(b->b);
      else if (const auto* rr = b->b->as<VarRef>())
        v = rr->var.get(), tile = to_string(b->a);
    }
    if (!v || v->kind != VarKind::BlockIndex || tile != to_string(e) || !used.insert(v).second)
      return false;
    const GridDim* gd = nullptr;
    for (const auto& x : k.grid)
      if (x.index.get() == v)
        gd = &x;
    const std::string blocks = tile == "1" ? to_string(g.shape[d])
                                           : to_string(Binary::make(BinaryOp::CeilDiv, g.shape[d], e));
    if (!gd || to_string(gd->extent) != blocks)
      return false;
  }
  return true;
}

} // namespace tilegen::passes
