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
//  * MFMA f32 <- FP8 on gfx942 (v_mfma_f32_32x32x16_{fp8,bf8}_{fp8,bf8}, 16x16x32_*): the same
//    formulas with E = 8 (eight 8-bit values in the lane's 64-bit operand) and the same D as the
//    f16 instruction of the same M x N. The operands are read in the FNUZ encodings (e4m3fnuz,
//    e5m2fnuz: exponent bias 8 / 16, 0x80 the only NaN, no -0, no infinity), not OCP's:
//    fp8_ocp_to_fnuz below and docs/hip.md "FP8 on gfx942".
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

enum class MatrixCoreKind { Mfma32x32x8, Mfma16x16x16, Wmma16x16x16, Mfma32x32x16F8, Mfma16x16x32F8 };
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

// ---- AMD LDS bank model ----------------------------------------------------------------------
// The LDS serves one wave instruction in phases: `banks` banks of 4 bytes, each serving one
// 4-byte word per phase (lanes reading the same word share it); the lanes of a phase are as
// many as fill the banks once at the access width (CDNA, 32 banks: 32 lanes for b16/b32, 16
// for b64, 8 for b128), in lane order, except ds_read_b128, whose lane groups are the table's
// (HipFacts::lds_b128_groups; empty: in lane order). Facts and sources: targets/TargetsHip.cpp.
struct LdsBankModel {
  int banks = 32;
  int64_t wave = 64;
  std::vector<std::vector<int>> b128_groups;
};
// The lane groups of the phases of one wave access of `bytes` per lane.
std::vector<std::vector<int>> lds_phases(const LdsBankModel& m, int bytes);
// Bank-conflict degree of one wave access: the most distinct words one bank serves in one phase
// (1 = conflict-free). `addr` holds each lane's byte address (wave entries); `bytes` per lane.
int lds_conflict_ways(const LdsBankModel& m, const std::vector<int64_t>& addr, int bytes);

// The LDS reads HipGemm issues for one matrix-core operand (A, or B with j for i) stored
// row-major in a shared buffer of `cols` columns: K-major (the row is the instruction's M / N
// index, K along the row) or not (K along the rows, one element per lane and read). A K-major
// lane reads its steps * k_per_lane values in 16-byte reads where they are a whole number of
// 16-byte chunks, else in 8-byte reads. Every instruction tile (rows outer0 = 0, m, 2m, ... below
// `outer`), every k block of K and every read: one wave access each, byte addresses through `sw`.
struct LdsAccess {
  int bytes = 0;
  std::vector<int64_t> addr; // per lane
};
std::vector<LdsAccess> matrix_core_operand_reads(const MatrixCoreShape& s, int64_t steps, bool k_major,
                                                 int64_t outer, int64_t K, int64_t cols,
                                                 int elem_bytes, const Swizzle& sw);
// The worst conflict degree over those reads (1 = every read conflict-free).
int matrix_core_read_conflicts(const LdsBankModel& m, const MatrixCoreShape& s, int64_t steps,
                               bool k_major, int64_t outer, int64_t K, int64_t cols, int elem_bytes,
                               const Swizzle& sw);
// The layout of a [rows, cols] operand buffer (K-major: rows = the instruction's M / N index)
// HipGemm's reads are conflict-free on: the first of ldmatrix_swizzle (K-major only), none, and
// the XOR swizzles of 16-byte chunks Swizzle<B, log2(16 / elem_bytes), S> that permute a row's
// chunks by bits of its row index (B = 1..4; cols a power of two; they keep the 16-byte
// global->LDS stores whole), fewest bits and lowest row bits first, that is; else the one with
// the fewest conflicts. `ways` receives its conflict degree.
Swizzle matrix_core_operand_swizzle(const LdsBankModel& m, const MatrixCoreShape& s, int64_t steps,
                                    bool k_major, int64_t rows, int64_t cols, int elem_bytes,
                                    int* ways);
// K-major reads of 16 bytes per lane (else 8): what HipGemm emits for `steps` instructions.
bool matrix_core_reads_16(const MatrixCoreShape& s, int64_t steps, int elem_bytes);

// ---- OCP FP8 -> FNUZ (gfx942's FP8 MFMA operands) ----------------------------------------------
// Four OCP bytes (e4m3fn, or e5m2 where `e5m2`) of a 32-bit word rewritten so that the FNUZ
// reading of each is exactly half the OCP value: for every OCP pattern that is neither -0 nor
// NaN/infinity the bits stay (same sign, exponent and mantissa fields; FNUZ's bias is one more,
// so normals and subnormals alike read as x / 2); -0 (0x80, which FNUZ reads as NaN) becomes
// +0 (0x00); NaN (e4m3: S.1111.111; e5m2: S.11111.mm, mm != 0) and e5m2's infinities
// (S.11111.00, which FNUZ cannot encode) become FNUZ's NaN 0x80. A product of two converted
// operands is the OCP product / 4, exactly; HipGemm multiplies the accumulator by 1/4 before
// and by 4 after the instructions (powers of two: exact). The HIP emitter prints the same
// operations (HipGemm.cpp, tg_fp8_fnuz).
uint32_t fp8_ocp_to_fnuz(uint32_t x, bool e5m2);

} // namespace tilegen::layout
