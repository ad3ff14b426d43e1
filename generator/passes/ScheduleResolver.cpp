#include "passes/ScheduleResolver.h"

#include "ir/IRPrinter.h"
#include "passes/TileRecommend.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "support/InternalError.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace tilegen::passes {

using namespace ir;

namespace {

class AllocCollector : public IRVisitor {
public:
  std::vector<BufferPtr> buffers;

protected:
  void visit_Alloc(const Alloc* n) override {
    buffers.push_back(n->buffer);
    IRVisitor::visit_Alloc(n);
  }
};

std::string list_str(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}

std::string config_str(const std::vector<TileConst>& tcs, const std::vector<int64_t>& vals) {
  std::string s;
  for (size_t i = 0; i < tcs.size(); ++i)
    s += (i ? " " : "") + tcs[i].var->name + "=" + std::to_string(vals[i]);
  return s;
}

// A footprint in bytes; footprints saturate at INT64_MAX (extents are user numbers).
std::string bytes_str(int64_t b) {
  return b == std::numeric_limits<int64_t>::max() ? std::string("more than 2^63 B")
                                                  : std::to_string(b) + " B";
}

// Copies between a global tensor and an on-chip tile of a kernel without gemm: the streamed
// accesses the streaming rule (below, docs/spec.md "The tile-resolution rule") measures.
class StreamCollector : public IRVisitor {
public:
  bool has_gemm = false;
  std::vector<const Copy*> copies; // one side global, the other on-chip

protected:
  void visit_Gemm(const Gemm* n) override {
    has_gemm = true;
    IRVisitor::visit_Gemm(n);
  }
  void visit_Copy(const Copy* n) override {
    const bool sg = n->src.buffer->scope == MemScope::Global;
    const bool dg = n->dst.buffer->scope == MemScope::Global;
    if (sg != dg && n->src.tile_rank() > 0)
      copies.push_back(n);
    IRVisitor::visit_Copy(n);
  }
};

// The representative extent of a runtime dim for the streaming rule: 4096 (the GPU
// recommender's ladder top, docs/recommend.md), within the dim's declared min and max.
int64_t representative_dim(const DimParam& d) {
  int64_t v = 4096;
  if (d.max && *d.max < v)
    v = *d.max;
  if (d.min && *d.min > v)
    v = *d.min;
  if (d.multiple_of && *d.multiple_of > 0 && v % *d.multiple_of != 0)
    v = (v / *d.multiple_of + 1) * *d.multiple_of;
  return v;
}

// What one configuration costs a streaming kernel per row of the representative shape:
// `waste`, the padded elements of ragged tiles (computed and then dropped: the guarded path),
// and `passes`, the most tiles a streamed row takes (a row in one tile is read from memory
// once and, in a two-pass spec, the second pass finds it in the tile).
struct StreamCost {
  int64_t waste = 0, passes = 0;
  bool operator<(const StreamCost& o) const {
    return waste != o.waste ? waste < o.waste : passes < o.passes;
  }
  bool operator==(const StreamCost& o) const { return waste == o.waste && passes == o.passes; }
};

std::optional<StreamCost> stream_cost(const std::vector<const Copy*>& copies, const VarMap& m,
                                      const VarMap& rep) {
  StreamCost c;
  for (const Copy* cp : copies) {
    const Region& g = cp->src.buffer->scope == MemScope::Global ? cp->src : cp->dst;
    auto e = fold_with(cp->src.extents.back(), m);
    auto d = fold_with(g.buffer->shape.back(), rep);
    if (!e || !d || *e <= 0 || *d <= 0)
      continue; // not a constant tile along a known row: the rule has nothing to say
    const int64_t tiles = (*d + *e - 1) / *e;
    c.waste += tiles * *e - *d;
    c.passes = std::max(c.passes, tiles);
  }
  return c;
}

// The configurations are visited as a mixed-radix counter; this cap keeps a typo such as
// `range: [1, 100000]` on five constants from hanging the build.
constexpr size_t kMaxConfigurations = 1u << 20;

// The summary line of GPU configuration `i` of `rec`: shared memory, registers, threads.
std::string gpu_summary(const Recommendation& rec, size_t i, const Target& target) {
  const ConfigEval& e = rec.configs[i];
  return rec.config_str(i) + ": smem " + std::to_string(e.use.smem_bytes) + " B (" +
         e.use.smem_breakdown() + ") of " + std::to_string(target.gpu.smem_per_block) + " B, ~" +
         std::to_string(e.use.registers) + " registers/thread (estimate: " +
         e.use.register_breakdown() + "), " + std::to_string(e.use.threads) + " threads";
}

// `rule` with its values replaced by `tuned`'s: the summary describes the configuration as the
// rule's would (`rec`: the recommendation on GPU targets), the reason says where it came from
// and what the rule would have taken.
ScheduleChoice apply_tuned(const Kernel& k, const std::map<std::string, int64_t>& instance_values,
                           const Target& target, const Recommendation* rec,
                           const ScheduleChoice& rule, const TunedConfig& tuned) {
  TG_ASSERT(tuned.values.size() == k.tile_consts.size(),
            "tuned configuration of " + std::to_string(tuned.values.size()) + " values for " +
                std::to_string(k.tile_consts.size()) + " tile constants");
  ScheduleChoice c = rule;
  VarMap m = instance_var_map(k, instance_values);
  for (size_t i = 0; i < k.tile_consts.size(); ++i) {
    c.values[i].second = tuned.values[i];
    m[k.tile_consts[i].var.get()] = make_i64(tuned.values[i]);
  }
  std::string config = config_str(k.tile_consts, tuned.values);
  std::ostringstream sink; // eligible configurations have constant extents: nothing to say
  DiagEngine quiet_diag(sink);
  auto fp = onchip_footprint(allocated_buffers(k.body), m, config, quiet_diag);
  TG_ASSERT(fp.has_value(), "tuned configuration " + config + " has a non-constant extent");
  c.footprint = *fp;
  c.summary = (k.tile_consts.empty() ? std::string("no tile constants") : config) +
              ": footprint " + std::to_string(*fp) + " B of " + std::to_string(rule.budget) +
              " B budget";
  if (rec)
    for (size_t i = 0; i < rec->configs.size(); ++i)
      if (rec->configs[i].values == tuned.values) {
        c.footprint = rec->configs[i].use.smem_bytes;
        c.summary = gpu_summary(*rec, i, target);
        break;
      }
  std::string was;
  for (const auto& [name, v] : rule.values)
    was += (was.empty() ? "" : " ") + name + "=" + std::to_string(v);
  c.reason = "configuration of " + tuned.origin + " (" + tuned.doc + "); the rule's choice was " +
             (was.empty() ? std::string("the same") : was);
  return c;
}

} // namespace

