// Property tests of the layout algebra (generator/layout/Layout.h): every layout covers its
// tile exactly (replication times), derived layouts agree with their parents, and the
// swizzles make the shared-memory access patterns of ldmatrix and cp.async conflict-free.
#include "layout/Layout.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <tuple>

using namespace tilegen::layout;

namespace {

// How many (thread, register) pairs hold each element; checks coordinates are in range.
std::map<std::vector<int64_t>, int> coverage(const FragmentLayout& l) {
  std::map<std::vector<int64_t>, int> seen;
  for (int64_t t = 0; t < l.threads(); ++t) {
    std::vector<int64_t> regs(l.rank(), 0);
    for (int64_t r = 0; r < l.num_regs(); ++r) {
      int64_t rest = r;
      std::vector<int64_t> c(l.rank());
      for (size_t d = l.rank(); d-- > 0;) {
        int64_t rd = rest % l.regs_of_dim(d);
        rest /= l.regs_of_dim(d);
        c[d] = l.thread_coord(d, t) + l.reg_coord(d, rd);
        EXPECT_GE(c[d], 0);
        EXPECT_LT(c[d], l.shape[d]) << l.str();
      }
      ++seen[c];
    }
  }
  return seen;
}

void expect_exact_cover(const FragmentLayout& l) {
  auto seen = coverage(l);
  int64_t elems = 1;
  for (int64_t s : l.shape)
    elems *= s;
  EXPECT_EQ(static_cast<int64_t>(seen.size()), elems) << l.str();
  for (const auto& [c, n] : seen)
    ASSERT_EQ(n, l.replication()) << l.str();
}

} // namespace

TEST(LayoutTest, MmaAccumulatorCoversTileOnce) {
  for (auto [M, N, WM, WN] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{
           {16, 8, 1, 1}, {64, 64, 2, 2}, {128, 128, 2, 2}, {128, 256, 2, 4}, {64, 128, 4, 1}}) {
    auto l = mma_m16n8k16_accumulator(M, N, WM, WN);
    EXPECT_EQ(l.threads(), 32 * WM * WN);
    EXPECT_EQ(l.replication(), 1);
    EXPECT_EQ(l.num_regs(), M * N / (32 * WM * WN));
    expect_exact_cover(l);
  }
}

TEST(LayoutTest, MmaAccumulatorMatchesThePtxFragment) {
  // PTX ISA, mma.m16n8k16 f32 accumulators: lane = 4 g + t holds c0, c1 at (g, 2t), (g, 2t+1)
  // and c2, c3 at (g + 8, 2t), (g + 8, 2t + 1).
  auto l = mma_m16n8k16_accumulator(16, 8, 1, 1);
  for (int64_t lane = 0; lane < 32; ++lane) {
    int64_t g = lane / 4, t = lane % 4;
    // registers are (h, e) with h the row half: index h * 2 + e
    EXPECT_EQ(l.thread_coord(0, lane) + l.reg_coord(0, 0), g);
    EXPECT_EQ(l.thread_coord(0, lane) + l.reg_coord(0, 1), g + 8);
    EXPECT_EQ(l.thread_coord(1, lane) + l.reg_coord(1, 0), 2 * t);
    EXPECT_EQ(l.thread_coord(1, lane) + l.reg_coord(1, 1), 2 * t + 1);
  }
}

TEST(LayoutTest, SimdgroupMatrixMatchesAppleStorageOrder) {
  // Metal simdgroup_matrix 8x8 (docs/metal.md): with q = lane / 4, lane holds row
  // (q & 4) + (lane / 2) % 4 and columns (q & 2) * 2 + (lane % 2) * 2 + {0, 1} -- the quad form
  // MLX's BaseMMAFrag::get_coord computes, written here independently of Layout.cpp.
  auto l = simdgroup_matrix_8x8();
  EXPECT_EQ(l.threads(), 32);
  EXPECT_EQ(l.num_regs(), 2);
  expect_exact_cover(l);
  for (int64_t lane = 0; lane < 32; ++lane) {
    const int64_t q = lane / 4;
    const int64_t row = (q & 4) + (lane / 2) % 4, col = (q & 2) * 2 + (lane % 2) * 2;
    EXPECT_EQ(l.thread_coord(0, lane), row) << lane;
    for (int64_t e = 0; e < 2; ++e)
      EXPECT_EQ(l.thread_coord(1, lane) + l.reg_coord(1, e), col + e) << lane;
  }
}

