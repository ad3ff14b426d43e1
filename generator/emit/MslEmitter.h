// MslEmitter: the Metal Shading Language dialect of CFamilyPrinter. One object prints one
// .metal variant file: a `kernel` function that runs one block of the grid per threadgroup
// (docs/metal.md), self-contained (<metal_stdlib> only).
//
// Execution model. A threadgroup of T threads (a multiple of 32: SIMD-groups of 32) runs the
// block body; control flow outside `parallel` bodies is uniform, so barriers may sit between
// ops. Thread t = 32 * simdgroup_index + lane is the thread index of the layouts: every
// decision about who holds what comes from passes/LayoutInference (Shape:Stride layouts,
// generator/layout/), as on CUDA:
//  * a fragment is an array of float (int, long, bool) registers in each thread; register
//    (r_0, r_1) of thread t holds the element thread_coord(t) + reg_coord(r) of the layout;
//    16- and 8-bit float fragments hold f32 values rounded through their type on every write;
//  * shared buffers live in threadgroup memory (one `threadgroup uchar*` argument, carved at
//    fixed offsets) in their storage type (half, bfloat, uchar for FP8), converted to f32 on
//    every read; a barrier (threadgroup_barrier) separates an op that writes a shared buffer
//    from the next op that touches it, and every loop body or branch that touches shared
//    memory ends with one;
//  * gemm with a simdgroup_matrix plan: each SIMD-group owns (M/WM) x (N/WN) of the
//    accumulator as 8x8 simdgroup_float8x8 matrices; per k step of 8, every lane loads its
//    two elements of each A and B matrix (thread_elements(), converted to f32) and the
//    SIMD-group runs simdgroup_multiply_accumulate; the accumulator moves between the
//    fragment's registers and the matrices through thread_elements() (the layout of
//    layout::simdgroup_matrix_8x8). Other gemms: each thread sums its own elements (FMA);
//  * reductions over a fragment dim: per thread over its registers, then across the lanes
//    that hold other elements of the row (simd_shuffle_xor butterflies, or simd_sum/simd_max/
//    simd_min over all 32), then across SIMD-groups through threadgroup scratch;
//  * copies between global memory and shared buffers are strided loops over the tile's
//    elements (element e by thread e mod T), with bounds checks (pad on reads, dropped writes).
// Internal to emit/ (the entry point is emit_variant in Emitter.h).
#pragma once

#include "emit/CFamilyPrinter.h"
#include "emit/Emitter.h"
#include "passes/LayoutInference.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace tilegen::emit {

// What the host side (dispatch/MetalHostEmitter) and the checks need to know about a variant.
struct MslLayout {
  int threads = 0;                  // threads per threadgroup
  int64_t threadgroup_bytes = 0;    // the kernel's threadgroup memory (tg_smem), 16-aligned
  std::vector<std::string> notes;   // "A_s at 0 (8192 B)", ...
  // Why the kernel cannot be a variant of this Metal target (over a limit), as a user-facing
  // sentence; empty if it can.
  std::string problem;
};
MslLayout msl_layout(const ir::Kernel& k, const Target& target);

// The fields of the kernel's `constant tg_params&` argument, in order, with their MSL types:
// every dim (long), then every scalar (float, int, long, bool as int).
struct MslParam {
  std::string name;  // the spec name
  std::string type;  // MSL type: "long", "float", "int"
  bool is_dim = false;
  size_t index = 0;  // index into the variant ABI's dims[] or scalars[]
};
std::vector<MslParam> msl_params(const ir::Kernel& k);

class MslEmitter : public CFamilyPrinter {
public:
  MslEmitter(const ir::Kernel& k, const Target& target, const VariantInfo& info);
  std::string run();
  const MslLayout& layout() const { return layout_; }

private:
  // ---- plan (MslEmitter.cpp) ---------------------------------------------------------------
  void plan_memory();
  int64_t shared_offset(const ir::Buffer* b) const;
  std::vector<ir::BufferPtr> allocs_;
  std::map<const ir::Buffer*, int64_t> smem_offset_;
  int64_t scratch_offset_ = 0, scratch_bytes_ = 0;

  // ---- module ------------------------------------------------------------------------------
  std::string header_comment() const;
  void emit_kernel();
  void declare_thread_coords();

  // ---- statements (MslOps.cpp) -------------------------------------------------------------
  void stmt(const ir::Stmt& s);
  void op_comment(const ir::Stmt& s);
  void emit_alloc(const ir::Alloc* a);
  void emit_fill(const ir::Stmt& s, const ir::Fill* f);
  void emit_copy(const ir::Stmt& s, const ir::Copy* c);
  void copy_strided(const ir::Copy* c);
  void copy_fragment(const ir::Copy* c);
  void emit_gemm(const ir::Stmt& s, const ir::Gemm* g);
  void gemm_simdgroup(const ir::Gemm* g, const passes::GemmPlan& p);
  void gemm_simt(const ir::Gemm* g, const passes::GemmPlan& p);
  void emit_reduce(const ir::Reduce* r);
  void emit_parallel(const ir::Stmt& s, const ir::Parallel* p);
  void parallel_body(const ir::Stmt& s);
  void emit_store(const ir::Store* st);
  void emit_for(const ir::For* f);
  void emit_if(const ir::Stmt& s, const ir::IfThenElse* i);
  void emit_atomic_add(const ir::AtomicAdd* a);

