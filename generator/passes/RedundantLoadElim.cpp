// eliminate_redundant_loads(): see RedundantLoadElim.h.
#include "passes/RedundantLoadElim.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"

#include <cmath>
#include <set>

namespace tilegen::passes {

using namespace ir;

bool same_expr(const Expr& a, const Expr& b) {
  if (a == b)
    return true;
  if (!a || !b || a->kind != b->kind || a->type != b->type)
    return false;
  auto all = [](const std::vector<Expr>& x, const std::vector<Expr>& y) {
    if (x.size() != y.size())
      return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same_expr(x[i], y[i]))
        return false;
    return true;
  };
  switch (a->kind) {
  case ExprKind::IntImm:
    return a->as<IntImm>()->value == b->as<IntImm>()->value;
  case ExprKind::FloatImm: {
    double x = a->as<FloatImm>()->value, y = b->as<FloatImm>()->value;
    return x == y ? std::signbit(x) == std::signbit(y) : std::isnan(x) && std::isnan(y);
  }
  case ExprKind::BoolImm:
    return a->as<BoolImm>()->value == b->as<BoolImm>()->value;
  case ExprKind::VarRef:
    return a->as<VarRef>()->var == b->as<VarRef>()->var;
  case ExprKind::Load: {
    auto *x = a->as<Load>(), *y = b->as<Load>();
    return x->buffer == y->buffer && all(x->indices, y->indices);
  }
  case ExprKind::Unary: {
    auto *x = a->as<Unary>(), *y = b->as<Unary>();
    return x->op == y->op && same_expr(x->a, y->a);
  }
  case ExprKind::Binary: {
    auto *x = a->as<Binary>(), *y = b->as<Binary>();
    return x->op == y->op && same_expr(x->a, y->a) && same_expr(x->b, y->b);
  }
  case ExprKind::Select: {
    auto *x = a->as<Select>(), *y = b->as<Select>();
    return same_expr(x->cond, y->cond) && same_expr(x->t, y->t) && same_expr(x->f, y->f);
  }
  case ExprKind::Call: {
    auto *x = a->as<Call>(), *y = b->as<Call>();
    return x->fn == y->fn && all(x->args, y->args);
  }
  case ExprKind::Cast:
    return same_expr(a->as<Cast>()->value, b->as<Cast>()->value);
  }
  return false;
}

bool same_pad(const Expr& a, const Expr& b) {
  if (is_const_zero(a) && is_const_zero(b))
    return true;
  return a && b && same_expr(a, b);
}

bool same_region(const Region& a, const Region& b) {
  if (a.buffer != b.buffer || a.offsets.size() != b.offsets.size() ||
      a.extents.size() != b.extents.size())
    return false;
  for (size_t i = 0; i < a.offsets.size(); ++i)
    if (!same_expr(a.offsets[i], b.offsets[i]))
      return false;
  for (size_t i = 0; i < a.extents.size(); ++i)
    if (!same_expr(a.extents[i], b.extents[i]))
      return false;
  return true;
}

namespace {

// What a statement may write, at any depth.
class Writes : public IRVisitor {
public:
  std::set<const Buffer*> buffers;
  bool global = false;

