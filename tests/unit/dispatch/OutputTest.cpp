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

bool lib_candidate(const std::string& name, const void*) { return name.rfind("lib__", 0) == 0; }

TEST_F(AtomicFileTest, StaleFilesNeedTheMarker) {
  write("lib__old.c", "MARK\nint x;\n");
  write("lib__mine.c", "int mine;\n");
  write("lib__keep.c", "MARK\n");
  write("other.c", "MARK\n");
  write(".lib__old.c.tilegen-tmp-123456", "partial");
  WriteReport r;
  ASSERT_EQ(remove_stale_files(dir, {"lib__keep.c"}, lib_candidate, nullptr, "MARK", &r), "");
  EXPECT_EQ(r.removed, (std::vector<std::string>{"lib__old.c"}));
  EXPECT_EQ(listing(), (std::vector<std::string>{"lib__keep.c", "lib__mine.c", "other.c"}));
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

} // namespace
