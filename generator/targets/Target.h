// Targets are data: one row per target in Targets.cpp. Passes and emitters read these fields;
// nothing outside a target's own emitter branches on a target's name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tilegen {

enum class Backend { C, CUDA, HIP, Metal, WGSL };
const char* backend_name(Backend b); // "c", "cuda", "hip", "metal", "wgsl"
// Extension of a variant source of this backend: ".c", ".cu", ".hip", ".metal", ".wgsl".
const char* variant_extension(Backend b);

// The matrix instruction a GPU target's gemm lowers to (passes/LayoutInference).
enum class MatrixInst {
  None,         // SIMT FMA tiles (every type on C/WGSL; f32 everywhere)
  MmaM16N8K16,  // mma.sync.aligned.m16n8k16 f16/bf16 -> f32 (sm_80+), ldmatrix operands
  Wgmma,        // wgmma.mma_async m64nNk16 f16/bf16 -> f32 per warpgroup, operands through
                // shared-memory descriptors (sm_90a); mma.sync remains for other gemms
  Mfma,         // AMD CDNA v_mfma_f32_{32x32x8,16x16x16} f16/bf16 -> f32 per wave64 (gfx90a,
                // gfx942): the shapes are HipFacts::matrix
  Wmma,         // AMD RDNA3 v_wmma_f32_16x16x16 f16/bf16 -> f32 per wave32 (gfx1100)
  Simdgroup8x8, // Metal simdgroup_matrix 8x8: simdgroup_multiply_accumulate into float
                // matrices, operands converted to f32 as each lane loads its two elements
};
// How a GPU target moves global tiles into shared memory (passes/PipelinePlan).
enum class AsyncCopy {
  None,    // ordinary loads + stores, a barrier per stage
  CpAsync, // cp.async.cg 16 B (cp.async.ca 4 B for the scalar variant), commit/wait groups
  Tma,     // cp.async.bulk.tensor (TMA) tiles completing on mbarriers, issued by a producer
           // warp (sm_90a); cp.async for pipelines TMA cannot express
};

// Hardware facts of a CUDA or HIP target (HIP: a CU stands for an SM, LDS for shared memory,
// a wave for a warp; `warp_size` is the lanes a layout's warp has, 64 on CDNA). Sizes in bytes. `sm_count` is a typical part
// of the architecture (A100 108, A10/A40 84, L40S 142, H100/H200 SXM 132): the tile
// recommender's wave-quantization model uses it when no device is at hand.
struct GpuFacts {
  int cc = 0;                   // compute capability x 10: 80, 86, 89, 90
  bool arch_specific = false;   // sm_90a: SASS only, runs where cc == this cc exactly
  std::string gencode;          // nvcc -gencode argument for this target's variants
  int warp_size = 32;
  std::string warp_word = "warp"; // what the target calls a warp in messages: wave, SIMD-group
  int64_t smem_per_block = 0;   // largest dynamic shared memory a block may opt in to
  int64_t smem_per_sm = 0;
  int64_t smem_default = 48 * 1024; // above this a launch must opt in (cudaFuncSetAttribute)
  int regs_per_thread = 255;
  int regs_per_sm = 65536;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  int sm_count = 0;
  int smem_banks = 32;          // 4-byte banks
  MatrixInst mma = MatrixInst::None;
  AsyncCopy async_copy = AsyncCopy::None;
  // Programmatic dependent launch (cc 9.0 and later): kernels wait with griddepcontrol.wait
  // before their first global access and the host launches them with
  // cudaLaunchAttributeProgrammaticStreamSerialization (docs/hopper.md point 8).
  bool dependent_launch = false;
  // Mantissa bits the FP8 matrix instruction keeps when it adds its products into the
  // accumulator (0: full f32). Below f32's 23, LayoutInference promotes FP8 partial sums into an
  // f32 accumulator once per gemm (GemmPlan::promote_n).
  int fp8_accum_bits = 0;
  // Throughput facts for the tile recommender's analytic model (passes/TileRecommend,
  // docs/recommend.md): the same typical part as `sm_count`. Sources in TargetsCuda.cpp.
  double dram_gbps = 0;       // device-memory bandwidth, GB/s (1e9 B/s)
  double l2_gbps = 0;         // L2 -> SM bandwidth, GB/s (rough: ~2.5-3.5x dram_gbps)
  double mma_tflops = 0;      // dense f16/bf16 -> f32 through `mma` (0: no matrix inst), TFLOP/s
  double fp32_tflops = 0;     // f32 FMA through the SIMT pipes (2 flops per FMA), TFLOP/s
  double mem_latency_ns = 0;  // loaded device-memory latency, for the bytes-in-flight bound
  int64_t smem_reserved_per_block = 1024; // shared memory the driver keeps per resident block
  // Shared memory the emitter adds beside the buffers, which the block's budget must hold
  // (passes/ResourceEstimate; 0 where the emitter adds none). CUDA: a split loop's join outside
  // warp specialization declares a static __shared__ word, which makes the dynamic block
  // 1024-aligned (emit/CudaKernel.cpp); a warp-specialized kernel aligns its shared window up to
  // 1024 bytes at run time (emit/CudaHopper.cpp), its TMA pipeline's mbarriers counted beside.
  int64_t split_join_smem = 0;
  int64_t ws_window_align = 0;
  // Rank of the shared and fragment buffers (and so of the copy tiles) the emitter lays out:
  // rows x columns. Higher ranks are a located error (LayoutInference), not a guess.
  int max_tile_rank = 2;
  // Widest shared-memory access, in bytes, of a vectorized element-wise parallel loop
  // (passes/VectorParallel: runs of consecutive points per thread, one load or store per run
  // and buffer); 0: the target's emitter runs such loops point by point.
  int parallel_vector_bytes = 0;
};

