// CudaEmitter: the ops. Each function prints one op for the whole block; thread mappings come
// from the fragment layouts (LayoutInference), so the code below only walks a thread's
// registers and turns (thread, register) into coordinates.
#include "emit/CudaEmitter.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "passes/RangeAnalysis.h"
#include "support/InternalError.h"

#include <cmath>
#include <functional>

namespace tilegen::emit {

using namespace ir;

bool expr_multiple_of(const Expr& e, int64_t m) {
  if (m <= 1)
    return true;
  if (auto* i = e->as<IntImm>())
    return i->value % m == 0;
  if (auto* c = e->as<Cast>())
    return expr_multiple_of(c->value, m);
  if (auto* b = e->as<Binary>()) {
    if (b->op == BinaryOp::Mul)
      return expr_multiple_of(b->a, m) || expr_multiple_of(b->b, m);
    if (b->op == BinaryOp::Add || b->op == BinaryOp::Sub)
      return expr_multiple_of(b->a, m) && expr_multiple_of(b->b, m);
  }
  return false;
}

// Whether a start index of c reads a shared buffer (an id table an earlier copy filled):
// those reads need the writes before them to have landed, like any read of shared memory.
bool copy_index_reads_shared(const Copy* c) {
  struct Scan : IRVisitor {
    bool found = false;

  protected:
    void visit_Load(const Load* n) override {
      found = found || n->buffer->scope == MemScope::Shared;
      IRVisitor::visit_Load(n);
    }
  } scan;
  for (const Region* r : {&c->src, &c->dst})
    for (const Expr& o : r->offsets)
      scan.visit(o);
  return scan.found;
}

namespace {

int log2_of(int64_t v) {
  int l = 0;
  while ((int64_t(1) << l) < v)
    ++l;
  TG_ASSERT((int64_t(1) << l) == v, "CUDA emitter: thread mode size is not a power of two");
  return l;
}

const char* vec_type(int64_t bytes) {
  switch (bytes) {
  case 4: return "uint32_t";
  case 8: return "uint2";
  case 16: return "uint4";
  }
  return nullptr;
}

} // namespace

// "Every element of region r lies inside its tensor", as a predicate over the region's
// offsets (block and loop indices, dims) derived by passes/RangeAnalysis: each offset and the
// offset plus the tile extent minus one are in bounds. nullptr when there is none, or when it
// is false. Copies test it once and then move the tile without per-element bounds checks.
Expr region_in_bounds(const Region& r, const passes::RangeEnv& env) {
  const Buffer& b = *r.buffer;
  const size_t n = b.rank(), lead = n - r.tile_rank();
  passes::TileVars tile;
  std::vector<VarPtr> points; // keeps the tile vars alive while `tile` refers to them
  Expr cond;
  for (size_t d = 0; d < n; ++d) {
    Expr idx = r.offsets[d];
    if (d >= lead) {
      auto ext = as_const_int(r.extents[d - lead]);
      if (!ext || *ext < 1)
        return nullptr;
      points.push_back(make_var("tg_p" + std::to_string(d), VarKind::ParallelVar, DType::i64()));
      tile[points.back().get()] = passes::Interval::of(0, *ext - 1);
      idx = Binary::make(BinaryOp::Add, idx, VarRef::make(points.back()));
    }
    Expr in = Binary::make(BinaryOp::And, Binary::make(BinaryOp::Le, make_i64(0), idx),
                           Binary::make(BinaryOp::Lt, idx, b.shape[d]));
    cond = cond ? Binary::make(BinaryOp::And, cond, in) : in;
  }
  Expr p = passes::uniform_predicate(cond, true, tile, env);
  return p && !is_const_int(p, 0) ? p : nullptr;
}


// tg_t<d>: this thread's part of the coordinate along each dim of layout L.
void CudaEmitter::declare_thread_coords(const layout::FragmentLayout& L) {
  for (size_t d = 0; d < L.rank(); ++d)
    line("const int tg_t" + std::to_string(d) + " = " + thread_coord(L, d) + ";");
}

// ---- fill ----------------------------------------------------------------------------------

void CudaEmitter::emit_fill(const Fill* f) {
  const Buffer& b = *f->dst;
  std::string v = from_float(expr(f->value), b.dtype);
  if (b.scope == MemScope::Fragment) {
    line("#pragma unroll");
    open("for (int tg_r = 0; tg_r < " + std::to_string(frag(&b).num_regs()) + "; ++tg_r)");
    line(name(b.name) + "[tg_r] = " + v + ";");
    close();
    return;
  }
  if (b.scope == MemScope::Shared) {
    before_shared_write();
    const SharedSlot& s = slots_.at(&b);
    open("for (int tg_e = tg_tid; tg_e < " + std::to_string(s.rows * s.cols) + "; tg_e += " +
         std::to_string(threads_) + ")");
    line(shared_ptr(&b) + "[" + shared_offset(&b, "tg_e / " + std::to_string(s.cols),
                                             "tg_e % " + std::to_string(s.cols)) +
         "] = " + v + ";");
    close();
    return;
  }
  TG_ASSERT(b.scope == MemScope::Local, "CUDA emitter: fill of a global buffer");
  // A local buffer is each thread's own: every thread fills all of it.
  open("for (int tg_e = 0; tg_e < " + std::to_string(num_elements(b)) + "; ++tg_e)");
  line(name(b.name) + "[tg_e] = " + v + ";");
  close();
}

int64_t CudaEmitter::num_elements(const Buffer& b) const {
  int64_t n = 1;
  for (const auto& e : b.shape)
    n *= cuda_const(e);
  return n;
}

// A copy between shared memory and shared memory or a tensor (no fragment on either side): the
// block's threads take the tile's elements in turn, one element each. Tensor elements out of
// bounds read as the pad and are not written, as everywhere.
void CudaEmitter::copy_elementwise(const Copy* c) {
  const auto& ext = c->src.extents;
  const size_t tr = ext.size();
  const int64_t rows = tr == 2 ? cuda_const(ext[0]) : 1, cols = cuda_const(ext[tr - 1]);
  before_shared_access(c->src.buffer->scope == MemScope::Shared,
                       c->dst.buffer->scope == MemScope::Shared);
  auto at = [&](const Region& r, std::vector<std::string>* idx) {
    const Buffer& b = *r.buffer;
    const size_t n = b.rank();
    std::vector<std::string> ix;
    for (const auto& o : r.offsets)
      ix.push_back("(" + expr(o) + ")");
    ix[n - 1] += " + tg_j";
    if (tr == 2)
      ix[n - 2] += " + tg_i";
    if (b.scope == MemScope::Shared)
      return shared_ptr(&b) + "[" + shared_offset(&b, n >= 2 ? "(int)" + ix[n - 2] : "0", "(int)" + ix[n - 1]) + "]";
    *idx = ix;
    return name(b.name) + "[" + global_index(b, ix) + "]";
  };
  open("for (int tg_e = tg_tid; tg_e < " + std::to_string(rows * cols) + "; tg_e += " +
       std::to_string(threads_) + ")");
  if (tr == 2) // a rank-1 tile has columns only
    line("const int tg_i = tg_e / " + std::to_string(cols) + ", tg_j = tg_e % " + std::to_string(cols) + ";");
  else
    line("const int tg_j = tg_e;");
  std::vector<std::string> sidx, didx;
  std::string src = at(c->src, &sidx), dst = at(c->dst, &didx);
  const Buffer &sb = *c->src.buffer, &db = *c->dst.buffer;
  std::string v = to_float(src, sb.dtype);
  if (sb.scope == MemScope::Global)
    v = "(" + global_in_bounds(sb, sidx) + " ? " + v + " : " + (c->pad ? expr(c->pad) : "0.0f") + ")";
  std::string store = dst + " = " + from_float(v, db.dtype) + ";";
  line(db.scope == MemScope::Global ? "if (" + global_in_bounds(db, didx) + ") " + store : store);
  close();
}

// ---- copies ----------------------------------------------------------------------------------

void CudaEmitter::emit_copy(const Copy* c) {
  MemScope s = c->src.buffer->scope, d = c->dst.buffer->scope;
  // A start index read from shared memory: the copies and stores that filled it complete
  // first (cp.async wait and barrier), and a later write to it waits for these reads.
  const bool index_reads_shared = copy_index_reads_shared(c);
  if (index_reads_shared && (smem_dirty_ || async_pending_))
    barrier();
  emit_copy_op(c, s, d);
  if (index_reads_shared)
    smem_read_ = true;
}

void CudaEmitter::emit_copy_op(const Copy* c, MemScope s, MemScope d) {
  if (s == MemScope::Global && d == MemScope::Shared) {
    before_shared_write();
    copy_global_to_shared(c, t_.gpu.async_copy != AsyncCopy::None); // TMA targets have cp.async
  } else if (s == MemScope::Global && d == MemScope::Fragment) {
    copy_global_fragment(c, true);
  } else if (s == MemScope::Fragment && d == MemScope::Global) {
    if (c == tma_store_)
      emit_tma_store(c);
    else if (c == threads_store_)
      emit_staged_store(c);
    else
      copy_global_fragment(c, false);
  } else if (s == MemScope::Fragment && d == MemScope::Fragment) {
    copy_fragment_fragment(c);
  } else if (s == MemScope::Shared && d == MemScope::Fragment) {
    before_shared_read();
    copy_shared_fragment(c, true);
  } else if (s == MemScope::Fragment && d == MemScope::Shared) {
    before_shared_write();
    copy_shared_fragment(c, false);
  } else {
    // Shared to shared or to a tensor (LayoutInference rejects copies with a local buffer).
    TG_ASSERT(s != MemScope::Local && d != MemScope::Local, "CUDA emitter: copy with a local buffer");
    copy_elementwise(c);
  }
}

// The 16-byte cp.async path applies: an asynchronous target, no conversion, zero padding, and
// rows made of whole 16-byte chunks that start on a chunk (the vectorized kernel's alignment).
bool CudaEmitter::cp_async_vec_ok(const Copy* c, bool async) const {
  const Buffer& g = *c->src.buffer;
  const Buffer* sb = c->dst.buffer.get();
  const int64_t eb = g.dtype.bytes(), V = 16 / eb;
  return async && g.dtype == sb->dtype && is_const_zero(c->pad) && eb <= 16 &&
         slots_.at(sb).cols % V == 0 && expr_multiple_of(c->src.offsets[g.rank() - 1], V);
}

// When the 16-byte chunks of c's source tile may be copied without per-chunk tests: every
// element of the tile lies inside the tensor (region_in_bounds), and the offset of its last
// element from its first fits in 32 bits. The 64-bit row products cost about ten instructions
// per chunk, as much as the tensor-core work of a k16 step, so offsets inside a tile are
// 32-bit; where the range analysis cannot prove that they fit, the predicate checks it
// (uniform, evaluated once). nullptr when no such predicate exists.
Expr CudaEmitter::cp_async_interior(const Copy* c) const {
  Expr inside = region_in_bounds(c->src, ranges_);
  if (!inside || c->src.tile_rank() != 2)
    return inside;
  const Buffer& g = *c->src.buffer;
  const SharedSlot& sl = slots_.at(c->dst.buffer.get());
  const size_t n = g.rank();
  Expr last = Binary::make(BinaryOp::Add,
                           Binary::make(BinaryOp::Mul, make_i64(sl.rows - 1), g.shape[n - 1]),
                           make_i64(sl.cols - 1));
  if (passes::bounds_of(last, ranges_).fits_i32())
    return inside;
  return Binary::make(BinaryOp::And, inside,
                      Binary::make(BinaryOp::Le, last, make_i64(2147483647)));
}

// Cooperative: the block's threads walk the tile in chunks of TG_VEC bytes (16, or 4 where the
// tensors are only 4-byte aligned: elements of at most 4 bytes) or elements (the scalar
// kernel); out-of-bounds chunks are zero-filled by cp.async (src-size 0). Interior tiles
// (cp_async_interior, tested once per tile) skip the per-chunk bounds test and zero-fill;
// inside a loop version that proved every tile interior (interior_copies_), the test is gone
// too. A 4-byte chunk lies inside a 16-byte one, so it is contiguous in the swizzled tile too.
void CudaEmitter::copy_global_to_shared(const Copy* c, bool async, bool commit) {
  const Buffer& g = *c->src.buffer;
  const Buffer* sb = c->dst.buffer.get();
  const SharedSlot& sl = slots_.at(sb);
  const int64_t R = sl.rows, C = sl.cols, eb = g.dtype.bytes();
  const size_t n = g.rank(), tr = c->src.tile_rank();
  TG_ASSERT(tr >= 1 && tr <= 2 && tr <= n, "CUDA emitter: copy tile rank");
  const bool same_type = g.dtype == sb->dtype;
  std::vector<std::string> off;
  for (const auto& o : c->src.offsets)
    off.push_back(expr(o));
  auto gidx = [&](const std::string& r, const std::string& col) {
    std::vector<std::string> idx(off.begin(), off.end());
    if (tr == 2)
      idx[n - 2] = "(" + off[n - 2] + ") + " + r;
    idx[n - 1] = "(" + off[n - 1] + ") + " + col;
    return idx;
  };
  std::string dst = shared_ptr(sb);
  std::string pad = c->pad ? expr(c->pad) : "0.0f";
  open("");
  // The chunk widths of this copy, widest first (each a branch on TG_VEC).
  std::vector<int64_t> widths;
  if (cp_async_vec_ok(c, async)) {
    widths.push_back(16);
    if (eb <= 4) {
      widths.push_back(4);
      narrow_copies_ = true;
    }
  }
  for (const int64_t W : widths) {
    const int64_t V = W / eb, chunks = R * C / V, per = (chunks + threads_ - 1) / threads_;
    const std::string copy_fn = need(W == 16 ? "tg_cp_async16" : "tg_cp_async4"), w = std::to_string(W);
    open("if constexpr (TG_VEC >= " + w + ")");
    const std::string in_tile =
        tr == 2 ? "tg_row * (int)" + expr(g.shape[n - 1], kUnary) + " + tg_col" : "tg_col";
    // When the block covers whole rows per pass, a power of two of them, a thread keeps its
    // column and steps by that many rows: its swizzled offset is computed once and each pass
    // adds a constant (shared_offset_split).
    const int64_t CPR = C / V, RPI = threads_ / CPR;
    const bool split = chunks % threads_ == 0 && threads_ % CPR == 0 && RPI > 0 &&
                       (RPI & (RPI - 1)) == 0 && splits_offsets(sb);
    const std::string t_row = "tg_tid / " + std::to_string(CPR),
                      t_col = "(tg_tid % " + std::to_string(CPR) + ") * " + std::to_string(V);
    auto chunk_loop = [&](bool checked) {
      if (split)
        line("const int tg_os = " + shared_offset(sb, t_row, t_col) + ";");
      // 4-byte chunks are up to 4x as many per thread (64 for an f32 attention tile): fully
      // unrolled, their addresses spilled registers (ptxas, f32 D128 attention on sm_90)
      line(W == 16 || per <= 8 ? "#pragma unroll" : "#pragma unroll 4");
      open("for (int tg_c = 0; tg_c < " + std::to_string(per) + "; ++tg_c)");
      if (split) {
        line("const int tg_row = " + t_row + " + tg_c * " + std::to_string(RPI) + ", tg_col = " + t_col + ";");
      } else {
        line("const int tg_q = tg_tid + tg_c * " + std::to_string(threads_) + ";");
        if (chunks % threads_ != 0)
          line("if (tg_q >= " + std::to_string(chunks) + ") break;");
        line("const int tg_row = tg_q / " + std::to_string(CPR) + ", tg_col = (tg_q % " +
             std::to_string(CPR) + ") * " + std::to_string(V) + ";");
      }
      auto idx = gidx("tg_row", "tg_col");
      const std::string at = split ? shared_offset_split(sb, "tg_os", "tg_c * " + std::to_string(RPI), "0")
                                   : shared_offset(sb, "tg_row", "tg_col");
      if (checked) {
        line("const bool tg_in = " + global_in_bounds(g, idx) + ";");
        line(copy_fn + "(" + dst + " + " + at + ", " + name(g.name) + " + (tg_in ? " +
             global_index(g, idx) + " : 0), tg_in ? " + w + " : 0);");
      } else {
        line(copy_fn + "(" + dst + " + " + at + ", tg_src + " + in_tile + ", " + w + ");");
      }
      close();
    };
    auto unchecked = [&] {
      line("const " + storage_type_name(g.dtype) + "* tg_src = " + name(g.name) + " + " +
           global_index(g, gidx("0", "0")) + ";");
      chunk_loop(false);
    };
    if (interior_copies_.count(c)) {
      unchecked();
    } else if (Expr inside = cp_async_interior(c)) {
      open("if (" + expr(inside) + ")");
      unchecked();
      open_else();
      chunk_loop(true);
      close();
    } else {
      chunk_loop(true);
    }
    if (commit)
      line(need("tg_cp_async_commit") + "();");
    open_else();
  }
  // Targets without asynchronous copies (HIP): whole 16-byte chunks through registers where
  // the call's tensors allow them (TG_VEC >= 16), elements otherwise (below).
  const bool sync16 = !async && copy_global_to_shared_vec16(c);
  // FP8 widened to f16 (LegalizeCuda: the mma.sync gemms of targets without FP8 wgmma): where
  // the source rows are whole 16-byte chunks (TG_VEC >= 16), each thread loads its 16-byte
  // chunks of the tile first (all of them in flight at once), then widens each to two 16-byte
  // chunks of f16 in shared memory. Synchronous, like the scalar path, but 16 elements per
  // load: the scalar path's byte loads ran a 1x8192x8192 GEMV at 1.9 ms on the H200.
  const bool widen16 = !same_type && g.dtype.is_fp8() && sb->dtype == DType::f16() &&
                       is_const_zero(c->pad) && C % 16 == 0 && expr_multiple_of(c->src.offsets[n - 1], 16);
  if (widen16) {
    const int64_t chunks = R * C / 16, per = (chunks + threads_ - 1) / threads_, CPR = C / 16;
    const std::string fn = need("tg_widen_fp8x16"), P = std::to_string(per);
    const std::string interp = fp8_widen_tag(g.dtype);
    open("if constexpr (TG_VEC >= 16)");
    line("uint4 tg_w[" + P + "];");
    auto at_chunk = [&] {
      line("const int tg_q = tg_tid + tg_c * " + std::to_string(threads_) + ";");
      line("const int tg_row = tg_q / " + std::to_string(CPR) + ", tg_col = (tg_q % " + std::to_string(CPR) +
           ") * 16;");
    };
    line("#pragma unroll");
    open("for (int tg_c = 0; tg_c < " + P + "; ++tg_c)");
    at_chunk();
    auto idx = gidx("tg_row", "tg_col");
    const std::string fits = chunks % threads_ != 0 ? "tg_q < " + std::to_string(chunks) + " && " : "";
    line("tg_w[tg_c] = " + fits + global_in_bounds(g, idx) + " ? *(const uint4*)(" + name(g.name) + " + " +
         global_index(g, idx) + ") : make_uint4(0u, 0u, 0u, 0u);");
    close();
    line("#pragma unroll");
    open("for (int tg_c = 0; tg_c < " + P + "; ++tg_c)");
    at_chunk();
    if (chunks % threads_ != 0)
      line("if (tg_q >= " + std::to_string(chunks) + ") break;");
    line("uint4 tg_lo, tg_hi;");
    line(fn + "<" + interp + ">(tg_w[tg_c], tg_lo, tg_hi);");
    line("*(uint4*)(" + dst + " + " + shared_offset(sb, "tg_row", "tg_col") + ") = tg_lo;");
    line("*(uint4*)(" + dst + " + " + shared_offset(sb, "tg_row", "tg_col + 8") + ") = tg_hi;");
    close();
    open_else();
  }
  // Rows of any width (tg_kernel<2>): the aligned 16-byte chunks that hold each tile row, into
  // staging; the pipelined loop's consumer shifts them into the tile (shift_realign).
  const bool shifted = shift_active_.count(c) > 0;
  if (shifted) {
    open("if constexpr (TG_VEC == 2)");
    shift_fill(c);
    open_else();
  }
  // Scalar path: element by element, synchronous; out-of-bounds elements read as `pad`. Eight
  // loads per thread are in flight before their stores (each store waits for its load).
  line("#pragma unroll 8");
  open("for (int tg_e = tg_tid; tg_e < " + std::to_string(R * C) + "; tg_e += " +
       std::to_string(threads_) + ")");
  line("const int tg_row = tg_e / " + std::to_string(C) + ", tg_col = tg_e % " +
       std::to_string(C) + ";");
  auto idx = gidx("tg_row", "tg_col");
  std::string val = name(g.name) + "[" + global_index(g, idx) + "]";
  std::string v = same_type ? "(" + global_in_bounds(g, idx) + " ? " + val + " : " +
                                  from_float(pad, g.dtype) + ")"
                            : from_float("(" + global_in_bounds(g, idx) + " ? " +
                                             to_float(val, g.dtype) + " : " + pad + ")",
                                         sb->dtype);
  line(dst + "[" + shared_offset(sb, "tg_row", "tg_col") + "] = " + v + ";");
  close();
  for (size_t i = 0; i < widths.size() + (sync16 ? 1 : 0) + (widen16 ? 1 : 0) + (shifted ? 1 : 0); ++i)
    close();
  close();
  if (async && (!widths.empty() || shifted)) // a cp.async path was printed (not only elements)
    async_pending_ = true;
}

// Opens `if constexpr (TG_VEC >= 16) { ... } else {` around the chunk copy (the caller closes
// the else branch) and returns true; false, printing nothing, where the copy does not qualify.
// Each thread loads up to 8 chunks into registers (all in flight), then stores them into the
// (swizzled) tile; a chunk lies wholly inside or outside the tensor (rows are whole chunks
// under TG_VEC 16, and the tile's column offset is a multiple of a chunk), so the test of its
// first element decides it.
bool CudaEmitter::copy_global_to_shared_vec16(const Copy* c) {
  if (!cp_async_vec_ok(c, true))
    return false;
  const Buffer& g = *c->src.buffer;
  const Buffer* sb = c->dst.buffer.get();
  const SharedSlot& sl = slots_.at(sb);
  const int64_t V = 16 / g.dtype.bytes(), CPR = sl.cols / V, chunks = sl.rows * CPR;
  const int64_t per = (chunks + threads_ - 1) / threads_, group = std::min<int64_t>(per, 8);
  const size_t n = g.rank(), tr = c->src.tile_rank();
  std::vector<std::string> off;
  for (const auto& o : c->src.offsets)
    off.push_back(expr(o));
  std::vector<std::string> idx(off.begin(), off.end());
  if (tr == 2)
    idx[n - 2] = "(" + off[n - 2] + ") + tg_row";
  idx[n - 1] = "(" + off[n - 1] + ") + tg_col";
  const std::string dst = shared_ptr(sb), G = std::to_string(group);
  auto at_chunk = [&] {
    line("const int tg_q = tg_tid + (tg_b + tg_c) * " + std::to_string(threads_) + ";");
    line("const int tg_row = tg_q / " + std::to_string(CPR) + ", tg_col = (tg_q % " +
         std::to_string(CPR) + ") * " + std::to_string(V) + ";");
  };
  const std::string fits = chunks % threads_ != 0 ? "tg_q < " + std::to_string(chunks) + " && " : "";
  open("if constexpr (TG_VEC >= 16)");
  open("for (int tg_b = 0; tg_b < " + std::to_string(per) + "; tg_b += " + G + ")");
  line("uint4 tg_w[" + G + "];");
  line("#pragma unroll");
  open("for (int tg_c = 0; tg_c < " + G + "; ++tg_c)");
  at_chunk();
  line("tg_w[tg_c] = " + fits + "tg_b + tg_c < " + std::to_string(per) + " && " +
       global_in_bounds(g, idx) + " ? *reinterpret_cast<const uint4*>(" + name(g.name) + " + " +
       global_index(g, idx) + ") : make_uint4(0u, 0u, 0u, 0u);");
  close();
  line("#pragma unroll");
  open("for (int tg_c = 0; tg_c < " + G + "; ++tg_c)");
  at_chunk();
  line("if (" + fits + "tg_b + tg_c < " + std::to_string(per) + ")");
  line("  *reinterpret_cast<uint4*>(" + dst + " + " + shared_offset(sb, "tg_row", "tg_col") +
       ") = tg_w[tg_c];");
  close();
  close();
  open_else();
  return true;
}

// ---- shifted chunk copies (tg_kernel<2>) ---------------------------------------------------------
//
// A tile row of a tensor whose rows are not whole 16-byte chunks starts anywhere in a chunk. The
// copy moves the C / V + 1 aligned chunks (V elements each) that hold the row's C elements into
// staging with cp.async: the first C / V into the row of the tile's ring slot for that stage,
// the last into the stage's overflow row (shift_chunk). A chunk's bytes past the end of the
// tensor's row are zero-filled (src-size), so columns past N read as zero and nothing past the
// row is read; rows outside the tensor are all zero. The tensor's base pointer is 16-byte
// aligned (the host tests it), so no chunk starts before the tensor. Before the gemm, each
// thread takes 16-byte chunks of the tile: the two staging chunks that hold one, shifted by the
// row's offset in its first chunk (tg_shift_chunk), stored into the shifted tile (swizzled like
// the buffer), which the gemm reads in tg_kernel<2> (shared_ptr).

bool CudaEmitter::shift_copy_ok(const Copy* c) const {
  const Buffer& g = *c->src.buffer;
  const Buffer* sb = c->dst.buffer.get();
  if (!shift_ok_ || t_.gpu.async_copy == AsyncCopy::None || g.scope != MemScope::Global ||
      sb->scope != MemScope::Shared || g.dtype != sb->dtype || g.dtype.bytes() != 2 ||
      !is_const_zero(c->pad) || c->src.tile_rank() != 2 || g.rank() < 2 || !row_major(sb) ||
      expr_multiple_of(g.shape.back(), 8)) // rows of whole chunks: never needed
    return false;
  auto it = slots_.find(sb);
  return it != slots_.end() && it->second.stages >= 2 && it->second.cols * 2 % 16 == 0;
}

std::string CudaEmitter::shift_ring(const Copy* c, const std::string& stage, const std::string& row) const {
  const Buffer* sb = c->dst.buffer.get();
  const SharedSlot& sl = slots_.at(sb);
  return "(" + storage_type_name(sb->dtype) + "*)(tg_smem + " + std::to_string(sl.offset) + ") + (" + stage + ") * " +
         std::to_string(sl.stage_elems) + " + (" + row + ") * " + std::to_string(sl.cols);
}

std::string CudaEmitter::shift_over(const Copy* c, const std::string& stage, const std::string& row) const {
  const Buffer* sb = c->dst.buffer.get();
  const int64_t V = 16 / sb->dtype.bytes();
  return "(" + storage_type_name(sb->dtype) + "*)(tg_smem + " + std::to_string(shift_slots_.at(c).over) + ") + ((" +
         stage + ") * " + std::to_string(slots_.at(sb).rows) + " + (" + row + ")) * " + std::to_string(V);
}

std::string CudaEmitter::shift_chunk(const Copy* c, const std::string& stage, const std::string& row,
                                     const std::string& j) const {
  const Buffer* sb = c->dst.buffer.get();
  const int64_t V = 16 / sb->dtype.bytes(), CPR = slots_.at(sb).cols / V;
  return "((" + j + ") < " + std::to_string(CPR) + " ? " + shift_ring(c, stage, row) + " + " + std::to_string(V) +
         " * (" + j + ") : " + shift_over(c, stage, row) + ")";
}

bool CudaEmitter::shift_split(const Copy* c) const {
  const SharedSlot& sl = slots_.at(c->dst.buffer.get());
  const int64_t CPR = sl.cols / (16 / c->src.buffer->dtype.bytes());
  return CPR > 0 && threads_ % CPR == 0 && sl.rows % (threads_ / CPR) == 0;
}

// In the split mapping, a thread's rows are RPI tensor rows apart; where that is a multiple of
// 16 bytes whatever the row width (RPI % 8 == 0 for 2-byte elements), they all start at the
// same offset in their chunks: one aligned address and one shift per thread.
bool CudaEmitter::shift_rows_aligned(const Copy* c) const {
  const int64_t C0 = slots_.at(c->dst.buffer.get()).cols / (16 / c->src.buffer->dtype.bytes());
  return (threads_ / C0) * c->src.buffer->dtype.bytes() % 16 == 0;
}

namespace {
// The 16-byte aligned chunk that holds the byte `p` points to (`p` printed as a cast operand).
std::string aligned_chunk(const std::string& p) {
  return "(const unsigned char*)((uintptr_t)" + p + " & ~(uintptr_t)15)";
}

// The tile row's first element (row `row` of the tile, its first column) as source indices.
std::vector<std::string> tile_row_index(const std::vector<std::string>& off, const std::string& row) {
  std::vector<std::string> idx = off;
  const size_t n = idx.size();
  idx[n - 2] = "(" + off[n - 2] + ") + " + row;
  return idx;
}
} // namespace

// The tile's first element, once per copy: tg_o (64-bit); row r of the tile starts r rows of the
// tensor further on. Only the low four bits of an address decide its shift, so the realign
// computes them in 32 bits.
std::string CudaEmitter::shift_origin(const Copy* c) {
  const Buffer& g = *c->src.buffer;
  std::vector<std::string> off;
  for (const auto& o : c->src.offsets)
    off.push_back(expr(o));
  return "const " + storage_type_name(g.dtype) + "* tg_o = " + name(g.name) + " + " + global_index(g, off) + ";";
}

void CudaEmitter::shift_fill(const Copy* c) {
  const Buffer& g = *c->src.buffer;
  const SharedSlot& sl = slots_.at(c->dst.buffer.get());
  const int64_t V = 16 / g.dtype.bytes(), R = sl.rows, C0 = sl.cols / V, T = threads_;
  const size_t n = g.rank();
  std::vector<std::string> off;
  for (const auto& o : c->src.offsets)
    off.push_back(expr(o));
  const std::vector<std::string> at = tile_row_index(off, "tg_row");
  const std::vector<std::string> rows(at.begin(), at.end() - 1);
  const std::string G = name(g.name), W = expr(g.shape[n - 1], kMul), ET = storage_type_name(g.dtype);
  const std::string stage = stage_expr_.at(c->dst.buffer.get());
  line(shift_origin(c));
  line("// the tile row's elements up to the end of the tensor's row");
  line("const int64_t tg_w = " + W + " - (" + off[n - 1] + ");");
  // One chunk: tg_r is the tile row's first element, tg_j its chunk, `to` the staging chunk.
  auto chunk = [&](const std::string& to) {
    line("const unsigned char* tg_ch = " + aligned_chunk("tg_r") + " + 16 * tg_j;");
    line("// the chunk's bytes up to the end of the tensor's row (0 past it, or for rows outside)");
    line("const int64_t tg_left = " + global_in_bounds(g, rows) + " ? (const unsigned char*)(tg_r + tg_w) - tg_ch : 0;");
    line("const int tg_b = tg_left <= 0 ? 0 : tg_left >= 16 ? 16 : (int)tg_left;");
    line(need("tg_cp_async16") + "(" + to + ", tg_b ? (const void*)tg_ch : (const void*)" + G + ", tg_b);");
  };
  if (shift_split(c)) {
    // Each thread keeps chunk column tg_j of the ring's C / V and steps RPI rows per pass; the
    // last chunk of each row (the overflow row) is one more pass over the rows.
    const int64_t RPI = T / C0, per = R / RPI;
    // A tile whose rows all lie in the tensor, with at least C + V elements left in each row
    // (every tile but the last along either dim), has only whole chunks: no clamps, and
    // where shift_rows_aligned the thread's chunks are one aligned address and a constant step.
    std::vector<std::string> first_row = tile_row_index(off, "0"), last_row = tile_row_index(off, std::to_string(R - 1));
    first_row.pop_back();
    last_row.pop_back();
    line("const bool tg_whole = " + global_in_bounds(g, first_row) + " && " + global_in_bounds(g, last_row) +
         " && tg_w >= " + std::to_string(V * (C0 + 1)) + ";");
    open("if (tg_whole)");
    line("const int tg_j = tg_tid % " + std::to_string(C0) + ", tg_r0 = tg_tid / " + std::to_string(C0) + ";");
    const bool const_step = shift_rows_aligned(c);
    if (const_step) {
      line("const unsigned char* tg_a = " + aligned_chunk("(tg_o + (int64_t)tg_r0 * " + W + ")") + " + 16 * tg_j;");
      line("const int64_t tg_step = (int64_t)" + std::to_string(RPI * g.dtype.bytes()) + " * " + W + ";");
    } else {
      line("const " + ET + "* tg_r = tg_o + (int64_t)tg_r0 * " + W + ";");
      line("const int64_t tg_step = (int64_t)" + std::to_string(RPI) + " * " + W + ";");
    }
    line(per <= 8 ? "#pragma unroll" : "#pragma unroll 4");
    open("for (int tg_c = 0; tg_c < " + std::to_string(per) + "; ++tg_c)");
    const std::string ring = shift_ring(c, stage, "tg_r0 + tg_c * " + std::to_string(RPI)) + " + " + std::to_string(V) + " * tg_j";
    if (const_step)
      line(need("tg_cp_async16") + "(" + ring + ", tg_a + tg_c * tg_step, 16);");
    else
      line(need("tg_cp_async16") + "(" + ring + ", " + aligned_chunk("(tg_r + tg_c * tg_step)") + " + 16 * tg_j, 16);");
    close();
    open("for (int tg_row = tg_tid; tg_row < " + std::to_string(R) + "; tg_row += " + std::to_string(T) + ")");
    line(need("tg_cp_async16") + "(" + shift_over(c, stage, "tg_row") + ", " +
         aligned_chunk("(tg_o + (int64_t)tg_row * " + W + ")") + " + " + std::to_string(16 * C0) + ", 16);");
    close();
    open_else();
    line("const int tg_j = tg_tid % " + std::to_string(C0) + ", tg_r0 = tg_tid / " + std::to_string(C0) + ";");
    line("const " + ET + "* tg_r = tg_o + (int64_t)tg_r0 * " + W + ";");
    line("const int64_t tg_step = (int64_t)" + std::to_string(RPI) + " * " + W + ";");
    line(per <= 8 ? "#pragma unroll" : "#pragma unroll 4");
    open("for (int tg_c = 0; tg_c < " + std::to_string(per) + "; ++tg_c, tg_r += tg_step)");
    line("const int tg_row = tg_r0 + tg_c * " + std::to_string(RPI) + ";");
    chunk(shift_ring(c, stage, "tg_row") + " + " + std::to_string(V) + " * tg_j");
    close();
    open("for (int tg_row = tg_tid; tg_row < " + std::to_string(R) + "; tg_row += " + std::to_string(T) + ")");
    line("const " + ET + "* tg_r = tg_o + (int64_t)tg_row * " + W + ";");
    line("const int tg_j = " + std::to_string(C0) + ";");
    chunk(shift_over(c, stage, "tg_row"));
    close();
    close();
    return;
  }
  const int64_t CPR = C0 + 1, chunks = R * CPR, per = (chunks + T - 1) / T;
  line(per <= 8 ? "#pragma unroll" : "#pragma unroll 4");
  open("for (int tg_c = 0; tg_c < " + std::to_string(per) + "; ++tg_c)");
  line("const int tg_q = tg_tid + tg_c * " + std::to_string(T) + ";");
  if (chunks % T != 0)
    line("if (tg_q >= " + std::to_string(chunks) + ") break;");
  line("const int tg_row = tg_q / " + std::to_string(CPR) + ", tg_j = tg_q % " + std::to_string(CPR) + ";");
  line("const " + ET + "* tg_r = tg_o + (int64_t)tg_row * " + W + ";");
  chunk(shift_chunk(c, stage, "tg_row", "tg_j"));
  close();
}

void CudaEmitter::shift_realign(const Copy* c) {
  const Buffer& g = *c->src.buffer;
  const Buffer* sb = c->dst.buffer.get();
  const SharedSlot& sl = slots_.at(sb);
  const int64_t V = 16 / g.dtype.bytes(), C0 = sl.cols / V, R = sl.rows, T = threads_;
  const size_t n = g.rank();
  const std::string row_bytes = "(unsigned)" + expr(g.shape[n - 1], kUnary) + " * " + std::to_string(g.dtype.bytes()) + "u";
  const std::string stage = stage_expr_.at(sb), ET = storage_type_name(sb->dtype);
  open("");
  line(shift_origin(c));
  if (shift_split(c)) {
    // As the fill: a thread keeps its chunk column and steps RPI rows, so its staging addresses
    // and swizzled offset step by constants, and its shift by a constant modulo 16.
    const int64_t RPI = T / C0, per = R / RPI;
    const std::string r0 = "tg_tid / " + std::to_string(C0), col = "(tg_tid % " + std::to_string(C0) + ") * " + std::to_string(V);
    const bool split_dst = splits_offsets(sb) && (RPI & (RPI - 1)) == 0;
    line("const int tg_j = tg_tid % " + std::to_string(C0) + ", tg_r0 = " + r0 + ";");
    const bool same_s = shift_rows_aligned(c);
    line(std::string(same_s ? "const " : "") + "unsigned tg_s = ((unsigned)(uintptr_t)tg_o + (unsigned)tg_r0 * " + row_bytes + ") & 15u;");
    if (!same_s)
      line("const unsigned tg_ds = " + std::to_string(RPI) + "u * " + row_bytes + " & 15u;");
    line("const " + ET + "* tg_lo_p = " + shift_ring(c, stage, "tg_r0") + " + " + std::to_string(V) + " * tg_j;");
    line("const bool tg_last = tg_j == " + std::to_string(C0 - 1) + ";");
    line("const " + ET + "* tg_hi_p = tg_last ? " + shift_over(c, stage, "tg_r0") + " : tg_lo_p + " + std::to_string(V) + ";");
    line("const int tg_hs = tg_last ? " + std::to_string(RPI * V) + " : " + std::to_string(RPI * sl.cols) + ";");
    if (split_dst)
      line("const int tg_os = " + shared_offset(sb, "tg_r0", col) + ";");
    line(per <= 8 ? "#pragma unroll" : "#pragma unroll 4");
    open("for (int tg_c = 0; tg_c < " + std::to_string(per) + "; ++tg_c)");
    line("const uint4 tg_lo = *(const uint4*)(tg_lo_p + tg_c * " + std::to_string(RPI * sl.cols) + ");");
    line("const uint4 tg_hi = *(const uint4*)(tg_hi_p + tg_c * tg_hs);");
    const std::string at = split_dst ? shared_offset_split(sb, "tg_os", "tg_c * " + std::to_string(RPI), "0")
                                     : shared_offset(sb, "tg_r0 + tg_c * " + std::to_string(RPI), col);
    line("*(uint4*)(" + shared_ptr(sb) + " + " + at + ") = " + need("tg_shift_chunk") + "(tg_lo, tg_hi, tg_s);");
    if (!same_s)
      line("tg_s = (tg_s + tg_ds) & 15u;");
    close();
    close();
    return;
  }
  const int64_t chunks = R * C0, per = (chunks + T - 1) / T;
  line(per <= 8 ? "#pragma unroll" : "#pragma unroll 4");
  open("for (int tg_c = 0; tg_c < " + std::to_string(per) + "; ++tg_c)");
  line("const int tg_q = tg_tid + tg_c * " + std::to_string(T) + ";");
  if (chunks % T != 0)
    line("if (tg_q >= " + std::to_string(chunks) + ") break;");
  line("const int tg_row = tg_q / " + std::to_string(C0) + ", tg_col = (tg_q % " + std::to_string(C0) + ") * " +
       std::to_string(V) + ";");
  line("const unsigned tg_s = ((unsigned)(uintptr_t)tg_o + (unsigned)tg_row * " + row_bytes + ") & 15u;");
  const std::string q = "tg_col / " + std::to_string(V);
  line("const uint4 tg_lo = *(const uint4*)" + shift_chunk(c, stage, "tg_row", q) + ";");
  line("const uint4 tg_hi = *(const uint4*)" + shift_chunk(c, stage, "tg_row", q + " + 1") + ";");
  line("*(uint4*)(" + shared_ptr(sb) + " + " + shared_offset(sb, "tg_row", "tg_col") + ") = " +
       need("tg_shift_chunk") + "(tg_lo, tg_hi, tg_s);");
  close();
  close();
}

// Each thread moves its own registers; runs of consecutive registers along the last dim
// become one vector access in the vectorized kernel when the whole run is in bounds.
void CudaEmitter::copy_global_fragment(const Copy* c, bool load) {
  const Region& gr = load ? c->src : c->dst;
  const Buffer& g = *gr.buffer;
  const Buffer& f = *(load ? c->dst.buffer : c->src.buffer);
  const auto& L = frag(&f);
  const size_t n = g.rank(), fr = L.rank();
  TG_ASSERT(gr.tile_rank() == fr, "CUDA emitter: copy tile rank differs from the fragment's");
  const int64_t eb = g.dtype.bytes();
  int64_t vec = 1;
  if (!L.regs[fr - 1].empty() && L.regs[fr - 1][0].stride == 1)
    vec = L.regs[fr - 1][0].size;
  while (vec > 1 && (vec * eb > 16 || !vec_type(vec * eb)))
    vec /= 2;
  if (!expr_multiple_of(gr.offsets[n - 1], vec))
    vec = 1;
  std::vector<std::string> off;
  for (const auto& o : gr.offsets)
    off.push_back(expr(o));
  open("");
  std::string leader = load ? "" : replica_leader(L);
  if (!leader.empty())
    open("if (" + leader + ")");
  declare_thread_coords(L);
  const int64_t R0 = fr == 2 ? L.regs_of_dim(0) : 1, R1 = L.regs_of_dim(fr - 1);
  // checked = false: the whole tile is inside the tensor (tested once, below), so neither the
  // vector runs nor the single elements need a bounds check.
  auto loops = [&](bool checked) {
    line("#pragma unroll");
    open("for (int tg_r0 = 0; tg_r0 < " + std::to_string(R0) + "; ++tg_r0)");
    line("#pragma unroll");
    open("for (int tg_g = 0; tg_g < " + std::to_string(R1 / vec) + "; ++tg_g)");
    line("const int tg_r1 = tg_g * " + std::to_string(vec) + ";");
    std::vector<std::string> idx(off.begin(), off.end());
    if (fr == 2)
      idx[n - 2] = "(" + off[n - 2] + ") + tg_t0 + " + reg_coord(L, 0, "tg_r0");
    idx[n - 1] = "(" + off[n - 1] + ") + tg_t" + std::to_string(fr - 1) + " + " +
                 reg_coord(L, fr - 1, "tg_r1");
    line("const int64_t tg_col = " + idx[n - 1] + ";");
    idx[n - 1] = "tg_col";
    std::string reg0 = fr == 2 ? "tg_r0 * " + std::to_string(R1) + " + tg_r1" : "tg_r1";
    std::string fname = name(f.name);
    std::string pad = c->pad ? expr(c->pad) : "0.0f";
    auto scalar = [&](const std::string& e) {
      std::vector<std::string> ix = idx;
      ix[n - 1] = "tg_col + " + e;
      std::string at = name(g.name) + "[" + global_index(g, ix) + "]";
      std::string reg = fname + "[" + reg0 + " + " + e + "]";
      if (load) {
        std::string v = checked ? "(" + global_in_bounds(g, ix) + " ? " + to_float(at, g.dtype) +
                                      " : " + pad + ")"
                                : to_float(at, g.dtype);
        line(reg + " = " + from_float(v, f.dtype) + ";");
      } else {
        line((checked ? "if (" + global_in_bounds(g, ix) + ") " : std::string()) + at + " = " +
             from_float(to_float(reg, f.dtype), g.dtype) + ";");
      }
    };
    if (vec > 1) {
      std::vector<std::string> lead = idx;
      lead[n - 1] = "tg_col";
      std::string all_in = global_in_bounds(g, lead) + " && tg_col + " + std::to_string(vec) +
                           " <= " + expr(g.shape[n - 1]);
      std::string vt = vec_type(vec * eb);
      const std::string allowed = "TG_VEC >= " + std::to_string(vec * eb);
      open(checked ? "if (" + allowed + " && " + all_in + ")" : "if (" + allowed + ")");
      std::string at = name(g.name) + " + " + global_index(g, lead);
      if (load) {
        // Read-only tensors (const __restrict__) through the non-coherent path, explicitly (the
        // compiler infers ld.global.nc only where it proves no store aliases the tensor).
        if (g.access == Access::Read)
          line("const " + vt + " tg_v = " + ldg_name() + "(reinterpret_cast<const " + vt + "*>(" + at + "));");
        else
          line("const " + vt + " tg_v = *reinterpret_cast<const " + vt + "*>(" + at + ");");
        line("const " + storage_type_name(g.dtype) + "* tg_x = reinterpret_cast<const " +
             storage_type_name(g.dtype) + "*>(&tg_v);");
        line("#pragma unroll");
        open("for (int tg_e = 0; tg_e < " + std::to_string(vec) + "; ++tg_e)");
        line(fname + "[" + reg0 + " + tg_e] = " + from_float(to_float("tg_x[tg_e]", g.dtype), f.dtype) + ";");
        close();
      } else {
        line(storage_type_name(g.dtype) + " tg_x[" + std::to_string(vec) + "];");
        line("#pragma unroll");
        open("for (int tg_e = 0; tg_e < " + std::to_string(vec) + "; ++tg_e)");
        line("tg_x[tg_e] = " + from_float(to_float(fname + "[" + reg0 + " + tg_e]", f.dtype), g.dtype) + ";");
        close();
        // A plain store: streaming stores (__stcs) measured slower for rmsnorm bf16 on the
        // H200 (3281 vs 3529 GB/s), though faster for f32 (docs/cuda-backend.md "Math").
        line("*reinterpret_cast<" + vt + "*>(" + at + ") = *reinterpret_cast<const " + vt + "*>(tg_x);");
      }
      open_else();
      line("#pragma unroll");
      open("for (int tg_e = 0; tg_e < " + std::to_string(vec) + "; ++tg_e)");
      scalar("tg_e");
      close();
      close();
    } else {
      scalar("0");
    }
    close();
    close();
  };
  if (Expr inside = region_in_bounds(gr, ranges_)) {
    open("if (" + expr(inside) + ")");
    loops(false);
    open_else();
    loops(true);
    close();
  } else {
    loops(true);
  }
  if (!leader.empty())
    close();
  close();
}

void CudaEmitter::copy_fragment_fragment(const Copy* c) {
  const Buffer& s = *c->src.buffer;
  const Buffer& d = *c->dst.buffer;
  line("#pragma unroll");
  open("for (int tg_r = 0; tg_r < " + std::to_string(frag(&d).num_regs()) + "; ++tg_r)");
  line(name(d.name) + "[tg_r] = " + from_float(to_float(name(s.name) + "[tg_r]", s.dtype), d.dtype) + ";");
  close();
}

void CudaEmitter::copy_shared_fragment(const Copy* c, bool load) {
  const Region& sr = load ? c->src : c->dst;
  const Buffer* sb = sr.buffer.get();
  const Buffer& f = *(load ? c->dst.buffer : c->src.buffer);
  const auto& L = frag(&f);
  const size_t fr = L.rank();
  const size_t n = sb->rank();
  const int64_t R0 = fr == 2 ? L.regs_of_dim(0) : 1, R1 = L.regs_of_dim(fr - 1);
  open("");
  declare_thread_coords(L);
  line("#pragma unroll");
  open("for (int tg_r0 = 0; tg_r0 < " + std::to_string(R0) + "; ++tg_r0)");
  line("#pragma unroll");
  open("for (int tg_r1 = 0; tg_r1 < " + std::to_string(R1) + "; ++tg_r1)");
  std::string row = fr == 2 ? "(int)(" + expr(sr.offsets[n - 2]) + ") + tg_t0 + " + reg_coord(L, 0, "tg_r0")
                            : (n >= 2 ? "(int)(" + expr(sr.offsets[n - 2]) + ")" : "0");
  std::string col = "(int)(" + expr(sr.offsets[n - 1]) + ") + tg_t" + std::to_string(fr - 1) + " + " +
                    reg_coord(L, fr - 1, "tg_r1");
  std::string at = shared_ptr(sb) + "[" + shared_offset(sb, row, col) + "]";
  std::string reg = name(f.name) + "[tg_r0 * " + std::to_string(R1) + " + tg_r1]";
  if (load)
    line(reg + " = " + from_float(to_float(at, sb->dtype), f.dtype) + ";");
  else
    line(at + " = " + from_float(to_float(reg, f.dtype), sb->dtype) + ";");
  close();
  close();
  close();
}

// ---- gemm ----------------------------------------------------------------------------------

void CudaEmitter::emit_gemm(const Stmt& s, const Gemm* g) {
  const auto& p = plan_.gemms.at(s.get());
  if (g->clear && p.kind != passes::GemmPlan::Wgmma) { // wgmma clears through scale-d
    line("#pragma unroll");
    open("for (int tg_r = 0; tg_r < " + std::to_string(frag(g->c.get()).num_regs()) + "; ++tg_r)");
    line(name(g->c->name) + "[tg_r] = 0.0f;");
    close();
  }
  if (p.kind == passes::GemmPlan::Wgmma)
    gemm_wgmma(g, p);
  else if (p.kind == passes::GemmPlan::Mma)
    gemm_mma(g, p);
  else
    gemm_simt(g, p);
}

void CudaEmitter::gemm_mma(const Gemm* g, const passes::GemmPlan& p) {
  auto cs = g->c->shape;
  const int64_t M = cuda_const(cs[0]), N = cuda_const(cs[1]);
  const int64_t K = g->transpose_a ? cuda_const(g->a->shape[0]) : cuda_const(g->a->shape[1]);
  const int64_t WTM = M / p.wm, WTN = N / p.wn, MI = WTM / 16, NI = WTN / 8;
  const bool bf = g->b->dtype == DType::bf16();
  const std::string mma = need(bf ? "tg_mma_bf16" : "tg_mma_f16");
  if (g->a->scope == MemScope::Shared || g->b->scope == MemScope::Shared)
    before_shared_read();
  open("");
  line("const int tg_l = tg_tid % 32, tg_w = tg_tid / 32;");
  line("const int tg_wm = tg_w % " + std::to_string(p.wm) + ", tg_wn = tg_w / " +
       std::to_string(p.wm) + ";");
  line("(void)tg_wm; (void)tg_wn;");
  line("const int tg_j = tg_l / 8, tg_i = tg_l % 8;");
  line("(void)tg_j; (void)tg_i;");
  std::string A = p.a_in_regs ? "" : shared_ptr(g->a.get());
  std::string B = shared_ptr(g->b.get());
  const int64_t KK = K / 16, NJ = NI / 2;
  // Operands read from shared memory are double-buffered across the k16 steps: step kk+1's
  // ldmatrix are issued before step kk's mma, so their latency hides behind the tensor-core
  // work instead of stalling the first mma of every step (the loop is fully unrolled, so the
  // buffer index is a constant). Register-resident A (attention's P) is packed in place. With
  // b_chunked, B runs one n16 chunk ahead instead of one k16 step (8 registers instead of
  // 4 * NI), its ldmatrix hidden behind the chunk's 2 * MI mma.
  const bool dbuf = KK > 1;
  const std::string slots = dbuf ? "[2]" : "";
  auto slot = [&](const std::string& kk) {
    if (!dbuf)
      return std::string();
    return kk == "0" ? std::string("[0]") : kk == "tg_kk" ? "[tg_kk % 2]" : "[(" + kk + ") % 2]";
  };
  if (!p.a_in_regs)
    line("uint32_t tg_a" + slots + "[" + std::to_string(MI) + "][4];");
  if (p.b_chunked)
    line("uint32_t tg_b[2][4];");
  else
    line("uint32_t tg_b" + slots + "[" + std::to_string(NJ) + "][4];");
  // Each ldmatrix address is a thread part (lane, warp) plus a part that is constant once the
  // loops are unrolled (k step, m16 tile, n16 chunk). The two share no bit when the row length
  // and the warp tile are powers of two (the constant part is a multiple of 16 below the warp
  // tile's extent, the lane part below 16); then the thread part is swizzled once, into `base`.
  struct Operand {
    const Buffer* buf;
    std::string t_row, t_col, base;
    bool split;
  };
  auto operand = [&](const Buffer* b, const std::string& t_row, const std::string& t_col,
                     int64_t warp_tile, const std::string& base) {
    Operand o{b, t_row, t_col, base,
              splits_offsets(b) && warp_tile > 0 && (warp_tile & (warp_tile - 1)) == 0};
    if (o.split)
      line("const int " + base + " = " + shared_offset(b, t_row, t_col) + ";");
    return o;
  };
  // The element offset of operand `o` at its thread part plus (c_row, c_col).
  auto at = [&](const Operand& o, const std::string& c_row, const std::string& c_col) {
    return o.split ? shared_offset_split(o.buf, o.base, c_row, c_col)
                   : shared_offset(o.buf, c_row + " + " + o.t_row, c_col + " + " + o.t_col);
  };
  const std::string wm_rows = "tg_wm * " + std::to_string(WTM), wn_cols = "tg_wn * " + std::to_string(WTN);
  Operand oa{};
  if (!p.a_in_regs)
    oa = !g->transpose_a ? operand(g->a.get(), wm_rows + " + tg_l % 16", "(tg_l / 16) * 8", WTM, "tg_oa")
                         : operand(g->a.get(), "(tg_j / 2) * 8 + tg_i", wm_rows + " + (tg_j % 2) * 8", WTM, "tg_oa");
  const Operand ob = !g->transpose_b
                         ? operand(g->b.get(), "(tg_j % 2) * 8 + tg_i", wn_cols + " + (tg_j / 2) * 8", WTN, "tg_ob")
                         : operand(g->b.get(), wn_cols + " + (tg_j / 2) * 8 + tg_i", "(tg_j % 2) * 8", WTN, "tg_ob");
  // The ldmatrix of B's n16 chunk `nj` of k16 step `kk` (expressions) into `dst`.
  auto load_b = [&](const std::string& kk, const std::string& nj, const std::string& dst) {
    const std::string k16 = "(" + kk + ") * 16", n16 = "(" + nj + ") * 16";
    if (!g->transpose_b)
      line(need("tg_ldmatrix_x4_trans") + "(" + dst + ", " + B + " + " + at(ob, k16, n16) + ");");
    else
      line(need("tg_ldmatrix_x4") + "(" + dst + ", " + B + " + " + at(ob, n16, k16) + ");");
  };
  // The ldmatrix of k16 step `kk` (an expression) into its buffers: A, and B unless chunked.
  auto load = [&](const std::string& kk) {
    if (!p.a_in_regs) {
      line("#pragma unroll");
      open("for (int tg_mi = 0; tg_mi < " + std::to_string(MI) + "; ++tg_mi)");
      const std::string k16 = "(" + kk + ") * 16";
      if (!g->transpose_a)
        line(need("tg_ldmatrix_x4") + "(tg_a" + slot(kk) + "[tg_mi], " + A + " + " +
             at(oa, "tg_mi * 16", k16) + ");");
      else
        line(need("tg_ldmatrix_x4_trans") + "(tg_a" + slot(kk) + "[tg_mi], " + A + " + " +
             at(oa, k16, "tg_mi * 16") + ");");
      close();
    }
    if (p.b_chunked)
      return;
    line("#pragma unroll");
    open("for (int tg_nj = 0; tg_nj < " + std::to_string(NJ) + "; ++tg_nj)");
    load_b(kk, "tg_nj", "tg_b" + slot(kk) + "[tg_nj]");
    close();
  };
  load("0");
  if (p.b_chunked)
    load_b("0", "0", "tg_b[0]");
  line("#pragma unroll");
  open("for (int tg_kk = 0; tg_kk < " + std::to_string(KK) + "; ++tg_kk)");
  if (dbuf && !(p.a_in_regs && p.b_chunked)) {
    open("if (tg_kk + 1 < " + std::to_string(KK) + ")");
    load("tg_kk + 1");
    close();
  }
  std::string a_op = "tg_a" + slot("tg_kk") + "[tg_mi]";
  if (p.a_in_regs) {
    line("uint32_t tg_a[" + std::to_string(MI) + "][4];");
    line("#pragma unroll");
    open("for (int tg_mi = 0; tg_mi < " + std::to_string(MI) + "; ++tg_mi)");
    const auto& La = frag(g->a.get());
    const int64_t R1 = La.regs_of_dim(1);
    std::string pk = need(bf ? "tg_pack_bf16" : "tg_pack_f16");
    std::string an = name(g->a->name);
    auto at = [&](int h, int e2) {
      std::string base = "(2 * tg_mi + " + std::to_string(h) + ") * " + std::to_string(R1) +
                         " + 4 * tg_kk + " + std::to_string(e2);
      return pk + "(" + an + "[" + base + "], " + an + "[" + base + " + 1])";
    };
    line("tg_a[tg_mi][0] = " + at(0, 0) + ";");
    line("tg_a[tg_mi][1] = " + at(1, 0) + ";");
    line("tg_a[tg_mi][2] = " + at(0, 2) + ";");
    line("tg_a[tg_mi][3] = " + at(1, 2) + ";");
    close();
    a_op = "tg_a[tg_mi]";
  }
  std::string c = name(g->c->name);
  const std::string R1 = std::to_string(2 * NI);
  auto mma_at = [&](const std::string& ni, const std::string& b0, const std::string& b1) {
    std::string r0 = "(2 * tg_mi) * " + R1 + " + " + ni, r1 = "(2 * tg_mi + 1) * " + R1 + " + " + ni;
    line(mma + "(" + c + "[" + r0 + "], " + c + "[" + r0 + " + 1], " + c + "[" + r1 + "], " + c +
         "[" + r1 + " + 1], " + a_op + ", " + b0 + ", " + b1 + ");");
  };
  if (p.b_chunked) {
    // One flat sequence of KK * NJ chunks, each loaded one chunk ahead into the other buffer.
    const std::string steps = std::to_string(KK * NJ), nj = std::to_string(NJ);
    line("#pragma unroll");
    open("for (int tg_nj = 0; tg_nj < " + nj + "; ++tg_nj)");
    line("const int tg_t = tg_kk * " + nj + " + tg_nj;");
    open("if (tg_t + 1 < " + steps + ")");
    load_b("(tg_t + 1) / " + nj, "(tg_t + 1) % " + nj, "tg_b[(tg_t + 1) % 2]");
    close();
    line("#pragma unroll");
    open("for (int tg_mi = 0; tg_mi < " + std::to_string(MI) + "; ++tg_mi)");
    line("#pragma unroll");
    open("for (int tg_h = 0; tg_h < 2; ++tg_h)");
    mma_at("2 * (2 * tg_nj + tg_h)", "tg_b[tg_t % 2][tg_h * 2]", "tg_b[tg_t % 2][tg_h * 2 + 1]");
    close();
    close();
    close();
  } else {
    const std::string bs = "tg_b" + slot("tg_kk");
    line("#pragma unroll");
    open("for (int tg_mi = 0; tg_mi < " + std::to_string(MI) + "; ++tg_mi)");
    line("#pragma unroll");
    open("for (int tg_ni = 0; tg_ni < " + std::to_string(NI) + "; ++tg_ni)");
    mma_at("2 * tg_ni", bs + "[tg_ni / 2][(tg_ni % 2) * 2]", bs + "[tg_ni / 2][(tg_ni % 2) * 2 + 1]");
    close();
    close();
  }
  close();
  close();
}

void CudaEmitter::gemm_simt(const Gemm* g, const passes::GemmPlan& p) {
  auto cs = g->c->shape;
  const int64_t M = cuda_const(cs[0]), N = cuda_const(cs[1]);
  const int64_t K = g->transpose_a ? cuda_const(g->a->shape[0]) : cuda_const(g->a->shape[1]);
  const int64_t TM = M / p.ty, TN = N / p.tx;
  std::string a_at; // element (row, k) of A as a float expression of tg_m, tg_k
  if (p.a_staged) {
    // A lives in registers in another layout: every thread writes its part to scratch.
    const auto& La = frag(g->a.get());
    before_shared_write();
    open("");
    line("float* tg_stage = (float*)(" + smem_at(stage_scratch_offset_, true) + ");");
    line("const int tg_t0 = " + thread_coord(La, 0) + ", tg_t1 = " + thread_coord(La, 1) + ";");
    line("#pragma unroll");
    open("for (int tg_r0 = 0; tg_r0 < " + std::to_string(La.regs_of_dim(0)) + "; ++tg_r0)");
    line("#pragma unroll");
    open("for (int tg_r1 = 0; tg_r1 < " + std::to_string(La.regs_of_dim(1)) + "; ++tg_r1)");
    line("tg_stage[(tg_t0 + " + reg_coord(La, 0, "tg_r0") + ") * " + std::to_string(K) + " + tg_t1 + " +
         reg_coord(La, 1, "tg_r1") + "] = " +
         to_float(name(g->a->name) + "[tg_r0 * " + std::to_string(La.regs_of_dim(1)) + " + tg_r1]", g->a->dtype) + ";");
    close();
    close();
    close();
    a_at = "((const float*)(" + smem_at(stage_scratch_offset_, true) + "))[tg_m * " +
           std::to_string(K) + " + tg_k]";
  } else {
    std::string A = shared_ptr(g->a.get());
    a_at = to_float(A + "[" + (g->transpose_a ? shared_offset(g->a.get(), "tg_k", "tg_m")
                                              : shared_offset(g->a.get(), "tg_m", "tg_k")) + "]",
                    g->a->dtype);
  }
  std::string B = shared_ptr(g->b.get());
  std::string b_at = to_float(B + "[" + (g->transpose_b ? shared_offset(g->b.get(), "tg_n", "tg_k")
                                                        : shared_offset(g->b.get(), "tg_k", "tg_n")) + "]",
                              g->b->dtype);
  before_shared_read();
  open("");
  line("const int tg_tx = tg_tid % " + std::to_string(p.tx) + ", tg_ty = tg_tid / " +
       std::to_string(p.tx) + ";");
  line("#pragma unroll 4");
  open("for (int tg_k = 0; tg_k < " + std::to_string(K) + "; ++tg_k)");
  line("float tg_a[" + std::to_string(TM) + "], tg_b[" + std::to_string(TN) + "];");
  line("#pragma unroll");
  open("for (int tg_i = 0; tg_i < " + std::to_string(TM) + "; ++tg_i)");
  line("const int tg_m = tg_ty + " + std::to_string(p.ty) + " * tg_i;");
  line("tg_a[tg_i] = " + a_at + ";");
  close();
  line("#pragma unroll");
  open("for (int tg_j = 0; tg_j < " + std::to_string(TN) + "; ++tg_j)");
  line("const int tg_n = 4 * tg_tx + " + std::to_string(4 * p.tx) + " * (tg_j / 4) + tg_j % 4;");
  line("tg_b[tg_j] = " + b_at + ";");
  close();
  line("#pragma unroll");
  open("for (int tg_i = 0; tg_i < " + std::to_string(TM) + "; ++tg_i)");
  line("#pragma unroll");
  open("for (int tg_j = 0; tg_j < " + std::to_string(TN) + "; ++tg_j)");
  std::string c = name(g->c->name) + "[tg_i * " + std::to_string(TN) + " + tg_j]";
  line(c + " = fmaf(tg_a[tg_i], tg_b[tg_j], " + c + ");");
  close();
  close();
  close();
  close();
}

// ---- reduce --------------------------------------------------------------------------------

void CudaEmitter::emit_reduce(const Reduce* r) {
  const auto& Ls = frag(r->src.get());
  TG_ASSERT(Ls.rank() == 2, "CUDA emitter: reduce of a rank-" + std::to_string(Ls.rank()) + " fragment");
  const size_t rd = static_cast<size_t>(r->dim), kd = 1 - rd;
  const int64_t Rk = Ls.regs_of_dim(kd), Rr = Ls.regs_of_dim(rd);
  std::string ident = r->op == ReduceOp::Sum ? "0.0f" : (r->op == ReduceOp::Max ? "-" : "") + inf_literal(DType::f32());
  auto op = [&](const std::string& a, const std::string& b) {
    switch (r->op) {
    case ReduceOp::Sum: return a + " + " + b;
    case ReduceOp::Max: return "fmaxf(" + a + ", " + b + ")";
    case ReduceOp::Min: return "fminf(" + a + ", " + b + ")";
    }
    return std::string();
  };
  std::string src = name(r->src->name), dst = name(r->dst->name);
  open("");
  line("float tg_red[" + std::to_string(Rk) + "];");
  line("#pragma unroll");
  open("for (int tg_k = 0; tg_k < " + std::to_string(Rk) + "; ++tg_k)");
  line("tg_red[tg_k] = " + ident + ";");
  line("#pragma unroll");
  open("for (int tg_q = 0; tg_q < " + std::to_string(Rr) + "; ++tg_q)");
  std::string reg = kd == 0 ? "tg_k * " + std::to_string(Rr) + " + tg_q" : "tg_q * " + std::to_string(Rk) + " + tg_k";
  line("tg_red[tg_k] = " + op("tg_red[tg_k]", to_float(src + "[" + reg + "]", r->src->dtype)) + ";");
  close();
  close();
  if (deferred_.count(r)) {
    // A per-lane partial: the lanes' sums are combined after the loop (plan_deferred_sums).
    line("#pragma unroll");
    open("for (int tg_k = 0; tg_k < " + std::to_string(Rk) + "; ++tg_k)");
    line(dst + "[tg_k] = " + op(dst + "[tg_k]", "tg_red[tg_k]") + "; // this lane's part");
    close();
    close();
    return;
  }
  // Across threads: lane modes by butterfly shuffles, warp modes through shared scratch.
  struct WarpMode {
    int64_t prod, size;
  };
  std::vector<WarpMode> warp_modes;
  int64_t prod = 1;
  for (const auto& m : Ls.thread_modes) {
    if (m.stride[rd] != 0 && m.size > 1) {
      // The mode's digits within a warp are lanes (butterfly shuffles), the rest warps (shared
      // scratch); a mode may straddle the two (a SIMT gemm's accumulator on 32-lane HIP rows:
      // fuzz finding a44145f2), and its warp part need not be a power of two (12 warps).
      const int64_t ws = t_.gpu.warp_size;
      const int64_t in_lanes = prod >= ws ? 1 : std::min(m.size, ws / prod);
      TG_ASSERT(m.size % in_lanes == 0, "CUDA emitter: a thread mode splits a warp unevenly");
      if (in_lanes > 1) {
        const int pos = log2_of(prod), bits = log2_of(in_lanes);
        for (int b = pos; b < pos + bits; ++b) {
          line("#pragma unroll");
          open("for (int tg_k = 0; tg_k < " + std::to_string(Rk) + "; ++tg_k)");
          line("tg_red[tg_k] = " + op("tg_red[tg_k]", shfl_xor("tg_red[tg_k]", 1 << b)) + ";");
          close();
        }
      }
      if (m.size / in_lanes > 1)
        warp_modes.push_back({prod * in_lanes, m.size / in_lanes});
    }
    prod *= m.size;
  }
  if (!warp_modes.empty()) {
    const int64_t dst_elems = Ls.shape[kd];
    const auto& Ld = frag(r->dst.get());
    before_shared_write();
    line("float* tg_scr = (float*)(" + smem_at(reduce_scratch_offset_, true) + ");");
    line("const int tg_tk = " + thread_coord(Ls, kd) + ";");
    // One writer per (warp, element): lanes that differ only in reduced or replicated modes
    // hold the same partial.
    std::string lead;
    int64_t pr = 1;
    for (const auto& m : Ls.thread_modes) {
      bool keeps = m.stride[kd] != 0;
      // Only the mode's lane digits: each warp writes its own partial.
      const int64_t ws = t_.gpu.warp_size;
      const int64_t lanes = pr >= ws ? 1 : std::min(m.size, ws / pr);
      if (!keeps && lanes > 1)
        lead += std::string(lead.empty() ? "" : " && ") + "(tg_tid / " + std::to_string(pr) + ") % " +
                std::to_string(lanes) + " == 0";
      pr *= m.size;
    }
    open(lead.empty() ? "" : "if (" + lead + ")");
    line("#pragma unroll");
    open("for (int tg_k = 0; tg_k < " + std::to_string(Rk) + "; ++tg_k)");
    line("tg_scr[(tg_tid / " + std::to_string(t_.gpu.warp_size) + ") * " + std::to_string(dst_elems) + " + tg_tk + " + reg_coord(Ls, kd, "tg_k") +
         "] = tg_red[tg_k];");
    close();
    close();
    line(sync_threads());
    smem_dirty_ = false;
    // Every combination of the reduced warp digits.
    int64_t combos = 1;
    for (const auto& w : warp_modes)
      combos *= w.size;
    std::string base = "tg_tid";
    for (const auto& w : warp_modes)
      base = "(" + base + " - ((tg_tid / " + std::to_string(w.prod) + ") % " + std::to_string(w.size) +
             ") * " + std::to_string(w.prod) + ")";
    line("const int tg_base = " + base + ";");
    line("#pragma unroll");
    open("for (int tg_k = 0; tg_k < " + std::to_string(Rk) + "; ++tg_k)");
    line("float tg_acc = " + ident + ";");
    line("#pragma unroll");
    open("for (int tg_c = 0; tg_c < " + std::to_string(combos) + "; ++tg_c)");
    std::string tid = "tg_base";
    int64_t cp = 1;
    for (const auto& w : warp_modes) {
      tid += " + ((tg_c / " + std::to_string(cp) + ") % " + std::to_string(w.size) + ") * " + std::to_string(w.prod);
      cp *= w.size;
    }
    line("tg_acc = " + op("tg_acc", "tg_scr[((" + tid + ") / " + std::to_string(t_.gpu.warp_size) + ") * " + std::to_string(dst_elems) +
                                         " + tg_tk + " + reg_coord(Ls, kd, "tg_k") + "]") + ";");
    close();
    line("tg_red[tg_k] = tg_acc;");
    close();
    smem_read_ = true;
    (void)Ld;
  }
  line("#pragma unroll");
  open("for (int tg_k = 0; tg_k < " + std::to_string(Rk) + "; ++tg_k)");
  std::string v = r->clear ? "tg_red[tg_k]" : op(to_float(dst + "[tg_k]", r->dst->dtype), "tg_red[tg_k]");
  line(dst + "[tg_k] = " + from_float(v, r->dst->dtype) + ";");
  close();
  close();
}

// ---- row sums carried across a loop -------------------------------------------------------------

// The lane bits a reduce's source layout spreads the reduced dim over (its shuffle masks); empty
// when part of that dim lies across warps.
std::vector<int> CudaEmitter::reduce_lane_bits(const Reduce* r) const {
  const auto& Ls = frag(r->src.get());
  const size_t rd = static_cast<size_t>(r->dim);
  std::vector<int> bits;
  int64_t prod = 1;
  for (const auto& m : Ls.thread_modes) {
    if (m.stride[rd] != 0 && m.size > 1) {
      int pos = log2_of(prod), nb = log2_of(m.size);
      if (pos + nb > lane_bits())
        return {};
      for (int b = pos; b < pos + nb; ++b)
        bits.push_back(b);
    }
    prod *= m.size;
  }
  return bits;
}

namespace {

// `b[i] = b[i] * e` with e free of b: a per-row rescale, which commutes with a sum over lanes.
bool rescale_store(const StmtNode* body, const Buffer* b) {
  auto* st = body->as<Store>();
  auto* m = st ? st->value->as<Binary>() : nullptr;
  if (!st || st->buffer.get() != b || st->op != StoreOp::Assign || !m || m->op != BinaryOp::Mul)
    return false;
  for (int side = 0; side < 2; ++side) {
    auto* self = (side ? m->b : m->a)->as<Load>();
    const Expr& other = side ? m->a : m->b;
    if (!self || self->buffer.get() != b || self->indices.size() != st->indices.size())
      continue;
    bool same = true;
    for (size_t d = 0; d < st->indices.size(); ++d) {
      auto *x = self->indices[d]->as<VarRef>(), *y = st->indices[d]->as<VarRef>();
      same = same && x && y && x->var == y->var;
    }
    if (same && !mentions_buffer(other, b))
      return true;
  }
  return false;
}

// A parallel whose statements touch b only through rescale stores (other statements, such as
// the running max's update next to `l = l * alpha`, do not mention b).
bool row_rescale(const Stmt& s, const Buffer* b) {
  auto* p = s->as<Parallel>();
  if (!p)
    return false;
  std::vector<Stmt> stmts;
  if (auto* q = p->body->as<Seq>())
    stmts = q->stmts;
  else
    stmts = {p->body};
  bool any = false;
  for (const Stmt& c : stmts) {
    if (rescale_store(c.get(), b)) {
      any = true;
      continue;
    }
    if (mentions_buffer(c, b))
      return false;
  }
  return any;
}

} // namespace

// A sum `reduce src -> dst (clear: false)` in a top-level loop whose rank-1 f32 fragment dst is
// otherwise only rescaled per row in the loop (dst[i] = dst[i] * e) and only zero-filled before
// it keeps a per-lane partial: each lane holding a row adds its own part, the rescales apply to
// the partials alike (every lane holds the same row factor), and one butterfly after the loop
// makes every lane's dst the row total. It saves the shuffles of every iteration (attention: 4
// shuffles and adds per thread and KV block).
void CudaEmitter::plan_deferred_sums() {
  auto* top = k_.body->as<Seq>();
  if (!top)
    return;
  for (size_t li = 0; li < top->stmts.size(); ++li) {
    auto* loop = top->stmts[li]->as<For>();
    if (!loop)
      continue;
    std::vector<const Reduce*> sums;
    std::vector<Stmt> in_loop;
    std::function<void(const Stmt&)> flat = [&](const Stmt& s) {
      if (auto* q = s->as<Seq>())
        for (const auto& c : q->stmts)
          flat(c);
      else
        in_loop.push_back(s);
    };
    flat(loop->body);
    for (const Stmt& s : in_loop)
      if (auto* r = s->as<Reduce>(); r && r->op == ReduceOp::Sum && !r->clear &&
                                     r->dst->scope == MemScope::Fragment && r->dst->rank() == 1 &&
                                     r->dst->dtype == DType::f32() && r->src->rank() == 2 &&
                                     r->src->scope == MemScope::Fragment && !reduce_lane_bits(r).empty())
        sums.push_back(r);
    for (const Reduce* r : sums) {
      const Buffer* d = r->dst.get();
      bool ok = true;
      for (const Stmt& s : in_loop)
        if (s.get() != r && mentions_buffer(s, d) && !row_rescale(s, d))
          ok = false;
      for (size_t bi = 0; bi < li && ok; ++bi) {
        const Stmt& s = top->stmts[bi];
        if (s->as<Alloc>() || !mentions_buffer(s, d))
          continue;
        auto* f = s->as<Fill>();
        ok = f && f->dst.get() == d && is_const_zero(f->value);
      }
      // The butterfly after the loop combines exactly the lanes the reduce would have: layout
      // inference replicates a reduce's result over the source's lanes along the reduced dim
      // (docs/cuda-backend.md, propagation), so every lane of a group holds the same rows.
      if (ok) {
        deferred_sums_[loop].push_back(r);
        deferred_.insert(r);
      }
    }
  }
}

void CudaEmitter::finish_deferred_sums(const For* f) {
  auto it = deferred_sums_.find(f);
  if (it == deferred_sums_.end())
    return;
  for (const Reduce* r : it->second) {
    const std::string dst = name(r->dst->name);
    const int64_t rows = frag(r->dst.get()).num_regs();
    line("// " + dst + ": the lanes' partial sums of the loop above, combined");
    for (int b : reduce_lane_bits(r)) {
      line("#pragma unroll");
      line("for (int tg_k = 0; tg_k < " + std::to_string(rows) + "; ++tg_k) " + dst + "[tg_k] = " + dst +
           "[tg_k] + " + shfl_xor(dst + "[tg_k]", 1 << b) + ";");
    }
  }
}

// ---- atomic add ----------------------------------------------------------------------------

void CudaEmitter::emit_atomic_add(const AtomicAdd* a) {
  const Buffer& g = *a->dst.buffer;
  const Buffer& f = *a->src.buffer;
  TG_ASSERT(f.scope == MemScope::Fragment, "CUDA emitter: atomic_add from a non-fragment");
  const auto& L = frag(&f);
  const size_t n = g.rank(), fr = L.rank();
  open("");
  std::string leader = replica_leader(L);
  if (!leader.empty())
    open("if (" + leader + ")");
  declare_thread_coords(L);
  const int64_t R0 = fr == 2 ? L.regs_of_dim(0) : 1, R1 = L.regs_of_dim(fr - 1);
  line("#pragma unroll");
  open("for (int tg_r0 = 0; tg_r0 < " + std::to_string(R0) + "; ++tg_r0)");
  line("#pragma unroll");
  open("for (int tg_r1 = 0; tg_r1 < " + std::to_string(R1) + "; ++tg_r1)");
  std::vector<std::string> idx;
  for (const auto& o : a->dst.offsets)
    idx.push_back(expr(o));
  if (fr == 2)
    idx[n - 2] = "(" + idx[n - 2] + ") + tg_t0 + " + reg_coord(L, 0, "tg_r0");
  idx[n - 1] = "(" + idx[n - 1] + ") + tg_t" + std::to_string(fr - 1) + " + " + reg_coord(L, fr - 1, "tg_r1");
  line("if (" + global_in_bounds(g, idx) + ") atomicAdd(&" + name(g.name) + "[" + global_index(g, idx) + "], " +
       name(f.name) + "[tg_r0 * " + std::to_string(R1) + " + tg_r1]);");
  close();
  close();
  if (!leader.empty())
    close();
  close();
}

std::string CudaEmitter::fp8_widen_tag(DType t) const {
  return t.kind == ScalarKind::E4M3 ? "__NV_E4M3" : "__NV_E5M2";
}

} // namespace tilegen::emit
