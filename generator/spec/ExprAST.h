// The spec's expression language as written: an untyped AST with a location per node.
// Lowering resolves names and types it into ir::Expr; nothing here is ever pasted into code.
#pragma once

#include "support/SourceLoc.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tilegen::spec {

enum class EKind {
  Int,     // ival
  Float,   // fval (inf and nan included)
  Bool,    // bval
  Name,    // name
  Index,   // name[args...]
  Unary,   // op args[0]          op: "-" "!" "~"
  Binary,  // args[0] op args[1]  op: "+" "-" "*" "/" "%" "<" ... "&&" "||" "&" "|" "^" "<<" ">>"
  Ternary, // args[0] ? args[1] : args[2]
  Call,    // name(args...)       functions and casts
};

struct SExpr;
using SExprPtr = std::shared_ptr<const SExpr>;

struct SExpr {
  EKind kind = EKind::Int;
  SourceLoc loc;    // the whole expression (start and width when on one line)
  SourceLoc op_loc; // the operator / name / literal token
  int64_t ival = 0;
  double fval = 0;
  bool bval = false;
  std::string name; // Name, Index, Call
  std::string op;   // Unary, Binary
  // The source text of the whole expression, for messages: a span of the expression string
  // the node was parsed from (kept once per expression, not copied into every node: a flat sum
  // of 8000 terms would otherwise hold 8000 prefixes of the string).
  std::shared_ptr<const std::string> source;
  size_t text_begin = 0, text_size = 0;
  std::string text() const { return source ? source->substr(text_begin, text_size) : std::string(); }
  std::vector<SExprPtr> args;
};

// A parallel-body statement: `x[i, j] = e`, `x[i] += e`, `let t = e`.
struct SStmt {
  enum class Kind { Assign, AddAssign, Let };
  Kind kind = Kind::Assign;
  SourceLoc loc;   // the whole statement
  SExprPtr target; // Name or Index (Assign/AddAssign)
  std::string let_name;
  SourceLoc let_loc; // the let's name
  SExprPtr value;
};

} // namespace tilegen::spec
