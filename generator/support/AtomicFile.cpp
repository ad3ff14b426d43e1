// Output folder updates (AtomicFile.h describes the protocol and its fallbacks).
#include "support/AtomicFile.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace tilegen {

namespace fs = std::filesystem;

namespace {

const char* kTempTag = ".tilegen-tmp-";
const char* kStageTag = ".tilegen-stage-";
const char* kLockTag = ".tilegen-lock";
const char* kJournalHeader = "tilegen output folder lock: do not edit";

std::string sys_error(int err = errno) {
  return std::strerror(err);
}

mode_t current_umask() {
  mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

bool write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Reads up to `limit` bytes of dir/name (following symlinks); false if it cannot be read.
bool read_at(int dir, const std::string& name, std::string& out,
             size_t limit = static_cast<size_t>(-1)) {
  int fd = ::openat(dir, name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return false;
  struct stat st {};
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  out.clear();
  char buf[65536];
  while (ok && out.size() < limit) {
    ssize_t n = ::read(fd, buf, std::min(sizeof buf, limit - out.size()));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      ok = false;
    if (n <= 0)
      break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return ok;
}

// The renameat2 flags, through the system call (glibc before 2.28 has no wrapper).
int rename2(int olddir, const std::string& oldname, int newdir, const std::string& newname,
            unsigned flags) {
#if defined(__linux__) && defined(SYS_renameat2)
  return static_cast<int>(
      ::syscall(SYS_renameat2, olddir, oldname.c_str(), newdir, newname.c_str(), flags));
#else
  (void)olddir, (void)oldname, (void)newdir, (void)newname, (void)flags;
  errno = ENOSYS;
  return -1;
#endif
}
constexpr unsigned kRenameNoReplace = 1; // RENAME_NOREPLACE
constexpr unsigned kRenameExchange = 2;  // RENAME_EXCHANGE

struct Entry {
  std::string name;
  struct stat st;
};

// The entries of an open folder (not "." and ".."), sorted by name; false on error.
bool list_dir(int dir, std::vector<Entry>& out) {
  int fd = ::dup(dir);
  if (fd < 0)
    return false;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return false;
  }
  ::rewinddir(d);
  out.clear();
  errno = 0;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..")
      continue;
    Entry entry{name, {}};
    if (::fstatat(dir, name.c_str(), &entry.st, AT_SYMLINK_NOFOLLOW) == 0)
      out.push_back(std::move(entry));
    errno = 0;
  }
  bool ok = errno == 0;
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return ok;
}

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// ".<candidate>.tilegen-tmp-XXXXXX": a temporary of an in-place write of this library.
bool is_our_temp(const std::string& name, const Ownership& own) {
  size_t tag = name.find(kTempTag);
  return name.size() > 1 && name[0] == '.' && tag != std::string::npos && tag > 1 &&
         own.is_candidate(name.substr(1, tag - 1));
}

// A regular file of this library that tilegen wrote and that this run does not produce.
bool is_stale(int dir, const Entry& e, const std::set<std::string>& keep, const Ownership& own) {
  if (!S_ISREG(e.st.st_mode) || keep.count(e.name) || !own.is_candidate(e.name))
    return false;
  std::string head;
  return read_at(dir, e.name, head, 4096) && own.is_generated(e.name, head);
}

// Writes a new file dir/name (which must not exist) with mode 0666 & ~umask.
std::string create_file(int dir, const std::string& dir_path, const std::string& name,
                        const std::string& contents) {
  int fd = ::openat(dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    return "cannot create '" + dir_path + "/" + name + "': " + sys_error();
  bool ok = write_all(fd, contents);
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  return ok ? "" : "cannot write '" + dir_path + "/" + name + "': " + sys_error(err);
}

// Deletes the files of a staging folder (hard links of entries that stay in the output folder,
// new outputs) and the folder. False if something is left (a folder inside is never ours).
bool remove_staging(int parent, const std::string& name, int dir) {
  std::vector<Entry> entries;
  bool ok = list_dir(dir, entries);
  for (const auto& e : entries)
    ok = !S_ISDIR(e.st.st_mode) && ::unlinkat(dir, e.name.c_str(), 0) == 0 && ok;
  return ::unlinkat(parent, name.c_str(), AT_REMOVEDIR) == 0 && ok;
}

// Deletes the old tree that a swap moved to parent/name. Its entries are hard links of entries
// of the new folder (same inode), old versions of this library's files (`dropped`), or entries
// that some other program made in the folder while tilegen staged it: those are moved back into
// the new folder (unless the name is taken there; then the old tree is kept). False if something
// is left.
bool remove_old_tree(int parent, const std::string& name, int old_dir, int new_dir,
                     const std::set<std::string>& dropped) {
  std::vector<Entry> entries;
  bool ok = list_dir(old_dir, entries);
  for (const auto& e : entries) {
    struct stat now {};
    bool there = ::fstatat(new_dir, e.name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0;
    if ((there && same_file(now, e.st)) || dropped.count(e.name))
      ok = ::unlinkat(old_dir, e.name.c_str(), 0) == 0 && ok;
    else if (there || rename2(old_dir, e.name, new_dir, e.name, kRenameNoReplace) != 0)
      ok = false;
  }
  return ::unlinkat(parent, name.c_str(), AT_REMOVEDIR) == 0 && ok;
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

// The output folder, resolved: `path` without symlinks, `parent_fd` open on its parent.
struct Folder {
  std::string path, parent, name;
  bool exists = false;
  struct stat st {};
  int parent_fd = -1;
  ~Folder() {
    if (parent_fd >= 0)
      ::close(parent_fd);
  }
};

// Serializes runs on one folder; the lock file's text is the journal of the run holding it:
//   <kJournalHeader>
//   stage <staging folder name> <device> <inode>   (of the output folder; inode 0: did not exist)
//   drop <name>                                    (old files the new folder leaves out)
//   ...
class FolderLock {
public:
  // Deletes the lock file (while holding it: a run waiting on it opens the path again) unless
  // keep() was called, and releases it.
  ~FolderLock() {
    if (fd_ < 0)
      return;
    if (!keep_)
      ::unlinkat(parent_, name_.c_str(), 0);
    ::close(fd_);
  }
  // Leaves the lock file with its journal, for the next run to clean up after this one.
  void keep() { keep_ = true; }
  // Creates (or opens) and locks parent/.NAME.tilegen-lock; "" or why not. A lock file that a
  // finishing run deleted while this one waited is not the lock any more: open it again.
  std::string acquire(const Folder& f) {
    name_ = "." + f.name + kLockTag;
    parent_ = f.parent_fd;
    for (int attempt = 0; attempt < 100; ++attempt) {
      fd_ = ::openat(parent_, name_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
      if (fd_ < 0)
        return "cannot create the lock file '" + f.parent + "/" + name_ + "': " + sys_error();
      int rc;
      while ((rc = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
      }
      if (rc != 0) { // not held: leave the file to whoever holds it
        std::string why = "cannot lock '" + f.parent + "/" + name_ + "': " + sys_error();
        ::close(fd_);
        fd_ = -1;
        return why;
      }
      struct stat held {
      }, now{};
      if (::fstat(fd_, &held) == 0 &&
          ::fstatat(parent_, name_.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 && same_file(held, now))
        return "";
      ::close(fd_);
      fd_ = -1;
    }
    return "the lock file '" + f.parent + "/" + name_ + "' keeps being replaced";
  }
  std::string journal() {
    std::string text;
    char buf[65536];
    for (off_t off = 0;;) {
      ssize_t n = ::pread(fd_, buf, sizeof buf, off);
      if (n <= 0)
        break;
      text.append(buf, static_cast<size_t>(n));
      off += n;
    }
    return text;
  }
  // Each record of a run starts with the previous one, so a kill while writing leaves a valid
  // prefix; clear() starts a run's journal.
  bool record(const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = ::pwrite(fd_, text.data() + done, text.size() - done, static_cast<off_t>(done));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  bool clear() { return ::ftruncate(fd_, 0) == 0; }

private:
  int fd_ = -1, parent_ = -1;
  bool keep_ = false;
  std::string name_;
};

bool valid_stage_name(const std::string& s, const std::string& folder) {
  std::string prefix = "." + folder + kStageTag;
  if (s.size() != prefix.size() + 6 || s.compare(0, prefix.size(), prefix) != 0)
    return false;
  return std::all_of(s.begin() + static_cast<long>(prefix.size()), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
}

// Removes what a killed run left next to the folder, as its journal records: the staging folder
// (not swapped yet: its inode is not the one the output folder had) or the old tree (swapped).
// "" or why it could not.
std::string recover(FolderLock& lock, const Folder& f) {
  std::istringstream in(lock.journal());
  std::string line, stage;
  unsigned long long dev = 0, ino = 0;
  std::set<std::string> dropped;
  if (!std::getline(in, line) || line != kJournalHeader)
    return ""; // nothing recorded (a kill before the first record)
  while (std::getline(in, line)) {
    if (line.rfind("stage ", 0) == 0) {
      std::istringstream ls(line.substr(6));
      ls >> stage >> dev >> ino;
    } else if (line.rfind("drop ", 0) == 0) {
      dropped.insert(line.substr(5));
    }
  }
  if (!valid_stage_name(stage, f.name))
    return "";
  struct stat st {};
  if (::fstatat(f.parent_fd, stage.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
    return ""; // already removed
  int dir = ::openat(f.parent_fd, stage.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (dir < 0)
    return "cannot open '" + f.parent + "/" + stage + "': " + sys_error();
  bool ok;
  if (ino != 0 && st.st_dev == dev && st.st_ino == ino) { // swapped: the old tree
    int out = ::openat(f.parent_fd, f.name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ok = out >= 0 && remove_old_tree(f.parent_fd, stage, dir, out, dropped);
    if (out >= 0)
      ::close(out);
  } else {
    ok = remove_staging(f.parent_fd, stage, dir);
  }
  ::close(dir);
  return ok ? "" : "cannot remove '" + f.parent + "/" + stage + "', left by an interrupted run";
}

std::string random_suffix() {
  static std::mt19937_64 gen(std::random_device{}() ^ static_cast<unsigned long long>(::getpid()));
  const char* chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string s;
  for (int i = 0; i < 6; ++i)
    s += chars[gen() % 62];
  return s;
}

// Resolves `dir` (creating its parents); "" or an error.
std::string resolve(const std::string& dir, Folder& f) {
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec).lexically_normal();
  if (!ec && p.has_relative_path() && p.filename().empty())
    p = p.parent_path();
  if (ec)
    return "cannot create output directory '" + dir + "': " + ec.message();
  if (::lstat(p.c_str(), &f.st) == 0) {
    p = fs::canonical(p, ec); // through symlinks: the folder itself is swapped
    if (ec || ::stat(p.c_str(), &f.st) != 0 || !S_ISDIR(f.st.st_mode))
      return "cannot create output directory '" + dir + "': " + (ec ? ec.message() : "File exists");
    f.exists = true;
  } else {
    fs::create_directories(p.parent_path(), ec);
    if (ec)
      return "cannot create output directory '" + dir + "': " + ec.message();
    p = fs::canonical(p.parent_path(), ec) / p.filename();
    if (ec)
      return "cannot create output directory '" + dir + "': " + ec.message();
  }
  f.path = p.string();
  f.parent = p.parent_path().string();
  f.name = p.filename().string();
  return "";
}

// What the run changes in an existing folder.
struct Plan {
  std::vector<const OutputFile*> changed;
  std::vector<std::string> stale, temps; // removed: this library's stale files, its temporaries
  std::set<std::string> dropped;         // entries the new folder leaves out
};

bool make_plan(int dir, const std::vector<Entry>& entries, const std::vector<OutputFile>& files,
               const Ownership& own, Plan& plan, WriteReport& report) {
  std::set<std::string> keep, changed;
  for (const auto& f : files) {
    keep.insert(f.name);
    std::string old;
    if (read_at(dir, f.name, old) && old == f.contents) {
      report.unchanged.push_back(f.name);
      continue;
    }
    plan.changed.push_back(&f);
    changed.insert(f.name);
  }
  for (const auto& e : entries) {
    if (e.name.find('\n') != std::string::npos)
      continue; // not a name of ours (and it could not be journaled)
    if (keep.count(e.name)) {
      // The old version of a changed output (a folder in its way is the user's: not dropped,
      // and then the commit reports that it cannot replace it).
      if (!S_ISDIR(e.st.st_mode) && changed.count(e.name))
        plan.dropped.insert(e.name);
    } else if (S_ISREG(e.st.st_mode) && is_our_temp(e.name, own)) {
      plan.temps.push_back(e.name);
      plan.dropped.insert(e.name);
    } else if (is_stale(dir, e, keep, own)) {
      plan.stale.push_back(e.name);
      plan.dropped.insert(e.name);
    }
  }
  return !plan.changed.empty() || !plan.stale.empty() || !plan.temps.empty();
}

std::string in_place(const std::string& dir, const std::vector<OutputFile>& files,
                     const Ownership& own, WriteReport* report, const std::string& why) {
  std::string error = write_files_atomically(dir, files, report);
  if (error.empty()) {
    std::vector<std::string> keep;
    for (const auto& f : files)
      keep.push_back(f.name);
    error = remove_stale_files(dir, keep, own, report);
  }
  if (!report->written.empty() || !report->removed.empty())
    report->method = "in place (" + why + ")";
  return error;
}

// Renames the changed files from the staging folder into the output folder one by one, then
// deletes the stale files and temporaries.
std::string commit_file_by_file(const Folder& f, int stage, int out, const Plan& plan,
                                WriteReport& report) {
  for (size_t i = 0; i < plan.changed.size(); ++i) {
    const std::string& name = plan.changed[i]->name;
    if (::renameat(stage, name.c_str(), out, name.c_str()) != 0) {
      std::string error =
          "cannot rename a new '" + name + "' into '" + f.path + "': " + sys_error();
      if (i > 0)
        error += " (" + std::to_string(i) + " of " + std::to_string(plan.changed.size()) +
                 " files were already replaced)";
      return error;
    }
    report.written.push_back(name);
  }
  for (const auto& name : plan.temps)
    ::unlinkat(out, name.c_str(), 0);
  for (const auto& name : plan.stale) {
    if (::unlinkat(out, name.c_str(), 0) != 0)
      return "cannot remove stale file '" + f.path + "/" + name + "': " + sys_error();
    report.removed.push_back(name);
  }
  return "";
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

std::string update_output_folder(const std::string& dir, const std::vector<OutputFile>& files,
                                 const Ownership& own, WriteReport* report_or_null) {
  WriteReport scratch;
  WriteReport& report = report_or_null ? *report_or_null : scratch;
  Folder f;
  if (std::string error = resolve(dir, f); !error.empty())
    return error;
  if (f.name.empty() || f.name == "." || f.name == "..")
    return in_place(dir, files, own, &report, "it is the root folder");
  f.parent_fd = ::open(f.parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct stat parent_st {};
  if (f.parent_fd < 0 || ::fstat(f.parent_fd, &parent_st) != 0)
    return in_place(dir, files, own, &report, "cannot open its parent: " + sys_error());
  if (f.exists && parent_st.st_dev != f.st.st_dev)
    return in_place(dir, files, own, &report, "it is a mount point");

  // From here on the lock is held; it is deleted on return, unless it must keep its journal.
  FolderLock lock;
  if (std::string why = lock.acquire(f); !why.empty())
    return in_place(dir, files, own, &report, why);
  if (std::string why = recover(lock, f); !why.empty()) {
    lock.keep();
    return in_place(dir, files, own, &report, why);
  }
  if (!lock.clear())
    return in_place(dir, files, own, &report, "cannot write the lock file: " + sys_error());

  // What changes. (Whether the folder exists is decided again under the lock: a run of another
  // library may have just created it.)
  Fd out, stage;
  std::vector<Entry> entries;
  Plan plan;
  f.exists = ::fstatat(f.parent_fd, f.name.c_str(), &f.st, AT_SYMLINK_NOFOLLOW) == 0;
  if (f.exists && !S_ISDIR(f.st.st_mode)) // replaced by a file or symlink meanwhile
    return in_place(dir, files, own, &report, "it is not a folder any more");
  if (f.exists) {
    out.fd = ::openat(f.parent_fd, f.name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (out.fd < 0 || ::fstat(out.fd, &f.st) != 0 || !list_dir(out.fd, entries))
      return "cannot read output directory '" + f.path + "': " + sys_error();
    if (!make_plan(out.fd, entries, files, own, plan, report))
      return ""; // nothing to change
  } else {
    for (const auto& file : files)
      plan.changed.push_back(&file);
  }

  // The staging folder, recorded in the journal before it exists.
  std::string journal = std::string(kJournalHeader) + "\n", stage_name;
  for (int attempt = 0; attempt < 10; ++attempt) {
    stage_name = "." + f.name + kStageTag + random_suffix();
    std::string rec = journal + "stage " + stage_name + " " + std::to_string(f.st.st_dev) + " " +
                      std::to_string(f.exists ? f.st.st_ino : 0) + "\n";
    if (!lock.record(rec))
      return in_place(dir, files, own, &report, "cannot write the lock file: " + sys_error());
    if (::mkdirat(f.parent_fd, stage_name.c_str(), 0700) == 0) {
      journal = rec;
      stage.fd = ::openat(f.parent_fd, stage_name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (stage.fd < 0)
        ::unlinkat(f.parent_fd, stage_name.c_str(), AT_REMOVEDIR);
      break;
    }
    if (errno != EEXIST)
      break;
  }
  if (stage.fd < 0)
    return in_place(dir, files, own, &report,
                    "cannot create a staging folder next to it: " + sys_error());

  // Its content: links of what stays, then the changed files.
  std::string no_swap;
  std::error_code ec;
  if (f.exists && fs::equivalent(fs::current_path(ec), f.path, ec))
    no_swap = "it is the current folder";
  for (const auto& e : entries) {
    if (plan.dropped.count(e.name) || !no_swap.empty())
      continue;
    if (S_ISDIR(e.st.st_mode))
      no_swap = "it has a subfolder, '" + e.name + "'";
    else if (::linkat(out.fd, e.name.c_str(), stage.fd, e.name.c_str(), 0) != 0)
      no_swap = "cannot hard-link '" + e.name + "': " + sys_error();
  }
  for (const OutputFile* file : plan.changed)
    if (std::string error =
            create_file(stage.fd, f.parent + "/" + stage_name, file->name, file->contents);
        !error.empty()) {
      remove_staging(f.parent_fd, stage_name, stage.fd);
      return error;
    }

  if (!f.exists) { // a new folder: rename the staged one into place
    ::fchmod(stage.fd, 0777 & ~current_umask());
    int rc = rename2(f.parent_fd, stage_name, f.parent_fd, f.name, kRenameNoReplace);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS))
      rc = ::renameat(f.parent_fd, stage_name.c_str(), f.parent_fd, f.name.c_str());
    if (rc == 0) {
      for (const OutputFile* file : plan.changed)
        report.written.push_back(file->name);
      report.method = "created";
      return "";
    }
    // Another program made the folder meanwhile: put the files in one by one.
    no_swap = "the folder appeared while tilegen wrote it";
    out.fd = ::openat(f.parent_fd, f.name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (out.fd < 0) {
      std::string error = "cannot create output directory '" + f.path + "': " + sys_error();
      remove_staging(f.parent_fd, stage_name, stage.fd);
      return error;
    }
  }

  // The new folder takes the old one's owner, group and mode.
  if (no_swap.empty() && (::fchmod(stage.fd, f.st.st_mode & 07777) != 0 ||
                          ((f.st.st_uid != ::geteuid() || f.st.st_gid != ::getegid()) &&
                           ::fchown(stage.fd, f.st.st_uid, f.st.st_gid) != 0)))
    no_swap = "the new folder cannot get the owner and group of the old one";
  if (no_swap.empty()) {
    for (const auto& name : plan.dropped)
      journal += "drop " + name + "\n";
    if (!lock.record(journal))
      no_swap = "cannot write the lock file: " + sys_error();
  }
  if (no_swap.empty()) {
    if (rename2(f.parent_fd, stage_name, f.parent_fd, f.name, kRenameExchange) == 0) {
      for (const OutputFile* file : plan.changed)
        report.written.push_back(file->name);
      report.removed = plan.stale;
      report.method = "swapped";
      // `out` is the old tree now, under the staging folder's name.
      if (!remove_old_tree(f.parent_fd, stage_name, out.fd, stage.fd, plan.dropped)) {
        lock.keep();
        report.warning = "could not delete all of the old folder, moved to '" + f.parent + "/" +
                         stage_name + "'; the next run tries again";
      }
      return "";
    }
    no_swap = "the file system cannot swap folders: " + sys_error();
  }

  report.method = "file by file (" + no_swap + ")";
  std::string error = commit_file_by_file(f, stage.fd, out.fd, plan, report);
  remove_staging(f.parent_fd, stage_name, stage.fd);
  return error;
}

// ---- in place --------------------------------------------------------------------------------

namespace {

// Writes `contents` to a fresh temporary next to `dest`; returns its path or "" (+ error).
std::string write_temp(const std::string& dir, const std::string& name, const std::string& contents,
                       std::string& error) {
  std::string templ = dir + "/." + name + kTempTag + "XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  int fd = mkstemp(buf.data());
  if (fd < 0) {
    error = "cannot create a temporary file in '" + dir + "': " + sys_error();
    return "";
  }
  std::string path(buf.data());
  bool ok = write_all(fd, contents);
  int err = errno;
  // mkstemp creates 0600; generated sources are ordinary files (0666 minus umask).
  ::fchmod(fd, 0666 & ~current_umask());
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    error = "cannot write '" + path + "': " + sys_error(err);
    ::unlink(path.c_str());
    return "";
  }
  return path;
}

} // namespace

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
                               const Ownership& own, WriteReport* report) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? "" : "cannot list '" + dir + "': " + sys_error();
  std::vector<Entry> entries;
  bool listed = list_dir(fd, entries);
  std::set<std::string> kept(keep.begin(), keep.end());
  std::string error = listed ? "" : "cannot list '" + dir + "': " + sys_error();
  for (const auto& e : entries) {
    if (!error.empty())
      break;
    if (S_ISREG(e.st.st_mode) && is_our_temp(e.name, own)) {
      ::unlinkat(fd, e.name.c_str(), 0); // left by an interrupted run
    } else if (is_stale(fd, e, kept, own)) {
      if (::unlinkat(fd, e.name.c_str(), 0) != 0)
        error = "cannot remove stale file '" + dir + "/" + e.name + "': " + sys_error();
      else if (report)
        report->removed.push_back(e.name);
    }
  }
  ::close(fd);
  return error;
}

} // namespace tilegen