  static Writes of(const Stmt& s) {
    Writes w;
    w.visit(s);
    return w;
  }

protected:
  void add(const BufferPtr& b) {
    buffers.insert(b.get());
    global |= b->scope == MemScope::Global;
  }
  void visit_Alloc(const Alloc* n) override { add(n->buffer); }
  void visit_Fill(const Fill* n) override {
    add(n->dst);
    IRVisitor::visit_Fill(n);
  }
  void visit_Copy(const Copy* n) override {
    add(n->dst.buffer);
    IRVisitor::visit_Copy(n);
  }
  void visit_Gemm(const Gemm* n) override {
    add(n->c);
    IRVisitor::visit_Gemm(n);
  }
  void visit_Reduce(const Reduce* n) override {
    add(n->dst);
    IRVisitor::visit_Reduce(n);
  }
  void visit_Store(const Store* n) override {
    add(n->buffer);
    IRVisitor::visit_Store(n);
  }
  void visit_AtomicAdd(const AtomicAdd* n) override {
    add(n->dst.buffer);
    IRVisitor::visit_AtomicAdd(n);
  }
};

class HasLoad : public IRVisitor {
public:
  bool found = false;

protected:
  void visit_Load(const Load*) override { found = true; }
};

bool mentions_load(const std::vector<Expr>& es) {
  HasLoad h;
  for (const auto& e : es)
    if (e)
      h.visit(e);
  return h.found;
}

// Condition 1 and 3 of the header: a copy that may be remembered and matched.
bool is_candidate(const Copy* c) {
  const Buffer& src = *c->src.buffer;
  const Buffer& dst = *c->dst.buffer;
  if (src.scope != MemScope::Global || src.access != Access::Read)
    return false;
  if (dst.scope != MemScope::Fragment && dst.scope != MemScope::Local)
    return false;
  return !mentions_load(c->src.offsets) && !mentions_load(c->src.extents) &&
         !mentions_load(c->dst.offsets) && !mentions_load(c->dst.extents) &&
         !mentions_load({c->pad});
}

// The copies known to have run and still to hold, in program order.
using Known = std::vector<const Copy*>;

void forget(Known& known, const Writes& w) {
  std::erase_if(known, [&](const Copy* c) {
    return w.global || w.buffers.count(c->dst.buffer.get()) || w.buffers.count(c->src.buffer.get());
  });
}

class Eliminator {
public:
  LoadElimStats stats;

  // Rewrites s; `known` is the state before s and becomes the state after it.
  Stmt run(const Stmt& s, Known& known) {
    if (!s)
      return s;
    if (auto* q = s->as<Seq>()) {
      std::vector<Stmt> out;
      bool changed = false;
      for (const auto& c : q->stmts) {
        if (auto* cp = c->as<Copy>(); cp && redundant(cp, known)) {
          ++stats.removed;
          changed = true;
          continue;
        }
        Stmt n = run(c, known);
        changed |= n != c;
        out.push_back(std::move(n));
      }
      return changed ? Seq::make(std::move(out), q->loc) : s;
    }
    if (auto* cp = s->as<Copy>()) {
      forget(known, Writes::of(s));
      if (is_candidate(cp))
        known.push_back(cp);
      return s;
    }
    if (auto* i = s->as<IfThenElse>()) {
      Known t = known, e = known;
      Stmt then_case = run(i->then_case, t);
      Stmt else_case = run(i->else_case, e);
      forget(known, Writes::of(s));
      if (then_case == i->then_case && else_case == i->else_case)
        return s;
      return IfThenElse::make(i->cond, then_case, else_case, i->loc);
    }
    if (auto* f = s->as<For>()) {
      forget(known, Writes::of(f->body));
      Known inside = known;
      Stmt body = run(f->body, inside);
      if (body == f->body)
        return s;
      return For::make(f->var, f->start, f->extent, f->stages, body, f->loc);
    }
    // Everything else (alloc, fill, gemm, reduce, parallel, store, let, atomic_add) only writes.
    forget(known, Writes::of(s));
    return s;
  }

private:
  bool redundant(const Copy* c, const Known& known) const {
    if (!is_candidate(c))
      return false;
    for (const Copy* k : known)
      if (same_region(k->src, c->src) && same_region(k->dst, c->dst) && same_pad(k->pad, c->pad))
        return true;
    return false;
  }
};

} // namespace

Stmt eliminate_redundant_loads(const Stmt& s, LoadElimStats* stats) {
  Eliminator e;
  Known known;
  Stmt out = e.run(s, known);
  if (stats)
    *stats = e.stats;
  return out;
}

Kernel eliminate_redundant_loads(const Kernel& k, LoadElimStats* stats) {
  Kernel out = k;
  out.body = eliminate_redundant_loads(k.body, stats);
  return out;
}

} // namespace tilegen::passes
