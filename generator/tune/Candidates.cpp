#include "tune/Candidates.h"

#include "passes/ScheduleResolver.h"
#include "support/InternalError.h"

#include <algorithm>
#include <numeric>

namespace tilegen::tune {

std::string config_string(const ir::Kernel& k, const std::vector<int64_t>& values) {
  std::string s;
  for (size_t i = 0; i < k.tile_consts.size() && i < values.size(); ++i)
    s += (i ? " " : "") + k.tile_consts[i].var->name + "=" + std::to_string(values[i]);
  return s;
}

namespace {

// The C rule's feasible set, in its order: resolve_schedule ranks it (ScheduleChoice::ranked:
// the largest-footprint rule or the streaming rule, docs/spec.md "The tile-resolution rule")
// and reports the located errors (unsatisfiable, over budget, a non-constant extent).
std::optional<std::vector<std::vector<int64_t>>> c_ranked(
    const ir::Kernel& k, const std::map<std::string, int64_t>& instance_values,
    const Target& target, DiagEngine& diag) {
  auto choice = passes::resolve_schedule(k, instance_values, target, diag);
  if (!choice)
    return std::nullopt;
  std::vector<int64_t> chosen;
  for (const auto& [name, v] : choice->values)
    chosen.push_back(v);
  TG_ASSERT(!choice->ranked.empty() && choice->ranked.front() == chosen,
            "the C rule's ranking of kernel '" + k.name + "' does not start with its choice");
  return choice->ranked;
}

} // namespace

std::optional<std::vector<std::vector<int64_t>>> ranked_configurations(
    const ir::Kernel& k, const std::map<std::string, int64_t>& instance_values,
    const Target& target, const std::string& shape_class, DiagEngine& diag,
    const passes::Recommendation* known) {
  if (!target.is_gpu()) {
    TG_ASSERT(shape_class == passes::kLargeClass,
              "C targets have no shape class '" + shape_class + "'");
    return c_ranked(k, instance_values, target, diag);
  }
  std::optional<passes::Recommendation> computed;
  if (!known) {
    computed = passes::recommend(k, instance_values, target, diag);
    if (!computed)
      return std::nullopt;
    known = &*computed;
  }
  const passes::ClassChoice* cls = known->find(shape_class);
  TG_ASSERT(cls, "kernel '" + k.name + "' has no shape class '" + shape_class + "'");
  std::vector<std::vector<int64_t>> out;
  for (const auto& [index, model] : cls->ranked)
    out.push_back(known->configs[index].values);
  return out;
}

} // namespace tilegen::tune
