// tilegen: the command-line tool. Parses arguments into tools::Options and runs one Driver
// command. Exit codes: 0 ok, 1 user error, 2 usage error, 70 internal error. main() catches
// everything: a bug prints "internal error: ..." and the command that reproduces it.
#include "support/InternalError.h"
#include "tools/Driver.h"

#include <algorithm>
#include <pthread.h>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

using tilegen::tools::Driver;
using tilegen::tools::Options;

namespace {

const char* kVersion = "0.1.0";

const char* kMainHelp =
    R"(tilegen: ahead-of-time tile-kernel generator (YAML specs -> C sources + dispatch library)

usage: tilegen <command> [options] [SPEC...]

commands:
  generate     write <lib>.h, <lib>_dispatch.c and one .c file per variant
  check        validate specs (parse, lower, instantiate for the targets); write nothing
  dump         print the IR of a spec (--stage=ir|instantiated), or the tile ranking (recommend)
  kernels      list the kernels of specs: type bindings, instances, public functions
  targets      list the targets tilegen knows
  outputs      print the names of the files `generate` would write (used by CMake)
  target-flags print the compiler flags of a target's variant sources, one per line
  explain      draw an instance on a target: fragment layouts, swizzles, pipeline (HTML/SVG)
  tune         time every eligible configuration on this machine, write a tuning database
  help         show help for a command: tilegen help generate

exit codes: 0 ok, 1 errors in a spec (printed as file:line:col), 2 bad command line,
            70 internal error (a bug in tilegen; please report it with the printed command)
See docs/cli.md.
)";

const std::map<std::string, std::string> kCommandHelp = {
    {"generate", R"(usage: tilegen generate --lib NAME --targets T1,T2,... --out DIR [--torch] [--tuning-db FILE] [-v] SPEC...

Writes into DIR:
  NAME.h                             the C API: one function (and a _query twin) per kernel
                                     and type binding
  NAME_dispatch.c                    argument checks, variant table, run-time selection
  NAME__<kernel>__<inst>__<target>.c one variant: tgv_NAME__<kernel>__<inst>__<target>()
Everything is generated in memory first: on any error nothing is written. Files whose
contents did not change are not rewritten (their mtime is kept); files of library NAME from an
earlier run that are no longer produced are removed if they carry tilegen's marker line.
Output is deterministic (byte-identical across runs).

options:
  --lib NAME        library name: a C identifier (prefixes every symbol and file; docs/cli.md)
  --targets LIST    comma-separated targets (see `tilegen targets`), e.g. c,c_avx2,c_avx512
  --out DIR         output folder (created if missing)
  --torch           also write NAME_torch.cpp: PyTorch operators torch.ops.NAME.<kernel> over
                    the C API (docs/torch.md; add_tile_kernels(NAME ... TORCH) builds it)
  --tuning-db FILE  take the configurations of FILE's current entries (written by
                    `tilegen tune`) instead of the schedule rule's; stale entries are warned
                    about and ignored (docs/tune.md)
  -v, --verbose     say which files were written, kept and removed
)"},
    {"check", R"(usage: tilegen check [--targets T1,T2,...] [--lib NAME] [--tuning-db FILE] SPEC...

Parses, checks and instantiates every kernel of every SPEC for the targets (default: every
target of `tilegen targets`, so that the rules of the GPU targets show here, not first in a
GPU build) without writing anything. Exit 0 if all is well, 1 after printing the errors.
)"},
    {"dump", R"(usage: tilegen dump --stage=ir|instantiated|recommend [--target=T] [--instance=NAME] [--locs] SPEC...

  --stage=ir            the IR after the front end (one kernel per type binding)
  --stage=instantiated  after instantiation for --target (default c): tile constants chosen,
                        flags and value params bound, legalized for the target
  --stage=recommend     GPU targets: every configuration's shared memory, registers and the
                        analytic model's numbers per shape class, best first (docs/recommend.md)
  --instance=NAME       only this instance (e.g. f32, bf16_causal1_D128); default all
  --locs                append the spec location of each statement
)"},
    {"kernels", R"(usage: tilegen kernels [--lib NAME] SPEC...

Lists each kernel: type bindings, instances and the public C functions (with --lib, their
real names; otherwise <lib>_...).
)"},
    {"targets", R"(usage: tilegen targets

Lists the targets: backend, selection preference, the CPU features a variant needs at run time,
the compiler flags of its sources and a summary.
)"},
    {"outputs", R"(usage: tilegen outputs --lib NAME --targets T1,... [--format=names|cmake] [--torch] [--tuning-db FILE] SPEC...

Prints the names of the files `tilegen generate` would write with the same arguments, one per
line. --format=cmake prints records for CMake: `header F`, `source F`, `variant TARGET F` and
`flags TARGET FLAG...` (with --torch also `torch NAME_torch.cpp`). Needs only the front end
(no instantiation).
)"},
    {"explain", R"(usage: tilegen explain --target T [--instance NAME] [--format html|svg] [--out FILE] SPEC

Draws what the generator decided for one instance of SPEC's kernel on target T (the variant of
the shape class "large"): the fragment layout of each gemm's operands and accumulator (which
thread, lane and register holds each element), each shared buffer's swizzle as a bank map with
the accesses that use it and their bank conflicts, the main loop's pipeline as a timeline, and
the chosen configuration beside the tile recommender's ranking. Self-contained HTML (default)
or one SVG, deterministic; on standard output unless --out.

