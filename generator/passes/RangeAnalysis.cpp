// Interval arithmetic on the IR's integer expressions, and the per-tile symbolic bounds that
// passes/VersionByRange turns into tile predicates. See RangeAnalysis.h for the contract.
#include "passes/RangeAnalysis.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"

#include <algorithm>
#include <limits>

namespace tilegen::passes {

using namespace ir;

namespace {

// ---- widened arithmetic ----------------------------------------------------------------------
//
// Bounds are computed in 128 bits with "infinity" represented by the first value past the
// int64 range on each side. The sentinels over-approximate every real bound, so any monotone
// combination of them is still a sound bound; results are clamped back to the sentinels after
// each operation so products of two bounds always fit in 128 bits.
using I128 = __int128;
constexpr I128 kPosInf = static_cast<I128>(std::numeric_limits<int64_t>::max()) + 1;
constexpr I128 kNegInf = static_cast<I128>(std::numeric_limits<int64_t>::min()) - 1;

struct Wide {
  I128 lo, hi;
};

I128 clamp(I128 v) { return std::max(kNegInf, std::min(kPosInf, v)); }

Wide widen(const Interval& r) { return {r.lo ? *r.lo : kNegInf, r.hi ? *r.hi : kPosInf}; }

// A bound at the end of the int64 range is no bound: it is reported as unbounded.
Interval narrow(Wide w) {
  Interval r;
  w.lo = clamp(w.lo);
  w.hi = clamp(w.hi);
  if (w.lo > kNegInf + 1)
    r.lo = static_cast<int64_t>(std::min(w.lo, kPosInf - 1));
  if (w.hi < kPosInf - 1)
    r.hi = static_cast<int64_t>(std::max(w.hi, kNegInf + 1));
  return r;
}

I128 floor_div(I128 a, I128 b) { // b > 0
  I128 q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}
I128 ceil_div(I128 a, I128 b) { // b > 0
  I128 q = a / b;
  return (a % b != 0 && a > 0) ? q + 1 : q;
}

Wide corners(const Wide& a, const Wide& b, I128 (*f)(I128, I128)) {
  I128 v[4] = {f(a.lo, b.lo), f(a.lo, b.hi), f(a.hi, b.lo), f(a.hi, b.hi)};
  return {clamp(*std::min_element(v, v + 4)), clamp(*std::max_element(v, v + 4))};
}

const Interval kBool = Interval::of(0, 1);

Interval decided(bool v) { return Interval::point(v ? 1 : 0); }

// The comparison a OP b over intervals: decided when the intervals are ordered.
Interval compare(BinaryOp op, const Interval& a, const Interval& b) {
  Wide x = widen(a), y = widen(b);
  switch (op) {
  case BinaryOp::Lt:
    if (x.hi < y.lo) return decided(true);
    if (x.lo >= y.hi) return decided(false);
    break;
  case BinaryOp::Le:
    if (x.hi <= y.lo) return decided(true);
    if (x.lo > y.hi) return decided(false);
    break;
  case BinaryOp::Gt: return compare(BinaryOp::Lt, b, a);
  case BinaryOp::Ge: return compare(BinaryOp::Le, b, a);
  case BinaryOp::Eq:
    if (a.is_point() && b.is_point() && *a.lo == *b.lo) return decided(true);
    if (x.hi < y.lo || y.hi < x.lo) return decided(false);
    break;
  case BinaryOp::Ne: {
    Interval eq = compare(BinaryOp::Eq, a, b);
    return eq.is_point() ? decided(*eq.lo == 0) : kBool;
  }
  default: break;
  }
  return kBool;
}

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

// ---- Interval --------------------------------------------------------------------------------

Interval Interval::of_type(DType t) {
  if (t.is_bool())
    return kBool;
  if (t == DType::i8())
    return of(-128, 127);
  if (t == DType::i32())
    return of(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  return everything();
}

bool Interval::fits_i32() const {
  return bounded() && *lo >= std::numeric_limits<int32_t>::min() &&
         *hi <= std::numeric_limits<int32_t>::max();
}

Interval Interval::hull(const Interval& o) const {
  Interval r;
  if (lo && o.lo)
    r.lo = std::min(*lo, *o.lo);
  if (hi && o.hi)
    r.hi = std::max(*hi, *o.hi);
  return r;
}

Interval Interval::intersect(const Interval& o) const {
  Interval r = *this;
  if (o.lo)
    r.lo = lo ? std::max(*lo, *o.lo) : *o.lo;
  if (o.hi)
    r.hi = hi ? std::min(*hi, *o.hi) : *o.hi;
  return r;
}

std::string Interval::str() const {
  return (lo ? "[" + std::to_string(*lo) : std::string("(-inf")) + ", " +
         (hi ? std::to_string(*hi) + "]" : std::string("+inf)"));
}

// ---- RangeEnv --------------------------------------------------------------------------------

Interval RangeEnv::range_of(const Var* v) const {
  if (auto it = ranges_.find(v); it != ranges_.end())
    return it->second;
  switch (v->kind) {
  case VarKind::Dim:
  case VarKind::BlockIndex: return Interval::at_least(0);
  case VarKind::Flag: return kBool;
  default: return Interval::of_type(v->type);
  }
}

const Expr* RangeEnv::let_value(const Var* v) const {
  auto it = lets_.find(v);
  return it == lets_.end() ? nullptr : &it->second;
}

// ---- numeric bounds --------------------------------------------------------------------------

Interval bounds_of(const Expr& e, const RangeEnv& env) {
  const Interval type_range = e->type.is_int() || e->type.is_bool()
                                  ? Interval::of_type(e->type)
                                  : Interval::everything();
  if (!e->type.is_int() && !e->type.is_bool())
    return Interval::everything();
  auto result = [&](Interval r) {
    Interval x = r.intersect(type_range);
    return x.empty() ? r : x; // an empty intersection means the program overflowed: keep r
  };
  switch (e->kind) {
  case ExprKind::IntImm: return Interval::point(e->as<IntImm>()->value);
  case ExprKind::BoolImm: return decided(e->as<BoolImm>()->value);
  case ExprKind::VarRef: {
    const Var* v = e->as<VarRef>()->var.get();
    if (const Expr* val = env.let_value(v))
      return result(bounds_of(*val, env).intersect(env.range_of(v)));
    return result(env.range_of(v));
  }
  case ExprKind::Unary: {
    auto* u = e->as<Unary>();
    Interval a = bounds_of(u->a, env);
    if (u->op == UnaryOp::Not)
      return a.is_point() ? decided(*a.lo == 0) : kBool;
    Wide w = widen(a);
    return result(narrow({-w.hi, -w.lo}));
  }
  case ExprKind::Binary: {
    auto* b = e->as<Binary>();
    Interval a = bounds_of(b->a, env), c = bounds_of(b->b, env);
    if (is_comparison(b->op)) {
      if (!b->a->type.is_int() && !b->a->type.is_bool())
        return kBool;
      return compare(b->op, a, c);
    }
    Wide x = widen(a), y = widen(c);
    switch (b->op) {
    case BinaryOp::And:
      if (a == decided(false) || c == decided(false)) return decided(false);
      if (a == decided(true) && c == decided(true)) return decided(true);
      return kBool;
    case BinaryOp::Or:
      if (a == decided(true) || c == decided(true)) return decided(true);
      if (a == decided(false) && c == decided(false)) return decided(false);
      return kBool;
    case BinaryOp::Add: return result(narrow({clamp(x.lo + y.lo), clamp(x.hi + y.hi)}));
    case BinaryOp::Sub: return result(narrow({clamp(x.lo - y.hi), clamp(x.hi - y.lo)}));
    case BinaryOp::Mul: return result(narrow(corners(x, y, [](I128 p, I128 q) { return p * q; })));
    case BinaryOp::Min: return result(narrow({std::min(x.lo, y.lo), std::min(x.hi, y.hi)}));
    case BinaryOp::Max: return result(narrow({std::max(x.lo, y.lo), std::max(x.hi, y.hi)}));
    case BinaryOp::Div:
    case BinaryOp::CeilDiv:
      // Monotone in each operand once the divisor is positive: the extremes are corners.
      if (y.lo < 1)
        return type_range;
      return result(narrow(corners(x, y, b->op == BinaryOp::Div ? floor_div : ceil_div)));
    case BinaryOp::Mod:
      // Floor modulo by a positive divisor lies in [0, divisor - 1]; a non-negative dividend
      // below the smallest divisor is its own remainder.
      if (y.lo < 1)
        return type_range;
      if (x.lo >= 0 && x.hi < y.lo)
        return a;
      return result(narrow({0, clamp(y.hi - 1)}));
    default: return type_range;
    }
  }
  case ExprKind::Select: {
    auto* s = e->as<Select>();
    Interval c = bounds_of(s->cond, env);
    if (c.is_point())
      return bounds_of(*c.lo ? s->t : s->f, env);
    return result(bounds_of(s->t, env).hull(bounds_of(s->f, env)));
  }
  case ExprKind::Cast: {
    auto* c = e->as<Cast>();
    if (e->type.is_bool()) {
      if (!c->value->type.is_int() && !c->value->type.is_bool())
        return kBool;
      Interval a = bounds_of(c->value, env);
      if (!a.contains(0))
        return decided(true);
      return a.is_point() ? decided(false) : kBool;
    }
    if (!c->value->type.is_int() && !c->value->type.is_bool())
      return type_range; // float -> int truncates an unknown value
    Interval a = bounds_of(c->value, env);
    // A value outside the target type wraps: nothing is known then.
    return a.intersect(type_range) == a ? a : type_range;
  }
  case ExprKind::Call: {
    auto* c = e->as<Call>();
    if (c->fn != Intrinsic::Abs || !e->type.is_int())
      return type_range;
    Wide w = widen(bounds_of(c->args[0], env));
    if (w.lo >= 0)
      return result(narrow(w));
    if (w.hi <= 0)
      return result(narrow({-w.hi, -w.lo}));
    return result(narrow({0, std::max(-w.lo, w.hi)}));
  }
  default: return type_range; // loads: any value of the type
  }
}

RangeEnv kernel_ranges(const Kernel& k) {
  RangeEnv env;
  for (const auto& d : k.dims) {
    if (d.var->kind == VarKind::ValueParam && !d.values.empty()) {
      auto [lo, hi] = std::minmax_element(d.values.begin(), d.values.end());
      env.set(d.var.get(), Interval::of(*lo, *hi));
      continue;
    }
    Interval r = Interval::at_least(0);
    if (d.min)
      r.lo = std::max<int64_t>(0, *d.min);
    if (d.max)
      r.hi = *d.max;
    env.set(d.var.get(), r);
  }
  for (const auto& g : k.grid) {
    Interval ext = bounds_of(g.extent, env);
    Interval r = Interval::at_least(0);
    if (ext.hi)
      r.hi = std::max<int64_t>(0, *ext.hi - 1);
    env.set(g.index.get(), r);
  }
  return env;
}

// ---- symbolic bounds -------------------------------------------------------------------------

bool mentions(const Expr& e, const TileVars& tile) {
  Mentions m;
  m.tile = &tile;
  m.visit(e);
  return m.found;
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
  I128 s = 0;
  for (const auto& [v, c] : coeffs) {
    const Interval& r = tile.at(v);
    I128 a = static_cast<I128>(c) * *r.lo, b = static_cast<I128>(c) * *r.hi;
    s += max ? std::max(a, b) : std::min(a, b);
  }
  return static_cast<int64_t>(clamp(s)); // tile extents are small; clamping never bites
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
  return simplify(p);
}

} // namespace tilegen::passes
