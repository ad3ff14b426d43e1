#include "layout/MatrixCore.h"

#include "support/InternalError.h"

#include <algorithm>
#include <map>
#include <set>

namespace tilegen::layout {

const MatrixCoreShape& matrix_core_shape(MatrixCoreKind kind) {
  // Lane modes first mode fastest: (size, strides (row, col)); register modes along rows.
  static const MatrixCoreShape mfma32 = {32, 32, 8, 64, 2, 4,
                                         {{32, {0, 1}, "lane%32"}, {2, {4, 0}, "lane/32"}},
                                         {{4, 1}, {4, 8}}};
  static const MatrixCoreShape mfma16 = {16, 16, 16, 64, 4, 4,
                                         {{16, {0, 1}, "lane%16"}, {4, {4, 0}, "lane/16"}},
                                         {{4, 1}}};
  static const MatrixCoreShape wmma16 = {16, 16, 16, 32, 1, 16,
                                         {{16, {0, 1}, "lane%16"}, {2, {1, 0}, "lane/16"}},
                                         {{8, 2}}};
  // gfx942's FP8 instructions: eight 8-bit values per lane, the f16 instruction's accumulator
  static const MatrixCoreShape mfma32f8 = {32, 32, 16, 64, 2, 8,
                                           {{32, {0, 1}, "lane%32"}, {2, {4, 0}, "lane/32"}},
                                           {{4, 1}, {4, 8}}};
  static const MatrixCoreShape mfma16f8 = {16, 16, 32, 64, 4, 8,
                                           {{16, {0, 1}, "lane%16"}, {4, {4, 0}, "lane/16"}},
                                           {{4, 1}}};
  switch (kind) {
  case MatrixCoreKind::Mfma32x32x16F8: return mfma32f8;
  case MatrixCoreKind::Mfma16x16x32F8: return mfma16f8;
  case MatrixCoreKind::Mfma32x32x8: return mfma32;
  case MatrixCoreKind::Mfma16x16x16: return mfma16;
  case MatrixCoreKind::Wmma16x16x16: return wmma16;
  }
  internal_error("matrix_core_shape: unknown kind");
}

MatrixCoreKind matrix_core_kind(int64_t m, int64_t n, int64_t k, int64_t wave) {
  if (wave == 64 && m == 32 && n == 32 && k == 8)
    return MatrixCoreKind::Mfma32x32x8;
  if (wave == 64 && m == 16 && n == 16 && k == 16)
    return MatrixCoreKind::Mfma16x16x16;
  if (wave == 32 && m == 16 && n == 16 && k == 16)
    return MatrixCoreKind::Wmma16x16x16;
  if (wave == 64 && m == 32 && n == 32 && k == 16)
    return MatrixCoreKind::Mfma32x32x16F8;
  if (wave == 64 && m == 16 && n == 16 && k == 32)
    return MatrixCoreKind::Mfma16x16x32F8;
  internal_error("matrix_core_kind: no AMD matrix instruction " + std::to_string(m) + "x" +
                 std::to_string(n) + "x" + std::to_string(k) + " for wave" + std::to_string(wave));
}

FragmentLayout matrix_core_accumulator(const MatrixCoreShape& s, int64_t M, int64_t N, int64_t WM,
                                       int64_t WN, const std::string& name) {
  TG_ASSERT(WM > 0 && WN > 0 && M % (WM * s.m) == 0 && N % (WN * s.n) == 0,
            "matrix_core_accumulator: the waves' tiles are no whole instruction tiles");
  const int64_t TM = M / WM, TN = N / WN;
  FragmentLayout l;
  l.shape = {M, N};
  l.thread_modes = s.acc_lanes;
  l.thread_modes.push_back({WM, {TM, 0}, "wave_m"});
  l.thread_modes.push_back({WN, {0, TN}, "wave_n"});
  l.regs.resize(2);
  l.regs[0] = s.acc_regs;
  if (TM / s.m > 1)
    l.regs[0].push_back({TM / s.m, s.m});
  if (TN / s.n > 1)
    l.regs[1].push_back({TN / s.n, s.n});
  l.origin = name + " accumulator, " + std::to_string(WM) + "x" + std::to_string(WN) +
             " waves of " + std::to_string(TM) + "x" + std::to_string(TN);
  return l;
}

int64_t operand_outer(const MatrixCoreShape& s, int64_t lane) { return lane % s.m; }

int64_t operand_k(const MatrixCoreShape& s, int64_t lane, int64_t step, int64_t e, int64_t steps) {
  const int64_t group = (lane / s.m) % s.groups;
  return group * steps * s.k_per_lane + step * s.k_per_lane + e;
}

// ---- AMD LDS bank model ----------------------------------------------------------------------

std::vector<std::vector<int>> lds_phases(const LdsBankModel& m, int bytes) {
  std::vector<std::vector<int>> phases;
  if (bytes == 16 && !m.b128_groups.empty()) {
    // the table's groups cover one 32-lane half; a wave64 repeats them in its upper half
    for (int64_t base = 0; base < m.wave; base += 32)
      for (const auto& g : m.b128_groups) {
        std::vector<int> p;
        for (int l : g)
          if (base + l < m.wave)
            p.push_back(static_cast<int>(base + l));
        phases.push_back(p);
      }
    return phases;
  }
  const int64_t per = std::min<int64_t>(m.wave, m.banks * 4 / std::max(bytes, 4));
  for (int64_t l0 = 0; l0 < m.wave; l0 += per) {
    std::vector<int> p;
    for (int64_t l = l0; l < l0 + per && l < m.wave; ++l)
      p.push_back(static_cast<int>(l));
    phases.push_back(p);
  }
  return phases;
}

int lds_conflict_ways(const LdsBankModel& m, const std::vector<int64_t>& addr, int bytes) {
  int worst = 0;
  for (const auto& phase : lds_phases(m, bytes)) {
    std::map<int64_t, std::set<int64_t>> words; // bank -> distinct words
    for (int l : phase) {
      TG_ASSERT(static_cast<size_t>(l) < addr.size(), "LDS model: an address per lane");
      for (int64_t w = addr[static_cast<size_t>(l)] / 4; w * 4 < addr[static_cast<size_t>(l)] + bytes; ++w)
        words[w % m.banks].insert(w);
    }
    for (const auto& [bank, w] : words)
      worst = std::max(worst, static_cast<int>(w.size()));
  }
  return worst;
}

bool matrix_core_reads_16(const MatrixCoreShape& s, int64_t steps, int elem_bytes) {
  return (steps * s.k_per_lane * elem_bytes) % 16 == 0;
}

std::vector<LdsAccess> matrix_core_operand_reads(const MatrixCoreShape& s, int64_t steps, bool k_major,
                                                 int64_t outer, int64_t K, int64_t cols,
                                                 int elem_bytes, const Swizzle& sw) {
  const int64_t per_lane = steps * s.k_per_lane, KB = steps * s.k;
  // elements per read and reads per lane and k block
  const int64_t per_read = !k_major ? 1 : matrix_core_reads_16(s, steps, elem_bytes) ? 16 / elem_bytes
                                                                                      : 8 / elem_bytes;
  std::vector<LdsAccess> out;
  for (int64_t o0 = 0; o0 + s.m <= outer; o0 += s.m)
    for (int64_t kb = 0; kb + KB <= K; kb += KB)
      for (int64_t r = 0; r < per_lane / per_read; ++r) {
        LdsAccess a;
        a.bytes = static_cast<int>(per_read * elem_bytes);
        for (int64_t l = 0; l < s.lanes; ++l) {
          const int64_t o = o0 + operand_outer(s, l);
          const int64_t k = kb + ((l / s.m) % s.groups) * per_lane + r * per_read;
          const int64_t e = k_major ? o * cols + k : k * cols + o;
          a.addr.push_back(sw.apply(e) * elem_bytes);
        }
        out.push_back(std::move(a));
      }
  return out;
}

int matrix_core_read_conflicts(const LdsBankModel& m, const MatrixCoreShape& s, int64_t steps,
                               bool k_major, int64_t outer, int64_t K, int64_t cols, int elem_bytes,
                               const Swizzle& sw) {
  int worst = 1;
  for (const LdsAccess& a : matrix_core_operand_reads(s, steps, k_major, outer, K, cols, elem_bytes, sw))
    worst = std::max(worst, lds_conflict_ways(m, a.addr, a.bytes));
  return worst;
}

Swizzle matrix_core_operand_swizzle(const LdsBankModel& m, const MatrixCoreShape& s, int64_t steps,
                                    bool k_major, int64_t rows, int64_t cols, int elem_bytes,
                                    int* ways) {
  const int64_t outer = k_major ? rows : cols, K = k_major ? cols : rows;
  auto conflicts = [&](const Swizzle& sw) {
    return matrix_core_read_conflicts(m, s, steps, k_major, outer, K, cols, elem_bytes, sw);
  };
  std::vector<Swizzle> cands;
  if (k_major)
    cands.push_back(ldmatrix_swizzle(cols, elem_bytes));
  cands.push_back(Swizzle{});
  int chunk = 0;
  while ((int64_t(1) << chunk) * elem_bytes < 16)
    ++chunk;
  int total = 0, col_bits = 0;
  while ((int64_t(1) << total) < rows * cols)
    ++total;
  while ((int64_t(1) << col_bits) < cols)
    ++col_bits;
  // Only permutations of the 16-byte chunks within a row, by row bits (as ldmatrix_swizzle's):
  // the XORed chunk bits inside the column bits, the bits XORed in from the row index (what the
  // emitter's split offsets assume); up to 4 bits: 16 chunks, the 256 bytes of 64 banks
  // (RDNA3's 16-lane b128 phases).
  if ((int64_t(1) << col_bits) == cols)
    for (int bits = 1; bits <= 4 && chunk + bits <= col_bits; ++bits)
      for (int S = col_bits - chunk; chunk + S + bits <= total; ++S)
        cands.push_back(Swizzle{bits, chunk, S});
  Swizzle best = cands.front();
  int best_ways = conflicts(best);
  for (size_t i = 1; i < cands.size() && best_ways > 1; ++i)
    if (int w = conflicts(cands[i]); w < best_ways)
      best = cands[i], best_ways = w;
  if (ways)
    *ways = best_ways;
  return best;
}

// ---- OCP FP8 -> FNUZ --------------------------------------------------------------------------

uint32_t fp8_ocp_to_fnuz(uint32_t x, bool e5m2) {
  // per byte, without carries between bytes: t = the byte without its sign (<= 0x7f), so t + a
  // (a = 1 for e4m3, 4 for e5m2) sets bit 7 exactly where t >= 0x80 - a: NaN (and e5m2's
  // infinities); z = x ^ 0x80 is 0 exactly in -0 bytes
  const uint32_t hi = 0x80808080u, lo = 0x7f7f7f7fu;
  const uint32_t t = x & lo;
  const uint32_t nan = (t + (e5m2 ? 0x04040404u : 0x01010101u)) & hi;
  const uint32_t z = x ^ hi;
  const uint32_t negzero = ~(((z & lo) + lo) | z) & hi;
  const uint32_t m = nan | negzero;           // 0x80 in the bytes to replace
  const uint32_t full = m | (m - (m >> 7));   // 0xff there
  return (x & ~full) | nan;                   // -0 -> 0x00, NaN / inf -> 0x80
}

} // namespace tilegen::layout
