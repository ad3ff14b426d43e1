// The AMD matrix-core layouts of layout/MatrixCore.h executed lane by lane on a CPU emulator
// of the instructions, which is written here from AMD's published lane/register mappings
// (not from MatrixCore.h), so that a wrong mapping in either shows up as a wrong product:
//
//  * MFMA f32 <- f16/bf16 on wave64 (CDNA2/CDNA3 ISA guides, "Dependent matrix layouts"; AMD's
//    matrix instruction calculator, `--get-register` for A, B and D):
//      v_mfma_f32_32x32x8{f16,bf16_1k} and v_mfma_f32_16x16x16{f16,bf16_1k} (M = N, K):
//        A[i][k]: lane i + M * (k / 4), element k % 4 of the lane's 64-bit operand
//        B[k][j]: lane j + N * (k / 4), element k % 4
//        D[i][j] (32x32): lane j + 32 * ((i / 4) % 2), VGPR (i % 4) + 4 * (i / 8)
//        D[i][j] (16x16): lane j + 16 * (i / 4), VGPR i % 4
//  * MFMA f32 <- FP8 on gfx942 (CDNA3 ISA guide; AMD's matrix instruction calculator for
//    v_mfma_f32_32x32x16_fp8_fp8 and 16x16x32_fp8_fp8): the formulas above with 8 (not 4)
//    values per lane, k / 8 and k % 8; D as the f16 instruction of the same M x N. The operand
//    bytes are read as e4m3fnuz / e5m2fnuz (LLVM APFloat Float8E4M3FNUZ / Float8E5M2FNUZ:
//    exponent bias 8 / 16, no infinities, no -0, 0x80 the only NaN), decoded below from that
//    definition (fnuz_value), not from MatrixCore.h.
//  * WMMA f32 <- f16/bf16 16x16x16 on wave32 (RDNA3 ISA guide section 7.9; GPUOpen "How to
//    accelerate AI applications on RDNA 3 using WMMA"):
//        A[i][k]: element k of lane i (lanes 16..31 hold the same rows again)
//        B[k][j]: element k of lane j (likewise)
//        D[i][j]: lane j + 16 * (i % 2), VGPR i / 2
//
// What runs: for each instruction and every block tile the HIP emitter may choose for it
// (waves WM x WN, each a whole number of instruction tiles, one or two instructions per
// operand load), the operand loads of HipGemm.cpp (lane l reads row/column operand_outer(l) of
// each instruction tile and the k values operand_k(l, step, e, steps) of each k block), the
// instruction sequence over k blocks, steps and tile pairs (the accumulator register
// (q + Q * ti) * (TN / n) + tj, as HipGemm.cpp indexes it), and the store through the
// FragmentLayout of matrix_core_accumulator. The block's registers must equal a float64 matmul
// of the same small-integer matrices exactly. A mutated published mapping (the lane halves of
// D swapped, A's k groups swapped) must make the same run fail.
//
// FP8 (Fp8MatrixCore below): the same run on random OCP e4m3 / e5m2 bytes, each lane's 64-bit
// operand word converted by layout::fp8_ocp_to_fnuz as HipGemm's tg_fp8_fnuz does, the
// instruction decoding FNUZ, the accumulator multiplied by 1/4 before the gemm and by 4 after
// (HipGemm.cpp): equal to the float64 matmul of the OCP values, exactly. Without the conversion
// (-0 bytes read as NaN), without the rescale, or with a mutated lane mapping, it fails.
#include "layout/MatrixCore.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using namespace tilegen::layout;

namespace {

// The published mapping of one instruction: where operand element (i, k) of A (or (k, j) of
// B, with j for i) lives, and which D element register q of lane l holds.
struct Published {
  int64_t m, n, k, lanes;
  bool wmma;
  int mutate = 0; // 1: D's lane halves swapped; 2: A's k groups swapped (B's kept)

