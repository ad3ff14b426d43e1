// Metal rows of the target table (docs/metal.md). Sources for the numbers: Apple's "Metal
// feature set tables" (Apple7 = M1, A14 and later: 32 KiB of threadgroup memory, at most 1024
// threads per threadgroup, SIMD-groups of 32 threads, simdgroup_matrix) and the Metal Shading
// Language specification 3.1 (bfloat needs MSL 3.1: macOS 14, iOS 17).
//
// Metal keeps the C targets' schedule rule (the largest footprint within tile_budget_bytes,
// per instance; no shape classes) and takes its tiles from `schedule.targets.metal`. Its blocks
// are threadgroups of several SIMD-groups, so layout inference spreads fragments over their
// threads (Target::has_thread_layouts) from the `gpu` facts below.
#include "targets/Target.h"

namespace tilegen {

std::vector<Target> metal_targets() {
  Target t;
  t.name = "metal";
  t.backend = Backend::Metal;
  t.summary = "Metal Shading Language 3.1, Apple GPU family 7+ (M1-M4, A14+): simdgroup_matrix "
              "8x8 gemms, 16-bit tensors as half/bfloat, f32 compute";
  t.preference = 100;
  t.max_threads = 1024;
  t.vector_bytes = 16;
  // Threadgroup memory plus the registers of a 128-thread threadgroup at 64 floats each: what
  // the footprint rule lets a block hold on chip. The emitter checks the threadgroup-memory
  // part against metal.threadgroup_memory_bytes separately.
  t.tile_budget_bytes = 32 * 1024 + 128 * 64 * 4;
  // The build compiles variants with `xcrun metal` and these flags: MSL 3.1 (bfloat), and IEEE
  // infinities and NaNs (softmax's pad, max's identity and the attention masks are -inf; fast
  // math may assume there are none).
  t.compile_flags = {"-std=metal3.1", "-fno-fast-math"};
  t.gpu.warp_size = 32;
  t.gpu.warp_word = "SIMD-group";
  t.gpu.smem_per_block = 32 * 1024;
  t.gpu.mma = MatrixInst::Simdgroup8x8;
  t.gpu.max_tile_rank = 2;
  t.metal.gpu_family = 7;
  t.metal.language = "3.1";
  t.metal.threadgroup_memory_bytes = 32 * 1024;
  t.metal.max_threads_per_threadgroup = 1024;
  t.metal.simd_width = 32;
  return {t};
}

} // namespace tilegen
