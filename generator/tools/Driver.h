// Driver: what each `tilegen` command does, independent of argument parsing (tilegen.cpp) so
// that tests can call it. Every command returns the process exit code:
//   0 ok, 1 user error (diagnostics printed), 2 usage error; internal errors are exceptions
//   (InternalError), turned into exit code 70 by main().
// `generate` builds every output in memory first and writes only if there was no error, so a
// failed run leaves the output folder exactly as it was (docs/cli.md).
#pragma once

#include "ir/IR.h"
#include "passes/Pipeline.h"
#include "passes/ScheduleResolver.h"
#include "passes/TileRecommend.h"
#include "tune/TuningDb.h"
#include "support/AtomicFile.h"
#include "support/Diagnostics.h"
#include "targets/Target.h"

#include <iosfwd>
#include <map>
#include <memory>
#include <tuple>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tilegen::tools {

struct Options {
  std::string lib;                  // --lib
  std::vector<std::string> targets; // --targets (names, validated by the driver)
  std::string out_dir;              // --out (explain: the file to write)
  std::vector<std::string> specs;   // positional
  std::string stage;                // dump --stage: ir | instantiated
  std::string target;               // dump --target (default c)
  std::string instance;             // dump --instance (default: all)
  std::string format;               // outputs --format: names | cmake; explain: html | svg
  bool verbose = false;             // generate -v: say what was written
  bool torch = false;               // generate/outputs --torch: also <lib>_torch.cpp (PyTorch ops)
  bool show_locs = false;           // dump --locs
  std::string tuning_db;            // generate/outputs/check --tuning-db FILE (docs/tune.md)
  // tune: the options of `tilegen tune` (docs/tune.md)
  std::vector<std::string> shapes;  // --shape NAME=V,... (repeatable)
  std::vector<std::string> scalars; // --scalar NAME=V (repeatable)
  std::vector<std::string> fills;   // --fill TENSOR=EXPR (repeatable; tune/TuneFill)
  std::string db_out;               // --db FILE (read if it exists, merged, written)
  std::string report;               // --report FILE
  std::string nvcc, cc;             // --nvcc, --cc
  std::string runtime_dir;          // --runtime DIR (the runtime sources: include/, src/)
  std::string work_dir;             // --work DIR (kept; default a temporary folder, removed)
  int jobs = 0;                     // -j N (0: the number of CPUs)
  int runs = 0, warmup = -1;        // --runs N, --warmup N
  double margin = -1;               // --margin PERCENT
  bool list = false;                // --list: print the plan (hash, shapes, candidates), run nothing
  std::vector<std::string> classes;   // --class NAME: only these shape classes (repeatable)
  int top = 0;                      // --top N: per class, only the rule's first N (0: all)
  std::vector<std::string> baselines; // --baseline [CLASS:]NAME=V,... (timed, never chosen)
  bool keep_baseline = false;         // --keep-baseline: a class's baseline is the incumbent
  // Internal (tilegen tune): build only this instance of each kernel, and take these
  // configurations, keyed by TuningKey::str(), instead of the rule's.
  std::string only_instance;
  std::map<std::string, std::vector<int64_t>> forced;
};

// One spec file after the front end: its type-bound kernels and their instances.
struct LoadedKernel {
  ir::Kernel kernel;
  std::vector<passes::Instance> instances;
};
struct LoadedSpec {
  std::string path;
  std::vector<LoadedKernel> kernels;
};

class Driver {
public:
  Driver(std::ostream& out, std::ostream& err);

  int generate(const Options& o);
  int check(const Options& o);
  int dump(const Options& o);
  int targets();
  int kernels(const Options& o);
  int outputs(const Options& o);
  int target_flags(const std::string& target);
  // DriverExplain.cpp: pictures of one instance on one target (docs/explain.md).
  int explain(const Options& o);
  // DriverTune.cpp: time every eligible configuration and write a tuning database.
  int tune(const Options& o);

  // Exposed for tests: the in-memory result of `generate` (nullopt after user errors).
  std::optional<std::vector<OutputFile>> build_outputs(const Options& o);

private:
  // Usage checks shared by the commands; print "tilegen: error: ..." and return false.
  bool resolve_targets(const Options& o, std::vector<const Target*>& out, bool default_all);
  bool check_library_name(const std::string& lib);
  bool require_specs(const Options& o);

