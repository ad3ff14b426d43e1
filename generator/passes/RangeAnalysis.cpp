// Interval arithmetic on the IR's integer expressions (bounds_of), the ranges of a kernel's
// variables, and pruning of decided conditions. The per-tile half is RangeTile.cpp.
#include "passes/RangeAnalysis.h"

#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
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

} // namespace

// ---- Interval --------------------------------------------------------------------------------

Interval Interval::of_type(DType t) {
  if (t.is_bool())
    return kBool;
  if (t == DType::i8())
    return of(-128, 127);
  if (t == DType::i32())
    return of(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  if (t == DType::u8())
    return of(0, 255);
  if (t == DType::u16())
    return of(0, 65535);
  if (t == DType::u32())
    return of(0, std::numeric_limits<uint32_t>::max());
  return everything(); // i64, and u64 (values past 2^63 are negative bit patterns here)
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

const Expr* RangeEnv::upper_of(const Var* v) const {
  auto it = uppers_.find(v);
  return it == uppers_.end() ? nullptr : &it->second;
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
  // Unsigned arithmetic wraps modulo 2^n by definition (0u - 1u is the maximum): the interval
  // rules above assume no overflow, so an unsigned result is only known to be in its type.
  if (e->type.is_unsigned() && e->kind != ExprKind::VarRef) {
    if (auto i = e->as<IntImm>(); i && i->value >= 0)
      return Interval::point(i->value);
    if (auto c = e->as<Cast>(); c && c->value->type.is_int()) { // an in-range value converts exactly
      Interval a = bounds_of(c->value, env);
      return a.intersect(type_range) == a ? a : type_range;
    }
    // Operators that cannot wrap: their result lies between 0 and the largest operand value
    // (a logical shift or a division only shrinks a value, and is 0 past the width or for a
    // zero divisor, docs/spec.md; a % 0 is a), or is one of the operands (min, max).
    if (auto b = e->as<Binary>()) {
      const Interval x = bounds_of(b->a, env), y = bounds_of(b->b, env);
      if (!x.bounded() || !y.bounded() || *x.lo < 0 || *y.lo < 0) // a u64 past int64
        return type_range;
      switch (b->op) {
      case BinaryOp::BitAnd:
        return Interval::of(0, std::min(*x.hi, *y.hi));
      case BinaryOp::Shr:
      case BinaryOp::Div:
      case BinaryOp::Mod:
        return Interval::of(0, *x.hi);
      case BinaryOp::Min:
        return Interval::of(std::min(*x.lo, *y.lo), std::min(*x.hi, *y.hi));
      case BinaryOp::Max:
        return Interval::of(std::max(*x.lo, *y.lo), std::max(*x.hi, *y.hi));
      default: break;
      }
    }
    return type_range;
  }
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
    if (u->op == UnaryOp::BitNot) // ~x = -x - 1
      return result(narrow({-w.hi - 1, -w.lo - 1}));
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
    case BinaryOp::Shr:
      // x >> n for a count n >= 0 is floor(x / 2^n), signed (arithmetic, sign fill past the
      // width) or unsigned (docs/spec.md "Bitwise operators"): monotone in each operand.
      if (y.lo < 0)
        return type_range;
      return result(narrow(corners(x, y, [](I128 p, I128 q) {
        return p >= kPosInf || p <= kNegInf ? p : p >> std::min<I128>(q, 126); // inf stays inf
      })));
    case BinaryOp::BitAnd:
      // A non-negative operand bounds the result to [0, its maximum] (masks: `q & 15`).
      if (x.lo >= 0 && y.lo >= 0)
        return result(narrow({0, std::min(x.hi, y.hi)}));
      if (x.lo >= 0 || y.lo >= 0)
        return result(narrow({0, x.lo >= 0 ? x.hi : y.hi}));
      return type_range;
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
    env.set_upper(g.index.get(), g.extent);
  }
  return env;
}

namespace {

class BodyRanges : public IRVisitor {
public:
  RangeEnv env;

protected:
  void visit_For(const For* f) override {
    Interval s = bounds_of(f->start, env), e = bounds_of(f->extent, env);
    Interval r;
    r.lo = s.lo;
    if (s.hi && e.hi && *e.hi >= 1)
      r.hi = *s.hi + (*e.hi - 1);
    env.set(f->var.get(), r);
    if (is_const_int(f->start, 0))
      env.set_upper(f->var.get(), f->extent);
    IRVisitor::visit_For(f);
  }
  void visit_Parallel(const Parallel* p) override {
    for (size_t i = 0; i < p->vars.size(); ++i) {
      Interval e = bounds_of(p->extents[i], env);
      env.set(p->vars[i].get(), e.hi ? Interval::of(0, std::max<int64_t>(0, *e.hi - 1))
                                      : Interval::at_least(0));
    }
    IRVisitor::visit_Parallel(p);
  }
  void visit_LetStmt(const LetStmt* l) override {
    env.bind_let(l->var.get(), l->value);
    IRVisitor::visit_LetStmt(l);
  }
};

class Prune : public IRMutator {
public:
  const RangeEnv* env = nullptr;

protected:
  Expr decided_or(const Expr& e) {
    Interval r = bounds_of(e, *env);
    return r.is_point() ? BoolImm::make(*r.lo != 0, e->loc) : e;
  }
  // v < bound (or bound > v) where env knows v < bound; the same negated.
  std::optional<bool> below_upper(const Binary* n) {
    const Expr *var = &n->a, *bound = &n->b;
    bool holds;
    switch (n->op) {
    case BinaryOp::Lt: holds = true; break;
    case BinaryOp::Ge: holds = false; break;
    case BinaryOp::Gt: holds = true, std::swap(var, bound); break;
    case BinaryOp::Le: holds = false, std::swap(var, bound); break;
    default: return std::nullopt;
    }
    auto* v = (*var)->as<VarRef>();
    const Expr* u = v ? env->upper_of(v->var.get()) : nullptr;
    if (u && to_string(*u) == to_string(*bound))
      return holds;
    return std::nullopt;
  }
  Expr mutate_Binary(const Binary* b, const Expr& self) override {
    Expr e = IRMutator::mutate_Binary(b, self);
    auto* n = e->as<Binary>();
    if (!n || !(is_comparison(n->op) || is_logical(n->op)) ||
        !(n->a->type.is_int() || n->a->type.is_bool()))
      return e;
    if (auto known = below_upper(n))
      return BoolImm::make(*known, e->loc);
    return decided_or(e);
  }
};

} // namespace

RangeEnv body_ranges(const Kernel& k) {
  BodyRanges b;
  b.env = kernel_ranges(k);
  b.visit(k.body);
  return b.env;
}

Expr prune_decided(const Expr& e, const RangeEnv& env) {
  Prune p;
  p.env = &env;
  return simplify(p.mutate(e));
}

} // namespace tilegen::passes
