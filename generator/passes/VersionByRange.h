// VersionByRange: loop versioning of `parallel` loops by tile-uniform conditions.
//
// A parallel body often holds a condition that depends on the loop's variables but has the
// same value at every point of most tiles: the attention mask `kv >= S || kv > q` (with
// `kv = k*BN + j`, `q = bx*BM + i`) is false everywhere except on the last and the diagonal
// KV blocks. For each such condition (the condition of a select or of an `if` in the body,
// lets substituted), RangeAnalysis derives a tile predicate over the variables outside the
// loop that implies the condition's value at every point (`k*BN + (BN-1) < S && k*BN +
// (BN-1) <= bx*BM`), and the loop becomes
//
//   if (predicate) { parallel with those conditions folded } else { the original parallel }
//
// Which value to fold to: the one that keeps a select's non-constant arm (`mask ? -inf :
// value` and `inside ? value : pad` both fold to `value`), or an `if`'s branch that does more
// than store constants; false when neither side stands out. The folded copy is simplified and
// loses the lets nothing reads any more. Conditions without a predicate stay in both copies;
// a predicate that mentions a load or is larger than a few operators is not used (it is
// evaluated once per tile, so it must be cheap). A predicate that folds to true replaces the
// loop by its folded copy; one that folds to false leaves the loop alone.
//
// Backend-neutral: the result is an ordinary statement-level IfThenElse of two Parallels,
// with a uniform condition (over dims, scalars, block and loop indices).
#pragma once

#include "ir/IR.h"

namespace tilegen::passes {

struct VersionStats {
  int versioned = 0; // parallel loops split in two
  int folded = 0;    // parallel loops replaced by their folded copy (predicate always true)
};

ir::Kernel version_by_range(const ir::Kernel& k, VersionStats* stats = nullptr);

} // namespace tilegen::passes
