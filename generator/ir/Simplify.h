// Simplify: constant folding and algebraic identities that never change a result.
//  * integer/bool arithmetic, comparisons, min/max/cdiv, casts of constants are folded;
//    a fold that would overflow the result type (or divide by zero) is left unfolded, so the
//    generator never executes undefined behaviour and the emitted code keeps the expression;
//  * identities: x+0, 0+x, x-0, x*1, 1*x, x/1 (any type); x*0, 0*x, x%1 (integers only:
//    for floats they are wrong for inf/nan); true&&x, false||x, ...;
//  * select of a constant condition, `if` of a constant condition, casts to the same type;
//  * float constants are folded only by exact operations (negation, casts: rounded to the
//    target type exactly as the generated code rounds, see FloatBits.h).
// Statements: an `if` with a constant condition becomes its branch; loops with a constant
// zero extent disappear.
#pragma once

#include "ir/IR.h"

#include <map>
#include <optional>

namespace tilegen::ir {

Expr simplify(const Expr& e);
Stmt simplify(const Stmt& s);
Kernel simplify(const Kernel& k);

// The value of an expression that simplifies to an integer/bool constant, else nullopt.
std::optional<int64_t> as_const_int(const Expr& e);

// The value of an integer/bool expression with its variables bound by `env` (bools as 0/1),
// computed without building IR: the value simplify(substitute(e, env)) folds to, or nullopt
// where this evaluator does not go (floats, casts, calls, loads, unbound variables) or the
// fold would not happen (overflow, division by zero). The schedule resolver and the tile
// recommender evaluate predicates over thousands of configurations and shapes with it, and
// fall back to simplify(substitute(...)) on nullopt.
std::optional<int64_t> eval_int(const Expr& e, const std::map<const Var*, int64_t>& env);
bool is_const_int(const Expr& e, int64_t v);
// Null, or a constant +0 (integer or float, through casts): a copy's default padding.
bool is_const_zero(const Expr& e);

} // namespace tilegen::ir
