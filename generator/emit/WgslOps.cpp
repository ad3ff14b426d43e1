// Lowering of the tile ops to WGSL: every op is split over the workgroup's invocations (see
// WgslEmitter.h) and preceded by a comment with its spec line; a barrier follows every op
// that touches workgroup memory (the next op may read what it wrote, or overwrite what it
// read). Control flow between ops is uniform, so the barriers are valid WGSL.
#include "emit/WgslEmitter.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "support/InternalError.h"
#include "support/TextEscape.h"

#include <cfloat>

namespace tilegen::emit {

using namespace ir;

namespace {

int64_t imm(const Expr& e) {
  auto c = e->as<IntImm>();
  return c ? c->value : -1;
}
std::string str(int64_t v) { return std::to_string(v); }
Expr add(const Expr& a, const Expr& b) { return simplify(Binary::make(BinaryOp::Add, a, b)); }

std::string identity_of(ReduceOp op, DType t) {
  const bool f = t.is_float();
  switch (op) {
  case ReduceOp::Sum: return f ? "0.0f" : "0";
  // -inf/+inf are +-FLT_MAX on WGSL (passes/LegalizeWgsl.h).
  case ReduceOp::Max: return f ? "-0x1.fffffep+127f" : "i32(-2147483648)";
  case ReduceOp::Min: return f ? "0x1.fffffep+127f" : "2147483647";
  }
  return "0";
}

std::string combine(ReduceOp op, const std::string& a, const std::string& b) {
  switch (op) {
  case ReduceOp::Sum: return a + " + " + b;
  case ReduceOp::Max: return "max(" + a + ", " + b + ")";
  case ReduceOp::Min: return "min(" + a + ", " + b + ")";
  }
  return a;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Loops

std::vector<std::string> WgslEmitter::open_strided(const std::vector<Expr>& extents,
                                                   const std::string& base) {
  Expr total = make_i64(1);
  for (const auto& e : extents)
    total = simplify(Binary::make(BinaryOp::Mul, total, e));
  open("for (var tg_e: i32 = tg_tid; tg_e < " + expr(total) + "; tg_e += TG_THREADS)");
  std::vector<std::string> names(extents.size());
  Expr stride = make_i64(1);
  for (size_t d = extents.size(); d-- > 0;) {
    names[d] = base + std::to_string(d);
    std::string v = stride->as<IntImm>() && imm(stride) == 1 ? "tg_e" : "tg_e / " + expr(stride, kMul + 1);
    if (d > 0)
      v = "(" + v + ") % " + expr(extents[d], kMul + 1);
    line("let " + names[d] + " = " + v + ";");
    stride = simplify(Binary::make(BinaryOp::Mul, stride, extents[d]));
  }
  return names;
}

void WgslEmitter::open_owned(const std::string& row, const std::string& col, int64_t rows,
                             int64_t cols) {
  open("for (var tg_a: i32 = 0; tg_a < " + str(rows / layout_.ty) + "; tg_a++)");
  open("for (var tg_b: i32 = 0; tg_b < " + str(cols / layout_.tx) + "; tg_b++)");
  line("let " + row + " = tg_ty + TG_TY * tg_a;");
  line("let " + col + " = tg_tx + TG_TX * tg_b;");
}

void WgslEmitter::close_n(size_t n) {
  for (size_t i = 0; i < n; ++i)
    close();
}

void WgslEmitter::barrier() { line("workgroupBarrier();"); }

bool WgslEmitter::touches_workgroup(const Stmt& s) const {
  class Finder : public IRVisitor {
  public:
    const WgslEmitter* e;
    bool found = false;

  protected:
    void visit_buffer_use(const BufferPtr& b) override {
      found |= e->place(b) == WgslPlace::Workgroup;
    }
  } f;
  f.e = this;
  f.visit(s);
  return f.found;
}

// ---------------------------------------------------------------------------------------------
// Statements

void WgslEmitter::op_comment(const Stmt& s) {
  std::string text = to_string(s);
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && (text.back() == '{' || text.back() == ' '))
    text.pop_back();
  while (!text.empty() && text.front() == ' ')
    text.erase(text.begin());
  std::string where = info_.spec_path.empty() && s->loc.known() ? *s->loc.file : info_.spec_path;
  if (s->loc.line > 0)
    where += ":" + std::to_string(s->loc.line);
  line("// spec: " + wgsl_line_comment(where + " " + text));
}

void WgslEmitter::stmt(const Stmt& s) {
  if (auto seq = s->as<Seq>()) {
    for (const auto& c : seq->stmts) {
      bool scoped = false;
      if (auto inner = c->as<Seq>())
        for (const auto& x : inner->stmts)
          scoped |= x->kind == StmtKind::LetStmt;
      if (scoped)
        open("");
      stmt(c);
      if (scoped)
        close();
    }
    return;
  }
  if (s->kind != StmtKind::Store && s->kind != StmtKind::LetStmt && s->kind != StmtKind::Alloc &&
      s->kind != StmtKind::Combine)
    op_comment(s);
  switch (s->kind) {
  case StmtKind::Seq:
  case StmtKind::Alloc: return; // declared at module scope or at the top of the entry point
  case StmtKind::Fill: return emit_fill(s->as<Fill>());
  case StmtKind::Copy: return emit_copy(s->as<Copy>());
  case StmtKind::Gemm: return emit_gemm(s->as<Gemm>());
  case StmtKind::Reduce: return emit_reduce(s->as<Reduce>());
  case StmtKind::Parallel: return emit_parallel(s->as<Parallel>());
  case StmtKind::Store: return emit_store(s->as<Store>());
  case StmtKind::LetStmt: {
    auto l = s->as<LetStmt>();
    line("let " + name(l->var->name) + " = " + expr(l->value) + ";");
    return;
  }
  case StmtKind::For: return emit_for(s->as<For>());
  case StmtKind::IfThenElse: return emit_if(s->as<IfThenElse>());
  case StmtKind::AtomicAdd: return emit_atomic_add(s->as<AtomicAdd>());
  case StmtKind::Combine: return; // one workgroup runs each tile's whole loop: nothing to join
  }
}

void WgslEmitter::emit_fill(const Fill* n) {
  const auto& b = n->dst;
  const std::string v = value_for(b, n->value);
  if (place(b) == WgslPlace::Registers) {
    const int64_t count = imm(b->shape[0]) / layout_.ty * (imm(b->shape[1]) / layout_.tx);
    line("for (var tg_k: i32 = 0; tg_k < " + str(count) + "; tg_k++) { " + name(b->name) +
         "[tg_k] = " + v + "; }");
    return;
  }
  TG_ASSERT(place(b) == WgslPlace::Workgroup, "WGSL emitter: fill of a global tensor");
  int64_t count = 1;
  for (const auto& e : b->shape)
    count *= imm(e);
  line("for (var tg_e: i32 = tg_tid; tg_e < " + str(count) + "; tg_e += TG_THREADS) { " +
       name(b->name) + "[tg_e] = " + v + "; }");
  barrier();
}

// copy: the points of the tile, split as the distributed side needs (its owned points) or
// strided over the workgroup; global reads outside the tensor give the pad value, global
// writes outside it are dropped.
void WgslEmitter::emit_copy(const Copy* n) {
  const Region &src = n->src, &dst = n->dst;
  const size_t r = src.tile_rank();
  const bool dist = place(src.buffer) == WgslPlace::Registers || place(dst.buffer) == WgslPlace::Registers;
  open("");
  std::vector<std::string> names;
  size_t depth = 1;
  if (dist) {
    TG_ASSERT(r == 2, "WGSL emitter: copy of a register fragment with a tile of rank " + str(r));
    names = {"tg_i0", "tg_i1"};
    open_owned(names[0], names[1], imm(src.extents[0]), imm(src.extents[1]));
    depth = 2;
  } else {
    names = open_strided(src.extents, "tg_i");
  }
  std::vector<Expr> point;
  for (const auto& nm : names)
    point.push_back(ref(nm));
  auto index = [&](const Region& reg) {
    std::vector<Expr> idx = reg.offsets;
    const size_t lead = reg.buffer->rank() - r;
    for (size_t i = 0; i < r; ++i)
      idx[lead + i] = add(reg.offsets[lead + i], point[i]);
    return idx;
  };
  const auto si = index(src), di = index(dst);
  const Var* saved_row = dist_row_;
  const Var* saved_col = dist_col_;
  if (dist) {
    dist_row_ = gen_vars_.at("tg_i0").get();
    dist_col_ = gen_vars_.at("tg_i1").get();
  }
  guard_loads_ = true;
  load_pad_ = n->pad;
  const std::string st = store_raw(dst.buffer, di, value_for(dst.buffer, Load::make(src.buffer, si)));
  load_pad_ = nullptr;
  if (dst.buffer->scope == MemScope::Global)
    line("if (" + in_bounds(dst.buffer, di) + ") { " + st + " }");
  else
    line(st);
  dist_row_ = saved_row;
  dist_col_ = saved_col;
  close_n(depth);
  close();
  if (touches_workgroup(std::make_shared<Copy>(*n)))
    barrier();
}

// gemm: with c in registers, register blocking: each invocation keeps its (R/TY) x (C/TX)
// tile of c, and per k loads R/TY values of a and C/TX values of b from workgroup memory
// into registers for an outer product of fmas. Otherwise one element of c per invocation.
void WgslEmitter::emit_gemm(const Gemm* n) {
  const int64_t m = imm(n->c->shape[0]), nn = imm(n->c->shape[1]);
  const int64_t k = imm(n->a->shape[n->transpose_a ? 0 : 1]);
  TG_ASSERT(place(n->a) == WgslPlace::Workgroup && place(n->b) == WgslPlace::Workgroup,
            "WGSL emitter: gemm operands must be in workgroup memory");
  const std::string a = name(n->a->name), b = name(n->b->name), c = name(n->c->name);
  auto a_at = [&](const std::string& row, const std::string& kk) {
    return a + "[" + (n->transpose_a ? kk + " * " + str(m) + " + " + row : row + " * " + str(k) + " + " + kk) + "]";
  };
  auto b_at = [&](const std::string& kk, const std::string& col) {
    return b + "[" + (n->transpose_b ? col + " * " + str(k) + " + " + kk : kk + " * " + str(nn) + " + " + col) + "]";
  };
  const bool f = n->c->dtype.is_float();
  const std::string ct = type_name(n->c->dtype);
  auto cv = [&](const std::string& x, DType t) { return type_name(t) == ct ? x : ct + "(" + x + ")"; };
  auto mac = [&](const std::string& x, const std::string& y, const std::string& acc) {
    return f ? "fma(" + x + ", " + y + ", " + acc + ")" : x + " * " + y + " + " + acc;
  };
  if (place(n->c) == WgslPlace::Registers) {
    const int64_t ra = m / layout_.ty, cb = nn / layout_.tx;
    open("");
    if (n->clear)
      line("for (var tg_q: i32 = 0; tg_q < " + str(ra * cb) + "; tg_q++) { " + c + "[tg_q] = " +
           (f ? "0.0f" : "0") + "; }");
    open("for (var tg_k: i32 = 0; tg_k < " + str(k) + "; tg_k++)");
    line("var tg_av: array<" + ct + ", " + str(ra) + ">;");
    line("var tg_bv: array<" + ct + ", " + str(cb) + ">;");
    line("for (var tg_a: i32 = 0; tg_a < " + str(ra) + "; tg_a++) { tg_av[tg_a] = " +
         cv(a_at("(tg_ty + TG_TY * tg_a)", "tg_k"), n->a->dtype) + "; }");
    line("for (var tg_b: i32 = 0; tg_b < " + str(cb) + "; tg_b++) { tg_bv[tg_b] = " +
         cv(b_at("tg_k", "(tg_tx + TG_TX * tg_b)"), n->b->dtype) + "; }");
    open("for (var tg_a: i32 = 0; tg_a < " + str(ra) + "; tg_a++)");
    open("for (var tg_b: i32 = 0; tg_b < " + str(cb) + "; tg_b++)");
    line("let tg_q = tg_a * " + str(cb) + " + tg_b;");
    line(c + "[tg_q] = " + mac("tg_av[tg_a]", "tg_bv[tg_b]", c + "[tg_q]") + ";");
    close_n(4);
  } else {
    open("for (var tg_e: i32 = tg_tid; tg_e < " + str(m * nn) + "; tg_e += TG_THREADS)");
    line("let tg_i = tg_e / " + str(nn) + ";");
    line("let tg_j = tg_e % " + str(nn) + ";");
    line(std::string("var tg_acc = ") + (n->clear ? (f ? "0.0f" : "0") : c + "[tg_e]") + ";");
    line("for (var tg_k: i32 = 0; tg_k < " + str(k) + "; tg_k++) { tg_acc = " +
         mac(cv(a_at("tg_i", "tg_k"), n->a->dtype), cv(b_at("tg_k", "tg_j"), n->b->dtype), "tg_acc") + "; }");
    line(c + "[tg_e] = tg_acc;");
    close();
  }
  barrier();
}

void WgslEmitter::emit_reduce(const Reduce* n) {
  if (place(n->src) == WgslPlace::Registers)
    return emit_row_reduce(n);
  const auto &src = n->src, &dst = n->dst;
  const size_t d = static_cast<size_t>(n->dim);
  const DType t = dst->dtype;
  open("");
  auto names = open_strided(dst->shape, "tg_j");
  std::vector<Expr> didx, sidx;
  for (const auto& nm : names)
    didx.push_back(ref(nm));
  sidx = didx;
  sidx.insert(sidx.begin() + static_cast<long>(d), ref("tg_r"));
  const std::string dref = didx.empty() ? name(dst->name) + "[0]" : load_raw(dst, didx);
  line("var tg_acc: " + type_name(t) + " = " + (n->clear ? identity_of(n->op, t) : dref) + ";");
  std::string x = load_raw(src, sidx);
  if (type_name(src->dtype) != type_name(t))
    x = type_name(t) + "(" + x + ")";
  line("for (var tg_r: i32 = 0; tg_r < " + str(imm(src->shape[d])) + "; tg_r++) { tg_acc = " +
       combine(n->op, "tg_acc", x) + "; }");
  line(dref + " = tg_acc;");
  close();
  close();
  barrier();
}

// reduce(dim = 1) of a register fragment [R, C] into a workgroup buffer [R]: partials over
// each invocation's columns, then across the TX invocations of a row: subgroup shuffles where
// the subgroup layout was verified (subgroups targets), else a tree in workgroup memory.
void WgslEmitter::emit_row_reduce(const Reduce* n) {
  const auto &src = n->src, &dst = n->dst;
  TG_ASSERT(place(dst) == WgslPlace::Workgroup && n->dim == 1, "WGSL emitter: row reduce shape");
  const DType t = dst->dtype;
  const int64_t ra = imm(src->shape[0]) / layout_.ty, cb = imm(src->shape[1]) / layout_.tx;
  const std::string s = name(src->name), dn = name(dst->name);
  const std::string id = identity_of(n->op, t);
  auto partial = [&]() {
    line("var tg_v: " + type_name(t) + " = " + id + ";");
    line("for (var tg_b: i32 = 0; tg_b < " + str(cb) + "; tg_b++) { tg_v = " +
         combine(n->op, "tg_v", s + "[tg_a * " + str(cb) + " + tg_b]") + "; }");
  };
  auto finish = [&](const std::string& v) {
    return dn + "[tg_row] = " + (n->clear ? v : combine(n->op, dn + "[tg_row]", v)) + ";";
  };
  open("");
  if (target_.wgsl.subgroups) {
    line("// subgroup path: lanes of a row are consecutive (checked once per workgroup)");
    open("if (tg_sg_fast)");
    line("let tg_w = min(u32(TG_TX), tg_sg_size); // invocations of a row in one subgroup");
    open("for (var tg_a: i32 = 0; tg_a < " + str(ra) + "; tg_a++)");
    line("let tg_row = tg_ty + TG_TY * tg_a;");
    partial();
    line("for (var tg_o: u32 = 1u; tg_o < tg_w; tg_o = tg_o * 2u) { tg_v = " +
         combine(n->op, "tg_v", "subgroupShuffleXor(tg_v, tg_o)") + "; }");
    line("if (u32(tg_tx) % tg_w == 0u) { tg_red[tg_row * TG_TX + tg_tx] = tg_v; }");
    close();
    barrier();
    open("if (tg_tx == 0)");
    open("for (var tg_a: i32 = 0; tg_a < " + str(ra) + "; tg_a++)");
    line("let tg_row = tg_ty + TG_TY * tg_a;");
    line("var tg_v: " + type_name(t) + " = tg_red[tg_row * TG_TX];");
    line("for (var tg_c: i32 = i32(tg_w); tg_c < TG_TX; tg_c += i32(tg_w)) { tg_v = " +
         combine(n->op, "tg_v", "tg_red[tg_row * TG_TX + tg_c]") + "; }");
    line(finish("tg_v"));
    close_n(2);
    open_else();
  }
  open("for (var tg_a: i32 = 0; tg_a < " + str(ra) + "; tg_a++)");
  partial();
  line("tg_red[(tg_ty + TG_TY * tg_a) * TG_TX + tg_tx] = tg_v;");
  close();
  barrier();
  open("for (var tg_s: i32 = TG_TX / 2; tg_s > 0; tg_s = tg_s / 2)");
  open("if (tg_tx < tg_s)");
  open("for (var tg_a: i32 = 0; tg_a < " + str(ra) + "; tg_a++)");
  line("let tg_o = (tg_ty + TG_TY * tg_a) * TG_TX + tg_tx;");
  line("tg_red[tg_o] = " + combine(n->op, "tg_red[tg_o]", "tg_red[tg_o + tg_s]") + ";");
  close_n(2);
  barrier();
  close();
  open("if (tg_tx == 0)");
  open("for (var tg_a: i32 = 0; tg_a < " + str(ra) + "; tg_a++)");
  line("let tg_row = tg_ty + TG_TY * tg_a;");
  line(finish("tg_red[tg_row * TG_TX]"));
  close_n(2);
  if (target_.wgsl.subgroups)
    close();
  close();
  barrier();
}

void WgslEmitter::emit_parallel(const Parallel* n) {
  // Distributed when the body touches a register fragment: its (row, col) index vars.
  class Find : public IRVisitor {
  public:
    const WgslEmitter* e;
    const Var *row = nullptr, *col = nullptr;

  protected:
    void use(const BufferPtr& b, const std::vector<Expr>& idx) {
      if (row || e->place(b) != WgslPlace::Registers)
        return;
      row = idx[0]->as<VarRef>()->var.get();
      col = idx[1]->as<VarRef>()->var.get();
    }
    void visit_Load(const Load* l) override {
      use(l->buffer, l->indices);
      IRVisitor::visit_Load(l);
    }
    void visit_Store(const Store* s) override {
      use(s->buffer, s->indices);
      IRVisitor::visit_Store(s);
    }
  } f;
  f.e = this;
  f.visit(n->body);
  open("");
  size_t depth = 1;
  if (f.row) {
    int64_t rows = 0, cols = 0;
    std::vector<size_t> rest;
    for (size_t i = 0; i < n->vars.size(); ++i) {
      if (n->vars[i].get() == f.row)
        rows = imm(n->extents[i]);
      else if (n->vars[i].get() == f.col)
        cols = imm(n->extents[i]);
      else
        rest.push_back(i);
    }
    open_owned(name(f.row->name), name(f.col->name), rows, cols);
    depth = 2;
    for (size_t i : rest) { // any further index vars run whole in every invocation
      const std::string v = name(n->vars[i]->name);
      open("for (var " + v + ": i32 = 0; " + v + " < " + expr(n->extents[i]) + "; " + v + "++)");
      ++depth;
    }
    dist_row_ = f.row;
    dist_col_ = f.col;
  } else {
    std::vector<std::string> names;
    auto gen = open_strided(n->extents, "tg_p");
    for (size_t i = 0; i < n->vars.size(); ++i)
      line("let " + name(n->vars[i]->name) + " = " + gen[i] + ";");
  }
  const bool saved = guard_loads_;
  guard_loads_ = true;
  stmt(n->body);
  guard_loads_ = saved;
  dist_row_ = dist_col_ = nullptr;
  close_n(depth);
  close();
  if (touches_workgroup(n->body))
    barrier();
}

void WgslEmitter::emit_store(const Store* n) {
  const auto& b = n->buffer;
  Expr v = n->value;
  if (n->op == StoreOp::Add) {
    Expr old = Load::make(b, n->indices);
    if (old->type.is_narrow_float())
      old = Cast::make(DType::f32(), old);
    if (v->type != old->type)
      v = Cast::make(old->type, v);
    v = Binary::make(BinaryOp::Add, old, v);
  }
  const bool saved = guard_loads_;
  guard_loads_ = b->scope != MemScope::Global || n->op != StoreOp::Add;
  std::string st = store_raw(b, n->indices, value_for(b, v));
  guard_loads_ = saved;
  if (b->scope == MemScope::Global)
    line("if (" + in_bounds(b, n->indices) + ") { " + st + " }");
  else
    line(st);
}

void WgslEmitter::emit_for(const For* n) {
  if (n->pipelined())
    line("// pipelined: serial on WGSL (no asynchronous copies; the barriers order the stages)");
  const std::string v = name(n->var->name);
  Expr end = simplify(Binary::make(BinaryOp::Add, n->start, n->extent));
  open("for (var " + v + ": i32 = " + expr(n->start) + "; " + v + " < " + expr(end) + "; " + v + "++)");
  stmt(n->body);
  close();
}

void WgslEmitter::emit_if(const IfThenElse* n) {
  open("if (" + expr(n->cond) + ")");
  stmt(n->then_case);
  if (n->else_case) {
    open_else();
    stmt(n->else_case);
  }
  close();
}

// atomic_add: WGSL atomics are 32-bit integer only. i32 uses atomicAdd; f32 a
// compare-exchange loop on the bits (the tensor is array<atomic<u32>>).
void WgslEmitter::emit_atomic_add(const AtomicAdd* n) {
  const Region &src = n->src, &dst = n->dst;
  const size_t r = src.tile_rank();
  const bool dist = place(src.buffer) == WgslPlace::Registers;
  open("");
  std::vector<std::string> names;
  size_t depth = 1;
  if (dist) {
    names = {"tg_i0", "tg_i1"};
    open_owned(names[0], names[1], imm(src.extents[0]), imm(src.extents[1]));
    depth = 2;
  } else {
    names = open_strided(src.extents, "tg_i");
  }
  std::vector<Expr> point;
  for (const auto& nm : names)
    point.push_back(ref(nm));
  auto index = [&](const Region& reg) {
    std::vector<Expr> idx = reg.offsets;
    const size_t lead = reg.buffer->rank() - r;
    for (size_t i = 0; i < r; ++i)
      idx[lead + i] = add(reg.offsets[lead + i], point[i]);
    return idx;
  };
  const auto si = index(src), di = index(dst);
  if (dist) {
    dist_row_ = gen_vars_.at("tg_i0").get();
    dist_col_ = gen_vars_.at("tg_i1").get();
  }
  guard_loads_ = true;
  Expr v = Load::make(src.buffer, si);
  if (type_name(v->type) != type_name(dst.buffer->dtype))
    v = Cast::make(dst.buffer->dtype, v);
  const std::string x = name(dst.buffer->name) + "[" + linear(dst.buffer, di) + "]";
  open("if (" + in_bounds(dst.buffer, di) + ")");
  if (dst.buffer->dtype == DType::i32()) {
    line("atomicAdd(&" + x + ", " + expr(v) + ");");
  } else {
    line("let tg_x = " + expr(v) + ";");
    line("var tg_old = atomicLoad(&" + x + ");");
    open("loop");
    line("let tg_r = atomicCompareExchangeWeak(&" + x + ", tg_old, bitcast<u32>(bitcast<f32>(tg_old) + tg_x));");
    line("if (tg_r.exchanged) { break; }");
    line("tg_old = tg_r.old_value;");
    close();
  }
  close();
  dist_row_ = dist_col_ = nullptr;
  close_n(depth);
  close();
  if (touches_workgroup(std::make_shared<AtomicAdd>(*n)))
    barrier();
}

} // namespace tilegen::emit
