// IRVerifier: checks the invariants every pass must preserve, and returns what is broken as
// readable strings (empty = fine). Passes run it after each step in debug builds and
// instantiate() always runs it at the end; a failure is a tilegen bug (internal error), never
// a user error.
//
// Checked:
//  * every VarRef is in scope: Dim/ValueParam/Flag/Scalar from the kernel's lists, TileConst
//    from tile_consts, BlockIndex from the grid, LoopVar inside its For, ParallelVar inside
//    its Parallel, Let after its LetStmt in the same Seq (or a nested statement);
//  * every buffer use names a kernel tensor or an Alloc in scope; a buffer is allocated once;
//  * index and offset counts equal ranks; region tile ranks agree; bool conditions;
//  * Parallel bodies hold only Store, LetStmt, IfThenElse and Seq;
//  * gemm/reduce operand shapes agree where they are constant;
//  * after instantiation (`instantiated`): no Flag/ValueParam/TileConst is referenced, every
//    on-chip shape and every on-chip region extent is a positive constant, pipelined stages
//    are constant, and on-chip regions lie inside their buffers where offsets are constant.
#pragma once

#include "ir/IR.h"

#include <string>
#include <vector>

namespace tilegen::ir {

struct VerifyOptions {
  bool instantiated = false;
};

std::vector<std::string> verify(const Kernel& k, const VerifyOptions& opts = {});

} // namespace tilegen::ir
