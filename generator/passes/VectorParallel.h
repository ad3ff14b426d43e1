// VectorParallel: which element-wise parallel loops over shared memory a GPU target runs as
// vectors, `width` consecutive points of the innermost variable per thread, and which of their
// accesses then move as vectors (one 4-, 8- or 16-byte shared load or store for the run
// instead of one per point).
//
// Why. A parallel loop that no fragment drives gets the element-wise layout (LayoutInference
// plan_loops); with one point per thread and access, a dequantizing loop (kernels/gemm_w4a16,
// gemm_mxfp4: unpack a nibble, (q - z) * s, store 16 bits) issues a 1-byte load, two 4-byte
// loads and a 2-byte store per weight, and its warps stall on the shared-memory pipe (MIO).
// With 8 consecutive points a thread loads the 8 nibbles in one 32-bit word, the 8 scales in
// two 16-byte loads and stores the 8 weights in one 16-byte store.
//
// The rule (backend-neutral; the target says how wide a vector may be, GpuFacts::
// vector_bytes). A loop qualifies when
//  1. its body is lets and stores only (no if), and it touches no tensor, local or fragment
//     buffer: shared memory only (a global access would lose coalescing when lanes stride
//     over runs);
//  2. every store is an assignment (not +=) into a shared buffer whose last index is the
//     loop's innermost variable j itself and whose other indices are "row expressions": free
//     of j, of loads, and of lets other than row lets (lets whose value, through earlier lets,
//     mentions neither j nor a load; the emitter computes them once per run);
// width = the largest power of two with width * (narrowest stored element) <= vector_bytes
// that divides j's extent and every stored buffer's row (so a run starts aligned). Below 2 the
// loop stays scalar.
//
// Then a load of a shared buffer X moves as a vector when its other indices are row
// expressions and its last index is j, j >> s or j / 2^s (a packed tile's byte, a per-group
// scale): the run of `width` points reads max(1, width >> s) consecutive elements starting at
// (j0 >> s), and point j0 + r reads element r >> s of them (j0 is a multiple of width, so the
// shift distributes). X's row length must be a multiple of that count (alignment), and the
// body must not store into X (the vector is read before any point of the run runs: a point
// that read its own store would see the old value). Other loads stay scalar, per point.
#pragma once

#include "ir/IR.h"

#include <cstdint>
#include <map>
#include <set>

namespace tilegen::passes {

struct ParallelVectorPlan {
  int64_t width = 1;                     // consecutive points of the innermost variable
  std::set<const ir::Store*> stores;     // every store of the body, when width > 1
  std::map<const ir::Load*, int> loads;  // loads read as vectors -> their shift s
  std::set<const ir::Var*> row_lets;     // lets computed once per run
};

// The plan for parallel loop p where a vector may be `vector_bytes` wide (0: none). `width`:
// when > 0, the width to use (the layout's, LayoutPlan::loop_vectors) instead of choosing one;
// the accesses are then re-derived for that width.
ParallelVectorPlan plan_parallel_vector(const ir::Parallel& p, int64_t vector_bytes,
                                        int64_t width = 0);

} // namespace tilegen::passes
