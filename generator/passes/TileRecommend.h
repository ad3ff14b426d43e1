// TileRecommend: the schedule rule of GPU targets (C targets keep the largest-footprint rule of
// ScheduleResolver). Per kernel × instance × target it
//  1. enumerates the configurations exactly like the C rule (per-target candidates, product in
//     declaration order, `require` with the instance's flags and value params);
//  2. plans memory: a configuration is eligible iff its dynamic shared memory <=
//     gpu.smem_per_block, its threads <= target.max_threads and its estimated registers <=
//     gpu.regs_per_thread (passes/ResourceEstimate). None eligible -> a located error at the
//     schedule with the numbers of the closest configuration;
//  3. ranks the eligible ones per shape class with an analytic model (global traffic, flops,
//     occupancy, bytes in flight, wave quantization on gpu.sm_count) and picks the fastest;
//     ties go to the earliest in enumeration order.
// docs/recommend.md gives the model's formulas and the reasons for them.
//
// Shape classes: the spec's schedule.classes (ir::Kernel::shape_classes), evaluated in order at
// dispatch, then the implicit "large" class (every other shape). Each class is represented by
// one problem shape: runtime dims at the largest power of two <= 4096 that lands in the class
// (and meets the dim's min/max/multiple_of), 4096 for dims no class mentions; value params and
// flags take the instance's values.
#pragma once

#include "ir/IR.h"
#include "passes/ResourceEstimate.h"
#include "support/Diagnostics.h"
#include "targets/Target.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tilegen::passes {

inline constexpr const char* kLargeClass = "large";
inline constexpr int64_t kLargeDim = 4096;

struct ShapeClassRep {
  std::string name;                                 // spec class name, or "large"
  std::string text;                                 // the predicate as written ("" for large)
  std::vector<std::pair<std::string, int64_t>> dims; // runtime dims, declaration order
  bool reachable = true; // false: the spec's classes took every shape tried (large only)
  std::string shape_str() const; // "M=64 N=4096 K=4096"
};

// What the model says of one configuration at one class's shape.
struct ModelNumbers {
  int64_t blocks = 0;         // blocks launched at the shape: the grid's times parts
  int64_t parts = 1;          // parts of each tile's loop (split loops; 1: whole)
  int64_t blocks_per_sm = 0;  // occupancy
  const char* occupancy_limit = ""; // "smem", "regs", "threads", "blocks/SM"
  int64_t waves = 0;          // ceil(blocks / (blocks_per_sm * sm_count))
  double wave_eff = 0;        // blocks / (waves * blocks_per_sm * sm_count)
  double traffic_bytes = 0;   // global bytes moved, all blocks (through L2)
  double unique_bytes = 0;    // every tensor once (from DRAM)
  double flops = 0;           // gemm flops, all blocks (padding included)
  double stage_bytes = 0;     // global bytes a block has in flight
  bool overlap = false;       // copies overlap compute (pipelined async or >= 2 blocks/SM)
  double mem_us = 0, compute_us = 0;
  double time_us = 0;         // the ranking key
  const char* bound = "";     // "memory", "latency", "compute"
};

struct ConfigEval {
  std::vector<int64_t> values; // tile constants, declaration order
  ResourceUse use;
  bool eligible = false;
  std::string why_not; // "smem 131072 B > 101376 B; ~300 registers > 255"
  std::string layout_error; // LayoutInference's first message, if it rejected the config
  std::vector<Diagnostic> layout_diags; // ... and all its diagnostics, located, to replay
};

// The candidates of every tile constant for one or more classes (a class's `targets:` entry
// gives it its own; classes whose lists agree share one set) and the configurations they make.
struct CandidateSet {
  std::vector<std::vector<int64_t>> cands; // per tile constant, declaration order
  std::vector<bool> from_class;            // per tile constant: a class's `targets:` gave it
  std::string owner;  // "" when some class takes the schedule-level candidates, else the class
  size_t total = 0;   // size of the product
  size_t first = 0, end = 0; // its configurations: configs[first, end)
  size_t eligible = 0;
};

struct ClassChoice {
  ShapeClassRep shape;
  size_t set = 0; // index into Recommendation::sets
  bool own_candidates = false; // the class's `targets:` gave some of them
  std::vector<std::pair<size_t, ModelNumbers>> ranked; // index into configs, best first
};

struct Recommendation {
  std::vector<std::string> const_names;
  std::vector<ConfigEval> configs; // configurations meeting `require`, enumeration order
  size_t total = 0;                // size of the product (summed over the sets)
  size_t eligible = 0;
  std::vector<CandidateSet> sets;   // one unless a class has its own candidates
  std::vector<ClassChoice> classes; // spec classes in order, then "large"

  const ClassChoice* find(std::string_view cls) const;
  std::string config_str(size_t i) const; // "BM=128 BN=128 BK=64 stages=3 threads=256"
};

// The representative shape of every class of `k` for one instance; located errors (a class
// no power-of-two shape falls in) through `diag`.
std::optional<std::vector<ShapeClassRep>> shape_class_reps(
    const ir::Kernel& k, const std::map<std::string, int64_t>& instance_values, DiagEngine& diag);

// Steps 1-3 above. nullopt after reporting the error (unsatisfiable, over budget, ...).
std::optional<Recommendation> recommend(const ir::Kernel& k,
                                        const std::map<std::string, int64_t>& instance_values,
                                        const Target& target, DiagEngine& diag);

// The model for one configuration (bound by `m`: instance + tile constants) at `shape`.
ModelNumbers model_config(const ir::Kernel& k, const ir::VarMap& m, const ResourceUse& use,
                          const ShapeClassRep& shape, const Target& target);

// The ranked table `tilegen dump --stage=recommend` prints: per class, the shape, then one
// line per eligible configuration (at most `top` of them, 0 = all), best first, and a count
// of the ineligible ones with the first reasons.
std::string format_recommendation(const Recommendation& r, const Target& target, size_t top = 0);

// One line for Kernel::notes: "sm_90 class large (M=4096 N=4096 K=4096): BM=128 ... est.
// 231.4 us (compute), 1 block/SM (smem), 4 waves at 97%, traffic 1.50 GB, 137.4 GFLOP".
std::string choice_note(const Recommendation& r, const ClassChoice& c, const Target& target);

} // namespace tilegen::passes
