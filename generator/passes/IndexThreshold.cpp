// IndexThreshold: see IndexThreshold.h.
#include "passes/IndexThreshold.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"


namespace tilegen::passes {

using namespace ir;

namespace {

// Whether e mentions neither j nor a buffer: a term of the bound, which is evaluated once per
// row, outside any `if` of the body, so it must not load.
bool invariant(const Expr& e, const Var* j) {
  struct Uses : IRVisitor {
    const Var* v = nullptr;
    bool hit = false;

  protected:
    void visit_VarRef(const VarRef* r) override { hit = hit || r->var.get() == v; }
    void visit_Load(const Load*) override { hit = true; }
  } u;
  u.v = j;
  u.visit(e);
  return !u.hit;
}

// X with e == j + X, for e built of j and additions / subtractions of j-free terms.
std::optional<Expr> offset(const Expr& e, const Var* j) {
  if (auto* r = e->as<VarRef>(); r && r->var.get() == j)
    return IntImm::make(e->type, 0);
  auto* b = e->as<Binary>();
  if (!b || (b->op != BinaryOp::Add && b->op != BinaryOp::Sub))
    return std::nullopt;
  if (invariant(b->b, j))
    if (auto x = offset(b->a, j))
      return Binary::make(b->op, *x, b->b);
  if (b->op == BinaryOp::Add && invariant(b->a, j))
    if (auto x = offset(b->b, j))
      return Binary::make(BinaryOp::Add, b->a, *x);
  return std::nullopt;
}

} // namespace

std::optional<IndexThreshold> index_threshold(const Binary* b, const Var* j, const VarMap& lets) {
  if (b->op == BinaryOp::Or || b->op == BinaryOp::And) {
    auto *ba = b->a->as<Binary>(), *bb = b->b->as<Binary>();
    if (!ba || !bb)
      return std::nullopt;
    auto x = index_threshold(ba, j, lets), y = index_threshold(bb, j, lets);
    if (!x || !y || x->ge != y->ge)
      return std::nullopt;
    // j >= a || j >= b: j >= min(a, b); j < a || j < b: j < max(a, b); And the other way
    const bool take_min = (b->op == BinaryOp::Or) == x->ge;
    return IndexThreshold{
        x->ge, simplify(Binary::make(take_min ? BinaryOp::Min : BinaryOp::Max, x->bound, y->bound))};
  }
  if (b->op != BinaryOp::Lt && b->op != BinaryOp::Le && b->op != BinaryOp::Gt &&
      b->op != BinaryOp::Ge)
    return std::nullopt;
  if (b->a->type != DType::i64())
    return std::nullopt;
  const Expr l = substitute(b->a, lets), r = substitute(b->b, lets);
  const Expr one = IntImm::make(DType::i64(), 1);
  auto plus_one = [&](const Expr& x) { return Binary::make(BinaryOp::Add, x, one); };
  if (auto x = offset(l, j); x && invariant(r, j)) { // j + x  op  r:  j op r - x
    const Expr at = Binary::make(BinaryOp::Sub, r, *x);
    switch (b->op) {
    case BinaryOp::Ge: return IndexThreshold{true, simplify(at)};
    case BinaryOp::Gt: return IndexThreshold{true, simplify(plus_one(at))};
    case BinaryOp::Lt: return IndexThreshold{false, simplify(at)};
    default: return IndexThreshold{false, simplify(plus_one(at))}; // <=
    }
  }
  if (auto x = offset(r, j); x && invariant(l, j)) { // l  op  j + x:  l - x op j
    const Expr at = Binary::make(BinaryOp::Sub, l, *x);
    switch (b->op) {
    case BinaryOp::Le: return IndexThreshold{true, simplify(at)};            // j >= at
    case BinaryOp::Lt: return IndexThreshold{true, simplify(plus_one(at))};  // j > at
    case BinaryOp::Ge: return IndexThreshold{false, simplify(plus_one(at))}; // j <= at
    default: return IndexThreshold{false, simplify(at)};                     // > : j < at
    }
  }
  return std::nullopt;
}

std::vector<std::pair<const Binary*, IndexThreshold>> find_index_thresholds(const Stmt& body,
                                                                            const Var* j) {
  struct Finder : ParallelBodyWalker {
    const Var* j = nullptr;
    std::vector<std::pair<const Binary*, IndexThreshold>> found;

  protected:
    void visit_Binary(const Binary* b) override {
      if (auto t = index_threshold(b, j, lets)) {
        found.push_back({b, *t});
        return;
      }
      IRVisitor::visit_Binary(b);
    }
  } f;
  f.j = j;
  f.walk(body);
  return std::move(f.found);
}

} // namespace tilegen::passes