  // (lane, element) of A[i][k] / B[k][j] (outer = i or j); WMMA: the first of the two lanes
  void operand_slot(bool is_a, int64_t outer, int64_t kk, int64_t* lane, int64_t* elem) const {
    if (wmma) {
      *lane = outer;
      *elem = kk;
      return;
    }
    const int64_t E = operand_elems();
    int64_t group = kk / E;
    if (mutate == 2 && is_a)
      group = (k / E - 1) - group;
    *lane = outer + m * group;
    *elem = kk % E;
  }
  // The (i, j) of D held by VGPR q of lane l.
  void d_element(int64_t l, int64_t q, int64_t* i, int64_t* j) const {
    if (mutate == 1)
      l = (l + lanes / 2) % lanes;
    if (wmma) {
      *j = l % 16;
      *i = 2 * q + l / 16;
    } else if (m == 32) {
      *j = l % 32;
      *i = (q % 4) + 8 * (q / 4) + 4 * (l / 32);
    } else {
      *j = l % 16;
      *i = q + 4 * (l / 16);
    }
  }
  // values per lane: K / (64 / M) for MFMA (4 for f16/bf16, 8 for FP8)
  int64_t operand_elems() const { return wmma ? 16 : k / (lanes / m); }
  int64_t d_regs() const { return m * n / lanes; }
};

// One wave's instruction: D += A * B on per-lane operand registers a[lane][e], b[lane][e],
// accumulator d[lane][q]; every product through the published mapping.
void execute(const Published& p, const std::vector<std::vector<double>>& a,
             const std::vector<std::vector<double>>& b, std::vector<std::vector<double>>& d) {
  for (int64_t l = 0; l < p.lanes; ++l)
    for (int64_t q = 0; q < p.d_regs(); ++q) {
      int64_t i = 0, j = 0;
      p.d_element(l, q, &i, &j);
      double sum = 0;
      for (int64_t kk = 0; kk < p.k; ++kk) {
        int64_t la = 0, ea = 0, lb = 0, eb = 0;
        p.operand_slot(true, i, kk, &la, &ea);
        p.operand_slot(false, j, kk, &lb, &eb);
        sum += a[la][ea] * b[lb][eb];
      }
      d[l][q] += sum;
    }
}

struct Plan {
  MatrixCoreKind kind;
  int64_t M, N, K, WM, WN, steps;
  std::string str() const {
    return "M" + std::to_string(M) + " N" + std::to_string(N) + " K" + std::to_string(K) + " waves " +
           std::to_string(WM) + "x" + std::to_string(WN) + " steps " + std::to_string(steps);
  }
};

// Runs the block's gemm of `plan` on random small integers (every product and sum exact in
// double); returns the number of accumulator registers that differ from the exact product.
int64_t run_block(const Plan& plan, const Published& pub, uint64_t seed) {
  const MatrixCoreShape& s = matrix_core_shape(plan.kind);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(-4, 4);
  std::vector<double> A(plan.M * plan.K), B(plan.K * plan.N);
  for (double& x : A)
    x = dist(rng);
  for (double& x : B)
    x = dist(rng);
  const FragmentLayout L = matrix_core_accumulator(s, plan.M, plan.N, plan.WM, plan.WN, "test");
  const int64_t TM = plan.M / plan.WM, TN = plan.N / plan.WN, tm = TM / s.m, tn = TN / s.n;
  const int64_t Q = s.acc_registers(), KB = plan.steps * s.k;
  const int64_t waves = plan.WM * plan.WN, R = L.num_regs();
  EXPECT_EQ(L.threads(), waves * s.lanes);
  EXPECT_EQ(R, Q * tm * tn);
  std::vector<std::vector<double>> acc(waves * s.lanes, std::vector<double>(R, 0.0));
  for (int64_t w = 0; w < waves; ++w) {
    const int64_t row0 = (w % plan.WM) * TM, col0 = (w / plan.WM) * TN;
    for (int64_t kb = 0; kb < plan.K / KB; ++kb)
      for (int64_t step = 0; step < plan.steps; ++step)
        for (int64_t ti = 0; ti < tm; ++ti)
          for (int64_t tj = 0; tj < tn; ++tj) {
            // the operand loads of HipGemm.cpp: lane l, element e of this step
            std::vector<std::vector<double>> a(s.lanes, std::vector<double>(pub.operand_elems())),
                b = a;
            for (int64_t l = 0; l < s.lanes; ++l)
              for (int64_t e = 0; e < s.k_per_lane; ++e) {
                const int64_t kk = kb * KB + operand_k(s, l, step, e, plan.steps);
                const int64_t r = row0 + ti * s.m + operand_outer(s, l);
                const int64_t c = col0 + tj * s.n + operand_outer(s, l);
                a[l][e] = A[r * plan.K + kk];
                b[l][e] = B[kk * plan.N + c];
              }
            std::vector<std::vector<double>> d(s.lanes, std::vector<double>(Q));
            for (int64_t l = 0; l < s.lanes; ++l)
              for (int64_t q = 0; q < Q; ++q)
                d[l][q] = acc[w * s.lanes + l][(q + Q * ti) * tn + tj];
            execute(pub, a, b, d);
            for (int64_t l = 0; l < s.lanes; ++l)
              for (int64_t q = 0; q < Q; ++q)
                acc[w * s.lanes + l][(q + Q * ti) * tn + tj] = d[l][q];
          }
  }
  // the store: thread t's register (r0, r1) is element (row, col) of the tile
  int64_t wrong = 0;
  const int64_t R1 = L.regs_of_dim(1);
  for (int64_t t = 0; t < L.threads(); ++t)
    for (int64_t r = 0; r < R; ++r) {
      const int64_t row = L.thread_coord(0, t) + L.reg_coord(0, r / R1);
      const int64_t col = L.thread_coord(1, t) + L.reg_coord(1, r % R1);
      double want = 0;
      for (int64_t kk = 0; kk < plan.K; ++kk)
        want += A[row * plan.K + kk] * B[kk * plan.N + col];
      wrong += acc[t][r] != want;
    }
  return wrong;
}

// ---- FP8 (gfx942) ------------------------------------------------------------------------------

// The value of an OCP FP8 byte (e4m3fn: bias 7, S.1111.111 NaN, no infinity; e5m2: bias 15,
// S.11111.00 infinity, S.11111.mm NaN), from the OCP 8-bit floating point specification.
double ocp_value(uint8_t b, bool e5m2) {
  const double sign = b & 0x80 ? -1.0 : 1.0;
  const int mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7, emax = e5m2 ? 31 : 15;
  const int e = (b & 0x7f) >> mbits, m = b & ((1 << mbits) - 1);
  if (e5m2 && e == emax)
    return m == 0 ? sign * INFINITY : NAN;
  if (!e5m2 && e == emax && m == (1 << mbits) - 1)
    return NAN;
  if (e == 0)
    return sign * std::ldexp(m, 1 - bias - mbits);
  return sign * std::ldexp((1 << mbits) + m, e - bias - mbits);
}

// The value gfx942's FP8 MFMA reads from a byte: FNUZ (bias 8 / 16, 0x80 NaN, no infinity,
// no -0).
double fnuz_value(uint8_t b, bool e5m2) {
  if (b == 0x80)
    return NAN;
  const double sign = b & 0x80 ? -1.0 : 1.0;
  const int mbits = e5m2 ? 2 : 3, bias = e5m2 ? 16 : 8;
  const int e = (b & 0x7f) >> mbits, m = b & ((1 << mbits) - 1);
  if (e == 0)
    return sign * std::ldexp(m, 1 - bias - mbits);
  return sign * std::ldexp((1 << mbits) + m, e - bias - mbits);
}

// An OCP byte whose value is finite (NaN and infinity are checked byte by byte below). e5m2
// bytes keep exponent fields up to 16 (|x| < 4), so that the float64 sums of 64 products stay
// exact (within 53 bits) in any order; large values are checked byte by byte (Fp8Fnuz).
uint8_t finite_ocp(std::mt19937_64& rng, bool e5m2) {
  for (;;) {
    const uint8_t b = static_cast<uint8_t>(rng() & 0xff);
    if (std::isfinite(ocp_value(b, e5m2)) && (!e5m2 || ((b & 0x7f) >> 2) <= 16))
      return b;
  }
}

struct Fp8Run {
  bool convert = true; // the words through fp8_ocp_to_fnuz (else raw OCP bytes)
  bool rescale = true; // acc x 1/4 before, x 4 after
};

// run_block on FP8: A [M, K] and B [K, N] random finite OCP bytes (about one in 16 a -0: 0x80
// forced), accumulators starting at small integers; returns the registers that differ from
// acc0 + the float64 matmul of the OCP values.
int64_t run_block_fp8(const Plan& plan, const Published& pub, bool e5m2, const Fp8Run& how, uint64_t seed) {
  const MatrixCoreShape& s = matrix_core_shape(plan.kind);
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> A(plan.M * plan.K), B(plan.K * plan.N);
  for (auto* v : {&A, &B})
    for (uint8_t& x : *v)
      x = rng() % 16 == 0 ? 0x80 : finite_ocp(rng, e5m2);
  const FragmentLayout L = matrix_core_accumulator(s, plan.M, plan.N, plan.WM, plan.WN, "test");
  const int64_t TM = plan.M / plan.WM, TN = plan.N / plan.WN, tm = TM / s.m, tn = TN / s.n;
  const int64_t Q = s.acc_registers(), KB = plan.steps * s.k;
  const int64_t waves = plan.WM * plan.WN, R = L.num_regs(), E = s.k_per_lane;
  EXPECT_EQ(E, 8);
  std::uniform_int_distribution<int> dist(-8, 8);
  std::vector<std::vector<double>> acc(waves * s.lanes, std::vector<double>(R)), acc0;
  for (auto& regs : acc)
    for (double& x : regs)
      x = dist(rng);
  acc0 = acc;
  for (auto& regs : acc)
    for (double& x : regs)
      x *= how.rescale ? 0.25 : 1.0;
  // a lane's 8 operand bytes: one 64-bit word, converted as two 32-bit halves
  auto word = [&](const std::vector<uint8_t>& bytes) {
    std::vector<double> vals(8);
    for (int half = 0; half < 2; ++half) {
      uint32_t w = 0;
      for (int i = 0; i < 4; ++i)
        w |= uint32_t(bytes[half * 4 + i]) << (8 * i);
      if (how.convert)
        w = fp8_ocp_to_fnuz(w, e5m2);
      for (int i = 0; i < 4; ++i)
        vals[half * 4 + i] = fnuz_value(static_cast<uint8_t>(w >> (8 * i)), e5m2);
    }
    return vals;
  };
  for (int64_t w = 0; w < waves; ++w) {
    const int64_t row0 = (w % plan.WM) * TM, col0 = (w / plan.WM) * TN;
    for (int64_t kb = 0; kb < plan.K / KB; ++kb)
      for (int64_t step = 0; step < plan.steps; ++step)
        for (int64_t ti = 0; ti < tm; ++ti)
          for (int64_t tj = 0; tj < tn; ++tj) {
            std::vector<std::vector<double>> a(s.lanes), b(s.lanes);
            for (int64_t l = 0; l < s.lanes; ++l) {
              std::vector<uint8_t> ab(E), bb(E);
              for (int64_t e = 0; e < E; ++e) {
                const int64_t kk = kb * KB + operand_k(s, l, step, e, plan.steps);
                ab[e] = A[(row0 + ti * s.m + operand_outer(s, l)) * plan.K + kk];
                bb[e] = B[kk * plan.N + col0 + tj * s.n + operand_outer(s, l)];
              }
              a[l] = word(ab);
              b[l] = word(bb);
            }
            std::vector<std::vector<double>> d(s.lanes, std::vector<double>(Q));
            for (int64_t l = 0; l < s.lanes; ++l)
              for (int64_t q = 0; q < Q; ++q)
                d[l][q] = acc[w * s.lanes + l][(q + Q * ti) * tn + tj];
            execute(pub, a, b, d);
            for (int64_t l = 0; l < s.lanes; ++l)
              for (int64_t q = 0; q < Q; ++q)
                acc[w * s.lanes + l][(q + Q * ti) * tn + tj] = d[l][q];
          }
  }
  int64_t wrong = 0;
  const int64_t R1 = L.regs_of_dim(1);
  for (int64_t t = 0; t < L.threads(); ++t)
    for (int64_t r = 0; r < R; ++r) {
      const int64_t row = L.thread_coord(0, t) + L.reg_coord(0, r / R1);
      const int64_t col = L.thread_coord(1, t) + L.reg_coord(1, r % R1);
      double want = acc0[t][r];
      for (int64_t kk = 0; kk < plan.K; ++kk)
        want += ocp_value(A[row * plan.K + kk], e5m2) * ocp_value(B[kk * plan.N + col], e5m2);
      const double got = acc[t][r] * (how.rescale ? 4.0 : 1.0);
      wrong += !(got == want); // NaN counts as wrong
    }
  return wrong;
}

// Every arrangement the emitter may choose for an instruction: 1, 2, 4 or 8 waves, WM x WN of
// them, 1 or 2 instruction tiles per wave along each dim, one or two instructions per operand
// load where the instruction has more than one k group.
std::vector<Plan> plans(MatrixCoreKind kind) {
  const MatrixCoreShape& s = matrix_core_shape(kind);
  std::vector<Plan> out;
  for (int64_t waves : {1, 2, 4, 8})
    for (int64_t wm = 1; wm <= waves; wm *= 2)
      for (int64_t tm : {1, 2})
        for (int64_t tn : {1, 2})
          for (int64_t steps : {1, 2}) {
            if (steps == 2 && s.groups == 1)
              continue;
            const int64_t wn = waves / wm;
            out.push_back({kind, wm * tm * s.m, wn * tn * s.n, 2 * steps * s.k, wm, wn, steps});
          }
  return out;
}

Published published(MatrixCoreKind kind) {
  const MatrixCoreShape& s = matrix_core_shape(kind);
  return {s.m, s.n, s.k, s.lanes, kind == MatrixCoreKind::Wmma16x16x16};
}

class MatrixCoreEmulator : public ::testing::TestWithParam<MatrixCoreKind> {};

TEST_P(MatrixCoreEmulator, EveryPlanEqualsMatmul) {
  int n = 0;
  for (const Plan& p : plans(GetParam())) {
    EXPECT_EQ(run_block(p, published(GetParam()), 7 + n), 0) << p.str();
    ++n;
  }
  EXPECT_GE(n, 20);
}

// The emulator is not blind: a swapped lane mapping in the published facts breaks every plan.
TEST_P(MatrixCoreEmulator, MutatedLaneMappingFails) {
  for (int mutate : {1, 2}) {
    Published p = published(GetParam());
    p.mutate = mutate;
    if (mutate == 2 && p.wmma)
      continue; // WMMA operands have one k group per lane
    int failed = 0, n = 0;
    for (const Plan& plan : plans(GetParam())) {
      failed += run_block(plan, p, 11 + n) > 0;
      ++n;
    }
    EXPECT_EQ(failed, n) << "mutation " << mutate;
  }
}

// FP8 on gfx942: the conversion to FNUZ, the instruction and the rescale give the OCP matmul.
class Fp8MatrixCore : public ::testing::TestWithParam<std::tuple<MatrixCoreKind, bool>> {};

TEST_P(Fp8MatrixCore, EveryPlanEqualsOcpMatmul) {
  const auto [kind, e5m2] = GetParam();
  int n = 0;
  for (const Plan& p : plans(kind)) {
    EXPECT_EQ(run_block_fp8(p, published(kind), e5m2, {}, 3 + n), 0) << p.str();
    ++n;
  }
  EXPECT_GE(n, 20);
}

// Not blind: OCP bytes read as FNUZ unconverted (-0 is FNUZ's NaN), no rescale (every product
// a quarter), or a mutated lane mapping each break every plan.
TEST_P(Fp8MatrixCore, WithoutConversionRescaleOrMappingFails) {
  const auto [kind, e5m2] = GetParam();
  for (int variant = 0; variant < 4; ++variant) {
    Published pub = published(kind);
    Fp8Run how;
    if (variant == 0)
      how.convert = false;
    else if (variant == 1)
      how.rescale = false;
    else
      pub.mutate = variant - 1;
    int failed = 0, n = 0;
    for (const Plan& plan : plans(kind)) {
      failed += run_block_fp8(plan, pub, e5m2, how, 19 + n) > 0;
      ++n;
    }
    EXPECT_EQ(failed, n) << "variant " << variant;
  }
}

INSTANTIATE_TEST_SUITE_P(Gfx942, Fp8MatrixCore,
                         ::testing::Combine(::testing::Values(MatrixCoreKind::Mfma32x32x16F8,
                                                              MatrixCoreKind::Mfma16x16x32F8),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) == MatrixCoreKind::Mfma32x32x16F8
                                                  ? "Mfma32x32x16"
                                                  : "Mfma16x16x32") +
                                  (std::get<1>(info.param) ? "E5m2" : "E4m3");
                         });

