// IndexThreshold: comparisons that hold exactly from one value of an index variable on.
//
// A comparison of j + X with B, where X and B do not depend on j (lets substituted), holds
// exactly when j >= B - X (for >=; > adds one) or when j < B - X (for <; <= adds one); the
// mirrored forms (B op j + X) likewise. An Or or And of two thresholds of one direction is one
// threshold: j >= a || j >= b is j >= min(a, b), j >= a && j >= b is j >= max(a, b), and the
// other way round for <. Integer (i64) comparisons only; j must appear once, with
// coefficient 1, through additions and subtractions of j-free terms; nothing may load (the
// bound is evaluated once per row, outside the body's `if`s).
//
// The CUDA emitter uses it in parallel loops over fragments, where the innermost variable is a
// thread coordinate plus a register coordinate that is a constant after unrolling: the bound
// minus the thread coordinate is computed once per row and each element compares a constant
// with it (attention's causal/ragged mask, docs/cuda-backend.md).
#pragma once

#include "ir/IR.h"
#include "ir/Substitute.h"

#include <optional>
#include <utility>
#include <vector>

namespace tilegen::passes {

struct IndexThreshold {
  bool ge = true;   // the comparison is j >= bound; else j < bound
  ir::Expr bound;   // free of j and of the body's lets (their values are substituted)
};

// The threshold form of a comparison (or an Or/And of them) in j; lets maps let variables to
// their values (already expanded). Nullopt when the expression does not have that form.
std::optional<IndexThreshold> index_threshold(const ir::Binary* e, const ir::Var* j,
                                              const ir::VarMap& lets);

// Every outermost threshold comparison in a parallel body (store values and indices, let
// values, `if` conditions), in order, with its threshold; an Or/And of thresholds is reported
// instead of its parts.
std::vector<std::pair<const ir::Binary*, IndexThreshold>>
find_index_thresholds(const ir::Stmt& body, const ir::Var* j);

} // namespace tilegen::passes
