// Output writing (support/AtomicFile) and the driver's command-line contract (tools/Driver):
// atomic replace, unchanged files kept, stale files removed only with our marker, exit codes.
#include "dispatch/Naming.h"
#include "support/AtomicFile.h"
#include "targets/Target.h"
#include "tools/Driver.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <csignal>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace tilegen;

namespace {

class TempDir : public ::testing::Test {
protected:
  void SetUp() override {
    char templ[] = "/tmp/tilegen-output-test-XXXXXX";
    ASSERT_NE(mkdtemp(templ), nullptr);
    dir = templ;
  }
  void TearDown() override { fs::remove_all(dir); }

  std::string read(const std::string& name) {
    std::string s;
    EXPECT_TRUE(read_file(dir + "/" + name, s)) << name;
    return s;
  }
  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir + "/" + name) << text;
  }
  struct timespec mtime(const std::string& name) {
    struct stat st {};
    EXPECT_EQ(::stat((dir + "/" + name).c_str(), &st), 0);
    return st.st_mtim;
  }
  std::vector<std::string> listing() {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(dir))
      v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  }

  std::string dir;
};

using AtomicFileTest = TempDir;

TEST_F(AtomicFileTest, WritesAndKeepsUnchangedFiles) {
  WriteReport r1;
  ASSERT_EQ(write_files_atomically(dir + "/sub", {{"a.c", "A"}, {"b.c", "B"}}, &r1), "");
  EXPECT_EQ(r1.written, (std::vector<std::string>{"a.c", "b.c"}));
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/sub/a.c").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_IRGRP, 0u) << "not a 0600 temp file mode";

  dir += "/sub";
  auto before = mtime("a.c");
  usleep(20000);
  WriteReport r2;
  ASSERT_EQ(write_files_atomically(dir, {{"a.c", "A"}, {"b.c", "B2"}}, &r2), "");
  EXPECT_EQ(r2.unchanged, (std::vector<std::string>{"a.c"}));
  EXPECT_EQ(r2.written, (std::vector<std::string>{"b.c"}));
  auto after = mtime("a.c");
  EXPECT_EQ(before.tv_sec, after.tv_sec);
  EXPECT_EQ(before.tv_nsec, after.tv_nsec);
  EXPECT_EQ(read("b.c"), "B2");
  EXPECT_EQ(listing(), (std::vector<std::string>{"a.c", "b.c"})); // no temporaries left
}

TEST_F(AtomicFileTest, FailureLeavesFolderUnchanged) {
  write("a.c", "old");
  // A file-size limit makes the second temporary's write fail (EFBIG), like a full disk; it
  // binds root too, unlike folder permissions.
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
  struct rlimit tiny = saved;
  tiny.rlim_cur = 16;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &tiny), 0);
  WriteReport r;
  std::string err =
      write_files_atomically(dir, {{"a.c", "new"}, {"b.c", std::string(100, 'B')}}, &r);
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);
  EXPECT_NE(err.find("cannot write"), std::string::npos) << err;
  EXPECT_EQ(read("a.c"), "old"); // its temporary was complete, but nothing is renamed
  EXPECT_EQ(listing(), (std::vector<std::string>{"a.c"}));
  EXPECT_TRUE(r.written.empty());
}

TEST_F(AtomicFileTest, RenameFailureCleansUpTemporaries) {
  fs::create_directory(dir + "/b.c"); // a folder where a file should go: rename fails
  write("b.c/keep", "x");
  WriteReport r;
  std::string err = write_files_atomically(dir, {{"a.c", "A"}, {"b.c", "B"}}, &r);
  EXPECT_NE(err.find("cannot rename"), std::string::npos) << err;
  for (const auto& name : listing())
    EXPECT_EQ(name.find("tilegen-tmp"), std::string::npos) << name;
}

