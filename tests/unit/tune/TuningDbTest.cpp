// generator/tune: the tuning database's reader and writer, merging, the spec hash, and the
// candidate list of a C target (docs/tune.md).
#include "tune/Candidates.h"
#include "tune/TuneHarness.h"
#include "tune/TuningDb.h"

#include "passes/Pipeline.h"
#include "passes/ScheduleResolver.h"
#include "spec/Frontend.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

using namespace tilegen;
using namespace tilegen::tune;

namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TuningEntry entry(std::string kernel, std::string inst, std::string cls, int64_t bn) {
  TuningEntry e;
  e.key = {std::move(kernel), std::move(inst), "c_avx512", std::move(cls)};
  e.spec_hash = "fnv1a64:0123456789abcdef";
  e.config = {{"BM", 2}, {"BN", bn}};
  e.shapes = {"M=64 N=256"};
  return e;
}

// The first kernel of a spec given as text.
ir::Kernel kernel_of(const std::string& text) {
  std::ostringstream sink;
  DiagEngine diag(sink);
  auto ks = spec::load_kernels_from_text("t.yaml", text, diag);
  EXPECT_TRUE(ks && !ks->empty()) << sink.str();
  return ks->front();
}

const char* kSpec = R"SPEC(kernel: rowscale
summary: Y = 2 X
types:
  T: [f32]
params:
  M: dim
  N: dim
tensors:
  X: {type: T, shape: [M, N]}
  Y: {type: T, shape: [M, N], access: write}
schedule:
  BM: [1, 2, 4]
  BN: [64, 128]
grid: {bx: "cdiv(M, BM)", by: "cdiv(N, BN)"}
body:
  - fragment: {x: [f32, BM, BN]}
  - copy: {src: "X[bx * BM, by * BN]", dst: x}
  - parallel: {i: BM, j: BN}
    body:
      - "x[i, j] = x[i, j] * 2.0"
  - copy: {src: x, dst: "Y[bx * BM, by * BN]"}
)SPEC";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

} // namespace

TEST(TuningDb, WriteIsSortedAndReadsBack) {
  TuningDb db;
  db.entries = {entry("softmax", "f32", "large", 1024), entry("rmsnorm", "bf16", "large", 2048),
                entry("softmax", "bf16", "large", 512)};
  std::string text = write_tuning_db(db);
  // Sorted by key: rmsnorm before softmax, bf16 before f32.
  EXPECT_LT(text.find("\"rmsnorm\""), text.find("\"softmax\""));
  EXPECT_LT(text.find("\"BN\": 512"), text.find("\"BN\": 1024"));
  EXPECT_EQ(text.find("time"), std::string::npos) << "no measured data in the database";

  std::ostringstream sink;
  DiagEngine diag(sink);
  auto back = read_tuning_db(temp_file("db.json", text), diag);
  ASSERT_TRUE(back) << sink.str();
  ASSERT_EQ(back->entries.size(), 3u);
  const TuningEntry* e = back->find({"softmax", "f32", "c_avx512", "large"});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->spec_hash, "fnv1a64:0123456789abcdef");
  ASSERT_EQ(e->config.size(), 2u);
  EXPECT_EQ(e->config[1], (std::pair<std::string, int64_t>{"BN", 1024}));
  EXPECT_EQ(e->shapes, std::vector<std::string>{"M=64 N=256"});
  EXPECT_EQ(e->loc.line, 23); // located: stale warnings point at the entry
  // Writing what was read gives the same bytes (the file is a function of its entries).
  EXPECT_EQ(write_tuning_db(*back), text);
}

TEST(TuningDb, MergeReplacesOnlyTheTunedEntries) {
  TuningDb db;
  db.entries = {entry("softmax", "f32", "large", 1024), entry("softmax", "bf16", "large", 512)};
  TuningDb merged = merge_tuning_db(db, {entry("softmax", "f32", "large", 2048),
                                         entry("rmsnorm", "f32", "large", 256)});
  ASSERT_EQ(merged.entries.size(), 3u);
  EXPECT_EQ(merged.find({"softmax", "f32", "c_avx512", "large"})->config[1].second, 2048);
  EXPECT_EQ(merged.find({"softmax", "bf16", "c_avx512", "large"})->config[1].second, 512);
  EXPECT_NE(merged.find({"rmsnorm", "f32", "c_avx512", "large"}), nullptr);
}

