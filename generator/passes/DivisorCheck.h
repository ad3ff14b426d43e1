// DivisorCheck: integer divisors that the values bound at instantiation make 0.
//
// The front end rejects a divisor that is the constant 0 as written (spec/LowerExpr.cpp); a
// divisor over tile constants, value params or flags (`i % (BN - 64)`, `N / D` with D in
// {0, 64}) can become 0 only once they are bound. x / 0 has a value at run time (0; x % 0 = x;
// docs/spec.md "Operators and typing"), but a divisor that is always 0 in an instance is a
// mistake: it is a located error at the divisor, naming the target and the bound values it
// reads. Runs on the kernel before substitution, so that each divisor keeps its own location;
// selects and ifs whose condition the binding decides are followed into their live side only.
#pragma once

#include "ir/IR.h"
#include "ir/Substitute.h"
#include "support/Diagnostics.h"
#include "targets/Target.h"

namespace tilegen::passes {

// False (and an error per zero divisor) when an integer `/`, `%` or cdiv of k's tensor
// shapes, grid, threads, requirements or body has a divisor that `bound` (the instance's flags
// and value params and the chosen tile constants) makes the constant 0.
bool check_divisors(const ir::Kernel& k, const ir::VarMap& bound, const Target& target,
                    DiagEngine& diag);

} // namespace tilegen::passes
