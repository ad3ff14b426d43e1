// The sm_90a panel swizzles (passes/LayoutInference.h, kPanelSwizzles): which width layout
// inference picks for a shared wgmma operand, the table's hardware facts, and that the element
// swizzle thread-written fills use is the byte-address swizzle TMA boxes and wgmma
// descriptors use (PTX ISA 9.7.15.5.1: chunk bits [4, 4 + b) XOR row bits [7, 7 + b)).
#include "passes/LayoutInference.h"
#include "passes/Pipeline.h"
#include "spec/Frontend.h"
#include "support/InternalError.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

using namespace tilegen;

namespace {

// The swizzle as the hardware defines it, on the byte offset inside a 1024-byte-aligned region.
int64_t hw_swizzle(int64_t byte, int xor_bits) {
  const int64_t mask = (int64_t(1) << xor_bits) - 1;
  return byte ^ (((byte >> 7) & mask) << 4);
}

} // namespace

TEST(PanelSwizzle, PicksTheWidestWidthDividingTheRow) {
  auto bytes = [](int64_t row) {
    const passes::PanelSwizzle* m = passes::panel_swizzle_for(row);
    return m ? m->bytes : 0;
  };
  EXPECT_EQ(bytes(128), 128); // bf16 BK 64, FP8 BK 128: the shipped tiles
  EXPECT_EQ(bytes(512), 128); // N-major bf16 B of 256 columns: four 128-byte panels
  EXPECT_EQ(bytes(64), 64);   // bf16 BK 32, FP8 BK 64
  EXPECT_EQ(bytes(192), 64);  // 96 bf16 columns: three 64-byte panels, not 128 + 64
  EXPECT_EQ(bytes(32), 32);   // bf16 BK 16, FP8 BK 32
  EXPECT_EQ(bytes(96), 32);   // 48 bf16 columns
  EXPECT_EQ(bytes(16), 0);    // one 16-byte chunk: no swizzle mode, stays on mma.sync
  EXPECT_EQ(bytes(80), 0);
  EXPECT_EQ(bytes(0), 0);
  EXPECT_EQ(bytes(-64), 0);
}

TEST(PanelSwizzle, TableHoldsTheHardwareFacts) {
  // PTX ISA "Matrix Descriptor Format": bits 62-63 = 1 (128 B), 2 (64 B), 3 (32 B); atoms of 8
  // rows starting on 1024-, 512-, 256-byte boundaries.
  const struct {
    int64_t bytes, atom;
    int bits, desc;
    const char* tma;
  } want[] = {{128, 1024, 3, 1, "CU_TENSOR_MAP_SWIZZLE_128B"},
              {64, 512, 2, 2, "CU_TENSOR_MAP_SWIZZLE_64B"},
              {32, 256, 1, 3, "CU_TENSOR_MAP_SWIZZLE_32B"}};
  for (const auto& w : want) {
    const passes::PanelSwizzle& m = passes::panel_swizzle_of(w.bytes);
    EXPECT_EQ(m.bytes, w.bytes);
    EXPECT_EQ(m.atom_bytes, 8 * m.bytes) << w.bytes;
    EXPECT_EQ(m.atom_bytes, w.atom);
    EXPECT_EQ(int64_t(16) << m.xor_bits, m.bytes) << w.bytes;
    EXPECT_EQ(m.xor_bits, w.bits);
    EXPECT_EQ(m.desc_layout, w.desc);
    EXPECT_STREQ(m.tma, w.tma);
  }
  EXPECT_THROW(passes::panel_swizzle_of(48), InternalError);
}

