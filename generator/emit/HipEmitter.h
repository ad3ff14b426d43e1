// HipEmitter: the HIP dialect of the GPU C++ printer (docs/hip.md). It is CudaEmitter's
// statement lowering (copies, fills, parallel loops, reductions, FMA gemms, barriers, the
// memory plan) with HIP's spellings and AMD's facts from the target table: wave size (the
// reductions' butterflies and the cross-wave scratch), LDS limits, no asynchronous copies (the
// synchronous 16-byte chunk path), and MFMA/WMMA gemms (HipGemm.cpp, from layout/MatrixCore.h).
// What CudaEmitter does only for CUDA (mma.sync, ldmatrix, cp.async, wgmma, TMA, PDL) is reached
// through target facts HIP rows do not have.
//
// A variant file (.hip) is compiled twice (cmake/TileGen.cmake):
//  * device pass (hipcc / clang --cuda-device-only, or nvcc --cubin for HIP's NVIDIA platform):
//    the kernels tg_kernel_16 and tg_kernel_0, extern "C" __global__, one code object per arch;
//  * host pass (the C++ compiler, no HIP header): tg_setup (grid, parameters, the vector width
//    every tensor allows: the same checks as CUDA's; a grid over HIP's limits folded into x, as
//    CUDA's, which tg_kernel_0 decodes) and the variant function, which launches
//    through runtime/src/hip.c on the code objects the build embeds (TG_HIP_IMAGES), so that
//    nothing links libamdhip64.
#pragma once

#include "emit/CudaEmitter.h"

namespace tilegen::emit {

class HipEmitter final : public CudaEmitter {
public:
  HipEmitter(const ir::Kernel& k, const Target& t, const VariantInfo& info, passes::LayoutPlan plan);
  std::string run();

protected:
  std::string storage_type_name(ir::DType t) const override;
  std::string inf_literal(ir::DType t) const override;
  std::string nan_literal(ir::DType t) const override;
  std::string print_call(const ir::Call* c, int& prec) override;
  std::string shfl_xor(const std::string& v, int mask) const override;
  // `::`: ROCm's headers declare __half overloads of __ldg in an unnamed namespace, which hide
  // the global ones from unqualified lookup inside ours (uint2/uint4 loads find theirs by
  // argument-dependent lookup; uint32_t has none).
  std::string ldg_name() const override { return "::__ldg"; }
  std::string to_float(const std::string& storage_value, ir::DType t) const override;
  std::string from_float(const std::string& float_value, ir::DType t) const override;
  std::string helpers_source() const override;
  std::string fp8_widen_tag(ir::DType t) const override;
  void emit_gemm(const ir::Stmt& s, const ir::Gemm* g) override;
  // HipPipeline.cpp: `stages` LDS buffers filled through registers (no cp.async on AMD); the
  // accumulators of the loop's FP8 FNUZ gemms scaled once around it (fnuz_hoisted).
  void emit_pipelined(const ir::For* f, int64_t stages) override;

private:
  void emit_pipelined_loop(const ir::For* f, int64_t stages);
  // HipGemm.cpp: one gemm on an AMD matrix instruction (GemmPlan::MatrixCore).
  void gemm_matrix_core(const ir::Gemm* g, const passes::GemmPlan& p);
  // HipGemm.cpp: the accumulators a loop's body uses only as C of FP8 gemms on FNUZ
  // instructions (AmdMatrixShape::fnuz), which the loop holds at 1/4 of their values: scaled
  // once before it and once after it, not around each gemm (docs/hip.md "FP8 on gfx942").
  std::vector<const ir::Buffer*> fnuz_hoisted(const ir::For* f) const;
  void fnuz_scale(const ir::Buffer* acc, bool before); // x 1/4 before the loop, x 4 after
  std::set<const ir::Buffer*> fnuz_scaled_; // accumulators now held at 1/4 (inside such a loop)
  // HipPipeline.cpp: how a producer copy stages its tile through registers.
  struct StagedCopy {
    int64_t elems = 0;   // elements per 16-byte source chunk; 0: not staged (synchronous copy)
    bool widen = false;  // FP8 chunks widened to f16 at the store
    int64_t chunks = 0;  // chunks of the tile
    int64_t per = 0;     // chunks per thread (its staging registers / 4)
  };
  StagedCopy staged_copy(const ir::Copy* c) const;
  void staged_chunk(const ir::Copy* c, const StagedCopy& s);
  void staged_load(const ir::Stmt& p, const StagedCopy& s, const std::string& regs);
  void staged_store(const ir::Copy* c, const StagedCopy& s, const std::string& regs);
  std::string host_source(const std::string& grid_code, const std::string& host_dims);
  bool uses(ir::ScalarKind k) const; // some tensor or buffer has this dtype
  std::set<std::string> builtins_; // matrix-instruction helpers to print (HipGemm.cpp)
};

// The name of a variant's embedded code-object table, for the build (cmake/TileGen.cmake writes
// the header TG_HIP_IMAGES names, which defines it).
inline constexpr const char* kHipImagesMacro = "TG_HIP_IMAGES";

} // namespace tilegen::emit
