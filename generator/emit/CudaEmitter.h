// CudaEmitter: the CUDA dialect of CFamilyPrinter. One object prints one .cu variant file:
// a kernel template instantiated twice (16-byte vectorized global accesses, or scalar ones
// for unaligned tensors), and the host entry points of the variant ABI (.agents contract,
// docs/cuda-backend.md). Decisions come from passes: fragment layouts, gemm instructions and
// swizzles from LayoutInference; the shared-memory plan and the pipelines are computed here
// from the target table (stage multi-buffering, cp.async groups, barriers).
#pragma once

#include "emit/CFamilyPrinter.h"
#include "emit/Emitter.h"
#include "passes/LayoutInference.h"
#include "passes/RangeAnalysis.h"
#include "passes/ResourceEstimate.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tilegen::emit {

// True if e is a multiple of m for every value of its variables (a syntactic test: products
// with a multiple, sums and differences of multiples, integer literals), as the CUDA and HIP
// copies ask of a tile's innermost offset before using m-element vectors.
bool expr_multiple_of(const ir::Expr& e, int64_t m);

using passes::kSplitGroup; // the split join's group size (passes/ResourceEstimate.h)

// Named barriers of the warp-specialized kernels: 0 the block's, 1 + group the consumer groups'
// (tg_bar_consumers), 3 + warpgroup the attention warpgroups' turns (next_turn), and from this
// one a warpgroup's own TMA-store epilogue (store_wg_rows_): ids below 16.
inline constexpr int64_t kWgStoreBarrier = 8;

// The value of an expression that instantiation made constant (on-chip shapes, threads).
int64_t cuda_const(const ir::Expr& e);

// Calls f on s and every statement nested in it (sequences, loop bodies, both branches), with
// the innermost loop around each (`loop` for s itself).
void walk(const ir::Stmt& s, const std::function<void(const ir::Stmt&, const ir::For*)>& f,
          const ir::For* loop = nullptr);

// "Every element of region r lies inside its tensor" as a tile predicate over the region's
// offsets (passes/RangeAnalysis), or nullptr (CudaOps.cpp).
ir::Expr region_in_bounds(const ir::Region& r, const passes::RangeEnv& env);

// The coordinate parts of an n-d TMA helper: its parameters (", int c0, ..."), the PTX operand
// list ("%first, %first+1, ...") and the asm inputs (", \"r\"(c0), ...") (CudaHopper.cpp).
struct TmaCoordOperands {
  std::string params, regs, ops;
};
TmaCoordOperands tma_coord_operands(int n, int first);

// Whether a start index of c reads a shared buffer (CudaOps.cpp).
bool copy_index_reads_shared(const ir::Copy* c);

class CudaEmitter : public CFamilyPrinter {
public:
  CudaEmitter(const ir::Kernel& k, const Target& t, const VariantInfo& info,
              passes::LayoutPlan plan);
  std::string run();

protected:
  std::string type_name(ir::DType t) const override;
  std::string storage_type_name(ir::DType t) const override;
  std::string inf_literal(ir::DType t) const override;
  std::string nan_literal(ir::DType t) const override;
  std::string math_name(ir::Intrinsic fn, ir::DType t) const override;
  std::string print_load(const ir::Load* l, int& prec) override;
  std::string print_cast(const ir::Cast* c, int& prec) override;
  std::string print_call(const ir::Call* c, int& prec) override;
  std::string print_bitcast(const ir::Call* c, int& prec) override;

