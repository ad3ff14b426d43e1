// DiagEngine output format and closest_name.
#include "support/Diagnostics.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tilegen;

namespace {
SourceLoc at(const std::shared_ptr<const std::string>& f, int line, int col, int len = 1) {
  SourceLoc l;
  l.file = f;
  l.line = line;
  l.col = col;
  l.length = len;
  return l;
}
} // namespace

TEST(Diagnostics, ErrorWithCaretRangeAndNote) {
  std::ostringstream out;
  DiagEngine d(out);
  auto f = d.add_source("k.yaml", "body:\n  - copy: {src: A_S, dst: acc}\n");
  d.error(at(f, 2, 17, 3), "unknown buffer 'A_S'; did you mean 'A_s'?");
  d.note(at(f, 1, 1, 4), "declared here");
  EXPECT_EQ(out.str(), "k.yaml:2:17: error: unknown buffer 'A_S'; did you mean 'A_s'?\n"
                       "  - copy: {src: A_S, dst: acc}\n"
                       "                ^~~\n"
                       "k.yaml:1:1: note: declared here\n"
                       "body:\n"
                       "^~~~\n");
  EXPECT_EQ(d.error_count(), 1);
  ASSERT_EQ(d.diagnostics().size(), 2u);
  EXPECT_EQ(d.diagnostics()[1].severity, Severity::Note);
}

TEST(Diagnostics, TabsAreKeptInTheCaretLine) {
  std::ostringstream out;
  DiagEngine d(out);
  auto f = d.add_source("t.yaml", "\tx: 1\n");
  d.error(at(f, 1, 2), "m");
  EXPECT_EQ(out.str(), "t.yaml:1:2: error: m\n\tx: 1\n\t^\n");
}

TEST(Diagnostics, RangeIsClippedToTheLineAndCrlfIsStripped) {
  std::ostringstream out;
  DiagEngine d(out);
  auto f = d.add_source("c.yaml", "ab\r\ncd\r\n");
  d.error(at(f, 2, 2, 50), "m");
  EXPECT_EQ(out.str(), "c.yaml:2:2: error: m\ncd\n ^\n");
}

TEST(Diagnostics, MultiByteCharactersTakeOneCaretColumn) {
  std::ostringstream out;
  DiagEngine d(out);
  auto f = d.add_source("u.yaml", "s: \xC3\xA9x\n"); // "s: éx"
  d.error(at(f, 1, 6), "m");                         // byte column of 'x'
  EXPECT_EQ(out.str(), "u.yaml:1:6: error: m\ns: \xC3\xA9x\n    ^\n");
}

TEST(Diagnostics, ControlAndInvalidBytesAreShownAsQuestionMarks) {
  std::ostringstream out;
  DiagEngine d(out);
  auto f = d.add_source("b.yaml", std::string("a\0b\xFF", 4));
  d.error(at(f, 1, 2), "m");
  EXPECT_EQ(out.str(), "b.yaml:1:2: error: m\na?b?\n ^\n");
}

TEST(Diagnostics, LongLinesAreWindowed) {
  std::ostringstream out;
  DiagEngine d(out);
  auto f = d.add_source("l.yaml", std::string(1000, 'x'));
  d.error(at(f, 1, 500), "m");
  std::string s = out.str();
  EXPECT_NE(s.find("\n..." + std::string(160, 'x') + "...\n"), std::string::npos) << s;
  EXPECT_NE(s.find("\n" + std::string(3 + 80, ' ') + "^\n"), std::string::npos) << s;
}

TEST(Diagnostics, LocationsWithoutLineOrFile) {
  std::ostringstream out;
  DiagEngine d(out);
  auto f = d.add_source("x.yaml", "");
  SourceLoc file_only;
  file_only.file = f;
  d.error(file_only, "too large");
  d.error(SourceLoc{}, "no location");
  EXPECT_EQ(out.str(), "x.yaml: error: too large\nerror: no location\n");
}

TEST(Diagnostics, ErrorLimitSuppressesErrorsAndTheirNotes) {
  std::ostringstream out;
  DiagEngine d(out);
  d.set_error_limit(2);
  for (int i = 0; i < 5; ++i) {
    d.error(SourceLoc{}, "e" + std::to_string(i));
    d.note(SourceLoc{}, "n" + std::to_string(i));
  }
  EXPECT_EQ(d.error_count(), 5);
  EXPECT_EQ(out.str(), "error: e0\nnote: n0\nerror: e1\nnote: n1\n"
                       "error: too many errors (2); further errors are not shown\n");
}