// The library "lib": files lib__*, generated ones start with the line "MARK".
const Ownership kLib{[](const std::string& name) { return name.rfind("lib__", 0) == 0; },
                     [](const std::string&, const std::string& head) {
                       return head.rfind("MARK\n", 0) == 0;
                     }};

TEST_F(AtomicFileTest, StaleFilesNeedTheMarker) {
  write("lib__old.c", "MARK\nint x;\n");
  write("lib__mine.c", "int mine;\n");
  write("lib__keep.c", "MARK\n");
  write("other.c", "MARK\n");
  write(".lib__old.c.tilegen-tmp-123456", "partial");
  WriteReport r;
  ASSERT_EQ(remove_stale_files(dir, {"lib__keep.c"}, kLib, &r), "");
  EXPECT_EQ(r.removed, (std::vector<std::string>{"lib__old.c"}));
  EXPECT_EQ(listing(), (std::vector<std::string>{"lib__keep.c", "lib__mine.c", "other.c"}));
}

// ---- update_output_folder: the staged folder swap --------------------------------------------

// The output folder is dir/out; the fixture's folder is its parent, where the lock file and the
// staging folder live while a run lasts.
class OutputFolderTest : public TempDir {
protected:
  std::string out() { return dir + "/out"; }
  struct stat info(const std::string& name) {
    struct stat st {};
    EXPECT_EQ(::lstat((out() + "/" + name).c_str(), &st), 0) << name;
    return st;
  }
  std::vector<std::string> out_listing() {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(out()))
      v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  }
  void put(const std::string& name, const std::string& text) {
    std::ofstream(out() + "/" + name) << text;
  }
};

TEST_F(OutputFolderTest, SwapKeepsWhatStays) {
  WriteReport r0;
  ASSERT_EQ(update_output_folder(out(), {{"lib__a.c", "MARK\na"}, {"lib__b.c", "MARK\nb"},
                                         {"lib__old.c", "MARK\nold"}},
                                 kLib, &r0),
            "");
  EXPECT_EQ(r0.method, "created");
  EXPECT_EQ(listing(), (std::vector<std::string>{"out"})); // nothing left next to it
  put("notes.txt", "mine");
  put("lib__mine.c", "int mine;"); // named like the library's, without the marker
  ::symlink("notes.txt", (out() + "/link").c_str());
  ::mkfifo((out() + "/fifo").c_str(), 0644);
  ASSERT_EQ(::chmod(out().c_str(), 0750), 0);
  struct stat a = info("lib__a.c"), notes = info("notes.txt"), link = info("link"), before {};
  ASSERT_EQ(::stat(out().c_str(), &before), 0);

  WriteReport r;
  ASSERT_EQ(update_output_folder(out(), {{"lib__a.c", "MARK\na"}, {"lib__b.c", "MARK\nb2"},
                                         {"lib__c.c", "MARK\nc"}},
                                 kLib, &r),
            "");
  EXPECT_EQ(r.method, "swapped");
  EXPECT_EQ(r.written, (std::vector<std::string>{"lib__b.c", "lib__c.c"}));
  EXPECT_EQ(r.unchanged, (std::vector<std::string>{"lib__a.c"}));
  EXPECT_EQ(r.removed, (std::vector<std::string>{"lib__old.c"}));
  EXPECT_EQ(out_listing(), (std::vector<std::string>{"fifo", "lib__a.c", "lib__b.c", "lib__c.c",
                                                     "lib__mine.c", "link", "notes.txt"}));
  EXPECT_EQ(listing(), (std::vector<std::string>{"out"}));
  struct stat after {};
  ASSERT_EQ(::stat(out().c_str(), &after), 0);
  EXPECT_NE(after.st_ino, before.st_ino) << "the folder was not swapped";
  EXPECT_EQ(after.st_mode & 07777, 0750u) << "the new folder lost the old one's mode";
  // Entries that stay are the same files (hard links), mtime included.
  EXPECT_EQ(info("lib__a.c").st_ino, a.st_ino);
  EXPECT_EQ(info("lib__a.c").st_mtim.tv_nsec, a.st_mtim.tv_nsec);
  EXPECT_EQ(info("notes.txt").st_ino, notes.st_ino);
  EXPECT_EQ(info("link").st_ino, link.st_ino);
  EXPECT_TRUE(S_ISFIFO(info("fifo").st_mode));
  EXPECT_EQ(info("lib__a.c").st_nlink, 1u) << "the old tree still holds a link";
  EXPECT_EQ(read("out/lib__b.c"), "MARK\nb2");

  // The same again: nothing changes, the folder is not even swapped.
  WriteReport r2;
  ASSERT_EQ(update_output_folder(out(), {{"lib__a.c", "MARK\na"}, {"lib__b.c", "MARK\nb2"},
                                         {"lib__c.c", "MARK\nc"}},
                                 kLib, &r2),
            "");
  EXPECT_EQ(r2.method, "");
  EXPECT_TRUE(r2.written.empty());
  struct stat again {};
  ASSERT_EQ(::stat(out().c_str(), &again), 0);
  EXPECT_EQ(again.st_ino, after.st_ino);
  EXPECT_EQ(listing(), (std::vector<std::string>{"out"}));
}

