// RedundantLoadElim: removes a copy of a global tile into an on-chip buffer that straight-line
// code has already made and that still holds.
//
// Semantics. A statement `copy S -> D (pad P)` is removed when the same execution of the
// enclosing code has already run `copy S' -> D' (pad P')` (the *earlier copy*, itself removed
// or not) and all of these hold:
//  1. S's buffer is a Global tensor with access `read`, and D's buffer is a Fragment or Local
//     buffer (a register tile; shared buffers take part in barriers and async copies and are
//     left alone);
//  2. the buffers are the same objects as those of S' and D', the offsets and extents of both
//  regions
//     are structurally equal (same_expr: same operators, constants and variables, by identity),
//     and so are the pads (two constant +0 pads are the same pad, however written);
//  3. no offset, extent or pad of the copy mentions a Load (the loaded value could change);
//  4. between the earlier copy and this one no statement, at any depth, writes D's buffer
//     (store, fill, copy, reduce, gemm or atomic_add destination, or a new alloc of it), and
//     none writes any Global buffer: tensors may alias (docs/c-backend.md: softmax with X == Y),
//     so a write to Y may change X.
// Variables cannot change in between: every IR variable is bound once per execution of its
// scope (lets, loop and parallel variables), and the earlier copy's expressions refer to the
// same Var objects, so equal expressions have equal values.
//
// "Already run" is decided per block: the statements of one Seq in order (a nested Seq is part
// of the same straight line). What is known before an `if` holds in both branches; what is
// known before a `for` holds in its body when the body writes neither D nor any tensor (then
// it holds in every iteration too); after an `if` or a loop, what either could have
// invalidated is forgotten. Parallel bodies hold no copies. Nothing is carried from one loop
// iteration to the next otherwise.
//
// Backend-neutral. On its own it rarely fires in the shipped kernels; it is what makes the
// single-trip version of passes/VersionSingleTrip read each row once (softmax, rmsnorm).
#pragma once

#include "ir/IR.h"

namespace tilegen::passes {

struct LoadElimStats {
  int removed = 0; // copies removed
};

ir::Kernel eliminate_redundant_loads(const ir::Kernel& k, LoadElimStats* stats = nullptr);
ir::Stmt eliminate_redundant_loads(const ir::Stmt& s, LoadElimStats* stats = nullptr);

// Structural equality of expressions: same kinds, types, operators and constants (IntImm names
// ignored, floats compared by value with nan equal to nan), the same Var and Buffer objects.
bool same_expr(const ir::Expr& a, const ir::Expr& b);
// Both constant +0 (is_const_zero, through casts), or same_expr.
bool same_pad(const ir::Expr& a, const ir::Expr& b);
// Same buffer object and structurally equal offsets and extents.
bool same_region(const ir::Region& a, const ir::Region& b);

} // namespace tilegen::passes
