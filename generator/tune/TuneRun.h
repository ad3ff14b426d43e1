// TuneRun: what `tilegen tune` needs from the operating system, kept apart from the logic:
// running shell commands (in parallel, each with its output in a log file), capturing a
// program's output, and the progress line with an ETA on standard error.
#pragma once

#include <chrono>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace tilegen::tune {

struct Command {
  std::string shell; // run by /bin/sh -c, output and errors into `log`
  std::string log;
};

// Runs `cmds` with at most `jobs` at a time; `done(i, exit_code)` is called as each finishes
// (in completion order; exit code 127 if it could not start).
void run_parallel(const std::vector<Command>& cmds, int jobs,
                  const std::function<void(size_t, int)>& done);

// Runs `shell` and returns its exit code; its standard output in `out` (errors go to
// `out` too).
int run_capture(const std::string& shell, std::string& out);

// Single-quoted for /bin/sh.
std::string shell_quote(const std::string& s);

// The first `max_lines` lines of a file, for messages.
std::string read_head(const std::string& path, size_t max_lines);

// "[#####.....] 12/40 compiled BM=2 BN=1024 (ETA 0:42)" redrawn in place when `err` is a
// terminal, else one plain line per step.
class Progress {
public:
  Progress(std::ostream& err, bool tty, size_t total);
  void step(const std::string& what); // one unit of work done
  void skip() { total_ -= total_ > done_ ? 1 : 0; } // a planned step will not happen
  void finish();

private:
  std::ostream& err_;
  bool tty_;
  size_t total_, done_ = 0;
  std::chrono::steady_clock::time_point start_;
};

} // namespace tilegen::tune
