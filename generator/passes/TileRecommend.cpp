// The tile recommender: enumeration, memory planning (eligibility and its error), shape
// classes, ranking and the printed table. The model itself is in TileRecommendModel.cpp.
#include "passes/TileRecommend.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "passes/FuseParallel.h"
#include "passes/LayoutInference.h"
#include "passes/RedundantLoadElim.h"
#include "passes/ScheduleResolver.h"
#include "passes/VersionSingleTrip.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <sstream>

namespace tilegen::passes {

using namespace ir;

namespace {

// Same cap as the C rule: a typo in a range must not hang the build.
constexpr size_t kMaxConfigurations = 1u << 20;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}

std::string bytes_str(double b) {
  if (b >= 1e9)
    return fmt("%.2f GB", b / 1e9);
  if (b >= 1e6)
    return fmt("%.1f MB", b / 1e6);
  if (b >= 1e3)
    return fmt("%.1f kB", b / 1e3);
  return fmt("%.0f B", b);
}

std::string flops_str(double f) {
  if (f >= 1e9)
    return fmt("%.1f GFLOP", f / 1e9);
  if (f >= 1e6)
    return fmt("%.1f MFLOP", f / 1e6);
  return fmt("%.0f FLOP", f);
}

// Dims (kind Dim) a class predicate mentions, in declaration order.
class DimRefs : public IRVisitor {
public:
  std::set<const Var*> vars;

protected:
  void visit_VarRef(const VarRef* n) override {
    if (n->var->kind == VarKind::Dim)
      vars.insert(n->var.get());
  }
};

// Powers of two from kLargeDim down to 1 that meet the dim's declared constraints; the
// smallest legal value if none does.
std::vector<int64_t> ladder(const DimParam& d) {
  std::vector<int64_t> out;
  for (int64_t v = kLargeDim; v >= 1; v /= 2) {
    if ((d.min && v < *d.min) || (d.max && v > *d.max) ||
        (d.multiple_of && *d.multiple_of > 0 && v % *d.multiple_of != 0))
      continue;
    out.push_back(v);
  }
  if (out.empty()) {
    int64_t v = d.min ? *d.min : 0;
    if (d.multiple_of && *d.multiple_of > 0 && v % *d.multiple_of != 0)
      v += *d.multiple_of - v % *d.multiple_of;
    out.push_back(v);
  }
  return out;
}

} // namespace

std::string ShapeClassRep::shape_str() const {
  std::string s;
  for (const auto& [n, v] : dims)
    s += (s.empty() ? "" : " ") + n + "=" + std::to_string(v);
  return s.empty() ? "no runtime dims" : s;
}

const ClassChoice* Recommendation::find(std::string_view cls) const {
  for (const auto& c : classes)
    if (c.shape.name == cls)
      return &c;
  return nullptr;
}

std::string Recommendation::config_str(size_t i) const {
  std::string s;
  for (size_t j = 0; j < const_names.size(); ++j)
    s += (j ? " " : "") + const_names[j] + "=" + std::to_string(configs[i].values[j]);
  return s.empty() ? "no tile constants" : s;
}

