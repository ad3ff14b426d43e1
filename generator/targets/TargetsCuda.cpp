// CUDA rows of the target table. Sources for the numbers: the CUDA C Programming Guide's
// "Technical Specifications per Compute Capability" table (shared memory per SM / per block,
// registers, resident threads and blocks). `sm_count` is a typical part of the architecture
// (see Target.h). Each sm_8x/sm_90 variant embeds SASS for its arch plus PTX, so it also runs
// (JIT-compiled once by the driver) on any later architecture; dispatch prefers the closest.
#include "targets/Target.h"

namespace tilegen {

namespace {

Target cuda_row(const char* name, const char* summary, int cc, int preference, GpuFacts g) {
  Target t;
  t.name = name;
  t.backend = Backend::CUDA;
  t.summary = summary;
  t.preference = preference;
  t.max_threads = 1024;
  t.vector_bytes = 16;
  g.cc = cc;
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
  return g;
}

} // namespace

std::vector<Target> cuda_targets() {
  return {
      cuda_row("sm_80", "CUDA, Ampere A100 class (mma.sync m16n8k16, ldmatrix, cp.async)", 80,
               100, ampere_like(164 * 1024, 163 * 1024, 2048, 32, 108)),
      cuda_row("sm_86", "CUDA, Ampere GA10x (RTX 30xx, A10, A40): sm_80 path, 100 KB smem/SM", 86,
               106, ampere_like(100 * 1024, 99 * 1024, 1536, 16, 84)),
      cuda_row("sm_89", "CUDA, Ada (RTX 40xx, L4, L40S): sm_80 path, 100 KB smem/SM", 89, 109,
               ampere_like(100 * 1024, 99 * 1024, 1536, 24, 128)),
      cuda_row("sm_90", "CUDA, Hopper running the sm_80 path (mma.sync, cp.async), 228 KB smem/SM",
               90, 110, ampere_like(228 * 1024, 227 * 1024, 2048, 32, 132)),
  };
}

} // namespace tilegen
