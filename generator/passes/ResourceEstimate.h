// ResourceEstimate: what one block of a kernel needs on a GPU target, for one configuration:
// dynamic shared memory (exact: the CUDA emitter allocates exactly this), registers per thread
// (an estimate: ptxas decides) and threads per block. Memory planning (passes/TileRecommend)
// rejects configurations over the target's limits with these numbers, before nvcc runs.
//
// Shared memory (docs/recommend.md "Shared memory", the contract with emit/Cuda*):
//   smem = sum over `shared` buffers b of round_up(elems(b) * dtype_bytes(b) * F(b), 128)
//        + reduction scratch
//        + round_up(floor(threads / 32) * 4 * max over Reduce ops of elems(dst), 128)
//        + round_up(max over staged gemms of elems(a) * 4, 128)
//   F(b) = the `stages` value of the loop if b is the destination of a Copy whose source is a
//          Global region and whose innermost enclosing loop is a pipelined `for` with
//          stages >= 2, on a target with asynchronous copies (gpu.async_copy != None); the
//          largest such value if there are several; else 1.
//   reduction scratch: one f32 partial per warp and output element (0 without a Reduce);
//   staged gemms: SIMT gemms whose A operand is a fragment go through an f32 copy of A in
//          shared memory (LayoutInference's GemmPlan::a_staged).
// Buffers are laid out in declaration order, each at a 128-byte boundary, then the reduction
// scratch, then the staging scratch: exactly CudaEmitter::plan_memory's layout.
//
// Registers (an estimate, documented in docs/recommend.md "Registers"):
//   words(b)       = ceil(elems * w / threads) for a `fragment`, ceil(elems * w) for a `local`
//     where w = 1/2 for 16-bit dtypes, 1 for 32-bit, 2 for 64-bit, 1/4 for 8-bit;
//   fragment words = at the peak program point, the words of the buffers live there (a loop
//                    that carries a buffer, or mentions it also outside, keeps it live);
//   operand words  = at that point, if it is a Gemm on an mma target, one k16 slice of a and
//                    b per thread: ceil((m + n) * 16 * 2 B / 4 / threads);
//   registers      = max over points of fragment + operand words, + 40 (fixed overhead: thread/block
//                    indices, ~8 64-bit tensor and shared-memory addresses, loop counters,
//                    bounds predicates, pipeline stage indices: what ptxas reports beyond the
//                    tiles for the sm_80 kernels of this shape, rounded up).
#pragma once

#include <algorithm>

#include "ir/IR.h"
#include "ir/Substitute.h"
#include "passes/LayoutInference.h"
#include "support/Diagnostics.h"
#include "targets/Target.h"

#include <optional>
#include <string>
#include <vector>

namespace tilegen::passes {

struct SmemBuffer {
  std::string name;
  int64_t elems = 0;       // product of the extents
  int64_t dtype_bytes = 0; // under the type binding (f16/bf16: 2)
  int64_t factor = 1;      // F above: pipeline stages, or 1
  int64_t bytes = 0;       // round_up(elems * dtype_bytes * factor, 128 or 1024 for a panel),
                           // + the padding before a panel buffer's 1024-byte start
};

struct ResourceUse {
  int64_t threads = 0;
  std::vector<SmemBuffer> smem_buffers; // declaration order
  int64_t reduce_scratch = 0;           // bytes, after the buffers (128-B rounded)
  int64_t stage_scratch = 0;            // bytes, after the reduction scratch (128-B rounded)
  // CUDA: a split loop's join (outside warp specialization) declares a static __shared__ word,
  // and the kernel then aligns its dynamic block to 1024 bytes (emit/CudaKernel.cpp), so the
  // word takes 1024 bytes of the block's shared memory; 0 elsewhere
  int64_t static_smem = 0;
  // CUDA warp specialization: the TMA pipeline's mbarriers (an upper bound) and the 1024 bytes
  // the kernel may skip to align its shared window; 0 elsewhere
  int64_t pipeline_smem = 0;
  int64_t smem_bytes = 0;               // buffers + scratch + static_smem + pipeline_smem
  int64_t fragment_words = 0;           // per thread, fragments + locals live at the peak
  int64_t operand_words = 0;            // per thread, the peak's mma operand slices
  // per thread, the register-staged pipeline's chunks of one stage (HipFacts::
  // register_staged_pipeline; 0 elsewhere), live across the loop's compute
  int64_t staging_words = 0;
  int64_t registers = 0;                // estimate per thread (see above)
  // Every fragment and every gemm's operand slice at once, + the overhead: the upper bound the
  // analytic model's occupancy uses (docs/recommend.md "Registers").
  int64_t registers_all = 0;
  int64_t overhead = 0; // the fixed part of registers (addresses, indices, loop counters)
  // Warp-specialized blocks (a TMA pipeline: one producer warpgroup + the consumers, persistent,
  // one block per SM): the consumers' per-thread budget after setmaxnreg. 0 otherwise (the
  // block's threads share the register file evenly).
  int64_t register_budget = 0;
  // Whether the estimate fits the block's register file: the setmaxnreg budget for
  // warp-specialized blocks, else threads x registers (8-rounded) within the SM's file.
  bool registers_fit(const GpuFacts& g) const {
    return register_budget > 0 ? registers <= register_budget
                               : (registers + 7) / 8 * 8 * threads <= g.regs_per_sm;
  }

