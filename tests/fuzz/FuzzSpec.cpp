// libFuzzer target: spec bytes -> the front end -> `tilegen check` and, where check accepts,
// `tilegen generate` in memory, for a C, a CUDA and a WGSL target (tests/fuzz/README.md).
//
// The input runs through the same Driver the CLI uses (tools/Driver.h), so every rule check and
// generate apply is exercised, as a user would meet it. The spec is handed over as an in-memory
// file (memfd_create + /proc/self/fd/N): nothing is written to disk.
//
// A finding aborts the process (libFuzzer then saves the input as crash-<sha1>):
//   - a crash or a sanitizer report (ASan, UBSan, LSan: the build's -fsanitize flags);
//   - an internal error (InternalError, or any other exception: the CLI's exit 70);
//   - a target for which `check` accepts the spec and `generate` rejects it.
// A user error (located diagnostic, exit 1) is the expected answer to most inputs.
//
// TILEGEN_FUZZ_KNOWN=tests/fuzz/known_findings.txt makes the internal errors and the
// generate-rejects findings listed there known: counted (printed at exit), not aborted on, so
// that a short run in CI goes on past a listed open bug. Crashes and sanitizer reports always
// abort (tests/fuzz/run_libfuzzer.py restarts past known ones).
#include "spec/Frontend.h"
#include "support/Diagnostics.h"
#include "support/InternalError.h"
#include "tools/Driver.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

// One row of each family the generator has: the C targets' budgets (c, c_avx512), the CUDA
// paths (sm_80 mma.sync, sm_86's smaller shared memory, sm_90 Hopper on the sm_80 path, sm_90a
// wgmma + TMA) and WGSL with and without its optional features. Each input runs on one C, one
// CUDA and one WGSL target, picked by a hash of its bytes (the same input always gets the same
// three): a check of a shipped kernel on a GPU target takes seconds under ASan, and three
// targets instead of eight more than double the inputs per second.
const std::vector<std::string> kCTargets = {"c", "c_avx512"};
const std::vector<std::string> kCudaTargets = {"sm_80", "sm_86", "sm_90", "sm_90a"};
const std::vector<std::string> kWgslTargets = {"wgsl", "wgsl_f16_subgroups"};

std::vector<std::string> targets_for(const std::string& text) {
  uint64_t h = 1469598103934665603ull; // FNV-1a
  for (unsigned char c : text)
    h = (h ^ c) * 1099511628211ull;
  return {kCTargets[h % 2], kCudaTargets[(h / 2) % 4], kWgslTargets[(h / 8) % 2]};
}

// Specs with more instances than this are skipped after the front end: value sets and flags
// multiply the instances, and an input that takes seconds slows the search more than it
// teaches it (the grammar fuzzer measures run time; docs/testing.md).
constexpr size_t kMaxInstances = 32;

// The known open findings of the classes this process can recognize by their message.
struct Known {
  std::string name, cls;
  std::regex rx;
};

class KnownList {
public:
  KnownList() {
    const char* path = std::getenv("TILEGEN_FUZZ_KNOWN");
    if (!path)
      return;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string name, cls, rx;
      if (!(ls >> name) || name[0] == '#' || !(ls >> cls))
        continue;
      std::getline(ls >> std::ws, rx);
      if (cls == "internal-error" || cls == "generate-rejects")
        entries_.push_back({name, cls, std::regex(rx)});
    }
  }
  ~KnownList() {
    for (const auto& [name, n] : hits_)
      std::fprintf(stderr, "tilegen-fuzz: known finding %s: %zu inputs\n", name.c_str(), n);
  }
  // The name of the entry matching (cls, message), counted; "" if none.
  std::string match(const std::string& cls, const std::string& message) {
    for (const auto& e : entries_)
      if (e.cls == cls && std::regex_search(message, e.rx)) {
        ++hits_[e.name];
        return e.name;
      }
    return "";
  }

private:
  std::vector<Known> entries_;
  std::map<std::string, size_t> hits_;
};

KnownList& known() {
  static KnownList list; // destroyed at exit: prints the counts
  return list;
}

[[noreturn]] void finding(const std::string& what, const std::string& log) {
  std::fprintf(stderr, "tilegen-fuzz: FINDING: %s\n%s\n", what.c_str(), log.c_str());
  std::fflush(stderr);
  std::abort();
}

// The input as a file the Driver can open: an anonymous in-memory file.
class MemFile {
public:
  explicit MemFile(const std::string& text) {
    fd_ = memfd_create("spec.yaml", 0);
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = write(fd_, text.data() + done, text.size() - done);
      if (n <= 0) {
        std::perror("write(memfd)");
        std::abort();
      }
      done += static_cast<size_t>(n);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  const std::string& path() const { return path_; }

private:
  int fd_ = -1;
  std::string path_;
};

void run_one(const std::string& text) {
  // The front end alone first: most mutated inputs stop here, once instead of once per target.
  {
    std::ostringstream sink;
    tilegen::DiagEngine diag(sink);
    auto kernels = tilegen::spec::load_kernels_from_text("spec.yaml", text, diag);
    if (!kernels)
      return;
    for (const auto& k : *kernels)
      if (tilegen::passes::enumerate_instances(k).size() > kMaxInstances)
        return;
  }
  MemFile file(text);
  for (const std::string& target : targets_for(text)) {
    tilegen::tools::Options o;
    o.lib = "fz";
    o.targets = {target};
    o.specs = {file.path()};
    o.out_dir = "unused"; // build_outputs writes nothing
    std::ostringstream check_log, gen_log;
    tilegen::tools::Driver check(check_log, check_log);
    int rc = check.check(o);
    if (rc == 2)
      finding("check answered a usage error for target " + target, check_log.str());
    if (rc != 0)
      continue;
    tilegen::tools::Driver generate(gen_log, gen_log);
    if (!generate.build_outputs(o) && known().match("generate-rejects", gen_log.str()).empty())
      finding("check accepts the spec for target " + target + " but generate rejects it",
              gen_log.str());
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  try {
    run_one(text);
  } catch (const tilegen::InternalError& e) {
    if (known().match("internal-error", e.what()).empty())
      finding(std::string("internal error: ") + e.what(), "");
  } catch (const std::bad_alloc&) {
    finding("internal error: out of memory", "");
  } catch (const std::exception& e) {
    finding(std::string("internal error: unexpected exception: ") + e.what(), "");
  }
  return 0;
}
