// What tilegen explain draws, found by one walk of the instantiated kernel in program order.
// Versioning passes (VersionSingleTrip, VersionByRange) copy bodies: a gemm, buffer or loop of
// the spec can appear several times; each is kept once, at its first appearance.
#pragma once

#include "ir/IR.h"

#include <set>
#include <string>
#include <vector>

namespace tilegen::explain {

struct Walk {
  std::vector<const ir::Gemm*> gemms;     // one per (a, b, c) buffers
  std::vector<const ir::Buffer*> shared;  // Alloc'd shared buffers, one per name
  std::vector<const ir::For*> pipelined;  // pipelined loops, one per source location
  std::set<std::string> filled_from_global; // shared buffers some copy fills from a tensor
  std::vector<const ir::Buffer*> fills;      // the same buffers, first copy first
};

Walk walk(const ir::Stmt& body);

} // namespace tilegen::explain