TEST(TuningDb, UnknownFormatAndVersionAreLocatedErrors) {
  struct Case {
    const char* text;
    const char* message;
    int line;
  } cases[] = {
      {"{\"format\": \"other\", \"version\": 1}\n", "not a tilegen tuning database", 1},
      {"{\n  \"format\": \"tilegen-tuning-db\",\n  \"version\": 2\n}\n",
       "tuning database version 2 is not supported", 3},
      {"{\"format\": \"tilegen-tuning-db\", \"version\": 1, \"entries\": [\n"
       " {\"kernel\": \"k\", \"instance\": \"f32\", \"target\": \"c\", \"class\": \"large\",\n"
       "  \"spec_hash\": \"md5:00\", \"config\": {}}]}\n",
       "\"spec_hash\" must be", 3},
      {"{\"format\": \"tilegen-tuning-db\", \"version\": 1, \"entries\": [\n"
       " {\"kernel\": \"k\", \"instance\": \"f32\", \"target\": \"c\", \"class\": \"large\",\n"
       "  \"spec_hash\": \"fnv1a64:0123456789abcdef\", \"config\": {\"BM\": 1}},\n"
       " {\"kernel\": \"k\", \"instance\": \"f32\", \"target\": \"c\", \"class\": \"large\",\n"
       "  \"spec_hash\": \"fnv1a64:0123456789abcdef\", \"config\": {\"BM\": 2}}]}\n",
       "second entry for k/f32/c/large", 4},
      {"[1, 2]\n", "a tuning database is a JSON object", 1},
  };
  for (const auto& c : cases) {
    std::ostringstream sink;
    DiagEngine diag(sink);
    EXPECT_FALSE(read_tuning_db(temp_file("bad.json", c.text), diag)) << c.text;
    ASSERT_FALSE(diag.diagnostics().empty());
    EXPECT_NE(diag.diagnostics().front().message.find(c.message), std::string::npos)
        << sink.str();
    EXPECT_EQ(diag.diagnostics().front().loc.line, c.line) << sink.str();
  }
}

TEST(SpecHash, CommentsWhitespaceAndKeyOrderDoNotChangeIt) {
  const std::string base = spec_hash(kernel_of(kSpec));
  EXPECT_EQ(base.rfind("fnv1a64:", 0), 0u);
  EXPECT_EQ(base.size(), 8u + 16u);
  std::string commented = replace(kSpec, "  BN: [64, 128]\n", "  # wider tiles later\n  BN: [64, 128]   # two\n\n");
  EXPECT_EQ(spec_hash(kernel_of(commented)), base);
  std::string reordered = replace(kSpec, "  BM: [1, 2, 4]\n  BN: [64, 128]\n",
                                  "  BM: [1,2,4]\n  BN: [64,   128]\n");
  EXPECT_EQ(spec_hash(kernel_of(reordered)), base);
  std::string summary = replace(kSpec, "summary: Y = 2 X", "summary: twice X");
  EXPECT_EQ(spec_hash(kernel_of(summary)), base);
}

TEST(SpecHash, AnythingCodegenReadsChangesIt) {
  const std::string base = spec_hash(kernel_of(kSpec));
  EXPECT_NE(spec_hash(kernel_of(replace(kSpec, "BN: [64, 128]", "BN: [64, 256]"))), base);
  EXPECT_NE(spec_hash(kernel_of(replace(kSpec, "  BN: [64, 128]\n",
                                        "  BN: [64, 128]\n  targets:\n    c_avx2: {BN: [64]}\n"))),
            base);
  EXPECT_NE(spec_hash(kernel_of(replace(kSpec, "* 2.0", "* 3.0"))), base);
  EXPECT_NE(spec_hash(kernel_of(replace(kSpec, "  N: dim\n", "  N: {dim: dynamic, multiple_of: 4}\n"))),
            base);
  EXPECT_NE(spec_hash(kernel_of(replace(kSpec, "  BN: [64, 128]\n",
                                        "  BN: [64, 128]\n  classes:\n    large: {shape: {M: 64}}\n"))),
            base);
}