const std::vector<int64_t>* target_override(const TileConst& tc, const Target& target) {
  return class_override(tc, target, std::string()); // no class: class names are identifiers
}

const std::vector<int64_t>* class_override(const TileConst& tc, const Target& target,
                                           const std::string& shape_class, bool* from_class) {
  auto cls = tc.per_class_target.find(shape_class);
  const auto* own = cls == tc.per_class_target.end() ? nullptr : &cls->second;
  auto taken = [&](bool from, const std::vector<int64_t>* v) {
    if (from_class)
      *from_class = from;
    return v;
  };
  // One target of the chain: the class's entry first, then schedule.targets.
  auto at = [&](const std::string& t) -> const std::vector<int64_t>* {
    if (own)
      if (auto it = own->find(t); it != own->end())
        return taken(true, &it->second);
    if (auto it = tc.per_target.find(t); it != tc.per_target.end())
      return taken(false, &it->second);
    return nullptr;
  };
  if (const auto* v = at(target.name))
    return v;
  for (const auto& fb : target.fallbacks) // nearest first: c_avx512 -> c_avx2 -> c
    if (const auto* v = at(fb))
      return v;
  return taken(false, nullptr);
}

VarMap instance_var_map(const Kernel& k, const std::map<std::string, int64_t>& values) {
  VarMap m;
  for (const auto& f : k.flags) {
    auto it = values.find(f->name);
    TG_ASSERT(it != values.end(), "instance has no value for flag '" + f->name + "'");
    m[f.get()] = BoolImm::make(it->second != 0);
  }
  for (const auto& d : k.dims) {
    if (d.var->kind != VarKind::ValueParam)
      continue;
    auto it = values.find(d.var->name);
    TG_ASSERT(it != values.end(), "instance has no value for param '" + d.var->name + "'");
    m[d.var.get()] = IntImm::make(d.var->type, it->second);
  }
  return m;
}