TEST(PanelSwizzle, ElementSwizzleIsTheByteAddressSwizzle) {
  for (const passes::PanelSwizzle& m : passes::kPanelSwizzles)
    for (int eb : {1, 2}) {
      const layout::Swizzle sw = passes::panel_element_swizzle(m, eb);
      EXPECT_EQ(sw.B, m.xor_bits);
      EXPECT_EQ(sw.S, 3);
      const int64_t per_row = m.bytes / eb, rows = 32; // four atoms
      std::set<int64_t> seen;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < per_row; ++c) {
          const int64_t o = r * per_row + c, byte = o * eb;
          const int64_t got = sw.apply(o) * eb;
          ASSERT_EQ(got, hw_swizzle(byte, m.xor_bits))
              << m.bytes << "-byte panel, " << eb << "-byte elements, row " << r << " col " << c;
          // docs/hopper.md's closed form: chunk k of row r lands at k ^ (r W / 128 mod W / 16).
          const int64_t chunk = c * eb / 16, lands = chunk ^ (r * m.bytes / 128 % (m.bytes / 16));
          EXPECT_EQ(got, r * m.bytes + lands * 16 + byte % 16);
          // It stays inside its row's atom and is a permutation.
          EXPECT_EQ(got / m.atom_bytes, byte / m.atom_bytes);
          EXPECT_TRUE(seen.insert(got).second);
        }
    }
}

namespace {

const char* kGemm = R"yaml(kernel: g
summary: C = A @ B (or A @ B^T for FP8) with one pinned tile
types: {T: [TYPES]}
params: {M: dim, N: dim, K: dim}
tensors:
  A: {type: T, shape: [M, K]}
  B: {type: T, shape: [BSHAPE]}
  C: {type: f32, shape: [M, N], access: write}
schedule: {BM: [128], BN: [BNV], BK: [BKV], stages: [4], threads: [256]}
grid: {bx: "cdiv(N, BN)", by: "cdiv(M, BM)"}
threads: threads
body:
  - shared: {A_s: [T, BM, BK], B_s: [T, BSHARED]}
  - fragment: {acc: [f32, BM, BN]}
  - fill: {dst: acc, value: 0}
  - pipelined: {var: k, extent: "cdiv(K, BK)", stages: stages}
    body:
      - copy: {src: "A[by * BM, k * BK]", dst: A_s}
      - copy: {src: "BSRC", dst: B_s}
      - gemm: {a: A_s, b: B_s, c: acc, transpose_b: TRANS}
  - copy: {src: acc, dst: "C[by * BM, bx * BN]"}
)yaml";

struct Case {
  passes::LayoutPlan plan;
  std::map<std::string, const ir::Buffer*> shared;
  std::vector<passes::GemmPlan::Kind> kinds;
  ir::Kernel kernel; // owns the buffers the plan points to
};

Case plan_gemm(const std::string& type, int bn, int bk) {
  const bool fp8 = type == "e4m3";
  std::string s = kGemm;
  auto put = [&](const std::string& key, const std::string& v) {
    for (size_t at; (at = s.find(key)) != std::string::npos;)
      s.replace(at, key.size(), v);
  };
  put("TYPES", type);
  put("BNV", std::to_string(bn));
  put("BKV", std::to_string(bk));
  put("BSHAPE", fp8 ? "N, K" : "K, N");
  put("BSHARED", fp8 ? "BN, BK" : "BK, BN");
  put("BSRC", fp8 ? "B[bx * BN, k * BK]" : "B[k * BK, bx * BN]");
  put("TRANS", fp8 ? "true" : "false");
  std::ostringstream out;
  DiagEngine diag(out);
  auto ks = spec::load_kernels_from_text("g.yaml", s, diag);
  EXPECT_TRUE(ks) << out.str();
  Case c;
  if (!ks)
    return c;
  auto inst = passes::enumerate_instances(ks->at(0)).at(0);
  auto ik = passes::instantiate(ks->at(0), inst, *find_target("sm_90a"), diag);
  EXPECT_TRUE(ik) << out.str();
  if (!ik)
    return c;
  c.kernel = *ik;
  auto plan = passes::infer_layouts(c.kernel, *find_target("sm_90a"), diag);
  EXPECT_TRUE(plan) << out.str();
  if (!plan)
    return c;
  c.plan = *plan;
  for (const auto& [b, pc] : c.plan.panels)
    c.shared[b->name] = b;
  for (const auto& [st, gp] : c.plan.gemms)
    c.kinds.push_back(gp.kind);
  return c;
}

