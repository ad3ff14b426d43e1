// Loop-nest transformations of the C backend for memory-bound kernels (docs/c-backend.md,
// "Memory-bound kernels"). A row kernel written in the tile language copies its rows into
// tiles, computes, and copies a tile out; done literally on a CPU, each element crosses the
// core three times more than in a hand-written loop (copy in, write back, copy out). Three
// rewrites of how the C emitter prints such code, decided here before anything is printed
// (plan_views) and general to any spec of that shape:
//
//  * Fused stores. `parallel t[i, j] = v` followed at once by `copy t -> Y[...]`, where t is
//    not read again before it is overwritten: v is computed straight into the store of Y
//    (in chunks of a few hundred elements that tg_stream_row_<type> streams out when Y is a
//    write-only output), and t is not written.
//  * Views. `copy X[...] -> x` of a read-only input into a tile of its element type that the
//    statements after it only read elementwise (loads, reduce sources, copies into other
//    tiles; under a select only at the parallel's own point, read ahead into a local), until x
//    is overwritten or dead: x is not copied; its reads go through a base pointer and row
//    strides into X (`tg_v<n>[i * tg_v<n>_ld0 + j]`). Where the tile is cut by the edge of X,
//    or X overlaps an output of the call (in-place calls: the values must be those of the
//    moment of the copy), the copy is made as written and the pointer points at the tile.
//    bf16 inputs into f32 tiles are viewed too (a read converts with a shift), and f16 ones
//    where the target has F16C (loops convert rows or chunks first, CF16Rows.cpp).
//  * Hoists. A view-like copy whose source region does not depend on the block (its offsets
//    mention only dims, value params, tile constants, scalars and flags: rmsnorm's W) is made
//    once per thread (tg_hoist, before the thread's blocks) into per-thread scratch, and the
//    block reads it there; if the source overlaps an output, the block makes the copy itself.
//
// Liveness is decided on "lines": the statements of a Seq with its unscoped nested Seqs
// flattened (passes/VersionSingleTrip keeps inlined loop bodies as nested Seqs), which the
// emitter prints in one C scope. A value is live after a point when some path from there reads
// it before a full overwrite (the rest of the line, then the next iteration of an enclosing
// loop, then what follows the enclosing statement); loops may run zero times and a branch of
// an `if` may not run, so only straight-line full writes end a value.
#include "emit/CEmitter.h"

#include "ir/FloatBits.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "passes/RedundantLoadElim.h"
#include "support/InternalError.h"

#include <cstdio>
#include <optional>