// One AMD matrix instruction (HipFacts::matrix): D (m x n, f32) += A (m x k) * B (k x n) per
// wave, the operands' type `in` (f16 or bf16). Lane/register mappings are layout/MatrixCore.h's
// (AMD's matrix instruction calculator, CDNA3 ISA guide section 7.1, RDNA3 ISA section 7.9).
struct AmdMatrixShape {
  std::string mnemonic; // as llvm-objdump prints it for the row's arch ("v_mfma_f32_32x32x8_f16")
  std::string builtin;  // the clang builtin the HIP emitter calls
  std::string in;       // operand type: "f16", "bf16", "e4m3", "e5m2"
  int m = 0, n = 0, k = 0;
  // FP8 operands read in the FNUZ encodings (gfx942: e4m3fnuz / e5m2fnuz, exponent bias one
  // more than OCP's, 0x80 the only NaN): the HIP emitter converts the spec's OCP bytes and
  // rescales the accumulator (layout::fp8_ocp_to_fnuz, docs/hip.md "FP8 on gfx942").
  bool fnuz = false;
};

// Facts of a HIP target (backend HIP): how its variants are compiled and what one compute unit
// holds. The portable row (`hip`) has no offload arch of its own: it is compiled for every gfx
// target of the library, and by nvcc for HIP's NVIDIA platform (docs/hip.md).
struct HipFacts {
  std::string offload_arch;   // clang --offload-arch ("gfx942"); "" for the portable row
  // The compiler of its code objects: "hipcc" (Debian's ROCm 5.2, clang 15) where ROCm 5.2
  // knows the arch, else "clang-19" (gfx942, gfx1100) with ROCm 5.2's device headers.
  std::string compiler;
  int64_t vgprs = 256;        // architectural VGPRs a lane of one wave may use
  int64_t agprs = 0;          // accumulation VGPRs (CDNA: a second file of 256 beside them)
  int64_t vgpr_file_per_simd = 0; // bytes of vector registers per SIMD (occupancy)
  int simds_per_cu = 4;
  int max_waves_per_simd = 8;
  std::vector<AmdMatrixShape> matrix; // preference order
  // LDS banks beyond GpuFacts::smem_banks (layout::LdsBankModel): the lane groups ds_read_b128
  // serves together within each 32-lane half of a wave (empty: 8 consecutive lanes per 32
  // banks, as the narrower reads).
  std::vector<std::vector<int>> lds_b128_groups;
  // Multi-stage global->LDS pipelines without asynchronous copies: a pipelined loop's
  // `stages` are LDS buffers; each iteration loads the 16-byte chunks of the tile `stages - 1`
  // ahead into registers before its compute and stores them into the free buffer after it
  // (HipPipeline.cpp, docs/hip.md). The resource estimate counts the stages' LDS and the
  // staging registers where this is set.
  bool register_staged_pipeline = false;
};

