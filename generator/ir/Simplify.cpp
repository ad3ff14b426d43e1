#include "ir/Simplify.h"

#include "ir/FloatBits.h"
#include "ir/IRMutator.h"

#include <cmath>
#include <limits>

namespace tilegen::ir {

namespace {

// Range of an integer type, for overflow checks of folded values.
bool fits(DType t, __int128 v) {
  switch (t.kind) {
  case ScalarKind::I8: return v >= -128 && v <= 127;
  case ScalarKind::I32: return v >= INT32_MIN && v <= INT32_MAX;
  case ScalarKind::I64: return v >= INT64_MIN && v <= INT64_MAX;
  case ScalarKind::U8: return v >= 0 && v <= 255;
  case ScalarKind::U16: return v >= 0 && v <= 65535;
  case ScalarKind::U32: return v >= 0 && v <= UINT32_MAX;
  case ScalarKind::U64: return v >= 0 && v <= static_cast<__int128>(UINT64_MAX);
  default: return false;
  }
}

__int128 floor_div(__int128 a, __int128 b) {
  __int128 q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

// Folds an integer binary op; nullopt when the result is undefined or does not fit.
// `bits` is the operands' width (shifts wrap to it).
std::optional<__int128> fold_int(BinaryOp op, __int128 a, __int128 b, int bits) {
  switch (op) {
  case BinaryOp::Add: return a + b;
  case BinaryOp::Sub: return a - b;
  case BinaryOp::Mul: return a * b; // operands are <= 64 bits: the product fits in 128
  case BinaryOp::Div:
    if (b == 0)
      return std::nullopt;
    return floor_div(a, b);
  case BinaryOp::Mod:
    if (b == 0)
      return std::nullopt;
    return a - b * floor_div(a, b);
  case BinaryOp::CeilDiv:
    if (b == 0)
      return std::nullopt;
    return -floor_div(-a, b);
  case BinaryOp::Min: return a < b ? a : b;
  case BinaryOp::Max: return a > b ? a : b;
  case BinaryOp::Eq: return a == b;
  case BinaryOp::Ne: return a != b;
  case BinaryOp::Lt: return a < b;
  case BinaryOp::Le: return a <= b;
  case BinaryOp::Gt: return a > b;
  case BinaryOp::Ge: return a >= b;
  case BinaryOp::And: return (a != 0) && (b != 0);
  case BinaryOp::Or: return (a != 0) || (b != 0);
  case BinaryOp::BitAnd: return a & b; // two's complement, as the narrower type's
  case BinaryOp::BitOr: return a | b;
  case BinaryOp::BitXor: return a ^ b;
  case BinaryOp::Shl:
  case BinaryOp::Shr:
    return shift_value(op, static_cast<int64_t>(a), static_cast<int64_t>(b), bits);
  }
  return std::nullopt;
}

// The same on an unsigned `bits`-wide type (operands are its values): arithmetic wraps modulo
// 2^bits, / and % are C's on non-negative values, shifts are logical. nullopt for a zero
// divisor (its run-time value is the backends' business).
std::optional<__int128> fold_uint(BinaryOp op, __int128 x, __int128 y, int bits) {
  const uint64_t a = static_cast<uint64_t>(x), b = static_cast<uint64_t>(y);
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  uint64_t r = 0;
  switch (op) {
  case BinaryOp::Add: r = a + b; break;
  case BinaryOp::Sub: r = a - b; break;
  case BinaryOp::Mul: r = a * b; break;
  case BinaryOp::Div:
    if (b == 0)
      return std::nullopt;
    r = a / b;
    break;
  case BinaryOp::Mod:
    if (b == 0)
      return std::nullopt;
    r = a % b;
    break;
  case BinaryOp::Shl:
  case BinaryOp::Shr:
    r = static_cast<uint64_t>(
        ushift_value(op, static_cast<int64_t>(a), static_cast<int64_t>(b), bits));
    break;
  case BinaryOp::CeilDiv: return std::nullopt; // the front end computes cdiv in i64
  default: return fold_int(op, x, y, bits);    // comparisons, min/max, & | ^: as values
  }
  return static_cast<__int128>(r & mask);
}

std::optional<__int128> fold_any(BinaryOp op, __int128 a, __int128 b, DType t) {
  return t.is_unsigned() ? fold_uint(op, a, b, t.bits()) : fold_int(op, a, b, t.bits());
}

std::optional<bool> fold_float_cmp(BinaryOp op, double a, double b) {
  switch (op) {
  case BinaryOp::Eq: return a == b;
  case BinaryOp::Ne: return a != b;
  case BinaryOp::Lt: return a < b;
  case BinaryOp::Le: return a <= b;
  case BinaryOp::Gt: return a > b;
  case BinaryOp::Ge: return a >= b;
  default: return std::nullopt;
  }
}

// An integer constant's value (a u64's as the unsigned value, not its bit pattern).
std::optional<__int128> int_value(const Expr& e) {
  if (auto i = e->as<IntImm>())
    return i->type == DType::u64() ? static_cast<__int128>(static_cast<uint64_t>(i->value))
                                   : static_cast<__int128>(i->value);
  if (auto b = e->as<BoolImm>())
    return b->value ? 1 : 0;
  return std::nullopt;
}

bool is_int_const(const Expr& e, int64_t v) {
  auto i = e->as<IntImm>();
  return i && i->value == v;
}
bool is_float_const(const Expr& e, double v) {
  auto f = e->as<FloatImm>();
  // +0.0 only: x - (-0.0) is not x for x = -0.0.
  return f && f->value == v && !std::signbit(f->value);
}
bool is_bool_const(const Expr& e, bool v) {
  auto b = e->as<BoolImm>();
  return b && b->value == v;
}

class Simplifier : public IRMutator {
protected:
  Expr mutate_Unary(const Unary* n, const Expr& self) override {
    Expr e = IRMutator::mutate_Unary(n, self);
    auto u = e->as<Unary>();
    if (!u)
      return e;
    if (u->op == UnaryOp::Not) {
      if (auto b = u->a->as<BoolImm>())
        return BoolImm::make(!b->value, u->loc);
      if (auto inner = u->a->as<Unary>(); inner && inner->op == UnaryOp::Not)
        return inner->a;
      return e;
    }
    if (u->op == UnaryOp::BitNot) {
      if (auto i = u->a->as<IntImm>()) // in range: ~v = -v - 1 (signed), 2^n - 1 - v (unsigned)
        return IntImm::make(u->type, wrap_int(u->type, ~i->value), u->loc);
      return e;
    }
    if (auto i = u->a->as<IntImm>(); i && u->type.is_unsigned()) // wraps modulo 2^n
      return IntImm::make(u->type, wrap_int(u->type, static_cast<int64_t>(0 - static_cast<uint64_t>(i->value))), u->loc);
    if (auto i = u->a->as<IntImm>()) {
      if (fits(u->type, -static_cast<__int128>(i->value)))
        return IntImm::make(u->type, -i->value, u->loc);
      return e;
    }
    if (auto f = u->a->as<FloatImm>())
      return FloatImm::make(u->type, -f->value, u->loc); // exact in every float type
    return e;
  }

  Expr mutate_Binary(const Binary* n, const Expr& self) override {
    Expr e = IRMutator::mutate_Binary(n, self);
    auto bin = e->as<Binary>();
    if (!bin)
      return e;
    const Expr &a = bin->a, &b = bin->b;
    const DType t = a->type;
    const BinaryOp op = bin->op;

    // Both constant.
    auto ia = int_value(a), ib = int_value(b);
    if (ia && ib && (t.is_int() || t.is_bool())) {
      if (auto r = fold_any(op, *ia, *ib, t)) {
        if (bin->type.is_bool())
          return BoolImm::make(*r != 0, bin->loc);
        if (fits(bin->type, *r))
          return IntImm::make(bin->type, static_cast<int64_t>(*r), bin->loc);
      }
      return e;
    }
    auto fa = a->as<FloatImm>(), fb = b->as<FloatImm>();
    if (fa && fb) {
      if (auto c = fold_float_cmp(op, fa->value, fb->value))
        return BoolImm::make(*c, bin->loc);
      // +,-,*,/ of two floats computed in double and rounded once to the type are the
      // correctly rounded result for f32 (and exact for f64 itself); not for bf16/f16,
      // whose arithmetic does not exist (the front end computes in f32).
      if (t == DType::f32() || t == DType::f64()) {
        double x = fa->value, y = fb->value, r;
        switch (op) {
        case BinaryOp::Add: r = x + y; break;
        case BinaryOp::Sub: r = x - y; break;
        case BinaryOp::Mul: r = x * y; break;
        case BinaryOp::Div: r = x / y; break;
        default: return e;
        }
        return FloatImm::make(t, round_to_float_type(r, t), bin->loc);
      }
      return e;
    }

    // Identities.
    const bool is_int = t.is_int();
    switch (op) {
    case BinaryOp::Add:
      if (is_int && is_int_const(b, 0))
        return a;
      if (is_int && is_int_const(a, 0))
        return b;
      break;
    case BinaryOp::Sub:
      if (is_int_const(b, 0) || is_float_const(b, 0.0))
        return a;
      break;
    case BinaryOp::Mul:
      if (is_int_const(b, 1) || is_float_const(b, 1.0))
        return a;
      if (is_int_const(a, 1) || is_float_const(a, 1.0))
        return b;
      if (is_int && (is_int_const(a, 0) || is_int_const(b, 0)))
        return IntImm::make(t, 0, bin->loc);
      break;
    case BinaryOp::Div:
    case BinaryOp::CeilDiv:
      if (is_int_const(b, 1) || is_float_const(b, 1.0))
        return a;
      break;
    case BinaryOp::Mod:
      if (is_int_const(b, 1))
        return IntImm::make(t, 0, bin->loc);
      break;
    case BinaryOp::And:
      if (is_bool_const(a, true))
        return b;
      if (is_bool_const(b, true))
        return a;
      if (is_bool_const(a, false) || is_bool_const(b, false))
        return BoolImm::make(false, bin->loc);
      break;
    case BinaryOp::Or:
      if (is_bool_const(a, false))
        return b;
      if (is_bool_const(b, false))
        return a;
      if (is_bool_const(a, true) || is_bool_const(b, true))
        return BoolImm::make(true, bin->loc);
      break;
    case BinaryOp::Min:
    case BinaryOp::Max:
      if (a == b)
        return a;
      break;
    default: break;
    }
    return e;
  }

  Expr mutate_Select(const Select* n, const Expr& self) override {
    Expr e = IRMutator::mutate_Select(n, self);
    auto s = e->as<Select>();
    if (!s)
      return e;
    if (auto c = s->cond->as<BoolImm>())
      return c->value ? s->t : s->f;
    if (s->t == s->f)
      return s->t;
    return e;
  }

  Expr mutate_Cast(const Cast* n, const Expr& self) override {
    Expr e = IRMutator::mutate_Cast(n, self);
    auto c = e->as<Cast>();
    if (!c)
      return e;
    const DType to = c->type;
    const Expr& v = c->value;
    if (v->type == to)
      return v;
    if (to.is_bool()) {
      if (auto i = int_value(v))
        return BoolImm::make(*i != 0, c->loc);
      if (auto f = v->as<FloatImm>())
        return BoolImm::make(f->value != 0.0, c->loc);
      return e;
    }
    if (auto i = int_value(v)) {
      if (to.is_unsigned() || (to.is_int() && v->type.is_unsigned())) // int -> int wraps
        return IntImm::make(to, wrap_int(to, static_cast<int64_t>(static_cast<uint64_t>(*i))), c->loc);
      if (to.is_int())
        return fits(to, *i) ? IntImm::make(to, static_cast<int64_t>(*i), c->loc) : e;
      return FloatImm::make(to, round_to_float_type(static_cast<double>(*i), to), c->loc);
    }
    if (auto f = v->as<FloatImm>()) {
      if (to.is_float())
        return FloatImm::make(to, round_to_float_type(f->value, to), c->loc);
      // float -> int truncates; only fold when the result is defined and fits.
      if (std::isfinite(f->value)) {
        double tr = std::trunc(f->value);
        if (tr >= -9.2e18 && tr <= 9.2e18 && fits(to, static_cast<__int128>(tr)))
          return IntImm::make(to, static_cast<int64_t>(tr), c->loc);
      }
      return e;
    }
    return e;
  }

  Stmt mutate_IfThenElse(const IfThenElse* n, const Stmt& self) override {
    Stmt s = IRMutator::mutate_IfThenElse(n, self);
    auto i = s->as<IfThenElse>();
    if (!i)
      return s;
    if (auto c = i->cond->as<BoolImm>()) {
      if (c->value)
        return i->then_case;
      return i->else_case ? i->else_case : Seq::make({}, i->loc);
    }
    return s;
  }

  Stmt mutate_For(const For* n, const Stmt& self) override {
    Stmt s = IRMutator::mutate_For(n, self);
    if (auto f = s->as<For>(); f && is_int_const(f->extent, 0))
      return Seq::make({}, f->loc);
    return s;
  }
};

} // namespace

Expr simplify(const Expr& e) { return Simplifier().mutate(e); }
Stmt simplify(const Stmt& s) { return Simplifier().mutate(s); }
Kernel simplify(const Kernel& k) { return Simplifier().mutate_kernel(k); }

std::optional<int64_t> as_const_int(const Expr& e) {
  if (!e)
    return std::nullopt;
  Expr s = simplify(e);
  if (auto i = s->as<IntImm>())
    return i->value;
  if (auto b = s->as<BoolImm>())
    return b->value ? 1 : 0;
  return std::nullopt;
}

bool is_const_int(const Expr& e, int64_t v) {
  auto c = as_const_int(e);
  return c && *c == v;
}

bool is_const_zero(const Expr& e) {
  if (!e)
    return true;
  if (auto* f = e->as<FloatImm>())
    return f->value == 0.0 && !std::signbit(f->value);
  if (auto* i = e->as<IntImm>())
    return i->value == 0;
  if (auto* c = e->as<Cast>())
    return is_const_zero(c->value);
  return false;
}

namespace {

std::optional<__int128> eval(const Expr& e, const std::map<const Var*, int64_t>& env) {
  switch (e->kind) {
  case ExprKind::IntImm: return int_value(e);
  case ExprKind::BoolImm: return e->as<BoolImm>()->value ? 1 : 0;
  case ExprKind::VarRef: {
    auto it = env.find(e->as<VarRef>()->var.get());
    if (it == env.end() || !(e->type.is_int() || e->type.is_bool()))
      return std::nullopt;
    return it->second;
  }
  case ExprKind::Unary: {
    const Unary* u = e->as<Unary>();
    auto a = eval(u->a, env);
    if (!a)
      return std::nullopt;
    if (u->op == UnaryOp::Not)
      return *a == 0 ? 1 : 0;
    if (u->op == UnaryOp::BitNot)
      return u->type.is_unsigned() ? ((static_cast<__int128>(1) << u->type.bits()) - 1) - *a : ~*a;
    if (u->type.is_unsigned())
      return fold_uint(BinaryOp::Sub, 0, *a, u->type.bits());
    if (!fits(u->type, -*a))
      return std::nullopt;
    return -*a;
  }
  case ExprKind::Binary: {
    const Binary* b = e->as<Binary>();
    if (!(b->a->type.is_int() || b->a->type.is_bool()))
      return std::nullopt;
    auto x = eval(b->a, env);
    if (x && (b->op == BinaryOp::And || b->op == BinaryOp::Or) && ((*x != 0) == (b->op == BinaryOp::Or)))
      return b->op == BinaryOp::Or ? 1 : 0; // false && y, true || y: simplify folds these too
    auto y = eval(b->b, env);
    if (!x || !y)
      return std::nullopt;
    auto r = fold_any(b->op, *x, *y, b->a->type);
    if (!r)
      return std::nullopt;
    if (b->type.is_bool())
      return *r != 0 ? 1 : 0;
    if (!fits(b->type, *r))
      return std::nullopt;
    return r;
  }
  case ExprKind::Select: {
    const Select* s = e->as<Select>();
    if (!(s->type.is_int() || s->type.is_bool()))
      return std::nullopt;
    auto c = eval(s->cond, env);
    if (!c)
      return std::nullopt;
    return eval(*c != 0 ? s->t : s->f, env);
  }
  default: return std::nullopt;
  }
}

} // namespace

std::optional<int64_t> eval_int(const Expr& e, const std::map<const Var*, int64_t>& env) {
  auto v = eval(e, env);
  if (!v)
    return std::nullopt;
  return static_cast<int64_t>(*v);
}

} // namespace tilegen::ir