  // "A_s 4 × 16384 B, B_s 4 × 16384 B" (+ ", reduce scratch 512 B"); factor 1 prints as
  // "Q_s 16384 B".
  std::string smem_breakdown() const;
  // "160 fragment + 8 operand + 40 fixed"
  std::string register_breakdown() const;
};

inline constexpr int64_t kSmemAlign = 128;
// Registers besides fragments and operand slices: addresses, indices, loop counters. mma.sync
// kernels keep per-thread shared-memory addresses for ldmatrix and cp.async; the consumers of a
// warp-specialized wgmma kernel address shared memory through descriptors (a few 64-bit values)
// and issue no copies. Calibrated with ptxas on sm_90a: 3-warpgroup D64 attention (131
// fragment words) fits the 160-register budget without spills; a 163-word tile (BN 192) spills.
inline constexpr int64_t kRegisterOverhead = 40;
inline constexpr int64_t kRegisterOverheadWs = 28;
// Registers of the consumers' budget a hoisted A operand (plan_hoisted_operands) must leave
// free beyond the estimate. Calibrated with ptxas on sm_90a: non-causal D128 attention
// (estimate 223 of 240 with Q hoisted) compiles without spills, causal D128 (223 of 232: its
// tile scheduler's producer keeps 32) spilled 12 bytes.
inline constexpr int64_t kHoistMargin = 16;

// setmaxnreg budgets of a warp-specialized block: the producer warpgroup keeps the minimum its
// TMA loop needs (24 where the consumers hold a register-A wgmma's operands besides its
// accumulators, FA3's rotated attention; else 40; at least 32 with a tile scheduler thread
// beside the TMA thread), and the consumers share the rest of the registers the block got at
// launch: a multiple of 8, at most 248.
inline constexpr int64_t kProducerRegs = 40;
inline constexpr int64_t kProducerRegsMin = 24;
inline constexpr int64_t kProducerRegsScheduler = 32;
// A warp-specialized kernel with one consumer group whose pipelined loop runs longer for a
// larger grid x index (causal attention) takes its tiles heaviest first from a counter at run
// time, drawn by a scheduler thread of the producer warpgroup (docs/hopper.md "tile order at run time").
bool ws_dynamic_tiles(const ir::Kernel& k, const LayoutPlan& plan);
// The split tail's join (docs/hopper.md): the Combine right after the warp-specialized loop, at
// the top of the body, where every tile runs the same number of iterations (the extent mentions
// only dims, value params, flags, scalars and tile constants) and tiles run in a fixed order
// (not ws_dynamic_tiles); null where tiles always run whole.
const ir::Combine* ws_split_join(const ir::Kernel& k, const LayoutPlan& plan);
// The join of a split loop on the non-persistent CUDA kernel (docs/cuda-backend.md "Split
// loops"): the Combine right after a pipelined loop at the top of the body whose trip count
// reads a tensor (sequence lengths: a serving kernel's tiles run what the data says, and a
// launch of few tiles is the common case), or whose body stores into shared memory besides its
// copies (a tile rewritten element-wise before the gemm, e.g. dequantized weights: each k step
// costs the block ALU work on top of its loads, so a launch under one wave leaves the SMs' issue
// slots, and with them the memory system, mostly idle; a loop of copies and gemms alone reads
// at HBM speed from one block per SM, gemm.yaml's gemv class); null elsewhere, where every tile
// runs its loop whole. *uniform (if given): the trip count reads no tensor and is the same for
// every tile (dims, params, scalars and tile constants only), so the host knows it.
const ir::Combine* np_split_join(const ir::Kernel& k, const ir::For** loop = nullptr,
                                 bool* uniform = nullptr);
// The split join's tree (emit/CudaHopper.cpp emit_combine): units per group at each level (parts
// at level 0, then ceil(u / kSplitGroup) groups); each group's last unit to arrive merges the
// group in unit order and goes up a level, until one part has them all. Per split tile it
// takes one arrival word per group of every level and one slot (a part's carried registers
// and a ready word) per unit of every level.
inline constexpr int64_t kSplitGroup = 4;
// Blocks of `smem_bytes` shared memory (plus the 1 KB the driver reserves per block) and
// `threads` threads one SM of `g` holds at once, at least 1: the generation-time estimate of a
// split loop's resident blocks (registers are the driver's to count at run time).
inline int64_t resident_blocks(const GpuFacts& g, int64_t smem_bytes, int64_t threads) {
  int64_t r = g.max_blocks_per_sm;
  if (smem_bytes > 0 && g.smem_per_sm > 0)
    r = std::min<int64_t>(r, g.smem_per_sm / (smem_bytes + 1024));
  if (threads > 0)
    r = std::min<int64_t>(r, g.max_threads_per_sm / threads);
  return std::max<int64_t>(r, 1);
}
inline int64_t split_join_words(int64_t parts) {
  int64_t n = 0;
  for (int64_t u = parts; u > 1; u = (u + kSplitGroup - 1) / kSplitGroup)
    n += (u + kSplitGroup - 1) / kSplitGroup;
  return n;
}
inline int64_t split_join_slots(int64_t parts) {
  int64_t n = 0;
  for (int64_t u = parts; u > 1; u = (u + kSplitGroup - 1) / kSplitGroup)
    n += u;
  return n;
}
// True when `loop`'s trip count depends on the grid's x index and provably never decreases as it
// grows (passes::monotonicity; causal attention's keys up to the query block): the persistent
// walk takes x from the top down (heaviest first), and ws_dynamic_tiles draws the tiles.
bool extent_rises_with_grid_x(const ir::Kernel& k, const ir::For* loop);
// The producer's budget of a warp-specialized plan of `k` (above).
int64_t ws_producer_registers(const ir::Kernel& k, const LayoutPlan& plan);
// A block of consumer_threads + 128 threads gets regs_per_sm / threads registers per thread at
// launch (a multiple of 8, at most 255); setmaxnreg only moves registers between its warps.
inline int64_t ws_consumer_registers(int64_t consumer_threads, int64_t regs_per_sm,
                                     int64_t producer_regs) {
  const int64_t threads = consumer_threads + 128;
  const int64_t per_thread = (regs_per_sm / threads < 255 ? regs_per_sm / threads : 255) / 8 * 8;
  const int64_t r = (per_thread * threads - producer_regs * 128) / consumer_threads;
  return (r < 248 ? r : 248) / 8 * 8;
}

// `k` with the tile constants, value params and flags bound by `m` (e.g. instance_var_map plus
// one configuration); pass an empty map for an instantiated kernel. Extents, stages and the
// thread count must then fold to constants: otherwise a located error is reported through
// `diag` and nullopt returned. `target` must be a GPU target. `plan`: the layout plan of `k`
// (its gemms are looked up by node, so `k` must be the kernel the plan was made for); without
// it, a gemm counts as staged when its A is a fragment and it cannot use the target's mma
// (a 16-bit A and B, f32 C, on an mma target).
std::optional<ResourceUse> estimate_resources(const ir::Kernel& k, const ir::VarMap& m,
                                              const Target& target, DiagEngine& diag,
                                              const LayoutPlan* plan = nullptr);

// Operand buffering of the mma.sync gemms of an instantiated kernel (GemmPlan::b_chunked):
// a gemm whose warp tile has two or more m16 tiles loads B in n16 chunks when the fragments
// live at it (as estimate_resources counts them), its whole-step double-buffered operands and
// the fixed overhead would exceed the target's registers per thread. Called by infer_layouts.
void plan_operand_buffers(const ir::Kernel& k, const Target& target, LayoutPlan& plan);

// Hoisted wgmma A operands of a warp-specialized plan (GemmPlan::a_hoisted): every wgmma gemm
// of the pipelined loop whose A is a 16-bit, 128-byte-swizzled, K-major shared buffer filled by
// a prologue copy of the loop (one consumer group) reads A into registers before the loop, when
// the registers live anywhere in the loop (as estimate_resources counts them), the hoisted
// K / 16 x 4 per gemm and the fixed overhead leave kHoistMargin of the consumers' setmaxnreg
// budget free. Measured on the H200 (bench/RESULTS.md 2026-12-02): attention D128 1.1-1.5%
// faster at the power cap, 2% less energy per call. Called by infer_layouts.
void plan_hoisted_operands(const ir::Kernel& k, const Target& target, LayoutPlan& plan);

} // namespace tilegen::passes