TEST_F(OutputFolderTest, SubfolderMeansFileByFile) {
  ASSERT_EQ(update_output_folder(out(), {{"lib__a.c", "MARK\na"}, {"lib__old.c", "MARK\n"}},
                                 kLib, nullptr),
            "");
  fs::create_directory(out() + "/sub");
  put("sub/x", "x");
  WriteReport r;
  ASSERT_EQ(update_output_folder(out(), {{"lib__a.c", "MARK\na2"}}, kLib, &r), "");
  EXPECT_EQ(r.method, "file by file (it has a subfolder, 'sub')");
  EXPECT_EQ(r.removed, (std::vector<std::string>{"lib__old.c"}));
  EXPECT_EQ(out_listing(), (std::vector<std::string>{"lib__a.c", "sub"}));
  EXPECT_EQ(read("out/lib__a.c"), "MARK\na2");
  EXPECT_EQ(read("out/sub/x"), "x");
  EXPECT_EQ(listing(), (std::vector<std::string>{"out"})); // no temporary in the folder either
}

TEST_F(OutputFolderTest, FolderInTheWayIsAnErrorAndChangesNothing) {
  ASSERT_EQ(update_output_folder(out(), {{"lib__a.c", "MARK\na"}}, kLib, nullptr), "");
  fs::create_directory(out() + "/lib__b.c"); // the user's folder where a file should go
  put("lib__b.c/keep", "x");
  WriteReport r;
  std::string err =
      update_output_folder(out(), {{"lib__a.c", "MARK\na2"}, {"lib__b.c", "MARK\nb"}}, kLib, &r);
  EXPECT_NE(err.find("cannot rename"), std::string::npos) << err;
  EXPECT_EQ(read("out/lib__b.c/keep"), "x");
  EXPECT_EQ(listing(), (std::vector<std::string>{"out"}));
}

TEST_F(OutputFolderTest, WriteFailureLeavesFolderUnchanged) {
  ASSERT_EQ(update_output_folder(out(), {{"lib__a.c", "MARK\nold"}}, kLib, nullptr), "");
  struct rlimit saved {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 512; // the lock file's journal fits, the second file does not
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  WriteReport r;
  std::string err = update_output_folder(
      out(), {{"lib__a.c", "MARK\nnew"}, {"lib__b.c", "MARK\n" + std::string(1000, 'B')}}, kLib, &r);
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, old_handler);
  EXPECT_NE(err.find("cannot write"), std::string::npos) << err;
  EXPECT_EQ(read("out/lib__a.c"), "MARK\nold");
  EXPECT_EQ(out_listing(), (std::vector<std::string>{"lib__a.c"}));
  EXPECT_EQ(listing(), (std::vector<std::string>{"out"}));
  EXPECT_TRUE(r.written.empty());
}

