// Substitute: replaces every use (VarRef) of the given vars by expressions. Used by
// instantiation (tile constants, flags and value params -> constants) and by lowering steps
// that re-index. Buffer shapes are rewritten too, consistently (see IRMutator). Binding
// sites (For/Parallel/LetStmt vars) are left alone: map only vars that are free.
#pragma once

#include "ir/IR.h"

#include <map>

namespace tilegen::ir {

using VarMap = std::map<const Var*, Expr>; // looked up by identity, never iterated

Expr substitute(const Expr& e, const VarMap& m);
Stmt substitute(const Stmt& s, const VarMap& m);
Kernel substitute(const Kernel& k, const VarMap& m);

} // namespace tilegen::ir