// The conversion byte by byte, in every position of the word: a finite OCP value x other than
// -0 reads as x / 2 in FNUZ; -0 reads as +0; NaN, and e5m2's infinities, as FNUZ's NaN.
TEST(Fp8Fnuz, EveryByteInEveryPosition) {
  for (bool e5m2 : {false, true})
    for (int pos = 0; pos < 4; ++pos)
      for (int v = 0; v < 256; ++v) {
        const uint32_t others = 0x3a0c7b11u; // finite, non-special neighbours in both formats
        const uint32_t w = (others & ~(0xffu << (8 * pos))) | uint32_t(v) << (8 * pos);
        const uint32_t c = fp8_ocp_to_fnuz(w, e5m2);
        for (int i = 0; i < 4; ++i)
          if (i != pos)
            ASSERT_EQ((c >> (8 * i)) & 0xff, (w >> (8 * i)) & 0xff) << "neighbour changed";
        const double x = ocp_value(static_cast<uint8_t>(v), e5m2);
        const uint8_t out = static_cast<uint8_t>(c >> (8 * pos));
        const double y = fnuz_value(out, e5m2);
        if (std::isnan(x) || std::isinf(x))
          EXPECT_EQ(out, 0x80) << v;
        else if (v == 0x80)
          EXPECT_EQ(out, 0x00);
        else
          EXPECT_EQ(y, x / 2) << "byte " << v << (e5m2 ? " e5m2" : " e4m3");
      }
}