  // ---- what a dialect of this GPU printer changes (HipEmitter) --------------------------------
  // `v` exchanged with the lane whose index differs in bit mask `mask` (a butterfly step).
  virtual std::string shfl_xor(const std::string& v, int mask) const;
  // The read-only (non-coherent) load function, as a kernel in the file's unnamed namespace
  // calls it.
  virtual std::string ldg_name() const { return "__ldg"; }
  // log2 of the lanes of a warp (wave) of the target's layouts (GpuFacts::warp_size).
  int lane_bits() const;
  // Storage <-> f32 register values of dtype t.
  virtual std::string to_float(const std::string& storage_value, ir::DType t) const;
  virtual std::string from_float(const std::string& float_value, ir::DType t) const;
  // The template argument of tg_widen_fp8x16 that names FP8 type t's encoding.
  virtual std::string fp8_widen_tag(ir::DType t) const;
  // The helper functions the kernels called (need()), printed before them.
  virtual std::string helpers_source() const;
  // The helpers of the shared printer every dialect prints the same way (typed min/max/abs,
  // cdiv, floor division and modulo), as TG_HD functions.
  std::string typed_helpers_source() const;
  virtual void emit_gemm(const ir::Stmt& s, const ir::Gemm* g);
  // Whether the host code folds a grid over the API's limits into x (tg_params::tg_fold, decoded
  // in the kernel; docs/cuda-backend.md "Grids over CUDA's limits"). Both dialects do (HIP with
  // its own x limit, docs/hip.md "Grids over HIP's limits"); a dialect whose host code cannot
  // turns it off.
  virtual bool folds_grids() const { return true; }
  // The body of the kernel template (its statements, after the block's prologue), filling
  // helpers_ as it goes; kernel_text() wraps it into CUDA's tg_kernel<TG_VEC>.
  std::string kernel_body();

  // ---- memory plan -------------------------------------------------------------------------
  struct SharedSlot {
    int64_t offset = 0;      // bytes from the start of dynamic shared memory
    int64_t stage_elems = 0; // elements of one stage
    int64_t stages = 1;
    int64_t rows = 1, cols = 1; // logical 2-D view (rank-1: one row)
  };
  void plan_memory();
  std::map<const ir::Buffer*, SharedSlot> slots_;
  int64_t reduce_scratch_offset_ = 0, stage_scratch_offset_ = 0, smem_bytes_ = 0;