std::optional<std::vector<ShapeClassRep>> shape_class_reps(
    const Kernel& k, const std::map<std::string, int64_t>& instance_values, DiagEngine& diag) {
  const VarMap inst = instance_var_map(k, instance_values);
  DimRefs refs; // dims any class mentions
  for (const auto& [name, c] : k.shape_classes)
    refs.visit(c.pred);
  const size_t n_cls = k.shape_classes.size();
  std::vector<ShapeClassRep> out;
  bool ok = true;
  for (size_t c = 0; c <= n_cls; ++c) { // the declared classes, then "large"
    ShapeClassRep rep;
    rep.name = c < n_cls ? k.shape_classes[c].first : kLargeClass;
    rep.text = c < n_cls ? k.shape_classes[c].second.text : "";
    const SourceLoc loc = c < n_cls                  ? k.shape_classes[c].second.loc
                          : !k.shape_classes.empty() ? k.shape_classes.front().second.loc
                                                     : k.loc;
    std::map<std::string, int64_t> pinned;
    if (auto it = k.class_shapes.find(rep.name); it != k.class_shapes.end())
      pinned.insert(it->second.begin(), it->second.end());

    // Dims a class mentions and the spec does not pin vary over their ladders; every other
    // dim is pinned or at the top of its ladder.
    VarMap base = inst;
    std::vector<const DimParam*> varying;
    std::vector<std::vector<int64_t>> ladders;
    size_t combos = 1;
    for (const auto& d : k.dims) {
      if (d.var->kind != VarKind::Dim)
        continue;
      if (auto p = pinned.find(d.var->name); p != pinned.end()) {
        base[d.var.get()] = make_i64(p->second);
      } else if (refs.vars.count(d.var.get())) {
        varying.push_back(&d);
        ladders.push_back(ladder(d));
        combos *= ladders.back().size();
      } else {
        base[d.var.get()] = make_i64(ladder(d).front());
      }
    }
    if (combos > 100000) {
      diag.error(loc, "shape-class predicates mention " + std::to_string(varying.size()) +
                          " dims; the recommender represents classes over at most 4 unpinned "
                          "dims (pin some with `shape:`)");
      return std::nullopt;
    }
    // Every combination, largest values first (the first varying dim slowest); the class keeps
    // the one with the largest product of its dims among those it is the first class to take.
    std::optional<std::vector<int64_t>> best;
    double best_size = -1;
    std::vector<size_t> digit(varying.size(), 0);
    for (size_t n = 0; n < combos; ++n) {
      VarMap m = base;
      std::vector<int64_t> vals(varying.size());
      double size = 0;
      for (size_t i = 0; i < varying.size(); ++i) {
        vals[i] = ladders[i][digit[i]];
        m[varying[i]->var.get()] = make_i64(vals[i]);
        size += std::log2(static_cast<double>(std::max<int64_t>(vals[i], 1)));
      }
      size_t cls = n_cls;
      for (size_t i = 0; i < n_cls; ++i) {
        auto b = fold_with(k.shape_classes[i].second.pred, m);
        if (b && *b) {
          cls = i;
          break;
        }
      }
      if (cls == c && size > best_size) {
        best_size = size;
        best = vals;
      }
      for (size_t i = varying.size(); i-- > 0;) {
        if (++digit[i] < ladders[i].size())
          break;
        digit[i] = 0;
      }
    }
    if (!best) {
      std::string names, pins;
      for (const DimParam* d : varying)
        names += (names.empty() ? "" : ", ") + d->var->name;
      for (const auto& [n, v] : pinned)
        pins += (pins.empty() ? "" : ", ") + n + "=" + std::to_string(v);
      if (varying.empty() && !pinned.empty()) {
        diag.error(loc, "the shape pinned for shape class '" + rep.name + "' (" + pins +
                            ") is not in the class: its predicate does not hold there or an "
                            "earlier class takes it");
        ok = false;
        continue;
      }
      if (c < n_cls || !pinned.empty()) {
        diag.error(loc, "shape class '" + rep.name + "' takes no shape the recommender can " +
                            "represent (tried powers of two 1..4096 for " +
                            (names.empty() ? "no dims" : names) +
                            (pins.empty() ? "" : " with " + pins + " pinned") +
                            ", earlier classes first)");
        ok = false;
        continue;
      }
      rep.reachable = false; // the classes take every shape: represent "large" at the top
      best = std::vector<int64_t>();
      for (const auto& l : ladders)
        best->push_back(l.front());
    }
    for (const auto& d : k.dims) {
      if (d.var->kind != VarKind::Dim)
        continue;
      auto it = std::find(varying.begin(), varying.end(), &d);
      int64_t v = it != varying.end() ? (*best)[it - varying.begin()]
                                      : *as_const_int(base.at(d.var.get()));
      rep.dims.emplace_back(d.var->name, v);
    }
    out.push_back(std::move(rep));
  }
  if (!ok)
    return std::nullopt;
  return out;
}

