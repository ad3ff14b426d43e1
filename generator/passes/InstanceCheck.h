// InstanceCheck: the shape rules the front end can only decide once tile constants, flags and
// value params are bound.
//
// The front end compares extents symbolically and reports a mismatch only when two extents are
// provably different ([BM, BK] against [BK, BN] is accepted). After instantiation every on-chip
// extent is a constant, so the same rules become decidable; this pass reports each violation as
// a located user error (the op's line, the configuration that broke it) instead of letting the
// IR verifier fail on it as on a broken invariant:
//  - copy: the tile fits both sides (a tile copied whole between two buffers has one shape);
//    on-chip regions with constant offsets lie inside their buffer;
//  - gemm: a is M x K, b is K x N, c is M x N (after transposes);
//  - reduce: the destination is the source without the reduced dim;
//  - every index into an on-chip buffer (loads and stores in parallel bodies, offsets of
//    regions) lies in [0, extent) over the ranges of the loop and parallel variables
//    (RangeAnalysis); an index it cannot bound is an error too, since an on-chip access out
//    of bounds corrupts other buffers (there is no bounds check on registers and shared
//    memory, unlike tensor accesses).
//  - the points of a parallel are independent (docs/spec.md#parallel): a buffer the body
//    writes (not `local`) is read and written at one index only, and if that index leaves out
//    one of the loop's variables the body does not read it back (or `+=` into it).
// Runs in instantiate() right after substitution, on every backend.
#pragma once

#include "ir/IR.h"
#include "support/Diagnostics.h"

#include <string>

namespace tilegen::passes {

// `config` names the bindings for the messages ("BM=64 BN=32"). Returns false after reporting
// the errors.
bool check_instance(const ir::Kernel& k, const std::string& config, DiagEngine& diag);

} // namespace tilegen::passes
