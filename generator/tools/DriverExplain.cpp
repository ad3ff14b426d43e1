// `tilegen explain`: pictures of one instance of a kernel on one target (generator/explain/,
// docs/explain.md). The driver's part: pick the kernel and instance, run the same recommender,
// instantiation and layout inference as `generate`, and write the page.
#include "tools/Driver.h"

#include "explain/Explain.h"
#include "passes/LayoutInference.h"
#include "support/AtomicFile.h"

#include <ostream>

namespace tilegen::tools {

int Driver::explain(const Options& o) {
  if (!require_specs(o))
    return 2;
  if (o.specs.size() != 1) {
    err_ << "tilegen: error: 'explain' takes exactly one spec (got " << o.specs.size() << ")\n";
    return 2;
  }
  if (o.target.empty()) {
    err_ << "tilegen: error: 'explain' needs --target T (one of `tilegen targets`)\n";
    return 2;
  }
  explain::Format format = explain::Format::Html;
  if (o.format == "svg")
    format = explain::Format::Svg;
  else if (!o.format.empty() && o.format != "html") {
    err_ << "tilegen: error: --format must be 'html' or 'svg' (got '" << o.format << "')\n";
    return 2;
  }
  const Target* target = find_target(o.target);
  if (!target) {
    std::string names;
    for (const auto& t : all_targets())
      names += (names.empty() ? "" : ", ") + t.name;
    err_ << "tilegen: error: unknown target '" << o.target << "' (known targets: " << names << ")\n";
    return 2;
  }
  auto loaded = load(o.specs, o.lib);
  if (!loaded)
    return 1;
  const LoadedKernel* kernel = nullptr;
  const passes::Instance* instance = nullptr;
  std::string names;
  for (const auto& lk : loaded->front().kernels)
    for (const auto& inst : lk.instances) {
      names += (names.empty() ? "" : ", ") + inst.name;
      if (!instance && (o.instance.empty() || inst.name == o.instance)) {
        kernel = &lk;
        instance = &inst;
      }
    }
  if (!instance) {
    err_ << "tilegen: error: no instance named '" << o.instance << "' (instances: " << names
         << ")\n";
    return 2;
  }

  // The same decisions `generate` makes for the variant of the class "large".
  std::optional<passes::Recommendation> rec;
  if (target->is_gpu()) {
    rec = passes::recommend(kernel->kernel, instance->values, *target, diag_);
    if (!rec)
      return 1;
  }
  if (rec)
    recommendations_[{&kernel->kernel, instance->name, target->name}] =
        std::make_shared<const passes::Recommendation>(*rec);
  FailedPairs failed;
  auto ik = instantiate_once(kernel->kernel, *instance, *target, failed, passes::kLargeClass);
  if (!ik)
    return 1;
  std::optional<passes::LayoutPlan> plan;
  if (target->has_thread_layouts()) {
    plan = passes::infer_layouts(*ik, *target, diag_);
    if (!plan)
      return 1;
  }

  explain::ExplainInput in;
  in.kernel = &*ik;
  in.plan = plan ? &*plan : nullptr;
  in.rec = rec ? &*rec : nullptr;
  in.target = target;
  in.spec_path = loaded->front().path;
  in.instance = instance->name;
  std::string page = explain::render(in, format);
  if (o.out_dir.empty()) {
    out_ << page;
    return 0;
  }
  // --out FILE: written whole or not at all (a temporary renamed over it).
  std::string dir = ".", name = o.out_dir;
  if (size_t slash = o.out_dir.rfind('/'); slash != std::string::npos) {
    dir = slash == 0 ? "/" : o.out_dir.substr(0, slash);
    name = o.out_dir.substr(slash + 1);
  }
  if (name.empty() || name == "." || name == "..") {
    err_ << "tilegen: error: --out '" << o.out_dir << "' names a folder; give a file\n";
    return 2;
  }
  std::string error = write_files_atomically(dir, {OutputFile{name, page}}, nullptr);
  if (!error.empty()) {
    err_ << "tilegen: error: cannot write " << o.out_dir << ": " << error << "\n";
    return 1;
  }
  return 0;
}

} // namespace tilegen::tools