namespace {

// Where a candidate list came from, for the notes of the errors below.
std::string candidates_source(const Kernel& k, const CandidateSet& set, size_t i, const Target& t) {
  if (set.from_class[i])
    return " (from schedule.classes." + set.owner + ".targets)";
  return target_override(k.tile_consts[i], t) ? " (from schedule.targets)" : "";
}

// " in shape class 'x'" for a class's own candidates; "" for the schedule-level ones.
std::string class_phrase(const CandidateSet& set) {
  return set.owner.empty() ? "" : " in shape class '" + set.owner + "'";
}

// The memory-planning error: nothing eligible in `set`.
void report_over_budget(const Kernel& k, const Recommendation& r, const Target& t,
                        const CandidateSet& set, DiagEngine& diag) {
  const GpuFacts& g = t.gpu;
  const SourceLoc loc = k.tile_consts.empty() ? k.loc : k.tile_consts.front().loc;
  bool all_smem = true, all_threads = true, all_regs = true;
  size_t n_smem = 0, n_threads = 0, n_regs = 0, n_sm = 0, n_layout = 0, first_layout = set.first;
  size_t min_smem = set.first, min_threads = set.first, min_regs = set.first, closest = set.first;
  double closest_ratio = std::numeric_limits<double>::infinity();
  for (size_t i = set.first; i < set.end; ++i) {
    const ResourceUse& u = r.configs[i].use;
    bool s = u.smem_bytes > g.smem_per_block, th = u.threads > t.max_threads,
         rg = u.registers > g.regs_per_thread,
         sm = !s && !th && !rg && !u.registers_fit(g);
    n_smem += s;
    n_threads += th;
    n_regs += rg;
    n_sm += sm;
    if (!s && !th && !rg && !sm && n_layout++ == 0)
      first_layout = i;
    all_smem &= s;
    all_threads &= th;
    all_regs &= rg;
    const auto& c = r.configs;
    if (u.smem_bytes < c[min_smem].use.smem_bytes)
      min_smem = i;
    if (u.threads < c[min_threads].use.threads)
      min_threads = i;
    if (u.registers < c[min_regs].use.registers)
      min_regs = i;
    double ratio = std::max({double(u.smem_bytes) / g.smem_per_block,
                             double(u.threads) / t.max_threads,
                             double(u.registers) / g.regs_per_thread});
    if (ratio < closest_ratio) {
      closest_ratio = ratio;
      closest = i;
    }
  }
  const size_t n = set.end - set.first;
  std::string msg = "unsatisfiable schedule for target '" + t.name + "'" + class_phrase(set) + ": ";
  auto detail = [&](size_t i, const std::string& what) {
    return r.config_str(i) + ": " + what;
  };
  if (n_layout > 0) {
    msg += "layout inference rejects every configuration within the block's limits (" +
           std::to_string(n_layout) + " of " + std::to_string(n) +
           "); the first, " + r.config_str(first_layout) + ": " +
           r.configs[first_layout].layout_error;
  } else if (all_smem) {
    const ResourceUse& u = r.configs[min_smem].use;
    msg += "every configuration needs more shared memory than the " +
           std::to_string(g.smem_per_block) + " bytes a block may use; the smallest needs " +
           std::to_string(u.smem_bytes) + " bytes (" + detail(min_smem, u.smem_breakdown()) + ")";
  } else if (all_threads) {
    const ResourceUse& u = r.configs[min_threads].use;
    msg += "every configuration needs more threads than the " + std::to_string(t.max_threads) +
           " a block may have; the fewest is " + std::to_string(u.threads) + " (" +
           r.config_str(min_threads) + ")";
  } else if (all_regs) {
    const ResourceUse& u = r.configs[min_regs].use;
    msg += "every configuration needs more registers than the " +
           std::to_string(g.regs_per_thread) +
           " a thread may use (an estimate; ptxas decides); the fewest is ~" +
           std::to_string(u.registers) + " (" + detail(min_regs, u.register_breakdown()) + ")";
  } else {
    const ResourceUse& u = r.configs[closest].use;
    msg += "no configuration fits a block's limits (" + std::to_string(g.smem_per_block) +
           " bytes of shared memory, " + std::to_string(t.max_threads) + " threads, " +
           std::to_string(g.regs_per_thread) + " registers per thread, " +
           std::to_string(g.regs_per_sm) + " registers per SM); the closest, " +
           r.config_str(closest) + ", needs " + std::to_string(u.smem_bytes) + " bytes (" +
           u.smem_breakdown() + "), " + std::to_string(u.threads) + " threads and ~" +
           std::to_string(u.registers) + " registers per thread (" + u.register_breakdown() +
           ")";
  }
  const auto& replay = n_layout > 0 ? r.configs[first_layout].layout_diags : std::vector<Diagnostic>{};
  if (!replay.empty() && replay.front().severity == Severity::Error) {
    // The layout error is the user's to fix at the ops it names: show it where it arises,
    // then say that every configuration within the limits fails the same way.
    for (const auto& d : replay) {
      if (d.severity == Severity::Error)
        diag.error(d.loc, d.message);
      else
        diag.note(d.loc, d.message);
    }
    diag.note(loc, "layout inference rejects every configuration within the block's limits (" +
                       std::to_string(n_layout) + " of " + std::to_string(n) +
                       "); shown for the first, " + r.config_str(first_layout));
  } else {
    diag.error(loc, msg);
  }
  for (size_t i = 0; i < k.tile_consts.size(); ++i)
    diag.note(k.tile_consts[i].loc, k.tile_consts[i].var->name + " candidates for target '" +
                                        t.name + "'" + class_phrase(set) + ": " +
                                        list_str(set.cands[i]) + candidates_source(k, set, i, t));
  diag.note(loc, std::to_string(n) + " configuration" + (n == 1 ? " meets" : "s meet") +
                     " the requirements: " + std::to_string(n_smem) + " over shared memory, " +
                     std::to_string(n_threads) + " over the thread limit, " +
                     std::to_string(n_regs) + " over the register estimate, " +
                     std::to_string(n_sm) + " over an SM's " + std::to_string(g.regs_per_sm) +
                     " registers (threads x registers, or a warp-specialized consumer's "
                     "setmaxnreg budget)" +
                     (n_layout ? ", " + std::to_string(n_layout) +
                                     " within the limits but rejected by layout inference"
                               : std::string()));
}

// Step 2 for one configuration (`m` binds the instance and the tile constants): memory
// planning on the kernel as instantiation will build it: layouts first (a configuration layout
// inference rejects is not eligible; its message is kept), then the block's resources against
// the target's limits. nullopt after a reported error. The parallel loops are fused as
// instantiation fuses them: a shared buffer fused away is not allocated, so it is not counted.
std::optional<ConfigEval> plan_config(const Kernel& k, const VarMap& m, const Target& target,
                                      DiagEngine& diag) {
  Kernel ik = fuse_parallels(simplify(substitute(k, m)));
  std::ostringstream layout_out;
  DiagEngine layout_diag(layout_out);
  layout_diag.set_error_limit(1);
  auto plan = infer_layouts(ik, target, layout_diag);
  auto use = estimate_resources(ik, {}, target, diag, plan ? &*plan : nullptr);
  if (!use)
    return std::nullopt;
  ConfigEval e;
  e.use = std::move(*use);
  const GpuFacts& g = target.gpu;
  auto why = [&](const std::string& s) { e.why_not += (e.why_not.empty() ? "" : "; ") + s; };
  if (e.use.smem_bytes > g.smem_per_block)
    why("smem " + std::to_string(e.use.smem_bytes) + " B > " + std::to_string(g.smem_per_block) +
        " B");
  if (e.use.threads > target.max_threads)
    why(std::to_string(e.use.threads) + " threads > " + std::to_string(target.max_threads));
  if (e.use.registers > g.regs_per_thread)
    why("~" + std::to_string(e.use.registers) + " registers > " +
        std::to_string(g.regs_per_thread));
  else if (e.use.register_budget > 0 && !e.use.registers_fit(g))
    why("~" + std::to_string(e.use.registers) + " registers > the " +
        std::to_string(e.use.register_budget) +
        " a warp-specialized consumer thread gets (setmaxnreg)");
  else if (e.use.threads <= target.max_threads && !e.use.registers_fit(g))
    why(std::to_string(e.use.threads) + " threads x ~" + std::to_string(e.use.registers) +
        " registers > " + std::to_string(g.regs_per_sm) + " per SM");
  if (!plan) {
    std::string msg = layout_diag.diagnostics().empty() ? std::string("no layout")
                                                        : layout_diag.diagnostics().front().message;
    why("layout: " + msg);
    e.layout_error = msg;
    e.layout_diags = layout_diag.diagnostics();
  }
  e.eligible = e.why_not.empty();
  return e;
}

} // namespace