options:
  --target T        the target (see `tilegen targets`)
  --instance NAME   the instance (e.g. bf16); default the spec's first
  --format FMT      html (default) or svg
  --out FILE        write FILE (whole or not at all) instead of standard output
See docs/explain.md.
)"},
    {"tune", R"(usage: tilegen tune --target T --db FILE [options] SPEC

For each instance of SPEC's kernel and each shape class (GPU targets: schedule.classes and
"large"; C targets: "large"), builds one library per eligible configuration (the candidates
the schedule rule ranks), compiles it (C targets: the host C compiler; CUDA targets: nvcc and
the host C compiler), links it to a generated harness that fills the inputs deterministically,
checks the outputs against the portable `c` variant and times it at the class's representative
shape and the --shape shapes that fall in the class. Per class, the rule's first choice stays
unless another configuration is faster by more than the margin twice (docs/tune.md). Writes
the chosen configurations into FILE (merged: other entries are kept) and prints a table.

options:
  --target T          the target to tune (C and CUDA targets)
  --db FILE           the tuning database to write (read first if it exists)
  --list              print the plan instead: per instance and class the spec hash, the
                      shapes and the candidates in the rule's order; compile nothing
  --instance NAME     only this instance (default: every instance)
  --shape D=V,...     also time at this shape (every runtime dim; repeatable)
  --scalar NAME=V     value of a scalar argument (default 0.5 for floats, 1 for integers)
  --fill TENSOR=EXPR  the values of an integer tensor: EXPR over the dims, value params and
                      the element's index i0, i1, ... (e.g. 'table=(i0 * MP + i1) % NP');
                      required for tensors the kernel reads indices from (repeatable)
  --class NAME        only this shape class (repeatable; default: every class)
  --top N             per class, only the rule's first N eligible configurations
  --baseline [CLASS:]NAME=V,...
                      also time this configuration (in CLASS, or in every class where it
                      is eligible) as a reference, e.g. what a spec pinned before; never
                      chosen (but see --keep-baseline); the table gives every time as a
                      ratio to it (repeatable)
  --keep-baseline     a class's (first) baseline takes part in the choice as its incumbent:
                      the database keeps it unless another configuration is faster by more
                      than the margin twice (for replacing a spec's pins with a database)
  --report FILE       also write the measured times and rejections (JSON)
  -j N                parallel compiles (default: the number of CPUs)
  --runs N            timed runs per measurement, median taken (default 5)
  --warmup N          untimed runs first (default 2)
  --margin PERCENT    how much faster another configuration must be (default 5)
  --cc CC, --nvcc NVCC  the compilers (default: $CC or cc; nvcc on PATH)
  --runtime DIR       tilegen's runtime sources (include/, src/; default: this tilegen's)
  --work DIR          build in DIR and keep it (default: a temporary folder, removed)
See docs/tune.md.
)"},
    {"target-flags", R"(usage: tilegen target-flags TARGET

Prints the compiler flags for the variant sources of TARGET, one per line.
)"},
};