  // ---- statements --------------------------------------------------------------------------
  void stmt(const ir::Stmt& s);
  void op_comment(const ir::Stmt& s);
  void emit_for(const ir::For* f);
  virtual void emit_pipelined(const ir::For* f, int64_t stages);
  // A pipelined loop's body split into its producers (copies from global tiles, in order) and
  // the rest; `hoistable` is false when a producer follows a `let` (it might use it), so that
  // the loads cannot be issued ahead (CUDA's cp.async stages, HIP's register staging).
  struct PipelineBody {
    std::vector<ir::Stmt> body, producers, consumers;
    bool hoistable = true;
  };
  PipelineBody split_pipeline_body(const ir::For* f) const;
  void emit_fill(const ir::Fill* f);
  void emit_copy(const ir::Copy* c);
  void emit_copy_op(const ir::Copy* c, ir::MemScope s, ir::MemScope d); // by the scopes
  // The synchronous 16-byte path of copy_global_to_shared on targets without asynchronous
  // copies (HIP): whole chunks through registers, zero outside the tensor; false where the copy
  // does not qualify (conversion, a pad, rows that are no whole chunks).
  bool copy_global_to_shared_vec16(const ir::Copy* c);
  // `commit`: close the copy's own cp.async group. A pipelined loop passes false and commits
  // one group per iteration, so that its wait counts stages, not copies.
  void copy_global_to_shared(const ir::Copy* c, bool async, bool commit = true);
  bool cp_async_vec_ok(const ir::Copy* c, bool async) const;
  ir::Expr cp_async_interior(const ir::Copy* c) const;
  // Copies whose every tile the enclosing loop version proved interior (emit_pipelined).
  std::set<const ir::Copy*> interior_copies_;
  ir::Expr loop_interior(const ir::Copy* c, const ir::For* f) const;
  void copy_global_fragment(const ir::Copy* c, bool load);
  void copy_fragment_fragment(const ir::Copy* c);
  void copy_shared_fragment(const ir::Copy* c, bool load);
  void gemm_mma(const ir::Gemm* g, const passes::GemmPlan& p);
  void gemm_simt(const ir::Gemm* g, const passes::GemmPlan& p);
  void emit_reduce(const ir::Reduce* r);
  // Row sums carried across a top-level loop (attention's l = l * alpha + rowsum(p)) stay
  // per-lane partials inside it and are combined across lanes once after it (CudaOps.cpp).
  void plan_deferred_sums();
  void finish_deferred_sums(const ir::For* f);
  std::vector<int> reduce_lane_bits(const ir::Reduce* r) const; // the xor masks' bit positions
  std::map<const ir::For*, std::vector<const ir::Reduce*>> deferred_sums_;
  std::set<const ir::Reduce*> deferred_;
  void emit_parallel(const ir::Parallel* p);
  void parallel_body(const ir::Stmt& s);
  // Register loops of a parallel loop with its own layout stay loops past this many points per
  // thread (2^20 points per thread would not compile).
  static constexpr int64_t kMaxUnrolledParallelPoints = 64;
  // A vectorized element-wise loop (LayoutPlan::loop_vectors; CudaVector.cpp): runs of `w`
  // points per thread, vector loads and stores of shared memory.
  void emit_parallel_vector(const ir::Parallel* p, const layout::FragmentLayout& L, int64_t w);
  // Whether dim d of L runs `w` consecutive elements per thread (its first register mode) and
  // starts every run at a multiple of w.
  bool vector_layout_ok(const layout::FragmentLayout& L, size_t d, int64_t w) const;
  void check_vector_piece(const ir::Buffer& b, int64_t bytes) const;
  // An integer index printed in 32-bit unsigned arithmetic where every intermediate value is
  // provably in [0, 2^31) (ranges_), else as expr() prints it.
  std::string index32(const ir::Expr& e);
  std::string shared_index(const ir::Expr& e) { return narrow_indices_ ? index32(e) : expr(e); }
  std::map<const ir::Load*, std::string> vector_loads_;   // element of the run's vector
  std::map<const ir::Store*, std::string> vector_stores_; // element of the run's store array
  bool narrow_indices_ = false; // shared-memory indices through index32 (vectorized loops)
  // Comparisons of the innermost variable that are thresholds on its register coordinate:
  // their bounds declared once per row, their spelling for print_binary (CudaKernel.cpp).
  void declare_thresholds(const ir::Parallel* p, const ir::Var* inner, const layout::FragmentLayout& L,
                          size_t d, int64_t extent, const std::string& reg);
  // The helpers of emit_parallel below take `loads`, the body's global loads in order.
  std::vector<size_t> parallel_loop_order(const ir::Parallel* p,
                                          const std::vector<const ir::Load*>& loads) const; // outermost first
  // Global loads' indices as a base (declared before the loops) plus the register coordinate,
  // and their bounds checks as register-coordinate thresholds where they can be.
  void declare_load_indices(const ir::Parallel* p, const std::vector<const ir::Load*>& loads,
                            const layout::FragmentLayout& L, const std::vector<size_t>& dim_of);
  struct LoadIndex {
    std::string index;     // the index's spelling
    std::string in_bounds; // its bounds check's, or "" (tg_inb on the index)
  };
  std::map<std::pair<const ir::Load*, size_t>, LoadIndex> load_indices_; // (load, dim)
  // Global loads printed before inner register loops that do not change them (their variables).
  void hoist_loads(const ir::Parallel* p, const std::vector<const ir::Load*>& loads,
                   const std::vector<size_t>& open);
  std::map<const ir::Load*, std::string> hoisted_loads_;
  std::map<const ir::Binary*, std::string> thresholds_;
  std::set<const ir::Var*> dead_lets_; // lets only the replaced comparisons read
  // Inside a parallel loop over a replicated layout: the condition that picks one thread of
  // each replica group, which alone stores to shared memory and tensors ("" otherwise).
  std::string store_leader_;
  std::string print_binary(const ir::Binary* b, int& prec) override;
  void emit_atomic_add(const ir::AtomicAdd* a);

  // Barrier bookkeeping: shared memory written / read since the last __syncthreads, and
  // cp.async groups not yet waited for.
  void before_shared_read();
  void before_shared_write();
  // Before an op that reads and/or writes shared memory (one barrier at most). Its reads and
  // writes both stay pending: a later write needs a barrier after its reads, a later read one
  // after its writes.
  void before_shared_access(bool reads, bool writes);
  void barrier();
  bool smem_dirty_ = false, smem_read_ = false, async_pending_ = false;