std::optional<Recommendation> recommend(const Kernel& k,
                                        const std::map<std::string, int64_t>& instance_values,
                                        const Target& target, DiagEngine& diag) {
  const auto& tcs = k.tile_consts;
  const SourceLoc sched_loc = tcs.empty() ? k.loc : tcs.front().loc;
  const auto buffers = allocated_buffers(k.body);
  Recommendation rec;
  for (const auto& tc : tcs)
    rec.const_names.push_back(tc.var->name);

  // 1. Candidates per class (the schedule's, or the class's own `targets:` entry); classes
  // with the same lists share a set.
  std::vector<std::string> class_names;
  for (const auto& [name, c] : k.shape_classes)
    class_names.push_back(name);
  class_names.push_back(kLargeClass);
  std::vector<size_t> class_set;
  std::vector<bool> class_own;
  for (const auto& cls : class_names) {
    CandidateSet set;
    bool own = false;
    for (const auto& tc : tcs) {
      bool from_class = false;
      const std::vector<int64_t>* over = class_override(tc, target, cls, &from_class);
      const auto& c = over ? *over : tc.candidates;
      if (c.empty()) {
        diag.error(tc.loc, "tile constant '" + tc.var->name +
                               "' has no candidate values for target '" + target.name + "'");
        return std::nullopt;
      }
      set.cands.push_back(c);
      set.from_class.push_back(from_class);
      own |= from_class;
    }
    class_own.push_back(own);
    auto same = std::find_if(rec.sets.begin(), rec.sets.end(),
                             [&](const CandidateSet& o) { return o.cands == set.cands; });
    if (same != rec.sets.end()) {
      if (!own) { // the schedule's own lists: say so in its messages
        same->owner.clear();
        same->from_class.assign(tcs.size(), false);
      }
      class_set.push_back(same - rec.sets.begin());
      continue;
    }
    set.owner = own ? cls : "";
    class_set.push_back(rec.sets.size());
    rec.sets.push_back(std::move(set));
  }

  const VarMap inst = instance_var_map(k, instance_values);
  std::vector<VarMap> maps;
  for (auto& set : rec.sets) {
    set.total = 1;
    for (const auto& c : set.cands) {
      set.total *= c.size();
      if (set.total > kMaxConfigurations) {
        diag.error(sched_loc, "schedule has more than " + std::to_string(kMaxConfigurations) +
                                  " configurations for target '" + target.name + "'" +
                                  class_phrase(set) + "; narrow the candidate sets");
        return std::nullopt;
      }
    }
    rec.total += set.total;
    set.first = rec.configs.size();
    std::vector<size_t> req_ok(k.requirements.size(), 0);
    std::vector<size_t> digit(tcs.size(), 0);
    for (size_t n = 0; n < set.total; ++n) {
      VarMap m = inst;
      std::vector<int64_t> vals(tcs.size());
      for (size_t i = 0; i < tcs.size(); ++i) {
        vals[i] = set.cands[i][digit[i]];
        m[tcs[i].var.get()] = make_i64(vals[i]);
      }
      bool all_ok = true;
      for (size_t r = 0; r < k.requirements.size(); ++r) {
        const auto& req = k.requirements[r];
        auto b = fold_with(req.pred, m);
        if (!b) {
          diag.error(req.loc, "requirement '" + req.text +
                                  "' does not reduce to true/false from tile constants, flags and "
                                  "value params");
          return std::nullopt;
        }
        req_ok[r] += *b != 0;
        all_ok &= *b != 0;
      }
      if (all_ok) {
        std::string config;
        for (size_t i = 0; i < tcs.size(); ++i)
          config += (i ? " " : "") + tcs[i].var->name + "=" + std::to_string(vals[i]);
        if (!onchip_footprint(buffers, m, config.empty() ? "no tile constants" : config, diag))
          return std::nullopt;
        auto e = plan_config(k, m, target, diag);
        if (!e)
          return std::nullopt;
        e->values = vals;
        set.eligible += e->eligible;
        rec.configs.push_back(std::move(*e));
        maps.push_back(std::move(m));
      }
      for (size_t i = tcs.size(); i-- > 0;) {
        if (++digit[i] < set.cands[i].size())
          break;
        digit[i] = 0;
      }
    }
    set.end = rec.configs.size();
    rec.eligible += set.eligible;

    if (set.end == set.first) {
      std::string names;
      for (const auto& tc : tcs)
        names += (names.empty() ? "" : ", ") + tc.var->name;
      diag.error(sched_loc, "unsatisfiable schedule for target '" + target.name + "'" +
                                class_phrase(set) + ": no configuration of " + names +
                                " satisfies the requirements");
      for (size_t i = 0; i < tcs.size(); ++i)
        diag.note(tcs[i].loc, tcs[i].var->name + " candidates for target '" + target.name + "'" +
                                  class_phrase(set) + ": " + list_str(set.cands[i]) +
                                  candidates_source(k, set, i, target));
      for (size_t r = 0; r < k.requirements.size(); ++r)
        diag.note(k.requirements[r].loc, "requirement '" + k.requirements[r].text +
                                             "' holds for " + std::to_string(req_ok[r]) + " of " +
                                             std::to_string(set.total) + " configurations");
      return std::nullopt;
    }
    if (set.eligible == 0) {
      report_over_budget(k, rec, target, set, diag);
      return std::nullopt;
    }
  }

  // 3. Rank each class's eligible configurations; stable: ties keep enumeration order.
  auto reps = shape_class_reps(k, instance_values, diag);
  if (!reps)
    return std::nullopt;
  // The model sees the code instantiate() emits: a row loop versioned for one trip reads its
  // tile once where the class's shape takes that branch (passes/VersionSingleTrip).
  const Kernel modeled = eliminate_redundant_loads(version_single_trip(k));
  for (size_t c = 0; c < reps->size(); ++c) {
    ClassChoice cc;
    cc.shape = std::move((*reps)[c]);
    cc.set = class_set[c];
    cc.own_candidates = class_own[c];
    const CandidateSet& set = rec.sets[cc.set];
    for (size_t i = set.first; i < set.end; ++i)
      if (rec.configs[i].eligible)
        cc.ranked.emplace_back(i, model_config(modeled, maps[i], rec.configs[i].use, cc.shape, target));
    // Warp-specialized configurations of equal time (compute-bound on the same work): the one
    // with more memory headroom, i.e. more bytes in flight per iteration (3-warpgroup D64
    // attention: BN 128 measured 0.278 ms against 0.336 for BN 64 on the H200).
    auto ws = [&](size_t i) { return rec.configs[i].use.register_budget > 0; };
    std::stable_sort(cc.ranked.begin(), cc.ranked.end(), [&](const auto& a, const auto& b) {
      if (a.second.time_us == b.second.time_us && ws(a.first) && ws(b.first))
        return a.second.mem_us < b.second.mem_us;
      return a.second.time_us < b.second.time_us;
    });
    rec.classes.push_back(std::move(cc));
  }
  return rec;
}

