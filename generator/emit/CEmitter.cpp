// The C backend: module layout, the block function, the exported entry point, accesses.
// The op lowerings live in COps.cpp, the gemm micro-kernel in CGemm.cpp.
#include "emit/CEmitter.h"

#include "emit/CRuntimeHelpers.h"
#include "passes/RedundantLoadElim.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "support/InternalError.h"
#include "support/TextEscape.h"

#include <set>

namespace tilegen::emit {

using namespace ir;

namespace {

// Above this many bytes of on-chip buffers per block, the buffers move from the stack to the
// runtime's per-thread heap scratch (tg_cpu_scratch): OpenMP worker stacks can be as small as
// a few hundred KiB (OMP_STACKSIZE, musl's 128 KiB), and static _Thread_local arrays are no
// way out (glibc carves static TLS out of every thread's stack, summed over all variants).
constexpr int64_t kMaxStackScratchBytes = 64 * 1024;

// Which kernel-level names the body refers to (to declare only those: no unused locals).
class UseCollector : public IRVisitor {
public:
  std::set<const Var*> vars;
  std::set<const Buffer*> buffers;

protected:
  void visit_VarRef(const VarRef* n) override { vars.insert(n->var.get()); }
  void visit_buffer_use(const BufferPtr& b) override {
    if (buffers.insert(b.get()).second && b->scope == MemScope::Global)
      for (const auto& e : b->shape)
        visit(e);
  }
};

} // namespace

Expr CEmitter::ref(const std::string& n) {
  auto it = gen_vars_.find(n);
  if (it == gen_vars_.end())
    it = gen_vars_.emplace(n, make_var(n, VarKind::LoopVar, DType::i64())).first;
  return VarRef::make(it->second);
}

CEmitter::CEmitter(const Kernel& k, const Target& target, const VariantInfo& info)
    : k_(k), target_(target), info_(info) {
  // Lay out every on-chip buffer, and the packed copy of b of each transposed-b gemm, one
  // after the other at 64-byte aligned offsets (their lifetimes may overlap; no reuse).
  class Layout : public IRVisitor {
  public:
    CEmitter& e;
    explicit Layout(CEmitter& em) : e(em) {}

  protected:
    void place(int64_t bytes) { e.footprint_ += (bytes + 63) / 64 * 64; }
    void visit_Alloc(const Alloc* n) override {
      int64_t b = n->buffer->dtype.bytes();
      for (const auto& x : n->buffer->shape) {
        auto c = x->as<IntImm>();
        TG_ASSERT(c, "C emitter: on-chip buffer '" + n->buffer->name + "' has a symbolic shape");
        b *= c->value;
      }
      e.scratch_offset_[n->buffer.get()] = e.footprint_;
      place(b);
    }
    void visit_Gemm(const Gemm* n) override {
      IRVisitor::visit_Gemm(n);
      if (!n->transpose_b)
        return;
      int64_t b = n->b->dtype.bytes();
      for (const auto& x : n->b->shape)
        if (auto c = x->as<IntImm>())
          b *= c->value;
      e.pack_offset_[n] = e.footprint_;
      place(b);
    }
  } layout(*this);
  layout.visit(k.body);

  // Outputs that the body never reads (their tile writes may stream past the caches).
  class Reads : public IRVisitor {
  public:
    std::set<const Buffer*> read;

  protected:
    void visit_Load(const Load* n) override {
      read.insert(n->buffer.get());
      IRVisitor::visit_Load(n);
    }
    void visit_Copy(const Copy* n) override {
      read.insert(n->src.buffer.get());
      IRVisitor::visit_Copy(n);
    }
    void visit_Store(const Store* n) override {
      if (n->op == StoreOp::Add)
        read.insert(n->buffer.get());
      IRVisitor::visit_Store(n);
    }
    void visit_AtomicAdd(const AtomicAdd* n) override {
      read.insert(n->dst.buffer.get());
      IRVisitor::visit_AtomicAdd(n);
    }
    void visit_Gemm(const Gemm* n) override {
      read.insert(n->c.get());
      IRVisitor::visit_Gemm(n);
    }
  } reads;
  reads.visit(k.body);
  for (const auto& t : k.tensors)
    if (t->access == Access::Write && !reads.read.count(t.get()))
      write_only_.insert(t.get());
  find_fused_reductions(k.body);
  // Views, hoists and fused stores (CViews.cpp); hoisted copies live in per-thread scratch.
  plan_views();
  scratch_on_heap_ = footprint_ > kMaxStackScratchBytes;
  for (const auto& [c, plan] : tile_plans_)
    scratch_on_heap_ = scratch_on_heap_ || plan.kind == TileSource::Hoist;

  // Copies of a read-only input into a tile at offsets that move with the grid index, in body
  // order: a streaming store of a later row prefetches the next block's row of the first one
  // that matches it (emit_copy_rows). One grid dim only: the blocks of a thread are then
  // consecutive indices (`schedule(static)`), so block bx + 1 is the thread's next one.
  class Inputs : public IRVisitor {
  public:
    const Var* bx = nullptr;
    std::vector<const Copy*> found;

  protected:
    void visit_Copy(const Copy* n) override {
      const Buffer* b = n->src.buffer.get();
      if (b->scope == MemScope::Global && b->access == Access::Read &&
          n->dst.buffer->scope != MemScope::Global) {
        bool moves = false;
        for (const auto& o : n->src.offsets)
          moves = moves || vars_of(o).count(bx);
        if (moves)
          found.push_back(n);
      }
      IRVisitor::visit_Copy(n);
    }
  } inputs;
  if (k.grid.size() == 1) {
    inputs.bx = k.grid[0].index.get();
    inputs.visit(k.body);
    prefetch_srcs_ = inputs.found;
  }
}

const Store* c_whole_tile_store(const Parallel* p) {
  Stmt b = p->body;
  if (auto seq = b->as<Seq>(); seq && seq->stmts.size() == 1)
    b = seq->stmts[0];
  auto st = b->as<Store>();
  if (!st || st->op != StoreOp::Assign || st->buffer->scope == MemScope::Global ||
      st->buffer->dtype != DType::f32() || st->indices.size() != p->vars.size() ||
      st->buffer->rank() != p->vars.size())
    return nullptr;
  for (size_t d = 0; d < p->vars.size(); ++d) {
    auto v = st->indices[d]->as<VarRef>();
    if (!v || v->var != p->vars[d] || !passes::same_expr(p->extents[d], st->buffer->shape[d]))
      return nullptr;
  }
  return st;
}

// A parallel that fills an f32 tile t followed at once by a reduce of t over its last dim
// (rmsnorm's sq = x * x; sum, layernorm's squared deviations) is emitted as one loop that
// accumulates the parallel's value directly: t is never stored or read back. Only when every
// use of t is such a pair (then t itself is not declared either).
void CEmitter::find_fused_reductions(const Stmt& body) {
  class Scan : public IRVisitor {
  public:
    std::map<const Buffer*, int> reads, writes, pairs;
    std::vector<std::pair<const Parallel*, Stmt>> found; // the parallel, its reduce

  protected:
    void visit_Seq(const Seq* n) override {
      for (size_t i = 0; i + 1 < n->stmts.size(); ++i) {
        auto p = n->stmts[i]->as<Parallel>();
        auto r = n->stmts[i + 1]->as<Reduce>();
        if (!p || !r)
          continue;
        const Store* st = c_whole_tile_store(p);
        // The value must not read the reduce's destination: fused, dst[i] is updated after
        // point i's loop, before later points read it.
        class DstReads : public IRVisitor {
        public:
          const Buffer* dst = nullptr;
          bool found = false;

        protected:
          void visit_Load(const Load* l) override {
            found |= l->buffer.get() == dst;
            IRVisitor::visit_Load(l);
          }
        } dst_reads;
        dst_reads.dst = r->dst.get();
        if (st)
          dst_reads.visit(st->value);
        if (st && !dst_reads.found && r->src == st->buffer &&
            r->dim + 1 == static_cast<int>(r->src->rank()) &&
            r->dst->scope != MemScope::Global && r->dst->dtype == DType::f32() &&
            !c_touches_global(p->body)) {
          found.emplace_back(p, n->stmts[i + 1]);
          ++pairs[st->buffer.get()];
        }
      }
      IRVisitor::visit_Seq(n);
    }
    void visit_Load(const Load* n) override {
      ++reads[n->buffer.get()];
      IRVisitor::visit_Load(n);
    }
    void visit_Copy(const Copy* n) override {
      ++reads[n->src.buffer.get()];
      ++writes[n->dst.buffer.get()];
      IRVisitor::visit_Copy(n);
    }
    void visit_Reduce(const Reduce* n) override {
      ++reads[n->src.get()];
      ++writes[n->dst.get()];
      IRVisitor::visit_Reduce(n);
    }
    void visit_Store(const Store* n) override {
      ++writes[n->buffer.get()];
      IRVisitor::visit_Store(n);
    }
    void visit_Fill(const Fill* n) override {
      ++writes[n->dst.get()];
      IRVisitor::visit_Fill(n);
    }
    void visit_Gemm(const Gemm* n) override {
      ++reads[n->a.get()], ++reads[n->b.get()], ++reads[n->c.get()], ++writes[n->c.get()];
      IRVisitor::visit_Gemm(n);
    }
    void visit_AtomicAdd(const AtomicAdd* n) override {
      ++reads[n->src.buffer.get()];
      IRVisitor::visit_AtomicAdd(n);
    }
  } scan;
  scan.visit(body);
  for (const auto& [p, rs] : scan.found) {
    const Reduce* r = rs->as<Reduce>();
    const Buffer* t = r->src.get();
    if (scan.reads[t] == scan.pairs[t] && scan.writes[t] == scan.pairs[t]) {
      fused_[p] = rs;
      fused_reduces_.insert(r);
      elided_.insert(t);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Accesses

std::string CEmitter::global_index(const BufferPtr& b, const std::vector<Expr>& idx) {
  // Row-major, Horner form: ((i0 * s1 + i1) * s2 + i2) ...
  Expr lin = idx[0];
  for (size_t d = 1; d < idx.size(); ++d)
    lin = Binary::make(BinaryOp::Add, Binary::make(BinaryOp::Mul, lin, b->shape[d]), idx[d]);
  return expr(simplify(lin));
}

std::string CEmitter::access(const BufferPtr& b, const std::vector<Expr>& idx) {
  if (b->scope == MemScope::Global)
    return name(b->name) + "[" + global_index(b, idx) + "]";
  std::string s = name(b->name);
  for (const auto& i : idx)
    s += "[" + expr(i) + "]";
  return s;
}

std::string CEmitter::load_value(const BufferPtr& b, const std::vector<Expr>& idx) {
  if (auto it = active_views_.find(b.get()); it != active_views_.end()) {
    // A tile read in place (CViews.cpp): base[i0 * ld0 + ... + i_last].
    Expr lin = idx.back();
    for (size_t k = 0; k + 1 < idx.size(); ++k)
      lin = Binary::make(BinaryOp::Add, Binary::make(BinaryOp::Mul, idx[k], ref(it->second.lds[k])), lin);
    const std::string v = it->second.name + "[" + expr(simplify(lin)) + "]";
    if (std::string r = f16_row_read(it->second, b, idx); !r.empty())
      return r; // converted before the loop (CF16Rows.cpp)
    if (it->second.storage.is_16bit_float() && it->second.storage != b->dtype)
      return need(std::string("tg_") + it->second.storage.name() + "_to_f32") + "(" + v + ")";
    return v;
  }
  std::string a = access(b, idx);
  if (b->scope == MemScope::Global && b->dtype.is_narrow_float())
    return need(std::string("tg_") + b->dtype.name() + "_to_f32") + "(" + a + ")";
  return a;
}

std::string CEmitter::in_bounds(const BufferPtr& b, const std::vector<Expr>& idx) {
  std::string s;
  for (size_t d = 0; d < idx.size(); ++d)
    s += (d ? " && " : "") + need("tg_inb") + "(" + expr(idx[d]) + ", " + expr(b->shape[d]) + ")";
  return s;
}

std::string CEmitter::print_load(const Load* l, int& prec) {
  if (auto it = bound_loads_.find(l); it != bound_loads_.end())
    return it->second;
  std::string v = load_value(l->buffer, l->indices);
  if (l->buffer->scope != MemScope::Global || !guard_loads_)
    return v;
  // Out-of-bounds global reads give 0 (docs/ir.md, Load), or a copy's pad value.
  int zp = 0;
  std::string other = l->type.is_float() ? print_float(0.0, l->type, zp) : "0";
  if (load_pad_) {
    DType vt = l->type.is_narrow_float() ? DType::f32() : l->type;
    Expr p = load_pad_;
    if (p->type != vt && !(p->type.is_narrow_float() && vt == DType::f32()))
      p = simplify(Cast::make(vt, p));
    other = expr(p, kCond);
  }
  prec = kCond;
  return in_bounds(l->buffer, l->indices) + " ? " + v + " : " + other;
}

std::string CEmitter::store_value(const BufferPtr& b, const Expr& v) {
  if (b->dtype.is_narrow_float() && b->scope == MemScope::Global) {
    // Stored as bits: round the f32 value to nearest even. A Cast to the same type already
    // in the value is the same rounding, done once here.
    Expr x = v;
    if (auto c = x->as<Cast>(); c && c->type == b->dtype)
      x = c->value;
    if (!(x->type == DType::f32() || x->type.is_narrow_float()))
      x = Cast::make(DType::f32(), x);
    return need(std::string("tg_f32_to_") + b->dtype.name()) + "(" + expr(x) + ")";
  }
  TG_ASSERT(!(b->dtype.is_narrow_float()), "C emitter: on-chip narrow float buffer '" + b->name +
                                              "' survived LegalizeC");
  return expr(v->type == b->dtype ? v : simplify(Cast::make(b->dtype, v)), kAssign);
}

void CEmitter::open_loops(const std::vector<std::string>& vars, const std::vector<Expr>& extents,
                          bool simd) {
  for (size_t i = 0; i < vars.size(); ++i) {
    if (simd && i + 1 == vars.size())
      line("#pragma omp simd");
    open("for (int64_t " + vars[i] + " = 0; " + vars[i] + " < " + expr(extents[i], kRel + 1) +
         "; ++" + vars[i] + ")");
  }
}

void CEmitter::close_loops(size_t n) {
  for (size_t i = 0; i < n; ++i)
    close();
}

// ---------------------------------------------------------------------------------------------
// Statements

void CEmitter::op_comment(const Stmt& s) {
  std::string text = to_string(s);
  text = text.substr(0, text.find('\n'));
  while (!text.empty() && text.back() == '{')
    text.pop_back();
  while (!text.empty() && (text.back() == ' '))
    text.pop_back();
  while (!text.empty() && text.front() == ' ')
    text.erase(text.begin());
  std::string where = info_.spec_path.empty() && s->loc.known() ? *s->loc.file : info_.spec_path;
  if (s->loc.line > 0)
    where += ":" + std::to_string(s->loc.line);
  line("/* spec: " + c_block_comment(where + " " + text) + " */");
}

void CEmitter::stmt(const Stmt& s) {
  switch (s->kind) {
  case StmtKind::Seq: {
    auto seq = s->as<Seq>();
    // Lets that nothing after them reads (a `let` used only in a branch the instance folded
    // away: flash_attention_fwd's `q` where causal is 0) are not printed: gcc's -Wall would
    // call them unused variables. Backwards, so a let read only by a dropped let goes too.
    std::vector<bool> dead(seq->stmts.size(), false);
    for (size_t i = seq->stmts.size(); i-- > 0;) {
      auto l = seq->stmts[i]->as<LetStmt>();
      if (!l)
        continue;
      bool used = false;
      for (size_t k = i + 1; k < seq->stmts.size() && !used; ++k)
        used = !dead[k] && mentions_var(seq->stmts[k], l->var.get());
      dead[i] = !used;
    }
    for (size_t i = 0; i < seq->stmts.size(); ++i) {
      const Stmt& c = seq->stmts[i];
      if (dead[i])
        continue;
      if (i + 1 < seq->stmts.size() && fused_pair(c, seq->stmts[i + 1])) {
        // The parallel computed straight into the copy-out after it (CViews.cpp).
        if (auto it = view_end_before_.find(c.get()); it != view_end_before_.end())
          for (const Buffer* b : it->second)
            active_views_.erase(b);
        op_comment(c);
        op_comment(seq->stmts[i + 1]);
        emit_fused_store(c->as<Parallel>(), seq->stmts[i + 1]->as<Copy>());
        ++i;
        continue;
      }
      // A nested Seq that declares names gets its own C block (IR scoping = C scoping).
      bool scoped = false;
      if (auto inner = c->as<Seq>())
        for (const auto& x : inner->stmts)
          scoped |= x->kind == StmtKind::Alloc || x->kind == StmtKind::LetStmt;
      const auto views = active_views_;
      if (scoped)
        open("");
      stmt(c);
      if (scoped) {
        close();
        active_views_ = views; // views made inside end with the C block
      }
    }
    return;
  }
  default: break;
  }
  if (auto it = view_end_before_.find(s.get()); it != view_end_before_.end())
    for (const Buffer* b : it->second)
      active_views_.erase(b); // overwritten: read as a tile again
  if (s->kind == StmtKind::Alloc && elided_.count(s->as<Alloc>()->buffer.get())) {
    op_comment(s);
    line("/* not stored: only the fused reduction below reads it */");
    return;
  }
  if (s->kind == StmtKind::Reduce && fused_reduces_.count(s->as<Reduce>()))
    return; // emitted with its parallel
  if (s->kind != StmtKind::Store && s->kind != StmtKind::LetStmt && s->kind != StmtKind::Combine)
    op_comment(s);
  if (s->kind == StmtKind::Parallel)
    if (auto it = fused_.find(s->as<Parallel>()); it != fused_.end()) {
      op_comment(it->second);
      return emit_fused_reduce(s->as<Parallel>(), it->second->as<Reduce>());
    }
  if (s->kind == StmtKind::Copy && tile_plans_.count(s->as<Copy>()))
    return emit_view_copy(s->as<Copy>());
  if (auto it = view_end_after_.find(s.get()); it != view_end_after_.end()) {
    // Reads through the view, then writes the whole tile: read as a tile from here on.
    emit_parallel(s->as<Parallel>());
    for (const Buffer* b : it->second)
      active_views_.erase(b);
    return;
  }
  switch (s->kind) {
  case StmtKind::Seq: return;
  case StmtKind::Alloc: return emit_alloc(s->as<Alloc>());
  case StmtKind::Fill: return emit_fill(s->as<Fill>());
  case StmtKind::Copy: return emit_copy(s->as<Copy>());
  case StmtKind::Gemm: return emit_gemm(s->as<Gemm>());
  case StmtKind::Reduce: return emit_reduce(s->as<Reduce>());
  case StmtKind::Parallel: return emit_parallel(s->as<Parallel>());
  case StmtKind::Store: return emit_store(s->as<Store>());
  case StmtKind::LetStmt: {
    auto l = s->as<LetStmt>();
    line("const " + type_name(l->var->type) + " " + name(l->var->name) + " = " +
         expr(l->value, kAssign) + ";");
    return;
  }
  case StmtKind::For: return emit_for(s->as<For>());
  case StmtKind::IfThenElse: return emit_if(s->as<IfThenElse>());
  case StmtKind::AtomicAdd: return emit_atomic_add(s->as<AtomicAdd>());
  case StmtKind::Combine: return; // one block runs each tile's whole loop: nothing to join
  }
}

// ---------------------------------------------------------------------------------------------
// Module

std::string CEmitter::header_comment() const {
  std::string s = "/* Generated by tilegen: do not edit.\n";
  s += " *   spec:     " + c_block_comment(info_.spec_path) + "\n";
  s += " *   kernel:   " + k_.name +
       (k_.summary.empty() ? "" : " (" + c_block_comment(k_.summary) + ")") + "\n";
  std::string inst = k_.type_suffix();
  for (const auto& f : k_.flags)
    if (auto it = k_.bindings.find(f->name); it != k_.bindings.end())
      inst += " " + f->name + "=" + std::to_string(it->second);
  for (const auto& d : k_.dims)
    if (auto it = k_.bindings.find(d.var->name); it != k_.bindings.end())
      inst += " " + d.var->name + "=" + std::to_string(it->second);
  s += " *   instance: " + inst + "\n";
  s += " *   target:   " + target_.name + " (" + c_block_comment(target_.summary) + ")\n";
  for (const auto& n : k_.notes)
    s += " *   schedule: " + c_block_comment(n) + "\n";
  s += " * On-chip buffers of a block: " + std::to_string(footprint_) + " B, in " +
       (scratch_on_heap_ ? "per-thread heap scratch (tg_cpu_scratch: too large for a thread stack)"
                         : "automatic storage") +
       ".\n */\n";
  return s;
}

void CEmitter::emit_tensor_prologue(const Stmt& body) {
  UseCollector uses;
  uses.visit(body);
  for (size_t i = 0; i < k_.tensors.size(); ++i) {
    const auto& t = k_.tensors[i];
    if (!uses.buffers.count(t.get()))
      continue;
    const std::string ty = storage_type_name(t->dtype);
    const std::string cq = t->access == Access::Read ? "const " : "";
    line(cq + ty + "* " + name(t->name) + " = (" + cq + ty + "*)args->tensors[" +
         std::to_string(i) + "];");
  }
  for (size_t i = 0; i < k_.dims.size(); ++i)
    if (uses.vars.count(k_.dims[i].var.get()))
      line("const int64_t " + name(k_.dims[i].var->name) + " = args->dims[" + std::to_string(i) +
           "];");
  for (size_t i = 0; i < k_.scalars.size(); ++i)
    if (uses.vars.count(k_.scalars[i].get()))
      line("const " + type_name(k_.scalars[i]->type) + " " + name(k_.scalars[i]->name) + " = (" +
           type_name(k_.scalars[i]->type) + ")args->scalars[" + std::to_string(i) + "];");
}

void CEmitter::emit_block_function() {
  emit_hoist_function();
  UseCollector uses;
  uses.visit(k_.body);

  std::string params = "const tg_variant_args* args";
  if (scratch_on_heap_)
    params += ", char* restrict tg_scratch";
  for (const auto& g : k_.grid)
    params += ", int64_t " + name(g.index->name);
  line("/* One block of the grid: the whole kernel body for block (" + [&] {
    std::string s;
    for (size_t i = 0; i < k_.grid.size(); ++i)
      s += (i ? ", " : "") + k_.grid[i].index->name;
    return s;
  }() + "). */");
  open("static void tg_block(" + params + ")");
  emit_tensor_prologue(k_.body);
  // Inputs read in place (CViews.cpp) are copied instead when they overlap an output.
  for (const auto& t : k_.tensors) {
    if (!overlap_srcs_.count(t.get()))
      continue;
    auto bytes = [&](const BufferPtr& b) {
      Expr e = make_i64(b->dtype.bytes());
      for (const auto& x : b->shape)
        e = Binary::make(BinaryOp::Mul, e, x);
      return expr(simplify(e), kAssign);
    };
    std::string ov;
    for (const auto& o : k_.tensors)
      if (o->access != Access::Read && uses.buffers.count(o.get()))
        ov += (ov.empty() ? "" : " || ") + need("tg_overlap") + "(" + name(t->name) + ", " +
              bytes(t) + ", " + name(o->name) + ", " + bytes(o) + ")";
    line("const int " + overlap_flag(t.get()) + " = " + (ov.empty() ? "0" : ov) + ";");
  }
  for (const auto& g : k_.grid)
    if (!uses.vars.count(g.index.get()))
      line("(void)" + name(g.index->name) + ";");
  line();
  stmt(k_.body);
  if (streamed_)
    line(need("tg_stream_fence") + "(); /* this block's streaming stores before the next */");
  close();
}

void CEmitter::emit_entry_function() {
  UseCollector uses;
  for (const auto& g : k_.grid)
    uses.visit(g.extent);
  const char* axis[] = {"x", "y", "z"};
  const size_t nd = k_.grid.size();
  TG_ASSERT(nd >= 1 && nd <= 3, "C emitter: grid rank must be 1..3");

  line("/* Entry point (variant ABI, docs/internals.md): runs every block of the grid. */");
  open("int " + info_.function_name + "(const tg_launch* launch, const tg_variant_args* args)");
  line("if (args == NULL)");
  line("  return TG_ERR_INVALID_ARGUMENT;");
  for (size_t i = 0; i < k_.dims.size(); ++i)
    if (uses.vars.count(k_.dims[i].var.get()))
      line("const int64_t " + name(k_.dims[i].var->name) + " = args->dims[" + std::to_string(i) +
           "];");
  std::string empty;
  for (size_t d = 0; d < nd; ++d) {
    line(std::string("const int64_t tg_grid_") + axis[d] + " = " + expr(k_.grid[d].extent, kAssign) +
         "; /* " + k_.grid[d].index->name + " */");
    empty += (d ? " || tg_grid_" : "tg_grid_") + std::string(axis[d]) + " <= 0";
  }
  line("if (" + empty + ")");
  line("  return TG_OK; /* empty problem: no block to run */");
  line("(void)launch;");
  // launch->num_threads at most the processors (an unclamped request such as INT_MAX makes
  // libgomp exit the process) and the blocks (docs/dispatch.md, tg_cpu_threads).
  std::string extents;
  for (size_t d = 0; d < 3; ++d)
    extents += d < nd ? std::string(", tg_grid_") + axis[d] : std::string(", 1");
  // Without OpenMP the pragmas below are ignored, but clang's -fopenmp-simd still parses their
  // clauses: tg_threads exists either way.
  raw("#ifdef _OPENMP\n");
  line("const int tg_threads = tg_cpu_threads(launch, omp_get_max_threads()" + extents + ");");
  raw("#else\n");
  line("const int tg_threads = 1;");
  line("(void)tg_threads;");
  raw("#endif\n");
  // Blocks are independent: one OpenMP iteration each, x fastest so that consecutive
  // iterations (and thus one thread's static chunk) share rows of the inputs.
  const std::string collapse = nd > 1 ? "collapse(" + std::to_string(nd) + ") " : "";
  std::vector<std::string> idx(nd);
  for (size_t d = 0; d < nd; ++d)
    idx[d] = name(k_.grid[d].index->name);
  std::string call = scratch_on_heap_ ? "tg_block(args, tg_scratch" : "tg_block(args";
  for (size_t d = 0; d < nd; ++d)
    call += ", " + idx[d];
  call += ");";
  auto grid_loops = [&](int indent) {
    for (size_t d = nd; d-- > 0;)
      line(std::string(indent + 2 * (nd - 1 - d), ' ') + "for (int64_t " + idx[d] + " = 0; " +
           idx[d] + " < tg_grid_" + axis[d] + "; ++" + idx[d] + ")");
  };
  if (!scratch_on_heap_) {
    line("#pragma omp parallel for " + collapse + "schedule(static) num_threads(tg_threads)");
    grid_loops(0);
    line(std::string(2 * nd, ' ') + call);
    line("return TG_OK;");
    close();
    return;
  }
  // Each thread takes its tile scratch once per call, before its share of the blocks.
  line("int tg_oom = 0;");
  line("#pragma omp parallel num_threads(tg_threads)");
  open("");
  line("char* tg_scratch = (char*)tg_cpu_scratch(" + std::to_string(footprint_) + ");");
  line("if (tg_scratch == NULL) {");
  line("  #pragma omp atomic write");
  line("  tg_oom = 1;");
  line("}");
  for (const auto& [c, plan] : tile_plans_)
    if (plan.kind == TileSource::Hoist) {
      line("if (tg_scratch != NULL)");
      line("  tg_hoist(args, tg_scratch); /* the block-invariant copies, once per thread */");
      break;
    }
  line("#pragma omp for " + collapse + "schedule(static)");
  grid_loops(0);
  line(std::string(2 * nd, ' ') + "if (tg_scratch != NULL)");
  line(std::string(2 * nd + 2, ' ') + call);
  close();
  line("return tg_oom ? TG_ERR_OUT_OF_MEMORY : TG_OK;");
  close();
}

std::string CEmitter::run() {
  emit_block_function();
  std::string block = out_.str();
  out_.str("");
  emit_entry_function();
  std::string entry = out_.str();
  out_.str("");

  std::string s = header_comment();
  s += "#include <math.h>\n#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n"
       "#include <string.h>\n#ifdef _OPENMP\n#include <omp.h>\n#endif\n\n#include "
       "\"tilegen/variant.h\"\n\n";
  if (!k_.tile_consts.empty()) {
    s += "/* Tile constants chosen for this target (see the schedule line above). */\nenum {";
    for (size_t i = 0; i < k_.tile_consts.size(); ++i) {
      const auto& n = k_.tile_consts[i].var->name;
      auto it = k_.bindings.find(n);
      TG_ASSERT(it != k_.bindings.end(), "C emitter: tile constant '" + n + "' is not bound");
      s += (i ? ", " : " ") + name(n) + " = " + std::to_string(it->second);
    }
    s += " };\n\n";
  }
  s += c_helper_source(helpers_);
  for (const auto& [n, src] : gemm_helpers_)
    s += src + "\n";
  s += block + "\n" + entry;
  return s;
}

std::string emit_c_variant(const Kernel& k, const Target& target, const VariantInfo& info) {
  TG_ASSERT(target.backend == Backend::C, "emit_c_variant: target '" + target.name + "' is not C");
  TG_ASSERT(!k.target.empty(), "emit_variant: kernel '" + k.name + "' is not instantiated");
  return CEmitter(k, target, info).run();
}

} // namespace tilegen::emit