TEST(Diagnostics, TargetGroupPrintsAnErrorOnceForEveryTargetThatMeetsIt) {
  std::ostringstream out;
  DiagEngine d(out);
  d.begin_target_group({"sm_80", "sm_90", "sm_90a", "hip"});
  SourceLoc none;
  d.error(none, "sm_80: gemm does not tile");
  d.note(none, "BM candidates for target 'sm_80': {16}");
  d.warning(none, "a warning in between");
  d.error(none, "sm_90: gemm does not tile");
  d.note(none, "BM candidates for target 'sm_90': {16}");
  d.error(none, "sm_90a: gemm does not tile");
  d.note(none, "BM candidates for target 'sm_90a': {32}"); // differs: its own error
  d.error(none, "hip: gemm does not tile");
  d.note(none, "BM candidates for target 'hip': {16}");
  d.error(none, "not about a target");
  EXPECT_EQ(out.str(), ""); // held back until the group ends
  EXPECT_TRUE(d.has_errors());
  EXPECT_EQ(d.error_count(), 5);
  d.end_target_group();
  EXPECT_EQ(out.str(), "error: sm_80, sm_90, hip: gemm does not tile\n"
                       "note: BM candidates for targets 'sm_80', 'sm_90', 'hip': {16}\n"
                       "warning: a warning in between\n"
                       "error: sm_90a: gemm does not tile\n"
                       "note: BM candidates for target 'sm_90a': {32}\n"
                       "error: not about a target\n");
  EXPECT_EQ(d.error_count(), 3);
  // After the group, errors print at once again.
  d.error(none, "sm_80: later");
  EXPECT_NE(out.str().find("error: sm_80: later\n"), std::string::npos);
}

TEST(Diagnostics, TargetGroupMergesErrorsThatNameTheirTargetInside) {
  std::ostringstream out;
  DiagEngine d(out);
  d.begin_target_group({"wgsl", "wgsl_f16", "wgsl_subgroups", "metal"});
  SourceLoc none;
  d.error(none, "kernel 'k' needs 32768 B, more than the 16384 B of target 'wgsl' (smaller tiles)");
  d.error(none, "target 'wgsl': kernel 'k' uses f64");
  d.error(none, "kernel 'k' needs 32768 B, more than the 16384 B of target 'wgsl_f16' (smaller tiles)");
  d.error(none, "target 'wgsl_f16': kernel 'k' uses f64");
  d.error(none, "kernel 'k' needs 16384 B, more than the 16384 B of target 'wgsl_subgroups' (smaller tiles)");
  d.error(none, "kernel 'k' needs 65536 B, more than the 32768 B of target 'metal'");
  d.error(none, "targets 'wgsl' and 'metal' cannot share a library"); // two targets: as it is
  d.end_target_group();
  EXPECT_EQ(out.str(),
            "error: kernel 'k' needs 32768 B, more than the 16384 B of targets 'wgsl', 'wgsl_f16' "
            "(smaller tiles)\n"
            "error: targets 'wgsl', 'wgsl_f16': kernel 'k' uses f64\n"
            "error: kernel 'k' needs 16384 B, more than the 16384 B of target 'wgsl_subgroups' "
            "(smaller tiles)\n"
            "error: kernel 'k' needs 65536 B, more than the 32768 B of target 'metal'\n"
            "error: targets 'wgsl' and 'metal' cannot share a library\n");
  EXPECT_EQ(d.error_count(), 5);
}

TEST(Diagnostics, ClosestName) {
  EXPECT_EQ(closest_name("A_S", {"A_s", "B_s", "acc"}), "A_s");
  EXPECT_EQ(closest_name("f23", {"f32", "f16", "bf16"}), "f32");
  EXPECT_EQ(closest_name("acess", {"type", "shape", "access"}), "access");
  EXPECT_EQ(closest_name("expp", {"exp", "exp2"}), "exp");
  EXPECT_EQ(closest_name("summary", {"summary"}), ""); // itself is not a suggestion
  EXPECT_EQ(closest_name("x", {"y", "z"}), "");        // too short to guess
  EXPECT_EQ(closest_name("threads", {"M", "N", "K"}), "");
  EXPECT_EQ(closest_name("", {"a"}), "");
  // Ties go to the lexicographically smallest candidate, whatever the input order.
  EXPECT_EQ(closest_name("Bx", {"By", "Bm"}), closest_name("Bx", {"Bm", "By"}));
}
