// LegalizeCuda: rewrites the IR into what the CUDA lowering of one target can emit.
//
// FP8 (e4m3, e5m2) gemm operands: only wgmma (sm_90a) multiplies FP8 tiles here. On every
// other CUDA target, and for a gemm that does not lower to wgmma (passes/LayoutInference.h,
// wgmma_eligible), each FP8 shared buffer such a gemm reads becomes an f16 buffer: every FP8
// value is exactly an f16 value, so the copy that fills it converts exactly and the gemm runs
// on mma.sync f16 with the same result. Widening one operand of a gemm widens its other FP8
// operand too (mma.sync needs both the same), repeated until nothing changes.
// Other FP8 buffers (fragments, shared buffers no gemm reads) keep their type: the emitter
// holds their values as f32 and rounds writes through the type.
// Precondition: an instantiated kernel (constant block size and shapes).
#pragma once

#include <functional>
#include <set>
#include <vector>

#include "ir/IR.h"
#include "targets/Target.h"

#include <functional>

namespace tilegen::passes {

ir::Kernel legalize_cuda(const ir::Kernel& k, const Target& target);

// The widening above with the gemms whose FP8 operands stay FP8 given by `native` (shared with
// passes/LegalizeHip).
// The FP8 shared buffers widen_fp8_gemm_operands widens among these gemms' operands: those of
// a gemm `native` rejects, and every FP8 shared operand of a gemm that shares a widened one (a
// buffer has one dtype). The resource estimate asks it too, so that its byte count and the
// legalized kernel agree.
std::set<const ir::Buffer*> fp8_widened_operands(const std::vector<const ir::Gemm*>& gemms,
                                                 const std::function<bool(const ir::Gemm&)>& native);
ir::Kernel widen_fp8_gemm_operands(const ir::Kernel& k,
                                   const std::function<bool(const ir::Gemm&)>& native);

// Whether CUDA target `t` multiplies FP8 shared tiles directly (wgmma). Elsewhere their gemm
// operands become f16; the resource estimate counts them so.
inline bool cuda_fp8_tiles_native(const Target& t) { return t.gpu.mma == MatrixInst::Wgmma; }

} // namespace tilegen::passes
