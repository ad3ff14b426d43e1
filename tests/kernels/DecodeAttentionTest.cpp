// kernels/decode_attention.yaml on the C targets (tgk_decode: c, c_avx2 and c_avx512, selected at
// run time) against a float64 reference: one query token per sequence, grouped-query heads,
// K and V gathered through a block table whose pages are out of order, ragged sequence lengths
// (0, 1, a page less one, a page plus one, 1000), pages of 16 and 64 tokens, G = 8 (GQA), MQA
// (one KV head) and G = 1, and G = 20 (more query heads than a C tile holds: two tiles along x,
// the second ragged).
#include "Numeric.h"
#include "Reference.h"

#include "tgk_decode.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

using tgtest::Dt;

struct Case {
  int64_t Hkv, G, page;
};

tg_status call(Dt dt, const void* q, const void* K, const void* V, const int32_t* table,
               const int32_t* lens, void* o, int64_t B, int64_t Hkv, int64_t G, int64_t NP,
               int64_t MP, int64_t page, int64_t D, float scale, tg_selection* sel) {
  if (dt == Dt::F16)
    return sel ? tgk_decode_decode_attention_f16_query(
                     nullptr, static_cast<const tg_f16*>(q), static_cast<const tg_f16*>(K),
                     static_cast<const tg_f16*>(V), table, lens, static_cast<tg_f16*>(o), B, Hkv,
                     G, NP, MP, page, D, scale, sel)
               : tgk_decode_decode_attention_f16(
                     nullptr, static_cast<const tg_f16*>(q), static_cast<const tg_f16*>(K),
                     static_cast<const tg_f16*>(V), table, lens, static_cast<tg_f16*>(o), B, Hkv,
                     G, NP, MP, page, D, scale);
  return sel ? tgk_decode_decode_attention_bf16_query(
                   nullptr, static_cast<const tg_bf16*>(q), static_cast<const tg_bf16*>(K),
                   static_cast<const tg_bf16*>(V), table, lens, static_cast<tg_bf16*>(o), B, Hkv,
                   G, NP, MP, page, D, scale, sel)
             : tgk_decode_decode_attention_bf16(
                   nullptr, static_cast<const tg_bf16*>(q), static_cast<const tg_bf16*>(K),
                   static_cast<const tg_bf16*>(V), table, lens, static_cast<tg_bf16*>(o), B, Hkv,
                   G, NP, MP, page, D, scale);
}

class DecodeAttention : public ::testing::TestWithParam<Dt> {};

TEST_P(DecodeAttention, PagedRaggedGqaAgainstFloat64) {
  const Dt dt = GetParam();
  const int64_t D = 128;
  const std::vector<int32_t> lens = {1, 15, 17, 1000, 0};
  const int64_t B = static_cast<int64_t>(lens.size());
  const Case cases[] = {{2, 8, 16}, {2, 8, 64}, {1, 8, 16}, {3, 1, 64}, {1, 20, 16}};
  for (const Case& c : cases) {
    const std::string what = std::string(tgtest::dt_name(dt)) + " Hkv=" + std::to_string(c.Hkv) +
                             " G=" + std::to_string(c.G) + " page=" + std::to_string(c.page);
    SCOPED_TRACE(what);
    std::mt19937_64 rng(tgtest::seed_of("decode/" + what));
    // every sequence's pages dealt from one shuffled pool (out of order, interleaved between
    // sequences) with 3 pages no sequence uses; columns a sequence does not use hold ids far out
    // of range: they must never be read
    const tgtest::PagedTable pt = tgtest::paged_table(lens, c.page, 3, 1 << 30, rng);
    const int64_t MP = pt.MP, NP = pt.NP;
    const std::vector<int32_t>& table = pt.table;

    const size_t nq = static_cast<size_t>(B * c.Hkv * c.G * D);
    const size_t nkv = static_cast<size_t>(NP * c.Hkv * c.page * D);
    tgtest::GuardedBuffer q(dt, nq), K(dt, nkv), V(dt, nkv), o(dt, nq);
    // scores of a few units: softmax weights spread over several orders of magnitude
    auto qv = tgtest::fill_random(q, rng, -1.0, 1.0);
    auto Kv = tgtest::fill_random(K, rng, -0.5, 0.5);
    auto Vv = tgtest::fill_random(V, rng, -1.0, 1.0);
    const float scale = 1.0f / std::sqrt(static_cast<float>(D)) * 4.0f;

    tg_selection sel{};
    ASSERT_EQ(call(dt, q.data(), K.data(), V.data(), table.data(), lens.data(), o.data(), B, c.Hkv,
                   c.G, NP, MP, c.page, D, scale, &sel),
              TG_OK);
    ASSERT_EQ(call(dt, q.data(), K.data(), V.data(), table.data(), lens.data(), o.data(), B, c.Hkv,
                   c.G, NP, MP, c.page, D, scale, nullptr),
              TG_OK);
    EXPECT_TRUE(o.guards_intact());
    const auto ref = tgtest::ref::decode_attention(qv, Kv, Vv, table, lens, B, c.Hkv, c.G, MP,
                                                    c.page, D, scale);
    const auto got = o.values();
    // f32 sums of up to 1000 products of T values, p rounded to T: flash attention's bound
    const auto st = tgtest::compare(got, ref, 1.0);
    std::printf("[numeric] decode_attention %s (%s): max abs err %.3g (|V| < 1), tol %.3g\n",
                what.c_str(), sel.target, st.rel, tgtest::tolerance(dt, 1000 + D));
    EXPECT_EQ(st.nonfinite, 0u);
    EXPECT_LE(st.rel, tgtest::tolerance(dt, 1000 + D))
        << "worst element " << st.worst << ": got " << got[st.worst] << ", expected "
        << ref[st.worst] << " (variant " << sel.variant << ")";
    // a sequence of length 0 writes 0
    for (int64_t i = 0; i < c.Hkv * c.G * D; ++i)
      ASSERT_EQ(got[(B - 1) * c.Hkv * c.G * D + i], 0.0) << "length-0 sequence, element " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Types, DecodeAttention, ::testing::Values(Dt::F16, Dt::BF16),
                         [](const auto& info) { return std::string(tgtest::dt_name(info.param)); });

} // namespace
