// The Metal backend's op lowerings (MslEmitter.h gives the execution model).
#include "emit/MslEmitter.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "support/InternalError.h"
#include "support/TextEscape.h"

#include <algorithm>

namespace tilegen::emit {

using namespace ir;

namespace {

int64_t cint(const Expr& e) {
  auto* c = e->as<IntImm>();
  TG_ASSERT(c, "MSL emitter: an on-chip extent is not a constant");
  return c->value;
}

int64_t elems(const std::vector<Expr>& extents) {
  int64_t n = 1;
  for (const auto& e : extents)
    n *= cint(e);
  return n;
}

// The on-chip buffers a statement reads and writes, at any depth.
class TouchScan : public IRVisitor {
public:
  std::set<const Buffer*> reads, writes;
  bool reduces = false; // a reduction or a gemm that may use the scratch

protected:
  void note(const BufferPtr& b, bool write) {
    if (b->scope == MemScope::Shared)
      (write ? writes : reads).insert(b.get());
  }
  void visit_Load(const Load* n) override {
    note(n->buffer, false);
    IRVisitor::visit_Load(n);
  }
  void visit_Store(const Store* n) override {
    note(n->buffer, true);
    if (n->op == StoreOp::Add)
      note(n->buffer, false);
    IRVisitor::visit_Store(n);
  }
  void visit_Fill(const Fill* n) override {
    note(n->dst, true);
    IRVisitor::visit_Fill(n);
  }
  void visit_Copy(const Copy* n) override {
    note(n->src.buffer, false);
    note(n->dst.buffer, true);
    IRVisitor::visit_Copy(n);
  }
  void visit_Gemm(const Gemm* n) override {
    note(n->a, false);
    note(n->b, false);
    reduces = true;
    IRVisitor::visit_Gemm(n);
  }
  void visit_Reduce(const Reduce* n) override {
    reduces = true;
    IRVisitor::visit_Reduce(n);
  }
};

std::string reduce_combine(ReduceOp op, const std::string& a, const std::string& b) {
  switch (op) {
  case ReduceOp::Sum: return a + " + " + b;
  case ReduceOp::Max: return "max(" + a + ", " + b + ")";
  case ReduceOp::Min: return "min(" + a + ", " + b + ")";
  }
  return "";
}

const char* reduce_identity(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum: return "0.0f";
  case ReduceOp::Max: return "-INFINITY";
  case ReduceOp::Min: return "INFINITY";
  }
  return "";
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Barriers

MslEmitter::Touch MslEmitter::touches(const Stmt& s) const {
  TouchScan scan;
  scan.visit(s);
  Touch t;
  for (const Buffer* b : scan.reads)
    t.reads.insert(b);
  for (const Buffer* b : scan.writes)
    t.writes.insert(b);
  // A reduction across SIMD-groups (or an FMA gemm of an A fragment) writes and reads the
  // scratch: a loop around one needs its barriers like one around a shared-buffer op.
  if (scan.reduces && scratch_bytes_ > 0) {
    t.reads.insert(scratch_key());
    t.writes.insert(scratch_key());
  }
  return t;
}

void MslEmitter::before(const Touch& t) {
  bool conflict = false;
  for (const void* b : t.reads)
    conflict = conflict || pend_writes_.count(b);
  for (const void* b : t.writes)
    conflict = conflict || pend_writes_.count(b) || pend_reads_.count(b);
  if (conflict)
    barrier();
  pend_reads_.insert(t.reads.begin(), t.reads.end());
  pend_writes_.insert(t.writes.begin(), t.writes.end());
}

void MslEmitter::flush() {
  if (!pend_reads_.empty() || !pend_writes_.empty())
    barrier();
}

void MslEmitter::barrier() {
  line("threadgroup_barrier(mem_flags::mem_threadgroup);");
  pend_reads_.clear();
  pend_writes_.clear();
}

// ---------------------------------------------------------------------------------------------
// Statements

void MslEmitter::op_comment(const Stmt& s) {
  std::string text = ir::to_string(s);
  auto nl = text.find('\n');
  if (nl != std::string::npos)
    text = text.substr(0, nl);
  line("// spec: " + c_line_comment(info_.spec_path + ":" + std::to_string(s->loc.line) + " " + text));
}

void MslEmitter::stmt(const Stmt& s) {
  if (!s)
    return;
  switch (s->kind) {
  case StmtKind::Seq:
    for (const auto& c : s->as<Seq>()->stmts)
      stmt(c);
    return;
  case StmtKind::Alloc: emit_alloc(s->as<Alloc>()); return;
  case StmtKind::Fill: op_comment(s); emit_fill(s, s->as<Fill>()); return;
  case StmtKind::Copy: op_comment(s); emit_copy(s, s->as<Copy>()); return;
  case StmtKind::Gemm: op_comment(s); emit_gemm(s, s->as<Gemm>()); return;
  case StmtKind::Reduce: op_comment(s); emit_reduce(s->as<Reduce>()); return;
  case StmtKind::Parallel: op_comment(s); emit_parallel(s, s->as<Parallel>()); return;
  case StmtKind::For: op_comment(s); emit_for(s->as<For>()); return;
  case StmtKind::IfThenElse: op_comment(s); emit_if(s, s->as<IfThenElse>()); return;
  case StmtKind::AtomicAdd: op_comment(s); emit_atomic_add(s->as<AtomicAdd>()); return;
  case StmtKind::LetStmt: {
    auto* l = s->as<LetStmt>();
    line("const " + type_name(l->var->type) + " " + name(l->var->name) + " = " + expr(l->value) + ";");
    return;
  }
  case StmtKind::Combine:
    // The join of a split loop: Metal runs every loop whole, so it does nothing (docs/ir.md).
    line("// spec: " + c_line_comment(info_.spec_path + ":" + std::to_string(s->loc.line)) +
         " combine: nothing to do (loops are not split on Metal)");
    return;
  case StmtKind::Store: emit_store(s->as<Store>()); return;
  }
  internal_error("MSL emitter: unknown statement kind");
}

void MslEmitter::emit_alloc(const Alloc* a) {
  const Buffer& b = *a->buffer;
  if (b.scope == MemScope::Shared)
    return; // carved from tg_smem at the top of the kernel
  int64_t n = 1;
  if (b.scope == MemScope::Fragment) {
    n = frag(&b).num_regs();
    line("// " + b.name + ": " + c_line_comment(frag(&b).origin) + ", " + std::to_string(n) +
         " register(s) per thread");
  } else {
    for (const auto& e : b.shape)
      n *= cint(e);
  }
  line(type_name(b.dtype) + " " + name(b.name) + "[" + std::to_string(std::max<int64_t>(n, 1)) + "];");
}

void MslEmitter::emit_fill(const Stmt& s, const Fill* f) {
  const Buffer& b = *f->dst;
  const std::string v = round_to(expr(Cast::make(b.dtype, f->value)), b.dtype);
  if (b.scope == MemScope::Shared) {
    before(touches(s));
    const std::string e = fresh("tg_e");
    open("for (int " + e + " = int(tg_tid); " + e + " < " + std::to_string(elems(b.shape)) + "; " +
         e + " += " + std::to_string(threads_) + ")");
    line(name(b.name) + "[" + e + "] = " + to_storage(v, b.dtype) + ";");
    close();
    return;
  }
  const int64_t n = b.scope == MemScope::Fragment ? frag(&b).num_regs() : elems(b.shape);
  const std::string r = fresh("tg_i");
  open("for (int " + r + " = 0; " + r + " < " + std::to_string(n) + "; ++" + r + ")");
  line(name(b.name) + "[" + r + "] = " + v + ";");
  close();
}

// ---- copies --------------------------------------------------------------------------------

void MslEmitter::emit_copy(const Stmt& st, const Copy* c) {
  before(touches(st));
  const MemScope s = c->src.buffer->scope, d = c->dst.buffer->scope;
  if (s == MemScope::Fragment || d == MemScope::Fragment)
    copy_fragment(c);
  else
    copy_strided(c);
}

// Tile element e of every thread in turn: e -> tile coordinates (row-major), then the two
// regions' indices; reads outside a tensor give the pad value, writes outside it are dropped.
void MslEmitter::copy_strided(const Copy* c) {
  const auto& ext = c->src.extents;
  const int64_t n = elems(ext);
  const std::string e = fresh("tg_e");
  open("for (int " + e + " = int(tg_tid); " + e + " < " + std::to_string(n) + "; " + e + " += " +
       std::to_string(threads_) + ")");
  std::vector<std::string> tile;
  int64_t inner = 1;
  for (size_t i = ext.size(); i-- > 0;) {
    std::string t = inner == 1 ? e : e + " / " + std::to_string(inner);
    if (i > 0)
      t = "(" + t + ") % " + std::to_string(cint(ext[i]));
    tile.insert(tile.begin(), t);
    inner *= cint(ext[i]);
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < tile.size(); ++i) {
    names.push_back(fresh("tg_c"));
    line("const int " + names.back() + " = " + tile[i] + ";");
  }
  const Buffer& sb = *c->src.buffer;
  const Buffer& db = *c->dst.buffer;
  auto si = region_index(c->src, names), di = region_index(c->dst, names);
  std::string v = to_compute(name(sb.name) + "[" + linear(sb, si) + "]", sb.dtype);
  if (sb.scope == MemScope::Global)
    v = in_bounds(sb, si) + " ? " + v + " : " + expr(Cast::make(sb.dtype, c->pad));
  // Convert through the destination type (an integer destination of a float source truncates).
  std::string conv = db.dtype.is_float() ? (sb.dtype.is_float() ? v : "float(" + v + ")")
                                         : type_name(db.dtype) + "(" + v + ")";
  const std::string store = name(db.name) + "[" + linear(db, di) + "] = " + to_storage(conv, db.dtype) + ";";
  if (db.scope == MemScope::Global)
    line("if (" + in_bounds(db, di) + ") " + store);
  else
    line(store);
  close();
}

// One side is a fragment: every thread visits its own registers (a fragment-to-fragment copy
// has one layout on both sides: layout inference made them equal).
void MslEmitter::copy_fragment(const Copy* c) {
  const bool load = c->dst.buffer->scope == MemScope::Fragment;
  const Buffer& fb = load ? *c->dst.buffer : *c->src.buffer;
  const Buffer& ob = load ? *c->src.buffer : *c->dst.buffer;
  const Region& other = load ? c->src : c->dst;
  const auto& L = frag(&fb);
  std::string leader = load || ob.scope == MemScope::Fragment ? "" : replica_leader(L);
  if (!leader.empty())
    open("if (" + leader + ")");
  RegLoops rl = open_reg_loops(L);
  const std::string reg = name(fb.name) + "[" + reg_index(&fb, rl.counter) + "]";
  if (ob.scope == MemScope::Fragment) {
    const std::string oreg = name(ob.name) + "[" + reg_index(&ob, rl.counter) + "]";
    std::string v = load ? oreg : reg;
    v = c->dst.buffer->dtype.is_float() ? round_to(v, c->dst.buffer->dtype)
                                         : type_name(c->dst.buffer->dtype) + "(" + v + ")";
    line((load ? reg : oreg) + " = " + v + ";");
  } else {
    auto idx = region_index(other, rl.coord);
    const std::string at = name(ob.name) + "[" + linear(ob, idx) + "]";
    if (load) {
      std::string v = to_compute(at, ob.dtype);
      if (ob.scope == MemScope::Global)
        v = "(" + in_bounds(ob, idx) + " ? " + v + " : " + expr(Cast::make(ob.dtype, c->pad)) + ")";
      v = fb.dtype.is_float() ? round_to(ob.dtype.is_float() ? v : "float(" + v + ")", fb.dtype)
                              : type_name(fb.dtype) + "(" + v + ")";
      line(reg + " = " + v + ";");
    } else {
      std::string v = ob.dtype.is_float() ? (fb.dtype.is_float() ? reg : "float(" + reg + ")")
                                          : type_name(ob.dtype) + "(" + reg + ")";
      const std::string store = at + " = " + to_storage(v, ob.dtype) + ";";
      if (ob.scope == MemScope::Global)
        line("if (" + in_bounds(ob, idx) + ") " + store);
      else
        line(store);
    }
  }
  close_loops(rl.opened);
  if (!leader.empty())
    close();
}

// ---- gemm ----------------------------------------------------------------------------------

void MslEmitter::emit_gemm(const Stmt& s, const Gemm* g) {
  before(touches(s));
  const passes::GemmPlan& p = plan_.gemms.at(s.get());
  if (p.kind == passes::GemmPlan::Simdgroup)
    gemm_simdgroup(g, p);
  else
    gemm_simt(g, p);
}

// simdgroup_matrix 8x8: the SIMD-group's (M/WM) x (N/WN) part of c as TI x TJ float matrices.
// Lane l holds elements (r, c), (r, c + 1) of every 8x8 matrix, (r, c) its coordinate in the
// atom (layout::simdgroup_matrix_8x8); c's register (i, e + 2 j) is element e of matrix (i, j).
void MslEmitter::gemm_simdgroup(const Gemm* g, const passes::GemmPlan& p) {
  const auto& L = frag(g->c.get());
  const int64_t M = L.shape[0], N = L.shape[1];
  const int64_t TI = M / p.wm / 8, TJ = N / p.wn / 8;
  const auto atom = layout::simdgroup_matrix_8x8();
  TG_ASSERT(L.thread_modes.size() == 6 && L.regs[0].size() == 1 && L.regs[1].size() == 2,
            "MSL emitter: gemm accumulator '" + g->c->name + "' is not a simdgroup layout");
  const std::string row = thread_coord(L, 0), col = thread_coord(L, 1);
  const std::string arow = thread_coord(atom, 0), acol = thread_coord(atom, 1);
  auto as = g->a->shape;
  const int64_t K = cint(g->transpose_a ? as[0] : as[1]);
  const std::string cn = name(g->c->name);
  open("");
  line("// " + std::to_string(p.wm) + "x" + std::to_string(p.wn) + " SIMD-groups, each " +
       std::to_string(TI) + "x" + std::to_string(TJ) + " simdgroup_float8x8 of " + g->c->name +
       "; K = " + std::to_string(K) + " in steps of 8");
  line("simdgroup_float8x8 tg_acc[" + std::to_string(TI) + "][" + std::to_string(TJ) + "];");
  const std::string i = fresh("tg_i"), j = fresh("tg_j");
  auto reg = [&](const std::string& ii, const std::string& jj, int e) {
    // register (i, e + 2 j) of a [TI] x [2 TJ] register array
    return cn + "[(" + ii + ") * " + std::to_string(2 * TJ) + " + 2 * (" + jj + ") + " + std::to_string(e) + "]";
  };
  open("for (int " + i + " = 0; " + i + " < " + std::to_string(TI) + "; ++" + i + ")");
  open("for (int " + j + " = 0; " + j + " < " + std::to_string(TJ) + "; ++" + j + ")");
  for (int e = 0; e < 2; ++e)
    line("tg_acc[" + i + "][" + j + "].thread_elements()[" + std::to_string(e) + "] = " +
         (g->clear ? std::string("0.0f") : reg(i, j, e)) + ";");
  close();
  close();
  const std::string k = fresh("tg_k");
  open("for (int " + k + " = 0; " + k + " < " + std::to_string(K) + "; " + k + " += 8)");
  line("simdgroup_float8x8 tg_a[" + std::to_string(TI) + "], tg_b[" + std::to_string(TJ) + "];");
  // A: element (m, kk) with m = row + 8 i (the lane's row in c's matrices), kk = k + acol + e.
  open("for (int " + i + " = 0; " + i + " < " + std::to_string(TI) + "; ++" + i + ")");
  for (int e = 0; e < 2; ++e) {
    std::string v;
    if (g->a->scope == MemScope::Fragment) {
      // A in registers with the accumulator layout of [M, K] (layout inference checked it):
      // matrix (i, k / 8) holds this lane's elements of A's rows.
      v = name(g->a->name) + "[(" + i + ") * " + std::to_string(2 * (K / 8)) + " + 2 * (" + k +
          " / 8) + " + std::to_string(e) + "]";
    } else {
      const std::string m = row + " + 8 * " + i, kk = k + " + " + acol + " + " + std::to_string(e);
      const std::string at = g->transpose_a ? "(" + kk + ") * " + std::to_string(M) + " + " + m
                                            : "(" + m + ") * " + std::to_string(K) + " + " + kk;
      v = to_compute(name(g->a->name) + "[" + at + "]", g->a->dtype);
    }
    line("tg_a[" + i + "].thread_elements()[" + std::to_string(e) + "] = " + v + ";");
  }
  close();
  // B: element (kk, n) with kk = k + arow, n = col + 8 j + e.
  open("for (int " + j + " = 0; " + j + " < " + std::to_string(TJ) + "; ++" + j + ")");
  for (int e = 0; e < 2; ++e) {
    const std::string kk = k + " + " + arow, n = col + " + 8 * " + j + " + " + std::to_string(e);
    const std::string at = g->transpose_b ? "(" + n + ") * " + std::to_string(K) + " + " + kk
                                          : "(" + kk + ") * " + std::to_string(N) + " + " + n;
    line("tg_b[" + j + "].thread_elements()[" + std::to_string(e) + "] = " +
         to_compute(name(g->b->name) + "[" + at + "]", g->b->dtype) + ";");
  }
  close();
  open("for (int " + i + " = 0; " + i + " < " + std::to_string(TI) + "; ++" + i + ")");
  open("for (int " + j + " = 0; " + j + " < " + std::to_string(TJ) + "; ++" + j + ")");
  line("simdgroup_multiply_accumulate(tg_acc[" + i + "][" + j + "], tg_a[" + i + "], tg_b[" + j +
       "], tg_acc[" + i + "][" + j + "]);");
  close();
  close();
  close();
  open("for (int " + i + " = 0; " + i + " < " + std::to_string(TI) + "; ++" + i + ")");
  open("for (int " + j + " = 0; " + j + " < " + std::to_string(TJ) + "; ++" + j + ")");
  for (int e = 0; e < 2; ++e)
    line(reg(i, j, e) + " = tg_acc[" + i + "][" + j + "].thread_elements()[" + std::to_string(e) + "];");
  close();
  close();
  close();
}

// FMA tiles: every thread computes its own elements of c over the whole K. An A fragment is
// staged in the scratch first (row-major, f32).
void MslEmitter::gemm_simt(const Gemm* g, const passes::GemmPlan& p) {
  (void)p;
  const auto& L = frag(g->c.get());
  auto as = g->a->shape;
  const int64_t M = L.shape[0], N = L.shape[1];
  const int64_t K = cint(g->transpose_a ? as[0] : as[1]);
  std::string a_ptr = name(g->a->name);
  DType a_type = g->a->dtype;
  if (g->a->scope == MemScope::Fragment) {
    Touch t;
    t.writes.insert(scratch_key());
    before(t);
    open("");
    line("threadgroup float* tg_stage = (threadgroup float*)(tg_smem + " + std::to_string(scratch_offset_) + ");");
    const auto& LA = frag(g->a.get());
    RegLoops rl = open_reg_loops(LA);
    line("tg_stage[(" + rl.coord[0] + ") * " + std::to_string(cint(as[1])) + " + " + rl.coord[1] +
         "] = " + name(g->a->name) + "[" + reg_index(g->a.get(), rl.counter) + "];");
    close_loops(rl.opened);
    close();
    Touch r;
    r.reads.insert(scratch_key());
    before(r);
    a_ptr = "((threadgroup float*)(tg_smem + " + std::to_string(scratch_offset_) + "))";
    a_type = DType::f32();
  }
  RegLoops rl = open_reg_loops(L);
  const std::string acc = name(g->c->name) + "[" + reg_index(g->c.get(), rl.counter) + "]";
  const std::string s = fresh("tg_s"), k = fresh("tg_k");
  line("float " + s + " = " + (g->clear ? std::string("0.0f") : acc) + ";");
  open("for (int " + k + " = 0; " + k + " < " + std::to_string(K) + "; ++" + k + ")");
  const std::string m = rl.coord[0], n = rl.coord[1];
  const std::string ai = g->transpose_a ? k + " * " + std::to_string(M) + " + " + m
                                        : "(" + m + ") * " + std::to_string(K) + " + " + k;
  const std::string bi = g->transpose_b ? "(" + n + ") * " + std::to_string(K) + " + " + k
                                        : k + " * " + std::to_string(N) + " + " + n;
  line(s + " = fma(" + to_compute(a_ptr + "[" + ai + "]", a_type) + ", " +
       to_compute(name(g->b->name) + "[" + bi + "]", g->b->dtype) + ", " + s + ");");
  close();
  line(acc + " = " + s + ";");
  close_loops(rl.opened);
}

// ---- reduce --------------------------------------------------------------------------------

// dst (src without dim d) := (clear ? identity : dst) op reduce(src, d): each thread combines
// its registers along d, then the lanes of its row (butterflies), then the SIMD-groups of its
// row through scratch; every thread that holds a dst element ends with the whole result.
void MslEmitter::emit_reduce(const Reduce* r) {
  const auto& Ls = frag(r->src.get());
  const auto& Ld = frag(r->dst.get());
  const size_t d = static_cast<size_t>(r->dim);
  const ReduceSplit split = reduce_split(Ls, d);
  const std::string src = name(r->src->name), dst = name(r->dst->name);
  open("");
  // Per thread: a partial per dst register.
  const int64_t nd = Ld.num_regs();
  const std::string part = fresh("tg_part");
  line("float " + part + "[" + std::to_string(nd) + "];");
  RegLoops dl = open_reg_loops(Ld);
  std::vector<std::string> src_r;
  const std::string rd = fresh("tg_r");
  for (size_t i = 0, j = 0; i < Ls.rank(); ++i)
    src_r.push_back(i == d ? rd : dl.counter[j++]);
  const std::string pd = part + "[" + reg_index(r->dst.get(), dl.counter) + "]";
  line(pd + " = " + reduce_identity(r->op) + ";");
  open("for (int " + rd + " = 0; " + rd + " < " + std::to_string(Ls.regs_of_dim(d)) + "; ++" + rd + ")");
  line(pd + " = " + reduce_combine(r->op, pd, src + "[" + reg_index(r->src.get(), src_r) + "]") + ";");
  close();
  close_loops(dl.opened);
  // Across lanes.
  if (!split.lane_bits.empty()) {
    const std::string i = fresh("tg_i");
    open("for (int " + i + " = 0; " + i + " < " + std::to_string(nd) + "; ++" + i + ")");
    const std::string p = part + "[" + i + "]";
    if (split.lane_bits.size() == 5) {
      const char* fn = r->op == ReduceOp::Sum ? "simd_sum" : r->op == ReduceOp::Max ? "simd_max" : "simd_min";
      line(p + " = " + fn + "(" + p + ");");
    } else {
      for (int b : split.lane_bits)
        line(p + " = " + reduce_combine(r->op, p, "simd_shuffle_xor(" + p + ", ushort(" +
                                                     std::to_string(1 << b) + "))") + ";");
    }
    close();
  }
  // Across SIMD-groups (and modes that are not whole lane bits): slot g of each dst element.
  if (split.groups > 1) {
    Touch w;
    w.writes.insert(scratch_key());
    before(w);
    line("threadgroup float* tg_red = (threadgroup float*)(tg_smem + " + std::to_string(scratch_offset_) + ");");
    // The group digit of this thread: the scratch modes' digits in mixed radix.
    std::string gexpr;
    {
      int64_t span = 1, radix = 1;
      std::vector<std::string> terms;
      for (size_t k = 0; k < Ls.thread_modes.size(); ++k) {
        const auto& m = Ls.thread_modes[k];
        if (std::find(split.scratch_modes.begin(), split.scratch_modes.end(), k) != split.scratch_modes.end()) {
          std::string digit = "(tg_tid / " + std::to_string(span) + "u) % " + std::to_string(m.size) + "u";
          terms.push_back(radix == 1 ? "int(" + digit + ")" : "int(" + digit + ") * " + std::to_string(radix));
          radix *= m.size;
        }
        span *= m.size;
      }
      for (const auto& t : terms)
        gexpr += (gexpr.empty() ? "" : " + ") + t;
    }
    const std::string gname = fresh("tg_g");
    line("const int " + gname + " = " + gexpr + ";");
    // dst element linear index from the dst coordinates.
    RegLoops wl = open_reg_loops(Ld);
    std::string lin = "0";
    if (!wl.coord.empty()) {
      lin = wl.coord[0];
      for (size_t i = 1; i < wl.coord.size(); ++i)
        lin = "(" + lin + ") * " + std::to_string(Ld.shape[i]) + " + " + wl.coord[i];
    }
    line("tg_red[(" + lin + ") * " + std::to_string(split.groups) + " + " + gname + "] = " + part +
         "[" + reg_index(r->dst.get(), wl.counter) + "];");
    close_loops(wl.opened);
    Touch rd2;
    rd2.reads.insert(scratch_key());
    before(rd2);
    RegLoops rl = open_reg_loops(Ld);
    std::string lin2 = "0";
    if (!rl.coord.empty()) {
      lin2 = rl.coord[0];
      for (size_t i = 1; i < rl.coord.size(); ++i)
        lin2 = "(" + lin2 + ") * " + std::to_string(Ld.shape[i]) + " + " + rl.coord[i];
    }
    const std::string pr = part + "[" + reg_index(r->dst.get(), rl.counter) + "]";
    const std::string q = fresh("tg_q");
    line(pr + " = tg_red[(" + lin2 + ") * " + std::to_string(split.groups) + "];");
    open("for (int " + q + " = 1; " + q + " < " + std::to_string(split.groups) + "; ++" + q + ")");
    line(pr + " = " + reduce_combine(r->op, pr, "tg_red[(" + lin2 + ") * " + std::to_string(split.groups) + " + " + q + "]") + ";");
    close();
    close_loops(rl.opened);
  }
  // Into dst.
  const std::string i = fresh("tg_i");
  open("for (int " + i + " = 0; " + i + " < " + std::to_string(nd) + "; ++" + i + ")");
  const std::string v = r->clear ? part + "[" + i + "]"
                                 : reduce_combine(r->op, dst + "[" + i + "]", part + "[" + i + "]");
  line(dst + "[" + i + "] = " + round_to(v, r->dst->dtype) + ";");
  close();
  close();
}

// ---- parallel ------------------------------------------------------------------------------

void MslEmitter::emit_parallel(const Stmt& s, const Parallel* p) {
  before(touches(s));
  const passes::ParallelDriver drv = passes::parallel_driver(*p);
  const layout::FragmentLayout* L = nullptr;
  std::vector<size_t> dim_of;
  if (drv.buffer) {
    L = &frag(drv.buffer);
    dim_of = drv.dim_of;
  } else {
    L = &plan_.loops.at(s.get());
    for (size_t v = 0; v < p->vars.size(); ++v)
      dim_of.push_back(v);
  }
  open("");
  store_leader_ = replica_leader(*L);
  int opened = 0;
  for (size_t v = 0; v < p->vars.size(); ++v) {
    const size_t d = dim_of[v];
    const std::string tc = thread_coord(*L, d);
    const int64_t R = L->regs_of_dim(d);
    std::string counter = "0";
    std::string coord = tc;
    if (R > 1) {
      counter = fresh("tg_r");
      open("for (int " + counter + " = 0; " + counter + " < " + std::to_string(R) + "; ++" + counter + ")");
      ++opened;
      const std::string rc = reg_coord(*L, d, counter);
      coord = tc == "0" ? rc : rc == "0" ? tc : tc + " + " + rc;
    }
    var_regs_[p->vars[v].get()] = counter;
    const std::string vn = name(p->vars[v]->name);
    var_names_[p->vars[v].get()] = vn;
    line("const int " + vn + " = " + coord + ";");
  }
  parallel_body(p->body);
  close_loops(opened);
  for (const auto& v : p->vars) {
    var_regs_.erase(v.get());
    var_names_.erase(v.get());
  }
  store_leader_.clear();
  close();
}

void MslEmitter::parallel_body(const Stmt& s) {
  if (!s)
    return;
  if (auto* q = s->as<Seq>()) {
    for (const auto& c : q->stmts)
      parallel_body(c);
  } else if (auto* st = s->as<Store>()) {
    emit_store(st);
  } else if (auto* l = s->as<LetStmt>()) {
    line("const " + type_name(l->var->type) + " " + name(l->var->name) + " = " + expr(l->value) + ";");
  } else if (auto* i = s->as<IfThenElse>()) {
    open("if (" + expr(i->cond) + ")");
    parallel_body(i->then_case);
    if (i->else_case) {
      open_else();
      parallel_body(i->else_case);
    }
    close();
  } else {
    internal_error("MSL emitter: unexpected statement in a parallel body");
  }
}

void MslEmitter::emit_store(const Store* st) {
  const Buffer& b = *st->buffer;
  std::vector<std::string> idx;
  for (const auto& i : st->indices)
    idx.push_back(expr(i));
  std::string target;
  if (b.scope == MemScope::Fragment) {
    std::vector<std::string> r;
    for (const auto& i : st->indices) {
      auto* v = i->as<VarRef>();
      TG_ASSERT(v && var_regs_.count(v->var.get()),
                "MSL emitter: fragment '" + b.name + "' written outside a parallel loop over it");
      r.push_back(var_regs_.at(v->var.get()));
    }
    target = name(b.name) + "[" + reg_index(&b, r) + "]";
  } else {
    target = name(b.name) + "[" + linear(b, idx) + "]";
  }
  Expr value = st->value;
  if (st->op == StoreOp::Add)
    value = Binary::make(BinaryOp::Add, Load::make(st->buffer, st->indices), Cast::make(b.dtype, st->value));
  std::string v = expr(Cast::make(b.dtype, value));
  std::string stmt_text;
  if (b.scope == MemScope::Fragment || b.scope == MemScope::Local)
    stmt_text = target + " = " + round_to(v, b.dtype) + ";";
  else
    stmt_text = target + " = " + to_storage(v, b.dtype) + ";";
  std::string cond;
  if (b.scope == MemScope::Global)
    cond = in_bounds(b, idx);
  if ((b.scope == MemScope::Global || b.scope == MemScope::Shared) && !store_leader_.empty())
    cond = cond.empty() ? store_leader_ : store_leader_ + " && " + cond;
  line(cond.empty() ? stmt_text : "if (" + cond + ") " + stmt_text);
}

// ---- control flow --------------------------------------------------------------------------

// A loop or branch whose body touches threadgroup memory starts and ends each iteration or
// branch with nothing pending (a barrier before and after): an iteration's first op cannot see
// the last op of the previous one otherwise. One that touches none needs no barrier at all, and
// the pending accesses of the ops before it stay pending across it.
void MslEmitter::emit_for(const For* f) {
  const Touch t = touches(f->body);
  const bool onchip = !t.reads.empty() || !t.writes.empty();
  if (onchip)
    flush();
  const std::string v = name(f->var->name);
  const std::string end = fresh("tg_end");
  open("");
  line("const long " + end + " = " + expr(f->start, kAdd) + " + " + expr(f->extent, kAdd + 1) + ";");
  open("for (long " + v + " = " + expr(f->start) + "; " + v + " < " + end + "; ++" + v + ")");
  stmt(f->body);
  if (onchip)
    flush();
  close();
  close();
}

// Branch conditions outside parallel bodies are uniform over the threadgroup (grid indices,
// loop counters, dims), so a barrier inside a branch is reached by every thread or by none.
void MslEmitter::emit_if(const Stmt& s, const IfThenElse* i) {
  const Touch t = touches(s);
  const bool onchip = !t.reads.empty() || !t.writes.empty();
  if (onchip)
    flush();
  open("if (" + expr(i->cond) + ")");
  stmt(i->then_case);
  if (onchip)
    flush();
  if (i->else_case) {
    open_else();
    stmt(i->else_case);
    if (onchip)
      flush();
  }
  close();
}

void MslEmitter::emit_atomic_add(const AtomicAdd* a) {
  const Buffer& fb = *a->src.buffer;
  const Buffer& gb = *a->dst.buffer;
  TG_ASSERT(fb.scope == MemScope::Fragment && gb.scope == MemScope::Global,
            "MSL emitter: atomic_add from a fragment into a tensor expected");
  const auto& L = frag(&fb);
  const std::string leader = replica_leader(L);
  if (!leader.empty())
    open("if (" + leader + ")");
  RegLoops rl = open_reg_loops(L);
  auto idx = region_index(a->dst, rl.coord);
  const std::string reg = name(fb.name) + "[" + reg_index(&fb, rl.counter) + "]";
  const std::string atype = gb.dtype == DType::f32() ? "atomic_float" : "atomic_int";
  const std::string v = gb.dtype == DType::f32() ? (fb.dtype.is_float() ? reg : "float(" + reg + ")")
                                                 : "int(" + reg + ")";
  line("if (" + in_bounds(gb, idx) + ") atomic_fetch_add_explicit((device " + atype + "*)(" +
       name(gb.name) + " + (" + linear(gb, idx) + ")), " + v + ", memory_order_relaxed);");
  close_loops(rl.opened);
  if (!leader.empty())
    close();
}

} // namespace tilegen::emit
