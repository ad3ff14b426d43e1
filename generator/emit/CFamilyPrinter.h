// CFamilyPrinter: what every C-like backend (C, CUDA, HIP, Metal, WGSL) shares: printing IR
// expressions with the language's precedence and minimal parentheses, literals (inf/nan
// included), names, indentation and on-demand helper functions. A dialect is mostly the
// tables below (type names, intrinsic names, literal suffixes) plus a few overrides (loads,
// casts); statements are printed by the dialect's emitter, which owns the lowering of ops.
#pragma once

#include "ir/IR.h"

#include <set>
#include <sstream>
#include <string>

namespace tilegen::emit {

class CFamilyPrinter {
public:
  virtual ~CFamilyPrinter() = default;

  // The words name() checks spec names against (ReservedNamesTest: the front end refuses all).
  const std::set<std::string>& printer_reserved_words() const { return reserved_words(); }

  // An expression, parenthesized as needed for a context of precedence `min_prec`
  // (C levels: 3 = ?:, 4 = ||, ..., 13 = * / %, 14 = unary/cast, 16 = primary).
  std::string expr(const ir::Expr& e, int min_prec = 0);

  // C precedence levels used by expr() and by emitters composing text.
  enum Prec { kComma = 1, kAssign, kCond, kOr, kAnd, kBitOr, kBitXor, kBitAnd, kEq, kRel,
              kShift, kAdd, kMul, kUnary, kPostfix, kPrimary };

protected:
  // ---- Language tables (override per dialect) --------------------------------------------
  virtual std::string type_name(ir::DType t) const;         // type of a value in registers
  virtual std::string storage_type_name(ir::DType t) const; // element type of a global tensor
  virtual std::string float_suffix(ir::DType t) const;      // "f" for f32 literals in C
  virtual std::string inf_literal(ir::DType t) const;       // "INFINITY"
  virtual std::string nan_literal(ir::DType t) const;       // "NAN"
  virtual std::string bool_literal(bool v) const { return v ? "true" : "false"; }
  virtual std::string math_name(ir::Intrinsic fn, ir::DType t) const; // "expf", "" = special
  virtual const std::set<std::string>& reserved_words() const; // checked by name()

  // ---- Hooks for what differs in substance ------------------------------------------------
  virtual std::string print_load(const ir::Load* l, int& prec) = 0;
  virtual std::string print_cast(const ir::Cast* c, int& prec);
  virtual std::string print_var(const ir::Var* v) { return name(v->name); }
  virtual std::string print_int(const ir::IntImm* i, int& prec);
  virtual std::string print_float(double v, ir::DType t, int& prec);
  virtual std::string print_binary(const ir::Binary* b, int& prec);
  virtual std::string print_call(const ir::Call* c, int& prec);
  // bitcast<T>(x) (Intrinsic::BitCast: i32 <-> f32, i64 <-> f64); print_call calls it.
  virtual std::string print_bitcast(const ir::Call* c, int& prec);
  virtual std::string print_select(const ir::Select* s, int& prec); // C: c ? t : f

  // ---- Names and helpers ------------------------------------------------------------------
  // A spec name as printed: as it is. The front end refuses reserved words (docs/spec.md,
  // "Reserved names"), so a spec name cannot collide with the language's keywords, its headers'
  // names or the names generated code declares; an accepted reserved word is an internal error.
  std::string name(const std::string& user_name) const;
  // Records that generated code calls helper `h` (the dialect prints the used ones).
  const std::string& need(const std::string& h) {
    helpers_.insert(h);
    return h;
  }
  std::set<std::string> helpers_;

  // ---- Output with indentation ------------------------------------------------------------
  void line(const std::string& s = "");
  void open(const std::string& s);  // prints s + " {" and indents
  void close(const std::string& s = "}");
  void open_else(); // "} else {": closes the open block and opens its else branch
  void raw(const std::string& s) { out_ << s; } // a line not indented (preprocessor)
  std::ostringstream out_;
  int indent_ = 0;

  // The expression and its precedence (for dialect overrides that wrap it).
  std::string print(const ir::Expr& e, int& prec);
  // An operand of a bitwise operator, parenthesized unless it binds tighter than any binary
  // operator (or is the same operator, on the left): `(a + b) & 15`, `(x >> 4) & 15`.
  std::string bit_operand(const ir::Expr& e, ir::BinaryOp op, bool left);
};

// Whether an integer `/`, `%` or cdiv needs the helpers defined for every divisor (named
// tg_<op>_any_<type>: a / 0 = 0, a % 0 = a, cdiv(a, 0) = 0, and INT_MIN / -1 wraps to INT_MIN
// instead of trapping; docs/spec.md "Operators and typing"): every divisor but a constant > 0,
// which keeps the plain helpers (the common case, `/ BN` once BN is bound).
bool divisor_needs_guard(const ir::Binary* b);

// Whether `a >> k` (and, on unsigned a, `a << k`) prints as the language's operator: k a
// constant in [0, width of a). Every
// other shift is a helper (tg_shl_<type>, tg_shr_<type>) giving docs/spec.md's results for every
// count: a count outside [0, width) gives 0 for <<, the sign fill (0 or -1) for >>.
bool native_shift(const ir::Binary* b);
// The C/C++ text of such a helper: `prefix T name(T a, T n) {...}`, shifting in the unsigned
// type U (no signed overflow) and converting through `wrap` (the type's own width when T is wider,
// e.g. int holding an i8; empty if none), for a type of `bits` bits.
std::string shift_helper_text(const std::string& prefix, const std::string& name, ir::BinaryOp op,
                              const std::string& T, const std::string& U, const std::string& wrap,
                              int bits);

// The C/C++ text of a typed helper on an unsigned type T (u32/u64; u8 and u16 are computed as
// u32) of `bits` bits, `op` one of min, max, shl, shr, floordiv_any, floormod_any (a / 0 = 0,
// a % 0 = a; docs/spec.md "Unsigned integers"); "" for any other op.
std::string unsigned_helper_text(const std::string& prefix, const std::string& name,
                                 const std::string& op, const std::string& T, int bits);

// C's precedence of an IR binary operator printed infix, or 0 if it prints as a call.
int c_binary_prec(ir::BinaryOp op, ir::DType operand_type);
const char* c_binary_op(ir::BinaryOp op);

} // namespace tilegen::emit
