// CUDA rows of the target table. Sources for the numbers: the CUDA C Programming Guide's
// "Technical Specifications per Compute Capability" table (shared memory per SM / per block,
// registers, resident threads and blocks). `sm_count` is a typical part of the architecture
// (see Target.h). Each sm_8x/sm_90 variant embeds SASS for its arch plus PTX, so it also runs
// (JIT-compiled once by the driver) on any later architecture; dispatch prefers the closest.
#include "targets/Target.h"

namespace tilegen {

namespace {

Target cuda_row(const char* name, const char* summary, int cc, int preference, GpuFacts g,
               std::vector<std::string> fallbacks = {}) {
  Target t;
  // A later architecture runs the earlier ones' variants (through their PTX), and takes
  // their schedule overrides where it has none of its own (`targets: {sm_80: ...}`).
  t.fallbacks = std::move(fallbacks);
  t.name = name;
  t.backend = Backend::CUDA;
  t.summary = summary;
  t.preference = preference;
  t.max_threads = 1024;
  t.vector_bytes = 16;
  g.cc = cc;
  g.dependent_launch = cc >= 90; // griddepcontrol is PTX for sm_90 and later
  g.parallel_vector_bytes = 16;  // ld.shared.v4 / st.shared.v4 (CudaEmitter::emit_parallel_vector)
  std::string c = std::to_string(cc);
  g.gencode = "-gencode=arch=compute_" + c + ",code=[sm_" + c + ",compute_" + c + "]";
  // The schedule resolver's footprint budget: what one block may hold on chip (shared memory
  // plus the register file a 256-thread block can own at 128 registers per thread).
  t.tile_budget_bytes = g.smem_per_block + 256 * 128 * 4;
  t.gpu = g;
  return t;
}

GpuFacts ampere_like(int64_t smem_sm, int64_t smem_block, int threads_sm, int blocks_sm,
                     int sms) {
  GpuFacts g;
  g.smem_per_sm = smem_sm;
  g.smem_per_block = smem_block;
  g.max_threads_per_sm = threads_sm;
  g.max_blocks_per_sm = blocks_sm;
  g.sm_count = sms;
  g.mma = MatrixInst::MmaM16N8K16;
  g.async_copy = AsyncCopy::CpAsync;
  g.split_join_smem = 1024;
  g.ws_window_align = 1024;
  return g;
}

// The recommender's throughput facts (docs/recommend.md), for the part named in each row:
//   sm_80 A100 SXM4 40 GB: 1555 GB/s HBM2; 312 TFLOP/s dense bf16/f16 tensor (f32 accumulate);
//         19.5 TFLOP/s f32 (NVIDIA A100 datasheet; the 80 GB part has 2039 GB/s).
//   sm_86 A10: 600 GB/s GDDR6; 125 TFLOP/s dense bf16 tensor; 31.2 TFLOP/s f32 (A10 datasheet).
//   sm_89 L40S: 864 GB/s GDDR6; 362 TFLOP/s dense bf16 tensor; 91.6 TFLOP/s f32 (L40S
//         datasheet). sm_count 142 is the L40S, so the three numbers describe one part.
//   sm_90 H100/H200 SXM on the sm_80 path: ~4000 GB/s (H100 SXM 3350, H200 4800); mma.sync
//         reaches ~2/3 of the 989 TFLOP/s wgmma peak on Hopper, so ~660; 67 TFLOP/s f32.
// L2 -> SM bandwidth is not on datasheets; microbenchmarks of these parts measure roughly
// 2.5-3.5x the DRAM bandwidth (A100 ~5 TB/s, H100 ~10 TB/s): 5000, 1800, 2600, 10000 GB/s
// here, good to a factor of ~1.5, which is what the model's ranking needs.
// Loaded DRAM latency is ~500-700 ns on all four (microbenchmark papers on Ampere and Hopper
// report 450-650 ns idle; under load it grows): 600 ns is the model's single figure.
GpuFacts with_perf(GpuFacts g, double dram_gbps, double l2_gbps, double mma_tflops,
                   double fp32_tflops) {
  g.dram_gbps = dram_gbps;
  g.l2_gbps = l2_gbps;
  g.mma_tflops = mma_tflops;
  g.fp32_tflops = fp32_tflops;
  g.mem_latency_ns = 600;
  return g;
}

// sm_90a: Hopper with its architecture-specific instructions (wgmma, TMA, setmaxnreg). Its
// SASS runs on cc 9.0 exactly (no PTX is embedded: compute_90a PTX cannot be JIT-compiled
// for a later architecture), so dispatch keeps an sm_90/sm_80 variant selectable beside it.
// 989 TFLOP/s is the H100/H200 SXM dense bf16 wgmma peak (datasheet); 4800 GB/s the H200's
// HBM3e. Without its own schedule overrides a spec takes sm_90's, then sm_80's.
Target hopper_row() {
  GpuFacts g = with_perf(ampere_like(228 * 1024, 227 * 1024, 2048, 32, 132), 4800, 12000, 989, 67);
  g.mma = MatrixInst::Wgmma;
  g.async_copy = AsyncCopy::Tma;
  // FP8 wgmma adds into its f32 accumulator keeping about 14 mantissa bits (DeepSeek-V3
  // technical report, section 3.3.2, measured on H800; torch._scaled_mm's use_fast_accum=False
  // and CUTLASS's non-FastAccum FP8 kernels promote for the same reason).
  g.fp8_accum_bits = 14;
  Target t = cuda_row("sm_90a",
                      "CUDA, Hopper with wgmma, TMA + mbarrier pipelines, warp specialization "
                      "(runs on cc 9.0 only)",
                      90, 120, g, {"sm_90", "sm_89", "sm_86", "sm_80"});
  t.gpu.arch_specific = true;
  t.gpu.gencode = "-gencode=arch=compute_90a,code=sm_90a";
  return t;
}

} // namespace

std::vector<Target> cuda_targets() {
  return {
      cuda_row("sm_80", "CUDA, Ampere A100 class (mma.sync m16n8k16, ldmatrix, cp.async)", 80,
               100, with_perf(ampere_like(164 * 1024, 163 * 1024, 2048, 32, 108), 1555, 5000, 312, 19.5)),
      cuda_row("sm_86", "CUDA, Ampere GA10x (RTX 30xx, A10, A40): sm_80 path, 100 KB smem/SM", 86,
               106, with_perf(ampere_like(100 * 1024, 99 * 1024, 1536, 16, 84), 600, 1800, 125, 31.2),
               {"sm_80"}),
      cuda_row("sm_89", "CUDA, Ada (RTX 40xx, L4, L40S): sm_80 path, 100 KB smem/SM", 89, 109,
               with_perf(ampere_like(100 * 1024, 99 * 1024, 1536, 24, 142), 864, 2600, 362, 91.6),
               {"sm_86", "sm_80"}),
      cuda_row("sm_90", "CUDA, Hopper running the sm_80 path (mma.sync, cp.async), 228 KB smem/SM",
               90, 110,
               with_perf(ampere_like(228 * 1024, 227 * 1024, 2048, 32, 132), 4000, 10000, 660, 67),
               {"sm_89", "sm_86", "sm_80"}),
      hopper_row(),
  };
}

} // namespace tilegen
