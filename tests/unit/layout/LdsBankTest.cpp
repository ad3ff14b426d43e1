// The AMD LDS bank model (layout/MatrixCore.h: LdsBankModel, lds_conflict_ways) and the LDS
// layouts LayoutInference picks for the MFMA/WMMA operand reads of HipGemm.cpp.
//
//  * The model on hand-computed cases: CDNA's ds_read_b128 lane groups (0-3 with 20-23, ...)
//    from the target table, 16-lane b64 phases, 32-lane b32 phases, broadcast of one word.
//  * Every (HIP target, matrix instruction, steps, operand orientation, buffer shape) the emitter
//    can meet in a 2-D operand tile of 16-bit values: the chosen layout's reads, enumerated here
//    lane by lane from the published operand mappings (not from matrix_core_operand_reads), are
//    conflict-free under the model, and the ldmatrix swizzle the HIP emitter used before is not
//    (a planted conflicting layout the check must reject).
//  * The shipped gemm kernels planned for gfx90a, gfx942 and gfx1100: every operand buffer's
//    swizzle in the plan has conflict-free reads.
#include "layout/MatrixCore.h"
#include "passes/LayoutInference.h"
#include "passes/Pipeline.h"
#include "spec/Frontend.h"
#include "targets/Target.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

using namespace tilegen;
using namespace tilegen::layout;

namespace {

LdsBankModel model_of(const char* target) {
  const Target* t = find_target(target);
  EXPECT_NE(t, nullptr);
  return {t->gpu.smem_banks, t->gpu.warp_size, t->hip.lds_b128_groups};
}

// Independent conflict count: per phase (lane groups written out here), per bank, distinct
// 4-byte words.
int ways_by_hand(const std::vector<std::vector<int>>& phases, const std::vector<int64_t>& addr,
                 int bytes, int banks) {
  int worst = 0;
  for (const auto& ph : phases) {
    std::map<int64_t, std::set<int64_t>> w;
    for (int l : ph)
      for (int b = 0; b < bytes; b += 4)
        w[((addr[l] + b) / 4) % banks].insert((addr[l] + b) / 4);
    for (auto& [bank, s] : w)
      worst = std::max(worst, static_cast<int>(s.size()));
  }
  return worst;
}

std::vector<std::vector<int>> cdna_b128_phases() {
  const int g[4][8] = {{0, 1, 2, 3, 20, 21, 22, 23},
                       {4, 5, 6, 7, 16, 17, 18, 19},
                       {8, 9, 10, 11, 28, 29, 30, 31},
                       {12, 13, 14, 15, 24, 25, 26, 27}};
  std::vector<std::vector<int>> p;
  for (int half : {0, 32})
    for (const auto& row : g) {
      std::vector<int> v;
      for (int l : row)
        v.push_back(half + l);
      p.push_back(v);
    }
  return p;
}

std::vector<std::vector<int>> consecutive(int wave, int per) {
  std::vector<std::vector<int>> p;
  for (int l0 = 0; l0 < wave; l0 += per) {
    std::vector<int> v;
    for (int l = l0; l < l0 + per; ++l)
      v.push_back(l);
    p.push_back(v);
  }
  return p;
}

// The phases of a read of `bytes` on `target`, written out from the facts in TargetsHip.cpp.
std::vector<std::vector<int>> phases_by_hand(const char* target, int bytes) {
  const bool rdna = std::string(target) == "gfx1100";
  const int wave = rdna ? 32 : 64, banks = rdna ? 64 : 32;
  if (!rdna && bytes == 16)
    return cdna_b128_phases();
  return consecutive(wave, std::min(wave, banks * 4 / std::max(bytes, 4)));
}

// HipGemm's reads of one operand, from the published mappings: lane l holds row / column l % m
// of the instruction tile and k values group * steps * kpl + ... with group = (l / m) % groups;
// K-major lanes read 16 bytes where steps * kpl values are whole 16-byte chunks, else 8.
struct Case {
  int64_t m, groups, kpl, k, lanes;
};

// `reads8`: K-major values in 8-byte reads whatever their number (what the emitter issued
// before the bank model: two ds_read_b64 for 16 bytes).
int read_conflicts(const char* target, const Case& c, int64_t steps, bool k_major, int64_t rows,
                   int64_t cols, const Swizzle& sw, bool reads8 = false) {
  const int eb = 2;
  const bool rdna = std::string(target) == "gfx1100";
  const int banks = rdna ? 64 : 32;
  const int64_t per_lane = steps * c.kpl, KB = steps * c.k;
  const int64_t per_read = !k_major ? 1 : (per_lane * eb) % 16 == 0 && !reads8 ? 8 : 4;
  const int64_t outer = k_major ? rows : cols, K = k_major ? cols : rows;
  int worst = 1;
  for (int64_t o0 = 0; o0 + c.m <= outer; o0 += c.m)
    for (int64_t kb = 0; kb + KB <= K; kb += KB)
      for (int64_t r = 0; r < per_lane / per_read; ++r) {
        std::vector<int64_t> addr;
        for (int64_t l = 0; l < c.lanes; ++l) {
          int64_t o = o0 + l % c.m, k = kb + ((l / c.m) % c.groups) * per_lane + r * per_read;
          addr.push_back(sw.apply(k_major ? o * cols + k : k * cols + o) * eb);
        }
        int bytes = static_cast<int>(per_read * eb);
        worst = std::max(worst, ways_by_hand(phases_by_hand(target, bytes), addr, bytes, banks));
      }
  return worst;
}

} // namespace

