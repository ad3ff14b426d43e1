// The middle of the compiler: from a type-bound ir::Kernel to the instantiated, legalized
// kernel one variant file is printed from. Read instantiate() in Pipeline.cpp top to bottom:
// one line per pass.
#pragma once

#include "ir/IR.h"
#include "support/Diagnostics.h"
#include "targets/Target.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilegen::passes {

// One specialization of a kernel: values for every flag (0/1) and value-set param.
struct Instance {
  std::string name;                       // "<type suffix>[_<flag><0|1>...][_<param><value>...]"
                                          // e.g. "bf16", "bf16_causal1_D128"
  std::map<std::string, int64_t> values;  // flag / value-param name -> value
};

// All specializations of `k`, flags first then value params, each in declaration order,
// values ascending (false before true).
std::vector<Instance> enumerate_instances(const ir::Kernel& k);

// Resolves tile constants for `target` (the documented rule in docs/spec.md), binds the
// instance's values, substitutes and simplifies, applies the target's legalizations and runs
// the verifier. User errors (unsatisfiable schedule, over-budget buffers) are reported with
// locations through `diag`; returns nullopt then.
std::optional<ir::Kernel> instantiate(const ir::Kernel& k, const Instance& inst,
                                      const Target& target, DiagEngine& diag);
// The same for one shape class of a GPU target (resolve_schedule's class overload): "large",
// or a schedule.classes name. C targets have only "large".
// `known`: the tile recommendation of this kernel, instance and target, if the caller has it.
// `tuned`: the configuration to take instead of the rule's (a tuning database entry, or what
// `tilegen tune` is timing; docs/tune.md).
struct Recommendation;
struct TunedConfig;
std::optional<ir::Kernel> instantiate(const ir::Kernel& k, const Instance& inst,
                                      const Target& target, DiagEngine& diag,
                                      const std::string& shape_class,
                                      const Recommendation* known = nullptr,
                                      const TunedConfig* tuned = nullptr);

} // namespace tilegen::passes
