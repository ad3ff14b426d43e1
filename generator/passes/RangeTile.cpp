// The per-tile half of RangeAnalysis (RangeAnalysis.h): affine forms over a tile's variables,
// symbolic bounds, and the tile predicates passes/VersionByRange and the CUDA copies use.
#include "passes/RangeAnalysis.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"

#include <algorithm>
#include <limits>

namespace tilegen::passes {

using namespace ir;

namespace {

class Mentions : public IRVisitor {
public:
  const TileVars* tile = nullptr;
  bool found = false, load = false;

protected:
  void visit_VarRef(const VarRef* v) override { found = found || (tile && tile->count(v->var.get())); }
  void visit_Load(const Load* l) override {
    load = true;
    IRVisitor::visit_Load(l);
  }
};

bool has_load(const Expr& e) {
  Mentions m;
  m.visit(e);
  return m.load;
}

Expr imm(DType t, int64_t v) { return IntImm::make(t, v); }
Expr bin(BinaryOp op, Expr a, Expr b) { return Binary::make(op, std::move(a), std::move(b)); }

} // namespace

// ---- symbolic bounds -------------------------------------------------------------------------

bool mentions(const Expr& e, const TileVars& tile) {
  Mentions m;
  m.tile = &tile;
  m.visit(e);
  return m.found;
}

std::optional<int> monotonicity(const Expr& e, const Var* v) {
  TileVars tv{{v, Interval{}}};
  struct Lets : IRVisitor { // a let may hide v
    bool found = false;
    void visit_VarRef(const VarRef* r) override { found = found || r->var->kind == VarKind::Let; }
  } lets;
  lets.visit(e);
  if (lets.found)
    return std::nullopt;
  if (!mentions(e, tv))
    return 0;
  // A term without v that is never negative: a constant >= 0, a dim, a value param, a tile
  // constant (all >= 0 by their checks).
  auto nonneg = [&](const Expr& x) {
    if (auto c = as_const_int(x))
      return *c >= 0;
    if (auto* r = x->as<VarRef>())
      return r->var->kind == VarKind::Dim || r->var->kind == VarKind::ValueParam ||
             r->var->kind == VarKind::TileConst;
    return false;
  };
  auto join = [](std::optional<int> a, std::optional<int> b) -> std::optional<int> {
    if (!a || !b)
      return std::nullopt;
    return std::max(*a, *b);
  };
  if (auto* r = e->as<VarRef>())
    return r->var.get() == v ? std::optional<int>(1) : std::optional<int>(0);
  if (auto* c = e->as<Cast>())
    return c->type.is_int() && c->value->type.is_int() ? monotonicity(c->value, v) : std::nullopt;
  if (auto* s = e->as<Select>())
    return mentions(s->cond, tv) ? std::nullopt : join(monotonicity(s->t, v), monotonicity(s->f, v));
  auto* b = e->as<Binary>();
  if (!b || !b->type.is_int())
    return std::nullopt;
  switch (b->op) {
  case BinaryOp::Add:
  case BinaryOp::Min:
  case BinaryOp::Max: return join(monotonicity(b->a, v), monotonicity(b->b, v));
  case BinaryOp::Sub: return mentions(b->b, tv) ? std::nullopt : monotonicity(b->a, v);
  case BinaryOp::Mul:
    if (!mentions(b->b, tv) && nonneg(b->b))
      return monotonicity(b->a, v);
    if (!mentions(b->a, tv) && nonneg(b->a))
      return monotonicity(b->b, v);
    return std::nullopt;
  case BinaryOp::Div:
  case BinaryOp::CeilDiv:
    return !mentions(b->b, tv) && nonneg(b->b) ? monotonicity(b->a, v) : std::nullopt;
  default: return std::nullopt;
  }
}

std::optional<Affine> linearize(const Expr& e, const TileVars& tile) {
  const DType t = e->type;
  if (!t.is_int())
    return std::nullopt;
  if (!mentions(e, tile))
    return Affine{e, {}};
  auto combine = [&](const Affine& a, const Affine& b, int64_t sign, BinaryOp op) {
    Affine r{bin(op, a.rest, b.rest), a.coeffs};
    for (const auto& [v, c] : b.coeffs)
      if ((r.coeffs[v] += sign * c) == 0)
        r.coeffs.erase(v);
    return r;
  };
  switch (e->kind) {
  case ExprKind::VarRef: // a tile var (mentions() said so)
    return Affine{imm(t, 0), {{e->as<VarRef>()->var.get(), 1}}};
  case ExprKind::Unary: {
    auto* u = e->as<Unary>();
    auto a = linearize(u->a, tile);
    if (!a || u->op != UnaryOp::Neg)
      return std::nullopt;
    for (auto& [v, c] : a->coeffs)
      c = -c;
    return Affine{Unary::make(UnaryOp::Neg, a->rest), a->coeffs};
  }
  case ExprKind::Binary: {
    auto* b = e->as<Binary>();
    if (b->op == BinaryOp::Add || b->op == BinaryOp::Sub) {
      auto x = linearize(b->a, tile), y = linearize(b->b, tile);
      if (!x || !y)
        return std::nullopt;
      return combine(*x, *y, b->op == BinaryOp::Add ? 1 : -1, b->op);
    }
    if (b->op == BinaryOp::Mul) {
      // One factor must be a constant; the other carries the tile vars.
      Expr k = b->a, other = b->b;
      if (!as_const_int(k) || mentions(k, tile))
        std::swap(k, other);
      auto c = as_const_int(k);
      if (!c || mentions(k, tile))
        return std::nullopt;
      auto x = linearize(other, tile);
      if (!x)
        return std::nullopt;
      Affine r{bin(BinaryOp::Mul, x->rest, imm(t, *c)), {}};
      for (const auto& [v, cv] : x->coeffs)
        if (cv * *c != 0)
          r.coeffs[v] = cv * *c;
      return r;
    }
    return std::nullopt;
  }
  case ExprKind::Cast: {
    auto* c = e->as<Cast>();
    // Widening integer casts keep the form (no overflow in the narrower type, docs/ir.md).
    if (!c->value->type.is_int() || c->value->type.bits() > t.bits())
      return std::nullopt;
    auto x = linearize(c->value, tile);
    if (!x)
      return std::nullopt;
    return Affine{Cast::make(t, x->rest), x->coeffs};
  }
  default: return std::nullopt;
  }
}

namespace {

// sum of min (or max) of c * v over the tile for an affine form's coefficients.
int64_t extreme(const std::map<const Var*, int64_t>& coeffs, const TileVars& tile, bool max) {
  __int128 s = 0;
  for (const auto& [v, c] : coeffs) {
    const Interval& r = tile.at(v);
    __int128 a = static_cast<__int128>(c) * *r.lo, b = static_cast<__int128>(c) * *r.hi;
    s += max ? std::max(a, b) : std::min(a, b);
  }
  // Tile extents are small; clamping never bites.
  return static_cast<int64_t>(std::clamp<__int128>(s, std::numeric_limits<int64_t>::min(),
                                                   std::numeric_limits<int64_t>::max()));
}

Expr plus(const Expr& e, int64_t k) {
  if (k == 0)
    return e;
  return k > 0 ? bin(BinaryOp::Add, e, imm(e->type, k)) : bin(BinaryOp::Sub, e, imm(e->type, -k));
}

} // namespace

std::optional<SymBounds> symbolic_bounds(const Expr& e, const TileVars& tile, const RangeEnv& env) {
  if (!mentions(e, tile))
    return SymBounds{e, e};
  if (!e->type.is_int())
    return std::nullopt;
  if (auto a = linearize(e, tile)) {
    Expr rest = simplify(a->rest);
    return SymBounds{simplify(plus(rest, extreme(a->coeffs, tile, false))),
                     simplify(plus(rest, extreme(a->coeffs, tile, true)))};
  }
  auto sb = [&](const Expr& x) { return symbolic_bounds(x, tile, env); };
  auto done = [](Expr lo, Expr hi) { return SymBounds{simplify(lo), simplify(hi)}; };
  switch (e->kind) {
  case ExprKind::Unary: {
    auto* u = e->as<Unary>();
    auto a = sb(u->a);
    if (!a || u->op != UnaryOp::Neg)
      return std::nullopt;
    return done(Unary::make(UnaryOp::Neg, a->hi), Unary::make(UnaryOp::Neg, a->lo));
  }
  case ExprKind::Binary: {
    auto* b = e->as<Binary>();
    auto x = sb(b->a), y = sb(b->b);
    if (!x || !y)
      return std::nullopt;
    switch (b->op) {
    case BinaryOp::Add: return done(bin(BinaryOp::Add, x->lo, y->lo), bin(BinaryOp::Add, x->hi, y->hi));
    case BinaryOp::Sub: return done(bin(BinaryOp::Sub, x->lo, y->hi), bin(BinaryOp::Sub, x->hi, y->lo));
    case BinaryOp::Min:
    case BinaryOp::Max: return done(bin(b->op, x->lo, y->lo), bin(b->op, x->hi, y->hi));
    case BinaryOp::Mul: {
      // A tile-free factor of known sign scales the other factor's bounds.
      Expr f = b->b;
      const SymBounds* s = &*x;
      if (mentions(f, tile)) {
        f = b->a;
        s = &*y;
      }
      if (mentions(f, tile))
        return std::nullopt;
      Interval fr = bounds_of(f, env);
      if (fr.lo && *fr.lo >= 0)
        return done(bin(BinaryOp::Mul, s->lo, f), bin(BinaryOp::Mul, s->hi, f));
      if (fr.hi && *fr.hi <= 0)
        return done(bin(BinaryOp::Mul, s->hi, f), bin(BinaryOp::Mul, s->lo, f));
      return std::nullopt;
    }
    case BinaryOp::Div:
    case BinaryOp::CeilDiv: {
      // Non-decreasing in the dividend for a positive, tile-free divisor.
      Interval dr = bounds_of(b->b, env);
      if (mentions(b->b, tile) || !dr.lo || *dr.lo < 1)
        return std::nullopt;
      return done(bin(b->op, x->lo, b->b), bin(b->op, x->hi, b->b));
    }
    default: return std::nullopt;
    }
  }
  case ExprKind::Select: {
    auto* s = e->as<Select>();
    auto x = sb(s->t), y = sb(s->f);
    if (!x || !y)
      return std::nullopt;
    return done(bin(BinaryOp::Min, x->lo, y->lo), bin(BinaryOp::Max, x->hi, y->hi));
  }
  case ExprKind::Cast: {
    auto* c = e->as<Cast>();
    if (!c->value->type.is_int() || c->value->type.bits() > e->type.bits())
      return std::nullopt;
    auto x = sb(c->value);
    if (!x)
      return std::nullopt;
    return done(Cast::make(e->type, x->lo), Cast::make(e->type, x->hi));
  }
  default: return std::nullopt;
  }
}

// ---- tile predicates -------------------------------------------------------------------------

namespace {

BinaryOp negate(BinaryOp op) {
  switch (op) {
  case BinaryOp::Lt: return BinaryOp::Ge;
  case BinaryOp::Le: return BinaryOp::Gt;
  case BinaryOp::Gt: return BinaryOp::Le;
  case BinaryOp::Ge: return BinaryOp::Lt;
  case BinaryOp::Eq: return BinaryOp::Ne;
  default: return BinaryOp::Eq; // Ne
  }
}

// `l OP r` with the constant k moved to the side where it is added: (l + k) OP r, or
// l OP (r - k) when k is negative. Reads like the source: k * BN + 31 < S.
Expr compare_shifted(BinaryOp op, const Expr& l, int64_t k, const Expr& r) {
  return k >= 0 ? bin(op, plus(l, k), r) : bin(op, l, plus(r, -k));
}

// A predicate implying `a OP b` at every point of the tile, or nullptr.
Expr all_points(BinaryOp op, const Expr& a, const Expr& b, const TileVars& tile, const RangeEnv& env) {
  auto la = linearize(a, tile), lb = linearize(b, tile);
  if (la && lb) {
    // a - b = (ra - rb) + sum(c v): exact extremes of the tile-dependent part.
    std::map<const Var*, int64_t> c = la->coeffs;
    for (const auto& [v, cv] : lb->coeffs)
      if ((c[v] -= cv) == 0)
        c.erase(v);
    const int64_t klo = extreme(c, tile, false), khi = extreme(c, tile, true);
    Expr ra = simplify(la->rest), rb = simplify(lb->rest);
    switch (op) {
    case BinaryOp::Lt:
    case BinaryOp::Le: return compare_shifted(op, ra, khi, rb);
    case BinaryOp::Gt:
    case BinaryOp::Ge: return compare_shifted(op, ra, klo, rb);
    case BinaryOp::Eq:
      return klo == khi ? compare_shifted(op, ra, klo, rb) : nullptr;
    case BinaryOp::Ne:
      return bin(BinaryOp::Or, compare_shifted(BinaryOp::Lt, ra, khi, rb),
                 compare_shifted(BinaryOp::Gt, ra, klo, rb));
    default: return nullptr;
    }
  }
  auto sa = symbolic_bounds(a, tile, env), sb = symbolic_bounds(b, tile, env);
  if (!sa || !sb)
    return nullptr;
  switch (op) {
  case BinaryOp::Lt:
  case BinaryOp::Le: return bin(op, sa->hi, sb->lo);
  case BinaryOp::Gt:
  case BinaryOp::Ge: return bin(op, sa->lo, sb->hi);
  case BinaryOp::Ne:
    return bin(BinaryOp::Or, bin(BinaryOp::Lt, sa->hi, sb->lo), bin(BinaryOp::Gt, sa->lo, sb->hi));
  default: return nullptr; // equality at every point needs both sides constant over the tile
  }
}

Expr predicate(const Expr& cond, bool value, const TileVars& tile, const RangeEnv& env) {
  if (!mentions(cond, tile))
    return value ? cond : Unary::make(UnaryOp::Not, cond);
  if (auto* u = cond->as<Unary>(); u && u->op == UnaryOp::Not)
    return predicate(u->a, !value, tile, env);
  if (auto* c = cond->as<Cast>(); c && c->value->type.is_int())
    return value ? all_points(BinaryOp::Ne, c->value, imm(c->value->type, 0), tile, env)
                 : all_points(BinaryOp::Eq, c->value, imm(c->value->type, 0), tile, env);
  auto* b = cond->as<Binary>();
  if (!b)
    return nullptr;
  if (is_logical(b->op)) {
    // x && y is false when either is, true when both are; x || y the other way round.
    const bool either = (b->op == BinaryOp::And) != value;
    Expr px = predicate(b->a, value, tile, env), py = predicate(b->b, value, tile, env);
    if (either) {
      if (px && py)
        return bin(BinaryOp::Or, px, py);
      return px ? px : py;
    }
    return px && py ? bin(BinaryOp::And, px, py) : nullptr;
  }
  if (is_comparison(b->op) && b->a->type.is_int())
    return all_points(value ? b->op : negate(b->op), b->a, b->b, tile, env);
  return nullptr;
}

} // namespace

Expr uniform_predicate(const Expr& cond, bool value, const TileVars& tile, const RangeEnv& env) {
  for (const auto& [v, r] : tile)
    if (!r.bounded() || r.empty())
      return nullptr;
  Expr p = predicate(cond, value, tile, env);
  if (!p || has_load(p))
    return nullptr;
  return prune_decided(p, env);
}

} // namespace tilegen::passes
