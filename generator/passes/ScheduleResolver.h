// ScheduleResolver: picks the value of every tile constant of a kernel for one target.
//
// The rule (docs/spec.md "Schedule resolution", docs/c-backend.md):
//  1. candidates of a tile constant = its per-target list (schedule.targets.<target>) if the
//     spec gives one, else that of the nearest target along target.fallbacks that has one
//     (c_avx512 -> c_avx2 -> c), else its declared list (ranges already expanded);
//  2. configurations = the Cartesian product in declaration order (the first declared
//     constant varies slowest);
//  3. keep a configuration iff every `require` predicate holds (flags and value params bound
//     to the instance's values) and its block footprint fits target.tile_budget_bytes, where
//     footprint = sum over every Alloc'd buffer of (product of its extents) x (dtype bytes);
//  4. choose the largest footprint; ties go to the earliest configuration.
// Why largest: on every backend a bigger tile means more reuse per byte moved (fewer global
// loads per flop), and the budget already encodes what the target can hold (registers/shared
// memory on GPUs, L2 on CPUs). It is deterministic and explainable in one line, which a
// build-time generator needs; a tuning database can override it later.
//
// No survivor is a user error at the schedule, with a note per requirement and the smallest
// footprint against the budget.
//
// GPU targets (target.is_gpu()) use the tile recommender instead (passes/TileRecommend,
// docs/recommend.md): the same enumeration and `require`, then memory planning (shared memory,
// threads and estimated registers against the target's limits) and an analytic model ranking
// the eligible configurations per shape class.
#pragma once

#include "ir/IR.h"
#include "ir/Substitute.h"
#include "support/Diagnostics.h"
#include "targets/Target.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tilegen::passes {

struct ScheduleChoice {
  std::vector<std::pair<std::string, int64_t>> values; // tile constants, declaration order
  int64_t footprint = 0;                               // bytes of the chosen configuration
  int64_t budget = 0;                                  // target.tile_budget_bytes
  size_t configurations = 0;                           // size of the product
  size_t feasible = 0;                                 // configurations that passed step 3
  std::string summary; // "BM=128 BN=128 BK=64: footprint 196608 B of 262144 B budget"
  std::string reason;  // "largest footprint of 12 feasible configurations (of 27)"
  std::string shape_class; // GPU targets: the class the choice is for ("large", "small_m")
  // The rule's whole order: every feasible configuration (tile constants in declaration
  // order), best first, so ranked.front() is `values`. Set by the tile-resolution rule (C,
  // Metal, WGSL), which `tilegen tune` enumerates in this order; empty for GPU recommendations.
  std::vector<std::vector<int64_t>> ranked;
};

// `instance_values`: flag (0/1) and value-param values by name. Returns nullopt after
// reporting an error through `diag`.
std::optional<ScheduleChoice> resolve_schedule(const ir::Kernel& k,
                                               const std::map<std::string, int64_t>& instance_values,
                                               const Target& target, DiagEngine& diag);
// A configuration that replaces the rule's choice: an entry of a tuning database
// (docs/tune.md) or the configuration `tilegen tune` is timing. The caller has checked that it
// is eligible (tune::ranked_configurations lists it); `origin` says where it came from in the
// generated code's notes ("tuning database db.json entry softmax/f32/c_avx512/large").
struct TunedConfig {
  std::vector<int64_t> values; // tile constants, declaration order
  std::string origin;
  std::string doc = "docs/tune.md"; // where the notes send the reader
};

// The same for one shape class of a GPU target ("large", or a schedule.classes name; C
// targets have only "large"). An unknown class is an internal error. `known`: the
// passes::recommend result for this kernel, instance and target when the caller has it (the
// driver asks once per instance and target, then instantiates each class's variant).
// `tuned`: take this configuration instead of the rule's (the notes still name the rule's).
struct Recommendation;
std::optional<ScheduleChoice> resolve_schedule(const ir::Kernel& k,
                                               const std::map<std::string, int64_t>& instance_values,
                                               const Target& target, DiagEngine& diag,
                                               const std::string& shape_class,
                                               const Recommendation* known = nullptr,
                                               const TunedConfig* tuned = nullptr);

// The schedule.targets candidates of `tc` that apply to `target`: its own entry, else the
// nearest fallback's (c_avx512 -> c_avx2 -> c), else nullptr (use the declared candidates).
const std::vector<int64_t>* target_override(const ir::TileConst& tc, const Target& target);

// The same for one shape class: along the chain (the target, then its fallbacks, nearest
// first), the first target that the class's `targets:` or schedule.targets names `tc` for; at
// one target the class's entry comes first. nullptr: use the declared candidates. `from_class`,
// if given, says whether the class's entry was the one taken.
const std::vector<int64_t>* class_override(const ir::TileConst& tc, const Target& target,
                                           const std::string& shape_class,
                                           bool* from_class = nullptr);

// Bindings of the kernel's flags and value params as constants (VarRef -> BoolImm/IntImm).
ir::VarMap instance_var_map(const ir::Kernel& k, const std::map<std::string, int64_t>& values);

// The constant an integer or bool expression takes with the constants of `m` substituted:
// ir::eval_int where it applies (no IR is built: the resolver and the recommender ask this
// for every configuration and shape), else simplify(substitute(e, m)); nullopt if it does not
// fold to a constant. Bools are 0/1.
std::optional<int64_t> fold_with(const ir::Expr& e, const ir::VarMap& m);

// The buffers a block allocates, in program order.
std::vector<ir::BufferPtr> allocated_buffers(const ir::Stmt& body);

// The bytes of `buffers` with the constants of `m` substituted (saturating at INT64_MAX), or
// nullopt after a located error for an extent that is not a positive constant; `config` names
// the configuration in that message ("BM=64 BN=32").
std::optional<int64_t> onchip_footprint(const std::vector<ir::BufferPtr>& buffers,
                                        const ir::VarMap& m, const std::string& config,
                                        DiagEngine& diag);

} // namespace tilegen::passes
