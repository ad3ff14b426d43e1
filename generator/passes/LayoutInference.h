// LayoutInference: decides, for a GPU target, how every fragment is spread over threads and
// registers, which instruction each gemm uses and how each shared buffer is swizzled.
//
//  1. Gemms pick their instruction from the target table (mma.sync m16n8k16 for 16-bit
//     operands where the target has it, else FMA tiles) and a warp (or thread) arrangement;
//     the accumulator gets that instruction's layout. A fragment that later feeds a gemm's A
//     operand from registers forces its producer to give each warp whole rows (WN = 1).
//  2. Layouts flow to a fixpoint: a fragment-to-fragment copy keeps the layout, a reduce drops
//     the reduced dim, and inside a `parallel` every fragment indexed by the same variable
//     must agree on that variable's map (so a row vector next to an accumulator gets the
//     accumulator's row map, replicated over the lanes that hold the row's columns).
//  3. Fragments no op constrains get the elementwise layout (16-byte accesses per thread).
// Shared buffers read by ldmatrix get the XOR swizzle that makes ldmatrix and the cp.async
// stores filling them conflict-free. Two ops that demand different layouts of one fragment
// are a located error naming both.
#pragma once

#include "ir/IR.h"
#include "layout/Layout.h"
#include "support/Diagnostics.h"
#include "targets/Target.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tilegen::passes {

struct GemmPlan {
  // Simdgroup: Metal simdgroup_matrix 8x8 (simdgroup_multiply_accumulate), wm x wn SIMD-groups.
  // MatrixCore: an AMD MFMA/WMMA instruction (HIP targets; `matrix` indexes the target's
  // HipFacts::matrix, layout/MatrixCore.h has its lane mappings).
  enum Kind { Mma, Simt, Wgmma, Simdgroup, MatrixCore } kind = Simt;
  int64_t wm = 1, wn = 1; // Mma, Simdgroup, MatrixCore: warps (SIMD-groups, waves) along M and N
  int64_t matrix = -1;    // MatrixCore: the instruction
  // MatrixCore: instructions along K fed by one operand load (2: a lane reads 16 bytes of f16
  // for two MFMA steps, layout::operand_k's permutation of K), where K allows it.
  int64_t steps = 1;
  int64_t ty = 1, tx = 1; // Simt: threads along M and N
  bool a_in_regs = false; // Mma, Simdgroup: A read from a fragment's registers (no ldmatrix)
  bool a_staged = false;  // Simt: A fragment written to shared scratch first
  // Mma: B's ldmatrix run one n16 chunk ahead of the mma (8 registers) instead of a whole k16
  // step ahead (4 per 8 columns of the warp tile); chosen where the full-width buffers would
  // not fit the register budget (plan_operand_buffers, ResourceEstimate.h)
  bool b_chunked = false;
  int64_t wg = 0;         // Wgmma: warpgroups along M, one m64nNk16 row block each
  // Wgmma whose A is a 16-bit shared buffer that the warp-specialized loop's producer fills once
  // per tile before the loop (TmaPipeline::prologue: attention's Q tile): the consumers read it
  // into registers once, before the loop (ldmatrix, in the wgmma A-fragment layout), and every k
  // step of every iteration takes A from registers instead of shared memory. Chosen where
  // its K / 16 x 4 registers per thread fit the consumers' budget with a margin
  // (plan_hoisted_operands, ResourceEstimate.h).
  bool a_hoisted = false;
  // Wgmma with FP8 operands on a target whose FP8 accumulation is narrower than f32
  // (GpuFacts::fp8_accum_bits): the gemm runs as column chunks of promote_n, each chunk's k
  // steps into a zeroed partial fragment (promote_n / 2 registers per thread) that is then
  // added to the accumulator in f32. The reduced-precision sums span one gemm (the pipelined
  // loop's BK), not all of K. 0: the wgmma accumulates in place.
  int64_t promote_n = 0;
  // Two partials alternate between the chunks (at least two chunks, and the accumulator's
  // N / 2 registers plus 2 x promote_n / 2 fit in 192): chunk c + 1 is issued before chunk c
  // is waited for and added, so the warpgroup keeps a group on the tensor cores while it adds.
  bool promote_pairs = false;
  // Partial fragments of promote_n columns a promoted gemm holds at once (0, 1 or 2).
  int64_t promote_partials() const { return promote_n == 0 ? 0 : promote_pairs ? 2 : 1; }
};

// A pipelined loop lowered to a warp-specialized TMA pipeline (sm_90a): one producer warp
// issues the `producers` copies as cp.async.bulk.tensor tiles completing on a `full`
// mbarrier per stage; the block's `threads` run the rest of the kernel as consumers and give
// a stage back through an `empty` mbarrier (docs/hopper.md).
struct TmaPipeline {
  int64_t stages = 2;
  std::vector<const ir::StmtNode*> producers;
  // Consumer groups: with 2, two copies of the block's `threads` (one warpgroup each) take
  // alternate tiles of the persistent loop from the same stage ring ("ping-pong"): one
  // group's epilogue and softmax overlap the other's wgmmas. Shared buffers the TMA does not
  // fill are private to each group.
  int64_t groups = 1;
  // Top-level copies before the loop that the producer issues as TMA boxes once per tile
  // (attention's Q tile), on their own full/empty mbarriers: the consumers wait for the box
  // where the copy was written and release the buffer after the loop, so the next tile's box
  // lands while this tile's last gemms and epilogue run. Only with one consumer group, and only
  // for buffers that no other top-level statement mentions (they are free after the loop).
  std::vector<const ir::StmtNode*> prologue;
};