TEST(LayoutTest, SimdgroupAccumulatorCoversTileOnce) {
  for (auto [M, N, WM, WN] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{
           {8, 8, 1, 1}, {16, 16, 1, 1}, {64, 64, 2, 2}, {16, 128, 1, 1}, {128, 64, 4, 1}, {32, 64, 1, 2}}) {
    auto l = simdgroup_accumulator(M, N, WM, WN);
    EXPECT_EQ(l.threads(), 32 * WM * WN);
    EXPECT_EQ(l.replication(), 1);
    EXPECT_EQ(l.num_regs(), M * N / (32 * WM * WN));
    expect_exact_cover(l);
  }
  // Register (i, e + 2 j) of lane l in SIMD-group (sm, sn) is element e of the lane's pair in
  // 8x8 matrix (i, j) of that SIMD-group's (M / WM) x (N / WN) tile (MslOps.cpp relies on it).
  const int64_t M = 32, N = 64, WM = 2, WN = 2, TI = M / WM / 8, TJ = N / WN / 8;
  auto l = simdgroup_accumulator(M, N, WM, WN);
  auto atom = simdgroup_matrix_8x8();
  for (int64_t t = 0; t < 32 * WM * WN; ++t) {
    const int64_t lane = t % 32, sm = (t / 32) % WM, sn = t / 32 / WM;
    for (int64_t i = 0; i < TI; ++i)
      for (int64_t j = 0; j < TJ; ++j)
        for (int64_t e = 0; e < 2; ++e) {
          EXPECT_EQ(l.thread_coord(0, t) + l.reg_coord(0, i),
                    sm * (M / WM) + 8 * i + atom.thread_coord(0, lane));
          EXPECT_EQ(l.thread_coord(1, t) + l.reg_coord(1, e + 2 * j),
                    sn * (N / WN) + 8 * j + atom.thread_coord(1, lane) + e);
        }
  }
}

TEST(LayoutTest, SimtAndElementwiseCoverTileOnce) {
  expect_exact_cover(simt_accumulator(64, 64, 16, 8));
  expect_exact_cover(simt_accumulator(128, 128, 16, 16));
  for (auto [M, N, T, V] : std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>>{
           {1, 2048, 256, 8}, {4, 1024, 128, 8}, {8, 1024, 256, 4}, {2, 256, 256, 8}, {16, 32, 128, 4}})
    expect_exact_cover(elementwise({M, N}, T, V));
  expect_exact_cover(elementwise({2048}, 256, 8));
}

TEST(LayoutTest, ElementwiseGivesEachThreadConsecutiveVectors) {
  auto l = elementwise({1, 2048}, 256, 8);
  ASSERT_FALSE(l.regs[1].empty());
  EXPECT_EQ(l.regs[1][0], (RegMode{8, 1})); // 8 bf16 = one 16-byte access
  // lanes of a warp are side by side: lane k starts at 8 k
  for (int64_t lane = 0; lane < 32; ++lane)
    EXPECT_EQ(l.thread_coord(1, lane), 8 * lane);
}

TEST(LayoutTest, SmallVectorIsReplicated) {
  // 64 elements over 128 threads: each element is held by two threads.
  auto l = elementwise({64}, 128, 4);
  EXPECT_EQ(l.replication(), 2);
  expect_exact_cover(l);
}

// Every shape and block size has an elementwise layout (layout inference never fails on a
// shape): odd extents, fewer elements than threads, warp counts that are no power of two
// (384 threads = 12 warps), columns that 32 lanes do not divide. Each element is held by the
// same number of threads, the modes multiply to the block, and lane modes stay powers of two
// inside the warp (the reductions' shuffles need that).
TEST(LayoutTest, ElementwiseExistsForEveryShapeAndBlock) {
  const std::vector<int64_t> extents = {1, 2, 3, 7, 12, 32, 48, 100, 192};
  const std::vector<int64_t> columns = {1, 3, 12, 48, 100};
  const std::vector<int64_t> blocks = {32, 96, 128, 384};
  int checked = 0;
  for (int64_t T : blocks)
    for (int64_t V : {1, 4, 8})
      for (int64_t M : extents) {
        auto one = elementwise({M}, T, V);
        EXPECT_EQ(one.threads(), T) << one.str();
        expect_exact_cover(one);
        for (int64_t N : columns) {
          auto l = elementwise({M, N}, T, V);
          EXPECT_EQ(l.threads(), T) << l.str();
          expect_exact_cover(l);
          int64_t prod = 1;
          for (const auto& m : l.thread_modes) {
            if (prod < 32) {
              EXPECT_EQ(m.size & (m.size - 1), 0) << "lane mode not a power of two: " << l.str();
              EXPECT_EQ(32 % (prod * m.size) == 0 || (prod * m.size) % 32 == 0, true)
                  << "mode straddles lanes and warps: " << l.str();
            }
            prod *= m.size;
          }
          ++checked;
        }
      }
  EXPECT_EQ(checked, 4 * 3 * 9 * 5);
}

// The shapes the issue named: 12 warps over [192, 32] (a SIGFPE before), BN 48 and 100.
TEST(LayoutTest, ElementwiseOddBlocksKeepWholeRowsWhereTheyCan) {
  auto l = elementwise({192, 32}, 384, 4);
  EXPECT_EQ(l.replication(), 1) << l.str();
  EXPECT_EQ(l.num_regs(), 192 * 32 / 384) << l.str();
  expect_exact_cover(elementwise({64, 48}, 128, 4));
  expect_exact_cover(elementwise({64, 100}, 256, 4));
}

