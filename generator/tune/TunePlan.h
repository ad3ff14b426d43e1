// TunePlan: what `tilegen tune` (tools/DriverTune.cpp) knows about its work, and the pure
// functions over it: the harness's output parsed, a configuration's time over a class's
// shapes, the table it prints and the JSON report (docs/tune.md).
#pragma once

#include "ir/IR.h"
#include "passes/Pipeline.h"

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilegen::tune {

// One configuration of one instance: generated and compiled once, timed at the shapes of the
// classes it is eligible for.
struct Candidate {
  size_t inst = 0;              // index into the InstancePlan list
  std::vector<int64_t> values;
  std::string dir;
  std::string rejected;         // why it cannot be chosen ("" while it can)
  std::map<size_t, double> median_us; // shape index -> median of the runs
};

struct ClassPlan {
  std::string name;
  std::vector<size_t> shapes;  // indices into InstancePlan::shapes
  std::vector<size_t> ranked;  // candidate indices, the rule's order (--top: its first N)
  std::vector<size_t> baseline; // --baseline: references timed with the class, never chosen
                                // unless also in `ranked`
  std::optional<size_t> chosen;
  std::string why;             // the choice rule's verdict, for the table and the report
  std::map<size_t, double> confirm_us; // candidate -> geometric mean of the confirmation
};

struct InstancePlan {
  const ir::Kernel* kernel = nullptr; // type-bound
  passes::Instance inst;
  std::vector<std::vector<int64_t>> shapes; // runtime dims, declaration order
  std::vector<std::string> shape_names;     // "M=64 N=256"
  std::vector<ClassPlan> classes;
  // every class of the kernel (--class or not) -> the configurations it may take
  std::map<std::string, std::vector<std::vector<int64_t>>> eligible;
  std::string ref_dir;
};

// The candidates a class times: `ranked`, then the baselines not in it.
std::vector<size_t> class_members(const ClassPlan& cp);

// The names of a class's shapes ("M=64 N=256"), in its order.
std::vector<std::string> class_shape_names(const InstancePlan& ip, const ClassPlan& cp);

// The geometric mean over `shapes` of the medians of `c`.
double geomean(const Candidate& c, const std::vector<size_t>& shapes);

// The harness's output (tune/TuneHarness.h): per shape line, the median of its times into
// `medians`; false, with the line in `why`, at the first shape that did not pass.
bool parse_harness(const std::string& out, std::map<size_t, double>& medians, std::string& why);

// `v` with `digits` decimals.
std::string fixed(double v, int digits);

// One table per class: rank, configuration, time (geometric mean, us), status; then the
// verdict of the choice rule.
void print_tables(std::ostream& out, const std::vector<InstancePlan>& plans,
                  const std::vector<Candidate>& cands, const std::string& target);

// The --report file: the measurements and rejections of every class.
std::string report_json(const std::vector<InstancePlan>& plans,
                        const std::vector<Candidate>& cands, const std::string& target, int runs,
                        int warmup, double margin);

} // namespace tilegen::tune