  // ---- addressing --------------------------------------------------------------------------
  // Element offset (swizzled, stage included) of shared buffer b at logical (row, col) given
  // as C expressions of type int.
  std::string shared_offset(const ir::Buffer* b, const std::string& row, const std::string& col);
  // Whether `b` is stored row by row (not as column panels narrower than its rows, plan_hopper).
  bool row_major(const ir::Buffer* b) const;
  // Whether shared_offset_split applies to `b`: a row-major XOR-swizzled buffer whose rows are
  // a power of two elements long.
  bool splits_offsets(const ir::Buffer* b) const;
  // shared_offset of (row, col) = (t_row + c_row, t_col + c_col), where `base` holds the swizzled
  // offset of the thread's part (t_row, t_col) and (c_row, c_col) is constant once the loops
  // are unrolled: base ^ (f(c) & chunk bits) + (f(c) & the other bits), with f the swizzle. The
  // caller guarantees that the two parts' linear offsets share no bit; then f(t + c) =
  // f(t) ^ f(c) (the swizzle is linear over XOR) and the high bits add without carries, so a
  // thread keeps at most 2^B swizzled bases (B the swizzle's chunk bits) and every constant is
  // an immediate offset. Without the split, ptxas hoists one swizzled address per constant out
  // of the loop (64 and more for attention's 32-row warp tiles) and spills them.
  std::string shared_offset_split(const ir::Buffer* b, const std::string& base,
                                  const std::string& c_row, const std::string& c_col);
  std::string shared_ptr(const ir::Buffer* b); // base pointer of the current stage
  std::string global_index(const ir::Buffer& b, const std::vector<std::string>& idx);
  // "every index in bounds": tg_inb per dim, or checks[d] where the caller has a cheaper one
  std::string global_in_bounds(const ir::Buffer& b, const std::vector<std::string>& idx,
                               const std::vector<std::string>& checks = {});

  // Fragment register access inside a parallel: var -> (register counter, R).
  struct VarRegs {
    std::string counter;
    int64_t count;
  };
  std::map<const ir::Var*, VarRegs> var_regs_;
  std::string fragment_reg(const ir::Buffer* b, const std::vector<ir::Expr>& idx);
  const layout::FragmentLayout& frag(const ir::Buffer* b) const;
  int64_t num_elements(const ir::Buffer& b) const; // on-chip: the product of its extents
  void copy_elementwise(const ir::Copy* c);
  // The layout of a parallel loop no fragment drives (LayoutPlan::loops).
  const layout::FragmentLayout& loop_layout(const ir::Parallel* p) const;
  // C expressions of a layout's thread part along dim d and of register counter r's part.
  std::string thread_coord(const layout::FragmentLayout& l, size_t d) const;
  std::string reg_coord(const layout::FragmentLayout& l, size_t d, const std::string& r) const;
  std::string replica_leader(const layout::FragmentLayout& l) const; // "" if not replicated
  void declare_thread_coords(const layout::FragmentLayout& l);

  // __syncthreads(), or the consumers' named barrier in a warp-specialized kernel (the
  // producer warpgroup has left by then).
  std::string sync_threads() const;