std::string choice_note(const Recommendation& r, const ClassChoice& c, const Target& t) {
  const auto& [i, m] = c.ranked.front();
  const ResourceUse& u = r.configs[i].use;
  std::string s = t.name + " class " + c.shape.name + " (" + c.shape.shape_str() + "): " +
                  r.config_str(i) + "; smem " + std::to_string(u.smem_bytes) + " B, ~" +
                  std::to_string(u.registers) + " registers/thread (estimate), " +
                  std::to_string(u.threads) + " threads; model: " + fmt("%.1f us", m.time_us) +
                  " (" + m.bound + "), " + std::to_string(m.blocks) + " blocks" +
                  (m.parts > 1 ? " (" + std::to_string(m.blocks / m.parts) + " tiles in " + std::to_string(m.parts) + " parts)" : "") + ", " +
                  std::to_string(m.blocks_per_sm) + " block" + (m.blocks_per_sm == 1 ? "" : "s") +
                  "/SM (" + m.occupancy_limit + "), " + std::to_string(m.waves) + " wave" +
                  (m.waves == 1 ? "" : "s") + " at " + fmt("%.0f%%", 100 * m.wave_eff) +
                  ", traffic " + bytes_str(m.traffic_bytes) + ", " + flops_str(m.flops);
  return s;
}

