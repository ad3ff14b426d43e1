// CEmitter: the C dialect of CFamilyPrinter. One object prints one variant file; see
// docs/c-backend.md for the shape of the output and why it looks the way it does.
// Internal to emit/ (the public entry point is emit_variant in Emitter.h).
#pragma once

#include "emit/CFamilyPrinter.h"
#include "emit/Emitter.h"
#include "ir/Substitute.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tilegen::emit {

// Register-tile shape of the C gemm micro-kernel for a vector width: a table, not branches.
struct CGemmTile {
  int vector_bytes; // target.vector_bytes
  int mr;           // rows of c held in registers
  int nr_vectors;   // vectors of c per row held in registers
};
CGemmTile c_gemm_tile(int vector_bytes);

// What the gemm helper is specialized on.
struct CGemmShape {
  int64_t m, n, k;
  bool transpose_a, transpose_b, clear;
  ir::DType a, b, c; // C value types after legalization
};
// Name and full source of the static helper computing one gemm shape on a target.
std::string c_gemm_helper_name(const CGemmShape& g);
std::string c_gemm_helper_source(const CGemmShape& g, const Target& target);

class CEmitter : public CFamilyPrinter {
public:
  CEmitter(const ir::Kernel& k, const Target& target, const VariantInfo& info);
  std::string run();

private:
  // Module parts.
  std::string header_comment() const;
  void emit_block_function();
  void emit_entry_function();

  // Statements (COps.cpp holds the op lowerings).
  void stmt(const ir::Stmt& s);
  void op_comment(const ir::Stmt& s);
  void emit_alloc(const ir::Alloc* n);
  void emit_fill(const ir::Fill* n);
  void emit_copy(const ir::Copy* n);
  void emit_gemm(const ir::Gemm* n);
  void emit_reduce(const ir::Reduce* n);
  void emit_parallel(const ir::Parallel* n);
  // The parallel with its f32 exps evaluated in chunks by tg_exp_row_f32 (CExpRows.cpp);
  // false (nothing printed) where the target or the body does not qualify.
  bool emit_exp_rows(const ir::Parallel* n, const std::vector<std::string>& vars);
  void emit_store(const ir::Store* n);
  void emit_for(const ir::For* n);
  void emit_if(const ir::IfThenElse* n);
  void emit_atomic_add(const ir::AtomicAdd* n);
  void emit_fused_reduce(const ir::Parallel* p, const ir::Reduce* r);
  void emit_reduce_loop(ir::ReduceOp op, const std::string& identity, const std::string& var,
                        const ir::Expr& extent, const std::string& ty, int64_t strip,
                        const std::function<void()>& value);
  void emit_sum_pieces(const std::string& var, const std::string& ty, int64_t strip,
                       const std::function<void()>& value);
  void find_fused_reductions(const ir::Stmt& body);
  void emit_copy_rows(const ir::Copy* n, const std::vector<ir::Expr>& si,
                      const std::vector<ir::Expr>& di);
  // The fast-path condition of a copy: every global side's tile inside its tensor.
  std::string copy_fast_condition(const ir::Copy* n, const std::vector<ir::Expr>& so,
                                  const std::vector<ir::Expr>& doff);

  // Expressions and accesses.
  std::string print_load(const ir::Load* l, int& prec) override;
  std::string global_index(const ir::BufferPtr& b, const std::vector<ir::Expr>& idx);
  std::string access(const ir::BufferPtr& b, const std::vector<ir::Expr>& idx);
  std::string load_value(const ir::BufferPtr& b, const std::vector<ir::Expr>& idx);
  std::string in_bounds(const ir::BufferPtr& b, const std::vector<ir::Expr>& idx);
  std::string store_value(const ir::BufferPtr& b, const ir::Expr& v);
  // Opens `for` loops over [0, extent) for each var; the innermost gets `#pragma omp simd`.
  void open_loops(const std::vector<std::string>& vars, const std::vector<ir::Expr>& extents,
                  bool simd);
  void close_loops(size_t n);
  ir::Expr ref(const std::string& var_name); // a VarRef to a generated i64 name

