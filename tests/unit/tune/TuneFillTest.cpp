// tune/TuneFill: `tilegen tune --fill TENSOR=EXPR` (docs/tune.md): the spec's integer
// semantics, the element's index names, the checks and the bytes the harness reads.
#include "tune/TuneFill.h"

#include "spec/Frontend.h"
#include "tune/TuneHarness.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tilegen;
using namespace tilegen::tune;

namespace {

const char* kSpec = R"SPEC(kernel: gather
summary: Y[b, :] = X[idx[b, 0], :] (a row gather with an index tensor)
params:
  B: dim
  R: dim
  N: dim
  W: {values: [4]}
tensors:
  X: {type: f32, shape: [R, N]}
  idx: {type: i32, shape: [B, W]}
  small: {type: u8, shape: [B]}
  Y: {type: f32, shape: [B, N], access: write}
schedule: {BN: [64]}
grid: {bx: B, by: "cdiv(N, BN)"}
body:
  - fragment: {x: [f32, 1, BN]}
  - copy: {src: "X[idx[bx, 0], by * BN]", dst: x}
  - copy: {src: x, dst: "Y[bx, by * BN]"}
)SPEC";

struct Fixture {
  std::ostringstream sink;
  DiagEngine diag{sink};
  ir::Kernel k;
  Fixture() {
    auto ks = spec::load_kernels_from_text("t.yaml", kSpec, diag);
    EXPECT_TRUE(ks && !ks->empty()) << sink.str();
    k = ks->front();
  }
  // The values of `arg` at B=3 R=10 N=64, W=4; empty after an error (in sink).
  std::vector<int64_t> eval(const std::string& arg) {
    auto f = parse_fill(arg, 1, diag);
    if (!f || !check_fill(*f, k, diag))
      return {};
    std::vector<int64_t> v;
    if (!eval_fill(*f, k, {{"B", 3}, {"R", 10}, {"N", 64}, {"W", 4}}, v, diag))
      return {};
    return v;
  }
};

} // namespace

TEST(TuneFill, ElementIndexAndDimsRowMajor) {
  Fixture f;
  auto v = f.eval("idx=i0 * W + i1");
  ASSERT_EQ(v.size(), 12u) << f.sink.str();
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(v[i], i);
  v = f.eval("idx = (i0 * W + i1) * 7 % R");
  ASSERT_EQ(v.size(), 12u);
  EXPECT_EQ(v[11], 11 * 7 % 10);
}

TEST(TuneFill, SpecIntegerSemantics) {
  Fixture f;
  // floor division and modulo, cdiv, a zero divisor, shifts past the width, min/max/abs, ?:
  const std::pair<const char*, int64_t> cases[] = {
      {"small=-7 / 2 + 10", 6},  {"small=-7 % 2", 1},         {"small=7 % -2 + 5", 4},
      {"small=cdiv(-7, 2) + 9", 6}, {"small=cdiv(7, 2)", 4},  {"small=5 / 0", 0},
      {"small=5 % 0", 5},        {"small=1 << 70", 0},        {"small=(-8 >> 100) + 2", 1},
      {"small=(1 << 3) | 1 ^ 3", 10}, {"small=~0 + 2", 1},     {"small=min(3, B) + max(1, 2)", 5},
      {"small=abs(-4)", 4},      {"small=B > 2 ? 9 : 8", 9}, {"small=B < 2 && 1 || 0", 0},
  };
  for (const auto& [text, want] : cases) {
    auto v = f.eval(text);
    ASSERT_EQ(v.size(), 3u) << text << "\n" << f.sink.str();
    EXPECT_EQ(v[0], want) << text;
  }
}

TEST(TuneFill, LocatedErrors) {
  const std::pair<const char*, const char*> cases[] = {
      {"idz=1", "has no tensor 'idz' (did you mean 'idx'?)"},
      {"X=1", "tensor 'X' holds f32; --fill gives the values of tensors of unpacked integer"},
      {"idx=i2", "unknown name 'i2' (did you mean 'i0'?); EXPR may use the kernel's dims and "
                 "value params (B, R, N, W) and the element's index on each axis (i0, i1)"},
      {"idx=idx[0, 0]", "'idx[...]' reads a tensor"},
      {"idx=1.5", "'1.5' is a float"},
      {"idx=exp(1)", "'exp' is not available in --fill"},
      {"idx=1 +", "expected an expression"},
      {"idx", "give TENSOR=EXPR"},
      {"small=256", "the value 256 of small[0] does not fit u8 [0, 255]"},
      {"small=-1", "the value -1 of small[0] does not fit u8"},
      {"idx=i1 + 9223372036854775807 + 1", "overflows 64 bits (9223372036854775807 + 1)"},
  };
  for (const auto& [text, want] : cases) {
    Fixture f;
    EXPECT_TRUE(f.eval(text).empty()) << text;
    EXPECT_NE(f.sink.str().find(want), std::string::npos) << text << "\n" << f.sink.str();
    EXPECT_NE(f.sink.str().find("--fill #1:1:"), std::string::npos) << f.sink.str(); // located
  }
}

TEST(TuneFill, BytesAreLittleEndianOfTheElementType) {
  EXPECT_EQ(fill_bytes({1, -2}, ir::DType::i32()), std::string("\x01\0\0\0\xfe\xff\xff\xff", 8));
  EXPECT_EQ(fill_bytes({258}, ir::DType::u16()), std::string("\x02\x01", 2));
  EXPECT_EQ(fill_bytes({7}, ir::DType::u8()), std::string("\x07", 1));
}

TEST(TuneFill, IndexTensorsAreFoundAndTheHarnessReadsTheirFile) {
  Fixture f;
  auto ix = index_tensors(f.k);
  ASSERT_EQ(ix.size(), 1u);
  EXPECT_EQ(ix[0].first->name, "idx");
  EXPECT_EQ(ix[0].second, "a copy's start index");
  HarnessSpec h;
  h.kernel = &f.k;
  h.instance = passes::Instance{"W4", {{"W", 4}}};
  h.ref_lib = "ref";
  h.cand_lib = "cand";
  h.shapes = {{3, 10, 64}};
  h.ref_cache_dir = "/w";
  h.filled = {"idx"};
  std::string error;
  const std::string src = harness_source(h, error);
  ASSERT_FALSE(src.empty()) << error;
  EXPECT_NE(src.find("cache_read(\"/w/fill_s0_idx.bin\", t_idx, 12ull * 4)"), std::string::npos);
  EXPECT_EQ(src.find("fill_i32((void*)t_idx"), std::string::npos);
  EXPECT_NE(src.find("fill_f32((void*)t_X"), std::string::npos);
}