int usage_error(const std::string& msg, const std::string& command) {
  std::cerr << "tilegen: error: " << msg << "\n";
  std::cerr << "run 'tilegen help" << (command.empty() ? "" : " " + command)
            << "' for usage\n";
  return 2;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos)
      end = s.size();
    std::string item = s.substr(start, end - start);
    if (!item.empty())
      out.push_back(item);
    start = end + 1;
  }
  return out;
}

int run(int argc, char** argv) {
  if (argc < 2)
    return usage_error("no command given", "");
  std::string cmd = argv[1];
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    if (cmd == "help" && argc > 2) {
      auto it = kCommandHelp.find(argv[2]);
      if (it == kCommandHelp.end())
        return usage_error(std::string("unknown command '") + argv[2] + "'", "");
      std::cout << it->second;
      return 0;
    }
    std::cout << kMainHelp;
    return 0;
  }
  if (cmd == "--version") {
    std::cout << "tilegen " << kVersion << "\n";
    return 0;
  }
  if (!kCommandHelp.count(cmd))
    return usage_error("unknown command '" + cmd + "'", "");

  // Options take a value as --opt=value or --opt value.
  static const std::vector<std::string> with_value = {"--lib",   "--targets",  "--out",
                                                      "--stage", "--target",   "--instance",
                                                      "--format", "--tuning-db", "--shape",
                                                      "--scalar", "--db", "--report", "--nvcc",
                                                      "--cc", "--runtime", "--work", "-j",
                                                      "--runs", "--warmup", "--margin",
                                                      "--top", "--baseline", "--class", "--fill"};
  Options o;
  std::vector<std::string> positional;
  bool only_positional = false;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (only_positional || a.empty() || a[0] != '-' || a == "-") {
      positional.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positional = true;
      continue;
    }
    if (a == "--help" || a == "-h") {
      std::cout << kCommandHelp.at(cmd);
      return 0;
    }
    if (a == "-v" || a == "--verbose") {
      o.verbose = true;
      continue;
    }
    if (a == "--torch" && (cmd == "generate" || cmd == "outputs")) {
      o.torch = true;
      continue;
    }
    if (a == "--list" && cmd == "tune") {
      o.list = true;
      continue;
    }
    if (a == "--keep-baseline" && cmd == "tune") {
      o.keep_baseline = true;
      continue;
    }
    if (a == "--locs") {
      o.show_locs = true;
      continue;
    }
    std::string key = a, value;
    bool has_value = false;
    size_t eq = a.find('=');
    if (cmd == "tune" && a.size() > 2 && a.compare(0, 2, "-j") == 0 && a[2] != '=') {
      key = "-j"; // -j8, as make and ninja spell it
      value = a.substr(2);
      has_value = true;
    } else if (eq != std::string::npos) {
      key = a.substr(0, eq);
      value = a.substr(eq + 1);
      has_value = true;
    }
    if (std::find(with_value.begin(), with_value.end(), key) == with_value.end())
      return usage_error("unknown option '" + key + "' for '" + cmd + "'", cmd);
    if (!has_value) {
      if (i + 1 >= argc)
        return usage_error("option " + key + " needs a value", cmd);
      value = argv[++i];
    }
    if (key == "--lib")
      o.lib = value;
    else if (key == "--targets")
      for (auto& t : split_commas(value))
        o.targets.push_back(t);
    else if (key == "--out")
      o.out_dir = value;
    else if (key == "--stage")
      o.stage = value;
    else if (key == "--target")
      o.target = value;
    else if (key == "--instance")
      o.instance = value;
    else if (key == "--format")
      o.format = value;
    else if (key == "--tuning-db" && (cmd == "generate" || cmd == "outputs" || cmd == "check"))
      o.tuning_db = value;
    else if (cmd != "tune")
      return usage_error("unknown option '" + key + "' for '" + cmd + "'", cmd);
    else if (key == "--shape")
      o.shapes.push_back(value);
    else if (key == "--scalar")
      o.scalars.push_back(value);
    else if (key == "--fill")
      o.fills.push_back(value);
    else if (key == "--db")
      o.db_out = value;
    else if (key == "--report")
      o.report = value;
    else if (key == "--nvcc")
      o.nvcc = value;
    else if (key == "--cc")
      o.cc = value;
    else if (key == "--runtime")
      o.runtime_dir = value;
    else if (key == "--work")
      o.work_dir = value;
    else if (key == "--baseline")
      o.baselines.push_back(value);
    else if (key == "--class")
      o.classes.push_back(value);
    else if (key == "-j" || key == "--runs" || key == "--warmup" || key == "--margin" ||
             key == "--top") {
      char* end = nullptr;
      double v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end || v < 0 || (key != "--margin" && v != static_cast<int>(v)) ||
          v > 1e6 || ((key == "-j" || key == "--runs" || key == "--top") && v < 1))
        return usage_error("option " + key + " needs a " +
                               (key == "--margin" ? "non-negative number" : "positive integer") +
                               " (got '" + value + "')",
                           cmd);
      if (key == "-j")
        o.jobs = static_cast<int>(v);
      else if (key == "--runs")
        o.runs = static_cast<int>(v);
      else if (key == "--warmup")
        o.warmup = static_cast<int>(v);
      else if (key == "--top")
        o.top = static_cast<int>(v);
      else
        o.margin = v;
    }
  }
  o.specs = positional;

  Driver driver(std::cout, std::cerr);
  if (cmd == "generate")
    return driver.generate(o);
  if (cmd == "check")
    return driver.check(o);
  if (cmd == "dump")
    return driver.dump(o);
  if (cmd == "kernels")
    return driver.kernels(o);
  if (cmd == "outputs")
    return driver.outputs(o);
  if (cmd == "explain")
    return driver.explain(o);
  if (cmd == "tune")
    return driver.tune(o);
  if (cmd == "targets") {
    if (!positional.empty())
      return usage_error("'targets' takes no arguments", cmd);
    return driver.targets();
  }
  // target-flags
  if (positional.size() != 1)
    return usage_error("'target-flags' takes exactly one target", cmd);
  return driver.target_flags(positional[0]);
}

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    bool quote = a.empty() || a.find_first_of(" \t\"'$\\") != std::string::npos;
    if (i > 0)
      s.push_back(' ');
    if (quote)
      s.push_back('\'');
    s.append(a);
    if (quote)
      s.push_back('\'');
  }
  return s;
}