  const ir::Kernel& k_;
  const Target& target_;
  const VariantInfo& info_;
  bool guard_loads_ = true;      // global loads in expressions check bounds (parallel bodies)
  ir::Expr load_pad_;            // value of an out-of-bounds guarded load (null: zero)
  // On-chip buffers (and gemm packing space) live on the stack when they are small, else in
  // the per-thread heap scratch of the runtime (tg_cpu_scratch), at these byte offsets.
  bool scratch_on_heap_ = false;
  std::map<const ir::Buffer*, int64_t> scratch_offset_;
  std::map<const ir::Gemm*, int64_t> pack_offset_; // gemms whose b is packed (transpose_b)
  int64_t footprint_ = 0;                          // bytes of all of the above
  std::map<std::string, std::string> gemm_helpers_; // name -> source, printed sorted
  std::map<std::string, ir::VarPtr> gen_vars_;      // generated loop/offset names
  // Global tensors declared `access: write` that the body never reads: their whole-row tile
  // writes may bypass the caches (emit_copy_rows); streamed_ says one did (fence at the end).
  std::set<const ir::Buffer*> write_only_;
  bool streamed_ = false;
  // Copies of read-only inputs whose offsets move with the (one) grid index: a streaming row
  // store prefetches the next block's row of a matching one (emit_copy_rows).
  std::vector<const ir::Copy*> prefetch_srcs_;
  std::string next_block_row(const ir::Copy* store, const std::vector<std::string>& vars);
  // Parallel -> the reduce it is emitted with; the reduces and tiles that fusion removes.
  std::map<const ir::Parallel*, ir::Stmt> fused_;
  std::set<const ir::Reduce*> fused_reduces_;
  std::set<const ir::Buffer*> elided_;

