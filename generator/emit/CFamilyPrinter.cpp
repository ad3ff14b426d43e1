#include "emit/CFamilyPrinter.h"

#include "support/ReservedNames.h"

#include "ir/IRPrinter.h"
#include "support/InternalError.h"

#include <cmath>

namespace tilegen::emit {

using namespace ir;

namespace {
// Helper functions are typed by suffix; 16-bit floats are computed as f32 in C-like code.
std::string helper_suffix(DType t) { return t.is_narrow_float() ? "f32" : t.name(); }
} // namespace

int c_binary_prec(BinaryOp op, DType t) {
  switch (op) {
  case BinaryOp::Add:
  case BinaryOp::Sub: return CFamilyPrinter::kAdd;
  case BinaryOp::Mul: return CFamilyPrinter::kMul;
  case BinaryOp::Div: return t.is_int() ? 0 : CFamilyPrinter::kMul; // ints: floor division
  case BinaryOp::Mod: return 0;
  case BinaryOp::Min:
  case BinaryOp::Max:
  case BinaryOp::CeilDiv: return 0;
  case BinaryOp::Eq:
  case BinaryOp::Ne: return CFamilyPrinter::kEq;
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge: return CFamilyPrinter::kRel;
  case BinaryOp::And: return CFamilyPrinter::kAnd;
  case BinaryOp::Or: return CFamilyPrinter::kOr;
  case BinaryOp::BitAnd: return CFamilyPrinter::kBitAnd;
  case BinaryOp::BitOr: return CFamilyPrinter::kBitOr;
  case BinaryOp::BitXor: return CFamilyPrinter::kBitXor;
  case BinaryOp::Shl: // helpers: C's shifts are undefined for counts outside [0, width)
  case BinaryOp::Shr: return 0;
  }
  return 0;
}

bool native_shift(const Binary* b) {
  if (b->op != BinaryOp::Shr && !(b->op == BinaryOp::Shl && b->a->type.is_unsigned()))
    return false; // a signed << may overflow: C leaves that undefined, an unsigned one wraps
  auto n = b->b->as<IntImm>();
  return n && n->value >= 0 && n->value < b->a->type.bits();
}

std::string shift_helper_text(const std::string& prefix, const std::string& name, BinaryOp op,
                              const std::string& T, const std::string& U, const std::string& wrap,
                              int bits) {
  const std::string sig = prefix + T + " " + name + "(" + T + " a, " + T + " n)";
  const std::string out = "(n < 0 || n >= " + std::to_string(bits) + ")";
  if (op == BinaryOp::Shl)
    return sig + " { return " + out + " ? 0 : (" + T + ")" + (wrap.empty() ? "" : "(" + wrap + ")") +
           "((" + U + ")a << n); }\n";
  return sig + " { return " + out + " ? (a < 0 ? -1 : 0) : a >> n; }\n";
}

std::string unsigned_helper_text(const std::string& prefix, const std::string& name,
                                 const std::string& op, const std::string& T, int bits) {
  const std::string sig = prefix + T + " " + name;
  const std::string w = std::to_string(bits);
  if (op == "min")
    return sig + "(" + T + " a, " + T + " b) { return a < b ? a : b; }\n";
  if (op == "max")
    return sig + "(" + T + " a, " + T + " b) { return a > b ? a : b; }\n";
  if (op == "shl") // unsigned: no count below 0
    return sig + "(" + T + " a, " + T + " n) { return n >= " + w + "u ? 0u : a << n; }\n";
  if (op == "shr") // logical
    return sig + "(" + T + " a, " + T + " n) { return n >= " + w + "u ? 0u : a >> n; }\n";
  if (op == "floordiv_any")
    return sig + "(" + T + " a, " + T + " b) { return b == 0u ? 0u : a / b; }\n";
  if (op == "floormod_any")
    return sig + "(" + T + " a, " + T + " b) { return b == 0u ? a : a % b; }\n";
  return "";
}

const char* c_binary_op(BinaryOp op) { return binary_op_name(op); }

bool divisor_needs_guard(const Binary* b) {
  if (!(b->op == BinaryOp::Div || b->op == BinaryOp::Mod || b->op == BinaryOp::CeilDiv) ||
      !b->type.is_int())
    return false;
  auto i = b->b->as<IntImm>();
  return !(i && i->value > 0);
}

// ---------------------------------------------------------------------------------------------
// Tables (C)

std::string CFamilyPrinter::type_name(DType t) const {
  switch (t.kind) {
  case ScalarKind::Bool: return "bool";
  case ScalarKind::I8: return "int8_t";
  case ScalarKind::I32: return "int32_t";
  case ScalarKind::I64: return "int64_t";
  case ScalarKind::U8: return "uint8_t";
  case ScalarKind::U16: return "uint16_t";
  case ScalarKind::U32: return "uint32_t";
  case ScalarKind::U64: return "uint64_t";
  case ScalarKind::F16:
  case ScalarKind::BF16: // held as float, with values representable in the narrow type
  case ScalarKind::E4M3:
  case ScalarKind::E5M2:
  case ScalarKind::F32: return "float";
  case ScalarKind::F64: return "double";
  }
  return "?";
}

std::string CFamilyPrinter::storage_type_name(DType t) const {
  return t.is_16bit_float() ? "uint16_t" : t.is_fp8() ? "uint8_t" : type_name(t);
}

std::string CFamilyPrinter::float_suffix(DType t) const { return t == DType::f64() ? "" : "f"; }
std::string CFamilyPrinter::inf_literal(DType t) const {
  return t == DType::f64() ? "((double)INFINITY)" : "INFINITY";
}
std::string CFamilyPrinter::nan_literal(DType t) const {
  return t == DType::f64() ? "((double)NAN)" : "NAN";
}

std::string CFamilyPrinter::math_name(Intrinsic fn, DType t) const {
  const bool d = t == DType::f64();
  switch (fn) {
  case Intrinsic::Abs: return t.is_int() ? "" : (d ? "fabs" : "fabsf");
  // f32 transcendentals are the branch-free helpers of CRuntimeHelpers.cpp (names starting
  // with "tg_"): libm's are scalar calls that block vectorization. f64 stays libm.
  case Intrinsic::Exp: return d ? "exp" : "tg_exp_f32";
  case Intrinsic::Exp2: return d ? "exp2" : "tg_exp2_f32";
  case Intrinsic::Log: return d ? "log" : "tg_log_f32";
  case Intrinsic::Log2: return d ? "log2" : "tg_log2_f32";
  case Intrinsic::Sqrt: return d ? "sqrt" : "sqrtf";
  case Intrinsic::Rsqrt: return ""; // 1 / sqrt(x)
  case Intrinsic::Tanh: return d ? "tanh" : "tg_tanh_f32";
  case Intrinsic::Erf: return d ? "erf" : "tg_erf_f32";
  case Intrinsic::Floor: return d ? "floor" : "floorf";
  case Intrinsic::Ceil: return d ? "ceil" : "ceilf";
  case Intrinsic::BitCast: return ""; // print_bitcast
  }
  return "";
}

const std::set<std::string>& CFamilyPrinter::reserved_words() const {
  static const std::set<std::string> words = [] {
    std::set<std::string> w = c11_keywords();
    w.insert({// names generated code relies on
              "bool", "true", "false", "args", "launch", "int8_t", "int32_t", "int64_t",
              "uint16_t", "uint32_t", "uint64_t", "size_t", "NULL", "INFINITY", "NAN", "main",
              // <math.h> functions called, and POSIX names a block-scope variable would shadow
              "exp", "expf", "exp2", "exp2f", "log", "logf", "log2", "log2f", "sqrt", "sqrtf",
              "tanh", "tanhf", "erf", "erff", "floor", "floorf", "ceil", "ceilf", "fabs", "fabsf",
              "j0", "j1", "jn", "y0", "y1", "yn", "memcpy", "memset", "omp_get_max_threads"});
    return w;
  }();
  return words;
}

std::string CFamilyPrinter::name(const std::string& n) const {
  // The front end refuses every reserved word as a spec name (support/ReservedNames.h, a
  // superset of these lists: ReservedNamesTest checks it), so names print as they are.
  TG_ASSERT(!reserved_words().count(n), "the spec name '" + n +
                                            "' is reserved in generated code but was accepted");
  return n;
}

// ---------------------------------------------------------------------------------------------
// Expressions

std::string CFamilyPrinter::expr(const Expr& e, int min_prec) {
  int prec = kPrimary;
  std::string s = print(e, prec);
  return prec < min_prec ? "(" + s + ")" : s;
}

std::string CFamilyPrinter::print(const Expr& e, int& prec) {
  prec = kPrimary;
  switch (e->kind) {
  case ExprKind::IntImm: return print_int(e->as<IntImm>(), prec);
  case ExprKind::FloatImm: return print_float(e->as<FloatImm>()->value, e->type, prec);
  case ExprKind::BoolImm: return bool_literal(e->as<BoolImm>()->value);
  case ExprKind::VarRef: return print_var(e->as<VarRef>()->var.get());
  case ExprKind::Load: return print_load(e->as<Load>(), prec);
  case ExprKind::Unary: {
    auto u = e->as<Unary>();
    prec = kUnary;
    std::string a = expr(u->a, kUnary);
    if (u->op == UnaryOp::Neg && a[0] == '-')
      a = "(" + a + ")"; // "--x" would be a decrement
    return std::string(unary_op_name(u->op)) + a;
  }
  case ExprKind::Binary: return print_binary(e->as<Binary>(), prec);
  case ExprKind::Select: return print_select(e->as<Select>(), prec);
  case ExprKind::Call: return print_call(e->as<Call>(), prec);
  case ExprKind::Cast: return print_cast(e->as<Cast>(), prec);
  }
  internal_error("CFamilyPrinter: unknown expression kind");
}

std::string CFamilyPrinter::print_int(const IntImm* i, int& prec) {
  if (!i->name.empty())
    return name(i->name);
  const int64_t v = i->value;
  if (i->type.is_unsigned()) { // u8/u16 constants are u32 values (the wider type holds them)
    const std::string d = std::to_string(static_cast<uint64_t>(v));
    return i->type == DType::u64() ? "UINT64_C(" + d + ")" : d + "u";
  }
  if (v == INT64_MIN) {
    prec = kAdd;
    return "-INT64_C(9223372036854775807) - 1";
  }
  std::string s = std::to_string(v);
  if (v > INT32_MAX || v < INT32_MIN)
    s = v < 0 ? "-INT64_C(" + std::to_string(-v) + ")" : "INT64_C(" + s + ")";
  if (v < 0)
    prec = kUnary;
  return s;
}

std::string CFamilyPrinter::print_float(double v, DType t, int& prec) {
  if (std::isnan(v))
    return nan_literal(t);
  if (std::isinf(v)) {
    if (v > 0)
      return inf_literal(t);
    prec = kUnary;
    return "-" + inf_literal(t);
  }
  if (std::signbit(v))
    prec = kUnary;
  // Shortest text that reads back as the same value of the type (f16/bf16 values are exact
  // in f32, which is how they are held).
  DType lit = t == DType::f64() ? DType::f64() : DType::f32();
  return float_literal(v, lit) + float_suffix(t);
}

std::string CFamilyPrinter::print_binary(const Binary* b, int& prec) {
  const DType t = b->a->type;
  if (is_bitwise(b->op)) {
    if (native_shift(b)) { // a >> k, 0 <= k < width: C's arithmetic (unsigned: logical) shift
      prec = kShift;
      return bit_operand(b->a, b->op, true) + " " + c_binary_op(b->op) + " " + expr(b->b, kPrimary);
    }
    if (b->op == BinaryOp::Shl || b->op == BinaryOp::Shr)
      return need(std::string(b->op == BinaryOp::Shl ? "tg_shl_" : "tg_shr_") + helper_suffix(t)) +
             "(" + expr(b->a, kAssign) + ", " + expr(b->b, kAssign) + ")";
    prec = c_binary_prec(b->op, t);
    return bit_operand(b->a, b->op, true) + " " + c_binary_op(b->op) + " " +
           bit_operand(b->b, b->op, false);
  }
  const int p = c_binary_prec(b->op, t);
  if (t.is_unsigned() && (b->op == BinaryOp::Div || b->op == BinaryOp::Mod) &&
      !divisor_needs_guard(b)) { // C's / and % are the unsigned ones for a divisor > 0
    prec = kMul;
    return expr(b->a, kMul) + " " + c_binary_op(b->op) + " " + expr(b->b, kMul + 1);
  }
  if (p == 0) {
    const char* fn = "";
    switch (b->op) {
    case BinaryOp::Min: fn = "min"; break;
    case BinaryOp::Max: fn = "max"; break;
    case BinaryOp::CeilDiv: fn = "cdiv"; break;
    case BinaryOp::Div: fn = "floordiv"; break;
    case BinaryOp::Mod: fn = "floormod"; break;
    default: internal_error("CFamilyPrinter: no call form for a binary op");
    }
    const std::string any = divisor_needs_guard(b) ? "_any" : "";
    return need("tg_" + std::string(fn) + any + "_" + helper_suffix(t)) + "(" + expr(b->a, kAssign) +
           ", " + expr(b->b, kAssign) + ")";
  }
  prec = p;
  // Left-associative: the right operand needs a strictly tighter binding.
  return expr(b->a, p) + " " + c_binary_op(b->op) + " " + expr(b->b, p + 1);
}

// An operand of a bitwise operator: parenthesized unless primary, unary or (on the left) the
// same operator, so that no reader (and no -Wparentheses) has to recall C's levels for & | ^.
std::string CFamilyPrinter::bit_operand(const Expr& e, BinaryOp op, bool left) {
  int p = kPrimary;
  std::string s = print(e, p);
  auto bin = e->as<Binary>();
  if (p >= kUnary || (left && bin && bin->op == op && !native_shift(bin) && op != BinaryOp::Shr))
    return s;
  return "(" + s + ")";
}

std::string CFamilyPrinter::print_select(const Select* s, int& prec) {
  prec = kCond;
  return expr(s->cond, kOr) + " ? " + expr(s->t, kAssign) + " : " + expr(s->f, kCond);
}

std::string CFamilyPrinter::print_bitcast(const Call* c, int& prec) {
  (void)prec; // C: a memcpy helper (no aliasing violation), one move once inlined
  const DType from = c->args[0]->type;
  return need("tg_bitcast_" + std::string(c->type.name()) + "_" + from.name()) + "(" +
         expr(c->args[0]) + ")";
}

std::string CFamilyPrinter::print_call(const Call* c, int& prec) {
  if (c->fn == Intrinsic::BitCast)
    return print_bitcast(c, prec);
  const DType t = c->type;
  const std::string fn = math_name(c->fn, t);
  if (c->fn == Intrinsic::Rsqrt) {
    prec = kMul;
    return (t == DType::f64() ? "1.0 / " : "1.0f / ") + math_name(Intrinsic::Sqrt, t) + "(" +
           expr(c->args[0]) + ")";
  }
  if (fn.empty()) // integer abs
    return need("tg_abs_" + helper_suffix(t)) + "(" + expr(c->args[0]) + ")";
  if (fn.rfind("tg_", 0) == 0)
    need(fn);
  return fn + "(" + expr(c->args[0]) + ")";
}

std::string CFamilyPrinter::print_cast(const Cast* c, int& prec) {
  const DType to = c->type, from = c->value->type;
  if (to == from)
    return print(c->value, prec);
  if (to.is_bool()) {
    prec = kPrimary;
    return "(" + expr(c->value, kEq) + " != 0)";
  }
  if (to.is_narrow_float()) {
    // Round through the narrow type; the result is held as float.
    std::string v = from == DType::f32() || from.is_narrow_float()
                        ? expr(c->value)
                        : "(float)" + expr(c->value, kUnary);
    return need(std::string("tg_round_") + to.name()) + "(" + v + ")";
  }
  if (to == DType::f32() && from.is_narrow_float())
    return print(c->value, prec); // already a float holding the exact value
  prec = kUnary;
  return "(" + type_name(to) + ")" + expr(c->value, kUnary);
}

// ---------------------------------------------------------------------------------------------
// Output

void CFamilyPrinter::line(const std::string& s) {
  if (s.empty()) {
    out_ << "\n";
    return;
  }
  out_ << std::string(indent_ * 2, ' ') << s << "\n";
}

void CFamilyPrinter::open(const std::string& s) {
  line(s.empty() ? "{" : s + " {");
  ++indent_;
}

void CFamilyPrinter::close(const std::string& s) {
  --indent_;
  line(s);
}

void CFamilyPrinter::open_else() {
  close("} else {");
  ++indent_;
}

} // namespace tilegen::emit