std::optional<int64_t> fold_with(const Expr& e, const VarMap& m) {
  std::map<const Var*, int64_t> env;
  for (const auto& [v, x] : m)
    if (auto i = x->as<IntImm>())
      env[v] = i->value;
    else if (auto b = x->as<BoolImm>())
      env[v] = b->value ? 1 : 0;
  if (auto r = eval_int(e, env))
    return r;
  Expr folded = simplify(substitute(e, m));
  if (auto i = folded->as<IntImm>())
    return i->value;
  if (auto b = folded->as<BoolImm>())
    return b->value ? 1 : 0;
  return std::nullopt;
}

std::optional<int64_t> onchip_footprint(const std::vector<BufferPtr>& buffers, const VarMap& m,
                                        const std::string& config, DiagEngine& diag) {
  // Overflow-checked, since extents are user numbers: saturates at INT64_MAX.
  int64_t fp = 0;
  for (const auto& buf : buffers) {
    int64_t bytes = buf->dtype.bytes();
    for (const auto& e : buf->shape) {
      auto c = fold_with(e, m);
      if (!c || *c <= 0) {
        diag.error(buf->loc, "extent " + to_string(e) + " of '" + buf->name +
                                 "' is not a positive constant once the schedule is fixed (" +
                                 config + " gives " + to_string(simplify(substitute(e, m))) + ")");
        return std::nullopt;
      }
      if (__builtin_mul_overflow(bytes, *c, &bytes))
        bytes = std::numeric_limits<int64_t>::max();
    }
    if (__builtin_add_overflow(fp, bytes, &fp))
      fp = std::numeric_limits<int64_t>::max();
  }
  return fp;
}

std::vector<BufferPtr> allocated_buffers(const Stmt& body) {
  AllocCollector c;
  if (body)
    c.visit(body);
  return c.buffers;
}

std::optional<ScheduleChoice> resolve_schedule(const Kernel& k,
                                               const std::map<std::string, int64_t>& instance_values,
                                               const Target& target, DiagEngine& diag,
                                               const std::string& shape_class,
                                               const Recommendation* known,
                                               const TunedConfig* tuned) {
  if (tuned) {
    std::optional<Recommendation> computed;
    if (target.is_gpu() && !known) { // once, for the rule's choice and the summary
      computed = recommend(k, instance_values, target, diag);
      if (!computed)
        return std::nullopt;
      known = &*computed;
    }
    auto c = resolve_schedule(k, instance_values, target, diag, shape_class, known);
    if (!c)
      return std::nullopt;
    return apply_tuned(k, instance_values, target, target.is_gpu() ? known : nullptr, *c, *tuned);
  }
  if (!target.is_gpu()) {
    TG_ASSERT(shape_class == kLargeClass, "C targets have no shape class '" + shape_class + "'");
    return resolve_schedule(k, instance_values, target, diag);
  }
  std::optional<Recommendation> computed;
  if (!known) {
    computed = recommend(k, instance_values, target, diag);
    if (!computed)
      return std::nullopt;
    known = &*computed;
  }
  const Recommendation* rec = known;
  const ClassChoice* cls = rec->find(shape_class);
  TG_ASSERT(cls, "kernel '" + k.name + "' has no shape class '" + shape_class + "'");
  const auto& [best, model] = cls->ranked.front();
  const ConfigEval& e = rec->configs[best];
  ScheduleChoice c;
  for (size_t i = 0; i < k.tile_consts.size(); ++i)
    c.values.emplace_back(k.tile_consts[i].var->name, e.values[i]);
  c.footprint = e.use.smem_bytes;
  c.budget = target.gpu.smem_per_block;
  const CandidateSet& set = rec->sets[cls->set];
  c.configurations = set.total;
  c.feasible = set.eligible;
  c.shape_class = shape_class;
  c.summary = gpu_summary(*rec, best, target);
  c.reason = "fastest of " + std::to_string(set.eligible) + " eligible configuration" +
             (set.eligible == 1 ? "" : "s") + " (of " + std::to_string(set.total) +
             ") by the analytic model of docs/recommend.md; " + choice_note(*rec, *cls, target);
  return c;
}