int internal(const std::string& what, int argc, char** argv) {
  std::cout.flush();
  std::cerr << "internal error: " << what << "\n"
            << "This is a bug in tilegen " << kVersion << ", not in your spec. To reproduce:\n"
            << "  " << command_line(argc, argv) << "\n"
            << "Please report it with the spec files named there.\n";
  return 70;
}

// Runs the command and maps every exception to its exit code (70 for anything that is not a
// diagnosed user error).
int guarded(int argc, char** argv) {
  try {
    int rc = run(argc, argv);
    std::cout.flush();
    if (!std::cout) // e.g. `tilegen outputs > /full/disk`: a silent truncation would be worse
      return std::cerr << "tilegen: error: cannot write to standard output\n", 1;
    return rc;
  } catch (const tilegen::InternalError& e) {
    return internal(e.what(), argc, argv);
  } catch (const std::bad_alloc&) {
    return internal("out of memory", argc, argv);
  } catch (const std::exception& e) {
    return internal(std::string("unexpected exception: ") + e.what(), argc, argv);
  } catch (...) {
    return internal("unknown exception", argc, argv);
  }
}

// The passes recurse over expression trees, whose height a spec bounds only through the
// length of an expression (a chain of 8000 additions is one nesting level, docs/spec.md
// "Limits"): the command runs on a thread with a stack far larger than any spec needs, so that
// no accepted spec can overflow it. Reserved address space, not memory.
constexpr size_t kStackBytes = size_t(512) << 20;

struct Call {
  int argc;
  char** argv;
  int rc;
};

void* call_guarded(void* p) {
  auto* c = static_cast<Call*>(p);
  c->rc = guarded(c->argc, c->argv);
  return nullptr;
}

} // namespace

int main(int argc, char** argv) {
  Call call{argc, argv, 70};
  pthread_attr_t attr;
  pthread_t thread;
  if (pthread_attr_init(&attr) == 0 && pthread_attr_setstacksize(&attr, kStackBytes) == 0 &&
      pthread_create(&thread, &attr, call_guarded, &call) == 0) {
    pthread_join(thread, nullptr);
    pthread_attr_destroy(&attr);
    return call.rc;
  }
  return guarded(argc, argv); // no thread (a tiny address space): the main thread's stack
}
