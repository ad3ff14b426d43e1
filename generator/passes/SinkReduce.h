// SinkReduce: a reduce after a versioned parallel moves into both versions (C backend).
//
// passes/VersionByRange splits a parallel with a tile-uniform condition into
//   if (predicate) { parallel, condition folded } else { the original parallel }
// and a reduce of the tile the parallel fills then follows the `if`. layernorm's squared
// deviations (`t = k * BN + j < N ? (x - mu)^2 : 0`, then `reduce sum t`) are such a pair: the
// C emitter fuses a parallel with the reduce right after it (the tile is never stored,
// CEmitter::find_fused_reductions), but here the reduce follows the `if`, so t was written
// (32 KiB per block at BM 2, BN 4096) and read back. This pass rewrites
//   if (c) { P1 } else { P2 }  reduce(t)
// into
//   if (c) { P1  reduce(t) } else { P2  reduce(t) }
// (the same Reduce node in both branches), where P1 and P2 are parallels that store into the
// reduce's source. The two are equivalent whatever the statements do: the reduce runs once,
// after whichever branch ran. Only the C pipeline runs it, so the GPU emitters' output is
// unchanged.
#pragma once

#include "ir/IR.h"

namespace tilegen::passes {

ir::Kernel sink_reduces(const ir::Kernel& k);

} // namespace tilegen::passes