TEST(LdsBankModel, PhasesFollowTheTable) {
  const auto cdna = model_of("gfx942");
  EXPECT_EQ(cdna.banks, 32);
  EXPECT_EQ(lds_phases(cdna, 16), cdna_b128_phases());
  EXPECT_EQ(lds_phases(model_of("gfx90a"), 16), cdna_b128_phases());
  EXPECT_EQ(lds_phases(cdna, 8), consecutive(64, 16));
  EXPECT_EQ(lds_phases(cdna, 4), consecutive(64, 32));
  EXPECT_EQ(lds_phases(cdna, 2), consecutive(64, 32));
  const auto rdna = model_of("gfx1100");
  EXPECT_EQ(rdna.banks, 64);
  EXPECT_EQ(lds_phases(rdna, 16), consecutive(32, 16));
  EXPECT_EQ(lds_phases(rdna, 4), consecutive(32, 32));
}

TEST(LdsBankModel, HandComputedConflicts) {
  const auto cdna = model_of("gfx942");
  std::vector<int64_t> a(64);
  // b128, lane l at 16 l: lanes 0-3 and 20-23 take 16-byte slots 0-3 and 20-23 % 8 = 4-7 of
  // the 128 bytes of banks: conflict-free
  for (int l = 0; l < 64; ++l)
    a[l] = 16 * l;
  EXPECT_EQ(lds_conflict_ways(cdna, a, 16), 1);
  // b128, lane l at 64 l (rows of 64 bytes, chunk 0): lanes 0-3 hit chunk slots 0,4,0,4: the
  // group's 8 lanes land on 2 slots -> 4-way
  for (int l = 0; l < 64; ++l)
    a[l] = 64 * l;
  EXPECT_EQ(lds_conflict_ways(cdna, a, 16), 4);
  // b64, same addresses: a 16-lane phase, 8-byte slot (64 l / 8) % 16 in {0, 8}: 8 lanes per
  // slot -> 8-way
  EXPECT_EQ(lds_conflict_ways(cdna, a, 8), 8);
  // b32, stride 128 bytes: every lane of a 32-lane phase on bank 0 -> 32-way
  for (int l = 0; l < 64; ++l)
    a[l] = 128 * l;
  EXPECT_EQ(lds_conflict_ways(cdna, a, 4), 32);
  // one word for every lane: a broadcast
  for (int l = 0; l < 64; ++l)
    a[l] = 256;
  EXPECT_EQ(lds_conflict_ways(cdna, a, 4), 1);
  // agrees with the count by hand on a pseudo-random pattern
  for (int l = 0; l < 64; ++l)
    a[l] = ((l * 37) % 61) * 8;
  for (int bytes : {4, 8, 16})
    EXPECT_EQ(lds_conflict_ways(cdna, a, bytes), ways_by_hand(phases_by_hand("gfx942", bytes), a, bytes, 32))
        << bytes;
}

