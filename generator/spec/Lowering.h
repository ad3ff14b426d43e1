// Lowering: spec::Spec -> one ir::Kernel per type binding. Resolves names with scopes, types
// every expression (inserting the Casts the IR requires) and reports the language's semantic
// errors at their locations: unknown/duplicate/out-of-scope names, shape and rank mismatches,
// dtype errors, access violations, illegal names in shapes and predicates.
#pragma once

#include "ir/IR.h"
#include "spec/SpecAST.h"
#include "support/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tilegen::spec {

// At most this many instances (type bindings x flag values x value-set values) per kernel.
constexpr uint64_t kMaxInstances = 64;

std::optional<std::vector<ir::Kernel>> lower_spec(const Spec& spec, DiagEngine& diag);

} // namespace tilegen::spec
