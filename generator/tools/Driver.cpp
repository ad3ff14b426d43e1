// The commands of `tilegen`. Read generate() top to bottom: load -> instantiate -> emit ->
// write; every stage stops the run on user errors before anything is written.
#include "tools/Driver.h"
#include "support/Strings.h"

#include "support/ReservedNames.h"

#include "dispatch/DispatchEmitter.h"
#include "dispatch/JsModuleEmitter.h"
#include "dispatch/MetalHostEmitter.h"
#include "dispatch/Naming.h"
#include "dispatch/TorchEmitter.h"
#include "emit/Emitter.h"
#include "emit/MslEmitter.h"
#include "ir/IRPrinter.h"
#include "ir/Simplify.h"
#include "passes/TileRecommend.h"
#include "spec/Frontend.h"
#include "support/InternalError.h"
#include "support/TextEscape.h"
#include "tune/Candidates.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <ostream>
#include <set>
#include <sstream>

namespace tilegen::tools {

namespace {


// The distinct entries of a class plan (Driver::class_plan), first occurrence first: the
// variants one instance has on one target.
std::vector<std::string> distinct(const std::vector<std::string>& plan) {
  std::vector<std::string> out;
  for (const auto& c : plan)
    if (std::find(out.begin(), out.end(), c) == out.end())
      out.push_back(c);
  return out;
}

// A name a file of library `lib` may have (only such files are ever removed as stale).
bool is_c_candidate(const std::string& name, const std::string& lib) {
  if (name == dispatch::header_file_name(lib) || name == dispatch::dispatch_file_name(lib) ||
      name == dispatch::js_module_file_name(lib) || name == dispatch::js_types_file_name(lib) ||
      name == dispatch::wgsl_manifest_file_name(lib) || name == dispatch::metal_host_file_name(lib) ||
      name == dispatch::torch_file_name(lib))
    return true;
  std::string prefix = lib + "__";
  if (name.size() <= prefix.size() + 2 || name.compare(0, prefix.size(), prefix) != 0)
    return false;
  for (Backend b : {Backend::C, Backend::CUDA, Backend::HIP, Backend::Metal, Backend::WGSL}) {
    std::string ext = variant_extension(b);
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
      return true;
  }
  return false;
}

// Whether a file of library `lib` starts as tilegen writes them: the marker comment on the first
// line, or, in the JSON manifest (no comments), as the second line's "generated" member.
bool is_generated_for(const std::string& head, const std::string& lib) {
  std::string marker = dispatch::generated_marker(lib); // "/* @generated ... */"
  std::string json = "{\n  \"generated\": \"" + marker.substr(3, marker.size() - 6) + "\",\n";
  bool first_line = head.compare(0, marker.size(), marker) == 0 &&
                    (head.size() == marker.size() || head[marker.size()] == '\n');
  return first_line || head.compare(0, json.size(), json) == 0;
}

} // namespace

Driver::Driver(std::ostream& out, std::ostream& err) : out_(out), err_(err), diag_(err) {}

// ---- usage checks --------------------------------------------------------------------------

bool Driver::resolve_targets(const Options& o, std::vector<const Target*>& out,
                             bool default_all) {
  std::vector<std::string> known;
  for (const auto& t : all_targets())
    known.push_back(t.name);
  if (o.targets.empty()) {
    if (!default_all) {
      err_ << "tilegen: error: --targets is required (known targets: " << join(known, ", ")
           << ")\n";
      return false;
    }
    // check: every target, so that the GPU-only rules show at check time, not first in a
    // CUDA or WebGPU build (docs/spec.md "Rules of the GPU targets").
    for (const auto& t : all_targets())
      out.push_back(&t);
    return true;
  }
  for (const auto& name : o.targets) {
    const Target* t = find_target(name);
    if (!t) {
      err_ << "tilegen: error: unknown target '" << name << "' (known targets: "
           << join(known, ", ") << ")\n";
      return false;
    }
    if (std::find(out.begin(), out.end(), t) != out.end()) {
      err_ << "tilegen: error: target '" << name << "' is listed twice\n";
      return false;
    }
    out.push_back(t);
  }
  // One GPU family per C library as to Metal: its dispatch table selects CUDA and HIP rows by
  // the device the CUDA or HIP runtime finds, Metal rows by the Apple GPU family
  // (docs/metal.md); a table never does both.
  const Target* cuda = nullptr;
  const Target* metal = nullptr;
  for (const Target* t : out)
    (t->backend == Backend::Metal ? metal : t->is_gpu() ? cuda : t) = t;
  if (!default_all && cuda && metal) {
    err_ << "tilegen: error: targets '" << cuda->name << "' and '" << metal->name
         << "' cannot share a library: its dispatch table selects CUDA and HIP devices or an "
            "Apple GPU, not both; generate two libraries\n";
    return false;
  }
  return true;
}

bool Driver::check_library_name(const std::string& lib) {
  if (lib.empty()) {
    err_ << "tilegen: error: --lib NAME is required\n";
    return false;
  }
  if (!dispatch::is_valid_library_name(lib)) {
    err_ << "tilegen: error: invalid library name '" << lib
         << "': use a C identifier of at most 64 characters that begins with a letter, without "
            "'__' or a trailing '_', and neither 'tg' nor beginning with 'tgv_' or 'tilegen' in "
            "any letter case nor a device name of Windows such as CON (it prefixes every symbol "
            "and file of the library)\n";
    return false;
  }
  return true;
}

bool Driver::require_specs(const Options& o) {
  if (o.specs.empty()) {
    err_ << "tilegen: error: no spec files given\n";
    return false;
  }
  return true;
}

// ---- front end + library-wide checks ---------------------------------------------------------

std::optional<std::vector<LoadedSpec>> Driver::load(const std::vector<std::string>& specs,
                                                    const std::string& lib) {
  std::vector<LoadedSpec> loaded;
  for (const auto& path : specs) {
    auto kernels = spec::load_kernels(path, diag_);
    if (!kernels)
      continue; // errors reported; keep going to report the other files' errors too
    LoadedSpec s{path, {}};
    for (auto& k : *kernels) {
      auto instances = passes::enumerate_instances(k);
      s.kernels.push_back({std::move(k), std::move(instances)});
    }
    loaded.push_back(std::move(s));
  }
  if (diag_.has_errors())
    return std::nullopt;

  check_library_names(loaded, lib);
  if (diag_.has_errors())
    return std::nullopt;
  return loaded;
}

// A kernel's errors on several targets that differ only in the target are printed once, for
// all of them (DiagEngine::begin_target_group), when the scope ends.
namespace {
class TargetGroup {
public:
  TargetGroup(DiagEngine& diag, const std::vector<const Target*>& targets) : diag_(diag) {
    std::vector<std::string> names;
    for (const Target* t : targets)
      names.push_back(t->name);
    diag_.begin_target_group(std::move(names));
  }
  ~TargetGroup() { diag_.end_target_group(); }
  TargetGroup(const TargetGroup&) = delete;
  TargetGroup& operator=(const TargetGroup&) = delete;

private:
  DiagEngine& diag_;
};
} // namespace

// An instantiation error (an unsatisfiable schedule, say) usually repeats for every type binding
// and instance of the kernel on that target; report it once per (kernel, target).
namespace {
std::string layout_problem(const ir::Kernel& instantiated, const Target& t) {
  return t.backend == Backend::WGSL ? emit::wgsl_layout(instantiated, t).problem
                                    : emit::msl_layout(instantiated, t).problem;
}
} // namespace

std::optional<ir::Kernel> Driver::next_fitting(const ir::Kernel& k, const passes::Instance& inst,
                                               const Target& t, const std::string& shape_class,
                                               const passes::Recommendation* rec,
                                               const std::string& why, bool check_layout) {
  std::ostringstream sink; // the first choice's messages are the ones reported, if any
  DiagEngine quiet(sink);
  auto ranked = tune::ranked_configurations(k, inst.values, t, shape_class, quiet);
  for (size_t i = 1; ranked && i < ranked->size(); ++i) {
    passes::TunedConfig alt{(*ranked)[i],
                            "the schedule rule's order that fits target '" + t.name +
                                "' (the first choice does not: " + why + ")",
                            t.backend == Backend::WGSL ? "docs/wgsl.md" : "docs/metal.md"};
    std::ostringstream warnings;
    DiagEngine local(warnings);
    auto other = passes::instantiate(k, inst, t, local, shape_class, rec, &alt);
    if (other && (!check_layout || layout_problem(*other, t).empty())) {
      err_ << warnings.str();
      return other;
    }
  }
  return std::nullopt;
}

std::optional<ir::Kernel> Driver::instantiate_once(const ir::Kernel& k,
                                                   const passes::Instance& inst, const Target& t,
                                                   FailedPairs& failed,
                                                   const std::string& shape_class) {
  auto key = std::make_pair(k.name, t.name);
  if (failed.count(key))
    return std::nullopt;
  auto known = recommendations_.find({&k, inst.name, t.name});
  const passes::Recommendation* rec = known == recommendations_.end() ? nullptr : known->second.get();
  const passes::TunedConfig* tuned = tuned_for(k, inst, t, shape_class);
  // WGSL and Metal take the C-style rule's choice, which knows nothing of their thread rules
  // (whole SIMD-groups, simdgroup_matrix tilings): where it fails there and the next
  // configurations of the rule's order include one that instantiates, that one is taken (the
  // variant's note says so). The rule's choice is tried quietly first, so that its messages are
  // printed once: as they were when it instantiates, or as the error when nothing does.
  if ((t.backend == Backend::WGSL || t.backend == Backend::Metal) && !tuned) {
    std::ostringstream sink;
    DiagEngine quiet(sink);
    auto ik = passes::instantiate(k, inst, t, quiet, shape_class, rec, nullptr);
    if (ik) {
      err_ << sink.str(); // its warnings, if any
      return ik;
    }
    std::string first = sink.str().substr(0, sink.str().find('\n'));
    if (auto e = first.find(": error: "); e != std::string::npos)
      first = first.substr(e + 9);
    if (auto other = next_fitting(k, inst, t, shape_class, rec, first, false))
      return other;
  }
  auto ik = passes::instantiate(k, inst, t, diag_, shape_class, rec, tuned);
  if (!ik)
    failed.insert(key);
  return ik;
}

std::optional<std::vector<std::string>> Driver::class_plan(const ir::Kernel& k,
                                                           const passes::Instance& inst,
                                                           const Target& t, FailedPairs& failed) {
  if (!t.is_gpu() || k.shape_classes.empty())
    return std::vector<std::string>{passes::kLargeClass};
  auto key = std::make_pair(k.name, t.name);
  if (failed.count(key))
    return std::nullopt;
  auto rec = passes::recommend(k, inst.values, t, diag_);
  if (!rec) {
    failed.insert(key);
    return std::nullopt;
  }
  recommendations_[{&k, inst.name, t.name}] = std::make_shared<const passes::Recommendation>(*rec);
  std::vector<std::string> names = dispatch::shape_class_names(k);
  TG_ASSERT(rec->classes.size() == names.size(),
            "recommend() returned " + std::to_string(rec->classes.size()) + " classes for " +
                std::to_string(names.size()) + " of kernel '" + k.name + "'");
  // The configuration each class chose (its tile constants' values: classes with their own
  // candidates may choose the same configuration from another set), then who owns each one.
  std::vector<std::vector<int64_t>> chosen;
  for (size_t c = 0; c < names.size(); ++c) {
    TG_ASSERT(rec->classes[c].shape.name == names[c] && !rec->classes[c].ranked.empty(),
              "recommend() class " + rec->classes[c].shape.name + " out of order or unranked");
    const passes::TunedConfig* tuned = tuned_for(k, inst, t, names[c]);
    chosen.push_back(tuned ? tuned->values
                           : rec->configs[rec->classes[c].ranked.front().first].values);
  }
  std::vector<std::string> serving(names.size());
  for (size_t c = 0; c < names.size(); ++c) {
    if (chosen[c] == chosen.back()) { // "large" is last: the plain name wins a tie
      serving[c] = names.back();
      continue;
    }
    size_t first = c;
    for (size_t d = 0; d < c; ++d)
      if (chosen[d] == chosen[c]) {
        first = d;
        break;
      }
    serving[c] = names[first];
  }
  return serving;
}

// ---- tuning database (docs/tune.md) ---------------------------------------------------------

bool Driver::load_tuning_db(const Options& o) {
  forced_ = o.forced.empty() ? nullptr : &o.forced;
  if (o.tuning_db.empty() || tuning_db_)
    return true;
  tuning_db_path_ = o.tuning_db;
  tuning_db_ = tune::read_tuning_db(o.tuning_db, diag_);
  return tuning_db_.has_value();
}

const passes::TunedConfig* Driver::tuned_for(const ir::Kernel& k, const passes::Instance& inst,
                                             const Target& t, const std::string& shape_class) {
  tune::TuningKey key{k.name, inst.name, t.name, shape_class};
  const std::string id = key.str();
  asked_.insert(id);
  if (auto it = tuned_.find(id); it != tuned_.end())
    return it->second.get();
  std::unique_ptr<passes::TunedConfig>& slot = tuned_[id];
  if (forced_) {
    if (auto f = forced_->find(id); f != forced_->end())
      slot = std::make_unique<passes::TunedConfig>(
          passes::TunedConfig{f->second, "the configuration tilegen tune is timing"});
    return slot.get();
  }
  const tune::TuningEntry* e = tuning_db_ ? tuning_db_->find(key) : nullptr;
  if (!e)
    return nullptr;
  auto stale = [&](const std::string& why) {
    diag_.warning(e->loc, "stale tuning database entry " + id + ": " + why +
                              "; ignored (the schedule rule chooses; re-run tilegen tune, "
                              "docs/tune.md)");
    return nullptr;
  };
  const std::string hash = tune::spec_hash(k);
  if (e->spec_hash != hash)
    return stale("it was tuned for spec hash " + e->spec_hash + ", the kernel now hashes to " +
                 hash + " (the spec changed)");
  std::string why_not;
  auto values = tune::config_values(*e, k, why_not);
  if (!values)
    return stale(why_not);
  auto rec = recommendations_.find({&k, inst.name, t.name});
  auto ranked = tune::ranked_configurations(k, inst.values, t, shape_class, diag_,
                                            rec == recommendations_.end() ? nullptr
                                                                          : rec->second.get());
  if (!ranked)
    return nullptr; // the schedule's own error, reported; instantiation stops on it too
  if (std::find(ranked->begin(), ranked->end(), *values) == ranked->end())
    return stale("its configuration " + tune::config_string(k, *values) + " is not among the " +
                 std::to_string(ranked->size()) + " eligible configurations of target '" +
                 t.name + "'");
  slot = std::make_unique<passes::TunedConfig>(
      passes::TunedConfig{*values, "tuning database " + tuning_db_path_ + " entry " + id});
  return slot.get();
}

void Driver::warn_unused_entries(const std::vector<LoadedSpec>& loaded,
                                 const std::vector<const Target*>& targets) {
  if (!tuning_db_)
    return;
  for (const auto& e : tuning_db_->entries) {
    if (asked_.count(e.key.str()))
      continue;
    bool ours = std::any_of(targets.begin(), targets.end(),
                            [&](const Target* t) { return t->name == e.key.target; });
    bool kernel = false;
    for (const auto& s : loaded)
      for (const auto& lk : s.kernels)
        kernel = kernel || lk.kernel.name == e.key.kernel;
    if (ours && kernel) // other kernels and targets: entries for other libraries
      diag_.warning(e.loc, "tuning database entry " + e.key.str() +
                               " matches no variant: kernel '" + e.key.kernel +
                               "' has no instance '" + e.key.instance + "' with class '" +
                               e.key.cls + "' on target '" + e.key.target + "'; ignored");
  }
}

// A WGSL variant must fit WebGPU's limits (workgroup memory, invocations, storage buffers) and
// WGSL's storage types; reported like an unsatisfiable schedule, once per (kernel, target).
// Metal variants likewise: threadgroup memory and threads per threadgroup (emit/MslEmitter.h).

bool Driver::wgsl_fits(const ir::Kernel& k, const passes::Instance& inst,
                       const std::string& shape_class, std::optional<ir::Kernel>& ik,
                       const Target& t, FailedPairs& failed) {
  if (t.backend != Backend::WGSL && t.backend != Backend::Metal)
    return true;
  std::string problem = layout_problem(*ik, t);
  if (problem.empty())
    return true;
  if (!tuned_for(k, inst, t, shape_class)) {
    const std::string why = problem.substr(0, problem.find(" (give the spec"));
    if (auto other = next_fitting(k, inst, t, shape_class, nullptr, why, true)) {
      ik = std::move(other);
      return true;
    }
  }
  if (failed.insert({k.name, t.name}).second)
    diag_.error(k.loc, problem);
  return false;
}

// ---- commands --------------------------------------------------------------------------------

void Driver::check_thread_count(const ir::Kernel& k, const std::vector<const Target*>& targets,
                                FailedPairs& failed) {
  auto n = ir::as_const_int(k.threads);
  if (!n || *n <= 0)
    return; // a schedule constant (checked per configuration), or reported by the front end
  const int64_t threads = *n;
  // (lanes, the target's word for a warp) -> the targets whose warps the count does not fill
  std::map<std::pair<int, std::string>, std::vector<std::string>> by_warp;
  std::vector<std::string> wgsl;
  int64_t wgsl_max = 0;
  for (const Target* t : targets) {
    bool bad = false;
    if (t->backend == Backend::WGSL) {
      wgsl_max = t->wgsl.max_invocations;
      bad = !(threads <= t->wgsl.max_invocations && (threads & (threads - 1)) == 0);
      if (bad)
        wgsl.push_back(t->name);
    } else if (t->has_thread_layouts() && threads % t->gpu.warp_size != 0) {
      bad = true;
      by_warp[{t->gpu.warp_size, t->gpu.warp_word}].push_back(t->name);
    }
    if (bad)
      failed.insert({k.name, t->name});
  }
  if (by_warp.empty() && wgsl.empty())
    return;
  // The smallest count at or above the spec's that every rejecting target runs.
  int64_t lanes = 1;
  for (const auto& [w, names] : by_warp)
    lanes = std::lcm(lanes, static_cast<int64_t>(w.first));
  int64_t fix = (threads + lanes - 1) / lanes * lanes;
  if (!wgsl.empty()) {
    int64_t p = 1;
    while (p < fix || p % lanes != 0)
      p *= 2;
    // past WGSL's limit: its largest count, where the warps of the others divide it
    fix = p <= wgsl_max ? p : wgsl_max % lanes == 0 ? wgsl_max : 0;
  }
  std::vector<std::string> parts;
  for (const auto& [w, names] : by_warp)
    parts.push_back(std::to_string(w.first) + "-thread " + w.second + "s (" + join(names, ", ") +
                    ")");
  std::string why;
  if (!parts.empty())
    why = "not a whole number of " + join(parts, ", ");
  if (!wgsl.empty())
    why += std::string(why.empty() ? "" : "; and ") + "not a power of two of at most " +
           std::to_string(wgsl_max) + " (" + join(wgsl, ", ") + ")";
  SourceLoc at = k.threads->loc.known() ? k.threads->loc : k.loc;
  diag_.error(at, "kernel '" + k.name + "': a block of " + std::to_string(threads) +
                      " threads is " + why +
                      " (docs/spec.md \"Rules of the GPU targets\")");
  diag_.note(at, (fix > 0 ? "write `threads: " + std::to_string(fix) + "`, which all of them run, or "
                          : std::string("")) +
                     "make the count a schedule constant (`threads: threads`, with candidates "
                     "under `schedule.threads` and per target under `schedule.targets`)");
}

std::optional<std::vector<OutputFile>> Driver::build_outputs(const Options& o) {
  std::vector<const Target*> targets;
  auto loaded = load(o.specs, o.lib);
  if (!loaded)
    return std::nullopt;
  if (!resolve_targets(o, targets, false))
    return std::nullopt;
  if (!load_tuning_db(o))
    return std::nullopt;
  // tilegen tune: a library of one instance (the harness calls only its function).
  if (!o.only_instance.empty())
    for (auto& s : *loaded) {
      std::vector<LoadedKernel> kept;
      for (auto& lk : s.kernels)
        for (const auto& inst : lk.instances)
          if (inst.name == o.only_instance) {
            kept.push_back({std::move(lk.kernel), {inst}});
            break;
          }
      s.kernels = std::move(kept);
    }

  // WGSL targets have no C entry points: they feed the ES module (wgsl_lib), not the C
  // dispatch library, which gets every other target (Metal through its C launchers).
  std::vector<const Target*> c_side;
  for (const Target* t : targets)
    if (t->backend != Backend::WGSL)
      c_side.push_back(t);
  dispatch::WgslLibrary wgsl_lib{o.lib, {}};
  dispatch::Library lib{o.lib, c_side, {}};
  std::vector<OutputFile> files;
  std::string marker = dispatch::generated_marker(o.lib);
  FailedPairs failed;
  // Metal variants also get a C launcher each, in <lib>_metal.c (dispatch/MetalHostEmitter).
  std::deque<ir::Kernel> metal_kernels;
  std::vector<dispatch::MetalVariant> metal_variants;
  for (const auto& s : *loaded)
    for (const auto& lk : s.kernels) {
      check_thread_count(lk.kernel, targets, failed);
      TargetGroup group(diag_, targets);
      lib.kernels.push_back({&lk.kernel, lk.instances, s.path, {}});
      dispatch::WgslKernelInfo wk{&lk.kernel, s.path, {}};
      for (size_t ii = 0; ii < lk.instances.size(); ++ii)
        for (const Target* t : targets) {
          const passes::Instance& inst = lk.instances[ii];
          auto plan = class_plan(lk.kernel, inst, *t, failed);
          if (!plan)
            continue; // reported
          if (plan->size() > 1)
            lib.kernels.back().class_variants[{ii, t->name}] = *plan;
          // One variant per distinct entry of the plan, in class order ("large" alone on C
          // and WGSL targets and for kernels without classes).
          for (const std::string& cls : distinct(*plan)) {
            auto ik = instantiate_once(lk.kernel, inst, *t, failed, cls);
            if (!ik || !wgsl_fits(lk.kernel, inst, cls, ik, *t, failed))
              break; // reported; go on to find the other errors
            emit::VariantInfo info{
                dispatch::variant_function_name(o.lib, lk.kernel, inst, *t, cls), s.path};
            files.push_back({dispatch::variant_file_name(o.lib, lk.kernel, inst, *t, cls),
                             marker + "\n" + emit::emit_variant(*ik, *t, info)});
            if (t->backend == Backend::WGSL) {
              std::vector<ir::Expr> grid;
              for (const auto& g : ik->grid)
                grid.push_back(g.extent);
              wk.variants.push_back({inst, t, files.back().name, info.function_name,
                                     files.back().contents, emit::wgsl_layout(*ik, *t), grid});
            }
            if (t->backend == Backend::Metal) {
              metal_kernels.push_back(*ik);
              metal_variants.push_back({&metal_kernels.back(), t, info.function_name,
                                        files.back().name, s.path, emit::msl_layout(*ik, *t)});
            }
          }
        }
      if (!wk.variants.empty())
        wgsl_lib.kernels.push_back(std::move(wk));
    }
  if (diag_.has_errors())
    return std::nullopt;
  warn_unused_entries(*loaded, targets);
  if (!c_side.empty()) {
    files.insert(files.begin(), {dispatch::header_file_name(o.lib), dispatch::emit_header(lib)});
    files.insert(files.begin() + 1,
                 {dispatch::dispatch_file_name(o.lib), dispatch::emit_dispatch_source(lib)});
  }
  // --torch: the PyTorch operators over the C API (docs/torch.md); needs a C library.
  if (o.torch && !c_side.empty()) {
    if (!dispatch::check_torch(lib, diag_))
      return std::nullopt;
    files.push_back({dispatch::torch_file_name(o.lib), dispatch::emit_torch_binding(lib)});
  }
  if (!metal_variants.empty())
    files.push_back({dispatch::metal_host_file_name(o.lib),
                     dispatch::emit_metal_host(o.lib, metal_variants)});
  if (!wgsl_lib.kernels.empty()) {
    files.push_back({dispatch::js_module_file_name(o.lib), marker + "\n" + dispatch::emit_js_module(wgsl_lib)});
    files.push_back({dispatch::js_types_file_name(o.lib), marker + "\n" + dispatch::emit_js_types(wgsl_lib)});
    files.push_back({dispatch::wgsl_manifest_file_name(o.lib), dispatch::emit_wgsl_manifest(wgsl_lib)});
  }
  return files;
}

int Driver::generate(const Options& o) {
  if (!check_library_name(o.lib) || !require_specs(o))
    return 2;
  std::vector<const Target*> targets;
  if (!resolve_targets(o, targets, false))
    return 2;
  if (o.out_dir.empty()) {
    err_ << "tilegen: error: --out DIR is required\n";
    return 2;
  }
  auto files = build_outputs(o);
  if (!files)
    return 1;

  WriteReport report;
  Ownership own{
      [&](const std::string& name) { return is_c_candidate(name, o.lib); },
      [&](const std::string&, const std::string& head) { return is_generated_for(head, o.lib); }};
  std::string error = update_output_folder(o.out_dir, *files, own, &report);
  if (!error.empty()) {
    err_ << "tilegen: error: " << error << "\n";
    return 1;
  }
  if (!report.warning.empty())
    err_ << "tilegen: warning: " << report.warning << "\n";
  if (o.verbose) {
    out_ << "tilegen: " << o.lib << ": " << report.written.size() << " written, "
         << report.unchanged.size() << " unchanged, " << report.removed.size()
         << " stale removed (" << o.out_dir << (report.method.empty() ? "" : ", " + report.method)
         << ")\n";
    for (const auto& n : report.written)
      out_ << "  wrote " << n << "\n";
    for (const auto& n : report.removed)
      out_ << "  removed " << n << "\n";
  }
  return 0;
}

int Driver::check(const Options& o) {
  if (!require_specs(o) || (!o.lib.empty() && !check_library_name(o.lib)))
    return 2;
  std::vector<const Target*> targets;
  if (!resolve_targets(o, targets, true))
    return 2;
  auto loaded = load(o.specs, o.lib);
  if (!loaded || !load_tuning_db(o))
    return 1;
  FailedPairs failed;
  for (const auto& s : *loaded)
    for (const auto& lk : s.kernels) {
      check_thread_count(lk.kernel, targets, failed);
      TargetGroup group(diag_, targets);
      for (const auto& inst : lk.instances)
        for (const Target* t : targets)
          if (auto plan = class_plan(lk.kernel, inst, *t, failed))
            for (const std::string& cls : distinct(*plan)) // the variants generate would emit
              if (auto ik = instantiate_once(lk.kernel, inst, *t, failed, cls))
                wgsl_fits(lk.kernel, inst, cls, ik, *t, failed);
    }
  if (!diag_.has_errors())
    warn_unused_entries(*loaded, targets);
  return diag_.has_errors() ? 1 : 0;
}

int Driver::dump(const Options& o) {
  if (!require_specs(o))
    return 2;
  if (o.stage != "ir" && o.stage != "instantiated" && o.stage != "recommend") {
    err_ << "tilegen: error: --stage must be 'ir', 'instantiated' or 'recommend'"
         << (o.stage.empty() ? "" : " (got '" + o.stage + "')") << "\n";
    return 2;
  }
  const Target* target = find_target(o.target.empty() ? "c" : o.target);
  if (!target) {
    err_ << "tilegen: error: unknown target '" << o.target << "'\n";
    return 2;
  }
  if (o.stage == "recommend" && !target->is_gpu()) {
    err_ << "tilegen: error: --stage=recommend ranks GPU configurations: give a GPU target, "
            "e.g. --target=sm_90 (C targets use the largest-footprint rule)\n";
    return 2;
  }
  if (o.stage == "ir" && !o.instance.empty()) {
    err_ << "tilegen: error: --instance selects an instance of --stage=instantiated or "
            "recommend; --stage=ir prints one kernel per type binding, before instances exist\n";
    return 2;
  }
  auto loaded = load(o.specs, o.lib);
  if (!loaded)
    return 1;
  ir::PrintOptions popts;
  popts.show_locs = o.show_locs;
  bool found = o.instance.empty();
  std::vector<std::string> names;
  for (const auto& s : *loaded)
    for (const auto& lk : s.kernels) {
      if (o.stage == "ir") {
        out_ << ir::to_string(lk.kernel, popts) << "\n";
        continue;
      }
      for (const auto& inst : lk.instances) {
        names.push_back(inst.name);
        if (!o.instance.empty() && inst.name != o.instance)
          continue;
        found = true;
        if (o.stage == "recommend") { // the GPU schedule rule's table (docs/recommend.md)
          if (auto rec = passes::recommend(lk.kernel, inst.values, *target, diag_))
            out_ << "kernel " << lk.kernel.name << " instance " << inst.name << "\n"
                 << passes::format_recommendation(*rec, *target) << "\n";
          continue;
        }
        auto ik = passes::instantiate(lk.kernel, inst, *target, diag_);
        if (ik)
          out_ << ir::to_string(*ik, popts) << "\n";
      }
    }
  if (!found) {
    err_ << "tilegen: error: no instance named '" << o.instance
         << "' (instances: " << join(names, ", ") << ")\n";
    return 2;
  }
  return diag_.has_errors() ? 1 : 0;
}

namespace {

// The table's facts of a HIP row, one line (`tilegen targets`, docs/hip.md).
std::string hip_facts_line(const Target& t) {
  std::string s = "wave" + std::to_string(t.gpu.warp_size) + ", LDS " +
                  std::to_string(t.gpu.smem_per_block) + " B per block, " +
                  std::to_string(t.hip.vgprs) + " VGPRs";
  if (t.hip.agprs > 0)
    s += " + " + std::to_string(t.hip.agprs) + " AGPRs";
  s += " per lane, " + std::to_string(t.hip.simds_per_cu) + " SIMDs x " +
       std::to_string(t.hip.max_waves_per_simd) + " waves per CU; matrix: ";
  if (t.hip.matrix.empty())
    s += "none";
  for (size_t i = 0; i < t.hip.matrix.size(); ++i) {
    const auto& m = t.hip.matrix[i];
    s += (i ? ", " : "") + m.mnemonic + " (" + std::to_string(m.m) + "x" + std::to_string(m.n) +
         "x" + std::to_string(m.k) + " " + m.in + (m.fnuz ? " read as FNUZ" : "") + ")";
  }
  if (t.hip.register_staged_pipeline)
    s += "; pipelines staged through registers";
  s += "; compiler " + t.hip.compiler +
       (t.hip.offload_arch.empty() ? " (every gfx arch of the library; nvcc on NVIDIA)"
                                   : " --offload-arch=" + t.hip.offload_arch);
  return s;
}

} // namespace

int Driver::targets() {
  out_ << "target      backend  pref  runtime features                                   "
          "compile flags\n";
  for (const auto& t : all_targets()) {
    std::string name = t.name, backend = backend_name(t.backend);
    std::string feats = t.runtime_features.empty() ? "-" : join(t.runtime_features, ",");
    std::string flags = t.compile_flags.empty() ? "-" : join(t.compile_flags, " ");
    if (!t.gcc_flags.empty())
      flags += " (gcc: " + join(t.gcc_flags, " ") + ")";
    name.resize(std::max<size_t>(name.size() + 1, 12), ' ');
    backend.resize(std::max<size_t>(backend.size() + 1, 9), ' ');
    std::string pref = std::to_string(t.preference);
    pref.resize(std::max<size_t>(pref.size() + 1, 6), ' ');
    feats.resize(std::max<size_t>(feats.size() + 1, 51), ' ');
    out_ << name << backend << pref << feats << flags << "\n";
    out_ << "            " << t.summary;
    if (!t.fallbacks.empty())
      out_ << " (falls back to " << join(t.fallbacks, ", ") << ")";
    out_ << "\n";
    if (t.backend == Backend::HIP)
      out_ << "            " << hip_facts_line(t) << "\n";
  }
  return 0;
}

int Driver::kernels(const Options& o) {
  if (!require_specs(o))
    return 2;
  if (!o.lib.empty() && !check_library_name(o.lib))
    return 2;
  auto loaded = load(o.specs, o.lib);
  if (!loaded)
    return 1;
  std::string lib = o.lib.empty() ? "<lib>" : o.lib;
  for (const auto& s : *loaded) {
    out_ << s.path << ":\n";
    for (const auto& lk : s.kernels) {
      const ir::Kernel& k = lk.kernel;
      std::vector<std::string> binding, insts;
      for (const auto& [param, t] : k.type_binding)
        binding.push_back(param + "=" + t.name());
      for (const auto& inst : lk.instances)
        insts.push_back(dispatch::instance_label(inst));
      out_ << "  " << k.name;
      if (!binding.empty())
        out_ << "<" << join(binding, ", ") << ">";
      out_ << ": " << k.summary << "\n";
      out_ << "    function:  " << dispatch::public_function_name(lib, k) << ", "
           << dispatch::public_function_name(lib, k) << "_query\n";
      out_ << "    instances: " << join(insts, ", ") << "\n";
    }
  }
  return 0;
}

int Driver::outputs(const Options& o) {
  if (!check_library_name(o.lib) || !require_specs(o))
    return 2;
  if (!o.format.empty() && o.format != "names" && o.format != "cmake") {
    err_ << "tilegen: error: --format must be 'names' or 'cmake'\n";
    return 2;
  }
  std::vector<const Target*> targets;
  if (!resolve_targets(o, targets, false))
    return 2;
  auto loaded = load(o.specs, o.lib);
  if (!loaded || !load_tuning_db(o))
    return 1;
  bool cmake = o.format == "cmake";
  // cmake records are split at spaces (cmake/TileGen.cmake): each field is a generated name,
  // checked by cmake_record_field.
  auto field = [&](const std::string& f) { return cmake ? cmake_record_field(f) : f; };
  // WGSL variants are not compiled: cmake lists them as `wgsl <file>`, with the ES module, its
  // types and the manifest as `wgsl_host <file>` (cmake/TileGen.cmake installs them).
  // Metal variants are listed as `metal <file>`: TileGen.cmake compiles them with xcrun on
  // macOS and type-checks them elsewhere (docs/metal.md); they are not C sources. Their C
  // launchers, <lib>_metal.c, are `metal_host <file>`.
  bool any_c = false, any_wgsl = false, any_metal = false;
  for (const Target* t : targets) {
    (t->backend == Backend::WGSL ? any_wgsl : any_c) = true;
    any_metal = any_metal || t->backend == Backend::Metal;
  }
  // The same enumeration as generate: on GPU targets of kernels with schedule.classes, one
  // variant per distinct class choice (class_plan runs the recommender for that).
  FailedPairs failed;
  std::string listing;
  for (const auto& s : *loaded)
    for (const auto& lk : s.kernels) {
      check_thread_count(lk.kernel, targets, failed);
      TargetGroup group(diag_, targets);
      for (const auto& inst : lk.instances)
        for (const Target* t : targets)
          if (auto plan = class_plan(lk.kernel, inst, *t, failed))
            for (const std::string& cls : distinct(*plan)) {
              if (cmake)
                listing += t->backend == Backend::WGSL    ? "wgsl "
                           : t->backend == Backend::Metal ? "metal "
                                                          : "variant " + field(t->name) + " ";
              listing += field(dispatch::variant_file_name(o.lib, lk.kernel, inst, *t, cls)) + "\n";
            }
    }
  if (diag_.has_errors())
    return 1;
  if (any_c) {
    out_ << (cmake ? "header " : "") << field(dispatch::header_file_name(o.lib)) << "\n";
    out_ << (cmake ? "source " : "") << field(dispatch::dispatch_file_name(o.lib)) << "\n";
    if (o.torch) // compiled into the PyTorch extension, not the C library
      out_ << (cmake ? "torch " : "") << field(dispatch::torch_file_name(o.lib)) << "\n";
  }
  out_ << listing;
  if (any_metal)
    out_ << (cmake ? "metal_host " : "") << field(dispatch::metal_host_file_name(o.lib)) << "\n";
  if (any_wgsl)
    for (const std::string& f : {dispatch::js_module_file_name(o.lib), dispatch::js_types_file_name(o.lib),
                                 dispatch::wgsl_manifest_file_name(o.lib)})
      out_ << (cmake ? "wgsl_host " : "") << field(f) << "\n";
  if (cmake)
    for (const Target* t : targets)
      if (t->backend != Backend::WGSL) {
        out_ << (t->backend == Backend::Metal ? "metal_flags " : "flags ") << field(t->name);
        for (const auto& f : t->compile_flags)
          out_ << " " << field(f);
        out_ << "\n";
        // C targets of one CPU architecture: compiled only where CMAKE_SYSTEM_PROCESSOR is it
        // (cmake/TileGen.cmake; the dispatch code leaves their rows out elsewhere)
        if (!t->cpu_arch.empty())
          out_ << "cpu_arch " << field(t->name) << " " << field(t->cpu_arch) << "\n";
        // Flags only GCC gets (workarounds of GCC bugs; add_tile_kernels: $<C_COMPILER_ID:GNU>)
        if (!t->gcc_flags.empty()) {
          out_ << "gcc_flags " << field(t->name);
          for (const auto& f : t->gcc_flags)
            out_ << " " << field(f);
          out_ << "\n";
        }
        // HIP targets: the offload arch ("-" for the portable row, built for every gfx arch of
        // the library) and the compiler of its code objects (cmake/TileGen.cmake, docs/hip.md)
        if (t->backend == Backend::HIP)
          out_ << "hip " << field(t->name) << " "
               << (t->hip.offload_arch.empty() ? "-" : field(t->hip.offload_arch)) << " "
               << field(t->hip.compiler) << "\n";
      }
  return 0;
}

int Driver::target_flags(const std::string& name) {
  const Target* t = find_target(name);
  if (!t) {
    err_ << "tilegen: error: unknown target '" << name << "'\n";
    return 2;
  }
  for (const auto& f : t->compile_flags)
    out_ << f << "\n";
  return 0;
}

} // namespace tilegen::tools
