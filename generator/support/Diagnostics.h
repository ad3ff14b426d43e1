// DiagEngine: the one way user errors are reported. Prints, in the clang style,
//
//   kernels/gemm.yaml:12:9: error: unknown buffer 'A_S'; did you mean 'A_s'?
//         - copy: {src: A_S, dst: acc}
//                       ^~~
//   kernels/gemm.yaml:9:7: note: 'A_s' declared here
//
// Sources are registered once (add_source) so that any location can show its line. Errors
// are counted; callers check has_errors() after each stage and stop before writing output.
#pragma once

#include "support/SourceLoc.h"

#include <iosfwd>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tilegen {

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity;
  SourceLoc loc;
  std::string message;
};

class DiagEngine {
public:
  explicit DiagEngine(std::ostream& out);

  // Registers a file's text; returns the shared file name to use in SourceLocs.
  std::shared_ptr<const std::string> add_source(const std::string& path, std::string text);

  void error(const SourceLoc& loc, const std::string& message);
  void warning(const SourceLoc& loc, const std::string& message);
  void note(const SourceLoc& loc, const std::string& message); // attaches to the last error

  int error_count() const { return errors_ + held_errors_; }
  bool has_errors() const { return error_count() > 0; }

  // The same error on several targets, printed once. Between begin_target_group(names) and
  // end_target_group(), diagnostics are held back; then the copies of an error that differ
  // only in the target's name (the "name: " that starts the message, 'name' in its notes) are
  // printed once, as "sm_80, sm_86, sm_89: ...", at the place of the first; the rest as they
  // came. Groups do not nest.
  void begin_target_group(std::vector<std::string> names);
  void end_target_group();
  // Stops reporting after this many errors (the rest are counted, not printed).
  void set_error_limit(int n) { limit_ = n; }

  const std::vector<Diagnostic>& diagnostics() const { return all_; } // for tests

private:
  void emit(Severity s, const SourceLoc& loc, const std::string& message);

  std::ostream& out_;
  std::map<std::string, std::string> sources_;
  std::vector<Diagnostic> all_;
  int errors_ = 0;
  int limit_ = 20;
  bool suppress_notes_ = false; // notes of an error past the limit (or repeated) are dropped too
  std::set<std::string> shown_; // location + message of every error reported
  bool grouping_ = false;       // inside begin_target_group .. end_target_group
  std::vector<std::string> group_names_;
  std::vector<Diagnostic> held_; // what the group holds back, in order
  int held_errors_ = 0;
};

// "did you mean 'x'?" helper: the closest candidate by edit distance, or "" if none is close.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);

} // namespace tilegen
