#include "tune/TuneRun.h"

#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <ostream>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace tilegen::tune {

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void run_parallel(const std::vector<Command>& cmds, int jobs,
                  const std::function<void(size_t, int)>& done) {
  std::map<pid_t, size_t> running;
  size_t next = 0;
  auto start = [&](size_t i) {
    std::string line = "exec >" + shell_quote(cmds[i].log) + " 2>&1; " + cmds[i].shell;
    const char* argv[] = {"/bin/sh", "-c", line.c_str(), nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, "/bin/sh", nullptr, nullptr, const_cast<char**>(argv), environ) != 0) {
      done(i, 127);
      return;
    }
    running[pid] = i;
  };
  while (next < cmds.size() || !running.empty()) {
    while (next < cmds.size() && running.size() < static_cast<size_t>(jobs < 1 ? 1 : jobs))
      start(next++);
    if (running.empty())
      continue;
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    auto it = running.find(pid);
    if (it == running.end())
      continue; // not ours (never happens: tilegen starts no other children)
    size_t i = it->second;
    running.erase(it);
    done(i, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
}

int run_capture(const std::string& shell, std::string& out) {
  out.clear();
  FILE* p = popen((shell + " 2>&1").c_str(), "r");
  if (!p)
    return 127;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    out.append(buf, n);
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string read_head(const std::string& path, size_t max_lines) {
  std::ifstream in(path);
  std::string line, out;
  for (size_t i = 0; i < max_lines && std::getline(in, line); ++i)
    out += "    " + line + "\n";
  return out;
}

namespace {

std::string clock_str(double seconds) {
  long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

} // namespace

Progress::Progress(std::ostream& err, bool tty, size_t total)
    : err_(err), tty_(tty), total_(total), start_(std::chrono::steady_clock::now()) {}

void Progress::step(const std::string& what) {
  ++done_;
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double eta = done_ ? elapsed / done_ * (total_ > done_ ? total_ - done_ : 0) : 0;
  std::string count = std::to_string(done_) + "/" + std::to_string(total_);
  std::string tail = " (elapsed " + clock_str(elapsed) + ", ETA " + clock_str(eta) + ")";
  if (tty_) {
    const size_t width = 30;
    size_t filled = total_ ? done_ * width / total_ : width;
    std::string bar(filled, '#');
    bar.resize(width, '.');
    std::string text = "[" + bar + "] " + count + " " + what;
    if (text.size() > 90)
      text = text.substr(0, 87) + "...";
    err_ << "\r\033[K" << text << tail << std::flush;
  } else {
    err_ << "tilegen tune: [" << count << "] " << what << tail << "\n";
  }
}

void Progress::finish() {
  if (tty_)
    err_ << "\n";
  err_ << std::flush;
}

} // namespace tilegen::tune
