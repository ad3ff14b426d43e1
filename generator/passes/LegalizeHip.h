// LegalizeHip: rewrites the IR into what the HIP lowering can emit (docs/hip.md).
//
// FP8 (e4m3, e5m2) gemm operands become f16 shared buffers, as on CUDA targets without wgmma
// (passes/LegalizeCuda): every FP8 value is exactly an f16 value, so the gemm runs on the f16
// MFMA/WMMA (or FMA) path with the same result. gfx942's own FP8 MFMA takes the FNUZ encodings
// (bias 8 and 16, no negative zero), not the OCP e4m3/e5m2 of the spec language, so it is not
// used (docs/hip.md "FP8").
// Precondition: an instantiated kernel.
#pragma once

#include "ir/IR.h"
#include "targets/Target.h"

namespace tilegen::passes {

ir::Kernel legalize_hip(const ir::Kernel& k, const Target& target);

} // namespace tilegen::passes
