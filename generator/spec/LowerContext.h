// Internal to Lowering: the symbol table and the expression typer shared by Lowering.cpp
// (kernel-level declarations and ops) and LowerExpr.cpp (expressions).
#pragma once

#include "ir/IR.h"
#include "spec/SpecAST.h"
#include "support/Diagnostics.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilegen::spec {

enum class SymKind {
  TypeParam,
  Dim,
  ValueParam,
  Flag,
  Scalar,
  Tensor,
  TileConst,
  BlockIndex,
  Buffer,
  LoopVar,
  ParallelVar,
  Let
};
const char* sym_kind_name(SymKind k); // "type parameter", "runtime dim", ...
// "1 index was", "2 indices were": counts in messages.
std::string count_of(size_t n, const char* one, const char* many);

struct Symbol {
  SymKind kind;
  std::string name;
  SourceLoc loc;
  ir::VarPtr var;    // value symbols
  ir::BufferPtr buf; // Tensor, Buffer

  // A symbol whose declaration failed (already reported): uses of it stay silent instead of
  // cascading into "unknown name" errors.
  bool poisoned() const { return !var && !buf && kind != SymKind::TypeParam; }
};

// Nested scopes: frame 0 holds kernel-level names; each body/loop/parallel pushes one. Names
// may not be redeclared while visible (no shadowing). Symbols of popped frames are kept to
// explain "out of its scope" errors.
class Scope {
public:
  void push() { frames_.emplace_back(); }
  void pop();
  const Symbol* lookup(const std::string& name) const;
  const Symbol* retired(const std::string& name) const; // most recent out-of-scope one
  // Declares a symbol; reports a duplicate (with a note) and returns false if visible already.
  bool declare(Symbol s, DiagEngine& diag);
  std::vector<std::string> visible_names() const;

private:
  // Names are unique while visible (no shadowing), so one map holds every visible symbol;
  // frames_ remembers which names each frame declared. std::map: stable pointers and a
  // deterministic (sorted) order for suggestions.
  std::map<std::string, Symbol> visible_;
  std::vector<std::vector<std::string>> frames_;
  std::map<std::string, Symbol> retired_; // the most recent out-of-scope symbol per name
};

// Where an expression appears decides which names it may use.
enum class Where {
  TensorShape, // params only
  BufferShape, // tile constants, value params, literals
  Extent,      // parallel extents: the same, constant once the schedule is resolved
  Grid,        // params, tile constants
  Threads,     // tile constants, value params
  Require,     // tile constants, value params, flags
  ShapeClass,  // schedule.classes predicates: dims and value params
  ScalarRequire, // a scalar's require: scalars, dims, value params, flags (checked at dispatch)
  Body,        // anything visible (reads of write-only tensors are errors)
  Uniform,     // if-conditions: no element reads, no parallel vars or lets
  Pad,         // constants (copy pad)
};

class Lowerer {
public:
  // The lets of the statement list being lowered that come after the current statement, by
  // name (their names' locations, nearest first): a use of one of them gets "used before its
  // let" instead of "unknown name".
  std::multimap<std::string, SourceLoc> lets_ahead;

  Lowerer(DiagEngine& diag, const std::map<std::string, ir::DType>& binding)
      : diag_(diag), binding_(binding) {}

  // Types an expression; nullptr after reporting an error.
  ir::Expr expr(const SExpr& e, Where where);
  ir::Expr expr_typed(const SExpr& e, Where where); // expr without its unsigned-on-host check
  // "<what> mixes signed and unsigned integers" with the conversions that fix it.
  void mixed_sign_error(const SourceLoc& loc, const std::string& what, ir::DType a, ir::DType b);
  // The same, requiring an integer (i64) result (shape extents, indices, loop bounds).
  ir::Expr index_expr(const SExpr& e, Where where, const std::string& what);
  // A value stored into / filled into a buffer of dtype `to`: checks and casts.
  ir::Expr store_value(ir::Expr v, ir::DType to, const SExpr& e, const std::string& dst);
  // Resolves a dtype name or type parameter.
  std::optional<ir::DType> dtype(const TypeRef& t, const std::string& what);

  // v converted to dtype `to` (a Cast, folded for literals).
  static ir::Expr convert(ir::DType to, ir::Expr v);
  // Resolves a name used as a buffer or tensor (copy sides, gemm operands, store targets).
  const Symbol* buffer_symbol(const SExpr& e, const std::string& role);

  // Constant value of an integer expression, if it folds; nullopt otherwise.
  static std::optional<int64_t> const_int(const ir::Expr& e);
  // True if a and b are certainly different values (both fold to different constants).
  static bool provably_different(const ir::Expr& a, const ir::Expr& b);
  static std::string show(const ir::Expr& e); // short spelling for messages
  static std::string show_shape(const std::vector<ir::Expr>& shape);

  Scope scope;
  DiagEngine& diag() { return diag_; }

private:
  ir::Expr name(const SExpr& e, Where where);
  ir::Expr load(const SExpr& e, Where where);
  ir::Expr unary(const SExpr& e, Where where);
  ir::Expr binary(const SExpr& e, Where where);
  ir::Expr ternary(const SExpr& e, Where where);
  ir::Expr call(const SExpr& e, Where where);
  ir::Expr bitcast(const SExpr& e, Where where); // bitcast<T>(x)
  void unknown_name(const SExpr& e, const std::string& what);
  bool allowed(const Symbol& s, Where where, const SExpr& e);

  DiagEngine& diag_;
  const std::map<std::string, ir::DType>& binding_;
};

// Packed storage types (the end of spec/LowerExpr.cpp, docs/spec.md "Packed types").
std::optional<ir::Packed> packed_from_name(std::string_view name); // "u4", "i4", "e2m1", "e8m0"
// The type a packed element is read as: u32 (u4), i32 (i4), f32 (e2m1, e8m0).
ir::DType packed_value_type(ir::Packed p);
// Element idx (element indices; the last one counts elements) of packed tensor b, as a value of
// packed_value_type(b->packed).
ir::Expr packed_read(const ir::BufferPtr& b, std::vector<ir::Expr> idx, const SourceLoc& loc);
// The u32 code of element j of a row from the (u32) byte that holds it: its low nibble for an
// even j, its high one for an odd j (u4, i4, e2m1).
ir::Expr packed_nibble(ir::Expr byte, ir::Expr j);
// The value (of packed_value_type(p)) of the u32 code `code` of packed type p: what packed_read
// returns for the element whose code it is.
ir::Expr packed_value(ir::Packed p, ir::Expr code);
// The u32 code (4 or 8 bits) of value v (of packed_value_type(p)) in packed type p.
ir::Expr packed_code(ir::Packed p, ir::Expr v);
// bitcast between a narrow float (f16, bf16, e4m3, e5m2; held as f32) and its unsigned
// partner (u16, u8; held as u32): the encoding's bits of f32 value v as a u32, and the f32
// value of bits c (docs/spec.md "bitcast").
ir::Expr narrow_float_bits(ir::DType t, ir::Expr v);
ir::Expr narrow_float_value(ir::DType t, ir::Expr c);

} // namespace tilegen::spec