TEST(Candidates, CTargetListIsTheRulesOrder) {
  ir::Kernel k = kernel_of(kSpec);
  std::ostringstream sink;
  DiagEngine diag(sink);
  const Target& t = *find_target("c_avx512");
  auto ranked = ranked_configurations(k, {}, t, "large", diag);
  ASSERT_TRUE(ranked) << sink.str();
  ASSERT_EQ(ranked->size(), 6u);
  auto choice = passes::resolve_schedule(k, {}, t, diag);
  ASSERT_TRUE(choice);
  EXPECT_EQ(ranked->front(), (std::vector<int64_t>{choice->values[0].second, choice->values[1].second}));
  EXPECT_EQ(*ranked, choice->ranked);
  // The spec has no gemm: the streaming rule's order (docs/spec.md "The tile-resolution
  // rule"): rows of the representative shape in the fewest tiles (BN 128) first, then the
  // largest footprint within a quarter of the budget.
  std::vector<std::string> order;
  for (const auto& v : *ranked)
    order.push_back(config_string(k, v));
  EXPECT_EQ(order, (std::vector<std::string>{"BM=4 BN=128", "BM=2 BN=128", "BM=1 BN=128",
                                             "BM=4 BN=64", "BM=2 BN=64", "BM=1 BN=64"}));
}

TEST(Candidates, TunedConfigReplacesTheRulesChoice) {
  ir::Kernel k = kernel_of(kSpec);
  std::ostringstream sink;
  DiagEngine diag(sink);
  const Target& t = *find_target("c");
  passes::TunedConfig tuned{{1, 64}, "a test"};
  passes::Instance inst{"f32", {}};
  auto ik = passes::instantiate(k, inst, t, diag, "large", nullptr, &tuned);
  ASSERT_TRUE(ik) << sink.str();
  EXPECT_EQ(ik->bindings.at("BM"), 1);
  EXPECT_EQ(ik->bindings.at("BN"), 64);
  bool noted = false;
  for (const auto& n : ik->notes)
    noted = noted || n.find("configuration of a test") != std::string::npos;
  EXPECT_TRUE(noted);
}

// Every element type has a fill and a read in the harness: unsigned tensors once produced
// `fill_(` (no suffix), a harness that did not compile, so every configuration was rejected.
TEST(TuneHarness, EveryTensorTypeHasAFillAndARead) {
  const std::string spec = R"SPEC(kernel: widen
summary: O = u32(B) + u32(H) + W, O64 = u64(W)
params: {N: dim}
tensors:
  B: {type: u8, shape: [N]}
  H: {type: u16, shape: [N]}
  W: {type: u32, shape: [N]}
  O: {type: u32, shape: [N], access: write}
  O64: {type: u64, shape: [N], access: write}
schedule: {BN: [64]}
grid: {bx: "cdiv(N, BN)"}
body:
  - parallel: {i: BN}
    body:
      - "let j = bx * BN + i"
      - "O[j] = u32(B[j]) + u32(H[j]) + W[j]"
      - "O64[j] = u64(W[j])"
)SPEC";
  ir::Kernel k = kernel_of(spec);
  HarnessSpec h;
  h.kernel = &k;
  h.instance = passes::Instance{"default", {}};
  h.ref_lib = "ref";
  h.cand_lib = "cand";
  h.shapes = {{100}};
  std::string error;
  const std::string src = harness_source(h, error);
  ASSERT_FALSE(src.empty()) << error;
  for (const char* f : {"fill_u8((void*)", "fill_u16((void*)", "fill_u32((void*)", "get_u32,", "get_u64,"})
    EXPECT_NE(src.find(f), std::string::npos) << f;
  EXPECT_EQ(src.find("fill_((void*)"), std::string::npos);
  EXPECT_EQ(src.find("get_,"), std::string::npos);
}
