// LegalizeHip: rewrites the IR into what the HIP lowering can emit (docs/hip.md).
//
// FP8 (e4m3, e5m2) gemm operands become f16 shared buffers, as on CUDA targets without wgmma
// (passes/LegalizeCuda): every FP8 value is exactly an f16 value, so the gemm runs on the f16
// MFMA/WMMA (or FMA) path with the same result. Except where the target has an FP8 matrix
// instruction for the gemm (gfx942: hip_fp8_matrix_native): its operands stay FP8 in LDS and
// HipGemm converts them from the spec's OCP encodings to the FNUZ ones the instruction reads
// (docs/hip.md "FP8 on gfx942").
// Precondition: an instantiated kernel.
#pragma once

#include "ir/IR.h"
#include "targets/Target.h"

#include <cstdint>

namespace tilegen::passes {

ir::Kernel legalize_hip(const ir::Kernel& k, const Target& target);

// Whether a gemm with these operands runs on one of the target's FP8 matrix instructions (so its
// FP8 shared operands are not widened): A and B shared, of the same FP8 type, which an
// instruction of the table takes; C f32; K a multiple of the instruction's k; the block's waves
// arranged over whole instruction tiles of the [M, N] accumulator; and no gemm of the kernel
// reading A from a fragment (`fragment_a`: LayoutInference keeps FMA tiles for all of them).
// The same test as LayoutInference's choice of a matrix instruction, so that the resource
// estimate (FP8 LDS at one byte) and the plan agree.
bool hip_fp8_matrix_native(const Target& t, ir::DType a, ir::DType b, ir::DType c, bool a_shared,
                           bool b_shared, int64_t M, int64_t N, int64_t K, int64_t threads,
                           bool fragment_a);

} // namespace tilegen::passes