TEST(LayoutTest, DropDimKeepsTheRowMapAndReplicates) {
  auto acc = mma_m16n8k16_accumulator(64, 64, 4, 1);
  auto row = acc.drop_dim(1);
  EXPECT_EQ(row.rank(), 1u);
  EXPECT_EQ(row.dim_map(0), acc.dim_map(0));
  EXPECT_EQ(row.replication(), 4); // the 4 lanes of a row group hold the same row value
  expect_exact_cover(row);
}

TEST(LayoutTest, FromDimMapsRebuildsTheLayout) {
  auto acc = mma_m16n8k16_accumulator(128, 64, 2, 2);
  std::vector<std::string> names;
  for (const auto& m : acc.thread_modes)
    names.push_back(m.name);
  auto again = FragmentLayout::from_dim_maps({acc.dim_map(0), acc.dim_map(1)}, names, acc.shape, "copy");
  EXPECT_EQ(again.thread_modes, acc.thread_modes);
  EXPECT_EQ(again.regs, acc.regs);
}

// ---- swizzles ------------------------------------------------------------------------------

TEST(SwizzleTest, IsABijectionThatKeepsChunksWhole) {
  for (auto [cols, eb] : std::vector<std::pair<int64_t, int>>{{32, 2}, {64, 2}, {128, 2}, {16, 2}, {32, 4}, {64, 4}}) {
    Swizzle s = ldmatrix_swizzle(cols, eb);
    int64_t n = 64 * cols, per_chunk = 16 / eb;
    std::set<int64_t> out;
    for (int64_t o = 0; o < n; ++o) {
      int64_t p = s.apply(o);
      out.insert(p);
      EXPECT_EQ(p % per_chunk, o % per_chunk) << s.str(); // within-chunk order kept
      EXPECT_EQ(p / cols, o / cols) << "rows stay rows: " << s.str();
    }
    EXPECT_EQ(static_cast<int64_t>(out.size()), n) << s.str();
  }
}

namespace {
// Wavefronts of one ldmatrix 8x8 matrix (8 rows of 16 bytes) at rows r0..r0+7, column col.
int ldmatrix_wavefronts(const Swizzle& s, int64_t cols, int eb, int64_t r0, int64_t col) {
  std::vector<int64_t> addr;
  for (int64_t r = r0; r < r0 + 8; ++r)
    addr.push_back(s.apply(r * cols + col) * eb);
  return wavefronts(addr, 16);
}
} // namespace

TEST(SwizzleTest, LdmatrixRowsAreConflictFree) {
  // Row lengths of the shipped configs: BK = 32/64 of 16-bit A tiles, BN = 64/128 of B tiles,
  // D = 64/128 of attention tiles.
  for (int64_t cols : {32, 64, 128, 256}) {
    Swizzle s = ldmatrix_swizzle(cols, 2);
    for (int64_t r0 = 0; r0 < 64; r0 += 8)
      for (int64_t col = 0; col < cols; col += 8)
        EXPECT_EQ(ldmatrix_wavefronts(s, cols, 2, r0, col), 1)
            << s.str() << " cols " << cols << " rows " << r0 << " col " << col;
  }
}

TEST(SwizzleTest, WithoutSwizzleLdmatrixConflicts) {
  // The reason swizzles exist: 8 rows of 128 bytes at the same column hit the same banks.
  EXPECT_EQ(ldmatrix_wavefronts(Swizzle{}, 64, 2, 0, 0), 8);
  EXPECT_EQ(ldmatrix_wavefronts(Swizzle{}, 32, 2, 0, 0), 4);
}

TEST(SwizzleTest, CpAsyncChunkStoresAreConflictFree) {
  // The tile copy gives thread q the chunk q of the row-major tile; 8 threads per wavefront.
  for (int64_t cols : {32, 64, 128}) {
    Swizzle s = ldmatrix_swizzle(cols, 2);
    int64_t chunks_per_row = cols / 8;
    for (int64_t q0 = 0; q0 < 256; q0 += 8) {
      std::vector<int64_t> addr;
      for (int64_t q = q0; q < q0 + 8; ++q)
        addr.push_back(s.apply((q / chunks_per_row) * cols + (q % chunks_per_row) * 8) * 2);
      EXPECT_EQ(wavefronts(addr, 16), 1) << s.str();
    }
  }
}

TEST(SwizzleTest, ParametersOfTheShippedShapes) {
  EXPECT_EQ(ldmatrix_swizzle(64, 2), (Swizzle{3, 3, 3}));  // 128-byte rows: chunk ^= row % 8
  EXPECT_EQ(ldmatrix_swizzle(32, 2), (Swizzle{2, 3, 3}));  // 64-byte rows: chunk ^= (row / 2) % 4
  EXPECT_EQ(ldmatrix_swizzle(128, 2), (Swizzle{3, 3, 4})); // 256-byte rows
  EXPECT_EQ(ldmatrix_swizzle(8, 2).B, 0);                  // one chunk per row: nothing to do
}