// What a killed run leaves next to the folder is removed by the next run, as its journal (the
// lock file) records it; a folder that merely looks like a staging folder is left alone.
TEST_F(OutputFolderTest, NextRunCleansUpAfterAKilledOne) {
  ASSERT_EQ(update_output_folder(out(), {{"lib__a.c", "MARK\na"}}, kLib, nullptr), "");
  struct stat st {};
  ASSERT_EQ(::stat(out().c_str(), &st), 0);
  // Killed while staging: the staging folder holds a link and a new file.
  std::string stage = dir + "/.out.tilegen-stage-Ab12Cd";
  fs::create_directory(stage);
  ASSERT_EQ(::link((out() + "/lib__a.c").c_str(), (stage + "/lib__a.c").c_str()), 0);
  std::ofstream(stage + "/lib__b.c") << "MARK\nb";
  fs::create_directory(dir + "/.out.tilegen-stage-Zz99Zz"); // not recorded: not ours
  std::ofstream(dir + "/.out.tilegen-lock")
      << "tilegen output folder lock: do not edit\nstage .out.tilegen-stage-Ab12Cd "
      << st.st_dev << " " << st.st_ino << "\n";
  WriteReport r;
  ASSERT_EQ(update_output_folder(out(), {{"lib__a.c", "MARK\na"}}, kLib, &r), "");
  EXPECT_EQ(listing(), (std::vector<std::string>{".out.tilegen-stage-Zz99Zz", "out"}));
  EXPECT_EQ(info("lib__a.c").st_nlink, 1u);

  // Killed after the swap: the old tree is at the staging folder's name, and the journal names
  // the inode the output folder had. Its links of the new folder's files and the old versions
  // it dropped go; a file some other program made in the folder meanwhile is moved back.
  std::string old_tree = dir + "/.out.tilegen-stage-Old123";
  fs::create_directory(old_tree);
  ASSERT_EQ(::stat(old_tree.c_str(), &st), 0);
  ASSERT_EQ(::link((out() + "/lib__a.c").c_str(), (old_tree + "/lib__a.c").c_str()), 0);
  std::ofstream(old_tree + "/lib__gone.c") << "MARK\nold version";
  std::ofstream(old_tree + "/late.txt") << "made during the run";
  std::ofstream(dir + "/.out.tilegen-lock")
      << "tilegen output folder lock: do not edit\nstage .out.tilegen-stage-Old123 " << st.st_dev
      << " " << st.st_ino << "\ndrop lib__gone.c\n";
  ASSERT_EQ(update_output_folder(out(), {{"lib__a.c", "MARK\na"}}, kLib, &r), "");
  EXPECT_EQ(listing(), (std::vector<std::string>{".out.tilegen-stage-Zz99Zz", "out"}));
  EXPECT_EQ(out_listing(), (std::vector<std::string>{"late.txt", "lib__a.c"}));
  EXPECT_EQ(info("lib__a.c").st_nlink, 1u);
}

// ---- Driver: exit codes for command-line mistakes ------------------------------------------

struct DriverRun {
  std::ostringstream out, err;
  tools::Driver driver{out, err};
};

