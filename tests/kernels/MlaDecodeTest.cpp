// kernels/mla_decode.yaml on the C targets (tgk_mla: c, c_avx2 and c_avx512, selected at run
// time) against a float64 reference: DeepSeek-V3 multi-head latent attention decode in the
// absorbed form, every query head against one shared paged latent cache (keys the whole
// DL + DR = 576 row, values its first DL = 512 dims), pages of 64 dealt out of order, ragged
// sequence lengths (0, 1, a page less one, a page plus one, 2000) and a ragged head count (20:
// two C tiles of 16 heads, the second ragged) next to DeepSeek-V3's 128.
#include "Numeric.h"
#include "Reference.h"

#include "tgk_mla.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using tgtest::Dt;

constexpr int64_t kPage = 64, kDL = 512, kDR = 64;

tg_status call(Dt dt, const void* q, const void* KV, const int32_t* table, const int32_t* lens,
               void* o, int64_t B, int64_t H, int64_t NP, int64_t MP, int64_t page, int64_t DL,
               int64_t DR, float scale, tg_selection* sel) {
  if (dt == Dt::F16)
    return sel ? tgk_mla_mla_decode_f16_query(nullptr, static_cast<const tg_f16*>(q),
                                              static_cast<const tg_f16*>(KV), table, lens,
                                              static_cast<tg_f16*>(o), B, H, NP, MP, page, DL, DR,
                                              scale, sel)
               : tgk_mla_mla_decode_f16(nullptr, static_cast<const tg_f16*>(q),
                                        static_cast<const tg_f16*>(KV), table, lens,
                                        static_cast<tg_f16*>(o), B, H, NP, MP, page, DL, DR, scale);
  return sel ? tgk_mla_mla_decode_bf16_query(nullptr, static_cast<const tg_bf16*>(q),
                                             static_cast<const tg_bf16*>(KV), table, lens,
                                             static_cast<tg_bf16*>(o), B, H, NP, MP, page, DL, DR,
                                             scale, sel)
             : tgk_mla_mla_decode_bf16(nullptr, static_cast<const tg_bf16*>(q),
                                       static_cast<const tg_bf16*>(KV), table, lens,
                                       static_cast<tg_bf16*>(o), B, H, NP, MP, page, DL, DR, scale);
}

struct Case {
  int64_t H;
  std::vector<int32_t> lens;
};

class MlaDecode : public ::testing::TestWithParam<Dt> {};

TEST_P(MlaDecode, PagedRaggedAgainstFloat64) {
  const Dt dt = GetParam();
  const int64_t D = kDL + kDR;
  const Case cases[] = {{128, {1, 63, 65, 2000, 0}}, {20, {64, 0, 129, 3}}};
  for (const Case& c : cases) {
    const int64_t B = static_cast<int64_t>(c.lens.size());
    const int32_t longest = *std::max_element(c.lens.begin(), c.lens.end());
    const std::string what = std::string(tgtest::dt_name(dt)) + " H=" + std::to_string(c.H) +
                             " B=" + std::to_string(B);
    SCOPED_TRACE(what);
    std::mt19937_64 rng(tgtest::seed_of("mla_decode/" + what));
    // every sequence's pages dealt from one shuffled pool (out of order, interleaved between
    // sequences) with 3 pages no sequence uses; columns a sequence does not use hold ids far out
    // of range: they must never be read
    const tgtest::PagedTable pt = tgtest::paged_table(c.lens, kPage, 3, 1 << 30, rng);
    const int64_t MP = pt.MP, NP = pt.NP;
    const std::vector<int32_t>& table = pt.table;

    tgtest::GuardedBuffer q(dt, static_cast<size_t>(B * c.H * D)),
        KV(dt, static_cast<size_t>(NP * kPage * D)), o(dt, static_cast<size_t>(B * c.H * kDL));
    auto qv = tgtest::fill_random(q, rng, -1.0, 1.0);
    auto kvv = tgtest::fill_random(KV, rng, -1.0, 1.0);
    const auto q0 = q.snapshot(), kv0 = KV.snapshot();
    // scores of a few units: softmax weights spread over several orders of magnitude
    const float scale = 2.0f / std::sqrt(static_cast<float>(D));

    tg_selection sel{};
    ASSERT_EQ(call(dt, q.data(), KV.data(), table.data(), c.lens.data(), o.data(), B, c.H, NP, MP,
                   kPage, kDL, kDR, scale, &sel),
              TG_OK);
    ASSERT_EQ(call(dt, q.data(), KV.data(), table.data(), c.lens.data(), o.data(), B, c.H, NP, MP,
                   kPage, kDL, kDR, scale, nullptr),
              TG_OK);
    EXPECT_TRUE(o.guards_intact());
    EXPECT_TRUE(q.same_as(q0) && KV.same_as(kv0) && q.guards_intact() && KV.guards_intact());
    const auto ref =
        tgtest::ref::mla_decode(qv, kvv, table, c.lens, B, c.H, MP, kPage, kDL, kDR, scale);
    const auto got = o.values();
    // f32 sums of up to `longest` products of T values over D dims, p rounded to T: flash
    // attention's bound with L = longest + D, relative to max |V| = 1
    const double tol = tgtest::tolerance(dt, longest + D);
    const auto st = tgtest::compare(got, ref, 1.0);
    std::printf("[numeric] mla_decode %s (%s): max abs err %.3g (|V| < 1), tol %.3g\n",
                what.c_str(), sel.target, st.rel, tol);
    EXPECT_EQ(st.nonfinite, 0u);
    EXPECT_LE(st.rel, tol) << "worst element " << st.worst << ": got " << got[st.worst]
                           << ", expected " << ref[st.worst] << " (variant " << sel.variant << ")";
    // a sequence of length 0 writes 0
    for (int64_t b = 0; b < B; ++b)
      if (c.lens[static_cast<size_t>(b)] == 0)
        for (int64_t i = 0; i < c.H * kDL; ++i)
          ASSERT_EQ(got[static_cast<size_t>(b * c.H * kDL + i)], 0.0)
              << "length-0 sequence " << b << ", element " << i;
  }
}

// What dispatch checks: the value-set params (PAGE 64, DL 512, DR 64) and sm_scale.
TEST(MlaDecodeArgs, RejectedShapesAndScale) {
  tgtest::GuardedBuffer q(Dt::BF16, 576), KV(Dt::BF16, 64 * 576), o(Dt::BF16, 512);
  const int32_t table[1] = {0}, lens[1] = {5};
  auto run = [&](int64_t page, int64_t DL, int64_t DR, float scale) {
    return call(Dt::BF16, q.data(), KV.data(), table, lens, o.data(), 1, 1, 1, 1, page, DL, DR,
                scale, nullptr);
  };
  EXPECT_EQ(run(16, 512, 64, 0.1f), TG_ERR_UNSUPPORTED_SHAPE);
  EXPECT_EQ(run(64, 128, 64, 0.1f), TG_ERR_UNSUPPORTED_SHAPE);
  EXPECT_EQ(run(64, 512, 0, 0.1f), TG_ERR_UNSUPPORTED_SHAPE);
  EXPECT_EQ(run(64, 512, 64, 0.0f), TG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(run(64, 512, 64, INFINITY), TG_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(run(64, 512, 64, 0.1f), TG_OK);
}

INSTANTIATE_TEST_SUITE_P(Types, MlaDecode, ::testing::Values(Dt::F16, Dt::BF16),
                         [](const auto& info) { return std::string(tgtest::dt_name(info.param)); });

} // namespace