namespace tilegen::emit {

using namespace ir;

// Where control goes after a line ends: the statements of `line` from `next` on, after
// another iteration of `loop` (when the ended line is that loop's body), then `up`.
struct CEmitter::Cont {
  const std::vector<Stmt>* line;
  size_t next;
  const For* loop;
  const Cont* up;
};

namespace {

bool scoped_seq(const Seq* s) {
  for (const auto& x : s->stmts)
    if (x->kind == StmtKind::Alloc || x->kind == StmtKind::LetStmt)
      return true;
  return false;
}

void flatten_into(const Stmt& s, std::vector<Stmt>& out) {
  auto q = s->as<Seq>();
  if (!q) {
    out.push_back(s);
    return;
  }
  for (const auto& c : q->stmts) {
    auto cq = c->as<Seq>();
    if (cq && !scoped_seq(cq))
      flatten_into(c, out);
    else
      out.push_back(c);
  }
}

// The statements printed in one C scope: s's, with unscoped nested Seqs flattened.
std::vector<Stmt> line_of(const Stmt& s) {
  std::vector<Stmt> out;
  flatten_into(s, out);
  return out;
}

bool reads_buffer(const Stmt& s, const Buffer* b) {
  class Finder : public IRVisitor {
  public:
    const Buffer* b = nullptr;
    bool found = false;

  protected:
    void visit_Load(const Load* n) override {
      found |= n->buffer.get() == b;
      IRVisitor::visit_Load(n);
    }
  } f;
  f.b = b;
  f.visit(s);
  return f.found;
}

bool has_load(const Expr& e) {
  class Finder : public IRVisitor {
  public:
    bool found = false;

  protected:
    void visit_Load(const Load*) override { found = true; }
  } f;
  if (e)
    f.visit(e);
  return f.found;
}

// The region is the whole on-chip buffer: offsets 0, extents its shape.
bool whole_region(const Region& r) {
  if (r.tile_rank() != r.buffer->rank())
    return false;
  for (size_t d = 0; d < r.buffer->rank(); ++d)
    if (!is_const_zero(r.offsets[d]) || !passes::same_expr(r.extents[d], r.buffer->shape[d]))
      return false;
  return true;
}

bool constant_shape(const Buffer& b) {
  for (const auto& e : b.shape)
    if (!as_const_int(e))
      return false;
  return true;
}

int64_t elements(const Buffer& b) {
  int64_t n = 1;
  for (const auto& e : b.shape)
    n *= *as_const_int(e);
  return n;
}

// Elements per chunk of a fused streaming store of rows of `extent` (0: not chunked): the
// chunk is computed into an L1-resident buffer and streamed out by tg_stream_row_<type>.
int64_t fused_chunk(const Expr& extent) {
  const auto e = as_const_int(extent);
  if (!e || *e <= 0)
    return 0;
  for (int64_t c : {256, 128, 64, 32, 16})
    if (*e % c == 0)
      return c;
  return *e <= 256 ? *e : 0;
}

// Whether a load is of the point of the innermost enclosing parallel (t[i, j] in
// `parallel i, j`): inside the tile whatever the conditions around it.
bool is_point_load(const Load* n, const std::vector<const Var*>& point) {
  if (n->indices.size() != point.size() || point.empty())
    return false;
  for (size_t k = 0; k < point.size(); ++k) {
    auto v = n->indices[k]->as<VarRef>();
    if (!v || v->var.get() != point[k])
      return false;
  }
  return true;
}

// Whether some load of b inside a parallel is evaluated conditionally in a way the emitter
// cannot read ahead: in a branch of an `if`, or in an arm of a select at another index than
// the parallel's point. gcc if-converts a conditional load (and vectorizes the loop) only from
// memory it knows it may read, a declared array, not through a pointer ("control flow in
// loop"); point loads in select arms are read ahead into a local (read_views_ahead).
bool read_conditionally(const Stmt& body, const Buffer* b) {
  class Finder : public IRVisitor {
  public:
    const Buffer* b = nullptr;
    int arms = 0, branches = 0;
    std::vector<const Var*> point;
    bool found = false;

  protected:
    void visit_Load(const Load* n) override {
      if (n->buffer.get() == b)
        found |= branches > 0 || (arms > 0 && !is_point_load(n, point));
      IRVisitor::visit_Load(n);
    }
    void visit_Select(const Select* n) override {
      visit(n->cond);
      ++arms;
      visit(n->t);
      visit(n->f);
      --arms;
    }
    void visit_IfThenElse(const IfThenElse* n) override {
      visit(n->cond);
      branches += !point.empty();
      visit(n->then_case);
      if (n->else_case)
        visit(n->else_case);
      branches -= !point.empty();
    }
    void visit_Parallel(const Parallel* n) override {
      const auto saved = point;
      point.clear();
      for (const auto& v : n->vars)
        point.push_back(v.get());
      IRVisitor::visit_Parallel(n);
      point = saved;
    }
  } f;
  f.b = b;
  f.visit(body);
  return f.found;
}

// The bits of a copy's pad value (null: 0) in the 16-bit float type t, if t holds it exactly.
std::optional<uint16_t> narrow_pad_bits(const Expr& pad, DType t) {
  if (!t.is_16bit_float())
    return std::nullopt;
  double v = 0;
  if (pad) {
    const Expr p = simplify(pad);
    if (auto f = p->as<FloatImm>())
      v = f->value;
    else if (auto i = as_const_int(p))
      v = static_cast<double>(*i);
    else
      return std::nullopt;
  }
  const float f = static_cast<float>(v);
  if (static_cast<double>(f) != v)
    return std::nullopt; // not an f32 either (NaN fails here and below)
  const bool bf = t == DType::bf16();
  const uint16_t bits = bf ? f32_to_bf16_bits(f) : f32_to_f16_bits(f);
  if ((bf ? bf16_bits_to_f32(bits) : f16_bits_to_f32(bits)) != f)
    return std::nullopt;
  return bits;
}

bool is_stream_type(DType t) { return t == DType::f32() || t == DType::f16() || t == DType::bf16(); }

} // namespace

// ---------------------------------------------------------------------------------------------
// Liveness

// `p` is a parallel printed together with `next`, the copy-out after it (a fused store).
bool CEmitter::fused_pair(const Stmt& p, const Stmt& next) const {
  auto par = p->as<Parallel>();
  auto c = next ? next->as<Copy>() : nullptr;
  if (!par || !c || !fused_copies_.count(c) || !adjacent_.count({p.get(), next.get()}))
    return false;
  const Store* st = c_whole_tile_store(par);
  return st && st->buffer == c->src.buffer;
}

// How s (followed by `next` in its line) first touches d: reads it (the value before s may be
// observed), overwrites all of it, or neither.
CEmitter::Acc CEmitter::access_of(const Stmt& s, const Stmt& next, const Buffer* d) const {
  if (!mentions_buffer(s, d))
    return Acc::None;
  switch (s->kind) {
  case StmtKind::Copy: {
    auto c = s->as<Copy>();
    if (fused_copies_.count(c))
      return Acc::None; // printed with its parallel: the tile is neither written nor read
    if (c->dst.buffer.get() == d && c->src.buffer.get() != d && whole_region(c->dst) &&
        !mentions_buffer(c->pad, d))
      return Acc::Write;
    return Acc::Read;
  }
  case StmtKind::Fill:
    return mentions_buffer(s->as<Fill>()->value, d) ? Acc::Read : Acc::Write;
  case StmtKind::Alloc: return Acc::Write;
  case StmtKind::Parallel: {
    auto p = s->as<Parallel>();
    if (reads_buffer(s, d))
      return Acc::Read;
    if (fused_pair(s, next))
      return Acc::None; // its store goes to the output, not to the tile
    const Store* st = c_whole_tile_store(p);
    return st && st->buffer.get() == d ? Acc::Write : Acc::Read;
  }
  case StmtKind::For: {
    auto f = s->as<For>();
    if (mentions_buffer(f->start, d) || mentions_buffer(f->extent, d))
      return Acc::Read;
    // It may run zero times: a write inside does not end the value.
    return first_access(line_of(f->body), 0, d) == Acc::Read ? Acc::Read : Acc::None;
  }
  case StmtKind::IfThenElse: {
    auto n = s->as<IfThenElse>();
    if (mentions_buffer(n->cond, d))
      return Acc::Read;
    const Acc t = first_access(line_of(n->then_case), 0, d);
    const Acc e = n->else_case ? first_access(line_of(n->else_case), 0, d) : Acc::None;
    if (t == Acc::Read || e == Acc::Read)
      return Acc::Read;
    return t == Acc::Write && e == Acc::Write ? Acc::Write : Acc::None;
  }
  case StmtKind::Seq: return first_access(line_of(s), 0, d);
  default: return Acc::Read; // reduce, gemm, store, let, atomic_add, combine
  }
}

CEmitter::Acc CEmitter::first_access(const std::vector<Stmt>& line, size_t from,
                                     const Buffer* d) const {
  for (size_t i = from; i < line.size(); ++i)
    if (Acc a = access_of(line[i], i + 1 < line.size() ? line[i + 1] : Stmt(), d); a != Acc::None)
      return a;
  return Acc::None;
}

bool CEmitter::live_after(const Buffer* d, const std::vector<Stmt>& line, size_t from,
                          const Cont* cont) const {
  if (Acc a = first_access(line, from, d); a != Acc::None)
    return a == Acc::Read;
  if (!cont)
    return false;
  if (cont->loop && first_access(line_of(cont->loop->body), 0, d) == Acc::Read)
    return true; // the next iteration reads it first
  return live_after(d, *cont->line, cont->next, cont->up);
}

// Whether every use of d in s is an elementwise read that the emitter can send through a view
// (a load, a reduce's source, a copy into another tile), fused stores included.
bool CEmitter::reads_only(const Stmt& s, const Buffer* d) const {
  class Check : public IRVisitor {
  public:
    const CEmitter* e = nullptr;
    const Buffer* d = nullptr;
    const Store* fused_store = nullptr;
    bool bad = false;

  protected:
    void visit_Copy(const Copy* n) override {
      if (e->fused_copies_.count(n))
        return;
      bad |= n->dst.buffer.get() == d ||
             (n->src.buffer.get() == d && n->dst.buffer->scope == MemScope::Global);
      IRVisitor::visit_Copy(n);
    }
    void visit_Fill(const Fill* n) override {
      bad |= n->dst.get() == d;
      IRVisitor::visit_Fill(n);
    }
    void visit_Alloc(const Alloc* n) override { bad |= n->buffer.get() == d; }
    void visit_Store(const Store* n) override {
      bad |= n->buffer.get() == d && n != fused_store;
      IRVisitor::visit_Store(n);
    }
    void visit_Seq(const Seq* n) override {
      for (size_t i = 0; i < n->stmts.size(); ++i) {
        const Store* saved = fused_store;
        if (i + 1 < n->stmts.size() && e->fused_pair(n->stmts[i], n->stmts[i + 1]))
          fused_store = c_whole_tile_store(n->stmts[i]->as<Parallel>());
        visit(n->stmts[i]);
        fused_store = saved;
      }
    }
    void visit_Reduce(const Reduce* n) override {
      bad |= n->dst.get() == d;
      IRVisitor::visit_Reduce(n);
    }
    void visit_Gemm(const Gemm* n) override {
      bad |= n->a.get() == d || n->b.get() == d || n->c.get() == d;
    }
    void visit_AtomicAdd(const AtomicAdd* n) override {
      bad |= n->src.buffer.get() == d || n->dst.buffer.get() == d;
    }
    void visit_Combine(const Combine* n) override {
      bad |= mentions_buffer(n->body, d);
      for (const auto& c : n->carry)
        bad |= c.state.get() == d || c.peer.get() == d;
    }
  } check;
  check.e = this;
  check.d = d;
  check.visit(s);
  return !check.bad;
}

// ---------------------------------------------------------------------------------------------
// Planning

void CEmitter::plan_line(const std::vector<Stmt>& line, const Cont* cont, bool views) {
  for (size_t i = 0; i < line.size(); ++i) {
    const Stmt& s = line[i];
    if (!views) {
      // A fused store: the parallel that fills tile t, then the copy of t to a tensor.
      auto p = s->as<Parallel>();
      const Store* st = p && !fused_.count(p) ? c_whole_tile_store(p) : nullptr;
      auto c = st && i + 1 < line.size() ? line[i + 1]->as<Copy>() : nullptr;
      if (c)
        ++seen_[c];
      if (c && adjacent_.count({s.get(), line[i + 1].get()}) && c->src.buffer == st->buffer &&
          whole_region(c->src) &&
          c->dst.buffer->scope == MemScope::Global && c->dst.tile_rank() == st->buffer->rank() &&
          !c_touches_global(p->body) && !elided_.count(st->buffer.get())) {
        const bool stream = write_only_.count(c->dst.buffer.get()) && is_stream_type(c->dst.buffer->dtype);
        if ((!stream || fused_chunk(p->extents.back()) > 0) &&
            !live_after(st->buffer.get(), line, i + 2, cont)) {
          ++qualified_[c];
          fused_copies_.insert(c);
        }
      }
    } else if (auto c = s->as<Copy>()) {
      // A view or a hoist: a copy of a read-only input into a whole tile read elementwise.
      const Region& src = c->src;
      const BufferPtr& d = c->dst.buffer;
      ++seen_[c];
      bool ok = !fused_copies_.count(c) && src.buffer->scope == MemScope::Global &&
                src.buffer->access == Access::Read &&
                (d->scope == MemScope::Fragment || d->scope == MemScope::Local) &&
                whole_region(c->dst) && src.tile_rank() == d->rank() && constant_shape(*d) &&
                !has_load(c->pad);
      bool invariant = true;
      for (const auto& o : src.offsets) {
        ok = ok && !has_load(o);
        for (const Var* v : vars_of(o))
          invariant = invariant && (v->kind == VarKind::Dim || v->kind == VarKind::ValueParam ||
                                    v->kind == VarKind::TileConst || v->kind == VarKind::Scalar ||
                                    v->kind == VarKind::Flag);
      }
      // The tile's element type, or a bf16 input into an f32 tile: the view converts on every
      // read (exact, as the copy does; a shift, 2 instructions per vector with the load), and
      // its edge and in-place blocks stage X's bits with the pad's bits, so the pad must be a
      // constant that bf16 holds exactly. f16 only with F16C: gcc 12 vectorizes tg_f16_to_f32 as
      // integer arithmetic (about 12 instructions per vector, not vcvtph2ps; such views measured
      // 0.57-0.81x of the copy's speed), so the loops convert rows or chunks with vcvtph2ps.
      const auto pad = narrow_pad_bits(c->pad, src.buffer->dtype);
      // f16 only where the loops reading the view convert through F16C first (CF16Rows.cpp,
      // Target::c_f16_rows), with rows that fit its whole-row buffers.
      const auto row = as_const_int(d->shape.back());
      const bool f16_rows = target_.c_f16_rows && src.buffer->dtype == DType::f16() && row &&
                            *row <= 4096;
      const bool narrow = (src.buffer->dtype == DType::bf16() || f16_rows) &&
                          d->dtype == DType::f32() && pad;
      const bool viewable = (src.buffer->dtype == d->dtype || narrow) &&
                            !read_conditionally(k_.body, d.get());
      ok = ok && (invariant || viewable);
      // The range: the rest of the line, up to a full write of the tile.
      const StmtNode* end_before = nullptr;
      const StmtNode* end_after = nullptr;
      for (size_t j = i + 1; ok && j < line.size() && !end_before && !end_after; ++j) {
        const Stmt& t = line[j];
        if (!mentions_buffer(t, d.get()))
          continue;
        const Acc a = access_of(t, j + 1 < line.size() ? line[j + 1] : Stmt(), d.get());
        auto p = t->as<Parallel>();
        const bool fused = j + 1 < line.size() && fused_pair(t, line[j + 1]);
        const Store* st = p && !fused ? c_whole_tile_store(p) : nullptr;
        if (a == Acc::Write && t->kind != StmtKind::Parallel)
          end_before = t.get();
        else if (st && st->buffer == d) // reads through the view, then writes the tile
          end_after = t.get();
        else if (fused)
          ok = !mentions_buffer(line[j + 1], d.get()) || line[j + 1]->as<Copy>()->src.buffer == d;
        else
          ok = reads_only(t, d.get());
      }
      if (ok && !end_before && !end_after && live_after(d.get(), line, line.size(), cont))
        ok = false;
      if (ok) {
        ++qualified_[c];
        TilePlan plan{invariant ? TileSource::Hoist : TileSource::View, 0,
                      invariant ? d->dtype : src.buffer->dtype};
        if (!invariant && narrow)
          plan.pad_bits = *pad;
        if (tile_plans_.emplace(c, plan).second)
          plan_order_.push_back(c);
        if (end_before)
          view_end_before_[end_before].push_back(d.get());
        if (end_after)
          view_end_after_[end_after].push_back(d.get());
        overlap_srcs_.insert(src.buffer.get());
      }
    }
    if (auto f = s->as<For>()) {
      const auto body = line_of(f->body);
      const Cont next{&line, i + 1, f, cont};
      plan_line(body, &next, views);
    } else if (auto n = s->as<IfThenElse>()) {
      const Cont next{&line, i + 1, nullptr, cont};
      plan_line(line_of(n->then_case), &next, views);
      if (n->else_case)
        plan_line(line_of(n->else_case), &next, views);
    } else if (s->kind == StmtKind::Seq) {
      const Cont next{&line, i + 1, nullptr, cont};
      plan_line(line_of(s), &next, views);
    }
  }
}

void CEmitter::plan_views() {
  class Adjacent : public IRVisitor {
  public:
    std::set<std::pair<const StmtNode*, const StmtNode*>>* out = nullptr;

  protected:
    void visit_Seq(const Seq* n) override {
      for (size_t i = 0; i + 1 < n->stmts.size(); ++i)
        out->insert({n->stmts[i].get(), n->stmts[i + 1].get()});
      IRVisitor::visit_Seq(n);
    }
  } adjacent;
  adjacent.out = &adjacent_;
  adjacent.visit(k_.body);
  // IR nodes are shared: a statement that appears in several places (both versions of a
  // versioned loop) is transformed only if it qualifies in every one of them.
  auto keep_consistent = [&](auto&& erase) {
    for (const auto& [c, n] : seen_)
      if (qualified_[c] != n)
        erase(c);
    seen_.clear();
    qualified_.clear();
  };
  const auto root = line_of(k_.body);
  plan_line(root, nullptr, false); // fused stores first: a view's range reads through them
  keep_consistent([&](const Copy* c) { fused_copies_.erase(c); });
  plan_line(root, nullptr, true);
  keep_consistent([&](const Copy* c) { tile_plans_.erase(c); });
  std::vector<const Copy*> order;
  for (const Copy* c : plan_order_)
    if (tile_plans_.count(c)) {
      order.push_back(c);
      tile_plans_.at(c).id = ++next_view_id_;
    }
  plan_order_ = order;

  // Scratch for the threads' hoisted copies and the staging tiles of narrow views.
  for (const Copy* c : plan_order_) {
    TilePlan& plan = tile_plans_.at(c);
    const Buffer& d = *c->dst.buffer;
    if (plan.kind == TileSource::Hoist) {
      plan.hoist_offset = footprint_;
      footprint_ += (elements(d) * d.dtype.bytes() + 63) / 64 * 64;
    } else if (plan.storage != d.dtype) {
      plan.stage_offset = footprint_;
      footprint_ += (elements(d) * plan.storage.bytes() + 63) / 64 * 64;
      staged_tiles_.insert(&d);
    }
  }

}

// ---------------------------------------------------------------------------------------------
// Emission

// Point loads of views in select arms of `e` (softmax's `m == -inf ? 0 : exp(x - m)`) are
// read into locals before the statement, so the loop has no conditional load through a
// pointer (read_conditionally); print_load then prints the local.
void CEmitter::read_views_ahead(const Expr& e) {
  class Finder : public IRVisitor {
  public:
    const CEmitter* em = nullptr;
    int arms = 0;
    std::vector<const Load*> found;

  protected:
    void visit_Load(const Load* n) override {
      if (arms > 0 && em->active_views_.count(n->buffer.get()) &&
          is_point_load(n, em->point_vars_))
        found.push_back(n);
      IRVisitor::visit_Load(n);
    }
    void visit_Select(const Select* n) override {
      visit(n->cond);
      ++arms;
      visit(n->t);
      visit(n->f);
      --arms;
    }
  } f;
  f.em = this;
  f.visit(e);
  std::vector<std::pair<const Load*, std::string>> made;
  for (const Load* l : f.found) {
    if (bound_loads_.count(l))
      continue;
    for (const auto& [o, name] : made) // the same element read twice: one local
      if (o->buffer == l->buffer && passes::same_expr(Load::make(o->buffer, o->indices),
                                                      Load::make(l->buffer, l->indices)))
        bound_loads_[l] = name;
    if (bound_loads_.count(l))
      continue;
    const std::string v = "tg_r" + std::to_string(++next_read_id_);
    line("const " + type_name(l->type) + " " + v + " = " + load_value(l->buffer, l->indices) +
         "; /* read ahead: the select below reads it */");
    bound_loads_[l] = v;
    made.emplace_back(l, v);
  }
}

std::string CEmitter::overlap_flag(const Buffer* b) const { return "tg_ov_" + b->name; }

// `copy X[...] -> x` planned as a view or a hoist: a base pointer tg_v<n> and the strides
// tg_v<n>_ld<k> of x's leading dims, pointing into X (view), into the thread's copy (hoist), or
// into x itself after the copy as written (the edge of X, an input that overlaps an output).
// A base and strides, not an array of row pointers: gcc left the reductions over
// `tg_v[i][j]` scalar (rmsnorm's sum of squares), and vectorizes `tg_v[i * tg_v_ld0 + j]`.
void CEmitter::emit_view_copy(const Copy* n) {
  const TilePlan& plan = tile_plans_.at(n);
  const Region& src = n->src;
  const BufferPtr& d = n->dst.buffer;
  const size_t r = d->rank();
  const bool hoist = plan.kind == TileSource::Hoist;
  const std::string v = "tg_v" + std::to_string(plan.id);
  const bool staged = plan.stage_offset >= 0;
  const std::string pty = staged ? storage_type_name(plan.storage) : type_name(d->dtype);
  const std::string ov = overlap_flag(src.buffer.get());
  const std::string stage = "tg_st" + std::to_string(plan.id);
  if (hoist)
    line("/* block-invariant: made once per thread (tg_hoist) and read there, unless " +
         src.buffer->name + " overlaps an output */");
  else if (staged)
    line("/* read in place through " + v + " (a view of " + src.buffer->name + ", converted on " +
         "read); at the edge of " + src.buffer->name + " or when it overlaps an output, its " +
         plan.storage.name() + " bits are staged in " + stage + " */");
  else
    line("/* read in place through " + v + " (a view of " + src.buffer->name +
         "); copied at the edge of " + src.buffer->name + " or when it overlaps an output */");
  if (staged && scratch_on_heap_)
    line(pty + "* " + stage + " = (" + pty + "*)(void*)(tg_scratch + " +
         std::to_string(plan.stage_offset) + ");");
  else if (staged)
    line("_Alignas(64) " + pty + " " + stage + "[" + std::to_string(elements(*d)) + "];");
  std::vector<std::string> lds;
  std::string decl = "const " + pty + "* " + v + ";";
  for (size_t k = 0; k + 1 < r; ++k) {
    lds.push_back(v + "_ld" + std::to_string(k));
    decl += " int64_t " + lds.back() + ";";
  }
  line(decl);
  // Points the view at a tile laid out row-major with x's shape, at `base`.
  auto point_at_tile = [&](const std::string& base) {
    line(v + " = " + base + ";");
    for (size_t k = 0; k + 1 < r; ++k) {
      Expr st = make_i64(1);
      for (size_t q = k + 1; q < r; ++q)
        st = Binary::make(BinaryOp::Mul, st, d->shape[q]);
      line(lds[k] + " = " + expr(simplify(st), kAssign) + ";");
    }
  };
  const std::string tile_base = "(const " + pty + "*)(const void*)" + name(d->name);

  open("");
  const std::vector<Expr> so = named_offsets(src, "tg_s");
  if (hoist) {
    open("if (!" + ov + ")");
    point_at_tile("(const " + pty + "*)(const void*)(tg_scratch + " +
                  std::to_string(plan.hoist_offset) + ")");
    open_else();
  } else {
    open("if (" + copy_fast_condition(n, so, {}) + " && !" + ov + ")");
    line(v + " = &" + name(src.buffer->name) + "[" + global_index(src.buffer, so) + "];");
    const size_t lead = src.buffer->rank() - r;
    for (size_t k = 0; k + 1 < r; ++k) {
      Expr st = make_i64(1);
      for (size_t q = lead + k + 1; q < src.buffer->rank(); ++q)
        st = Binary::make(BinaryOp::Mul, st, src.buffer->shape[q]);
      line(lds[k] + " = " + expr(simplify(st), kAssign) + ";");
    }
    open_else();
  }
  if (staged) {
    emit_stage_copy(n, so, stage, plan.pad_bits);
    point_at_tile(stage);
  } else {
    emit_copy(n); // the copy as written, into the tile
    point_at_tile(tile_base);
  }
  close();
  close();
  active_views_[d.get()] = {v, staged ? plan.storage : d->dtype, lds};
}

// The staging copy of a 16-bit view: the tile's elements of X as stored (bits), the pad's bits
// where the tile leaves X; row by row with memcpy when the tile lies inside X (an in-place call).
void CEmitter::emit_stage_copy(const Copy* n, const std::vector<Expr>& so, const std::string& stage,
                               uint16_t pad_bits) {
  const Region& src = n->src;
  const BufferPtr& d = n->dst.buffer;
  const size_t r = d->rank(), lead = src.buffer->rank() - r;
  std::vector<std::string> vars;
  std::vector<Expr> si = so;
  Expr lin;
  for (size_t k = 0; k < r; ++k) {
    vars.push_back("tg_i" + std::to_string(k));
    si[lead + k] = simplify(Binary::make(BinaryOp::Add, so[lead + k], ref(vars.back())));
    lin = k == 0 ? ref(vars[0])
                 : Binary::make(BinaryOp::Add, Binary::make(BinaryOp::Mul, lin, d->shape[k]),
                                ref(vars[k]));
  }
  char bits[16];
  std::snprintf(bits, sizeof bits, "0x%04xu", static_cast<unsigned>(pad_bits));
  const std::string sty = storage_type_name(src.buffer->dtype);
  open("if (" + copy_fast_condition(n, so, {}) + ")");
  const std::vector<std::string> outer(vars.begin(), vars.end() - 1);
  const std::vector<Expr> outer_ext(d->shape.begin(), d->shape.end() - 1);
  std::vector<Expr> row = si;
  row[src.buffer->rank() - 1] = so[src.buffer->rank() - 1];
  VarMap at_row{{gen_vars_.at(vars.back()).get(), make_i64(0)}};
  open_loops(outer, outer_ext, false);
  line("memcpy(&" + stage + "[" + expr(simplify(substitute(lin, at_row))) + "], &" +
       name(src.buffer->name) + "[" + global_index(src.buffer, row) + "], " +
       expr(d->shape.back(), kMul) + " * sizeof(" + sty + "));");
  close_loops(outer.size());
  open_else();
  line("/* ragged edge: out-of-bounds elements are the pad's bits (" + std::string(bits) + ") */");
  open_loops(vars, d->shape, false);
  line(stage + "[" + expr(simplify(lin), kAssign) + "] = " + in_bounds(src.buffer, si) + " ? " +
       access(src.buffer, si) + " : (" + sty + ")" + bits + ";");
  close_loops(r);
  close();
}

// `parallel t[i, j] = v` + `copy t -> Y[...]` (a fused store): v computed straight into Y's
// rows. A write-only output of a streaming type is written in chunks through
// tg_stream_row_<type> (streaming stores from tg_stream_ok's size on, the next block's input
// row prefetched beside them); another output through plain stores in a simd loop.
void CEmitter::emit_fused_store(const Parallel* p, const Copy* out) {
  const Store* st = c_whole_tile_store(p);
  const Region& dst = out->dst;
  const BufferPtr& y = dst.buffer;
  const size_t r = p->vars.size();
  line("/* computed straight into " + y->name + ": " + st->buffer->name + " is not written */");
  open("");
  const std::vector<Expr> doff = named_offsets(dst, "tg_d");
  std::vector<std::string> vars;
  VarMap at_point;
  for (size_t k = 0; k < r; ++k) {
    vars.push_back("tg_i" + std::to_string(k));
    at_point[p->vars[k].get()] = ref(vars.back());
  }
  const size_t lead = y->rank() - r;
  std::vector<Expr> di = doff;
  for (size_t k = 0; k < r; ++k)
    di[lead + k] = simplify(Binary::make(BinaryOp::Add, doff[lead + k], ref(vars[k])));
  Expr value = st->value->type == DType::f32() ? st->value : Cast::make(DType::f32(), st->value);
  const Expr point_value = simplify(substitute(value, at_point));
  const bool saved = guard_loads_;
  guard_loads_ = true;

  const std::vector<std::string> outer(vars.begin(), vars.end() - 1);
  const std::vector<Expr> outer_ext(p->extents.begin(), p->extents.end() - 1);
  std::vector<Expr> row0 = di;
  row0[y->rank() - 1] = doff[y->rank() - 1];
  const std::string sty = storage_type_name(y->dtype);
  const bool stream = write_only_.count(y.get()) && is_stream_type(y->dtype);
  open("if (" + copy_fast_condition(out, {}, doff) + ")");
  if (stream) {
    Expr bytes = y->shape[0];
    for (size_t k = 1; k < y->rank(); ++k)
      bytes = Binary::make(BinaryOp::Mul, bytes, y->shape[k]);
    bytes = simplify(Binary::make(BinaryOp::Mul, bytes, make_i64(y->dtype.bytes())));
    line("const int tg_nt = " + need("tg_stream_ok") + "(" + expr(bytes, kAssign) + ");");
    streamed_ = true;
    const int64_t chunk = fused_chunk(p->extents.back());
    const std::string ch = std::to_string(chunk);
    VarMap at_chunk = at_point;
    at_chunk[p->vars.back().get()] = Binary::make(BinaryOp::Add, ref("tg_c"), ref("tg_k"));
    const Expr chunk_value = simplify(substitute(value, at_chunk));
    open_loops(outer, outer_ext, false);
    line(sty + "* tg_row = &" + name(y->name) + "[" + global_index(y, row0) + "];");
    const std::string pf = next_block_row(out, vars);
    if (pf != "NULL")
      line("const " + sty + "* tg_pf = (const " + sty + "*)(" + pf + ");");
    // The row in intrinsics where CVecStore's dialect covers the value; the chunks below are
    // then the else branch (other addresses, files compiled without the target's flags).
    const bool vec = emit_vec_store(p, value, at_point, y, pf != "NULL");
    if (vec)
      open("");
    open("for (int64_t tg_c = 0; tg_c < " + expr(p->extents.back(), kRel + 1) + "; tg_c += " + ch + ")");
    // Sub-chunks of 16 stored whole (Target::c_put16): the sub-chunk's buffer and its f16 views'
    // conversions stay in registers; the chunk's path below where a streaming destination is
    // not a multiple of 16 bytes (its head and tail need the row helper's care). Not for bf16
    // outputs: their integer rounding in the same loop measured slower than the chunk's two
    // loops (layernorm_bias bf16 0.91x on an AVX2 core; f16 1.5x, f32 1.03-1.17x, softmax f32
    // 0.95x; docs/c-backend.md).
    const bool put16 = target_.c_put16 && chunk % 16 == 0 && y->dtype != DType::bf16();
    if (put16) {
      VarMap at_sub = at_point;
      at_sub[p->vars.back().get()] = Binary::make(BinaryOp::Add, ref("tg_s"), ref("tg_k"));
      const Expr sub_value = simplify(substitute(value, at_sub));
      open("if (!tg_nt || ((uintptr_t)(tg_row + tg_c) & 15u) == 0)");
      open("for (int64_t tg_s = tg_c; tg_s < tg_c + " + ch + "; tg_s += 16)");
      line("_Alignas(64) float tg_sub[16];");
      const bool rows = begin_f16_rows({"tg_k"}, "tg_s", "", "tg_k", 16); // f16 views' pieces
      line("#pragma omp simd");
      open("for (int64_t tg_k = 0; tg_k < 16; ++tg_k)");
      line("tg_sub[tg_k] = " + store_value(st->buffer, sub_value) + ";");
      close();
      if (rows)
        end_f16_rows();
      line(need("tg_put16_" + std::string(y->dtype.name())) + "(tg_row + tg_s, tg_sub, tg_nt, " +
           (pf != "NULL" ? "tg_pf ? tg_pf + tg_s : NULL" : "NULL") + ");");
      close();
      open_else();
    }
    line("_Alignas(64) float tg_chunk[" + ch + "];");
    const bool rows = begin_f16_rows({"tg_k"}, "tg_c", "", "tg_k", chunk); // f16 views' chunks
    line("#pragma omp simd");
    open("for (int64_t tg_k = 0; tg_k < " + ch + "; ++tg_k)");
    line("tg_chunk[tg_k] = " + store_value(st->buffer, chunk_value) + ";");
    close();
    if (rows)
      end_f16_rows();
    line(need("tg_stream_row_" + std::string(y->dtype.name())) + "(tg_row + tg_c, tg_chunk, " + ch +
         ", tg_nt, " + (pf != "NULL" ? "tg_pf ? tg_pf + tg_c : NULL" : "NULL") + ");");
    if (put16)
      close();
    close();
    if (vec)
      close();
    close_loops(outer.size());
  } else {
    open_loops(outer, outer_ext, false);
    line(sty + "* tg_row = &" + name(y->name) + "[" + global_index(y, row0) + "];");
    const std::string inner = vars.back();
    const bool rows = begin_f16_rows({inner});
    line("#pragma omp simd");
    open("for (int64_t " + inner + " = 0; " + inner + " < " + expr(p->extents.back(), kRel + 1) +
         "; ++" + inner + ")");
    line("tg_row[" + inner + "] = " + store_value(y, point_value) + ";");
    close();
    if (rows)
      end_f16_rows();
    close_loops(outer.size());
  }
  open_else();
  line("/* ragged edge: out-of-bounds writes are dropped */");
  open_loops(vars, p->extents, false);
  line("if (" + in_bounds(y, di) + ")");
  line("  " + access(y, di) + " = " + store_value(y, point_value) + ";");
  close_loops(vars.size());
  close();
  close();
  guard_loads_ = saved;
}

// tg_hoist(args, scratch): the block-invariant copies of the plan, into the thread's scratch.
void CEmitter::emit_hoist_function() {
  std::vector<Stmt> copies;
  std::vector<const Copy*> hoisted;
  for (const Copy* c : plan_order_)
    if (tile_plans_.at(c).kind == TileSource::Hoist) {
      hoisted.push_back(c);
      copies.push_back(Copy::make(c->src, c->dst, c->pad, c->loc));
    }
  if (hoisted.empty())
    return;
  line("/* Block-invariant copies (docs/c-backend.md \"Memory-bound kernels\"): made once per");
  line("   thread before its blocks, into its scratch; the blocks read them there. */");
  open("static void tg_hoist(const tg_variant_args* args, char* restrict tg_scratch)");
  emit_tensor_prologue(Seq::make(copies));
  line();
  for (size_t i = 0; i < hoisted.size(); ++i) {
    const Copy* c = hoisted[i];
    const TilePlan& plan = tile_plans_.at(c);
    const BufferPtr& d = c->dst.buffer;
    op_comment(copies[i]);
    open("");
    auto h = make_buffer("tg_h" + std::to_string(plan.id), d->scope, d->dtype, d->shape);
    std::string inner;
    for (size_t k = 1; k < d->rank(); ++k)
      inner += "[" + expr(d->shape[k]) + "]";
    const std::string ty = type_name(d->dtype);
    line(ty + " (*" + h->name + ")" + inner + " = (" + ty + " (*)" + inner + ")(void*)(tg_scratch + " +
         std::to_string(plan.hoist_offset) + ");");
    auto copy = Copy::make(c->src, Region::whole(h), c->pad, c->loc);
    emit_copy(copy->as<Copy>());
    close();
  }
  close();
  line();
}

} // namespace tilegen::emit