// Facts of a WebGPU (WGSL) target: the limits every generated shader stays within and the
// language features it may use. Defaults are WebGPU's guaranteed limits (the spec's "Limits"
// table), which every adapter supports without the device asking for more; docs/wgsl.md.
struct WgslFacts {
  int max_invocations = 256;                  // maxComputeInvocationsPerWorkgroup
  int64_t workgroup_storage_bytes = 16384;    // maxComputeWorkgroupStorageSize
  int64_t max_storage_binding_bytes = 134217728; // maxStorageBufferBindingSize (128 MiB)
  int max_storage_buffers = 8;                // maxStorageBuffersPerShaderStage
  int64_t max_workgroups_per_dim = 65535;     // maxComputeWorkgroupsPerDimension
  bool shader_f16 = false; // `enable f16;`: f16 tensors are array<f16> (no packing)
  bool subgroups = false;  // `enable subgroups;`: reductions through subgroup shuffles
};

// Facts of a Metal target (docs/metal.md): the Apple GPU family its variants need and the
// limits every generated kernel stays within. Sources in TargetsMetal.cpp.
struct MetalFacts {
  int gpu_family = 0;                     // MTLGPUFamilyApple<N>: 7 = M1 / A14 and later
  std::string language;                   // MSL version the sources are written in ("3.1")
  int64_t threadgroup_memory_bytes = 0;   // maxThreadgroupMemoryLength
  int max_threads_per_threadgroup = 0;    // maxTotalThreadsPerThreadgroup (upper bound)
  int simd_width = 32;                    // threads per SIMD-group (threadExecutionWidth)
};

struct Target {
  std::string name;    // what users write in TARGETS / --targets: "c", "c_avx2", "sm_80", ...
  Backend backend;
  std::string summary; // one line for `tilegen targets`

  // Selection at run time. A variant for this target may run where the runtime reports every
  // feature in `runtime_features` (names understood by runtime/src/cpu.c and later device
  // queries). `fallbacks` lists targets whose variants also run where this one does (an
  // implication edge: c_avx512 -> c_avx2 -> c); dispatch prefers the most specific.
  std::vector<std::string> runtime_features;
  std::vector<std::string> fallbacks;
  int preference = 0; // higher wins among variants that can run

  // Budgets for schedule resolution and memory planning.
  int64_t tile_budget_bytes = 0; // on-chip bytes a block's shared+fragment+local may use
  int vector_bytes = 16;         // widest SIMD register (C) — guides micro-tile widths
  int max_threads = 1;           // threads per block the backend can run (1 on C: a block is
                                 // one OpenMP iteration)