  // Loop-nest transformations for memory-bound kernels (CViews.cpp, docs/c-backend.md
  // "Memory-bound kernels"): tiles read in place (views), block-invariant copies made once per
  // thread (hoists), and elementwise passes computed straight into the store of a copy-out
  // (fused stores). plan_views() decides them before the layout; the emitter follows the plan.
  enum class TileSource { View, Hoist };
  struct TilePlan {
    TileSource kind;
    int id;                    // tg_v<id>: the base pointer the reads go through
    ir::DType storage;         // element type of the memory read (X's for a view)
    int64_t hoist_offset = -1; // scratch offset of the thread's copy (Hoist)
    // A view of a 16-bit input into an f32 tile (reads convert): the staging tile of X's
    // encoding that edge and in-place blocks copy into, its scratch offset, and the bits of
    // the pad value.
    int64_t stage_offset = -1;
    uint16_t pad_bits = 0;
  };
  struct ActiveView {
    std::string name;             // base pointer
    ir::DType storage;            // element type it points at: 16-bit floats convert on read
    std::vector<std::string> lds; // strides of the leading dims, in elements
  };
  enum class Acc { None, Read, Write };
  struct Cont; // where control goes after a line of statements ends (CViews.cpp)
  void plan_views();
  void plan_line(const std::vector<ir::Stmt>& line, const Cont* cont, bool views);
  Acc access_of(const ir::Stmt& s, const ir::Stmt& next, const ir::Buffer* d) const;
  bool fused_pair(const ir::Stmt& p, const ir::Stmt& next) const;
  Acc first_access(const std::vector<ir::Stmt>& line, size_t from, const ir::Buffer* d) const;
  bool live_after(const ir::Buffer* d, const std::vector<ir::Stmt>& line, size_t from,
                  const Cont* cont) const;
  bool reads_only(const ir::Stmt& s, const ir::Buffer* d) const;
  // A region's non-constant offsets bound to `const int64_t <base><d>` locals.
  std::vector<ir::Expr> named_offsets(const ir::Region& reg, const char* base);
  void emit_view_copy(const ir::Copy* n);
  void emit_stage_copy(const ir::Copy* n, const std::vector<ir::Expr>& so, const std::string& stage,
                       uint16_t pad_bits);
  void emit_fused_store(const ir::Parallel* p, const ir::Copy* out);
  // A fused store's row in AVX2 intrinsics (CVecStore.cpp), printed before its portable
  // chunks; false (nothing printed) where the target or the value does not qualify.
  using VecLets = std::vector<std::pair<std::string, std::string>>; // name, broadcast
  bool emit_vec_store(const ir::Parallel* p, const ir::Expr& value, const ir::VarMap& at_point,
                      const ir::BufferPtr& y, bool prefetch);
  std::string vec8(const ir::Expr& e, const ir::VarPtr& j, const ir::Expr& col, VecLets& lets);
  std::string vec8_load(const ir::Load* l, const ir::VarPtr& j, const ir::Expr& col);
  void emit_hoist_function();
  void emit_tensor_prologue(const ir::Stmt& body);
  std::string overlap_flag(const ir::Buffer* b) const;
  std::map<const ir::Copy*, TilePlan> tile_plans_;
  std::set<const ir::Buffer*> staged_tiles_; // tiles of 16-bit views: maybe never touched
  std::vector<const ir::Copy*> plan_order_; // tile_plans_' keys in program order
  // Copy-outs printed with the parallel just before them in their Seq (fused_pair).
  std::set<const ir::Copy*> fused_copies_;
  std::set<std::pair<const ir::StmtNode*, const ir::StmtNode*>> adjacent_; // in one Seq
  std::map<const ir::Copy*, int> seen_, qualified_; // contexts of a copy, and those it qualified in
  std::set<const ir::Buffer*> overlap_srcs_;          // inputs whose tg_ov_<name> a block computes
  std::map<const ir::StmtNode*, std::vector<const ir::Buffer*>> view_end_before_, view_end_after_;
  std::map<const ir::Buffer*, ActiveView> active_views_; // during emission
  int next_view_id_ = 0;
  void read_views_ahead(const ir::Expr& e);
  std::vector<const ir::Var*> point_vars_;                // the enclosing parallel's variables
  std::map<const ir::ExprNode*, std::string> bound_loads_; // loads read ahead into locals
  // f16 views read through f32 buffers converted with vcvtph2ps (CF16Rows.cpp): between
  // begin_f16_rows and end_f16_rows, each f16 view load the scope can serve reads a buffer
  // tg_xr<n>, whose declaration and conversion end_f16_rows inserts where the scope began.
  struct F16Rows {
    bool active = false;
    size_t pos = 0;  // out_ offset where the conversions go
    int indent = 0;
    std::string off; // chunks: the chunk's first column (tg_c); empty: whole rows of the tile
    std::string col; // chunks: a local equal to off + k (CExpRows' j), or empty
    std::string k;   // chunks: the index within the chunk (tg_k)
    int64_t len = 0; // chunks: the chunk's length
    std::set<std::string> inner; // variables of the loops inside the scope
    std::vector<std::pair<std::string, std::string>> rows; // (view + row offset, buffer)
    std::vector<std::string> text; // their declarations and conversions
  };
  F16Rows f16_rows_;
  bool begin_f16_rows(std::set<std::string> inner, const std::string& off = "",
                      const std::string& col = "", const std::string& k = "", int64_t len = 0);
  void end_f16_rows();
  bool f16_views_live() const; // an f16 view is among the active views (begin_f16_rows' test)
  std::string f16_row_read(const ActiveView& v, const ir::BufferPtr& b, const std::vector<ir::Expr>& idx);
  int next_read_id_ = 0;
};

// Whether a statement reads or writes a global tensor (such loops are not `omp simd`).
bool c_touches_global(const ir::Stmt& body);
// The Store of `p` if its body is one plain store to an on-chip f32 buffer at exactly the
// parallel's point over the whole buffer (t[i, j] = ..., extents = t's shape), else null.
const ir::Store* c_whole_tile_store(const ir::Parallel* p);

} // namespace tilegen::emit
