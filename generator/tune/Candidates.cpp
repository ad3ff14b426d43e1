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

// The C rule's feasible set, in its order. resolve_schedule runs first: it reports the
// located errors (unsatisfiable, over budget, a non-constant extent) and gives the choice this
// list must start with.
std::optional<std::vector<std::vector<int64_t>>> c_ranked(
    const ir::Kernel& k, const std::map<std::string, int64_t>& instance_values,
    const Target& target, DiagEngine& diag) {
  auto choice = passes::resolve_schedule(k, instance_values, target, diag);
  if (!choice)
    return std::nullopt;
  const auto& tcs = k.tile_consts;
  std::vector<std::vector<int64_t>> cands;
  for (const auto& tc : tcs) {
    const auto* over = passes::target_override(tc, target);
    cands.push_back(over ? *over : tc.candidates);
  }
  const ir::VarMap inst = passes::instance_var_map(k, instance_values);
  const auto buffers = passes::allocated_buffers(k.body);
  struct Feasible {
    std::vector<int64_t> values;
    int64_t footprint;
  };
  std::vector<Feasible> ok;
  std::vector<size_t> digit(tcs.size(), 0);
  for (size_t n = 0; n < choice->configurations; ++n) {
    ir::VarMap m = inst;
    std::vector<int64_t> vals(tcs.size());
    for (size_t i = 0; i < tcs.size(); ++i) {
      vals[i] = cands[i][digit[i]];
      m[tcs[i].var.get()] = ir::make_i64(vals[i]);
    }
    bool all = std::all_of(k.requirements.begin(), k.requirements.end(), [&](const auto& r) {
      auto b = passes::fold_with(r.pred, m);
      return b && *b != 0;
    });
    if (all) {
      auto fp = passes::onchip_footprint(buffers, m, config_string(k, vals), diag);
      if (!fp)
        return std::nullopt;
      if (*fp <= target.tile_budget_bytes)
        ok.push_back({vals, *fp});
    }
    for (size_t i = tcs.size(); i-- > 0;) {
      if (++digit[i] < cands[i].size())
        break;
      digit[i] = 0;
    }
  }
  std::stable_sort(ok.begin(), ok.end(),
                   [](const Feasible& a, const Feasible& b) { return a.footprint > b.footprint; });
  std::vector<std::vector<int64_t>> out;
  for (auto& f : ok)
    out.push_back(std::move(f.values));
  std::vector<int64_t> chosen;
  for (const auto& [name, v] : choice->values)
    chosen.push_back(v);
  TG_ASSERT(!out.empty() && out.front() == chosen,
            "the C rule's feasible list of kernel '" + k.name + "' does not start with its choice");
  return out;
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
