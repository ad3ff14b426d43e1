#include "layout/MatrixCore.h"

#include "support/InternalError.h"

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
  switch (kind) {
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

} // namespace tilegen::layout