INSTANTIATE_TEST_SUITE_P(Amd, MatrixCoreEmulator,
                         ::testing::Values(MatrixCoreKind::Mfma32x32x8, MatrixCoreKind::Mfma16x16x16,
                                           MatrixCoreKind::Wmma16x16x16),
                         [](const auto& info) {
                           switch (info.param) {
                           case MatrixCoreKind::Mfma32x32x8: return std::string("Mfma32x32x8");
                           case MatrixCoreKind::Mfma16x16x16: return std::string("Mfma16x16x16");
                           default: return std::string("Wmma16x16x16");
                           }
                         });

// The accumulator layouts are Shape:Stride layouts like the others: each element of the tile is
// held by exactly one (thread, register) pair, for every plan.
TEST(MatrixCoreLayout, AccumulatorCoversTileOnce) {
  for (MatrixCoreKind kind :
       {MatrixCoreKind::Mfma32x32x8, MatrixCoreKind::Mfma16x16x16, MatrixCoreKind::Wmma16x16x16})
    for (const Plan& p : plans(kind)) {
      const MatrixCoreShape& s = matrix_core_shape(kind);
      const FragmentLayout L = matrix_core_accumulator(s, p.M, p.N, p.WM, p.WN, "test");
      std::vector<int> seen(p.M * p.N, 0);
      const int64_t R1 = L.regs_of_dim(1);
      for (int64_t t = 0; t < L.threads(); ++t)
        for (int64_t r = 0; r < L.num_regs(); ++r) {
          const int64_t row = L.thread_coord(0, t) + L.reg_coord(0, r / R1);
          const int64_t col = L.thread_coord(1, t) + L.reg_coord(1, r % R1);
          ASSERT_TRUE(row >= 0 && row < p.M && col >= 0 && col < p.N) << p.str();
          ++seen[row * p.N + col];
        }
      for (int c : seen)
        ASSERT_EQ(c, 1) << p.str();
    }
}

// The operand slots of one load cover each (outer, k) of a k block once per copy of the wave
// (WMMA's upper half-wave repeats the lower one).
TEST(MatrixCoreLayout, OperandLoadsCoverKBlock) {
  for (MatrixCoreKind kind :
       {MatrixCoreKind::Mfma32x32x8, MatrixCoreKind::Mfma16x16x16, MatrixCoreKind::Wmma16x16x16})
    for (int64_t steps : {1, 2}) {
      const MatrixCoreShape& s = matrix_core_shape(kind);
      if (steps == 2 && s.groups == 1)
        continue;
      std::vector<int> seen(s.m * steps * s.k, 0);
      for (int64_t l = 0; l < s.lanes; ++l)
        for (int64_t st = 0; st < steps; ++st)
          for (int64_t e = 0; e < s.k_per_lane; ++e)
            ++seen[operand_outer(s, l) * steps * s.k + operand_k(s, l, st, e, steps)];
      const int copies = static_cast<int>(s.lanes / (s.m * s.groups));
      for (int c : seen)
        ASSERT_EQ(c, copies);
    }
}

} // namespace
