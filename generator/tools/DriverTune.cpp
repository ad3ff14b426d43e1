// `tilegen tune` (docs/tune.md): a thin loop over the generator. For each instance and shape
// class it takes the eligible configurations in the schedule rule's order
// (tune::ranked_configurations), generates one library per configuration with that
// configuration forced (Options::forced: the same path `generate --tuning-db` takes), compiles
// each once (in parallel), links it to a generated harness (tune/TuneHarness) that checks it
// against the portable `c` library and times it, then applies the choice rule and merges the
// chosen configurations into the database.
#include "tools/Driver.h"

#include "dispatch/DispatchEmitter.h"
#include "dispatch/Naming.h"
#include "support/Strings.h"
#include "support/TextEscape.h"
#include "tune/Candidates.h"
#include "tune/ChoiceRule.h"
#include "tune/TuneFill.h"
#include "tune/TuneHarness.h"
#include "tune/TunePlan.h"
#include "tune/TuneRun.h"
#include "tune/TuningDb.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <ostream>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#ifndef TILEGEN_RUNTIME_SOURCE_DIR
#define TILEGEN_RUNTIME_SOURCE_DIR ""
#endif

namespace tilegen::tools {

using tune::Candidate;
using tune::ClassPlan;
using tune::InstancePlan;
using tune::fixed;
using tune::geomean;
using tune::parse_harness;

namespace {

const char* kRuntimeSources[] = {"status.c", "cpu.c", "launch.c", "select.c", "check.c", "scratch.c"};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t end; (end = s.find(sep, start)) != std::string::npos; start = end + 1)
    out.push_back(s.substr(start, end - start));
  out.push_back(s.substr(start));
  return out;
}

bool exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

} // namespace

