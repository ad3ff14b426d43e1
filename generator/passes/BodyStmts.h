// The top-level statements of a loop or parallel body: a Seq's statements, or the one
// statement (shared by passes/FuseParallel and passes/VectorParallel).
#pragma once

#include "ir/IR.h"

#include <vector>

namespace tilegen::passes {

inline std::vector<ir::Stmt> body_stmts(const ir::Stmt& body) {
  if (auto* q = body->as<ir::Seq>())
    return q->stmts;
  return {body};
}

} // namespace tilegen::passes
