// Candidates: the eligible configurations of one kernel instance, target and shape class, in
// the order the schedule rule ranks them (its choice first). `tilegen tune` times them;
// `generate --tuning-db` accepts an entry only if its configuration is among them.
//  - GPU targets: the recommender's ranking of the class (passes/TileRecommend: `require`,
//    resource limits, layout inference, then the analytic model, best first).
//  - C targets (class "large" only): the configurations that meet `require` and fit the tile
//    budget (passes/ScheduleResolver), largest footprint first, ties in enumeration order --
//    the first is the one resolve_schedule picks.
#pragma once

#include "ir/IR.h"
#include "passes/TileRecommend.h"
#include "support/Diagnostics.h"
#include "targets/Target.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilegen::tune {

// nullopt after a located error (an unsatisfiable schedule); `known`: the recommendation of
// this kernel, instance and target if the caller has it (GPU targets).
std::optional<std::vector<std::vector<int64_t>>> ranked_configurations(
    const ir::Kernel& k, const std::map<std::string, int64_t>& instance_values,
    const Target& target, const std::string& shape_class, DiagEngine& diag,
    const passes::Recommendation* known = nullptr);

// "BM=2 BN=1024"
std::string config_string(const ir::Kernel& k, const std::vector<int64_t>& values);

} // namespace tilegen::tune