  // Build: extra flags CMake passes to the compiler for this target's variant sources.
  std::vector<std::string> compile_flags;
  // C targets of one CPU architecture ("x86", "aarch64"; "" for the portable `c` and every
  // non-C row). Their flags are that architecture's compiler's only, so a library is built for
  // one architecture at a time: the dispatch code compiles their rows only under
  // cpu_arch_guard() and add_tile_kernels compiles their variants only where
  // CMAKE_SYSTEM_PROCESSOR is that architecture (docs/c-backend.md, "Arm").
  std::string cpu_arch;
  // Flags only GCC gets after compile_flags (add_tile_kernels: $<C_COMPILER_ID:GNU>):
  // workarounds of GCC bugs that clang's driver would reject.
  std::vector<std::string> gcc_flags;
  // The tile budget is a share of a CPU core's private cache: kernels without a gemm, whose
  // every global element is used a bounded number of times, take the schedule resolver's
  // streaming rule instead of the largest footprint (docs/spec.md "The tile-resolution rule").
  bool streaming_tile_rule = false;
  // C: f32 `exp` in simd loops of elementwise passes is evaluated in chunks through
  // tg_exp_row_f32, whose vector body needs an instruction the autovectorizer never emits
  // (AVX-512's vscalefps: 2^n and its overflow/underflow in one instruction, where the portable
  // helper takes 9; docs/c-backend.md "Math functions"). Off: exp stays tg_exp_f32 in the loop.
  bool c_exp_rows = false;
  // C: f16 inputs copied into f32 tiles may be read in place (views, emit/CViews.cpp) and
  // converted with F16C's vcvtph2ps into small f32 buffers before the loops that read them
  // (emit/CF16Rows.cpp). Off: f16 inputs are copied into the tile (gcc vectorizes the scalar
  // conversion of a view's element as integer arithmetic, slower than the copy).
  bool c_f16_rows = false;
  // C: a streaming fused store (emit/CViews.cpp emit_fused_store) computes each chunk in
  // sub-chunks of 16 and stores each with tg_put16_<type> where the chunk's destination is a
  // multiple of 16 bytes, so that gcc keeps the sub-chunk (and its f16 views' conversions) in
  // registers instead of two L1 buffers (docs/c-backend.md "Memory-bound kernels"). Off, or
  // at other addresses: the chunk goes through tg_chunk and tg_stream_row_<type>.
  bool c_put16 = false;
  // C: a streaming fused store into an f16 or bf16 output whose value is covered by
  // emit/CVecStore.cpp's dialect (f32 arithmetic on rows of f32 buffers and f32/f16/bf16 views)
  // is printed in AVX2 + F16C intrinsics, the row's values kept in registers from the loads to
  // tg_v16_put_<type>'s stores. Off, or for other outputs and values: c_put16's pieces or the
  // chunks.
  bool c_vec_store = false;

  // GPU targets only (backend CUDA/HIP); cc == 0 elsewhere.
  GpuFacts gpu;
  // HIP targets only (backend HIP).
  HipFacts hip;
  // WGSL targets only (backend WGSL).
  WgslFacts wgsl;
  // Metal targets only (backend Metal). Their `gpu` holds what layout inference reads
  // (warp_size, smem_per_block, mma, max_tile_rank); cc stays 0.
  MetalFacts metal;

  bool is_gpu() const { return backend == Backend::CUDA || backend == Backend::HIP; }
  // Blocks of many threads whose fragments are spread over them by layout inference
  // (passes/LayoutInference): the CUDA/HIP targets and Metal. Metal keeps the C-style schedule
  // rule and no shape classes (is_gpu() is false there).
  bool has_thread_layouts() const { return is_gpu() || backend == Backend::Metal; }
};

const std::vector<Target>& all_targets();
// The rows of each backend family, concatenated by all_targets() in this order: C
// (Targets.cpp), CUDA (TargetsCuda.cpp), HIP (TargetsHip.cpp), WGSL (TargetsWgsl.cpp), Metal
// (TargetsMetal.cpp).
std::vector<Target> c_targets();
std::vector<Target> cuda_targets();
std::vector<Target> hip_targets();
std::vector<Target> wgsl_targets();
std::vector<Target> metal_targets();
// Targets planned (docs/internals.md) whose emitters do not exist yet: specs may already
// carry their schedule overrides, so the front end accepts these names.
const std::vector<std::string>& planned_target_names();
const Target* find_target(std::string_view name); // nullptr if unknown
// The C preprocessor condition under which code for CPU architecture `cpu_arch` (a row's
// Target::cpu_arch, not empty) compiles: "defined(__aarch64__)", ...
std::string cpu_arch_guard(const std::string& cpu_arch);

} // namespace tilegen
