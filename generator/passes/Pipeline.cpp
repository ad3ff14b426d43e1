// instantiate(): read top to bottom, one line per step.
#include "passes/Pipeline.h"
#include "passes/InstanceCheck.h"

#include "ir/IRPrinter.h"
#include "ir/IRVerifier.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "passes/CheckMetal.h"
#include "passes/DivisorCheck.h"
#include "passes/FuseParallel.h"
#include "passes/LayoutInference.h"
#include "passes/LegalizeC.h"
#include "passes/LegalizeCuda.h"
#include "passes/LegalizeHip.h"
#include "passes/LegalizeWgsl.h"
#include "passes/RedundantLoadElim.h"
#include "passes/ScheduleResolver.h"
#include "passes/SinkReduce.h"
#include "passes/TileRecommend.h"
#include "passes/VersionByRange.h"
#include "passes/VersionSingleTrip.h"
#include "support/InternalError.h"

#include <algorithm>

namespace tilegen::passes {

using namespace ir;

std::vector<Instance> enumerate_instances(const Kernel& k) {
  // One axis per flag, then per value param; the first axis varies slowest.
  struct Axis {
    std::string name;
    std::vector<int64_t> values;
  };
  std::vector<Axis> axes;
  for (const auto& f : k.flags)
    axes.push_back({f->name, {0, 1}});
  for (const auto& d : k.dims) {
    if (d.var->kind != VarKind::ValueParam)
      continue;
    std::vector<int64_t> v = d.values;
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    TG_ASSERT(!v.empty(), "value param '" + d.var->name + "' without values");
    axes.push_back({d.var->name, std::move(v)});
  }

  std::vector<Instance> out;
  std::vector<size_t> digit(axes.size(), 0);
  while (true) {
    Instance inst;
    inst.name = k.type_suffix();
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t v = axes[i].values[digit[i]];
      inst.values[axes[i].name] = v;
      inst.name += (inst.name.empty() ? "" : "_") + axes[i].name + std::to_string(v);
    }
    out.push_back(std::move(inst));
    size_t i = axes.size();
    while (i-- > 0) {
      if (++digit[i] < axes[i].values.size())
        break;
      digit[i] = 0;
    }
    if (i == static_cast<size_t>(-1))
      break;
  }
  return out;
}

namespace {

void check(const Kernel& k, const char* after, bool instantiated) {
  auto errors = verify(k, VerifyOptions{instantiated});
  if (errors.empty())
    return;
  std::string msg = "IR verification failed after " + std::string(after) + " of kernel '" +
                    k.name + "':";
  for (const auto& e : errors)
    msg += "\n  " + e;
  msg += "\n" + to_string(k);
  internal_error(msg);
}

// Per-backend legalization. Only C exists in this milestone; GPU backends add theirs here.
Kernel legalize_for(const Kernel& k, const Target& target) {
  switch (target.backend) {
  case Backend::C: return legalize_c(k);
  // CUDA computes 16-bit floats in f32 registers by itself (emit/Cuda*): it keeps the
  // declared dtypes because mma operands and shared tiles stay 16-bit; only FP8 gemm operands
  // that wgmma does not take become f16.
  case Backend::CUDA: return legalize_cuda(k, target);
  // HIP: as CUDA without wgmma (FP8 gemm operands widened to f16, passes/LegalizeHip).
  case Backend::HIP: return legalize_hip(k, target);
  case Backend::WGSL: return legalize_wgsl(k, target);
  // Metal keeps every dtype: the emitter holds 16- and 8-bit floats in float registers and
  // keeps them half/bfloat/uchar in memory (check_metal rejected what MSL cannot say).
  case Backend::Metal: return k;
  default: internal_error(std::string("no legalization for backend ") + backend_name(target.backend));
  }
}

} // namespace

std::optional<Kernel> instantiate(const Kernel& k, const Instance& inst, const Target& target,
                                  DiagEngine& diag) {
  return instantiate(k, inst, target, diag, kLargeClass);
}

std::optional<Kernel> instantiate(const Kernel& k, const Instance& inst, const Target& target,
                                  DiagEngine& diag, const std::string& shape_class,
                                  const Recommendation* known, const TunedConfig* tuned) {
#ifndef NDEBUG
  check(k, "lowering", false);
#endif
  // Tile constants first: the rule needs the instance's flags/value params for `require`.
  auto choice = resolve_schedule(k, inst.values, target, diag, shape_class, known, tuned);
  if (!choice)
    return std::nullopt;

  // Bind everything fixed at instantiation; tile constants keep their name for emitters.
  VarMap m = instance_var_map(k, inst.values);
  for (size_t i = 0; i < k.tile_consts.size(); ++i) {
    const auto& var = k.tile_consts[i].var;
    m[var.get()] = IntImm::make_named(var->type, choice->values[i].second, var->name, var->loc);
  }
  // Divisors the bound values make 0 (`i % (BN - 64)`): located at each divisor.
  if (!check_divisors(k, m, target, diag))
    return std::nullopt;
  Kernel out = simplify(substitute(k, m));
  out.bindings = inst.values;
  for (const auto& [name, v] : choice->values)
    out.bindings[name] = v;
  out.target = target.name;
  out.notes.push_back(choice->summary);
  out.notes.push_back("chosen as the " + choice->reason);
  // Shapes and on-chip indices the front end could not decide symbolically are constants now.
  std::string config;
  for (const auto& [name, v] : out.bindings)
    config += (config.empty() ? "" : " ") + name + "=" + std::to_string(v);
  if (!check_instance(out, config, diag))
    return std::nullopt;
  check(out, "instantiation", true);

  // A parallel loop whose elements the next one rewrites point for point hands them over in
  // registers (a packed tile's unpacking into the dequantizing loop; passes/FuseParallel).
  out = fuse_parallels(out);
  check(out, "parallel fusion", true);

  // Rewrite what the backend lacks, then fold what the rewrite exposed. What it cannot
  // rewrite is a located error first.
  if (target.backend == Backend::WGSL && !check_wgsl(out, target, diag))
    return std::nullopt;
  if (target.backend == Backend::Metal && !check_metal(out, target, diag))
    return std::nullopt;
  out = simplify(legalize_for(out, target));
  check(out, "legalization", true);

  // Row loops that can run once (cdiv(N, BN) == 1) are versioned so that the single-trip
  // bodies stand in one straight line, where a second copy of the same tile is dropped
  // (passes/VersionSingleTrip, passes/RedundantLoadElim). The condition is uniform, as below.
  out = simplify(eliminate_redundant_loads(version_single_trip(out)));
  check(out, "single-trip versioning", true);

  // Interior tiles skip the masks and guards only edge tiles need: parallel loops with a
  // tile-uniform condition are versioned (passes/VersionByRange). The predicate is uniform
  // (dims, scalars, block and loop indices), so a barrier the WGSL emitter puts after a loop
  // stays in uniform control flow.
  out = simplify(version_by_range(out));
  check(out, "versioning", true);

  // C: a reduce of the tile a versioned parallel fills goes into both versions, where the
  // emitter fuses it with the parallel (passes/SinkReduce; layernorm's squared deviations).
  if (target.backend == Backend::C) {
    out = sink_reduces(out);
    check(out, "reduce sinking", true);
  }

  // GPU targets: thread mappings and swizzles must exist before anything is written (the
  // emitter recomputes the same plan; a conflict is a located user error here).
  if (target.has_thread_layouts() && !infer_layouts(out, target, diag))
    return std::nullopt;
  return out;
}

} // namespace tilegen::passes