  // ---- Hopper: wgmma, TMA pipelines, warp specialization (CudaHopper.cpp) -----------------
  void emit_producer_branch();                      // at the top of a warp-specialized kernel
  void emit_launch_order();                         // griddepcontrol after the prologue (PDL, cc 9.0+)
  void emit_lets_before(const ir::For* f);          // top-level lets preceding loop f
  void emit_ws_consumer_loop(const ir::For* f, const passes::TmaPipeline& tp);
  // The hoisted A operands of f's gemms (GemmPlan::a_hoisted), read before the loop into
  // hoisted_a_'s registers ([k step][4]), which those gemms then take as A.
  void emit_hoisted_a(const ir::For* f);
  std::map<const ir::Buffer*, std::string> hoisted_a_;
  void emit_ws_body(const std::vector<ir::Stmt>& consumers, bool only_wgmma,
                    const passes::TmaPipeline& tp);
  // FA3's intra-warpgroup overlap (CudaHopper.cpp): the rotated consumer body.
  size_t rotation_split(const std::vector<ir::Stmt>& consumers, int64_t groups) const;
  void plan_rotation(); // sets rot_split_ and late_producers_ for the warp-specialized loop
  size_t rot_split_ = 0; // 0: no rotation; else the first consumer after the wait
  std::set<const ir::StmtNode*> late_producers_; // TMA copies on the second barrier set
  // A zero fill of the accumulator of the warp-specialized loop's first gemm, done instead by
  // that gemm's first wgmma in each tile (scale-d 0 on the first iteration): CudaHopper.cpp.
  void plan_accumulator_clear();
  const ir::Fill* folded_fill_ = nullptr;   // emitted only for a loop of no iterations
  const ir::Gemm* clearing_gemm_ = nullptr; // its first wgmma overwrites at tg_it == 0
  void emit_rotated_body(const std::vector<ir::Stmt>& consumers, size_t split,
                         const passes::TmaPipeline& tp);
  void emit_rotated_tail(const std::vector<ir::Stmt>& consumers, const passes::TmaPipeline& tp);
  std::string next_turn(const std::string& wg) const; // the next warpgroup's turn barrier
  std::string arrive_next_turn(const std::string& wg);  // "tg_bar_arrive_n(next, 256); // ..."
  // TmaPipeline::prologue (attention's Q): the producer's once-per-tile boxes on tg_pro[0]
  // (full) / tg_pro[1] (empty); the consumers' wait where the copy was written.
  void emit_prologue_issue();
  bool wgmma_gemm(const ir::StmtNode* s) const;   // a gemm the plan lowers to wgmma
  int64_t tile_bytes(const ir::Buffer& b) const;  // one stage of a shared buffer, in bytes
  bool prologue_copy(const ir::Copy* c) const;
  void fence_accumulator(const ir::Buffer* acc);
  std::string wgmma_a_pack(const ir::Gemm* g, int64_t kk); // "r0, r1, r2, r3" of k step kk
  std::string prepacked_a_; // a register-A wgmma reads these packed registers ([kk][4])
  void tma_issue(const ir::Copy* c, const std::string& stage, const std::string& bar);
  // ", (int)(c0), (int)(c1), ..." of a TMA box at region r (innermost first), `col` columns
  // past its offset along the last dim and (row non-empty) the expression `row` past it along
  // the one before.
  std::string tma_coords(const ir::Region& r, int64_t col, const std::string& row = "");
  void gemm_wgmma(const ir::Gemm* g, const passes::GemmPlan& p);
  // gemm_wgmma with GemmPlan::promote_n: (A argument, B byte offset) per k step
  void gemm_wgmma_promoted(const ir::Gemm* g, const passes::GemmPlan& p,
                           const std::vector<std::pair<std::string, int64_t>>& steps,
                           int64_t b_row_bytes);
  void fence_registers(const std::string& array, int64_t n); // tg_fence_reg on n registers
  void wait_wgmma(int pending);                     // wgmma.wait_group + accumulator fences
  void fence_async_proxy_writes();                  // thread-written smem -> wgmma reads
  std::string hopper_helpers_source() const;
  std::string tma_params_source() const;            // tensor-map members of tg_params
  std::string tma_setup_source();                   // encodes them on the host
  std::string tma_store_helpers_source() const;     // CudaEpilogue.cpp
  std::string tma_store_setup_source();
  std::string tma_memo_source() const; // host helper: memoized tensor-map encoding
  std::string encode_tensor_map(const ir::Buffer& g, int64_t pc, int64_t rows,
                                const std::string& member, const char* l2);
  struct TmaMap {
    const ir::Copy* copy;
    std::string member; // tg_params member, "tg_tm_<dst>"
  };
  std::vector<TmaMap> tma_maps_;
  // TMA-store epilogue (CudaHopper.cpp): the top-level copy of a fragment into a 16-bit global
  // tile after the warp-specialized loop goes through a 128-byte-swizzled staging tile in
  // shared memory (after the mbarriers) and one cp.async.bulk.tensor store per panel, which
  // drains while the consumers start the next tile. Picked by plan_epilogue_store() where it fits.
  // Kernels without TMA stage the same copy the same way and the block stores the tile as
  // 16-byte rows (threads_store_), where the staging tile leaves room for two blocks per SM.
  const ir::Copy* tma_store_ = nullptr;
  const ir::Copy* threads_store_ = nullptr;
  // Repitched copies (docs/cuda-backend.md): per tensor of k_.tensors, whether a copy with a
  // 16-byte row pitch can stand in for rows that are no whole 16-byte chunks: the
  // warp-specialized kernels reach it through tensor maps alone (TMA loads, the TMA store; the
  // maps carry the pitch), or it has rank 1 (no pitch in its addresses; the copy pads its end).
  // Tensors whose last dim is not a constant of whole chunks; set by plan_pitched_tensors().
  std::vector<bool> pitched_;
  // Per tensor: the warp-specialized kernels' threads address it (it is not pitched), and it
  // takes the vector width the call allows at run time (tg_params::tg_vec, TG_VEC in the
  // kernels) instead of requiring 16-byte rows for the TMA kernel; set by
  // plan_pitched_tensors() only where one such tensor's rows may be uneven (the GEMMs' C in
  // the ping-pong kernels, which store it from registers), all false otherwise.
  std::vector<bool> threads_vec_;
  bool runtime_vec() const;
  bool tma_reaches(const ir::Buffer& g) const; // a tensor map or the TMA store addresses it
  void plan_pitched_tensors();
  bool any_pitched() const;
  bool pitched(const ir::Buffer& g) const;
  // The host's test that every tensor allows W-byte vectors (TG_VEC): its pointer aligned to W
  // bytes and its rows (pitch, where pitched) whole W-byte chunks; `which` selects tensors (all
  // by default). Tensors the kernel reads only as scalars (a block table in a copy's offsets)
  // are not tested. "true" when none is.
  std::string tensor_vec_check(int64_t W, const std::function<bool(size_t)>& which = nullptr);
  // Whether tensor t is tested by tensor_vec_check (not read only as scalars).
  bool vector_tested(const ir::Buffer& t) const;
  mutable std::optional<std::set<const ir::Buffer*>> scalar_only_; // vector_tested's, once
  int64_t store_offset_ = 0, store_rows_ = 0, store_cols_ = 0;
  // Panels the staging tile holds: all of the tile's, or (TMA store, where the whole tile
  // does not fit beside the pipeline's stages) a ring of fewer panel slots, a divisor of the
  // tile's panels, each panel stored as soon as it is written.
  int64_t store_slots_ = 0;
  // TMA store: rows of the tile each consumer warpgroup stages and stores on its own (its
  // named barrier, its bulk groups, a box of this many rows), where the fragment gives
  // warpgroup w exactly rows [w * R, (w + 1) * R) (the wgmma accumulators); 0: the group's
  // threads store the tile together.
  int64_t store_wg_rows_ = 0;
  std::string store_issuer() const; // the condition on tg_tid of the thread issuing the stores
  void plan_epilogue_store();
  // registers -> the swizzled staging tile; with panel >= 0 only that panel's registers, at
  // the start of tg_stage
  void stage_fragment(const ir::Copy* c, int64_t panel = -1);
  void emit_tma_store(const ir::Copy* c);
  void emit_staged_store(const ir::Copy* c);
  const ir::For* ws_loop_ = nullptr;   // the warp-specialized pipelined loop, if any
  bool dynamic_tiles_ = false;          // its tiles are drawn at run time (dynamic_tiles())
  passes::TmaPipeline ws_pipe_;
  int64_t barrier_offset_ = 0;         // mbarriers full[stages] then empty[stages]
  bool wgmma_pending_ = false;         // committed wgmma groups not waited for
  bool defer_wgmma_wait_ = false;      // a gemm-only pipelined body: the loop waits
  bool alternate_wgs_ = false;         // warpgroups take turns issuing the body's first gemm
  bool warpgroups_take_turns() const;  // what alternate_wgs_ is set to (CudaHopper.cpp)
  bool body_only_wgmma(const std::vector<ir::Stmt>& consumers) const;
  // The consumers' body is wgmma alone: one wgmma group stays in flight across iterations, and
  // each stage is released an iteration after its wgmmas were issued.
  bool stages_released_late() const;
  bool turn_pending_ = false;          // the next wgmma gemm printed takes the turn
  struct WgmmaShape {
    int64_t n;
    ir::ScalarKind a, b; // operand types (f16/bf16: equal; FP8: any mix)
    bool a_regs, trans_b;
    auto operator<=>(const WgmmaShape&) const = default;
  };
  std::set<WgmmaShape> wgmma_shapes_;  // instruction helpers to print
  std::vector<const ir::Buffer*> wgmma_accs_; // accumulators of those groups
  std::string ws_kernel_text(bool split_kernel = false); // a warp-specialized kernel function
  int64_t fallback_smem_ = -1;         // shared bytes of the fallback kernel; -1: none
  // Some global -> shared copy has a 4-byte cp.async path: the file instantiates tg_kernel<4>
  // for tensors aligned to 4 bytes but not 16 (else such calls take tg_kernel<0>).
  bool narrow_copies_ = false;
  // Shifted chunk copies (tg_kernel<2>, docs/cuda-backend.md "Rows of any width"): a pipelined
  // copy of 2-byte elements whose rows need not be whole 16-byte chunks (or start on one) loads
  // the C / V + 1 aligned 16-byte chunks that hold each tile row (V elements each) into staging:
  // the first C / V into the tile's own ring slot of that stage (raw rows of C elements), the
  // last into an overflow row of V. Before the gemm the consumer funnel-shifts them into one
  // tile outside the ring, which the gemm then reads. That tile and the overflow rows lie behind
  // the other kernels' shared memory (shift_smem_bytes_ in all); no such copies where that
  // exceeds the target's limit or where shift_ok_ is off (sm_90a's fallback kernel).
  struct ShiftSlot {
    int64_t tile = 0; // byte offset of the shifted tile (rows x cols, the buffer's swizzle)
    int64_t over = 0; // byte offset of the overflow rows: stages x rows x V elements
  };
  std::map<const ir::Copy*, ShiftSlot> shift_slots_;
  std::map<const ir::Buffer*, int64_t> shift_tiles_; // shifted tiles, by buffer, while printed
  int64_t shift_smem_bytes_ = 0; // tg_kernel<2>'s dynamic shared memory; 0: no such kernel
  bool shift_ok_ = true;
  std::set<const ir::Copy*> shift_active_; // the shifted copies of the pipelined loop being printed
  bool shift_copy_ok(const ir::Copy* c) const;
  void plan_shift_copies();
  // Staging chunk `j` of tile row `row` in stage `stage` (an element pointer).
  std::string shift_chunk(const ir::Copy* c, const std::string& stage, const std::string& row,
                          const std::string& j) const;
  // Row `row` of the stage's ring slot (its chunk 0) and of its overflow rows (element pointers).
  std::string shift_ring(const ir::Copy* c, const std::string& stage, const std::string& row) const;
  std::string shift_over(const ir::Copy* c, const std::string& stage, const std::string& row) const;
  // The block covers whole tile rows per pass (threads a multiple of the row's C / V chunks,
  // rows a multiple of the rows per pass): each thread keeps its chunk column and steps rows.
  bool shift_split(const ir::Copy* c) const;
  bool shift_rows_aligned(const ir::Copy* c) const; // split rows 16-byte steps apart: one shift per thread
  std::string shift_origin(const ir::Copy* c); // declares tg_o, the tile's first element
  void shift_fill(const ir::Copy* c);    // the cp.async half (inside copy_global_to_shared)
  void shift_realign(const ir::Copy* c); // the consumer half (emit_pipelined)
  int64_t group_bytes_ = 0;            // ping-pong: each consumer group's private shared bytes
  std::set<const ir::Buffer*> staged_; // shared buffers filled by the TMA pipeline
  int64_t groups() const { return ws() ? ws_pipe_.groups : 1; }
  // "tg_smem + offset", plus the consumer group's private region where it has one.
  std::string smem_at(int64_t offset, bool group_private) const;
  bool ws() const { return ws_loop_ != nullptr; }