// Bytes of one 128-byte-swizzled panel row: the widest panel, and the only one the TMA-store
// epilogue's staging tile uses.
constexpr int64_t kPanelBytes = 128;

// The shared-memory swizzle modes of wgmma operands and TMA boxes. A panel row of `bytes` is
// swizzled in 16-byte chunks: bits [4, 4 + xor_bits) of the shared byte address are XORed with
// bits [7, 7 + xor_bits) (cute's Swizzle<xor_bits, 4, 3> on bytes), so chunk c of row r of a
// panel lands at c ^ ((r * bytes / 128) % (bytes / 16)): r % 8 for 128 bytes, (r / 2) % 4 for
// 64, (r / 4) % 2 for 32. The pattern repeats every atom of 8 rows (atom_bytes), which must start
// on an atom boundary (the descriptors' base offset is 0). Sources: PTX ISA 9.7.15.5.1 (wgmma
// "Matrix Descriptor Format": swizzle mode in bits 62-63, 1 = 128-byte, 2 = 64-byte, 3 =
// 32-byte; "Shared Memory Matrix Layout": K-major atoms of 8x8, 8x4, 8x2 16-byte units, the
// repeating pattern starting on 1024-, 512-, 256-byte boundaries), and the CUDA driver API's
// CUtensorMapSwizzle (a box's inner dimension at most the swizzle width).
struct PanelSwizzle {
  int64_t bytes;      // panel row width
  int64_t atom_bytes; // 8 rows x bytes: the pattern's period and its alignment
  int xor_bits;       // log2(bytes / 16): chunk-index bits XORed
  int desc_layout;    // wgmma matrix descriptor bits 62-63
  const char* tma;    // CUtensorMapSwizzle enumerator of the TMA boxes
};
inline constexpr PanelSwizzle kPanelSwizzles[] = {
    {128, 1024, 3, 1, "CU_TENSOR_MAP_SWIZZLE_128B"},
    {64, 512, 2, 2, "CU_TENSOR_MAP_SWIZZLE_64B"},
    {32, 256, 1, 3, "CU_TENSOR_MAP_SWIZZLE_32B"},
};
// The widest mode whose width divides `row_bytes` (a panel row never straddles a row), or
// null when none does (rows that are not whole 32-byte chunks).
const PanelSwizzle* panel_swizzle_for(int64_t row_bytes);
// The mode of panels of `bytes` (one of kPanelSwizzles; an internal error otherwise).
const PanelSwizzle& panel_swizzle_of(int64_t bytes);
// That swizzle on the element offsets of one panel (row * panel + col) of `elem_bytes`
// elements: Swizzle<xor_bits, log2(16 / elem_bytes), 3>.
layout::Swizzle panel_element_swizzle(const PanelSwizzle& m, int elem_bytes);

struct LayoutPlan {
  std::map<const ir::Buffer*, layout::FragmentLayout> fragments;
  std::map<const ir::Buffer*, layout::Swizzle> swizzles; // shared buffers (absent = none)
  std::map<const ir::StmtNode*, GemmPlan> gemms;
  // Shared buffers stored as column panels of `panel` elements (128, 64 or 32 bytes), each
  // panel row-major and swizzled in that width: the unit a TMA box fills and a wgmma
  // descriptor reads. panel_swizzles holds each one's mode (a row of kPanelSwizzles).
  std::map<const ir::Buffer*, int64_t> panels;
  std::map<const ir::Buffer*, const PanelSwizzle*> panel_swizzles;
  std::map<const ir::StmtNode*, TmaPipeline> tma_loops; // keyed by the pipelined For
  bool warp_specialized() const { return !tma_loops.empty(); }
  // Parallel loops that no fragment drives (parallel_driver finds none: the loop writes shared
  // buffers or tensors only, or reads fragments by some of its variables): how its points are
  // spread over the threads. Dim v of the layout is the loop's variable v.
  std::map<const ir::StmtNode*, layout::FragmentLayout> loops;
  // Those of them that run as vectors (passes/VectorParallel): consecutive points of the
  // innermost variable per thread and run; their layout is layout::elementwise_runs.
  std::map<const ir::StmtNode*, int64_t> loop_vectors;
  std::vector<std::string> notes; // one line per decision, for generated comments
};

// Whether gemm `g` of a block of `threads` lowers to wgmma on a target that has it (64 rows per
// warpgroup, N <= 256, f16/bf16 or FP8 operands with B in shared memory; docs/hopper.md).
bool wgmma_eligible(const ir::Gemm& g, int64_t threads);

// The wgmma and TMA decisions (LayoutInferenceHopper.cpp), made before the gemms are planned:
// fills plan.panels, plan.panel_swizzles and plan.tma_loops, and returns the gemms that lower
// to wgmma.
std::set<const ir::StmtNode*> plan_hopper(const ir::Kernel& k, const Target& target,
                                          LayoutPlan& plan);

// The fragment a parallel loop's points follow on GPU targets (its "driver"): the first one,
// in the body's order, indexed by all of the loop's variables, with dim_of[v] the dim that
// variable v indexes; null when none is (LayoutPlan::loops then has the loop's layout).
struct ParallelDriver {
  const ir::Buffer* buffer = nullptr;
  std::vector<size_t> dim_of;
};
ParallelDriver parallel_driver(const ir::Parallel& p);

std::optional<LayoutPlan> infer_layouts(const ir::Kernel& k, const Target& target,
                                        DiagEngine& diag);

} // namespace tilegen::passes
