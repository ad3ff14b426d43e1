#include "support/AtomicFile.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tilegen {

namespace fs = std::filesystem;

namespace {

const char* kTempTag = ".tilegen-tmp-";

std::string sys_error() { return std::strerror(errno); }

// Writes `contents` to a fresh temporary next to `dest`; returns its path or "" (+ error).
std::string write_temp(const std::string& dir, const std::string& name,
                       const std::string& contents, std::string& error) {
  std::string templ = dir + "/." + name + kTempTag + "XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  int fd = mkstemp(buf.data());
  if (fd < 0) {
    error = "cannot create a temporary file in '" + dir + "': " + sys_error();
    return "";
  }
  std::string path(buf.data());
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      error = "cannot write '" + path + "': " + sys_error();
      ::close(fd);
      ::unlink(path.c_str());
      return "";
    }
    done += static_cast<size_t>(n);
  }
  // mkstemp creates 0600; generated sources are ordinary files (0644 minus umask).
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  if (::close(fd) != 0) {
    error = "cannot write '" + path + "': " + sys_error();
    ::unlink(path.c_str());
    return "";
  }
  return path;
}

} // namespace

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    return false;
  out = ss.str();
  return true;
}

std::string write_files_atomically(const std::string& dir, const std::vector<OutputFile>& files,
                                   WriteReport* report) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return "cannot create output directory '" + dir + "': " + ec.message();

  // Phase 1: a temporary for every changed file.
  std::vector<std::pair<std::string, const OutputFile*>> temps;
  std::string error;
  for (const auto& f : files) {
    std::string dest = dir + "/" + f.name, old;
    if (read_file(dest, old) && old == f.contents) {
      if (report)
        report->unchanged.push_back(f.name);
      continue;
    }
    std::string tmp = write_temp(dir, f.name, f.contents, error);
    if (tmp.empty()) {
      for (auto& [path, unused] : temps)
        ::unlink(path.c_str());
      return error;
    }
    temps.emplace_back(tmp, &f);
  }
  // Phase 2: rename them into place.
  for (size_t i = 0; i < temps.size(); ++i) {
    std::string dest = dir + "/" + temps[i].second->name;
    if (std::rename(temps[i].first.c_str(), dest.c_str()) != 0) {
      error = "cannot rename '" + temps[i].first + "' to '" + dest + "': " + sys_error();
      for (size_t j = i; j < temps.size(); ++j)
        ::unlink(temps[j].first.c_str());
      if (i > 0)
        error += " (" + std::to_string(i) + " of " + std::to_string(temps.size()) +
                 " files were already replaced)";
      return error;
    }
    if (report)
      report->written.push_back(temps[i].second->name);
  }
  return "";
}

std::string remove_stale_files(const std::string& dir, const std::vector<std::string>& keep,
                               bool (*is_candidate)(const std::string& name, const void* ctx),
                               const void* ctx, const std::string& marker,
                               WriteReport* report) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return "";
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::error_code e2;
    if (entry.is_regular_file(e2))
      names.push_back(entry.path().filename().string());
  }
  if (ec)
    return "cannot list '" + dir + "': " + ec.message();
  std::sort(names.begin(), names.end()); // deterministic report order
  for (const auto& name : names) {
    std::string path = dir + "/" + name;
    // A temporary of ours left by an interrupted run: ".<candidate>.tilegen-tmp-XXXXXX".
    size_t tag = name.find(kTempTag);
    if (name[0] == '.' && tag != std::string::npos && is_candidate(name.substr(1, tag - 1), ctx)) {
      ::unlink(path.c_str());
      continue;
    }
    if (!is_candidate(name, ctx) || std::find(keep.begin(), keep.end(), name) != keep.end())
      continue;
    std::ifstream in(path);
    std::string first;
    if (!std::getline(in, first) || first != marker)
      continue; // not ours: leave it alone
    in.close();
    if (::unlink(path.c_str()) != 0)
      return "cannot remove stale file '" + path + "': " + sys_error();
    if (report)
      report->removed.push_back(name);
  }
  return "";
}

} // namespace tilegen
