// ExprParser: expression strings of the spec language -> spec::SExpr (lexer + precedence
// climbing). Grammar (low -> high precedence):
//   expr    := or ('?' expr ':' expr)?
//   or      := and ('||' and)*        and := eq ('&&' eq)*
//   eq      := rel (('=='|'!=') rel)* rel := add (('<'|'<='|'>'|'>=') add)*
//   add     := mul (('+'|'-') mul)*   mul := unary (('*'|'/'|'%') unary)*
//   unary   := ('-'|'!') unary | primary
//   primary := INT | FLOAT | true | false | inf | nan | NAME | NAME '[' expr (',' expr)* ']'
//            | NAME '(' expr (',' expr)* ')' | '(' expr ')'
// Every token is located through a LocMapper (offset in the string -> file line:col), so an
// error points at the offending character of the YAML scalar.
#pragma once

#include "spec/ExprAST.h"
#include "support/Diagnostics.h"

#include <functional>
#include <string_view>

namespace tilegen::spec {

// Maps [offset, offset+length) of the parsed string to a file location.
using LocMapper = std::function<SourceLoc(size_t offset, size_t length)>;

// Nesting deeper than this (brackets, calls, unary operators, ?:) is rejected with a located
// error; a chain of binary operators counts as one level, so a tree can be as tall as the
// length limit allows (about 8000 for `a+a+...`), which the CLI's stack holds (tools/tilegen.cpp).
constexpr int kMaxExprDepth = 256;
constexpr size_t kMaxExprLength = 16384;

// Parses a whole string as one expression; nullptr after reporting an error.
SExprPtr parse_expr(std::string_view text, const LocMapper& loc, DiagEngine& diag);

// Parses a parallel-body statement; false after reporting an error.
bool parse_stmt(std::string_view text, const LocMapper& loc, DiagEngine& diag, SStmt& out);

// True if `s` is an identifier [A-Za-z_][A-Za-z0-9_]*.
bool is_identifier(std::string_view s);

// Names with a fixed meaning in expressions (functions, casts, literals) that cannot name
// anything a spec declares; dtype names are reserved as well.
bool is_reserved_name(std::string_view s);

// What is wrong with `s` as the name of a declared `what` ("tensor", "let temporary", ...):
// the whole error message, or "" if it may be declared. The rules of every declared name:
// an identifier, spelled as support/ReservedNames.h says (`joined`: a kernel, param, flag or
// shape class name, which generated symbol and file names contain), and not reserved
// (`bare`: the name appears in generated code as it is; false for kernels, type parameters
// and shape classes, see reserved_name_reason).
std::string declared_name_problem(std::string_view s, const std::string& what, bool joined,
                                  bool bare = true);

} // namespace tilegen::spec
