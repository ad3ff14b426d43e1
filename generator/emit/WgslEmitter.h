// WgslEmitter: the WGSL dialect of CFamilyPrinter. One object prints one variant: a compute
// shader module whose entry point runs one block of the grid per workgroup (docs/wgsl.md).
//
// Execution model. Every invocation of the workgroup runs the whole block body; control flow
// outside `parallel` bodies is uniform (it depends on dims, block and loop indices only), so
// barriers may sit between ops. Each op is split over the invocations:
//  * on-chip buffers live either in workgroup memory (shared buffers, and fragments that the
//    layout below cannot hold) or in registers, distributed: a rank-2 fragment [R, C] is held
//    by the TY x TX invocation grid (invocation t = ty * TX + tx), invocation (ty, tx) owning
//    rows ty + TY*a and columns tx + TX*b — coalesced global accesses along columns, register
//    blocking for gemm (each invocation accumulates an (R/TY) x (C/TX) tile);
//  * ops over workgroup buffers are strided loops over the elements (element e by invocation
//    e mod T), followed by a barrier;
//  * reductions over a distributed fragment's columns combine each invocation's partials in
//    registers, then across tx through workgroup memory (a tree of barriers), or through
//    subgroup shuffles on targets with `subgroups`.
// Internal to emit/ (the entry point is emit_variant in Emitter.h).
#pragma once

#include "emit/CFamilyPrinter.h"
#include "emit/Emitter.h"

#include <map>
#include <string>
#include <vector>

namespace tilegen::emit {

// Where an on-chip buffer lives (global tensors are Global).
enum class WgslPlace { Global, Workgroup, Registers };

// How a global tensor is declared: element type and the access functions used.
enum class WgslStorage {
  Plain,        // array<f32> / array<i32> / array<f16> (shader-f16)
  Packed,       // sub-word elements (f16/bf16/i8) packed in array<u32>, read only
  PackedAtomic, // sub-word elements in array<atomic<u32>>: written with atomicAnd/atomicOr
  AtomicF32,    // f32 in array<atomic<u32>> (destination of atomic_add)
  AtomicI32,    // i32 in array<atomic<i32>> (destination of atomic_add)
};

// What the host needs to know about a variant (the JSON manifest and the ES module).
struct WgslLayout {
  int threads = 0;             // @workgroup_size(threads)
  int ty = 1, tx = 1;          // the invocation grid of distributed fragments
  int64_t workgroup_bytes = 0; // workgroup memory the shader declares
  std::vector<std::string> enables; // "f16", "subgroups"
  // Per tensor, in spec order (binding i + 1): the WebGPU buffer binding type
  // ("read-only-storage" or "storage") and the WGSL element type ("f32", "u32", "atomic<u32>").
  std::vector<std::string> binding_types, element_types;
  std::vector<bool> packed; // sub-word elements packed in u32 words (buffers: multiple of 4 B)
  // Why the kernel cannot be a WGSL variant of this target (over a limit, a type WGSL storage
  // lacks), as a user-facing sentence; empty if it can.
  std::string problem;
};
WgslLayout wgsl_layout(const ir::Kernel& k, const Target& target);

class WgslEmitter : public CFamilyPrinter {
public:
  WgslEmitter(const ir::Kernel& k, const Target& target, const VariantInfo& info);
  std::string run();
  const WgslLayout& layout() const { return layout_; }

private:
  // Analysis (WgslEmitter.cpp).
  void plan();
  void plan_storage();
  WgslPlace place(const ir::BufferPtr& b) const;

  // Module parts.
  std::string header_comment() const;
  std::string module_decls();
  void emit_entry();

  // Statements (WgslOps.cpp).
  void stmt(const ir::Stmt& s);
  void op_comment(const ir::Stmt& s);
  void barrier();
  void emit_fill(const ir::Fill* n);
  void emit_copy(const ir::Copy* n);
  void emit_gemm(const ir::Gemm* n);
  void emit_reduce(const ir::Reduce* n);
  void emit_row_reduce(const ir::Reduce* n);
  void emit_parallel(const ir::Parallel* n);
  void emit_store(const ir::Store* n);
  void emit_for(const ir::For* n);
  void emit_if(const ir::IfThenElse* n);
  void emit_atomic_add(const ir::AtomicAdd* n);
  bool touches_workgroup(const ir::Stmt& s) const;

  // Loops over an index space: strided over the workgroup, or over the owned points of the
  // distributed layout. Both return the names of the index variables (i32).
  std::vector<std::string> open_strided(const std::vector<ir::Expr>& extents, const std::string& base);
  void open_owned(const std::string& row, const std::string& col, int64_t rows, int64_t cols);
  void close_n(size_t n);

  // Expressions and accesses (WgslEmitter.cpp).
  std::string type_name(ir::DType t) const override;
  std::string storage_type_name(ir::DType t) const override;
  std::string float_suffix(ir::DType) const override { return "f"; }
  std::string inf_literal(ir::DType t) const override;
  std::string nan_literal(ir::DType t) const override;
  std::string math_name(ir::Intrinsic fn, ir::DType t) const override;
  const std::set<std::string>& reserved_words() const override;
  std::string print_load(const ir::Load* l, int& prec) override;
  std::string print_cast(const ir::Cast* c, int& prec) override;
  std::string print_int(const ir::IntImm* i, int& prec) override;
  std::string print_float(double v, ir::DType t, int& prec) override;
  std::string print_binary(const ir::Binary* b, int& prec) override;
  std::string print_call(const ir::Call* c, int& prec) override;
  std::string print_select(const ir::Select* s, int& prec);

  std::string linear(const ir::BufferPtr& b, const std::vector<ir::Expr>& idx);
  std::string in_bounds(const ir::BufferPtr& b, const std::vector<ir::Expr>& idx);
  std::string reg_index(const ir::BufferPtr& b, const std::vector<ir::Expr>& idx);
  // The value of an element (as its computation type: f32 for 16-bit floats), unguarded.
  std::string load_raw(const ir::BufferPtr& b, const std::vector<ir::Expr>& idx);
  // A statement storing `v` (printed, of the computation type) into an element.
  std::string store_raw(const ir::BufferPtr& b, const std::vector<ir::Expr>& idx, const std::string& v);
  // `v` converted to what is stored into b (16-bit rounding is done by store_raw).
  std::string value_for(const ir::BufferPtr& b, const ir::Expr& v);
  ir::Expr ref(const std::string& var_name); // a VarRef to a generated i32 name
  int64_t const_extent(const ir::Expr& e, const std::string& what) const;

  const ir::Kernel& k_;
  const Target& target_;
  const VariantInfo& info_;
  WgslLayout layout_;
  std::map<const ir::Buffer*, WgslPlace> place_;
  std::map<const ir::Buffer*, WgslStorage> storage_;
  int64_t red_slots_ = 0; // f32 slots of the cross-invocation reduction scratch

  // Inside a distributed parallel: the parallel's row/column vars and the owned-point names.
  const ir::Var* dist_row_ = nullptr;
  const ir::Var* dist_col_ = nullptr;
  bool guard_loads_ = true;
  ir::Expr load_pad_;
  std::map<std::string, ir::VarPtr> gen_vars_;
  int uniq_ = 0;
};

// Helper functions (WgslHelpers.cpp): the source of every used helper, dependencies closed,
// in a fixed order.
std::string wgsl_helper_source(const std::set<std::string>& used);

} // namespace tilegen::emit