  // Front end over all specs, plus the library-wide checks (duplicate public names, names
  // that would clash in generated C). nullopt after user errors.
  std::optional<std::vector<LoadedSpec>> load(const std::vector<std::string>& specs,
                                              const std::string& lib);

  // The library-wide name checks of load() (DriverNames.cpp): every symbol, macro and file the
  // library would define is unique (file names also ignoring letter case) and not too long,
  // and no spec name that becomes a parameter of the dispatch functions equals a file-scope
  // name of the dispatch source or the header. Reports located errors.
  void check_library_names(const std::vector<LoadedSpec>& loaded, const std::string& lib);

  using FailedPairs = std::set<std::pair<std::string, std::string>>; // (kernel, target)
  std::optional<ir::Kernel> instantiate_once(const ir::Kernel& k, const passes::Instance& inst,
                                             const Target& t, FailedPairs& failed,
                                             const std::string& shape_class = "large");
  // The variants of one instance on one target, as the class whose variant each shape class
  // runs, in class order (declared classes, then "large"): on GPU targets of kernels with
  // schedule.classes, one passes::recommend call; classes whose choices coincide share the
  // variant of "large" if it is among them, else of the first of them. Elsewhere {"large"}.
  // nullopt after reporting an error (once per kernel and target, like instantiate_once).
  std::optional<std::vector<std::string>> class_plan(const ir::Kernel& k,
                                                     const passes::Instance& inst,
                                                     const Target& t, FailedPairs& failed);
  // The configuration of (k, inst, t, shape_class) that replaces the rule's: Options::forced,
  // else a current --tuning-db entry (a stale one is a warning at the entry, once).
  const passes::TunedConfig* tuned_for(const ir::Kernel& k, const passes::Instance& inst,
                                       const Target& t, const std::string& shape_class);
  // --tuning-db: read once per command; false after a located error.
  bool load_tuning_db(const Options& o);
  // Warnings for entries of kernels and targets of this run that no variant asked for.
  void warn_unused_entries(const std::vector<LoadedSpec>& loaded,
                           const std::vector<const Target*>& targets);
  // WGSL and Metal variants: the instantiated kernel's layout fits the target (workgroup or
  // threadgroup memory, invocations, storage buffers). When the schedule rule's choice does not
  // (its footprint counts tiles, not how the backend places them), the next configurations of
  // the rule's order are tried and the first that fits replaces `ik`; a tuning database's
  // entry is kept as it is. false after reporting the first problem (once per kernel and target).
  // The first configuration after the rule's choice, in the rule's order, that instantiates on
  // the WGSL or Metal target `t` (and, with `check_layout`, whose layout fits it), its variant's
  // note naming `why` the first choice did not; nullopt if none does. Prints nothing but the
  // taken configuration's warnings.
  std::optional<ir::Kernel> next_fitting(const ir::Kernel& k, const passes::Instance& inst,
                                         const Target& t, const std::string& shape_class,
                                         const passes::Recommendation* rec,
                                         const std::string& why, bool check_layout);
  bool wgsl_fits(const ir::Kernel& k, const passes::Instance& inst, const std::string& shape_class,
                 std::optional<ir::Kernel>& ik, const Target& t, FailedPairs& failed);
  // A thread count written as a number in the spec (`threads: 100`) that GPU targets cannot
  // run (not whole warps or waves; not a power of two up to 256 on WGSL): one error at the
  // count for all of them, naming the targets and a count they all run, and those (kernel,
  // target) pairs marked failed, instead of one error at `kernel:` per target. Counts from
  // schedule constants are checked per configuration by the recommender, as before.
  void check_thread_count(const ir::Kernel& k, const std::vector<const Target*>& targets,
                          FailedPairs& failed);

  std::ostream& out_;
  std::ostream& err_;
  DiagEngine diag_;
  // class_plan's recommendations, by (kernel, instance, target), for instantiate_once: the
  // recommender runs once per instance and target, not once more per class variant.
  std::map<std::tuple<const ir::Kernel*, std::string, std::string>,
           std::shared_ptr<const passes::Recommendation>> recommendations_;
  std::optional<tune::TuningDb> tuning_db_;
  std::string tuning_db_path_;
  const std::map<std::string, std::vector<int64_t>>* forced_ = nullptr;
  std::map<std::string, std::unique_ptr<passes::TunedConfig>> tuned_; // by TuningKey::str()
  std::set<std::string> asked_; // keys tuned_for was asked about
};

} // namespace tilegen::tools
