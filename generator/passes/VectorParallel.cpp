// plan_parallel_vector(): see VectorParallel.h.
#include "passes/VectorParallel.h"
#include "passes/BodyStmts.h"

#include "ir/IRVisitor.h"

#include <vector>

namespace tilegen::passes {

using namespace ir;

namespace {

// Every load of an expression, and whether it reads a buffer other than shared memory.
struct Loads : IRVisitor {
  std::vector<const Load*> all;
  bool non_shared = false;
  void visit_Load(const Load* l) override {
    all.push_back(l);
    non_shared = non_shared || l->buffer->scope != MemScope::Shared;
    IRVisitor::visit_Load(l);
  }
};

bool is_var(const Expr& e, const Var* v) {
  auto* r = e->as<VarRef>();
  return r && r->var.get() == v;
}

// s when e is j >> s (s a constant in [0, 31)) or j / 2^s (floor division, the same for j >= 0)
// or j itself (s = 0); -1 otherwise.
int shift_of(const Expr& e, const Var* j) {
  if (is_var(e, j))
    return 0;
  auto* b = e->as<Binary>();
  if (!b || !is_var(b->a, j))
    return -1;
  auto* c = b->b->as<IntImm>();
  if (!c)
    return -1;
  if (b->op == BinaryOp::Shr && c->value >= 0 && c->value < 31)
    return static_cast<int>(c->value);
  if (b->op == BinaryOp::Div && c->value > 0 && (c->value & (c->value - 1)) == 0) {
    int s = 0;
    while ((int64_t(1) << s) < c->value)
      ++s;
    return s;
  }
  return -1;
}

int64_t const_extent(const Expr& e) {
  auto* i = e->as<IntImm>();
  return i ? i->value : -1;
}

class Planner {
public:
  Planner(const Parallel& p) : p_(p), j_(p.vars.back().get()) {}

  ParallelVectorPlan run(int64_t vector_bytes, int64_t want) {
    ParallelVectorPlan plan;
    if (vector_bytes < 2 || p_.vars.empty())
      return plan;
    const int64_t ej = const_extent(p_.extents.back());
    if (ej < 2)
      return plan;
    std::vector<const Store*> stores;
    std::vector<const Load*> loads;
    for (const Stmt& s : body_stmts(p_.body)) {
      Loads ld;
      if (auto* l = s->as<LetStmt>()) {
        ld.visit(l->value);
        // A row let: no load, no j, only earlier row lets.
        bool row = ld.all.empty();
        for (const Var* v : vars_of(l->value))
          row = row && v != j_ && (v->kind != VarKind::Let || row_lets_.count(v));
        if (row)
          row_lets_.insert(l->var.get());
      } else if (auto* st = s->as<Store>()) {
        for (const auto& i : st->indices)
          ld.visit(i);
        ld.visit(st->value);
        stores.push_back(st);
      } else {
        return plan; // an if (or anything else): scalar
      }
      if (ld.non_shared)
        return plan;
      loads.insert(loads.end(), ld.all.begin(), ld.all.end());
    }
    if (stores.empty())
      return plan;
    int64_t narrowest = 16;
    std::vector<int64_t> rows;
    for (const Store* st : stores) {
      if (st->op != StoreOp::Assign || st->buffer->scope != MemScope::Shared ||
          st->indices.empty() || !is_var(st->indices.back(), j_) || !row_indices(st->indices))
        return plan;
      narrowest = std::min<int64_t>(narrowest, st->buffer->dtype.bytes());
      rows.push_back(const_extent(st->buffer->shape.back()));
    }
    int64_t w = want;
    if (w <= 0) {
      w = 1;
      while (w * 2 * narrowest <= vector_bytes && ej % (w * 2) == 0)
        w *= 2;
      for (int64_t r : rows)
        while (w > 1 && (r <= 0 || r % w != 0))
          w /= 2;
    }
    if (w < 2)
      return plan;
    plan.width = w;
    plan.stores.insert(stores.begin(), stores.end());
    plan.row_lets = row_lets_;
    std::set<const Buffer*> stored;
    for (const Store* st : stores)
      stored.insert(st->buffer.get());
    for (const Load* l : loads) {
      if (l->indices.empty() || stored.count(l->buffer.get()) || !row_indices(l->indices))
        continue;
      const int s = shift_of(l->indices.back(), j_);
      const int64_t row = const_extent(l->buffer->shape.back());
      const int64_t n = s >= 62 ? 1 : std::max<int64_t>(1, w >> s);
      if (s < 0 || row <= 0 || row % n != 0)
        continue;
      plan.loads[l] = s;
    }
    return plan;
  }

private:
  // Every index but the last is a row expression: no j, no load, no let but a row let.
  bool row_indices(const std::vector<Expr>& idx) const {
    for (size_t d = 0; d + 1 < idx.size(); ++d) {
      Loads ld;
      ld.visit(idx[d]);
      if (!ld.all.empty())
        return false;
      for (const Var* v : vars_of(idx[d]))
        if (v == j_ || (v->kind == VarKind::Let && !row_lets_.count(v)))
          return false;
    }
    return true;
  }

  const Parallel& p_;
  const Var* j_;
  std::set<const Var*> row_lets_;
};

} // namespace

ParallelVectorPlan plan_parallel_vector(const Parallel& p, int64_t vector_bytes, int64_t width) {
  return Planner(p).run(vector_bytes, width);
}

} // namespace tilegen::passes
