// Driver: what each `tilegen` command does, independent of argument parsing (tilegen.cpp) so
// that tests can call it. Every command returns the process exit code:
//   0 ok, 1 user error (diagnostics printed), 2 usage error; internal errors are exceptions
//   (InternalError), turned into exit code 70 by main().
// `generate` builds every output in memory first and writes only if there was no error, so a
// failed run leaves the output folder exactly as it was (docs/cli.md).
#pragma once

#include "ir/IR.h"
#include "passes/Pipeline.h"
#include "passes/TileRecommend.h"
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
  bool wgsl_fits(const ir::Kernel& k, const ir::Kernel& instantiated, const Target& t,
                 FailedPairs& failed);

  std::ostream& out_;
  std::ostream& err_;
  DiagEngine diag_;
  // class_plan's recommendations, by (kernel, instance, target), for instantiate_once: the
  // recommender runs once per instance and target, not once more per class variant.
  std::map<std::tuple<const ir::Kernel*, std::string, std::string>,
           std::shared_ptr<const passes::Recommendation>> recommendations_;
};

} // namespace tilegen::tools
