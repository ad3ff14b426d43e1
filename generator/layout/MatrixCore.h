// AMD matrix-core instructions as data: which lane and register of a wave hold which element of
// an MFMA (CDNA) or WMMA (RDNA3) instruction's operands and accumulator, and the block
// accumulator layouts built from them (the counterpart of mma_m16n8k16_accumulator).
//
// Facts (AMD's matrix instruction calculator, `matrix_calculator.py -d -R`, and the CDNA3 ISA
// guide section 7.1 "Dependent matrix layouts" / RDNA3 ISA section 7.9 "WMMA"):
//  * MFMA f32 <- f16/bf16, one block, wave64, M x N x K with M == N in {32, 16}:
//      A[i][k] is in lane i + M * (k / E), element k % E of the lane's 64-bit register pair,
//      where E = K / (64 / M) (4 for 32x32x8 and 16x16x16); B[k][j] likewise with j for i.
//      D[i][j] (32-bit) is in register (i % 4) + 4 * (i / (4 * (64 / N))) of lane
//      j + N * ((i / 4) % (64 / N)): for 32x32, register (i % 4) + 4 * (i / 8) of lane
//      j + 32 * ((i / 4) % 2); for 16x16, register i % 4 of lane j + 16 * (i / 4).
//  * WMMA f32 <- f16/bf16 16x16x16, wave32: A[i][k] is element k of lanes i and i + 16 (16
//    values per lane, the upper half-wave a copy); B[k][j] likewise; D[i][j] is in register i / 2
//    of lane j + 16 * (i % 2).
// The HIP emitter loads operands with operand_row / operand_k and stores accumulators through
// the FragmentLayout of matrix_core_accumulator; tests/unit/layout/MatrixCoreTest.cpp runs both
// against an emulator of the instructions written from the mappings above.
#pragma once

#include "layout/Layout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tilegen::layout {

struct MatrixCoreShape {
  int64_t m = 0, n = 0, k = 0;
  int64_t lanes = 64;      // the wave
  // Operands: lane l holds row (A) or column (B) l % m of the instruction tile and the k values
  // group * k_per_lane + e (e < k_per_lane) of it, group = (l / m) % groups; lanes past
  // m * groups hold copies (WMMA's upper half-wave).
  int64_t groups = 2;
  int64_t k_per_lane = 4;
  // Accumulator: the lane modes (strides in (row, col) of the instruction tile; their sizes
  // multiply to `lanes`) and the register modes along rows (sizes multiply to m * n / lanes).
  std::vector<ThreadMode> acc_lanes;
  std::vector<RegMode> acc_regs;
  int64_t acc_registers() const { return m * n / lanes; }
};

enum class MatrixCoreKind { Mfma32x32x8, Mfma16x16x16, Wmma16x16x16 };
const MatrixCoreShape& matrix_core_shape(MatrixCoreKind kind);
// The kind of an instruction of the target table (AmdMatrixShape: m, n, k and the wave).
MatrixCoreKind matrix_core_kind(int64_t m, int64_t n, int64_t k, int64_t wave);

// The f32 accumulator of an [M, N] tile computed by WM x WN waves (wave w: w % WM along M,
// w / WM along N), each wave owning (M / WM) x (N / WN) of instruction tiles. The register of
// instruction register q of tile (ti, tj) of a wave is (q + Q * ti) * (N / WN / n) + tj, Q =
// acc_registers() (register modes: the instruction's first, then the tiles).
FragmentLayout matrix_core_accumulator(const MatrixCoreShape& s, int64_t M, int64_t N, int64_t WM,
                                       int64_t WN, const std::string& name);

// Operand element (slot e of lane l) of the instruction: its row of A (column of B) within the
// instruction tile and its k, where one load feeds `steps` consecutive instructions along K
// (a lane reads steps * k_per_lane consecutive k values: 16 bytes of f16 for two MFMA steps):
// step s takes k = group * steps * k_per_lane + s * k_per_lane + e of the k block of
// steps * k instructions' K. The permutation of K is the same for A and B, so the sum is the
// same; steps == 1 is the instruction's own order.
int64_t operand_outer(const MatrixCoreShape& s, int64_t lane);
int64_t operand_k(const MatrixCoreShape& s, int64_t lane, int64_t step, int64_t e, int64_t steps);

} // namespace tilegen::layout