std::string format_recommendation(const Recommendation& r, const Target& t, size_t top) {
  std::string s;
  const GpuFacts& g = t.gpu;
  s += "target " + t.name + ": " + std::to_string(g.sm_count) + " SMs, " +
       fmt("%.0f GB/s, ", g.dram_gbps) + fmt("%.0f TFLOP/s mma, ", g.mma_tflops) +
       fmt("%.1f TFLOP/s f32; ", g.fp32_tflops) + "smem/block " +
       std::to_string(g.smem_per_block) + " B\n";
  s += "configurations: " + std::to_string(r.total) + ", meeting require: " +
       std::to_string(r.configs.size()) + ", eligible: " + std::to_string(r.eligible) + "\n";
  for (const auto& c : r.classes) {
    s += "\nclass " + c.shape.name + (c.shape.text.empty() ? "" : " (" + c.shape.text + ")") +
         ": shape " + c.shape.shape_str() + (c.shape.reachable ? "" : " (unreachable)") + "\n";
    if (r.sets.size() > 1) {
      const CandidateSet& set = r.sets[c.set];
      s += "candidates" +
           (c.own_candidates ? " (schedule.classes." + c.shape.name + ".targets)"
                             : std::string(" (schedule)")) +
           ": " + std::to_string(set.total) + ", meeting require: " +
           std::to_string(set.end - set.first) + ", eligible: " + std::to_string(set.eligible) +
           "\n";
    }
    char head[256];
    std::snprintf(head, sizeof head, "%4s  %-40s %7s %5s %5s %7s %-11s %5s %10s %10s %10s  %s\n",
                  "rank", "config", "smem", "regs", "thr", "blocks", "blk/SM(lim)", "waves",
                  "traffic", "mem us", "comp us", "time us");
    s += head;
    size_t n = top == 0 ? c.ranked.size() : std::min(top, c.ranked.size());
    for (size_t k = 0; k < n; ++k) {
      const auto& [i, m] = c.ranked[k];
      const ResourceUse& u = r.configs[i].use;
      char line[512];
      std::snprintf(line, sizeof line,
                    "%4zu  %-40s %7lld %5lld %5lld %7lld %3lld %-7s %5lld %10s %10.1f %10.1f  "
                    "%.1f (%s)\n",
                    k + 1, r.config_str(i).c_str(), (long long)u.smem_bytes,
                    (long long)u.registers, (long long)u.threads, (long long)m.blocks,
                    (long long)m.blocks_per_sm,
                    ("(" + std::string(m.occupancy_limit) + ")").c_str(), (long long)m.waves,
                    bytes_str(m.traffic_bytes).c_str(), m.mem_us, m.compute_us, m.time_us,
                    m.bound);
      s += line;
    }
    if (n < c.ranked.size())
      s += "      ... " + std::to_string(c.ranked.size() - n) + " more\n";
    s += "chosen: " + r.config_str(c.ranked.front().first) + "\n";
  }
  size_t shown = 0;
  for (size_t i = 0; i < r.configs.size(); ++i) {
    if (r.configs[i].eligible)
      continue;
    if (shown++ == 0)
      s += "\nnot eligible (" + std::to_string(r.configs.size() - r.eligible) + "):\n";
    if (shown <= 8)
      s += "      " + r.config_str(i) + ": " + r.configs[i].why_not + "\n";
  }
  if (shown > 8)
    s += "      ... " + std::to_string(shown - 8) + " more\n";
  return s;
}

} // namespace tilegen::passes
