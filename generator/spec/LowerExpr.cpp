// Lowering of expressions: name resolution through Scope, typing, Cast insertion, constant
// folding of integer arithmetic (overflow is a located error); at the end, packed-type element
// reads and codes and the narrow-float bitcasts (docs/spec.md "Packed types", "bitcast").
#include "spec/LowerContext.h"

#include "spec/ExprParser.h"
#include "spec/YamlAccess.h"
#include "support/InternalError.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

namespace tilegen::spec {

using ir::DType;
using ir::Expr;

// ---------------------------------------------------------------------------------------------
// Helpers

namespace {

int rank_of(DType t) {
  if (t.is_bool())
    return 0;
  if (t == DType::i8())
    return 1;
  if (t == DType::i32() || t.is_narrow_unsigned() || t == DType::u32())
    return 2;
  if (t == DType::i64() || t == DType::u64())
    return 3;
  if (t == DType::f32() || t.is_narrow_float())
    return 5;
  return 6; // f64
}

// The common arithmetic type of two non-bool types: 16- and 8-bit floats compute in f32, u8 and
// u16 in u32. A signed and an unsigned integer have none (mixed_signs refuses them first).
DType common_type(DType a, DType b) {
  DType t = rank_of(a) >= rank_of(b) ? a : b;
  if (t.is_narrow_float())
    t = DType::f32();
  if (t.is_narrow_unsigned())
    t = DType::u32();
  return t;
}

// A signed and an unsigned integer operand (docs/spec.md "Unsigned integers"): no implicit
// conversion, C's usual arithmetic conversions are a famous trap.
bool mixed_signs(DType a, DType b) {
  return (a.is_signed_int() && b.is_unsigned()) || (a.is_unsigned() && b.is_signed_int());
}

Expr cast_to(DType t, Expr e) {
  if (e->type == t)
    return e;
  // Integer literals convert exactly to f32/f64 and to narrower ints that hold them: fold, so
  // that `fill: {value: 0}` reads as 0.0 in dumps. Float literals are left to a Cast (rounding
  // to 16 bits is the backends' business).
  if (auto i = e->as<ir::IntImm>()) {
    if ((t == DType::f32() || t == DType::f64()) && i->value > -(int64_t{1} << 24) &&
        i->value < (int64_t{1} << 24))
      return ir::FloatImm::make(t, static_cast<double>(i->value), e->loc);
    if ((t == DType::i32() && i->value >= INT32_MIN && i->value <= INT32_MAX) ||
        (t == DType::i8() && i->value >= -128 && i->value <= 127))
      return ir::IntImm::make(t, i->value, e->loc);
    if (t.is_unsigned() && i->type.is_signed_int()) // wraps, as the conversion does
      return ir::IntImm::make(t, ir::wrap_int(t, i->value), e->loc);
  }
  return ir::Cast::make(t, e, e->loc);
}

// Arithmetic happens in f32 for 16-bit floats, in u32 for u8/u16 (docs/internals.md "Typing").
Expr widen(Expr e) {
  if (e && e->type.is_narrow_float())
    return cast_to(DType::f32(), e);
  if (e && e->type.is_narrow_unsigned())
    return cast_to(DType::u32(), e);
  return e;
}

// An integer literal (i64 constant) next to an unsigned operand takes that operand's type when
// its value fits: `x & 15`, `x < 256`, `x >> 4` need no cast (docs/spec.md "Unsigned integers").
void adopt_literal(Expr& lit, const Expr& other) {
  auto i = lit->as<ir::IntImm>();
  const DType t = other->type.is_narrow_unsigned() ? DType::u32() : other->type;
  if (!i || i->type != DType::i64() || !t.is_unsigned() || i->value < 0 ||
      (t.bits() < 64 && i->value > int64_t{UINT32_MAX}))
    return;
  lit = ir::IntImm::make(t, i->value, lit->loc);
}

// Floor division / modulo of int64 with overflow and zero checks.
bool fold_int(const std::string& op, int64_t a, int64_t b, int64_t& r, std::string& why) {
  if (op == "&")
    return r = a & b, true;
  if (op == "|")
    return r = a | b, true;
  if (op == "^")
    return r = a ^ b, true;
  if (op == "<<" || op == ">>")
    return r = ir::shift_value(op == "<<" ? ir::BinaryOp::Shl : ir::BinaryOp::Shr, a, b, 64), true;
  if (op == "+")
    return !__builtin_add_overflow(a, b, &r) || (why = "integer overflow", false);
  if (op == "-")
    return !__builtin_sub_overflow(a, b, &r) || (why = "integer overflow", false);
  if (op == "*")
    return !__builtin_mul_overflow(a, b, &r) || (why = "integer overflow", false);
  if (op == "/" || op == "%" || op == "cdiv") {
    if (b == 0) {
      why = "division by zero";
      return false;
    }
    if (a == INT64_MIN && b == -1) {
      why = "integer overflow";
      return false;
    }
    int64_t q = a / b, m = a % b;
    if (m != 0 && ((m < 0) != (b < 0))) {
      --q;
      m += b;
    }
    if (op == "/")
      r = q;
    else if (op == "%")
      r = m;
    else {
      if (m != 0 && __builtin_add_overflow(q, 1, &q)) {
        why = "integer overflow";
        return false;
      }
      r = q; // ceil division = floor + (remainder != 0)
    }
    return true;
  }
  return false;
}

struct BinInfo {
  const char* spelling;
  ir::BinaryOp op;
};
constexpr BinInfo kBinOps[] = {
    {"+", ir::BinaryOp::Add}, {"-", ir::BinaryOp::Sub}, {"*", ir::BinaryOp::Mul},
    {"/", ir::BinaryOp::Div}, {"%", ir::BinaryOp::Mod}, {"==", ir::BinaryOp::Eq},
    {"!=", ir::BinaryOp::Ne}, {"<", ir::BinaryOp::Lt},  {"<=", ir::BinaryOp::Le},
    {">", ir::BinaryOp::Gt},  {">=", ir::BinaryOp::Ge}, {"&&", ir::BinaryOp::And},
    {"||", ir::BinaryOp::Or}, {"&", ir::BinaryOp::BitAnd}, {"|", ir::BinaryOp::BitOr},
    {"^", ir::BinaryOp::BitXor}, {"<<", ir::BinaryOp::Shl}, {">>", ir::BinaryOp::Shr},
};

// Expressions the generated host code evaluates at dispatch (with its checked int64 helpers,
// tilegen/dispatch.h, and the WebGPU module's exact JS arithmetic): no bitwise operators there.
const char* host_context(Where w) {
  switch (w) {
  case Where::TensorShape: return "a tensor shape";
  case Where::Grid: return "a grid extent";
  case Where::ShapeClass: return "a shape-class predicate";
  case Where::ScalarRequire: return "a scalar's 'require'";
  default: return nullptr;
  }
}

// The bool operator a bitwise one on bools was probably meant as.
const char* logical_for(const std::string& op) {
  return op == "&" ? "&&" : op == "|" ? "||" : op == "^" ? "!=" : op == "~" ? "!" : nullptr;
}

struct FnInfo {
  const char* name;
  ir::Intrinsic fn;
};
constexpr FnInfo kFns[] = {
    {"abs", ir::Intrinsic::Abs},     {"exp", ir::Intrinsic::Exp},   {"exp2", ir::Intrinsic::Exp2},
    {"log", ir::Intrinsic::Log},     {"log2", ir::Intrinsic::Log2}, {"sqrt", ir::Intrinsic::Sqrt},
    {"rsqrt", ir::Intrinsic::Rsqrt}, {"tanh", ir::Intrinsic::Tanh}, {"erf", ir::Intrinsic::Erf},
    {"floor", ir::Intrinsic::Floor}, {"ceil", ir::Intrinsic::Ceil},
};
constexpr const char* kCasts[] = {"f32", "f16", "bf16", "f64", "i32", "i64", "i8", "bool", "e4m3", "e5m2",
                                  "u8", "u16", "u32", "u64"};

std::vector<std::string> function_names() {
  std::vector<std::string> v = {"min", "max", "cdiv"};
  for (const auto& f : kFns)
    v.push_back(f.name);
  for (const char* c : kCasts)
    v.push_back(c);
  return v;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Folding and comparison helpers

std::optional<int64_t> Lowerer::const_int(const Expr& e) {
  if (!e)
    return std::nullopt;
  if (auto i = e->as<ir::IntImm>())
    return i->value;
  if (auto c = e->as<ir::Cast>())
    if (c->type.is_int())
      return const_int(c->value);
  return std::nullopt;
}

bool Lowerer::provably_different(const Expr& a, const Expr& b) {
  auto x = const_int(a), y = const_int(b);
  return x && y && *x != *y;
}

std::string Lowerer::show(const Expr& e) {
  if (!e)
    return "?";
  if (auto i = e->as<ir::IntImm>())
    return std::to_string(i->value);
  if (auto v = e->as<ir::VarRef>())
    return v->var->name;
  if (auto b = e->as<ir::Binary>()) {
    std::string op = ir::binary_op_name(b->op);
    if (b->op == ir::BinaryOp::Min || b->op == ir::BinaryOp::Max || b->op == ir::BinaryOp::CeilDiv)
      return op + "(" + show(b->a) + ", " + show(b->b) + ")";
    return "(" + show(b->a) + " " + op + " " + show(b->b) + ")";
  }
  if (auto c = e->as<ir::Cast>())
    return show(c->value);
  return "<expr>";
}

std::string Lowerer::show_shape(const std::vector<Expr>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + show(shape[i]);
  return s + "]";
}

// ---------------------------------------------------------------------------------------------
// Expressions

std::optional<DType> Lowerer::dtype(const TypeRef& t, const std::string& what) {
  auto it = binding_.find(t.name);
  if (it != binding_.end())
    return it->second;
  if (auto d = DType::from_name(t.name)) {
    if (d->is_bool()) {
      diag_.error(t.loc, what + " cannot be bool (bool is for flags and conditions)");
      return std::nullopt;
    }
    return d;
  }
  if (packed_from_name(t.name)) {
    diag_.error(t.loc, "'" + t.name + "' is a packed storage type of tensors only, not of " +
                           what + "; a tensor of it is read as " +
                           packed_value_type(*packed_from_name(t.name)).name() +
                           " (use u8, i32 or f32 here: a copy from the tensor converts)");
    return std::nullopt;
  }
  std::vector<std::string> names = {"f32", "f16", "bf16", "f64", "i8",  "i32", "i64",
                                    "e4m3", "e5m2", "u8",  "u16", "u32", "u64",
                                    "u4", "i4", "e2m1", "e8m0"};
  for (const auto& [k, v] : binding_)
    names.push_back(k);
  diag_.error(t.loc, "unknown dtype '" + t.name + "' for " + what + dtype_hint(t.name, names));
  return std::nullopt;
}

void Lowerer::unknown_name(const SExpr& e, const std::string& what) {
  if (const Symbol* old = scope.retired(e.name)) {
    diag_.error(e.op_loc, "use of " + std::string(sym_kind_name(old->kind)) + " '" + e.name +
                              "' out of its scope");
    diag_.note(old->loc, "'" + e.name + "' is declared here");
    return;
  }
  if (auto ahead = lets_ahead.lower_bound(e.name); ahead != lets_ahead.end() && ahead->first == e.name) {
    diag_.error(e.op_loc, "'" + e.name + "' is used before its let: a let names a value only "
                              "in the statements after it");
    diag_.note(ahead->second, "'" + e.name + "' is defined here: move this let above its first "
                                             "use");
    return;
  }
  // Past the error limit nothing is printed: skip the (quadratic in the worst case) search.
  std::string hint;
  if (diag_.error_count() < 20)
    hint = did_you_mean(e.name, scope.visible_names());
  diag_.error(e.op_loc, "unknown " + what + " '" + e.name + "'" + hint);
}

namespace {

// Which names each context may refer to, and the rule quoted when one is out of place. A row
// either lists the kinds allowed (`allow`) or the kinds refused (`refuse`); an empty `allow`
// with no `refuse` admits nothing (the pad value must be a literal).
struct NameRule {
  Where where;
  std::vector<SymKind> allow;
  std::vector<SymKind> refuse;
  const char* rule;
};

const std::vector<NameRule>& name_rules() {
  static const std::vector<NameRule> rules = {
      {Where::TensorShape,
       {SymKind::Dim, SymKind::ValueParam},
       {},
       "tensor shapes may use params only"},
      {Where::BufferShape,
       {SymKind::TileConst, SymKind::ValueParam},
       {},
       "shapes of on-chip buffers may use tile constants, value params and integer literals only"},
      {Where::Extent,
       {SymKind::TileConst, SymKind::ValueParam},
       {},
       "parallel extents may use tile constants, value params and integer literals only"},
      {Where::Grid,
       {SymKind::Dim, SymKind::ValueParam, SymKind::TileConst},
       {},
       "grid extents may use params and tile constants only"},
      {Where::Threads,
       {SymKind::TileConst, SymKind::ValueParam},
       {},
       "the thread count may use tile constants and value params only"},
      {Where::Require,
       {SymKind::TileConst, SymKind::ValueParam, SymKind::Flag},
       {},
       "'require' predicates may use tile constants, value params and flags only"},
      {Where::ShapeClass,
       {SymKind::Dim, SymKind::ValueParam},
       {},
       "shape-class predicates may use params (dims and value params) only"},
      {Where::ScalarRequire,
       {SymKind::Scalar, SymKind::Dim, SymKind::ValueParam, SymKind::Flag},
       {},
       "a scalar's 'require' may use scalars, params and flags only"},
      {Where::Uniform,
       {},
       {SymKind::Buffer, SymKind::Tensor, SymKind::ParallelVar, SymKind::Let, SymKind::TypeParam},
       "conditions of 'if' must be uniform (params, flags, scalars, block and loop indices)"},
      {Where::Pad, {}, {}, "the pad value must be a constant"},
      {Where::Body, {}, {SymKind::TypeParam}, "a type parameter is not a value"},
  };
  return rules;
}

bool contains(const std::vector<SymKind>& v, SymKind k) {
  return std::find(v.begin(), v.end(), k) != v.end();
}

} // namespace

bool Lowerer::allowed(const Symbol& s, Where where, const SExpr& e) {
  for (const NameRule& r : name_rules()) {
    if (r.where != where)
      continue;
    bool ok = r.refuse.empty() ? contains(r.allow, s.kind) : !contains(r.refuse, s.kind);
    if (ok)
      return true;
    diag_.error(e.op_loc, std::string(r.rule) + "; '" + s.name + "' is a " + sym_kind_name(s.kind));
    if (where == Where::Uniform && (s.kind == SymKind::Tensor || s.kind == SymKind::Buffer))
      diag_.note(e.op_loc, "to run ops only where a value read from memory says so, use a 'for' "
                           "whose extent is 'cond ? 1 : 0' (its bounds may read tensors), or read "
                           "the value as a loop's 'start' (docs/spec.md \"Row ranges from data\")");
    return false;
  }
  ::tilegen::internal_error("Lowerer::allowed: no name rule for a context");
}

Expr Lowerer::expr(const SExpr& e, Where where) {
  Expr x = expr_typed(e, where);
  if (x && x->type.is_unsigned())
    if (const char* host = host_context(where)) {
      diag_.error(e.loc, std::string("an unsigned value (") + x->type.name() + ") is not allowed in " +
                             host + ", which the host evaluates at dispatch in i64; unsigned "
                             "integers are kernel-side (docs/spec.md \"Unsigned integers\")");
      return nullptr;
    }
  return x;
}

Expr Lowerer::expr_typed(const SExpr& e, Where where) {
  switch (e.kind) {
  case EKind::Int:
    return ir::make_i64(e.ival, e.loc);
  case EKind::Float:
    return ir::make_f32(e.fval, e.loc);
  case EKind::Bool:
    return ir::BoolImm::make(e.bval, e.loc);
  case EKind::Name:
    return name(e, where);
  case EKind::Index:
    return load(e, where);
  case EKind::Unary:
    return unary(e, where);
  case EKind::Binary:
    return binary(e, where);
  case EKind::Ternary:
    return ternary(e, where);
  case EKind::Call:
    return call(e, where);
  }
  return nullptr;
}

Expr Lowerer::index_expr(const SExpr& e, Where where, const std::string& what) {
  Expr x = expr(e, where);
  if (!x)
    return nullptr;
  if (!x->type.is_int()) {
    diag_.error(e.loc, what + " must be an integer, found " + x->type.name() +
                           (x->type.is_float() ? " (a float truncates toward zero with i32(x) or "
                                                 "i64(x); an index tensor is best declared i32)"
                                               : ""));
    return nullptr;
  }
  return cast_to(DType::i64(), x);
}

Expr Lowerer::convert(DType to, Expr v) { return cast_to(to, std::move(v)); }

Expr Lowerer::store_value(Expr v, DType to, const SExpr& e, const std::string& dst) {
  if (v->type.is_bool() && !to.is_bool()) {
    diag_.error(e.loc, std::string("cannot store a bool into ") + dst + " (" + to.name() +
                           "); a number is expected (write 'c ? 1 : 0')");
    return nullptr;
  }
  if (v->type.is_float() && to.is_int()) {
    diag_.error(e.loc, std::string("storing a value of type ") + v->type.name() + " into " + dst +
                           " (" + to.name() + ") needs an explicit cast, e.g. " + to.name() +
                           "(...)");
    return nullptr;
  }
  return cast_to(to, v);
}

Expr Lowerer::name(const SExpr& e, Where where) {
  const Symbol* s = scope.lookup(e.name);
  if (!s) {
    unknown_name(e, "name");
    return nullptr;
  }
  if (s->poisoned())
    return nullptr; // its declaration failed and was reported
  if (!allowed(*s, where, e))
    return nullptr;
  if (s->kind == SymKind::Tensor || s->kind == SymKind::Buffer) {
    diag_.error(e.op_loc, "'" + e.name + "' is a " + sym_kind_name(s->kind) +
                              "; read an element with " + e.name + "[...]");
    return nullptr;
  }
  return widen(ir::VarRef::make(s->var, e.loc));
}

const Symbol* Lowerer::buffer_symbol(const SExpr& e, const std::string& role) {
  const Symbol* s = scope.lookup(e.name);
  if (!s) {
    unknown_name(e, "buffer");
    return nullptr;
  }
  if (s->poisoned())
    return nullptr;
  if (s->kind != SymKind::Tensor && s->kind != SymKind::Buffer) {
    diag_.error(e.op_loc, role + " must be a tensor or buffer; '" + e.name + "' is a " +
                              sym_kind_name(s->kind));
    return nullptr;
  }
  return s;
}

Expr Lowerer::load(const SExpr& e, Where where) {
  const Symbol* s = scope.lookup(e.name);
  if (!s) {
    unknown_name(e, "buffer");
    return nullptr;
  }
  if (s->poisoned())
    return nullptr;
  if (s->kind != SymKind::Tensor && s->kind != SymKind::Buffer) {
    diag_.error(e.op_loc, "'" + e.name + "' is a " + sym_kind_name(s->kind) +
                              ", not a tensor or buffer; it cannot be indexed");
    return nullptr;
  }
  if (where != Where::Body) {
    allowed(*s, where, e);
    return nullptr;
  }
  const ir::Buffer& b = *s->buf;
  if (b.scope == ir::MemScope::Global && b.access == ir::Access::Write) {
    diag_.error(e.op_loc, "cannot read tensor '" + e.name + "' (declared access: write)");
    diag_.note(b.loc, "'" + e.name + "' is declared here; use access: readwrite to read it");
    return nullptr;
  }
  if (e.args.size() != b.rank()) {
    diag_.error(e.loc, "'" + e.name + "' has rank " + std::to_string(b.rank()) + " but " +
                           count_of(e.args.size(), "index", "indices") + " given");
    return nullptr;
  }
  std::vector<Expr> idx;
  for (const auto& a : e.args) {
    Expr i = index_expr(*a, where, "an index");
    if (!i)
      return nullptr;
    idx.push_back(i);
  }
  if (b.packed != ir::Packed::None) // bytes: the element's nibble or code, as its value type
    return packed_read(s->buf, std::move(idx), e.loc);
  return widen(ir::Load::make(s->buf, std::move(idx), e.loc));
}

Expr Lowerer::unary(const SExpr& e, Where where) {
  Expr a = expr(*e.args[0], where);
  if (!a)
    return nullptr;
  if (e.op == "!") {
    if (!a->type.is_bool()) {
      diag_.error(e.op_loc, std::string("operator '!' needs a bool, found ") + a->type.name());
      return nullptr;
    }
    if (auto b = a->as<ir::BoolImm>())
      return ir::BoolImm::make(!b->value, e.loc);
    return ir::Unary::make(ir::UnaryOp::Not, a, e.loc);
  }
  if (e.op == "~") {
    if (const char* host = host_context(where)) {
      diag_.error(e.op_loc, std::string("bitwise operator '~' is not allowed in ") + host +
                                ", which the host evaluates at dispatch; it may be used in the "
                                "kernel body, 'if' conditions and compile-time constants "
                                "(docs/spec.md \"Bitwise operators\")");
      return nullptr;
    }
    if (!a->type.is_int()) {
      diag_.error(e.op_loc, std::string("operator '~' needs an integer, found ") + a->type.name() +
                                " (bitwise operators take integer operands only" +
                                (a->type.is_bool() ? std::string("; did you mean '!'?)")
                                                   : std::string("; convert with i32(x) or i64(x))")));
      return nullptr;
    }
    if (auto i = a->as<ir::IntImm>())
      return ir::IntImm::make(i->type, ir::wrap_int(i->type, ~i->value), e.loc);
    return ir::Unary::make(ir::UnaryOp::BitNot, a, e.loc);
  }
  if (a->type.is_bool()) {
    diag_.error(e.op_loc, "operator '-' needs a number, found bool");
    return nullptr;
  }
  if (auto i = a->as<ir::IntImm>(); i && i->type.is_unsigned()) // wraps modulo 2^n
    return ir::IntImm::make(i->type, ir::wrap_int(i->type, static_cast<int64_t>(0 - static_cast<uint64_t>(i->value))), e.loc);
  if (a->type.is_unsigned()) // 0 - x, wrapping (WGSL has no unary minus on u32)
    return ir::Binary::make(ir::BinaryOp::Sub, ir::IntImm::make(a->type, 0, e.loc), a, e.loc);
  if (auto i = a->as<ir::IntImm>()) {
    if (i->value == INT64_MIN) { // -(-2^63): a folded operand, not a literal
      diag_.error(e.op_loc, "integer overflow in constant expression '" + e.text() + "'");
      return nullptr;
    }
    return ir::IntImm::make(i->type, -i->value, e.loc);
  }
  if (auto f = a->as<ir::FloatImm>())
    return ir::FloatImm::make(f->type, -f->value, e.loc);
  return ir::Unary::make(ir::UnaryOp::Neg, a, e.loc);
}

Expr Lowerer::binary(const SExpr& e, Where where) {
  Expr a = expr(*e.args[0], where);
  Expr b = a ? expr(*e.args[1], where) : nullptr;
  if (!a || !b)
    return nullptr;
  const BinInfo* info = nullptr;
  for (const auto& i : kBinOps)
    if (e.op == i.spelling)
      info = &i;
  if (!info) {
    diag_.error(e.op_loc, "unknown operator '" + e.op + "'");
    return nullptr;
  }
  bool logical = ir::is_logical(info->op);
  bool equality = info->op == ir::BinaryOp::Eq || info->op == ir::BinaryOp::Ne;
  if (ir::is_bitwise(info->op)) {
    if (const char* host = host_context(where)) {
      diag_.error(e.op_loc, "bitwise operator '" + e.op + "' is not allowed in " + host +
                                ", which the host evaluates at dispatch; it may be used in the "
                                "kernel body, 'if' conditions and compile-time constants "
                                "(docs/spec.md \"Bitwise operators\")");
      return nullptr;
    }
    if (!a->type.is_int() || !b->type.is_int()) {
      const bool bools = a->type.is_bool() && b->type.is_bool();
      const char* meant = logical_for(e.op);
      diag_.error(e.op_loc, "operator '" + e.op + "' needs integer operands, found " +
                                a->type.name() + " and " + b->type.name() +
                                " (bitwise operators take integers only" +
                                (bools && meant ? std::string("; did you mean '") + meant + "'?)"
                                 : a->type.is_bool() || b->type.is_bool()
                                     ? std::string(")")
                                     : std::string("; convert a float with i32(x) or i64(x))")));
      return nullptr;
    }
  } else if (logical) {
    if (!a->type.is_bool() || !b->type.is_bool()) {
      diag_.error(e.op_loc, "operator '" + e.op + "' needs bool operands, found " + a->type.name() +
                                " and " + b->type.name() +
                                (a->type.is_int() && b->type.is_int()
                                     ? std::string(" (for the bits of integers use '") +
                                           (e.op == "&&" ? "&" : "|") + "')"
                                     : std::string()));
      return nullptr;
    }
  } else if (equality && (a->type.is_bool() || b->type.is_bool())) {
    if (a->type.is_bool() != b->type.is_bool()) {
      diag_.error(e.op_loc, "operator '" + e.op + "' compares a bool with a number (" +
                                a->type.name() + " and " + b->type.name() + ")");
      return nullptr;
    }
  } else if (a->type.is_bool() || b->type.is_bool()) {
    diag_.error(e.op_loc, "operator '" + e.op + "' needs numbers, found " + a->type.name() +
                              " and " + b->type.name());
    return nullptr;
  } else if (info->op == ir::BinaryOp::Mod && (!a->type.is_int() || !b->type.is_int())) {
    diag_.error(e.op_loc, "operator '%' needs integers, found " + std::string(a->type.name()) +
                              " and " + b->type.name());
    return nullptr;
  }
  if (!logical && a->type.is_int() && b->type.is_int()) {
    adopt_literal(a, b);
    adopt_literal(b, a);
    if (mixed_signs(a->type, b->type)) {
      mixed_sign_error(e.op_loc, "operator '" + e.op + "'", a->type, b->type);
      return nullptr;
    }
  }
  // Fold integer constants; overflow and division by zero are user errors.
  auto x = a->as<ir::IntImm>(), y = b->as<ir::IntImm>();
  if (x && y && x->type == DType::i64() && y->type == DType::i64()) {
    int64_t r = 0;
    std::string why;
    if (ir::is_comparison(info->op) || logical) {
      // leave to later passes
    } else if (fold_int(e.op, x->value, y->value, r, why)) {
      return ir::make_i64(r, e.loc);
    } else {
      diag_.error(e.op_loc, why + " in constant expression '" + e.text() + "'");
      return nullptr;
    }
  }
  // An integer divisor that is the constant 0 is a mistake, although x / 0 has a value at run
  // time (docs/spec.md "Operators and typing"); instantiation reports divisors that become 0.
  if ((info->op == ir::BinaryOp::Div || info->op == ir::BinaryOp::Mod) && a->type.is_int() &&
      b->type.is_int() && const_int(b) == 0) {
    diag_.error(e.args[1]->loc, "integer division by zero: the divisor of '" + e.op + "' is 0");
    return nullptr;
  }
  if (!a->type.is_bool() && !b->type.is_bool()) {
    DType t = common_type(a->type, b->type);
    a = cast_to(t, a);
    b = cast_to(t, b);
  }
  return ir::Binary::make(info->op, a, b, e.loc);
}

void Lowerer::mixed_sign_error(const SourceLoc& loc, const std::string& what, DType a, DType b) {
  const DType u = common_type(a.is_unsigned() ? a : b, a.is_unsigned() ? a : b);
  const DType i = a.is_unsigned() ? b : a;
  diag_.error(loc, what + " mixes signed and unsigned integers (" + a.name() + " and " + b.name() +
                       "); there is no implicit conversion between them: convert one side, " +
                       u.name() + "(x) for unsigned or " + i.name() +
                       "(x) for signed arithmetic (docs/spec.md \"Unsigned integers\")");
}

Expr Lowerer::ternary(const SExpr& e, Where where) {
  Expr c = expr(*e.args[0], where);
  Expr t = c ? expr(*e.args[1], where) : nullptr;
  Expr f = t ? expr(*e.args[2], where) : nullptr;
  if (!c || !t || !f)
    return nullptr;
  if (!c->type.is_bool()) {
    diag_.error(e.args[0]->loc,
                std::string("the condition of '?:' must be bool, found ") + c->type.name());
    return nullptr;
  }
  if (t->type.is_bool() != f->type.is_bool()) {
    diag_.error(e.op_loc, std::string("the arms of '?:' have incompatible types ") +
                              t->type.name() + " and " + f->type.name());
    return nullptr;
  }
  if (!t->type.is_bool()) {
    adopt_literal(t, f);
    adopt_literal(f, t);
    if (mixed_signs(t->type, f->type)) {
      mixed_sign_error(e.op_loc, "'?:'", t->type, f->type);
      return nullptr;
    }
    DType ty = common_type(t->type, f->type);
    t = cast_to(ty, t);
    f = cast_to(ty, f);
  }
  return ir::Select::make(c, t, f, e.loc);
}

// bitcast<T>(x): the bits of x as a T of the same width (docs/spec.md "bitcast").
Expr Lowerer::bitcast(const SExpr& e, Where where) {
  if (e.op.empty()) {
    diag_.error(e.op_loc, "'bitcast' needs its target type: write bitcast<T>(x), e.g. "
                          "bitcast<i32>(x) for the bits of an f32");
    return nullptr;
  }
  if (const char* host = host_context(where)) {
    diag_.error(e.loc, std::string("'bitcast' is not allowed in ") + host +
                           ", which the host evaluates at dispatch; it may be used in the kernel "
                           "body (docs/spec.md \"bitcast\")");
    return nullptr;
  }
  if (e.args.size() != 1) {
    diag_.error(e.loc, "'bitcast<" + e.op + ">' takes 1 argument, found " +
                           std::to_string(e.args.size()));
    return nullptr;
  }
  auto to = dtype(TypeRef{e.op, e.op_loc}, "the type of 'bitcast'");
  if (!to)
    return nullptr;
  Expr a = expr(*e.args[0], where);
  if (!a)
    return nullptr;
  // The argument's type as the spec sees it: a 16- or 8-bit float value is computed as f32, a
  // u8/u16 as u32, but its width is its own (the implicit widening keeps the value's location;
  // an explicit f32(h) spans the call).
  DType from = a->type;
  if (auto c = a->as<ir::Cast>(); c && (c->value->type.is_narrow_float() ||
                                        c->value->type.is_narrow_unsigned()) &&
                                  c->loc.line == c->value->loc.line &&
                                  c->loc.col == c->value->loc.col &&
                                  c->loc.length == c->value->loc.length)
    from = c->value->type;
  // An integer literal (i64) takes a 32-bit target's width when it fits i32.
  if (auto i = a->as<ir::IntImm>(); i && to->bits() == 32 && i->value >= INT32_MIN &&
                                     i->value <= INT32_MAX) {
    a = ir::IntImm::make(DType::i32(), i->value, a->loc);
    from = DType::i32();
  }
  if (from.is_bool() || to->bits() != from.bits()) {
    // The fix that keeps bit semantics: an integer argument narrowed or widened to the unsigned
    // type of the target's width, a float one converted to the float type of that width.
    const std::string T = to->name(), W = std::to_string(to->bits());
    std::string fix = "; bitcast reinterprets bits";
    if (from.is_int())
      fix += ": for the low " + W + " bits of an integer write bitcast<" + T + ">(u" + W + "(x))";
    else if (!from.is_bool() && to->is_int()) {
      const char* f = to->bits() == 8 ? "e4m3" : to->bits() == 16 ? "f16" : to->bits() == 32 ? "f32" : "f64";
      fix += ": for the bits of the value rounded to a " + W + "-bit float write bitcast<" + T + ">(" + f + "(x))";
    }
    diag_.error(e.loc, "bitcast<" + T + "> needs an argument of the same width: " + T + " is " + W +
                           " bits, the argument is " + from.name() +
                           (from.is_bool() ? "" : " (" + std::to_string(from.bits()) + " bits)") + fix +
                           "; to convert the value, use " + T + "(x)");
    return nullptr;
  }
  if (*to == from)
    return widen(a);
  // Two integers of one width: the wrapping conversion is the reinterpretation (u8 <-> i8,
  // u32 <-> i32, u64 <-> i64).
  if (from.is_int() && to->is_int())
    return widen(ir::Cast::make(*to, from != a->type ? a->as<ir::Cast>()->value : a, e.loc));
  // A narrow float and its unsigned partner (u16 <-> f16/bf16, u8 <-> e4m3/e5m2): the float
  // is held as f32 (exactly its value) and the unsigned as u32, so the encoding is computed
  // with integer operations (end of LowerExpr.cpp), the same on every backend.
  if (from.is_narrow_float() && to->is_narrow_unsigned()) // the value as the f32 it is held in
    return narrow_float_bits(from, a->type == DType::f32() ? a : ir::Cast::make(DType::f32(), a, a->loc));
  if (from.is_narrow_unsigned() && to->is_narrow_float()) // the bits as the u32 they are held in
    return narrow_float_value(*to, a->type == DType::u32() ? a : ir::Cast::make(DType::u32(), a, a->loc));
  // An unsigned side goes through its signed partner: u32 <-> f32 is i32 <-> f32.
  const DType from_s = from == DType::u32() ? DType::i32() : from == DType::u64() ? DType::i64() : from;
  const DType to_s = *to == DType::u32() ? DType::i32() : *to == DType::u64() ? DType::i64() : *to;
  if (from != a->type || ir::bitcast_partner(from_s) != to_s) {
    diag_.error(e.loc, "bitcast between " + std::string(from.name()) + " and " + to->name() +
                           " is not supported: bitcast takes i32/u32 <-> f32, i64/u64 <-> f64 and "
                           "integers of one width (u8 <-> i8, u32 <-> i32, u64 <-> i64), u16 <-> "
                           "f16/bf16 and u8 <-> e4m3/e5m2 (" +
                           (from.is_narrow_float() || to->is_narrow_float()
                                ? "a 16- or 8-bit float pairs with u16 or u8: go through it, "
                                  "e.g. bitcast<bf16>(bitcast<u16>(x))"
                                : "no integer type of that width has a float partner") +
                           ")");
    return nullptr;
  }
  if (from_s != from)
    a = ir::Cast::make(from_s, a, a->loc);
  Expr r = ir::Call::make(ir::Intrinsic::BitCast, {a}, e.loc);
  return to_s != *to ? ir::Cast::make(*to, r, e.loc) : r;
}

Expr Lowerer::call(const SExpr& e, Where where) {
  if (const Symbol* s = scope.lookup(e.name)) {
    diag_.error(e.op_loc, "'" + e.name + "' is a " + sym_kind_name(s->kind) + ", not a function" +
                              (s->kind == SymKind::Tensor || s->kind == SymKind::Buffer
                                   ? "; index it with " + e.name + "[...]"
                                   : std::string()));
    return nullptr;
  }
  auto arity = [&](size_t n) {
    if (e.args.size() == n)
      return true;
    diag_.error(e.op_loc, "'" + e.name + "' takes " + std::to_string(n) + " argument" +
                              (n == 1 ? "" : "s") + ", found " + std::to_string(e.args.size()));
    return false;
  };
  if (e.name == "bitcast")
    return bitcast(e, where);
  bool is_minmax = e.name == "min" || e.name == "max";
  const FnInfo* fn = nullptr;
  for (const auto& f : kFns)
    if (e.name == f.name)
      fn = &f;
  bool is_cast = std::find(std::begin(kCasts), std::end(kCasts), e.name) != std::end(kCasts);
  if (auto p = packed_from_name(e.name); p && !is_minmax && !fn && !is_cast) {
    diag_.error(e.op_loc, "there is no cast '" + e.name + "(x)': " + e.name +
                              " is a packed storage type of tensors (docs/spec.md \"Packed "
                              "types\"); its elements are read as " +
                              packed_value_type(*p).name() + ", and a value becomes " + e.name +
                              " when a copy writes it into a " + e.name + " tensor" +
                              (packed_value_type(*p).is_int()
                                   ? std::string(" (for the low 4 bits of an integer: x & 15)")
                                   : std::string()));
    return nullptr;
  }
  if (!is_minmax && !fn && !is_cast && e.name != "cdiv") {
    diag_.error(e.op_loc,
                "unknown function '" + e.name + "'" + dtype_hint(e.name, function_names()));
    return nullptr;
  }
  if (!arity(is_minmax || e.name == "cdiv" ? 2 : 1))
    return nullptr;
  std::vector<Expr> args;
  for (const auto& a : e.args) {
    Expr x = expr(*a, where);
    if (!x)
      return nullptr;
    args.push_back(x);
  }
  if (is_cast) {
    const DType to = *DType::from_name(e.name);
    // u32(5): how an unsigned constant is written; the conversion wraps (u8(300) = 44).
    if (auto i = args[0]->as<ir::IntImm>(); i && to.is_unsigned() && i->type.is_signed_int())
      return ir::IntImm::make(to, ir::wrap_int(to, i->value), e.loc);
    return ir::Cast::make(to, args[0], e.loc);
  }
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i]->type.is_bool()) {
      diag_.error(e.args[i]->loc, "'" + e.name + "' needs a number, found bool");
      return nullptr;
    }
  if (e.name == "cdiv") {
    if (!args[0]->type.is_int() || !args[1]->type.is_int()) {
      diag_.error(e.op_loc, std::string("'cdiv' needs integers, found ") + args[0]->type.name() +
                                " and " + args[1]->type.name());
      return nullptr;
    }
    Expr a = cast_to(DType::i64(), args[0]), b = cast_to(DType::i64(), args[1]);
    auto x = const_int(a), y = const_int(b);
    if (x && y) {
      int64_t r;
      std::string why;
      if (!fold_int("cdiv", *x, *y, r, why)) {
        diag_.error(e.op_loc, why + " in constant expression '" + e.text() + "'");
        return nullptr;
      }
      return ir::make_i64(r, e.loc);
    }
    if (y == 0) {
      diag_.error(e.args[1]->loc, "integer division by zero: the divisor of 'cdiv' is 0");
      return nullptr;
    }
    return ir::Binary::make(ir::BinaryOp::CeilDiv, a, b, e.loc);
  }
  if (is_minmax) {
    adopt_literal(args[0], args[1]);
    adopt_literal(args[1], args[0]);
    if (mixed_signs(args[0]->type, args[1]->type)) {
      mixed_sign_error(e.op_loc, "'" + e.name + "'", args[0]->type, args[1]->type);
      return nullptr;
    }
    DType t = common_type(args[0]->type, args[1]->type);
    auto x = const_int(args[0]), y = const_int(args[1]);
    if (x && y && t.is_signed_int())
      return ir::make_i64(e.name == "min" ? std::min(*x, *y) : std::max(*x, *y), e.loc);
    return ir::Binary::make(e.name == "min" ? ir::BinaryOp::Min : ir::BinaryOp::Max,
                            cast_to(t, args[0]), cast_to(t, args[1]), e.loc);
  }
  Expr a = args[0];
  if (fn->fn == ir::Intrinsic::Abs && a->type.is_unsigned())
    return widen(a); // |x| = x
  if (fn->fn != ir::Intrinsic::Abs && !(a->type == DType::f32() || a->type == DType::f64()))
    a = cast_to(DType::f32(), a); // integers (and 16-bit floats) compute in f32
  if (fn->fn == ir::Intrinsic::Abs && a->type.is_narrow_float())
    a = cast_to(DType::f32(), a);
  return ir::Call::make(fn->fn, {a}, e.loc);
}

} // namespace tilegen::spec