int Driver::tune(const Options& o) {
  const auto t_start = std::chrono::steady_clock::now();
  // ---- usage --------------------------------------------------------------------------------
  if (o.specs.size() != 1) {
    err_ << "tilegen: error: tune takes exactly one SPEC (got " << o.specs.size() << ")\n";
    return 2;
  }
  const Target* target = find_target(o.target);
  if (!target) {
    err_ << "tilegen: error: "
         << (o.target.empty() ? std::string("--target T is required")
                              : "unknown target '" + o.target + "'")
         << " (see `tilegen targets`)\n";
    return 2;
  }
  if (target->backend == Backend::HIP) {
    err_ << "tilegen: error: tune: HIP targets are not supported yet (target '" << target->name
         << "'); C and CUDA targets are (docs/tune.md)\n";
    return 2;
  }
  if (target->backend == Backend::WGSL || target->backend == Backend::Metal) {
    err_ << "tilegen: error: tune: " << backend_name(target->backend)
         << " targets cannot be timed by tilegen (no harness runs them); C and CUDA targets "
            "can (docs/tune.md)\n";
    return 2;
  }
  if (o.db_out.empty() && !o.list) {
    err_ << "tilegen: error: --db FILE is required (the tuning database to write)\n";
    return 2;
  }
  const bool cuda = target->backend == Backend::CUDA;
  const int runs = o.runs > 0 ? o.runs : 5;
  const int warmup = o.warmup >= 0 ? o.warmup : 2;
  const double margin = o.margin >= 0 ? o.margin : 5.0;
  const int jobs = o.jobs > 0 ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  const char* env_cc = std::getenv("CC");
  const std::string cc = !o.cc.empty() ? o.cc : env_cc && *env_cc ? env_cc : "cc";
  std::string runtime = !o.runtime_dir.empty() ? o.runtime_dir : TILEGEN_RUNTIME_SOURCE_DIR;
  if (runtime.empty() || !exists(runtime + "/include/tilegen/runtime.h") ||
      !exists(runtime + "/src/status.c")) {
    err_ << "tilegen: error: tilegen's runtime sources not found"
         << (runtime.empty() ? std::string() : " in '" + runtime + "'")
         << ": give --runtime DIR, the runtime/ folder of a tilegen source tree (include/, "
            "src/)\n";
    return 2;
  }
  std::string nvcc, cuda_include;
  if (cuda) {
    nvcc = o.nvcc;
    if (nvcc.empty()) {
      std::string found;
      if (tune::run_capture("command -v nvcc", found) == 0) {
        while (!found.empty() && (found.back() == '\n' || found.back() == ' '))
          found.pop_back();
        nvcc = found;
      }
    }
    if (nvcc.empty() || !exists(nvcc)) {
      err_ << "tilegen: error: tune: target '" << target->name
           << "' needs nvcc: put it on PATH or give --nvcc PATH\n";
      return 2;
    }
    std::string root = nvcc.substr(0, nvcc.find_last_of('/'));
    root = root.substr(0, root.find_last_of('/'));
    cuda_include = root + "/include";
  }

  // ---- spec, shapes, database ---------------------------------------------------------------
  auto loaded = load(o.specs, "tgcand");
  if (!loaded)
    return 1;
  std::vector<std::map<std::string, int64_t>> user_shapes;
  for (const auto& s : o.shapes) {
    std::map<std::string, int64_t> dims;
    for (const auto& item : split(s, ',')) {
      size_t eq = item.find('=');
      char* end = nullptr;
      long long v = eq == std::string::npos ? 0 : std::strtoll(item.c_str() + eq + 1, &end, 10);
      if (eq == std::string::npos || eq == 0 || !end || *end || eq + 1 == item.size() || v < 0) {
        err_ << "tilegen: error: --shape '" << s
             << "': give every runtime dim as NAME=VALUE, comma-separated (e.g. M=64,N=256)\n";
        return 2;
      }
      dims[item.substr(0, eq)] = v;
    }
    user_shapes.push_back(dims);
  }
  std::map<std::string, std::string> scalar_values;
  for (const auto& s : o.scalars) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
      err_ << "tilegen: error: --scalar '" << s << "': give NAME=VALUE\n";
      return 2;
    }
    scalar_values[s.substr(0, eq)] = s.substr(eq + 1);
  }
  // --baseline [CLASS:]NAME=V,...: parsed here, matched against each class's configurations below
  struct Baseline {
    std::string text, cls;
    std::map<std::string, int64_t> values;
    bool used = false;
  };
  std::vector<Baseline> baselines;
  for (const auto& s : o.baselines) {
    Baseline b{s, {}, {}, false};
    std::string body = s;
    size_t colon = s.find(':');
    if (colon != std::string::npos) {
      b.cls = s.substr(0, colon);
      body = s.substr(colon + 1);
    }
    for (const auto& item : split(body, ',')) {
      size_t eq = item.find('=');
      char* end = nullptr;
      long long v = eq == std::string::npos ? 0 : std::strtoll(item.c_str() + eq + 1, &end, 10);
      if (eq == std::string::npos || eq == 0 || !end || *end || eq + 1 == item.size() ||
          (colon != std::string::npos && b.cls.empty())) {
        err_ << "tilegen: error: --baseline '" << s
             << "': give [CLASS:]NAME=VALUE,... with every tile constant (e.g. "
                "large:BM=128,BN=128,BK=64,stages=4,threads=256)\n";
        return 2;
      }
      b.values[item.substr(0, eq)] = v;
    }
    baselines.push_back(std::move(b));
  }
  // --fill TENSOR=EXPR: parsed once, checked against each kernel below
  std::vector<tune::Fill> fills;
  for (size_t i = 0; i < o.fills.size(); ++i) {
    auto f = tune::parse_fill(o.fills[i], static_cast<int>(i + 1), diag_);
    if (!f)
      return 1;
    for (const auto& g : fills)
      if (g.tensor == f->tensor) {
        diag_.error(f->loc, "--fill: tensor '" + f->tensor + "' is given twice");
        return 1;
      }
    fills.push_back(std::move(*f));
  }
  tune::TuningDb old_db;
  if (exists(o.db_out)) {
    auto db = tune::read_tuning_db(o.db_out, diag_);
    if (!db)
      return 1;
    old_db = std::move(*db);
  }

  // ---- plan: instances, classes, shapes, candidates -----------------------------------------
  std::vector<InstancePlan> plans;
  std::vector<Candidate> cands;
  std::vector<std::string> all_instances;
  for (const auto& s : *loaded)
    for (const auto& lk : s.kernels)
      for (const auto& inst : lk.instances) {
        all_instances.push_back(inst.name);
        if (!o.instance.empty() && inst.name != o.instance)
          continue;
        const ir::Kernel& k = lk.kernel;
        for (const auto& f : fills)
          if (!tune::check_fill(f, k, diag_))
            return 1;
        for (const auto& use : tune::index_tensors(k)) {
          const ir::Buffer* ix = use.first; // (not a structured binding: clang 14's lambdas)
          const std::string& where = use.second;
          if (std::none_of(fills.begin(), fills.end(),
                           [&](const tune::Fill& f) { return f.tensor == ix->name; })) {
            diag_.error(ix->loc, "tune: tensor '" + ix->name + "' of kernel '" + k.name +
                                     "' holds indices (read in " + where +
                                     "): the harness's own values would read out of bounds "
                                     "there; give its values with --fill " + ix->name +
                                     "=EXPR, an integer expression over the dims and the "
                                     "element's index i0, i1, ... (docs/tune.md)");
            return 1;
          }
        }
        InstancePlan ip{&lk.kernel, inst, {}, {}, {}, {}, {}};
        std::vector<std::string> runtime_dims;
        for (const auto& d : k.dims)
          if (d.var->kind == ir::VarKind::Dim)
            runtime_dims.push_back(d.var->name);
        for (const auto& sc : k.scalars)
          if (!scalar_values.count(sc->name))
            scalar_values[sc->name] = sc->type.is_float() ? "0.5" : "1";
        const bool with_classes = target->is_gpu() && !k.shape_classes.empty();
        std::vector<std::string> names =
            with_classes ? dispatch::shape_class_names(k) : std::vector<std::string>{"large"};
        auto reps = passes::shape_class_reps(k, inst.values, diag_);
        if (!reps)
          return 1;
        std::optional<passes::Recommendation> rec;
        if (target->is_gpu()) {
          rec = passes::recommend(k, inst.values, *target, diag_);
          if (!rec)
            return 1;
        }
        auto add_shape = [&](const std::vector<int64_t>& dims) {
          for (size_t i = 0; i < ip.shapes.size(); ++i)
            if (ip.shapes[i] == dims)
              return i;
          std::string n;
          for (size_t i = 0; i < dims.size(); ++i)
            n += (i ? " " : "") + runtime_dims[i] + "=" + std::to_string(dims[i]);
          ip.shapes.push_back(dims);
          ip.shape_names.push_back(n);
          return ip.shapes.size() - 1;
        };
        for (const auto& cls : names) {
          ClassPlan cp;
          cp.name = cls;
          for (const auto& r : *reps)
            if (r.name == cls) {
              std::vector<int64_t> dims;
              for (const auto& [d, v] : r.dims)
                dims.push_back(v);
              cp.shapes.push_back(add_shape(dims));
            }
          ip.classes.push_back(cp);
        }
        // The user's shapes go to the class dispatch would take for them.
        std::vector<std::string> user_class(user_shapes.size()); // the class each --shape went to
        for (size_t si = 0; si < user_shapes.size(); ++si) {
          std::vector<int64_t> dims;
          ir::VarMap m = passes::instance_var_map(k, inst.values);
          for (const auto& d : runtime_dims) {
            auto it = user_shapes[si].find(d);
            if (it == user_shapes[si].end()) {
              err_ << "tilegen: error: --shape '" << o.shapes[si] << "' gives no value for dim '"
                   << d << "' (runtime dims of kernel '" << k.name << "': "
                   << join(runtime_dims, ", ") << ")\n";
              return 2;
            }
            dims.push_back(it->second);
          }
          for (const auto& [d, v] : user_shapes[si])
            if (std::find(runtime_dims.begin(), runtime_dims.end(), d) == runtime_dims.end()) {
              err_ << "tilegen: error: --shape '" << o.shapes[si] << "': '" << d
                   << "' is not a runtime dim of kernel '" << k.name
                   << "' (runtime dims: " << join(runtime_dims, ", ") << ")\n";
              return 2;
            }
          size_t di = 0;
          for (const auto& d : k.dims)
            if (d.var->kind == ir::VarKind::Dim)
              m[d.var.get()] = ir::make_i64(dims[di++]);
          size_t target_class = ip.classes.size() - 1; // "large"
          if (with_classes)
            for (size_t c = 0; c + 1 < ip.classes.size(); ++c) {
              auto holds = passes::fold_with(k.shape_classes[c].second.pred, m);
              if (holds && *holds) {
                target_class = c;
                break;
              }
            }
          size_t idx = add_shape(dims);
          user_class[si] = ip.classes[target_class].name;
          auto& sh = ip.classes[target_class].shapes;
          if (std::find(sh.begin(), sh.end(), idx) == sh.end())
            sh.push_back(idx);
        }
        for (const auto& cls : names) {
          auto ranked = tune::ranked_configurations(k, inst.values, *target, cls, diag_,
                                                    rec ? &*rec : nullptr);
          if (!ranked)
            return 1;
          ip.eligible[cls] = *ranked;
        }
        // --class: only those classes (a --shape dispatched to another one is an error)
        if (!o.classes.empty()) {
          for (const auto& want : o.classes)
            if (std::find(names.begin(), names.end(), want) == names.end()) {
              err_ << "tilegen: error: --class '" << want << "': kernel '" << k.name
                   << "' has no class of that name on " << target->name << " (classes: "
                   << join(names, ", ") << ")\n";
              return 2;
            }
          std::vector<ClassPlan> kept;
          for (auto& cp : ip.classes) {
            if (std::find(o.classes.begin(), o.classes.end(), cp.name) != o.classes.end()) {
              kept.push_back(std::move(cp));
              continue;
            }
            for (size_t si = 0; si < user_shapes.size(); ++si)
              if (user_class[si] == cp.name) {
                err_ << "tilegen: error: --shape '" << o.shapes[si] << "' falls in class '"
                     << cp.name << "', which --class leaves out\n";
                return 2;
              }
          }
          ip.classes = std::move(kept);
        }
        // Candidates: every eligible configuration of every class, once per instance.
        size_t inst_index = plans.size();
        for (auto& cp : ip.classes) {
          const auto* ranked = &ip.eligible.at(cp.name);
          auto candidate = [&](const std::vector<int64_t>& values) {
            size_t ci = 0;
            while (ci < cands.size() && !(cands[ci].inst == inst_index && cands[ci].values == values))
              ++ci;
            if (ci == cands.size())
              cands.push_back({inst_index, values, {}, {}, {}});
            return ci;
          };
          for (size_t r = 0; r < ranked->size() && (o.top <= 0 || r < size_t(o.top)); ++r)
            cp.ranked.push_back(candidate((*ranked)[r]));
          for (auto& b : baselines) {
            if (!b.cls.empty() && b.cls != cp.name)
              continue;
            std::vector<int64_t> values;
            std::vector<std::string> names;
            for (const auto& tc : k.tile_consts) {
              names.push_back(tc.var->name);
              auto it = b.values.find(tc.var->name);
              if (it != b.values.end())
                values.push_back(it->second);
            }
            if (values.size() != k.tile_consts.size() || b.values.size() != values.size()) {
              err_ << "tilegen: error: --baseline '" << b.text << "' must give each tile constant "
                   << "of kernel '" << k.name << "' once: " << join(names, ", ") << "\n";
              return 2;
            }
            if (std::find(ranked->begin(), ranked->end(), values) == ranked->end()) {
              if (b.cls.empty())
                continue; // not eligible in this class; another may take it
              err_ << "tilegen: error: --baseline '" << b.text << "' is not an eligible "
                   << "configuration of class '" << cp.name << "' of instance " << inst.name
                   << " on " << target->name << " (`tilegen tune --list` prints them; "
                   << "`tilegen dump --stage=recommend` says why others are not)\n";
              return 2;
            }
            b.used = true;
            cp.baseline.push_back(candidate(values));
          }
        }
        plans.push_back(std::move(ip));
      }
  for (const auto& b : baselines)
    if (!b.used && !plans.empty()) {
      err_ << "tilegen: error: --baseline '" << b.text << "' is an eligible configuration of "
           << "no class of the instances tuned on " << target->name
           << " (`tilegen tune --list` prints them)\n";
      return 2;
    }
  if (plans.empty()) {
    err_ << "tilegen: error: no instance named '" << o.instance
         << "' (instances: " << join(all_instances, ", ") << ")\n";
    return 2;
  }

  // --fill: the values of each filled tensor at each shape of an instance, written for the
  // harnesses to read (into `dir`; "" = only evaluated, which reports bad values)
  auto write_fills = [&](const InstancePlan& ip, const std::string& dir) {
    for (size_t si = 0; si < ip.shapes.size(); ++si) {
      std::map<std::string, int64_t> dims = ip.inst.values;
      size_t di = 0;
      for (const auto& d : ip.kernel->dims)
        if (d.var->kind == ir::VarKind::Dim)
          dims[d.var->name] = ip.shapes[si][di++];
      for (const auto& f : fills) {
        std::vector<int64_t> values;
        if (!tune::eval_fill(f, *ip.kernel, dims, values, diag_)) {
          diag_.note(f.loc, "at shape " + ip.shape_names[si] + " of instance " + ip.inst.name);
          return false;
        }
        if (dir.empty())
          continue;
        const std::string path = dir + "/" + tune::fill_file_name(si, f.tensor);
        const ir::DType type = tune::filled_tensor(f, *ip.kernel)->dtype; // (check_fill: exists)
        if (!write_text(path, tune::fill_bytes(values, type))) {
          err_ << "tilegen: error: cannot write '" << path << "'\n";
          return false;
        }
      }
    }
    return true;
  };
  if (o.list) { // the plan, without building anything
    for (const auto& ip : plans)
      if (!write_fills(ip, ""))
        return 1;
    for (const auto& ip : plans) {
      const ir::Kernel& k = *ip.kernel;
      for (const auto& cp : ip.classes) {
        const std::vector<std::string> shapes = tune::class_shape_names(ip, cp);
        out_ << k.name << " " << ip.inst.name << " " << target->name << " class " << cp.name
             << " spec_hash " << tune::spec_hash(k) << "\n  shapes: " << join(shapes, "; ")
             << "\n";
        for (size_t r = 0; r < cp.ranked.size(); ++r)
          out_ << "  " << r + 1 << ". " << tune::config_string(k, cands[cp.ranked[r]].values)
               << "\n";
        for (size_t b : cp.baseline)
          out_ << "  baseline: " << tune::config_string(k, cands[b].values) << "\n";
      }
    }
    return 0;
  }

  // ---- generate -----------------------------------------------------------------------------
  std::string work = o.work_dir;
  bool remove_work = false;
  if (work.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/tilegen-tune-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) {
      err_ << "tilegen: error: cannot create a work folder from '" << tmpl << "'\n";
      return 1;
    }
    work = buf.data();
    remove_work = true;
  }
  if (std::system(("mkdir -p " + tune::shell_quote(work + "/runtime")).c_str()) != 0) {
    err_ << "tilegen: error: cannot create the work folder '" << work << "'\n";
    return 1;
  }
  const std::string incs = " -I" + tune::shell_quote(runtime + "/include");
  std::vector<tune::Command> cmds;
  std::vector<std::string> what; // per command, for the progress line
  // The runtime, once.
  std::string rt_objs;
  {
    std::string sh = "cd " + tune::shell_quote(work + "/runtime");
    for (const char* f : kRuntimeSources)
      sh += " && " + cc + " -std=gnu11 -O2 -fopenmp" + incs + " -c " +
            tune::shell_quote(runtime + "/src/" + f);
    if (cuda)
      sh += " && " + cc + " -std=gnu11 -O2" + incs + " -I" + tune::shell_quote(cuda_include) +
            " -c " + tune::shell_quote(runtime + "/src/cuda.c");
    cmds.push_back({sh, work + "/runtime/build.log"});
    what.push_back("compiled the runtime");
    for (const char* f : kRuntimeSources)
      rt_objs += " " + tune::shell_quote(work + "/runtime/" + std::string(f, strlen(f) - 1) + "o");
    if (cuda)
      rt_objs += " " + tune::shell_quote(work + "/runtime/cuda.o");
  }
  // Writes a library's files; false (with the reason) if generation failed.
  auto generate_into = [&](const std::string& dir, Options lo, std::string& why) {
    std::ostringstream sink_out, sink_err;
    Driver inner(sink_out, sink_err);
    auto files = inner.build_outputs(lo);
    if (!files) {
      why = "generation failed: " + sink_err.str();
      while (!why.empty() && why.back() == '\n')
        why.pop_back();
      return false;
    }
    std::system(("mkdir -p " + tune::shell_quote(dir)).c_str());
    for (const auto& f : *files)
      if (!write_text(dir + "/" + f.name, f.contents)) {
        why = "cannot write " + dir + "/" + f.name;
        return false;
      }
    return true;
  };
  // The C compile of a library's sources in `dir` (variants at -O3 with the target's flags).
  auto compile_c = [&](const std::string& dir, const Target& t, const std::string& lib) {
    std::string sh = "cd " + tune::shell_quote(dir) + " && for f in " + lib + "__*.c; do " + cc +
                     " -std=gnu11 -O3 -fopenmp";
    for (const auto& f : t.compile_flags) {
      sh += ' '; // (not " " + ...: GCC 12's -Wrestrict false positive, bug 105329)
      sh += tune::shell_quote(f);
    }
    sh += incs + " -I. -c \"$f\" || exit 1; done && " + cc + " -std=gnu11 -O2 -fopenmp" + incs +
          " -I. -c " + dispatch::dispatch_file_name(lib);
    return sh;
  };
  for (size_t pi = 0; pi < plans.size(); ++pi) {
    auto& ip = plans[pi];
    ip.ref_dir = work + "/" + ip.inst.name + "/ref";
    Options ro;
    ro.lib = "tgref";
    ro.targets = {"c"};
    ro.specs = o.specs;
    ro.only_instance = ip.inst.name;
    std::string why;
    if (!generate_into(ip.ref_dir, ro, why)) {
      err_ << "tilegen: error: the reference library (target c) of instance " << ip.inst.name
           << ": " << why << "\n";
      return 1;
    }
    // (and no reference outputs of an earlier run in a kept --work folder)
    std::system(("rm -f " + tune::shell_quote(ip.ref_dir) + "/ref_s*.bin").c_str());
    if (!write_fills(ip, ip.ref_dir))
      return 1;
    cmds.push_back({compile_c(ip.ref_dir, *find_target("c"), "tgref"), ip.ref_dir + "/build.log"});
    what.push_back("compiled the reference of " + ip.inst.name);
  }
  const size_t first_cand_cmd = cmds.size();
  std::vector<size_t> cand_of_cmd;
  for (size_t ci = 0; ci < cands.size(); ++ci) {
    Candidate& c = cands[ci];
    const InstancePlan& ip = plans[c.inst];
    const ir::Kernel& k = *ip.kernel;
    c.dir = work + "/" + ip.inst.name + "/c" + std::to_string(ci);
    Options co;
    co.lib = "tgcand";
    co.targets = {target->name};
    co.specs = o.specs;
    co.only_instance = ip.inst.name;
    // Every class that may take it runs it (so the library has one variant where the classes
    // share their candidates, not one per class: the classes it is not timed in never run).
    for (const auto& [cls, eligible] : ip.eligible)
      if (std::find(eligible.begin(), eligible.end(), c.values) != eligible.end())
        co.forced[tune::TuningKey{k.name, ip.inst.name, target->name, cls}.str()] = c.values;
    std::string why;
    if (!generate_into(c.dir, co, why)) {
      c.rejected = why;
      continue;
    }
    tune::HarnessSpec hs{&k, ip.inst, "tgref", "tgcand", cuda, ip.shapes, scalar_values, ip.ref_dir, {}};
    for (const auto& f : fills)
      hs.filled.push_back(f.tensor);
    std::string herr;
    std::string src = tune::harness_source(hs, herr);
    if (src.empty()) {
      err_ << "tilegen: error: tune: " << herr << "\n";
      return 1;
    }
    write_text(c.dir + "/harness.c", src);
    std::string sh;
    if (cuda) {
      std::string arch_flags = target->gpu.gencode;
      sh = "cd " + tune::shell_quote(c.dir) + " && for f in tgcand__*.cu; do " +
           tune::shell_quote(nvcc) + " -std=c++17 -O3 " + arch_flags;
      for (const auto& f : target->compile_flags)
        sh += " " + tune::shell_quote(f);
      sh += incs + " -I. -c \"$f\" || exit 1; done && " + cc + " -std=gnu11 -O2" + incs +
            " -I" + tune::shell_quote(cuda_include) + " -I. -c " +
            dispatch::dispatch_file_name("tgcand") + " && " + cc + " -std=gnu11 -O2" + incs +
            " -I" + tune::shell_quote(cuda_include) + " -I. -I" + tune::shell_quote(ip.ref_dir) +
            " -c harness.c && " + tune::shell_quote(nvcc) + " -o harness *.o " +
            tune::shell_quote(ip.ref_dir) + "/*.o" + rt_objs + " -Xcompiler -fopenmp -lm -ldl";
    } else {
      sh = compile_c(c.dir, *target, "tgcand") + " && " + cc + " -std=gnu11 -O2" + incs +
           " -I. -I" + tune::shell_quote(ip.ref_dir) + " -c harness.c && " + cc +
           " -fopenmp -o harness *.o " + tune::shell_quote(ip.ref_dir) + "/*.o" + rt_objs +
           " -lm -lpthread";
    }
    cmds.push_back({sh, c.dir + "/build.log"});
    what.push_back("compiled " + ip.inst.name + " " + tune::config_string(k, c.values));
    cand_of_cmd.push_back(ci);
  }

  // ---- compile (in parallel; the runtime and the references first) --------------------------
  const bool tty = isatty(STDERR_FILENO) != 0;
  size_t runs_planned = 0;
  for (const auto& c : cands)
    runs_planned += c.rejected.empty() ? 1 : 0;
  tune::Progress progress(err_, tty, cmds.size() + runs_planned);
  std::vector<tune::Command> first(cmds.begin(), cmds.begin() + first_cand_cmd);
  std::string fatal;
  tune::run_parallel(first, jobs, [&](size_t i, int rc) {
    progress.step(what[i]);
    if (rc != 0 && fatal.empty())
      fatal = what[i] + " failed (exit " + std::to_string(rc) + "):\n" +
              tune::read_head(first[i].log, 30);
  });
  if (!fatal.empty()) {
    progress.finish();
    err_ << "tilegen: error: tune: " << fatal;
    return 1;
  }
  std::vector<tune::Command> rest(cmds.begin() + first_cand_cmd, cmds.end());
  tune::run_parallel(rest, jobs, [&](size_t i, int rc) {
    Candidate& c = cands[cand_of_cmd[i]];
    progress.step(what[first_cand_cmd + i] + (rc ? " (failed)" : ""));
    if (rc != 0) {
      std::string log = tune::read_head(rest[i].log, 12);
      c.rejected = "compile failed (exit " + std::to_string(rc) + "; " + rest[i].log + "):\n" + log;
      progress.skip(); // it will not run
    }
  });

  // ---- verify and time (one at a time) -------------------------------------------------------
  auto run_harness = [&](Candidate& c, const std::vector<size_t>& shapes, bool verify,
                         std::map<size_t, double>& medians, std::string& why) {
    std::string list;
    for (size_t s : shapes) {
      if (!list.empty())
        list += ',';
      list += std::to_string(s);
    }
    std::string out;
    int rc = tune::run_capture("cd " + tune::shell_quote(c.dir) + " && ./harness " +
                                   (verify ? "verify " : "time ") + std::to_string(runs) + " " +
                                   std::to_string(warmup) + " " + list,
                               out);
    bool ok = parse_harness(out, medians, why);
    if (ok && rc != 0) {
      why = "the harness exited with " + std::to_string(rc) + ": " + out;
      ok = false;
    }
    for (size_t s : shapes)
      if (ok && !medians.count(s)) {
        why = "no result for shape " + std::to_string(s) + ": " + out;
        ok = false;
      }
    while (!why.empty() && why.back() == '\n')
      why.pop_back();
    return ok;
  };
  for (size_t ci = 0; ci < cands.size(); ++ci) {
    Candidate& c = cands[ci];
    if (!c.rejected.empty())
      continue;
    const InstancePlan& ip = plans[c.inst];
    std::vector<size_t> shapes;
    for (const auto& cp : ip.classes)
      if (const auto m = tune::class_members(cp); std::find(m.begin(), m.end(), ci) != m.end())
        for (size_t s : cp.shapes)
          if (std::find(shapes.begin(), shapes.end(), s) == shapes.end())
            shapes.push_back(s);
    std::sort(shapes.begin(), shapes.end());
    std::string why;
    if (!run_harness(c, shapes, true, c.median_us, why))
      c.rejected = why;
    progress.step("ran " + ip.inst.name + " " + tune::config_string(*ip.kernel, c.values) +
                  (c.rejected.empty() ? "" : " (rejected)"));
  }

  // ---- the choice rule (docs/tune.md "Choosing") --------------------------------------------
  std::vector<tune::TuningEntry> tuned;
  bool any_failed = false;
  for (auto& ip : plans) {
    const ir::Kernel& k = *ip.kernel;
    for (auto& cp : ip.classes) {
      // --keep-baseline: the class's first baseline joins the choice as its incumbent
      const bool keep = o.keep_baseline && !cp.baseline.empty();
      const std::vector<size_t> order = keep ? tune::class_members(cp) : cp.ranked;
      std::optional<size_t> kept;
      if (keep)
        kept = static_cast<size_t>(std::find(order.begin(), order.end(), cp.baseline.front()) -
                                   order.begin());
      std::vector<std::optional<double>> times;
      for (size_t ci : order)
        times.push_back(cands[ci].rejected.empty()
                            ? std::optional<double>(geomean(cands[ci], cp.shapes))
                            : std::nullopt);
      tune::FirstRound first = tune::first_round(times, margin, kept);
      cp.why = first.why;
      if (!first.incumbent) {
        any_failed = true;
        continue;
      }
      const size_t inc = order[*first.incumbent];
      cp.chosen = inc;
      if (first.challenger) {
        // Confirm: both again, the incumbent first, at the class's shapes.
        const size_t best = order[*first.challenger];
        Candidate ti = cands[inc], tb = cands[best];
        std::string why;
        bool ran = run_harness(ti, cp.shapes, false, ti.median_us, why) &&
                   run_harness(tb, cp.shapes, false, tb.median_us, why);
        if (ran) {
          cp.confirm_us[inc] = geomean(ti, cp.shapes);
          cp.confirm_us[best] = geomean(tb, cp.shapes);
        }
        if (ran && tune::confirmed(cp.confirm_us[inc], cp.confirm_us[best], margin)) {
          cp.chosen = best;
          cp.why = "faster than " + first.incumbent_name + " by more than " + fixed(margin, 1) +
                   "% in both measurements";
        } else {
          cp.why = first.incumbent_name + "; the faster rank " +
                   std::to_string(*first.challenger + 1) + " was not confirmed" +
                   (ran ? "" : " (" + why + ")");
        }
      }
      tune::TuningEntry e;
      e.key = {k.name, ip.inst.name, target->name, cp.name};
      e.spec_hash = tune::spec_hash(k);
      for (size_t i = 0; i < k.tile_consts.size(); ++i)
        e.config.emplace_back(k.tile_consts[i].var->name, cands[*cp.chosen].values[i]);
      for (size_t s : cp.shapes)
        e.shapes.push_back(ip.shape_names[s]);
      tuned.push_back(std::move(e));
    }
  }
  progress.finish();

  // ---- the table, the report, the database --------------------------------------------------
  size_t rejected = 0;
  for (const auto& c : cands)
    rejected += c.rejected.empty() ? 0 : 1;
  tune::print_tables(out_, plans, cands, target->name);
  const std::string report = tune::report_json(plans, cands, target->name, runs, warmup, margin);
  tune::TuningDb db = tune::merge_tuning_db(old_db, tuned);
  std::vector<OutputFile> db_file{{o.db_out.substr(o.db_out.find_last_of('/') + 1),
                                   tune::write_tuning_db(db)}};
  std::string db_dir = o.db_out.find('/') == std::string::npos
                           ? "."
                           : o.db_out.substr(0, o.db_out.find_last_of('/'));
  WriteReport wr;
  std::string werr = write_files_atomically(db_dir.empty() ? "/" : db_dir, db_file, &wr);
  if (!werr.empty()) {
    err_ << "tilegen: error: cannot write the tuning database: " << werr << "\n";
    return 1;
  }
  if (!o.report.empty() && !write_text(o.report, report)) {
    err_ << "tilegen: error: cannot write the report '" << o.report << "'\n";
    return 1;
  }
  if (remove_work)
    std::system(("rm -rf " + tune::shell_quote(work)).c_str());
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  out_ << "tilegen tune: " << cands.size() << " configuration" << (cands.size() == 1 ? "" : "s")
       << " of " << plans.size() << " instance" << (plans.size() == 1 ? "" : "s") << ", "
       << rejected << " rejected; " << tuned.size() << " entr" << (tuned.size() == 1 ? "y" : "ies")
       << " written to " << o.db_out << " (" << db.entries.size() - tuned.size()
       << " kept) in " << fixed(secs, 1) << " s\n";
  return any_failed ? 1 : 0;
}

} // namespace tilegen::tools
