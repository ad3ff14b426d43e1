// Lowering of the tile ops to plain C loops. Every op is preceded by a comment with its spec
// line; inner loops have constant trip counts and `#pragma omp simd` where iterations are
// independent, so gcc/clang vectorize them for the target's -m flags.
#include "emit/CEmitter.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "support/InternalError.h"

#include <cmath>
#include <functional>

namespace tilegen::emit {

using namespace ir;

namespace {
std::string idx_name(const char* base, size_t i) { return std::string(base) + std::to_string(i); }

Expr add(const Expr& a, const Expr& b) { return simplify(Binary::make(BinaryOp::Add, a, b)); }
} // namespace

void CEmitter::emit_alloc(const Alloc* n) {
  const auto& b = n->buffer;
  std::string dims;
  for (const auto& e : b->shape)
    dims += "[" + expr(e) + "]";
  if (!scratch_on_heap_) {
    line("_Alignas(64) " + type_name(b->dtype) + " " + name(b->name) + dims + ";");
  } else {
    // A pointer to the buffer's rows in the scratch keeps the name[i][j] syntax of an array.
    const std::string off = std::to_string(scratch_offset_.at(b.get()));
    const std::string inner = dims.substr(dims.find(']') + 1); // all but the first extent
    const std::string ty = type_name(b->dtype);
    line(ty + " (*" + name(b->name) + ")" + inner + " = (" + ty + " (*)" + inner +
         ")(void*)(tg_scratch + " + off + ");");
  }
  if (staged_tiles_.count(b.get()))
    line("(void)" + name(b->name) + "; /* its copies are bf16 views: it may be never touched */");
  else if (!mentions_buffer(k_.body, b.get()))
    line("(void)" + name(b->name) + "; /* declared by the spec, never used */");
}

void CEmitter::emit_fill(const Fill* n) {
  std::vector<std::string> vars;
  std::vector<Expr> idx;
  for (size_t i = 0; i < n->dst->rank(); ++i) {
    vars.push_back(idx_name("tg_i", i));
    idx.push_back(ref(vars.back()));
  }
  open_loops(vars, n->dst->shape, true);
  line(access(n->dst, idx) + " = " + store_value(n->dst, n->value) + ";");
  close_loops(vars.size());
}

// copy: a fast path without checks when every global side's tile lies inside its tensor,
// else a guarded path (pad for reads, dropped writes). On-chip-only copies have no checks.
// Offsets that are not constants get a name (one evaluation, readable indices): `base<d>`.
std::vector<Expr> CEmitter::named_offsets(const Region& reg, const char* base) {
  std::vector<Expr> offs;
  for (size_t d = 0; d < reg.offsets.size(); ++d) {
    if (reg.offsets[d]->as<IntImm>()) {
      offs.push_back(reg.offsets[d]);
      continue;
    }
    std::string v = idx_name(base, d);
    line("const int64_t " + v + " = " + expr(reg.offsets[d], kAssign) + ";");
    offs.push_back(ref(v));
  }
  return offs;
}

void CEmitter::emit_copy(const Copy* n) {
  const Region &src = n->src, &dst = n->dst;
  const size_t r = src.tile_rank();
  const bool src_g = src.buffer->scope == MemScope::Global;
  const bool dst_g = dst.buffer->scope == MemScope::Global;

  open("");
  const auto so = named_offsets(src, "tg_s"), doff = named_offsets(dst, "tg_d");

  std::vector<std::string> vars;
  std::vector<Expr> point;
  for (size_t i = 0; i < r; ++i) {
    vars.push_back(idx_name("tg_i", i));
    point.push_back(ref(vars.back()));
  }
  auto index = [&](const Region& reg, const std::vector<Expr>& offs) {
    std::vector<Expr> idx = offs;
    const size_t lead = reg.buffer->rank() - r;
    for (size_t i = 0; i < r; ++i)
      idx[lead + i] = add(offs[lead + i], point[i]);
    return idx;
  };
  const auto si = index(src, so), di = index(dst, doff);

  // The element, converted from the src dtype to the dst dtype by store_value. In the
  // guarded path the load itself checks bounds and yields the pad value outside.
  auto body = [&](bool guarded) {
    const bool saved = guard_loads_;
    guard_loads_ = guarded && src_g;
    load_pad_ = n->pad;
    const std::string st =
        access(dst.buffer, di) + " = " + store_value(dst.buffer, Load::make(src.buffer, si)) + ";";
    load_pad_ = nullptr;
    guard_loads_ = saved;
    if (guarded && dst_g)
      line("if (" + in_bounds(dst.buffer, di) + ")");
    line(guarded && dst_g ? "  " + st : st);
  };

  if (!src_g && !dst_g) {
    open_loops(vars, src.extents, true);
    body(false);
    close_loops(r);
    close();
    return;
  }
  const std::string fast = copy_fast_condition(n, so, doff);
  open("if (" + fast + ")");
  emit_copy_rows(n, si, di);
  open_else();
  line(std::string("/* ragged edge: ") + (src_g ? "out-of-bounds reads give the pad value" : "") +
       (src_g && dst_g ? ", " : "") + (dst_g ? "out-of-bounds writes are dropped" : "") + " */");
  // No `omp simd` here: it would let the compiler if-convert the guarded loads into
  // unconditional ones, which fault past the end of a tensor.
  open_loops(vars, src.extents, false);
  body(true);
  close_loops(r);
  close();
  close();
}

// Fast-path condition: leading (point) dims inside, tile dims' spans inside.
std::string CEmitter::copy_fast_condition(const Copy* n, const std::vector<Expr>& so,
                                          const std::vector<Expr>& doff) {
  const Region &src = n->src, &dst = n->dst;
  const size_t r = src.tile_rank();
  std::string fast;
  auto span_check = [&](const Region& reg, const std::vector<Expr>& offs) {
    const size_t lead = reg.buffer->rank() - r;
    for (size_t d = 0; d < reg.buffer->rank(); ++d) {
      std::string c = d < lead ? need("tg_inb") + "(" + expr(offs[d]) + ", " + expr(reg.buffer->shape[d]) + ")"
                               : need("tg_span_inb") + "(" + expr(offs[d]) + ", " +
                                     expr(src.extents[d - lead]) + ", " + expr(reg.buffer->shape[d]) + ")";
      fast += (fast.empty() ? "" : " && ") + c;
    }
  };
  if (src.buffer->scope == MemScope::Global)
    span_check(src, so);
  if (dst.buffer->scope == MemScope::Global)
    span_check(dst, doff);
  return fast;
}

// The row that a streaming store of tile row (tg_i0, ...) of `store` prefetches: the same row
// of the next block (grid index + 1) of the first read-only input copied into a tile of the
// same shape and element type (prefetch_srcs_), whose offsets name nothing but the grid index,
// kernel parameters and the loop variables of the store's own offsets (all in scope here).
// "NULL" when there is none or that row lies outside the input (the last block).
std::string CEmitter::next_block_row(const Copy* store, const std::vector<std::string>& vars) {
  const Region& out = store->dst;
  std::set<const Var*> in_scope;
  for (const auto& o : out.offsets)
    for (const Var* v : vars_of(o))
      in_scope.insert(v);
  const Var* bx = k_.grid[0].index.get();
  for (const Copy* c : prefetch_srcs_) {
    const Region& in = c->src;
    if (in.buffer->dtype != out.buffer->dtype || in.tile_rank() != store->src.tile_rank())
      continue;
    bool same = true;
    for (size_t d = 0; d < in.tile_rank(); ++d) {
      const auto a = as_const_int(in.extents[d]), b = as_const_int(store->src.extents[d]);
      same = same && a && b && *a == *b;
    }
    for (const auto& o : in.offsets)
      for (const Var* v : vars_of(o))
        same = same && (v == bx || in_scope.count(v) || v->kind == VarKind::Dim ||
                        v->kind == VarKind::ValueParam || v->kind == VarKind::TileConst);
    if (!same)
      continue;
    const VarMap next{{bx, add(VarRef::make(k_.grid[0].index), make_i64(1))}};
    std::vector<Expr> idx;
    const size_t lead = in.buffer->rank() - in.tile_rank();
    std::string cond;
    for (size_t d = 0; d < in.buffer->rank(); ++d) {
      Expr e = simplify(substitute(in.offsets[d], next));
      if (d >= lead && d + 1 < in.buffer->rank())
        e = add(e, ref(vars[d - lead]));
      idx.push_back(e);
      cond += (cond.empty() ? "" : " && ") + need("tg_inb") + "(" + expr(e) + ", " +
              expr(in.buffer->shape[d]) + ")";
    }
    return cond + " ? (const void*)&" + name(in.buffer->name) + "[" +
           global_index(in.buffer, idx) + "] : NULL";
  }
  return "NULL";
}

// The fast path of a copy between a global tensor and a tile, one row (the innermost tile
// dim) at a time: the row's address is computed once per row (a pointer `tg_row`), so the
// inner loop indexes with its own counter only (no 64-bit index arithmetic per element). A
// write of a whole row of an output that the kernel never reads goes through
// tg_stream_row_<type>: streaming stores when the tensor is larger than the caches
// (tg_stream_ok), converted in registers (docs/c-backend.md, "Memory-bound kernels").
void CEmitter::emit_copy_rows(const Copy* n, const std::vector<Expr>& si,
                              const std::vector<Expr>& di) {
  const Region &src = n->src, &dst = n->dst;
  const size_t r = src.tile_rank();
  const bool src_g = src.buffer->scope == MemScope::Global;
  const Region& g = src_g ? src : dst;
  const auto& gi = src_g ? si : di;
  const auto& oi = src_g ? di : si;
  const BufferPtr& ob = src_g ? dst.buffer : src.buffer;

  std::vector<std::string> vars;
  for (size_t i = 0; i < r; ++i)
    vars.push_back(idx_name("tg_i", i));
  const std::string inner = vars.back();
  // The row's first element: the innermost tile index at 0.
  auto at_row_start = [&](const std::vector<Expr>& idx, const BufferPtr& b) {
    std::vector<Expr> z = idx;
    z[b->rank() - 1] = simplify(substitute(z[b->rank() - 1], VarMap{{gen_vars_.at(inner).get(),
                                                                         make_i64(0)}}));
    return z;
  };
  const DType gt = g.buffer->dtype;
  const bool stream = !src_g && write_only_.count(g.buffer.get()) && ob->dtype == DType::f32() &&
                      (gt == DType::f32() || gt == DType::f16() || gt == DType::bf16());
  if (stream) {
    Expr elems = g.buffer->shape[0];
    for (size_t d = 1; d < g.buffer->rank(); ++d)
      elems = Binary::make(BinaryOp::Mul, elems, g.buffer->shape[d]);
    elems = simplify(Binary::make(BinaryOp::Mul, elems, make_i64(gt.bytes())));
    line("const int tg_nt = " + need("tg_stream_ok") + "(" + expr(elems, kAssign) + ");");
    streamed_ = true;
  }
  std::vector<std::string> outer(vars.begin(), vars.end() - 1);
  std::vector<Expr> outer_ext(src.extents.begin(), src.extents.end() - 1);
  open_loops(outer, outer_ext, false);
  const std::string cq = src_g ? "const " : "";
  const std::string st = storage_type_name(gt);
  line(cq + st + "* tg_row = &" + name(g.buffer->name) + "[" +
       global_index(g.buffer, at_row_start(gi, g.buffer)) + "];");
  const Expr extent = src.extents.back();
  auto row = make_buffer("tg_row", MemScope::Global, gt, {extent});
  const std::vector<Expr> ri{ref(inner)};
  if (stream) {
    line(need("tg_stream_row_" + std::string(gt.name())) + "(tg_row, &" +
         access(ob, at_row_start(oi, ob)) + ", " + expr(extent, kAssign) + ", tg_nt, " +
         next_block_row(n, vars) + ");");
  } else if (src_g && gt == DType::f16() && ob->dtype == DType::f32()) {
    // f16 rows convert with F16C (gcc leaves the scalar helper at ~10 vector ops per vector)
    line(need("tg_load_row_f16") + "(&" + access(ob, at_row_start(oi, ob)) + ", tg_row, " +
         expr(extent, kAssign) + ");");
  } else {
    const bool saved = guard_loads_;
    guard_loads_ = false;
    line("#pragma omp simd");
    open("for (int64_t " + inner + " = 0; " + inner + " < " + expr(extent, kRel + 1) + "; ++" +
         inner + ")");
    if (src_g)
      line(access(ob, oi) + " = " + store_value(ob, Load::make(row, ri)) + ";");
    else
      line(access(row, ri) + " = " + store_value(row, Load::make(ob, oi)) + ";");
    close();
    guard_loads_ = saved;
  }
  close_loops(outer.size());
}

void CEmitter::emit_gemm(const Gemm* n) {
  auto dim = [](const BufferPtr& b, int i) {
    auto c = b->shape[i]->as<IntImm>();
    TG_ASSERT(c, "C emitter: gemm operand '" + b->name + "' has a symbolic shape");
    return c->value;
  };
  CGemmShape g{dim(n->c, 0), dim(n->c, 1), dim(n->a, n->transpose_a ? 0 : 1), n->transpose_a,
               n->transpose_b, n->clear, n->a->dtype, n->b->dtype, n->c->dtype};
  const std::string fn = c_gemm_helper_name(g);
  if (!gemm_helpers_.count(fn))
    gemm_helpers_[fn] = c_gemm_helper_source(g, target_);
  need("tg_fma_" + std::string(g.c.name()));
  auto first = [&](const BufferPtr& b) { return "&" + name(b->name) + "[0][0]"; };
  const std::string args = first(n->c) + ", " + first(n->a) + ", " + first(n->b);
  if (!n->transpose_b) {
    line(fn + "(" + args + ");");
    return;
  }
  // The helper packs b (N x K) into K x N space that the caller provides.
  const std::string tb = type_name(n->b->dtype);
  if (scratch_on_heap_) {
    line(fn + "(" + args + ", (" + tb + "*)(void*)(tg_scratch + " +
         std::to_string(pack_offset_.at(n)) + "));");
    return;
  }
  open("");
  line("_Alignas(64) " + tb + " tg_pack[" + std::to_string(g.k) + " * " + std::to_string(g.n) +
       "];");
  line(fn + "(" + args + ", tg_pack);");
  close();
}

namespace {
std::string reduce_identity(ReduceOp op, DType t, const std::function<std::string(double)>& f) {
  switch (op) {
  case ReduceOp::Sum: return t.is_float() ? f(0.0) : "0";
  case ReduceOp::Max:
    return t.is_float() ? f(-INFINITY)
                        : (t == DType::i64() ? "INT64_MIN" : t == DType::i32() ? "INT32_MIN" : "INT8_MIN");
  case ReduceOp::Min:
    return t.is_float() ? f(INFINITY)
                        : (t == DType::i64() ? "INT64_MAX" : t == DType::i32() ? "INT32_MAX" : "INT8_MAX");
  }
  return "0";
}

// A reduction (f32, f64) over a last dim of at least kStripMin constant elements (a multiple
// of kStrips * 16) accumulates in kStrips strips of the row, one accumulator each: one
// accumulator is one chain of dependent vector adds or maxes (3-4 cycles each on current x86),
// which bounded rmsnorm and layernorm from the cache, and softmax's row max took 13% of its
// time in L1 (docs/c-backend.md, "Memory-bound kernels"). The strips are combined in a fixed
// order at the end; a sum differs from one accumulator's only by rounding order, like any
// vectorized `omp simd` reduction, and a max or min is the same value (of two zeros of either
// sign, either may come out, as from the vector lanes of one accumulator).
constexpr int64_t kStrips = 4, kStripMin = 256;
int64_t strip_len(DType t, const Expr& extent) {
  const auto e = as_const_int(extent);
  if ((t != DType::f32() && t != DType::f64()) || !e || *e < kStripMin || *e % (kStrips * 16) != 0)
    return 0;
  return *e / kStrips;
}

// `acc` combined with `x` by reduce `op`, as C. A max or min keeps the accumulator when x is
// NaN (the comparison is false), so NaNs are skipped in any order.
std::string reduce_combine(ReduceOp op, const std::string& acc, const std::string& x) {
  switch (op) {
  case ReduceOp::Sum: return acc + " + " + x;
  case ReduceOp::Max: return x + " > " + acc + " ? " + x + " : " + acc;
  case ReduceOp::Min: return x + " < " + acc + " ? " + x + " : " + acc;
  }
  return acc;
}

// Whether e holds a select whose condition reads v (layernorm's `k * BN + j < N ? d * d : 0`).
bool selects_on(const Expr& e, const Var* v) {
  class Finder : public IRVisitor {
  public:
    const Var* v = nullptr;
    bool in_cond = false, found = false;

  protected:
    void visit_Select(const Select* n) override {
      const bool saved = in_cond;
      in_cond = true;
      visit(n->cond);
      in_cond = saved;
      visit(n->t);
      visit(n->f);
    }
    void visit_VarRef(const VarRef* n) override { found |= in_cond && n->var.get() == v; }
  } f;
  f.v = v;
  f.visit(e);
  return f.found;
}
} // namespace

// The simd loop of reduce `op` over `var` in [0, extent) into tg_acc, in strips when `strip`
// (strip_len) says so; the strips' accumulators start at `identity`. `value(j)` prints the
// statements that compute tg_x at index j.
void CEmitter::emit_reduce_loop(ReduceOp op, const std::string& identity, const std::string& var,
                                const Expr& extent, const std::string& ty, int64_t strip,
                                const std::function<void()>& value) {
  if (op == ReduceOp::Sum && strip > 0 && strip % 16 == 0 && target_.c_put16 &&
      target_.c_f16_rows && f16_views_live()) {
    emit_sum_pieces(var, ty, strip, value);
    return;
  }
  const std::string clause = op == ReduceOp::Sum ? "+" : op == ReduceOp::Max ? "max" : "min";
  const bool rows = begin_f16_rows({var, "tg_q"}); // f16 views' rows converted first
  if (strip == 0) {
    line("#pragma omp simd reduction(" + clause + ":tg_acc)");
    open("for (int64_t " + var + " = 0; " + var + " < " + expr(extent, kRel + 1) + "; ++" + var + ")");
    value();
    line("tg_acc = " + reduce_combine(op, "tg_acc", "tg_x") + ";");
    close();
    if (rows)
      end_f16_rows();
    return;
  }
  std::string accs = "tg_acc", decl;
  for (int64_t q = 1; q < kStrips; ++q) {
    accs += ", tg_acc" + std::to_string(q);
    decl += std::string(q > 1 ? ", " : "") + "tg_acc" + std::to_string(q) + " = " +
            (op == ReduceOp::Sum ? "0" : identity);
  }
  line(ty + " " + decl + "; /* " + std::to_string(kStrips) + " strips, one accumulator each: independent " +
       (op == ReduceOp::Sum ? "add" : clause) + " chains */");
  line("#pragma omp simd reduction(" + clause + ":" + accs + ")");
  const std::string s = std::to_string(strip);
  open("for (int64_t tg_q = 0; tg_q < " + s + "; ++tg_q)");
  for (int64_t q = 0; q < kStrips; ++q) {
    const std::string acc = q == 0 ? "tg_acc" : "tg_acc" + std::to_string(q);
    open("");
    line("const int64_t " + var + " = tg_q" + (q == 0 ? "" : " + " + std::to_string(q * strip)) + ";");
    value();
    line(acc + " = " + reduce_combine(op, acc, "tg_x") + ";");
    close();
  }
  close();
  if (rows)
    end_f16_rows();
  static_assert(kStrips == 4, "the strips are combined pairwise below");
  if (op == ReduceOp::Sum) {
    line("tg_acc = (tg_acc + tg_acc1) + (tg_acc2 + tg_acc3);");
  } else {
    line("tg_acc = " + reduce_combine(op, "tg_acc", "tg_acc1") + ";");
    line("tg_acc2 = " + reduce_combine(op, "tg_acc2", "tg_acc3") + ";");
    line("tg_acc = " + reduce_combine(op, "tg_acc", "tg_acc2") + ";");
  }
}

// emit_reduce_loop's strips of a sum where f16 views are read (Target::c_put16): the strips advance
// together in pieces of 16 columns, each piece's loop reading its f16 views through a buffer of
// 16 (tg_load_row_f16 inlined with the loop, so gcc keeps both in registers) instead of a whole
// row converted into L1 first, and adding into 16 lane sums per strip (tg_p<q>), which are
// added in lane order at the end, then the strips as emit_reduce_loop adds them.
void CEmitter::emit_sum_pieces(const std::string& var, const std::string& ty, int64_t strip,
                               const std::function<void()>& value) {
  std::string decl;
  for (int64_t q = 0; q < kStrips; ++q)
    decl += std::string(q ? ", " : "") + "tg_p" + std::to_string(q) + "[16] = {0}";
  line("_Alignas(64) " + ty + " " + decl + "; /* " + std::to_string(kStrips) +
       " strips in pieces of 16: lane sums */");
  const std::string s = std::to_string(strip);
  open("for (int64_t tg_q0 = 0; tg_q0 < " + s + "; tg_q0 += 16)");
  for (int64_t q = 0; q < kStrips; ++q) {
    const std::string o = "tg_o" + std::to_string(q), p = "tg_p" + std::to_string(q);
    open("");
    line("const int64_t " + o + " = tg_q0" + (q == 0 ? "" : " + " + std::to_string(q * strip)) + ";");
    const bool rows = begin_f16_rows({var, "tg_k"}, o, var, "tg_k", 16);
    line("#pragma omp simd");
    open("for (int64_t tg_k = 0; tg_k < 16; ++tg_k)");
    line("const int64_t " + var + " = " + o + " + tg_k;");
    value();
    line(p + "[tg_k] = " + p + "[tg_k] + tg_x;");
    line("(void)" + var + "; /* when every load of the piece reads a buffer */");
    close();
    if (rows)
      end_f16_rows();
    close();
  }
  close();
  std::string accs;
  for (int64_t q = 1; q < kStrips; ++q)
    accs += std::string(q > 1 ? ", " : "") + "tg_acc" + std::to_string(q) + " = 0";
  line(ty + " " + accs + ";");
  open("for (int tg_k = 0; tg_k < 16; ++tg_k)");
  line("tg_acc = tg_acc + tg_p0[tg_k];");
  for (int64_t q = 1; q < kStrips; ++q)
    line("tg_acc" + std::to_string(q) + " = tg_acc" + std::to_string(q) + " + tg_p" + std::to_string(q) + "[tg_k];");
  close();
  line("tg_acc = (tg_acc + tg_acc1) + (tg_acc2 + tg_acc3);");
}

// A parallel t[i.., j] = v fused with the reduce of t over j that follows it (CEmitter::
// find_fused_reductions): for each point of the kept dims, one simd reduction loop over j
// that accumulates v directly (the same values in the same order as through t).
void CEmitter::emit_fused_reduce(const Parallel* p, const Reduce* r) {
  const Store* st = p->body->as<Store>();
  if (!st)
    st = p->body->as<Seq>()->stmts[0]->as<Store>();
  const DType t = r->dst->dtype;
  int prec = 0;
  const std::string identity =
      reduce_identity(r->op, t, [&](double v) { return print_float(v, t, prec); });
  std::vector<std::string> vars;
  std::vector<Expr> didx;
  for (const auto& v : p->vars)
    vars.push_back(name(v->name));
  for (size_t d = 0; d + 1 < p->vars.size(); ++d)
    didx.push_back(VarRef::make(p->vars[d]));
  open("");
  std::vector<std::string> outer(vars.begin(), vars.end() - 1);
  std::vector<Expr> outer_ext(p->extents.begin(), p->extents.end() - 1);
  open_loops(outer, outer_ext, false);
  const std::string dref = access(r->dst, didx);
  line(type_name(t) + " tg_acc = " + (r->clear ? identity : dref) + ";");
  const std::string j = vars.back();
  const auto saved_point = point_vars_;
  point_vars_.clear();
  for (const auto& v : p->vars)
    point_vars_.push_back(v.get());
  auto value = [&] {
    read_views_ahead(st->value);
    line("const " + type_name(t) + " tg_x = " + store_value(st->buffer, st->value) + ";");
    bound_loads_.clear();
  };
  // One accumulator, not strips, when the value selects on j: gcc 12.2 at -O2/-O3 (early VRP
  // with if-conversion; -fdisable-tree-evrp or -fno-tree-loop-if-convert avoid it) summed
  // almost nothing of the second strip of `k * BN + j < N ? (x - mu) * (x - mu) : 0` in
  // layernorm's c_avx2 f16 variant for N in [1500, 4095]. UBSan, ASan and clang's MSan find
  // nothing in that code and clang computes it right; one accumulator computes it right with
  // gcc too (docs/c-backend.md, "Fused reductions"). A max or min is kept to one accumulator
  // there too.
  const int64_t strip =
      selects_on(st->value, p->vars.back().get()) ? 0 : strip_len(t, p->extents.back());
  emit_reduce_loop(r->op, identity, j, p->extents.back(), type_name(t), strip, value);
  line(dref + " = tg_acc;");
  close_loops(outer.size());
  close();
  point_vars_ = saved_point;
}

// reduce: the reduced dim innermost with an OpenMP simd reduction when it is the last dim;
// otherwise the kept inner dims are innermost (vectorized) and the reduced dim outside them.
void CEmitter::emit_reduce(const Reduce* n) {
  const auto &src = n->src, &dst = n->dst;
  const DType t = dst->dtype;
  const size_t rank = src->rank(), d = static_cast<size_t>(n->dim);
  int p = 0;
  const std::string identity = reduce_identity(n->op, t, [&](double v) { return print_float(v, t, p); });
  auto combine = [&](const std::string& acc, const std::string& x) { return reduce_combine(n->op, acc, x); };
  std::vector<std::string> svars;
  std::vector<Expr> sidx, didx;
  for (size_t i = 0; i < rank; ++i) {
    svars.push_back(idx_name("tg_i", i));
    sidx.push_back(ref(svars.back()));
    if (i != d)
      didx.push_back(sidx.back());
  }
  const std::string src_t = type_name(src->dtype) == type_name(t) ? "" : "(" + type_name(t) + ")";

  open("");
  if (d + 1 == rank) {
    std::vector<std::string> outer(svars.begin(), svars.end() - 1);
    std::vector<Expr> outer_ext(src->shape.begin(), src->shape.end() - 1);
    open_loops(outer, outer_ext, false);
    const std::string dref = access(dst, didx);
    line(type_name(t) + " tg_acc = " + (n->clear ? identity : dref) + ";");
    auto value = [&] { line("const " + type_name(t) + " tg_x = " + src_t + load_value(src, sidx) + ";"); };
    if (n->op == ReduceOp::Sum) {
      emit_reduce_loop(n->op, identity, svars[d], src->shape[d], type_name(t), strip_len(t, src->shape[d]), value);
    } else {
      // An f16 view's max/min in chunks of 256 converted by vcvtph2ps (CF16Rows.cpp): the
      // order of a max does not change its value.
      const auto ext = as_const_int(src->shape[d]);
      const auto view = active_views_.find(src.get());
      if (target_.c_f16_rows && view != active_views_.end() && view->second.storage == DType::f16() &&
          ext && *ext > 256 && *ext % 256 == 0 && !f16_rows_.active) {
        open("for (int64_t tg_c = 0; tg_c < " + std::to_string(*ext) + "; tg_c += 256)");
        begin_f16_rows({svars[d], "tg_k"}, "tg_c", svars[d], "tg_k", 256);
        line(std::string("#pragma omp simd reduction(") + (n->op == ReduceOp::Max ? "max" : "min") + ":tg_acc)");
        open("for (int64_t tg_k = 0; tg_k < 256; ++tg_k)");
        line("const int64_t " + svars[d] + " = tg_c + tg_k; (void)" + svars[d] + ";");
        value();
        line("tg_acc = " + combine("tg_acc", "tg_x") + ";");
        close();
        end_f16_rows();
        close();
        line(dref + " = tg_acc;");
        close_loops(outer.size());
        close();
        return;
      }
      emit_reduce_loop(n->op, identity, svars[d], src->shape[d], type_name(t), strip_len(t, src->shape[d]), value);
    }
    line(dref + " = tg_acc;");
    close_loops(outer.size());
  } else {
    if (n->clear) {
      std::vector<std::string> dv;
      std::vector<Expr> di;
      for (size_t i = 0; i < dst->rank(); ++i) {
        dv.push_back(idx_name("tg_j", i));
        di.push_back(ref(dv.back()));
      }
      open_loops(dv, dst->shape, true);
      line(access(dst, di) + " = " + identity + ";");
      close_loops(dv.size());
    }
    // Loop order: dims before d, d, dims after d (innermost, vectorized).
    open_loops(svars, src->shape, true);
    const std::string dref = access(dst, didx);
    line("const " + type_name(t) + " tg_x = " + src_t + load_value(src, sidx) + ";");
    line(dref + " = " + combine(dref, "tg_x") + ";");
    close_loops(rank);
  }
  close();
}

bool c_touches_global(const Stmt& body) {
  class Finder : public IRVisitor {
  public:
    bool found = false;

  protected:
    void visit_buffer_use(const BufferPtr& b) override { found |= b->scope == MemScope::Global; }
  } f;
  f.visit(body);
  return f.found;
}

void CEmitter::emit_parallel(const Parallel* n) {
  std::vector<std::string> vars;
  for (const auto& v : n->vars)
    vars.push_back(name(v->name));
  if (emit_exp_rows(n, vars))
    return;
  // Points are independent (docs/ir.md, Parallel): the innermost loop is a simd loop, unless
  // it touches global memory, whose bounds checks must stay real branches (see emit_copy).
  const bool simd = !c_touches_global(n->body);
  open_loops(std::vector<std::string>(vars.begin(), vars.end() - 1),
             std::vector<Expr>(n->extents.begin(), n->extents.end() - 1), false);
  const bool rows = simd && begin_f16_rows({vars.back()}); // f16 views' rows converted first
  open_loops({vars.back()}, {n->extents.back()}, simd);
  const bool saved = guard_loads_;
  guard_loads_ = true;
  const auto saved_point = point_vars_;
  point_vars_.clear();
  for (const auto& v : n->vars)
    point_vars_.push_back(v.get());
  stmt(n->body);
  point_vars_ = saved_point;
  guard_loads_ = saved;
  close();
  if (rows)
    end_f16_rows();
  close_loops(vars.size() - 1);
}

void CEmitter::emit_store(const Store* n) {
  const auto& b = n->buffer;
  std::string lhs = access(b, n->indices);
  std::string st;
  if (n->op == StoreOp::Add && b->scope == MemScope::Global && b->dtype.is_narrow_float()) {
    // 16-bit tensor: load, add in f32, round once.
    Expr sum = Binary::make(BinaryOp::Add, Cast::make(DType::f32(), Load::make(b, n->indices)),
                            n->value->type == DType::f32() ? n->value : Cast::make(DType::f32(), n->value));
    const bool saved = guard_loads_;
    guard_loads_ = false; // the store below is guarded as a whole
    st = lhs + " = " + store_value(b, sum) + ";";
    guard_loads_ = saved;
  } else {
    read_views_ahead(n->value);
    st = lhs + (n->op == StoreOp::Add ? " += " : " = ") + store_value(b, n->value) + ";";
    bound_loads_.clear();
  }
  if (b->scope == MemScope::Global) {
    line("if (" + in_bounds(b, n->indices) + ")");
    line("  " + st);
  } else {
    line(st);
  }
}

void CEmitter::emit_for(const For* n) {
  if (n->pipelined())
    line("/* pipelined: serial on C (no asynchronous copies; the cache hierarchy prefetches) */");
  const std::string v = name(n->var->name);
  Expr end = simplify(Binary::make(BinaryOp::Add, n->start, n->extent));
  open("for (int64_t " + v + " = " + expr(n->start, kAssign) + "; " + v + " < " +
       expr(end, kRel + 1) + "; ++" + v + ")");
  const auto views = active_views_; // views made in the body end with it
  stmt(n->body);
  active_views_ = views;
  close();
}

void CEmitter::emit_if(const IfThenElse* n) {
  open("if (" + expr(n->cond) + ")");
  const auto views = active_views_; // views made in a branch end with it
  stmt(n->then_case);
  active_views_ = views;
  if (n->else_case) {
    open_else();
    stmt(n->else_case);
    active_views_ = views;
  }
  close();
}

// atomic_add: like a copy into global memory, one `omp atomic` update per element; elements
// outside the tensor are skipped.
void CEmitter::emit_atomic_add(const AtomicAdd* n) {
  const Region &src = n->src, &dst = n->dst;
  const size_t r = src.tile_rank();
  std::vector<std::string> vars;
  std::vector<Expr> point;
  for (size_t i = 0; i < r; ++i) {
    vars.push_back(idx_name("tg_i", i));
    point.push_back(ref(vars.back()));
  }
  auto index = [&](const Region& reg) {
    std::vector<Expr> idx = reg.offsets;
    const size_t lead = reg.buffer->rank() - r;
    for (size_t i = 0; i < r; ++i)
      idx[lead + i] = add(reg.offsets[lead + i], point[i]);
    return idx;
  };
  const auto si = index(src), di = index(dst);
  open_loops(vars, src.extents, false);
  const bool saved = guard_loads_;
  guard_loads_ = true;
  Expr v = Load::make(src.buffer, si);
  if (v->type != dst.buffer->dtype)
    v = Cast::make(dst.buffer->dtype, v);
  open("if (" + in_bounds(dst.buffer, di) + ")");
  line("#pragma omp atomic");
  line(access(dst.buffer, di) + " += " + expr(simplify(v), kAssign) + ";");
  close();
  guard_loads_ = saved;
  close_loops(r);
}

} // namespace tilegen::emit