int64_t width(const Case& c, const std::string& buf) {
  auto it = c.shared.find(buf);
  if (it == c.shared.end())
    return 0;
  const passes::PanelSwizzle* m = c.plan.panel_swizzles.at(it->second);
  EXPECT_EQ(c.plan.panels.at(it->second) * it->second->dtype.bytes(), m->bytes) << buf;
  EXPECT_EQ(c.plan.swizzles.at(it->second),
            passes::panel_element_swizzle(*m, it->second->dtype.bytes()))
      << buf;
  return m->bytes;
}

} // namespace

TEST(PanelSwizzle, Bf16Bk64KeepsTheShipped128BytePanels) {
  Case c = plan_gemm("bf16", 128, 64);
  EXPECT_EQ(c.kinds, std::vector{passes::GemmPlan::Wgmma});
  EXPECT_EQ(width(c, "A_s"), 128);
  EXPECT_EQ(width(c, "B_s"), 128); // N-major, 128 columns: two panels
  EXPECT_EQ(c.plan.tma_loops.size(), 1u);
}

TEST(PanelSwizzle, Bf16Bk32Takes64ByteKMajorPanels) {
  Case c = plan_gemm("bf16", 128, 32);
  EXPECT_EQ(c.kinds, std::vector{passes::GemmPlan::Wgmma});
  EXPECT_EQ(width(c, "A_s"), 64);
  EXPECT_EQ(width(c, "B_s"), 128);
  EXPECT_EQ(c.plan.swizzles.at(c.shared.at("A_s")), (layout::Swizzle{2, 3, 3}));
  EXPECT_EQ(c.plan.tma_loops.size(), 1u);
}

TEST(PanelSwizzle, Bf16Bk16AndBn96Take32And64BytePanels) {
  Case c = plan_gemm("bf16", 96, 16);
  EXPECT_EQ(c.kinds, std::vector{passes::GemmPlan::Wgmma});
  EXPECT_EQ(width(c, "A_s"), 32);
  EXPECT_EQ(width(c, "B_s"), 64); // N-major, 96 columns: three 64-byte panels
  EXPECT_EQ(c.plan.swizzles.at(c.shared.at("A_s")), (layout::Swizzle{1, 3, 3}));
}

TEST(PanelSwizzle, Fp8Bk64And32TakeNarrowPanels) {
  Case c64 = plan_gemm("e4m3", 128, 64);
  EXPECT_EQ(c64.kinds, std::vector{passes::GemmPlan::Wgmma});
  EXPECT_EQ(width(c64, "A_s"), 64);
  EXPECT_EQ(width(c64, "B_s"), 64);
  EXPECT_EQ(c64.plan.swizzles.at(c64.shared.at("B_s")), (layout::Swizzle{2, 4, 3}));
  Case c32 = plan_gemm("e4m3", 256, 32);
  EXPECT_EQ(c32.kinds, std::vector{passes::GemmPlan::Wgmma});
  EXPECT_EQ(width(c32, "A_s"), 32);
  EXPECT_EQ(width(c32, "B_s"), 32);
}

TEST(PanelSwizzle, RowsOfNoSwizzleWidthKeepTheSm80Lowering) {
  // B [32, 40] N-major: 80-byte rows are no whole number of 32-byte panels, so no wgmma (and
  // N 40 is no multiple of mma.sync's warp tiles either: FMA tiles).
  Case c = plan_gemm("bf16", 40, 32);
  ASSERT_EQ(c.kinds.size(), 1u);
  EXPECT_NE(c.kinds[0], passes::GemmPlan::Wgmma);
  EXPECT_TRUE(c.plan.panels.empty());
  EXPECT_TRUE(c.plan.tma_loops.empty());
}
