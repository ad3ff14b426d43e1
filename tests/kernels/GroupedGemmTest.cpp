// kernels/grouped_gemm.yaml on the C targets (tgk_grouped: c, c_avx2 and c_avx512, selected at
// run time) against a float64 reference: MoE expert GEMMs over tokens sorted by expert, with
// groups of uneven sizes, empty experts (first, middle and last), groups smaller than a C tile
// (BM 64) and several groups in one tile, groups that end inside a tile, N and K that are no
// multiple of the tile, E = 1, every expert empty, and tokens past the last offset, whose rows
// of C must keep their contents (as must every byte outside C).
#include "Numeric.h"
#include "Reference.h"

#include "tgk_grouped.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using tgtest::Dt;

struct Case {
  std::vector<int32_t> sizes; // rows of each expert, in order
  int64_t M, N, K;            // M >= sum(sizes): rows past the last offset are not written
};

std::string describe(const Case& c) {
  std::string s = "M=" + std::to_string(c.M) + " N=" + std::to_string(c.N) +
                  " K=" + std::to_string(c.K) + " groups";
  for (int32_t n : c.sizes)
    s += " " + std::to_string(n);
  return s;
}

TEST(GroupedGemm, UnevenGroupsAgainstFloat64) {
  const Case cases[] = {
      // uneven, an empty expert first, in the middle and last; a group of 3 rows; 17 rows past
      // the last offset; N and K ragged against BN 128 and BK 64
      {{0, 130, 3, 0, 150, 0}, 300, 200, 100},
      // several groups inside one 64-row tile, one of 1 row, two empty
      {{5, 0, 7, 64, 1, 0, 60, 20}, 157, 96, 40},
      // one expert holding every token (a plain GEMM) and N, K below one tile
      {{129}, 129, 33, 17},
      // every group smaller than a tile, boundaries at odd rows; K over several k tiles
      {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 55, 130, 300},
      // every expert empty: nothing is written
      {{0, 0, 0}, 40, 64, 64},
  };
  for (const Case& c : cases) {
    const std::string what = describe(c);
    SCOPED_TRACE(what);
    const int64_t E = static_cast<int64_t>(c.sizes.size());
    std::vector<int32_t> offs(c.sizes.size());
    std::partial_sum(c.sizes.begin(), c.sizes.end(), offs.begin());
    const int64_t end = offs.back();
    ASSERT_LE(end, c.M);

    std::mt19937_64 rng(tgtest::seed_of("grouped_gemm/" + what));
    tgtest::GuardedBuffer A(Dt::BF16, static_cast<size_t>(c.M * c.K));
    tgtest::GuardedBuffer W(Dt::BF16, static_cast<size_t>(E * c.K * c.N));
    tgtest::GuardedBuffer C(Dt::BF16, static_cast<size_t>(c.M * c.N));
    const auto Av = tgtest::fill_random(A, rng);
    const auto Wv = tgtest::fill_random(W, rng);

    tg_selection sel{};
    ASSERT_EQ(tgk_grouped_grouped_gemm_bf16_query(
                  nullptr, static_cast<const tg_bf16*>(A.data()), static_cast<const tg_bf16*>(W.data()),
                  offs.data(), static_cast<tg_bf16*>(C.data()), c.M, c.N, c.K, E, &sel),
              TG_OK);
    ASSERT_EQ(tgk_grouped_grouped_gemm_bf16(
                  nullptr, static_cast<const tg_bf16*>(A.data()), static_cast<const tg_bf16*>(W.data()),
                  offs.data(), static_cast<tg_bf16*>(C.data()), c.M, c.N, c.K, E),
              TG_OK);
    EXPECT_TRUE(C.guards_intact());

    const auto ref = tgtest::ref::grouped_gemm(Av, Wv, offs, c.M, c.N, c.K);
    const auto got = C.values();
    // the rows the experts own, against the reference (scale: the largest |result|)
    const size_t n = static_cast<size_t>(end * c.N);
    if (n > 0) {
      const std::vector<double> got_rows(got.begin(), got.begin() + n);
      const std::vector<double> ref_rows(ref.begin(), ref.begin() + n);
      const auto st = tgtest::compare(got_rows, ref_rows);
      std::printf("[numeric] grouped_gemm %s (%s): max rel err %.3g, tol %.3g\n", what.c_str(),
                  sel.target, st.rel, tgtest::tolerance(Dt::BF16, c.K));
      EXPECT_EQ(st.nonfinite, 0u) << "a row of an expert was not written";
      EXPECT_LE(st.rel, tgtest::tolerance(Dt::BF16, c.K))
          << "worst element " << st.worst << " (row " << st.worst / c.N << "): got "
          << got_rows[st.worst] << ", expected " << ref_rows[st.worst] << " (variant "
          << sel.variant << ")";
    }
    // rows past the last offset keep the guard pattern (0xFF bytes) the buffer started with
    const auto bytes = C.snapshot();
    for (size_t b = n * 2; b < bytes.size(); ++b)
      ASSERT_EQ(bytes[b], tgtest::GuardedBuffer::kPattern)
          << "row " << b / 2 / c.N << " (past the last offset " << end << ") was written";
  }
}

} // namespace