// ---------------------------------------------------------------------------------------------
// Packed and encoded storage types (docs/spec.md "Packed types"): the front end holds a tensor
// of u4/i4/e2m1 as bytes, two elements per byte (low nibble first), and an e8m0 tensor as one
// byte per element; this part of the file builds the IR of an element read (the byte's load, the nibble,
// the value) and of an element's code for a write. No backend sees these types.


namespace tilegen::spec {

using ir::BinaryOp;
using ir::DType;
using ir::Expr;

namespace {

Expr u32c(int64_t v) { return ir::IntImm::make(DType::u32(), v); }
Expr i32c(int64_t v) { return ir::IntImm::make(DType::i32(), v); }
Expr bin(BinaryOp op, Expr a, Expr b) { return ir::Binary::make(op, std::move(a), std::move(b)); }
Expr sel(Expr c, Expr t, Expr f) { return ir::Select::make(std::move(c), std::move(t), std::move(f)); }

// The bits of an f32 value as a u32.
Expr f32_bits(Expr v) {
  return ir::Cast::make(DType::u32(), ir::Call::make(ir::Intrinsic::BitCast, {std::move(v)}));
}

// An f32 with the bits of a u32.
Expr f32_of_bits(Expr bits) {
  return ir::Call::make(ir::Intrinsic::BitCast, {ir::Cast::make(DType::i32(), std::move(bits))});
}

} // namespace

std::optional<ir::Packed> packed_from_name(std::string_view n) {
  if (n == "u4")
    return ir::Packed::U4;
  if (n == "i4")
    return ir::Packed::I4;
  if (n == "e2m1")
    return ir::Packed::E2M1;
  if (n == "e8m0")
    return ir::Packed::E8M0;
  return std::nullopt;
}

DType packed_value_type(ir::Packed p) {
  switch (p) {
  case ir::Packed::U4: return DType::u32();
  case ir::Packed::I4: return DType::i32();
  default: return DType::f32();
  }
}

Expr packed_nibble(Expr byte, Expr j) {
  // (byte >> 4 * (j & 1)) & 15: the low nibble for an even j, the high one for an odd j.
  Expr shift = ir::Cast::make(
      DType::u32(), bin(BinaryOp::Mul, bin(BinaryOp::BitAnd, j, ir::make_i64(1)), ir::make_i64(4)));
  return bin(BinaryOp::BitAnd, bin(BinaryOp::Shr, byte, shift), u32c(15));
}

Expr packed_read(const ir::BufferPtr& b, std::vector<Expr> idx, const SourceLoc& loc) {
  const ir::Packed p = b->packed;
  Expr code;
  if (ir::packed_per_byte(p) == 2) {
    // Element j of a row is the low (j even) or high (j odd) nibble of byte j >> 1, the byte
    // loaded once. A negative j gives a negative byte index, which reads as 0 like any read
    // outside the tensor.
    Expr j = idx.back();
    idx.back() = bin(BinaryOp::Shr, j, ir::make_i64(1));
    code = packed_nibble(ir::Cast::make(DType::u32(), ir::Load::make(b, std::move(idx), loc), loc), j);
  } else {
    code = ir::Cast::make(DType::u32(), ir::Load::make(b, std::move(idx), loc), loc);
  }
  return packed_value(p, code);
}

Expr packed_value(ir::Packed p, Expr code) {
  switch (p) {
  case ir::Packed::U4: return code;
  case ir::Packed::I4: // two's complement nibble: (c ^ 8) - 8
    return bin(BinaryOp::Sub, ir::Cast::make(DType::i32(), bin(BinaryOp::BitXor, code, u32c(8))),
               i32c(8));
  case ir::Packed::E2M1: {
    // S.EE.M, bias 1: twice the magnitudes of codes 0..7 are 0, 1, 2, 3, 4, 6, 8, 12, the
    // nibbles of 0xc8643210 (one shift picks one); the sign bit is the f32's sign bit.
    Expr twice = bin(BinaryOp::BitAnd,
                     bin(BinaryOp::Shr, u32c(0xc8643210),
                         bin(BinaryOp::Shl, bin(BinaryOp::BitAnd, code, u32c(7)), u32c(2))),
                     u32c(15));
    Expr mag = bin(BinaryOp::Mul, ir::Cast::make(DType::f32(), twice), ir::make_f32(0.5));
    Expr sign = bin(BinaryOp::Shl, bin(BinaryOp::BitAnd, code, u32c(8)), u32c(28));
    return f32_of_bits(bin(BinaryOp::BitOr, f32_bits(mag), sign));
  }
  case ir::Packed::E8M0: {
    // 2^(e - 127): the f32 with exponent field e; e = 0 is 2^-127 (an f32 subnormal, bits
    // 0x00400000) and e = 255 is NaN (0x7fc00000): both are the e << 23 with bit 22 set, and
    // they are the codes with (e + 1) & 254 == 0. No NaN constant appears (WGSL rejects one).
    Expr edge = bin(BinaryOp::Eq, bin(BinaryOp::BitAnd, bin(BinaryOp::Add, code, u32c(1)), u32c(254)),
                    u32c(0));
    return f32_of_bits(bin(BinaryOp::BitOr, bin(BinaryOp::Shl, code, u32c(23)),
                           sel(edge, u32c(0x00400000), u32c(0))));
  }
  case ir::Packed::None: break;
  }
  return nullptr;
}

Expr packed_code(ir::Packed p, Expr v) {
  switch (p) {
  case ir::Packed::U4:
  case ir::Packed::I4: // the low 4 bits of the two's complement value
    return bin(BinaryOp::BitAnd, ir::Cast::make(DType::u32(), v), u32c(15));
  case ir::Packed::E2M1: {
    // Round to nearest, ties to even, saturating at 6: |v| against the midpoints between
    // neighbours, a tie going to the even code (0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 1.75 -> 2,
    // 2.5 -> 2, 3.5 -> 4, 5 -> 4). NaN compares false everywhere: it gives (signed) 0.
    Expr a = ir::Call::make(ir::Intrinsic::Abs, {v});
    struct {
      BinaryOp op;
      double t;
    } steps[] = {{BinaryOp::Gt, 0.25}, {BinaryOp::Ge, 0.75}, {BinaryOp::Gt, 1.25},
                 {BinaryOp::Ge, 1.75}, {BinaryOp::Gt, 2.5},  {BinaryOp::Ge, 3.5},
                 {BinaryOp::Gt, 5.0}};
    Expr k;
    for (const auto& s : steps) {
      Expr one = sel(bin(s.op, a, ir::make_f32(s.t)), u32c(1), u32c(0));
      k = k ? bin(BinaryOp::Add, k, one) : one;
    }
    Expr sign = bin(BinaryOp::BitAnd, bin(BinaryOp::Shr, f32_bits(v), u32c(28)), u32c(8));
    return bin(BinaryOp::BitOr, k, sign);
  }
  case ir::Packed::E8M0:
    // The exponent field of |v|: 2^floor(log2 |v|) (OCP MX's shared-exponent rule), NaN and
    // +-inf give 255 (NaN), 0 and values below 2^-126 give 0 (2^-127).
    return bin(BinaryOp::BitAnd, bin(BinaryOp::Shr, f32_bits(v), u32c(23)), u32c(255));
  case ir::Packed::None: break;
  }
  return nullptr;
}

namespace {

// A narrow float format: exponent and mantissa bits, bias, and whether the all-ones exponent
// holds inf/NaN (f16, e5m2) or only S.1111.111 is NaN (e4m3).
struct Format {
  int e, m, bias;
  bool ieee_specials;
};

std::optional<Format> narrow_format(DType t) {
  switch (t.kind) {
  case ir::ScalarKind::F16: return Format{5, 10, 15, true};
  case ir::ScalarKind::E5M2: return Format{5, 2, 15, true};
  case ir::ScalarKind::E4M3: return Format{4, 3, 7, false};
  default: return std::nullopt;
  }
}

Expr ucmp(BinaryOp op, Expr a, int64_t b) { return bin(op, std::move(a), u32c(b)); }

} // namespace

// Bits of v (f32, holding a value of narrow float type t exactly) in t's encoding, as a u32.
Expr narrow_float_bits(DType t, Expr v) {
  Expr b = f32_bits(std::move(v));
  if (t == DType::bf16()) // the top half of the f32: exact, NaN included
    return bin(BinaryOp::Shr, b, u32c(16));
  const Format f = *narrow_format(t);
  const int width = 1 + f.e + f.m, maxexp = (1 << f.e) - 1;
  Expr sign = bin(BinaryOp::BitAnd, bin(BinaryOp::Shr, b, u32c(32 - width)),
                  u32c(int64_t{1} << (width - 1)));
  Expr e = bin(BinaryOp::BitAnd, bin(BinaryOp::Shr, b, u32c(23)), u32c(255));
  Expr m = bin(BinaryOp::BitAnd, b, u32c(0x7fffff));
  Expr mtop = bin(BinaryOp::Shr, m, u32c(23 - f.m));
  // Normal: exponent rebiased; subnormal in t (e in [128 - bias - m, 127 - bias]): the
  // significand shifted into place (exact: v is a value of t); below that only 0 occurs.
  Expr normal = bin(BinaryOp::BitOr,
                    bin(BinaryOp::Shl, bin(BinaryOp::Sub, e, u32c(127 - f.bias)), u32c(f.m)), mtop);
  Expr sub = bin(BinaryOp::Shr, bin(BinaryOp::BitOr, m, u32c(0x800000)),
                 bin(BinaryOp::Sub, u32c(151 - f.bias - f.m), e));
  Expr special = f.ieee_specials
                     ? bin(BinaryOp::BitOr,
                           bin(BinaryOp::BitOr, u32c(int64_t{maxexp} << f.m), mtop),
                           sel(ucmp(BinaryOp::Ne, m, 0), u32c(int64_t{1} << (f.m - 1)), u32c(0)))
                     : u32c((int64_t{1} << (width - 1)) - 1); // e4m3: NaN is S.1111.111
  Expr mag = sel(ucmp(BinaryOp::Eq, e, 255), special,
                 sel(ucmp(BinaryOp::Ge, e, 128 - f.bias), normal,
                     sel(ucmp(BinaryOp::Ge, e, 128 - f.bias - f.m), sub, u32c(0))));
  return bin(BinaryOp::BitOr, sign, mag);
}

// The value (f32) of the bits c (u32 below 2^width) of narrow float type t.
Expr narrow_float_value(DType t, Expr c) {
  if (t == DType::bf16())
    return f32_of_bits(bin(BinaryOp::Shl, c, u32c(16)));
  const Format f = *narrow_format(t);
  const int width = 1 + f.e + f.m, maxexp = (1 << f.e) - 1;
  Expr en = bin(BinaryOp::BitAnd, bin(BinaryOp::Shr, c, u32c(f.m)), u32c(maxexp));
  Expr mn = bin(BinaryOp::BitAnd, c, u32c((int64_t{1} << f.m) - 1));
  Expr mf = bin(BinaryOp::Shl, mn, u32c(23 - f.m));
  // Normal (and the specials, whose f32 exponent field is 255): bits built from the fields,
  // never a NaN constant (WGSL rejects one); subnormal: mn * 2^(1 - bias - m), exact.
  Expr normal = bin(BinaryOp::BitOr,
                    bin(BinaryOp::Shl, bin(BinaryOp::Add, en, u32c(127 - f.bias)), u32c(23)), mf);
  Expr nan_bits = bin(BinaryOp::BitOr, bin(BinaryOp::BitOr, u32c(0x7f800000), mf),
                      sel(ucmp(BinaryOp::Ne, mn, 0), u32c(0x400000), u32c(0)));
  Expr is_special = f.ieee_specials
                        ? ucmp(BinaryOp::Eq, en, maxexp)
                        : bin(BinaryOp::And, ucmp(BinaryOp::Eq, en, maxexp),
                              ucmp(BinaryOp::Eq, mn, (int64_t{1} << f.m) - 1));
  Expr bits = sel(is_special, nan_bits, normal);
  Expr sub = bin(BinaryOp::Mul, ir::Cast::make(DType::f32(), mn),
                 ir::make_f32(std::ldexp(1.0, 1 - f.bias - f.m)));
  Expr mag = sel(ucmp(BinaryOp::Eq, en, 0), sub, f32_of_bits(bits));
  Expr neg = ucmp(BinaryOp::Ne, bin(BinaryOp::BitAnd, c, u32c(int64_t{1} << (width - 1))), 0);
  return sel(neg, ir::Unary::make(ir::UnaryOp::Neg, mag), mag);
}

} // namespace tilegen::spec
