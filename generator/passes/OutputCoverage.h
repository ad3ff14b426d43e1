// OutputCoverage: whether a kernel writes every element of a global tensor on every call.
//
// True when g is an output (access: write) whose only write is a copy from a fragment outside
// every loop, condition and split combine, and whose tile covers g over the grid: in each dim
// the whole extent from 0, or a grid index times the tile over cdiv(dim, tile) blocks, or a grid
// index alone over dim blocks, each grid index in one dim only (gemm's C, attention's O; not
// softmax's Y, written in a loop). The CUDA emitter's realigned and repitched copies
// (docs/cuda-backend.md) do not copy such an output in before the call.
#pragma once

#include "ir/IR.h"

namespace tilegen::passes {

bool writes_whole(const ir::Kernel& k, const ir::Buffer& g);

} // namespace tilegen::passes