  std::string header_comment() const;
  // The kernel template tg_kernel<TG_VEC> (vectorized and scalar instantiations).
  std::string kernel_text();
  // Tensors, dims, scalars and (unless a persistent kernel derives them) grid indices.
  void kernel_preamble(bool grid_indices = true);
  void decode_tile(); // a persistent kernel's grid indices from tg_tile (L2-friendly order)
  // The persistent walk's groups of tile rows (decode_tile): `rows` is the square group's
  // height; where the loop's copies split into operands that move with x only (x_bytes per
  // iteration, a GEMM's B) and with y only (y_bytes, A), the host may choose whole-width bands
  // at run time instead (tg_walk_rows, in tg_p.tg_group).
  // `heaviest_first`: the loop's trip count never decreases with x, so x runs from the top
  // down. `last_group` > 0 (with rows 1, heaviest first): the last z plane's last `last_group`
  // rows run as one group, so that the last waves get light tiles.
  struct TileWalk {
    int64_t rows = 8;
    bool heaviest_first = false;
    int64_t last_group = 0;
    int64_t x_bytes = 0, y_bytes = 0;
    bool banded() const { return x_bytes > 0 && y_bytes > 0; }
  };
  TileWalk tile_walk() const;
  TileWalk walk_; // tile_walk(), decided with ws_loop_ (run)
  void emit_tile_scheduler();
  void take_ring_tile(const std::string& counter, bool consumers);
  // Tiles drawn at run time (passes::ws_dynamic_tiles; docs/hopper.md "tile order at run time"),
  // decided once with ws_loop_.
  bool dynamic_tiles() const { return dynamic_tiles_; }
  // Split tail (docs/hopper.md): the join after the warp-specialized loop where a last wave's
  // tiles may run in parts on several blocks (tg_kernel_ws_split); null where tiles always run
  // whole (passes::ws_split_join, decided with ws_loop_).
  const ir::Combine* split_ = nullptr;
  std::map<const ir::Buffer*, std::string> peer_ptr_; // a combine's peers: their workspace rows
  std::vector<int64_t> split_offsets() const; // each carried fragment's bytes in a part, then the total
  int64_t split_state_bytes() const; // one part's carried registers, all threads of a group
  // tg_split_shape's q: the fewest iterations of a part (0: its default rule); 32 for the
  // ping-pong kernels (two consumer groups), whose short parts cost more than they saved.
  int64_t split_min_part() const { return groups() == 2 ? 32 : 0; }
  std::string ws_trip_count(const ir::For* f); // `const int64_t tg_n = ...;` for this tile or part
  std::string ws_iteration(const ir::For* f);  // the loop variable at iteration tg_it
  bool split_kernel_ = false; // printing tg_kernel_ws_split (the split parts), not tg_kernel_ws
  std::string loop_extent_host_; // the loop's extent, printed for tg_setup (split tail, tile walk)
  void split_part_head();     // a split_kernel block's tile, iterations and cut
  bool wgmma_accumulator(const ir::Buffer* b) const; // the C of a wgmma gemm
  // persistent: the split kernel's join (tg_kernel_ws_split, one consumer group's barrier, a part
  // that hands on takes its next tile); else the non-persistent kernel's (np_split_), whose
  // parts that hand on return.
  void emit_combine(const ir::Combine* c, bool persistent = true);
  // Split loops on the non-persistent kernel (docs/cuda-backend.md "Split loops"): the join after
  // the pipelined loop whose trip count comes from a tensor (passes::np_split_join, CUDA targets
  // that do not take the warp-specialized kernel); null where every tile runs its loop whole.
  // tg_run launches tg_parts parts of every tile, adjacent along x, when the grid leaves most of
  // the GPU's resident blocks idle (tg_split_parts).
  const ir::Combine* np_split_ = nullptr;
  const ir::For* np_split_loop_ = nullptr;
  // The split loop's trip count where every tile runs the same (passes::np_split_join's
  // uniform: dims and constants only), printed for tg_setup (tg_p.tg_nk): tg_split_parts then
  // gives each part at least kNpSplitMinPart iterations. Empty where a tensor decides it.
  std::string np_split_nk_host_;
  static constexpr int64_t kNpSplitMinPart = 8;
  // The mbarriers of a TMA pipeline before the tile ring: full/empty per stage (twice for a
  // rotated body), the groups' order barriers, the prologue's full and empty.
  int64_t barrier_count(const passes::TmaPipeline& tp) const {
    return (late_producers_.empty() ? 2 : 4) * tp.stages + tp.groups + (tp.prologue.empty() ? 0 : 2);
  }
  // The launch functions; `realign` is the body of tg_realigned (realign_source()).
  std::string host_source(const std::string& realign) const;
  // Host code of tg_realigned (docs/cuda-backend.md, "Realigned copies"): tensors off a 16-byte
  // boundary copied to the stream's realign workspace, the call run on the copies, outputs
  // copied back; `host_dims` declares the dims.
  std::string realign_source(const std::string& host_dims);

  const ir::Kernel& k_;
  const passes::RangeEnv ranges_; // body_ranges(k_), computed once
  const Target& t_;
  VariantInfo info_;
  passes::LayoutPlan plan_;
  int64_t threads_ = 0;
  std::map<const ir::Buffer*, std::string> stage_expr_; // current stage of multi-buffered bufs
  int uid_ = 0;
  std::string fresh(const std::string& base) { return base + std::to_string(uid_++); }
};

} // namespace tilegen::emit