TEST(DriverUsage, GenerateNeedsLibTargetsOut) {
  tools::Options o;
  o.specs = {"x.yaml"};
  o.targets = {"c"};
  o.out_dir = "/nonexistent-out";
  {
    DriverRun r;
    EXPECT_EQ(r.driver.generate(o), 2);
    EXPECT_NE(r.err.str().find("--lib NAME is required"), std::string::npos);
  }
  o.lib = "bad__name";
  {
    DriverRun r;
    EXPECT_EQ(r.driver.generate(o), 2);
    EXPECT_NE(r.err.str().find("invalid library name"), std::string::npos);
  }
  o.lib = "ok";
  o.targets = {"c", "warp9"};
  {
    DriverRun r;
    EXPECT_EQ(r.driver.generate(o), 2);
    EXPECT_NE(r.err.str().find("unknown target 'warp9' (known targets: c, c_avx2, c_avx512, "),
              std::string::npos)
        << r.err.str();
  }
  o.targets = {"c", "c"};
  {
    DriverRun r;
    EXPECT_EQ(r.driver.generate(o), 2);
  }
  o.targets = {"c"};
  o.out_dir = "";
  {
    DriverRun r;
    EXPECT_EQ(r.driver.generate(o), 2);
  }
}

TEST(DriverUsage, MissingSpecIsAUserError) {
  tools::Options o;
  o.specs = {"/nonexistent/spec.yaml"};
  DriverRun r;
  EXPECT_EQ(r.driver.check(o), 1);
  EXPECT_NE(r.err.str().find("/nonexistent/spec.yaml"), std::string::npos) << r.err.str();
}

TEST(DriverUsage, TargetsAndFlags) {
  DriverRun r;
  EXPECT_EQ(r.driver.targets(), 0);
  EXPECT_NE(r.out.str().find("c_avx512"), std::string::npos);
  DriverRun f;
  EXPECT_EQ(f.driver.target_flags("c_avx2"), 0);
  // One flag per line, exactly the target table's (targets/Targets.cpp).
  std::string want;
  for (const auto& flag : find_target("c_avx2")->compile_flags)
    want += flag + "\n";
  EXPECT_EQ(f.out.str(), want);
  EXPECT_NE(want.find("-mavx2\n"), std::string::npos);
  DriverRun g;
  EXPECT_EQ(g.driver.target_flags("nope"), 2);
}

// The Arm rows (docs/c-backend.md "Arm"): features the runtime probes with getauxval, the flags
// of aarch64 gcc/clang, the fallback chain to c, and one CPU architecture per C row.
TEST(DriverUsage, ArmTargets) {
  const Target* neon = find_target("c_neon");
  const Target* sve = find_target("c_sve");
  ASSERT_TRUE(neon && sve);
  EXPECT_EQ(neon->runtime_features, (std::vector<std::string>{"asimd", "fphp", "asimdhp"}));
  EXPECT_EQ(sve->runtime_features,
            (std::vector<std::string>{"asimd", "fphp", "asimdhp", "sve"}));
  EXPECT_EQ(neon->fallbacks, (std::vector<std::string>{"c"}));
  EXPECT_EQ(sve->fallbacks, (std::vector<std::string>{"c_neon", "c"}));
  EXPECT_GT(sve->preference, neon->preference);
  EXPECT_GT(neon->preference, find_target("c")->preference);
  EXPECT_EQ(neon->compile_flags[0], "-march=armv8.2-a+fp16");
  EXPECT_EQ(sve->compile_flags[0], "-march=armv8.2-a+fp16+sve");
  for (const auto& t : all_targets()) {
    if (t.backend != Backend::C)
      EXPECT_EQ(t.cpu_arch, "") << t.name;
    else if (t.name == "c")
      EXPECT_EQ(t.cpu_arch, "");
    else
      EXPECT_EQ(t.cpu_arch, t.name == "c_neon" || t.name == "c_sve" ? "aarch64" : "x86") << t.name;
  }
  EXPECT_EQ(cpu_arch_guard("aarch64"), "defined(__aarch64__)");
  DriverRun r;
  EXPECT_EQ(r.driver.targets(), 0);
  EXPECT_NE(r.out.str().find("c_sve       c        20    asimd,fphp,asimdhp,sve"), std::string::npos)
      << r.out.str();
  EXPECT_NE(r.out.str().find("(falls back to c_neon, c)"), std::string::npos);
}

} // namespace