std::optional<ScheduleChoice> resolve_schedule(const Kernel& k,
                                               const std::map<std::string, int64_t>& instance_values,
                                               const Target& target, DiagEngine& diag) {
  if (target.is_gpu())
    return resolve_schedule(k, instance_values, target, diag, kLargeClass);
  const auto& tcs = k.tile_consts;
  const SourceLoc sched_loc = tcs.empty() ? k.loc : tcs.front().loc;

  // 1. Candidates per constant.
  std::vector<std::vector<int64_t>> cands;
  size_t total = 1;
  for (const auto& tc : tcs) {
    const std::vector<int64_t>* over = target_override(tc, target);
    const auto& c = over ? *over : tc.candidates;
    if (c.empty()) {
      diag.error(tc.loc, "tile constant '" + tc.var->name + "' has no candidate values for target '" +
                             target.name + "'");
      return std::nullopt;
    }
    cands.push_back(c);
    total *= c.size();
    if (total > kMaxConfigurations) {
      diag.error(sched_loc, "schedule has more than " + std::to_string(kMaxConfigurations) +
                                " configurations for target '" + target.name +
                                "'; narrow the candidate sets");
      return std::nullopt;
    }
  }

  const VarMap inst = instance_var_map(k, instance_values);
  const auto buffers = allocated_buffers(k.body);
  const int64_t budget = target.tile_budget_bytes;

  // Streaming kernels on targets with Target::streaming_tile_rule (the C rows): no gemm, a
  // copy between a global tensor and a tile. Every global element is used a bounded number of
  // times, so a larger tile buys no reuse. The rule then ranks by StreamCost at the
  // representative shape and, among equals, prefers footprints within a quarter of the budget
  // (the tiles stay in the inner caches while the stream goes by), the largest of those, else
  // the smallest footprint.
  StreamCollector streams;
  streams.visit(k.body);
  const bool streaming = target.streaming_tile_rule && !streams.has_gemm && !streams.copies.empty();
  const int64_t stream_budget = budget / 4;
  VarMap rep_base = inst;
  for (const auto& d : k.dims)
    if (d.var->kind != VarKind::ValueParam)
      rep_base[d.var.get()] = make_i64(representative_dim(d));

  // Per requirement: how many configurations satisfy it (for the notes).
  std::vector<size_t> req_ok(k.requirements.size(), 0);
  size_t feasible = 0, req_feasible = 0;
  std::optional<std::vector<int64_t>> smallest_req_ok;
  int64_t smallest_fp = std::numeric_limits<int64_t>::max();
  // The feasible configurations (within the budget, every requirement met; streaming: with a
  // cost), ranked after the loop: a stable sort on a strict order, so ties keep the earliest.
  struct Feasible {
    std::vector<int64_t> vals;
    int64_t fp = 0;
    StreamCost cost;
  };
  std::vector<Feasible> ranked;
  auto better = [&](const Feasible& a, const Feasible& b) {
    if (!streaming)
      return a.fp > b.fp;
    if (!(a.cost == b.cost))
      return a.cost < b.cost;
    const bool ain = a.fp <= stream_budget, bin = b.fp <= stream_budget;
    if (ain != bin)
      return ain;
    return ain ? a.fp > b.fp : a.fp < b.fp;
  };

  std::vector<size_t> digit(tcs.size(), 0);
  std::vector<int64_t> vals(tcs.size());
  for (size_t n = 0; n < total; ++n) {
    VarMap m = inst;
    for (size_t i = 0; i < tcs.size(); ++i) {
      vals[i] = cands[i][digit[i]];
      m[tcs[i].var.get()] = make_i64(vals[i]);
    }

    bool all_ok = true;
    for (size_t r = 0; r < k.requirements.size(); ++r) {
      const auto& req = k.requirements[r];
      auto b = fold_with(req.pred, m);
      if (!b) {
        diag.error(req.loc, "requirement '" + req.text +
                                "' does not reduce to true/false from tile constants, flags and "
                                "value params (left: " + to_string(simplify(substitute(req.pred, m))) + ")");
        return std::nullopt;
      }
      if (*b)
        ++req_ok[r];
      all_ok &= *b != 0;
    }

    auto fp_or = onchip_footprint(buffers, m, config_str(tcs, vals), diag);
    if (!fp_or)
      return std::nullopt;
    const int64_t fp = *fp_or;

    if (all_ok) {
      ++req_feasible;
      if (!smallest_req_ok || fp < smallest_fp) { // fp saturates at INT64_MAX: take the first
        smallest_fp = fp;
        smallest_req_ok = vals;
      }
      if (fp <= budget) {
        ++feasible;
        if (streaming) {
          VarMap rep = rep_base;
          for (size_t i = 0; i < tcs.size(); ++i)
            rep[tcs[i].var.get()] = make_i64(vals[i]);
          if (const auto cost = stream_cost(streams.copies, m, rep))
            ranked.push_back({vals, fp, *cost});
        } else {
          ranked.push_back({vals, fp, {}});
        }
      }
    }

    // Next configuration: the last declared constant varies fastest.
    for (size_t i = tcs.size(); i-- > 0;) {
      if (++digit[i] < cands[i].size())
        break;
      digit[i] = 0;
    }
  }

  std::stable_sort(ranked.begin(), ranked.end(), better);
  if (ranked.empty()) {
    std::string names;
    for (size_t i = 0; i < tcs.size(); ++i)
      names += (i ? ", " : "") + tcs[i].var->name;
    std::string msg = "unsatisfiable schedule for target '" + target.name + "': ";
    if (tcs.empty())
      msg += "the block's on-chip buffers need " + bytes_str(smallest_fp) +
             ", more than the tile budget of " + std::to_string(budget) + " B";
    else
      msg += "no configuration of " + names + " satisfies the requirements and fits the tile budget of " +
             std::to_string(budget) + " B";
    diag.error(sched_loc, msg);
    for (size_t i = 0; i < tcs.size(); ++i) {
      bool per = target_override(tcs[i], target) != nullptr;
      diag.note(tcs[i].loc, tcs[i].var->name + " candidates for target '" + target.name + "': " +
                                list_str(cands[i]) + (per ? " (from schedule.targets)" : ""));
    }
    for (size_t r = 0; r < k.requirements.size(); ++r)
      diag.note(k.requirements[r].loc, "requirement '" + k.requirements[r].text + "' holds for " +
                                           std::to_string(req_ok[r]) + " of " +
                                           std::to_string(total) + " configurations");
    if (req_feasible == 0 && !k.requirements.empty())
      diag.note(sched_loc, "no configuration satisfies all requirements together");
    else if (!tcs.empty())
      diag.note(sched_loc, "the smallest footprint among the " + std::to_string(req_feasible) +
                               " configurations that satisfy the requirements is " +
                               bytes_str(smallest_fp) + " (" +
                               config_str(tcs, *smallest_req_ok) + "), over the budget of " +
                               std::to_string(budget) + " B of target '" + target.name + "'");
    return std::nullopt;
  }

  const std::vector<int64_t>* best = &ranked.front().vals;
  const int64_t best_fp = ranked.front().fp;
  const std::optional<StreamCost> best_cost =
      streaming ? std::optional<StreamCost>(ranked.front().cost) : std::nullopt;
  ScheduleChoice c;
  for (size_t i = 0; i < tcs.size(); ++i)
    c.values.emplace_back(tcs[i].var->name, (*best)[i]);
  c.footprint = best_fp;
  c.budget = budget;
  c.configurations = total;
  c.feasible = feasible;
  c.summary = (tcs.empty() ? std::string("no tile constants") : config_str(tcs, *best)) +
              ": footprint " + std::to_string(best_fp) + " B of " + std::to_string(budget) +
              " B budget";
  const std::string of = std::to_string(feasible) + " feasible configuration" +
                         (feasible == 1 ? "" : "s") + " (of " + std::to_string(total) + "; ";
  if (streaming && best_cost)
    c.reason = "streaming rule (no gemm): " + std::to_string(best_cost->passes) +
               (best_cost->passes == 1 ? " tile" : " tiles") + " and " +
               std::to_string(best_cost->waste) + " padded elements per row at the representative shape, then " +
               (best_fp <= stream_budget ? "the largest footprint within " : "the smallest footprint over ") +
               std::to_string(stream_budget) + " B, of " + of + "ties go to the earliest)";
  else
    c.reason = "largest footprint of " + of + "ties go to the earliest)";
  for (auto& f : ranked)
    c.ranked.push_back(std::move(f.vals));
  return c;
}

} // namespace tilegen::passes