// Every read pattern of every HIP target with a matrix instruction, with the steps LayoutInference
// takes (2 where lanes hold k groups and K is a whole number of double k blocks): the chosen
// layout has the fewest conflicts of its class (recomputed by hand over the class) and none,
// except in the classes where no permutation of 16-byte chunks by row avoids them: CDNA's 8-byte
// K-major reads (K an odd number of k blocks: 16 consecutive rows, 8 bytes each, 16-byte-aligned
// rows leave 8 of the 16 bank slots), CDNA's 16x16 N-major reads of 16-column tiles (two rows
// of 32 bytes on the same banks in one 32-lane phase) and rows that are no power of two. Planted: the layout and reads of the emitter before the model (ldmatrix
// swizzle, 8-byte reads) conflict where the new ones do not.
TEST(LdsBankModel, ChosenOperandLayoutsAreConflictFree) {
  int checked = 0, planted = 0, inherent = 0;
  for (const char* target : {"gfx90a", "gfx942", "gfx1100"}) {
    const Target* t = find_target(target);
    ASSERT_NE(t, nullptr);
    const bool rdna = std::string(target) == "gfx1100";
    const auto model = model_of(target);
    std::set<MatrixCoreKind> kinds;
    for (const auto& ms : t->hip.matrix)
      kinds.insert(matrix_core_kind(ms.m, ms.n, ms.k, t->gpu.warp_size));
    for (MatrixCoreKind kind : kinds) {
      const MatrixCoreShape& s = matrix_core_shape(kind);
      const Case c{s.m, s.groups, s.k_per_lane, s.k, s.lanes};
      for (bool k_major : {true, false})
        for (int64_t outer : {s.m, 2 * s.m, int64_t(64), int64_t(128), int64_t(256)})
          for (int64_t K : {s.k, 3 * s.k, int64_t(32), int64_t(64), int64_t(128)}) {
            if (outer % s.m || K % s.k)
              continue;
            const int64_t steps = s.groups > 1 && K % (2 * s.k) == 0 ? 2 : 1;
            const int64_t rows = k_major ? outer : K, cols = k_major ? K : outer;
            int ways = 0;
            Swizzle sw = matrix_core_operand_swizzle(model, s, steps, k_major, rows, cols, 2, &ways);
            SCOPED_TRACE(std::string(target) + " m" + std::to_string(s.m) + " steps " +
                         std::to_string(steps) + (k_major ? " K-major " : " N-major ") +
                         std::to_string(rows) + "x" + std::to_string(cols) + " " + sw.str());
            // the fewest conflicts over the class by hand: none, the ldmatrix swizzle, and the
            // permutations of a row's 16-byte chunks by row bits (cols a power of two)
            int best = read_conflicts(target, c, steps, k_major, rows, cols, Swizzle{});
            if (k_major)
              best = std::min(best, read_conflicts(target, c, steps, k_major, rows, cols,
                                                   ldmatrix_swizzle(cols, 2)));
            int cb = 0;
            while ((int64_t(1) << cb) < cols)
              ++cb;
            const bool pow2 = (int64_t(1) << cb) == cols;
            for (int B = 1; pow2 && B <= 4 && 3 + B <= cb; ++B)
              for (int S = cb - 3; (int64_t(1) << (3 + S + B)) <= rows * cols; ++S)
                best = std::min(best, read_conflicts(target, c, steps, k_major, rows, cols,
                                                     Swizzle{B, 3, S}));
            EXPECT_EQ(ways, best);
            EXPECT_EQ(read_conflicts(target, c, steps, k_major, rows, cols, sw), best);
            EXPECT_EQ(matrix_core_read_conflicts(model, s, steps, k_major, outer, K, cols, 2, sw), best);
            ++checked;
            // conflicts that no layout of the class avoids, only in the documented cases
            const bool documented = !pow2 || (!rdna && k_major && steps == 1) ||
                                    (!rdna && !k_major && s.m == 16 && cols * 2 <= 32);
            if (!documented)
              EXPECT_EQ(best, 1);
            else if (best > 1)
              ++inherent;
            // planted: the emitter's layout and reads before the bank model
            if (k_major && cols * 2 >= 64 && (steps == 2 || rdna)) {
              Swizzle old = ldmatrix_swizzle(cols, 2);
              int by_hand = read_conflicts(target, c, steps, k_major, rows, cols, old, true);
              EXPECT_GT(by_hand, 1) << "old " << old.str();
              ++planted;
            }
          }
    }
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(planted, 10);
  EXPECT_GT(inherent, 0);
}

namespace {

// Plans of a shipped kernel instance for a target; every matrix-core gemm's shared operands.
void expect_conflict_free_plan(const std::string& spec, const char* target, int& gemms) {
  std::ostringstream out;
  DiagEngine diag(out);
  auto ks = spec::load_kernels(std::string(TILEGEN_KERNELS_DIR) + "/" + spec, diag);
  ASSERT_TRUE(ks) << out.str();
  const Target& t = *find_target(target);
  const auto model = model_of(target);
  for (const auto& k : *ks)
    for (const auto& inst : passes::enumerate_instances(k)) {
      auto ik = passes::instantiate(k, inst, t, diag);
      if (!ik)
        continue; // not an instance for this target (the generator skips it too)
      auto plan = passes::infer_layouts(*ik, t, diag);
      ASSERT_TRUE(plan) << out.str();
      for (const auto& [stmt, gp] : plan->gemms) {
        if (gp.kind != passes::GemmPlan::MatrixCore)
          continue;
        const auto* g = stmt->as<ir::Gemm>();
        const AmdMatrixShape& ms = t.hip.matrix[static_cast<size_t>(gp.matrix)];
        const auto& s = matrix_core_shape(matrix_core_kind(ms.m, ms.n, ms.k, t.gpu.warp_size));
        for (const ir::BufferPtr& b : {g->a, g->b}) {
          if (b->scope != ir::MemScope::Shared)
            continue;
          const bool k_major = b == g->a ? !g->transpose_a : g->transpose_b;
          auto it = plan->swizzles.find(b.get());
          Swizzle sw = it == plan->swizzles.end() ? Swizzle{} : it->second;
          const auto* r0 = b->shape.at(0)->as<ir::IntImm>();
          const auto* c0 = b->shape.at(1)->as<ir::IntImm>();
          ASSERT_TRUE(r0 && c0);
          const int64_t rows = r0->value, cols = c0->value;
          const int64_t outer = k_major ? rows : cols, K = k_major ? cols : rows;
          EXPECT_EQ(matrix_core_read_conflicts(model, s, gp.steps, k_major, outer, K, cols,
                                               b->dtype.bytes(), sw),
                    1)
              << spec << " " << inst.name << " " << target << " " << b->name << " " << sw.str();
          ++gemms;
        }
      }
    }
}

} // namespace

TEST(LdsBankModel, ShippedGemmPlansAreConflictFree) {
  int operands = 0;
  for (const char* target : {"gfx90a", "gfx942", "gfx1100"})
    for (const char* spec : {"gemm.yaml", "gemm_bias_gelu.yaml", "gemm_fp8.yaml"})
      expect_conflict_free_plan(spec, target, operands);
  EXPECT_GT(operands, 0);
}
