// VersionSingleTrip: loop versioning of serial `for` loops by "the trip count is 1".
//
// A row kernel walks its row in chunks of BN columns, often twice: softmax and rmsnorm compute
// statistics over `for k in [0, cdiv(N, BN))` and then normalize in a second loop over the same
// chunks, reading X again. When N <= BN both loops run once and the second read is redundant,
// but only once the two bodies stand in one straight line. This pass makes that line:
//
//   for k in [s, s + E) { A(k) }  S1 ... Sn  for k2 in [s, s + E) { B(k2) }
// becomes
//   if (E == 1) { A(s)  S1 ... Sn  B(s) } else { the original statements }
//
// and passes/RedundantLoadElim then removes B's copy of the tile A already holds.
//
// Which loops. A *group* is a run of statements of one Seq from a serial `for` to the last later
// serial `for` with a structurally equal start and extent (passes/RedundantLoadElim's same_expr),
// with no alloc or let at the group's top level (they scope over the rest of the Seq and would
// end inside the `if`). A group is versioned when
//  * E is not a constant, mentions no load and no let, only dims, value params, flags, scalars,
//    tile constants, grid indices and enclosing loop variables: it is uniform over the block,
//    so barriers inside the branches are legal on GPUs (every thread takes the same branch);
//  * E can be 1 (RangeAnalysis bounds_of over the kernel's ranges); when the ranges prove E == 1
//    the group is replaced by the single-trip line, and when they prove E != 1 it is left alone;
//  * no loop body of the group has an alloc or a let at its top level (the inlined bodies share
//    one scope in the CUDA emitter);
//  * it is worth it: two different loops of the group, with their variables set to s, copy the
//    same region (same_region, no load in it) of a read-only tensor into a fragment or local
//    buffer: a copy RedundantLoadElim can remove if nothing invalidates it in between.
// Inlined bodies are the loop bodies with the variable substituted by s, each kept as a nested
// Seq. In the whole single-trip line every occurrence of E (structurally equal) is then
// replaced by 1 and the line simplified, so a test like `E == 1` or `k == E - 1` folds to
// true; in the original statements of the else branch the condition `E == 1` itself folds to
// false. Loops nested in other statements are visited too (the bodies of `for` and `if`).
// Statements between the loops of a group are duplicated in both branches.
#pragma once

#include "ir/IR.h"

namespace tilegen::passes {

struct SingleTripStats {
  int versioned = 0; // groups split into `if (E == 1) {...} else {...}`
  int inlined = 0;   // groups replaced by their single-trip line (E == 1 proven)
};

ir::Kernel version_single_trip(const ir::Kernel& k, SingleTripStats* stats = nullptr);

} // namespace tilegen::passes