  // Barriers: the shared buffers (and the scratch) read and written since the last one.
  struct Touch {
    std::set<const void*> reads, writes;
  };
  Touch touches(const ir::Stmt& s) const; // what a statement reads and writes on chip
  void before(const Touch& t);            // a barrier first if t conflicts with the pending
  void flush();                           // a barrier if anything is pending
  void barrier();
  std::set<const void*> pend_reads_, pend_writes_;
  const void* scratch_key() const { return &scratch_offset_; }

  // ---- layouts -----------------------------------------------------------------------------
  const layout::FragmentLayout& frag(const ir::Buffer* b) const;
  // Name of the constant holding thread t's coordinate along dim d of layout l.
  std::string thread_coord(const layout::FragmentLayout& l, size_t d);
  std::string thread_expr(const layout::FragmentLayout& l, size_t d) const;
  // The coordinate of register counter `r` along dim d of layout l (an int expression).
  std::string reg_coord(const layout::FragmentLayout& l, size_t d, const std::string& r) const;
  // A condition true for one thread of each group of replicas ("" if l replicates nothing).
  std::string replica_leader(const layout::FragmentLayout& l) const;
  std::map<std::string, std::string> coord_names_; // expression -> tg_tc<n>
  std::vector<std::pair<std::string, std::string>> coord_decls_;
  // Loops over a layout's registers: one loop per dim with more than one register; returns,
  // per dim, the coordinate expression (an int) and the register counter's name ("0" when the
  // dim has one register). close_loops(n) closes what open_reg_loops opened.
  struct RegLoops {
    std::vector<std::string> coord, counter;
    int opened = 0;
  };
  RegLoops open_reg_loops(const layout::FragmentLayout& l);
  void close_loops(int n);
  // The register index of an element of fragment b whose dims have register counters `r`.
  std::string reg_index(const ir::Buffer* b, const std::vector<std::string>& r) const;

  // ---- addressing and values ---------------------------------------------------------------
  std::string shared_ptr_decl(const ir::Buffer* b);
  std::string linear(const ir::Buffer& b, const std::vector<std::string>& idx);
  std::string in_bounds(const ir::Buffer& b, const std::vector<std::string>& idx);
  // The f32 (or int) value of a stored element `v` of dtype t, and the stored form of a
  // computed value `v` (half(v), bfloat(v), an FP8 code).
  std::string to_compute(const std::string& v, ir::DType t);
  std::string to_storage(const std::string& v, ir::DType t);
  // A computed value as a fragment or local of dtype t holds it (rounded through 16/8-bit).
  std::string round_to(const std::string& v, ir::DType t);
  // Region indices: offsets[d] + tile coordinate for the tile's last dims.
  std::vector<std::string> region_index(const ir::Region& r, const std::vector<std::string>& tile);

  // ---- expressions -------------------------------------------------------------------------
  std::string type_name(ir::DType t) const override;
  std::string storage_type_name(ir::DType t) const override;
  std::string inf_literal(ir::DType t) const override;
  std::string nan_literal(ir::DType t) const override;
  std::string math_name(ir::Intrinsic fn, ir::DType t) const override;
  const std::set<std::string>& reserved_words() const override;
  std::string print_load(const ir::Load* l, int& prec) override;
  std::string print_cast(const ir::Cast* c, int& prec) override;
  std::string print_int(const ir::IntImm* i, int& prec) override;
  std::string print_call(const ir::Call* c, int& prec) override;
  std::string print_var(const ir::Var* v) override;

  const ir::Kernel& k_;
  const Target& t_;
  const VariantInfo& info_;
  passes::LayoutPlan plan_;
  MslLayout layout_;
  int64_t threads_ = 0;
  bool planned_ = false;

  // Inside a parallel loop: var -> its register counter; the replica leader condition.
  std::map<const ir::Var*, std::string> var_regs_;
  std::map<const ir::Var*, std::string> var_names_; // parallel vars -> their coordinate name
  std::string store_leader_;
  int uid_ = 0;
  std::string fresh(const std::string& base) { return base + std::to_string(uid_++); }
};

// How a reduction over dim `dim` of a fragment with layout l combines across threads: the lane
// bits whose lanes hold other elements of a row (simd_shuffle_xor butterflies; all five: one
// simd_sum/simd_max/simd_min), and the other thread modes that move the dim (across
// SIMD-groups, or not a whole set of lane bits), combined through threadgroup scratch in
// `groups` slots per destination element.
struct ReduceSplit {
  std::vector<int> lane_bits;
  std::vector<size_t> scratch_modes;
  int64_t groups = 1;
};
ReduceSplit reduce_split(const layout::FragmentLayout& l, size_t dim);

// Helper functions (MslHelpers.cpp): the source of every used helper, dependencies closed,
// in a fixed order.
std::string msl_helper_source(const std::set<std::string>& used);

} // namespace tilegen::emit
