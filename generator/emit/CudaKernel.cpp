// CudaEmitter: pipelines, parallel loops, the kernel function, the host entry points and the
// device helpers.
#include "emit/CudaEmitter.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "passes/IndexThreshold.h"
#include "passes/OutputCoverage.h"
#include "passes/LegalizeCuda.h"
#include "support/InternalError.h"

#include <algorithm>
#include <functional>

namespace tilegen::emit {

using namespace ir;

namespace {

// The tensors a kernel reads only as scalars: element loads outside every parallel (a block
// table in a copy's offsets, the `let` of a group's first row), loads inside a parallel whose
// indices name none of its points (no parallel variable, no `let`: a sequence's length in
// decode attention's mask, an expert's row range) and no other use. No code reads them in
// vectors, so the host's TG_VEC tests leave them out: a block table of P pages per sequence
// would otherwise need P % 4 == 0, and a lengths tensor of B sequences B % 4 == 0, for 16-byte
// copies of the pages they point to.
std::set<const Buffer*> scalar_only_tensors(const Kernel& k) {
  struct Uses : IRVisitor {
    int parallel = 0;
    std::set<const Buffer*> scalar, data;
    void visit_Load(const Load* n) override {
      // inside a parallel: uniform unless an index names one of its points (its variables,
      // or a `let`, which may be computed from them)
      bool uniform = true;
      for (const auto& i : n->indices)
        for (const Var* v : vars_of(i))
          uniform = uniform && (parallel == 0 ||
                                (v->kind != VarKind::ParallelVar && v->kind != VarKind::Let));
      (uniform ? scalar : data).insert(n->buffer.get());
      for (const auto& i : n->indices)
        visit(i);
    }
    void visit_Parallel(const Parallel* n) override {
      ++parallel;
      IRVisitor::visit_Parallel(n);
      --parallel;
    }
    void visit_buffer_use(const BufferPtr& b) override { data.insert(b.get()); }
  } uses;
  uses.visit_kernel(k);
  std::set<const Buffer*> out;
  for (const Buffer* b : uses.scalar)
    if (!uses.data.count(b))
      out.insert(b);
  return out;
}

class SharedUse : public IRVisitor {
public:
  bool reads = false, writes = false;
  std::vector<const Buffer*> fragments;

protected:
  void visit_Load(const Load* l) override {
    reads = reads || l->buffer->scope == MemScope::Shared;
    if (l->buffer->scope == MemScope::Fragment)
      fragments.push_back(l->buffer.get());
    IRVisitor::visit_Load(l);
  }
  void visit_Store(const Store* s) override {
    writes = writes || s->buffer->scope == MemScope::Shared;
    if (s->buffer->scope == MemScope::Fragment)
      fragments.push_back(s->buffer.get());
    IRVisitor::visit_Store(s);
  }
};

bool is_producer(const Stmt& s) {
  auto* c = s->as<Copy>();
  return c && c->src.buffer->scope == MemScope::Global && c->dst.buffer->scope == MemScope::Shared;
}

} // namespace

// ---- pipelined loops -------------------------------------------------------------------------
//
// The copies at the top level of the body that fill shared buffers from global memory are the
// producers; the rest is the consumer. With S stages: a prologue issues iterations 0..S-2 (one
// cp.async group each); iteration i first issues iteration i+S-1 into the stage consumed at
// i-1, commits, waits until at most S-1 groups are in flight (iteration i's group is then
// complete), synchronizes, consumes stage i % S, and synchronizes again so the next
// iteration may overwrite it. Empty groups keep the count uniform in the tail.
// All producer copies of one iteration form ONE group (they do not commit their own): the
// wait counts iterations, and a per-copy commit would make it wait for the copies issued
// only one iteration earlier.
// Loop versioning of the producers' bounds tests. A tile copy tests once per iteration
// whether its tile is interior (cp_async_interior); the branch, its 64-bit setup and the
// checked path's addresses, kept live across the loop, cost about a fifth of the main loop's
// instructions in the 128x128 gemm (H200: 0.39x -> 0.49x cuBLAS at 4096^3 without them). When
// the copy's offsets are affine in the loop variable, the tiles of all iterations are interior
// iff the first and the last are (each bound is linear in the variable, so the in-bounds
// iterations form an interval). Blocks for which that holds, in the vectorized kernel, run a
// copy of the loop without the tests; the others run the loop as before.
Expr CudaEmitter::loop_interior(const Copy* c, const For* f) const {
  Expr inside = cp_async_interior(c);
  if (!inside)
    return nullptr;
  const passes::TileVars kv{{f->var.get(), passes::Interval::point(0)}};
  for (const auto& o : c->src.offsets)
    if (passes::mentions(o, kv) && !passes::linearize(o, kv))
      return nullptr;
  if (!passes::mentions(inside, kv))
    return inside;
  const Expr last = Binary::make(BinaryOp::Sub, Binary::make(BinaryOp::Add, f->start, f->extent),
                                 make_i64(1));
  return simplify(Binary::make(BinaryOp::And, substitute(inside, {{f->var.get(), f->start}}),
                               substitute(inside, {{f->var.get(), last}})));
}

CudaEmitter::PipelineBody CudaEmitter::split_pipeline_body(const For* f) const {
  PipelineBody p;
  if (auto* q = f->body->as<Seq>())
    p.body = q->stmts;
  else
    p.body = {f->body};
  bool let_seen = false;
  for (const auto& s : p.body) {
    if (s->as<LetStmt>())
      let_seen = true;
    if (is_producer(s)) {
      // A producer whose start index reads shared memory (ids another op of the loop fills)
      // cannot be issued iterations ahead: the loop runs in order.
      p.hoistable = p.hoistable && !let_seen && !copy_index_reads_shared(s->as<Copy>());
      p.producers.push_back(s);
    } else {
      p.consumers.push_back(s);
    }
  }
  return p;
}

void CudaEmitter::emit_pipelined(const For* f, int64_t stages) {
  PipelineBody split = split_pipeline_body(f);
  std::vector<Stmt>& body = split.body;
  std::vector<Stmt>& producers = split.producers;
  std::vector<Stmt>& consumers = split.consumers;
  const bool hoistable = split.hoistable;
  // Producers nested deeper (inside an `if`) or after a `let` they might use are not hoisted.
  if (producers.empty() || !hoistable) {
    producers.clear();
    consumers = body;
    stages = 1;
  }
  const bool async = t_.gpu.async_copy != AsyncCopy::None; // TMA targets have cp.async
  if (!async)
    stages = 1;
  if (smem_dirty_ || smem_read_ || async_pending_)
    barrier();
  const std::string v = name(f->var->name);
  const std::string S = std::to_string(stages);
  // wgmma reads shared memory through the async proxy: the threads' cp.async writes (generic
  // proxy) need fence.proxy.async between their wait and the barrier before the gemm.
  struct WgmmaFinder : IRVisitor {
    const CudaEmitter* e = nullptr;
    bool found = false;
    void visit_Gemm(const Gemm* g) override { found = found || e->wgmma_gemm(g); }
  } finder;
  finder.e = this;
  for (const auto& s : consumers)
    finder.visit(s);
  const bool wgmma_reads = finder.found;
  auto settle = [&](int pending) {
    if (async) // targets without asynchronous copies (HIP) wrote the tiles with plain stores
      line(need("tg_cp_async_wait") + "<" + std::to_string(pending) + ">();");
    if (wgmma_reads)
      line(need("tg_fence_proxy_async") + "(); // the async proxy (wgmma) reads these copies");
    line(sync_threads());
  };
  auto issue = [&](const std::string& stage) {
    for (const auto& p : producers) {
      stage_expr_[p->as<Copy>()->dst.buffer.get()] = stage;
      op_comment(p);
      copy_global_to_shared(p->as<Copy>(), async, /*commit=*/false);
    }
  };
  // Producers whose tiles are interior in every iteration of blocks that pass one test.
  std::set<const Copy*> interior;
  Expr all_interior;
  if (stages >= 2) {
    for (const auto& p : producers) {
      const Copy* c = p->as<Copy>();
      Expr q = cp_async_vec_ok(c, async) ? loop_interior(c, f) : nullptr;
      if (!q)
        continue;
      interior.insert(c);
      all_interior = all_interior ? Binary::make(BinaryOp::And, all_interior, q) : q;
    }
  }
  // Producers of rows of any width (tg_kernel<2>): staged chunks, shifted before the consumers.
  std::vector<const Copy*> shifted;
  if (stages >= 2)
    for (const auto& p : producers)
      if (shift_slots_.count(p->as<Copy>()) && slots_.at(p->as<Copy>()->dst.buffer.get()).stages == stages)
        shifted.push_back(p->as<Copy>());
  shift_active_ = std::set<const Copy*>(shifted.begin(), shifted.end());
  open("");
  // A split loop (np_split_): this block runs iterations [tg_kb, tg_kb + tg_n) of the tile's
  // tg_nk, part tg_piece of tg_p.tg_parts (the whole loop where tg_parts < 2).
  const bool part = f == np_split_loop_;
  const std::string first = expr(f->start, kAdd) + (part ? " + tg_kb" : "");
  if (part) {
    line("// split loop (docs/cuda-backend.md \"Split loops\"): part tg_piece of tg_p.tg_parts runs");
    line("// iterations [tg_piece * n / parts, (tg_piece + 1) * n / parts) of the tile's n");
    line("const int64_t tg_nk = " + need("tg_max_i64") + "(" + expr(f->extent) + ", 0);");
    line("const int64_t tg_kb = tg_p.tg_parts > 1 ? tg_piece * tg_nk / tg_p.tg_parts : 0;");
    line("const int64_t tg_n = tg_p.tg_parts > 1 ? (tg_piece + 1) * tg_nk / tg_p.tg_parts - tg_kb : tg_nk;");
  } else {
    line("const int64_t tg_n = " + expr(f->extent) + ";");
  }
  auto emit_loop = [&] {
    if (stages >= 2) {
      line("// pipeline prologue: iterations 0.." + std::to_string(stages - 2) + " in flight");
      for (int64_t s = 0; s + 1 < stages; ++s) {
        open("if (" + std::to_string(s) + " < tg_n)");
        line("const int64_t " + v + " = " + first + " + " + std::to_string(s) + ";");
        issue(std::to_string(s));
        close();
        line(need("tg_cp_async_commit") + "();");
      }
    }
    open("for (int64_t tg_it = 0; tg_it < tg_n; ++tg_it)");
    if (stages >= 2) {
      // Iteration tg_it's group is complete once at most S-2 newer groups are in flight; the
      // barrier also tells every thread that iteration tg_it-1 is consumed, so its stage can be
      // refilled with iteration tg_it+S-1 while this one computes (one barrier per iteration).
      settle(static_cast<int>(stages - 2));
      open("");
      line("const int64_t tg_pf = tg_it + " + std::to_string(stages - 1) + ";");
      open("if (tg_pf < tg_n)");
      line("const int64_t " + v + " = " + first + " + tg_pf;");
      issue("tg_pf % " + S);
      close();
      close();
      line(need("tg_cp_async_commit") + "();");
    } else if (!producers.empty()) {
      line("const int64_t " + v + " = " + first + " + tg_it;");
      issue("0");
      if (async)
        line(need("tg_cp_async_commit") + "();");
      settle(0);
    }
    open("");
    line("const int64_t " + v + " = " + first + " + tg_it;");
    line("(void)" + v + ";");
    for (const auto& p : producers)
      stage_expr_[p->as<Copy>()->dst.buffer.get()] = stages >= 2 ? "tg_it % " + S : "0";
    for (const Copy* c : shifted) // the consumers read the shifted tiles in tg_kernel<2>
      shift_tiles_[c->dst.buffer.get()] = shift_slots_.at(c).tile;
    if (!shifted.empty()) {
      open("if constexpr (TG_VEC == 2)");
      line("// rows of any width: this iteration's staged chunks shifted into its tiles");
      for (const Copy* c : shifted)
        shift_realign(c);
      line(sync_threads());
      close();
    }
    async_pending_ = smem_dirty_ = smem_read_ = false;
    for (const auto& s : consumers)
      stmt(s);
    shift_tiles_.clear();
    close();
    if (stages < 2) {
      // One buffer: the next iteration's copies overwrite what this one read.
      line(sync_threads());
      async_pending_ = smem_dirty_ = smem_read_ = false;
    } else {
      // The next iteration's leading barrier orders this iteration's shared accesses.
      if (smem_dirty_ || async_pending_)
        barrier();
      async_pending_ = smem_dirty_ = false;
    }
    close();
    if (stages >= 2)
      line(need("tg_cp_async_wait") + "<0>();");
  };
  if (all_interior && !is_const_int(all_interior, 0)) {
    line("// every tile of the copies below lies inside its tensor in every iteration: a version");
    line("// of the loop without their bounds tests");
    // The conjuncts, each once (the copies share their M and N tests).
    std::vector<Expr> todo{simplify(all_interior)};
    std::set<std::string> seen;
    std::string cond = "TG_VEC";
    while (!todo.empty()) {
      Expr e = todo.back();
      todo.pop_back();
      if (auto* b = e->as<Binary>(); b && b->op == BinaryOp::And) {
        todo.push_back(b->b);
        todo.push_back(b->a);
      } else if (std::string c = expr(e, kAnd); seen.insert(c).second) {
        cond += " && " + c;
      }
    }
    open("if (" + cond + ")");
    const bool dirty = smem_dirty_, read = smem_read_, pending = async_pending_;
    interior_copies_ = interior;
    emit_loop();
    interior_copies_.clear();
    smem_dirty_ = dirty, smem_read_ = read, async_pending_ = pending;
    open_else();
    emit_loop();
    close();
  } else {
    emit_loop();
  }
  close();
  smem_read_ = true; // the last stage was read: a later write needs a barrier first
  for (const auto& p : producers)
    stage_expr_.erase(p->as<Copy>()->dst.buffer.get());
  shift_active_.clear();
}

// ---- parallel loops --------------------------------------------------------------------------

namespace {

// A band walk's operands (tg_walk_rows) may take 1 / kBandL2Share of the L2: at 27 and 40 MB of
// the H200's 60 MB bands ran 6% slower than the square group, at 5 MB 3.6-4.9% faster
// (CudaEmitter::tile_walk, bench/RESULTS.md).
constexpr int kBandL2Share = 8;

// Repitched or realigned copies instead of tg_kernel<4> in place where the TMA pipeline loads at
// least this many times the copies' traffic (tg_realigned; H200: from 2.4 up the copies won by
// 18-100%, and with every copy both ways 1.5 and 0.8 lost 28% and 82%; docs/cuda-backend.md
// "Repitched copies").
constexpr int kRepitchShare = 2;

// The global-memory loads of a statement, in order (emit_parallel's helpers).
std::vector<const Load*> global_loads(const Stmt& s) {
  class Loads : public IRVisitor {
  public:
    std::vector<const Load*> loads;

  protected:
    void visit_Load(const Load* l) override {
      if (l->buffer->scope == MemScope::Global)
        loads.push_back(l);
      IRVisitor::visit_Load(l);
    }
  } g;
  g.visit(s);
  return g.loads;
}

// True when e can be evaluated before a parallel loop's register loops, or inside those of
// `opened`: no let of the body, no other loop variable of the parallel loop, no load.
bool available(const Expr& e, const std::set<const Var*>& opened) {
  class Check : public IRVisitor {
  public:
    const std::set<const Var*>* opened = nullptr;
    bool ok = true;

  protected:
    void visit_VarRef(const VarRef* r) override {
      ok = ok && r->var->kind != VarKind::Let &&
           (r->var->kind != VarKind::ParallelVar || opened->count(r->var.get()));
    }
    void visit_Load(const Load*) override { ok = false; }
  } c;
  c.opened = &opened;
  c.visit(e);
  return c.ok;
}

} // namespace

void CudaEmitter::emit_parallel(const Parallel* p) {
  SharedUse use;
  use.visit(p->body);
  // A parallel that reads shared memory another op wrote (in another thread mapping) needs the
  // barrier even when it writes too.
  before_shared_access(use.reads, use.writes);
  // The points follow a fragment indexed by every variable, or the loop's own layout
  // (passes::parallel_driver, LayoutPlan::loops).
  const passes::ParallelDriver driver = passes::parallel_driver(*p);
  const auto& L = driver.buffer ? frag(driver.buffer) : loop_layout(p);
  if (auto vec = plan_.loop_vectors.find(p); !driver.buffer && vec != plan_.loop_vectors.end()) {
    emit_parallel_vector(p, L, vec->second);
    return;
  }
  std::vector<size_t> dim_of = driver.dim_of;
  if (!driver.buffer)
    for (size_t v = 0; v < p->vars.size(); ++v)
      dim_of.push_back(v);
  // Threads that hold the same points (a replicated layout) compute the same values; stores
  // to shared memory and tensors are left to one of them (`+=` would add twice).
  store_leader_ = replica_leader(L);
  const std::vector<const Load*> loads = global_loads(p->body);
  const std::vector<size_t> order = parallel_loop_order(p, loads);
  open("");
  for (size_t v = 0; v < p->vars.size(); ++v)
    line("const int tg_t_" + name(p->vars[v]->name) + " = " + thread_coord(L, dim_of[v]) + ";");
  declare_load_indices(p, loads, L, dim_of);
  for (size_t n = 0; n < order.size(); ++n) {
    const size_t v = order[n];
    std::string c = "tg_r_" + name(p->vars[v]->name);
    int64_t R = L.regs_of_dim(dim_of[v]);
    if (n + 1 == order.size())
      declare_thresholds(p, p->vars[v].get(), L, dim_of[v], L.shape[dim_of[v]], c);
    var_regs_[p->vars[v].get()] = {c, R};
    // A loop with its own layout indexes no fragment's registers by this variable: past a
    // few points per thread it stays a loop (2^20 points per thread would not compile).
    line(driver.buffer || R <= kMaxUnrolledParallelPoints ? "#pragma unroll" : "#pragma unroll 1");
    open("for (int " + c + " = 0; " + c + " < " + std::to_string(R) + "; ++" + c + ")");
    line("const int64_t " + name(p->vars[v]->name) + " = tg_t_" + name(p->vars[v]->name) + " + " +
         reg_coord(L, dim_of[v], c) + ";");
    line("(void)" + name(p->vars[v]->name) + ";");
    if (n + 1 < order.size())
      hoist_loads(p, loads, std::vector<size_t>(order.begin(), order.begin() + n + 1));
  }
  // A loop over part of its fragment (extent below the fragment's dim) skips the registers
  // past its extent: the register loops above run over the whole fragment.
  std::string part;
  for (size_t v = 0; v < p->vars.size(); ++v)
    if (cuda_const(p->extents[v]) < L.shape[dim_of[v]])
      part += (part.empty() ? "" : " && ") + name(p->vars[v]->name) + " < " +
              std::to_string(cuda_const(p->extents[v]));
  if (!part.empty())
    open("if (" + part + ")");
  parallel_body(p->body);
  if (!part.empty())
    close();
  store_leader_.clear();
  thresholds_.clear();
  dead_lets_.clear();
  load_indices_.clear();
  hoisted_loads_.clear();
  for (size_t v = 0; v < p->vars.size(); ++v) {
    close();
    var_regs_.erase(p->vars[v].get());
  }
  close();
}

// Global loads in a parallel loop over a fragment whose index along a dim is `rest + v`: v a
// loop variable (a thread coordinate tg_t_v plus a register coordinate, a constant once
// unrolled), rest free of the loop's variables and of lets. The index is spelled
// tg_base + (register coordinate) with tg_base = rest + tg_t_v computed once before the loops
// (v itself is a 64-bit sign extension of a 32-bit sum, which does not distribute: each element
// paid its own 64-bit address arithmetic). Where rest is provably >= 0 (ranges_), the bounds
// check 0 <= index < ext is exactly "register coordinate < clamp(ext - tg_base, 0, E)" (E: the
// fragment's extent along v's dim), one 32-bit compare with a constant; other dims keep tg_inb.
// gemm_bias_gelu's bias[bx * BN + j] in a 128x256 tile: 348 bytes of spills without this and
// the loop order below, none with both.
void CudaEmitter::declare_load_indices(const Parallel* p, const std::vector<const Load*>& loads,
                                       const layout::FragmentLayout& L, const std::vector<size_t>& dim_of) {
  passes::TileVars tile;
  for (const auto& v : p->vars)
    tile[v.get()] = passes::Interval{};
  int count = 0;
  for (const Load* l : loads)
    for (size_t d = 0; d < l->indices.size(); ++d) {
      const auto a = passes::linearize(l->indices[d], tile);
      if (!a || a->coeffs.size() != 1 || a->coeffs.begin()->second != 1)
        continue;
      if (!available(a->rest, {}))
        continue;
      size_t v = 0;
      while (p->vars[v].get() != a->coeffs.begin()->first)
        ++v;
      const std::string k = std::to_string(count++);
      const std::string base = "tg_base" + k, reg = reg_coord(L, dim_of[v], "tg_r_" + name(p->vars[v]->name));
      line("const int64_t " + base + " = " + expr(simplify(a->rest), kAdd) + " + tg_t_" + name(p->vars[v]->name) + "; // " +
           name(l->buffer->name) + "'s index " + std::to_string(d) + " less the register coordinate");
      LoadIndex li{base + " + (" + reg + ")", ""};
      const Expr nonneg = passes::prune_decided(Binary::make(BinaryOp::Le, make_i64(0), a->rest), ranges_);
      if (is_const_int(nonneg, 1)) {
        const std::string lim = "tg_bnd" + k;
        line("const int " + lim + " = (int)" + need("tg_min_i64") + "(" + need("tg_max_i64") + "(" +
             expr(l->buffer->shape[d], kAdd) + " - " + base + ", (int64_t)0), (int64_t)" +
             std::to_string(L.shape[dim_of[v]]) + "); // in bounds: register coordinate < " + lim);
        li.in_bounds = "(" + reg + ") < " + lim;
      }
      load_indices_[{l, d}] = li;
    }
}

// Global loads of a parallel body whose indices mention only the loop variables `open` (and no
// let), printed once where the last of those loops opens, before the inner loops: their value
// is the same in every inner iteration (the load is bounds-guarded, so it may run where the
// body would not have). ptxas kept a 128x256 f16 tile's bias values live across the inner loop
// otherwise (4 bytes of spills in gemm_bias_gelu; parallel_loop_order).
void CudaEmitter::hoist_loads(const Parallel* p, const std::vector<const Load*>& loads,
                              const std::vector<size_t>& open) {
  std::set<const Var*> opened;
  for (size_t v : open)
    opened.insert(p->vars[v].get());
  const passes::TileVars last{{p->vars[open.back()].get(), passes::Interval{}}};
  for (const Load* l : loads) {
    bool ok = !hoisted_loads_.count(l), newest = false;
    for (const auto& e : l->indices) {
      ok = ok && available(e, opened);
      newest = newest || passes::mentions(e, last);
    }
    if (!ok || !newest)
      continue; // needs an inner loop's variable or a let, or could have gone further out
    int prec = 0;
    const std::string v = "tg_ld" + std::to_string(hoisted_loads_.size());
    line("const auto " + v + " = " + print_load(l, prec) + "; // " + name(l->buffer->name) +
         ": the same in every iteration of the loops inside");
    hoisted_loads_[l] = v;
  }
}

// The nesting of a parallel loop's register loops (outermost first): the spec's order, except
// that variables some global load's indices mention go outside those it does not mention
// (gemm_bias_gelu's bias[bx * BN + j]: j outside i). Fully unrolled, the load is then live for
// one inner loop instead of the whole loop nest: ptxas kept all 64 of a 128x256 tile's bias
// values of a thread (and their 64-bit bounds checks) live beside 128 accumulators and spilled
// 348 bytes; in this order, none.
std::vector<size_t> CudaEmitter::parallel_loop_order(const Parallel* p,
                                                     const std::vector<const Load*>& loads) const {
  std::vector<size_t> order(p->vars.size());
  for (size_t v = 0; v < order.size(); ++v)
    order[v] = v;
  std::vector<bool> outer(p->vars.size(), false);
  bool any = false;
  for (const Load* l : loads) {
    std::vector<bool> m(p->vars.size(), false);
    size_t count = 0;
    for (size_t v = 0; v < p->vars.size(); ++v) {
      const passes::TileVars tv{{p->vars[v].get(), passes::Interval{}}};
      for (const auto& e : l->indices)
        m[v] = m[v] || passes::mentions(e, tv);
      count += m[v];
    }
    if (count == 0 || count == p->vars.size())
      continue; // invariant of every register loop, or varying with all: no order helps
    for (size_t v = 0; v < m.size(); ++v)
      outer[v] = outer[v] || m[v];
    any = true;
  }
  if (!any)
    return order;
  std::stable_partition(order.begin(), order.end(), [&](size_t v) { return outer[v]; });
  return order;
}

// Before the innermost loop of parallel p: the bound of each threshold comparison in its body
// (passes/IndexThreshold.h) on the register coordinate r of the innermost variable j =
// tg_t_j + r, clamped to [0, E] (r lies in [0, E): clamping changes no outcome), and the
// comparisons' new spelling for print_binary: a constant per element against a 32-bit value
// per row. Attention's mask `kv >= S || kv > q` becomes one compare and one select per score
// instead of 64-bit adds and two 64-bit compares.
void CudaEmitter::declare_thresholds(const Parallel* p, const Var* inner, const layout::FragmentLayout& L,
                                     size_t d, int64_t extent, const std::string& reg) {
  const std::string t = "tg_t_" + name(inner->name), r = reg_coord(L, d, reg);
  for (const auto& [b, th] : passes::find_index_thresholds(p->body, inner)) {
    const std::string lim = "tg_lim" + std::to_string(thresholds_.size());
    int prec = 0;
    line("// " + CFamilyPrinter::print_binary(b, prec) + ": register coordinate " +
         (th.ge ? ">= " : "< ") + lim);
    line("const int " + lim + " = (int)" + need("tg_min_i64") + "(" + need("tg_max_i64") + "(" +
         expr(th.bound, kAdd) + " - " + t + ", (int64_t)0), (int64_t)" + std::to_string(extent) +
         ");");
    thresholds_[b] = "(" + r + ")" + (th.ge ? " >= " : " < ") + lim;
  }
  // Lets that only the replaced comparisons read (the mask's q and kv) are not emitted.
  if (thresholds_.empty())
    return;
  struct Uses : ParallelBodyWalker {
    const std::map<const Binary*, std::string>* skip = nullptr;
    std::set<const Var*> used;

  protected:
    void visit_Binary(const Binary* b) override {
      if (!skip->count(b))
        IRVisitor::visit_Binary(b);
    }
    void visit_VarRef(const VarRef* r) override { used.insert(r->var.get()); }
  } u;
  u.skip = &thresholds_;
  u.walk(p->body);
  for (const auto& [v, value] : u.lets)
    if (!u.used.count(v))
      dead_lets_.insert(v);
}

std::string CudaEmitter::print_binary(const Binary* b, int& prec) {
  if (auto it = thresholds_.find(b); it != thresholds_.end()) {
    prec = kRel;
    return it->second;
  }
  return CFamilyPrinter::print_binary(b, prec);
}

void CudaEmitter::parallel_body(const Stmt& s) {
  if (!s)
    return;
  if (auto* q = s->as<Seq>()) {
    for (const auto& c : q->stmts)
      parallel_body(c);
    return;
  }
  if (auto* l = s->as<LetStmt>()) {
    if (!dead_lets_.count(l->var.get()))
      line("const " + type_name(l->var->type) + " " + name(l->var->name) + " = " + expr(l->value) +
           ";");
    return;
  }
  if (auto* i = s->as<IfThenElse>()) {
    open("if (" + expr(i->cond) + ")");
    parallel_body(i->then_case);
    if (i->else_case) {
      open_else();
      parallel_body(i->else_case);
    }
    close();
    return;
  }
  auto* st = s->as<Store>();
  TG_ASSERT(st, "CUDA emitter: unexpected statement in a parallel body");
  const Buffer& b = *st->buffer;
  // A vector store of a value rounded to the buffer's type converts once, by the store's
  // conversion: print the value without the rounding (printing it first would request the
  // tg_round_* helper for nothing, an unused function nvcc warns about, #177-D).
  const Expr* printed = &st->value;
  if (vector_stores_.count(st))
    if (auto* c = st->value->as<Cast>(); c && c->type == b.dtype && b.dtype.is_narrow_float() &&
                                          (c->value->type == DType::f32() || c->value->type == b.dtype))
      printed = &c->value;
  std::string value = expr(*printed);
  switch (b.scope) {
  case MemScope::Fragment: {
    std::string r = fragment_reg(&b, st->indices);
    if (st->op == StoreOp::Add)
      value = to_float(r, b.dtype) + " + " + expr(st->value, kAdd + 1);
    line(r + " = " + from_float(value, b.dtype) + ";");
    return;
  }
  case MemScope::Global: {
    std::vector<std::string> idx;
    for (const auto& i : st->indices)
      idx.push_back(expr(i));
    std::string at = name(b.name) + "[" + global_index(b, idx) + "]";
    if (st->op == StoreOp::Add)
      value = to_float(at, b.dtype) + " + " + expr(st->value, kAdd + 1);
    line("if (" + (store_leader_.empty() ? "" : store_leader_ + " && ") + global_in_bounds(b, idx) +
         ") " + at + " = " + from_float(value, b.dtype) + ";");
    return;
  }
  case MemScope::Shared: {
    if (auto v = vector_stores_.find(st); v != vector_stores_.end()) { // stored after the run
      line(v->second + " = " + from_float(value, b.dtype) + ";");
      return;
    }
    std::string row = st->indices.size() >= 2 ? shared_index(st->indices[st->indices.size() - 2]) : "0";
    std::string at = shared_ptr(&b) + "[" + shared_offset(&b, row, shared_index(st->indices.back())) + "]";
    if (st->op == StoreOp::Add)
      value = to_float(at, b.dtype) + " + " + expr(st->value, kAdd + 1);
    line((store_leader_.empty() ? "" : "if (" + store_leader_ + ") ") + at + " = " +
         from_float(value, b.dtype) + ";");
    return;
  }
  case MemScope::Local: {
    std::string lin = expr(st->indices[0]);
    for (size_t d = 1; d < st->indices.size(); ++d)
      lin = "(" + lin + ") * " + std::to_string(cuda_const(b.shape[d])) + " + " + expr(st->indices[d]);
    std::string at = name(b.name) + "[" + lin + "]";
    if (st->op == StoreOp::Add)
      value = to_float(at, b.dtype) + " + " + expr(st->value, kAdd + 1);
    line(at + " = " + from_float(value, b.dtype) + ";");
    return;
  }
  }
}

// ---- the file --------------------------------------------------------------------------------

std::string CudaEmitter::helpers_source() const {
  std::string s;
  auto has = [&](const char* h) { return helpers_.count(h) > 0; };
  s += "#define TG_DEV static __device__ __forceinline__\n";
  s += "#define TG_HD static __host__ __device__ __forceinline__\n\n";
  if (has("tg_inb"))
    s += "/* 0 <= i < n, in one unsigned comparison (n >= 0). */\n"
         "TG_HD bool tg_inb(int64_t i, int64_t n) { return (uint64_t)i < (uint64_t)n; }\n";
  if (has("tg_ex2"))
    s += "/* 2^x in one MUFU.EX2 (ex2.approx.ftz: relative error ~2^-22; results below 2^-126\n"
         " * flush to 0). exp2f adds a denormal-range fix-up around the same instruction. */\n"
         "TG_DEV float tg_ex2(float x) {\n  float y;\n"
         "  asm(\"ex2.approx.ftz.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x));\n  return y;\n}\n";
  if (has("tg_round_e4m3"))
    s += "/* f32 rounded to the nearest e4m3 value (round to nearest even, satfinite), held as f32. */\n"
         "TG_DEV float tg_round_e4m3(float f) { return (float)__nv_fp8_e4m3(f); }\n";
  if (has("tg_round_e5m2"))
    s += "/* f32 rounded to the nearest e5m2 value (round to nearest even, satfinite), held as f32. */\n"
         "TG_DEV float tg_round_e5m2(float f) { return (float)__nv_fp8_e5m2(f); }\n";
  if (has("tg_round_bf16"))
    s += "/* f32 rounded to the nearest bf16 value (ties to even), held as f32. */\n"
         "TG_DEV float tg_round_bf16(float f) { return __bfloat162float(__float2bfloat16_rn(f)); }\n";
  if (has("tg_round_f16"))
    s += "/* f32 rounded to the nearest f16 value (ties to even), held as f32. */\n"
         "TG_DEV float tg_round_f16(float f) { return __half2float(__float2half_rn(f)); }\n";
  if (has("tg_swizzle"))
    s += "/* Shared-memory XOR swizzle on element offsets: the 16-byte chunk index (bits M..M+B-1)\n"
         " * is XORed with bits M+S..M+S+B-1 (layout/Layout.h). */\n"
         "template <int B, int M, int S> TG_DEV int tg_swizzle(int o) {\n"
         "  return o ^ (((o >> (M + S)) & ((1 << B) - 1)) << M);\n}\n";
  if (has("tg_cp_async16"))
    s += "/* 16-byte global -> shared copy, asynchronous; bytes past src_bytes are zero-filled. */\n"
         "TG_DEV void tg_cp_async16(void* smem, const void* gmem, int src_bytes) {\n"
         "  unsigned s = (unsigned)__cvta_generic_to_shared(smem);\n"
         "  asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\\n\" ::\"r\"(s), \"l\"(gmem), \"r\"(src_bytes) : \"memory\");\n}\n";
  if (has("tg_cp_async4"))
    s += "/* 4-byte global -> shared copy, asynchronous (through L1: .cg takes 16 bytes only); bytes\n"
         " * past src_bytes are zero-filled. */\n"
         "TG_DEV void tg_cp_async4(void* smem, const void* gmem, int src_bytes) {\n"
         "  unsigned s = (unsigned)__cvta_generic_to_shared(smem);\n"
         "  asm volatile(\"cp.async.ca.shared.global [%0], [%1], 4, %2;\\n\" ::\"r\"(s), \"l\"(gmem), \"r\"(src_bytes) : \"memory\");\n}\n";
  if (has("tg_shift_chunk"))
    s += "/* Bytes s .. s + 15 (s < 16) of the 32 bytes lo, hi: a 16-byte run of a row that starts s bytes\n"
         " * into the aligned chunk lo (tg_kernel<2>). Selects, not a switch: a warp's threads shift\n"
         " * rows that start at different offsets. */\n"
         "TG_DEV uint4 tg_shift_chunk(uint4 lo, uint4 hi, unsigned s) {\n"
         "  const uint32_t w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};\n"
         "  uint32_t v[6], u[5];\n"
         "#pragma unroll\n"
         "  for (int i = 0; i < 6; ++i)\n"
         "    v[i] = (s & 8) ? w[i + 2] : w[i];\n"
         "#pragma unroll\n"
         "  for (int i = 0; i < 5; ++i)\n"
         "    u[i] = (s & 4) ? v[i + 1] : v[i];\n"
         "  const unsigned b = 8 * (s & 3);\n"
         "  return make_uint4(__funnelshift_r(u[0], u[1], b), __funnelshift_r(u[1], u[2], b),\n"
         "                    __funnelshift_r(u[2], u[3], b), __funnelshift_r(u[3], u[4], b));\n}\n";
  if (has("tg_widen_fp8x16"))
    s += "/* Sixteen FP8 values (one 16-byte chunk, element 0 in the lowest byte) to sixteen f16\n"
         " * values, exactly (every e4m3 and e5m2 value is an f16 value): one cvt per pair on sm_89+,\n"
         " * emulated by cuda_fp8.h before. */\n"
         "template <__nv_fp8_interpretation_t I> TG_DEV void tg_widen_fp8x16(uint4 v, uint4& lo, uint4& hi) {\n"
         "  const uint32_t w[4] = {v.x, v.y, v.z, v.w};\n"
         "  uint32_t h[8];\n"
         "#pragma unroll\n"
         "  for (int i = 0; i < 8; ++i) {\n"
         "    const __half2_raw r = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)(w[i / 2] >> (16 * (i % 2))), I);\n"
         "    h[i] = (uint32_t)r.x | ((uint32_t)r.y << 16);\n"
         "  }\n"
         "  lo = make_uint4(h[0], h[1], h[2], h[3]);\n"
         "  hi = make_uint4(h[4], h[5], h[6], h[7]);\n}\n";
  if (has("tg_cp_async_commit") || has("tg_cp_async_wait"))
    s += "TG_DEV void tg_cp_async_commit() { asm volatile(\"cp.async.commit_group;\\n\" ::: \"memory\"); }\n"
         "/* Waits until at most N committed groups are still in flight. */\n"
         "template <int N> TG_DEV void tg_cp_async_wait() {\n"
         "  asm volatile(\"cp.async.wait_group %0;\\n\" ::\"n\"(N) : \"memory\");\n}\n";
  if (has("tg_ldmatrix_x4"))
    s += "/* Four 8x8 b16 matrices from shared memory; lane l gives the row address of matrix l / 8. */\n"
         "TG_DEV void tg_ldmatrix_x4(uint32_t (&r)[4], const void* p) {\n"
         "  unsigned a = (unsigned)__cvta_generic_to_shared(p);\n"
         "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\\n\"\n"
         "               : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(a) : \"memory\");\n}\n";
  if (has("tg_ldmatrix_x4_trans"))
    s += "/* Like tg_ldmatrix_x4, each matrix transposed on the way. */\n"
         "TG_DEV void tg_ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {\n"
         "  unsigned a = (unsigned)__cvta_generic_to_shared(p);\n"
         "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\\n\"\n"
         "               : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(a) : \"memory\");\n}\n";
  for (const char* ty : {"bf16", "f16"}) {
    std::string n = std::string("tg_mma_") + ty;
    if (has(n.c_str()))
      s += "/* D = A * B + D, m16n8k16, " + std::string(ty) + " inputs, f32 accumulators. */\n"
           "TG_DEV void " + n + "(float& d0, float& d1, float& d2, float& d3, const uint32_t (&a)[4],\n"
           "                        uint32_t b0, uint32_t b1) {\n"
           "  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32." + ty + "." + ty + ".f32 \"\n"
           "               \"{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\\n\"\n"
           "               : \"+f\"(d0), \"+f\"(d1), \"+f\"(d2), \"+f\"(d3)\n"
           "               : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3]), \"r\"(b0), \"r\"(b1));\n}\n";
  }
  if (has("tg_pack_bf16"))
    s += "TG_DEV uint32_t tg_pack_bf16(__nv_bfloat16 lo, __nv_bfloat16 hi) {\n"
         "  __nv_bfloat162 v = __halves2bfloat162(lo, hi);\n  return *reinterpret_cast<uint32_t*>(&v);\n}\n";
  if (has("tg_pack_f16"))
    s += "TG_DEV uint32_t tg_pack_f16(__half lo, __half hi) {\n"
         "  __half2 v = __halves2half2(lo, hi);\n  return *reinterpret_cast<uint32_t*>(&v);\n}\n";
  s += typed_helpers_source();
  return s + "\n";
}

std::string CudaEmitter::typed_helpers_source() const {
  std::string s;
  // Typed helpers of the shared printer (min/max/cdiv/floordiv/floormod/abs).
  for (const auto& h : helpers_) {
    auto us = h.rfind('_');
    if (h.rfind("tg_", 0) != 0 || us == std::string::npos)
      continue;
    std::string op = h.substr(3, us - 3), ty = h.substr(us + 1);
    std::string T = ty == "f32" ? "float" : ty == "f64" ? "double" : ty == "i64" ? "int64_t"
                  : ty == "i32" ? "int32_t" : ty == "i8" ? "int8_t" : ty == "u32" ? "uint32_t"
                  : ty == "u64" ? "uint64_t" : "";
    if (T.empty())
      continue;
    if (ty[0] == 'u') {
      s += unsigned_helper_text("TG_HD ", h, op, T, ty == "u32" ? 32 : 64);
      continue;
    }
    std::string sig = "TG_HD " + T + " " + h;
    if (op == "min")
      s += sig + "(" + T + " a, " + T + " b) { return a < b ? a : b; }\n";
    else if (op == "max")
      s += sig + "(" + T + " a, " + T + " b) { return a > b ? a : b; }\n";
    else if (op == "abs")
      s += sig + "(" + T + " a) { return a < 0 ? -a : a; }\n";
    else if (op == "shl" || op == "shr") // docs/spec.md "Bitwise operators"
      s += shift_helper_text("TG_HD ", h, op == "shl" ? BinaryOp::Shl : BinaryOp::Shr, T,
                             ty == "i64" ? "uint64_t" : "uint32_t", "",
                             ty == "i8" ? 8 : ty == "i32" ? 32 : 64);
    else if (op == "cdiv")
      s += sig + "(" + T + " a, " + T + " b) { " + T + " q = a / b; return q + ((a % b != 0) & ((a < 0) == (b < 0))); }\n";
    else if (op == "floordiv")
      s += sig + "(" + T + " a, " + T + " b) { " + T + " q = a / b; return q - ((a % b != 0) & ((a < 0) != (b < 0))); }\n";
    else if (op == "floormod")
      s += sig + "(" + T + " a, " + T + " b) { " + T + " r = a % b; return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r; }\n";
    // every divisor (divisor_needs_guard): a / 0 = 0, a % 0 = a, INT_MIN / -1 wraps
    else if (op == "floordiv_any" || op == "cdiv_any")
      s += sig + "(" + T + " a, " + T + " b) {\n  if (b == 0) return 0;\n  if (b == -1) return (" + T + ")(0u - (u" + T +
           ")a);\n  " + T + " q = a / b;\n  return q " + (op == "cdiv_any" ? "+ ((a % b != 0) & ((a < 0) == (b < 0)))" : "- ((a % b != 0) & ((a < 0) != (b < 0)))") + ";\n}\n";
    else if (op == "floormod_any")
      s += sig + "(" + T + " a, " + T + " b) {\n  if (b == 0) return a;\n  if (b == -1) return 0;\n  " + T +
           " r = a % b;\n  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}\n";
  }
  return s;
}

// The kernel parameters as locals. [[maybe_unused]]: a kernel may not read them all (a
// warp-specialized kernel's producer reads tensors through tensor maps), and nvcc's front end
// warns about an unread __restrict__ pointer (#550) even after a (void) cast.
void CudaEmitter::kernel_preamble(bool grid_indices) {
  for (const auto& t : k_.tensors) {
    bool ro = t->access == Access::Read;
    line("[[maybe_unused]] " + std::string(ro ? "const " : "") + storage_type_name(t->dtype) +
         "* __restrict__ " + name(t->name) + " = tg_p." + name(t->name) + ";");
  }
  for (const auto& d : k_.dims)
    if (d.var->kind == VarKind::Dim)
      line("[[maybe_unused]] const int64_t " + name(d.var->name) + " = tg_p." + name(d.var->name) + ";");
  for (const auto& s : k_.scalars)
    line("[[maybe_unused]] const " + type_name(s->type) + " " + name(s->name) + " = tg_p." +
         name(s->name) + ";");
  if (!grid_indices)
    return;
  const char* axes[] = {"x", "y", "z"};
  for (size_t i = 0; i < k_.grid.size(); ++i)
    line("int64_t " + name(k_.grid[i].index->name) + " = (int64_t)blockIdx." + axes[i] + ";");
  if (!folds_grids())
    return;
  // A grid over CUDA's limits runs folded (tg_setup, tg_run): tg_kernel<0>'s blocks along x,
  // numbered from tg_fold[2], x fastest. The test is false at compile time for every other
  // width, whose code stays what it was.
  const std::string g0 = "tg_p.tg_fold[0]", g1 = "tg_p.tg_fold[1]";
  const std::string decoded[3] = {"tg_b % " + g0, "tg_b / " + g0 + " % " + g1,
                                  "tg_b / " + g0 + " / " + g1};
  open("if (TG_VEC == 0 && " + g0 + " > 0)");
  line("const int64_t tg_b = tg_p.tg_fold[2] + (int64_t)blockIdx.x;");
  for (size_t i = 0; i < k_.grid.size(); ++i)
    line(name(k_.grid[i].index->name) + " = " + decoded[i] + ";");
  close();
}

std::string CudaEmitter::kernel_body() {
  out_.str("");
  indent_ = 1;
  // The split join declares a static __shared__ word (tg_split_arrival), which the compiler
  // places before the dynamic block: with 128-byte alignment the block then starts 128 bytes
  // into the window, and wgmma reads a 128-byte-swizzled tile with the swizzle of its address
  // bits (a 1024-byte pattern), so every wgmma operand came out permuted (the dequant GEMMs'
  // M > 16 class on sm_90a, H100 2026-12-06: errors 181 to 2.6e4 times the bound, memcheck and
  // racecheck clean). 1024 keeps the block where the swizzle expects it.
  line(std::string("extern __shared__ __align__(") + (np_split_ ? "1024" : "128") +
       ") unsigned char tg_smem[];");
  line("const int tg_tid = (int)threadIdx.x;");
  line("(void)tg_smem; (void)tg_tid;");
  kernel_preamble();
  if (np_split_) {
    const std::string bx = name(k_.grid[0].index->name);
    line("// split loop (docs/cuda-backend.md \"Split loops\"): with tg_parts > 1 the launch's x extent is");
    line("// the grid's times tg_parts, the parts of a tile adjacent");
    line("int64_t tg_piece = 0;");
    open("if (tg_p.tg_parts > 1)");
    line("tg_piece = " + bx + " % tg_p.tg_parts;");
    line(bx + " /= tg_p.tg_parts;");
    close();
  }
  if (t_.gpu.dependent_launch)
    emit_launch_order(); // nothing above touches global memory
  stmt(k_.body);
  return out_.str();
}

std::string CudaEmitter::kernel_text() {
  const std::string body = kernel_body();
  std::ostringstream os;
  os << "/* TG_VEC: the widest vector, in bytes, every tensor allows (16, 4 or 0): each pointer is\n"
        " * aligned to it and each row is a whole number of such chunks (checked by the host code\n"
        " * below), so global tiles move as vectors of that size; 0 moves elements one by one. */\n";
  if (shift_smem_bytes_ > 0)
    os << "/* TG_VEC 2: pointers 16-byte aligned, rows of any width: the pipelined copies load the\n"
          " * aligned 16-byte chunks that hold each tile row and shift them into place; the rest moves\n"
          " * element by element. */\n";
  // Minimum 1 block per SM: without it ptxas may cap registers for an occupancy it guesses
  // (168 per thread on sm_8x for 128 threads) and spill the attention accumulators.
  os << "template <int TG_VEC>\n__global__ void __launch_bounds__(" << threads_
     << ", 1) tg_kernel(const tg_params tg_p) {\n"
     << body << "}\n";
  return os.str();
}

std::string CudaEmitter::run() {
  plan_deferred_sums();
  plan_rotation();
  plan_memory();
  if (!plan_.tma_loops.empty()) {
    // Two consumer groups duplicate the private shared memory; without room, one group.
    auto& tp = plan_.tma_loops.begin()->second;
    if (tp.groups > 1 && smem_bytes_ + 1024 > t_.gpu.smem_per_block) {
      plan_.notes.push_back("one consumer group: " + std::to_string(tp.groups) +
                            " would need " + std::to_string(smem_bytes_ + 1024) +
                            " bytes of shared memory");
      tp.groups = 1;
      plan_rotation();
      plan_memory();
    } else if (tp.groups > 1) {
      plan_.notes.push_back(std::to_string(tp.groups) + " consumer groups (ping-pong): each takes "
                            "alternate tiles from the same stages; " +
                            std::to_string(group_bytes_) + " private shared bytes each");
    }
  }
  if (!plan_.tma_loops.empty()) {
    ws_loop_ = plan_.tma_loops.begin()->first->as<For>();
    ws_pipe_ = plan_.tma_loops.begin()->second;
    dynamic_tiles_ = passes::ws_dynamic_tiles(k_, plan_);
    split_ = passes::ws_split_join(k_, plan_);
    if (split_)
      plan_.notes.push_back("split tail: where a launch's last wave is at most half full and tiles run 32 "
                            "iterations or more, tg_kernel_ws_split runs its tiles in up to 64 parts each, joined by "
                            "the spec's combine in a tree of groups of " + std::to_string(kSplitGroup) + " (" +
                            std::to_string(split_state_bytes()) +
                            " bytes per part through the stream's workspace)");
    for (const auto* list : {&ws_pipe_.prologue, &ws_pipe_.producers})
      for (const StmtNode* s : *list)
        tma_maps_.push_back({s->as<Copy>(), "tg_tm_" + name(s->as<Copy>()->dst.buffer->name)});
    plan_accumulator_clear();
    walk_ = tile_walk();
  }
  plan_epilogue_store(); // the epilogue's staging tile (TMA store, or 16-byte rows without TMA)
  plan_pitched_tensors(); // after the store's plan: tensors that take repitched copies
  // Kernels first: they record which helpers are needed.
  std::string kernels;
  if (ws()) {
    kernels = ws_kernel_text();
    if (split_)
      kernels += "\n" + ws_kernel_text(true);
    // Tensors TMA cannot describe (misaligned, empty) run the same tiles on the sm_80 path of
    // the first fallback target, compiled into this file as tg_kernel<TG_VEC>.
    narrow_copies_ = false;
    const Target* fb = t_.fallbacks.empty() ? nullptr : find_target(t_.fallbacks.front());
    std::ostringstream quiet;
    DiagEngine diag(quiet);
    // FP8 gemm operands widened to f16 for the fallback's mma.sync (LegalizeCuda) double its
    // tiles; where that does not fit, the fallback keeps them FP8 (FMA pipes, slower).
    std::vector<Kernel> candidates;
    if (fb) {
      candidates.push_back(passes::legalize_cuda(k_, *fb));
      candidates.push_back(k_);
    }
    for (const Kernel& fk : candidates) {
      auto fplan = passes::infer_layouts(fk, *fb, diag);
      if (!fplan)
        break;
      CudaEmitter f(fk, *fb, info_, std::move(*fplan));
      f.shift_ok_ = false; // rows of any width go through repitched copies here
      f.plan_deferred_sums();
      f.plan_memory();
      if (f.smem_bytes_ > fb->gpu.smem_per_block && &fk != &candidates.back())
        continue;
      kernels += "\n/* The fallback for tensors TMA cannot describe: " + fb->name + "'s lowering. */\n" +
                 f.kernel_text();
      helpers_.insert(f.helpers_.begin(), f.helpers_.end());
      fallback_smem_ = f.smem_bytes_;
      narrow_copies_ = f.narrow_copies_; // the TMA kernels' own copies are all 16-byte
      break;
    }
  } else {
    if (t_.backend == Backend::CUDA) {
      bool uniform = false;
      np_split_ = passes::np_split_join(k_, &np_split_loop_, &uniform);
      if (np_split_ && uniform)
        np_split_nk_host_ = expr(np_split_loop_->extent);
      if (np_split_)
        plan_.notes.push_back("split loop: where the grid leaves more than half of the GPU's resident blocks idle, each "
                              "tile's loop runs in up to 64 parts on adjacent blocks, joined by the spec's combine in a "
                              "tree of groups of " + std::to_string(kSplitGroup) + " (" +
                              std::to_string(split_state_bytes()) + " bytes per part through the stream's workspace)");
    }
    kernels = kernel_text();
  }

  // Host-side expressions (grid extents, tensor shapes) use the same printer.
  const char* axes[] = {"x", "y", "z"};
  out_.str("");
  indent_ = 1;
  for (size_t i = 0; i < 3; ++i)
    line("const int64_t tg_g" + std::string(axes[i]) + " = " +
         (i < k_.grid.size() ? expr(k_.grid[i].extent) : std::string("1")) + ";");
  std::string grid_code = out_.str();
  if (ws())
    loop_extent_host_ = expr(ws_loop_->extent);
  out_.str("");
  std::string host_dims;
  for (size_t i = 0; i < k_.dims.size(); ++i)
    host_dims += "  const int64_t " + name(k_.dims[i].var->name) + " = args->dims[" + std::to_string(i) +
                 "];\n  (void)" + name(k_.dims[i].var->name) + ";\n";
  std::string tma_setup = ws() ? tma_setup_source() : "";

  const std::string helpers = helpers_source() + hopper_helpers_source();
  // cuda_fp8.h only where FP8 types appear (the other files stay as they were).
  const bool fp8 = (kernels + helpers).find("__nv_fp8_") != std::string::npos;
  std::ostringstream os;
  os << header_comment() << "\n";
  os << "#include <cuda_runtime.h>\n#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n"
     << (fp8 ? "#include <cuda_fp8.h>\n" : "")
     << (ws() ? "#include <cuda.h> /* CUtensorMap and its enums only: nothing links libcuda */\n" : "")
     << "#include <math_constants.h>\n#include <stdint.h>\n\n#include \"tilegen/variant.h\"\n\n";
  os << "namespace {\n\n" << helpers;
  // Values fixed at instantiation, by name (generated code prints tile constants by name).
  for (const auto& [n, v] : k_.bindings)
    os << "[[maybe_unused]] constexpr int64_t " << name(n) << " = " << v << ";\n";
  os << "\n";
  os << "struct tg_params {\n";
  for (const auto& t : k_.tensors)
    os << "  " << (t->access == Access::Read ? "const " : "") << storage_type_name(t->dtype) << "* "
       << name(t->name) << ";\n";
  for (const auto& d : k_.dims)
    if (d.var->kind == VarKind::Dim)
      os << "  int64_t " << name(d.var->name) << ";\n";
  for (const auto& s : k_.scalars)
    os << "  " << type_name(s->type) << " " << name(s->name) << ";\n";
  os << "  int tg_unused;\n";
  os << "  int64_t tg_fold[3]; // a grid over CUDA's limits, run by tg_kernel<0> along x: its x and y\n"
        "                      // extents (0: not folded), and the first block of the launch\n";
  if (ws())
    os << "  int64_t tg_tiles[3]; // the spec's grid: tiles a persistent block walks\n";
  if (runtime_vec())
    os << "  int tg_vec; // TG_VEC of tg_kernel_ws: the widest vector the tensors its threads address allow\n";
  if (dynamic_tiles())
    os << "  unsigned* tg_sched; // the stream's tile counters {drawn, blocks done}, or NULL: fixed order\n";
  const TileWalk& walk = walk_;
  if (split_)
    os << "  unsigned char* tg_split; // the stream's split workspace (arrivals, then the parts' registers)\n";
  if (np_split_)
    os << "  unsigned char* tg_split; // the stream's split workspace (arrivals, then the parts' registers)\n"
          "  int64_t tg_parts;          // blocks per tile, each running part of its loop (< 2: whole)\n";
  if (split_ || walk.banded() || !np_split_nk_host_.empty())
    os << "  int64_t tg_nk;             // the pipelined loop's iterations (every tile's)\n";
  if (split_)
    os << "  int64_t tg_tail, tg_parts; // the last tg_tail tiles run as tg_parts parts each (0: none)\n";
  if (walk.banded())
    os << "  int64_t tg_group;          // rows of tiles per group of the walk (tg_walk_rows)\n";
  os << tma_params_source() << "};\n\n";
  if (dynamic_tiles())
    os << "/* The persistent kernel's tile counters, a pair {drawn, blocks done} per stream slot\n"
          " * (tg_cuda_stream_slot): zero when the module loads, zeroed by each launch's last block. */\n"
          "__device__ unsigned tg_sched_pairs[2 * TG_CUDA_STREAM_SLOTS];\n\n";
  os << kernels << "\n} // namespace\n\n";
  if (ws()) {
    // +1024: the kernel aligns its shared window up to a 1024-byte boundary.
    os << "static const size_t tg_smem_bytes = " << smem_bytes_ + 1024 << ";\n";
    if (fallback_smem_ >= 0)
      os << "static const size_t tg_smem_bytes_fallback = " << fallback_smem_ << ";\n";
    os << "\n" << tma_memo_source();
  } else {
    os << "static const size_t tg_smem_bytes = " << smem_bytes_ << ";\n";
    // tg_kernel<2> runs every part of the body the others do (the epilogue's staging tile
    // too) and its staging rows lie behind all of it.
    TG_ASSERT(shift_smem_bytes_ == 0 || shift_smem_bytes_ >= smem_bytes_,
              "tg_kernel<2>'s shared memory ends before the other kernels' does");
    if (shift_smem_bytes_ > 0)
      os << "static const size_t tg_smem_bytes_shift = " << shift_smem_bytes_ << "; /* tg_kernel<2>: + staging rows */\n";
    os << "\n";
  }
  os << "/* Fills the kernel parameters and the grid; 1 = empty grid, else a tg_status. *tg_nfold > 0: the\n"
        " * grid is over CUDA's limits and runs folded, that many blocks (tg_run). */\n";
  os << "static int tg_setup(const tg_variant_args* args, " << (any_pitched() ? "const int64_t* tg_pitch, " : "")
     << "tg_params* tg_p, dim3* tg_grid, int* tg_vw, int64_t* tg_nfold" << (ws() ? ", bool* tg_tma" : "") << ") {\n";
  size_t ti = 0, si = 0;
  os << "  *tg_p = tg_params{};\n";
  for (const auto& t : k_.tensors)
    os << "  tg_p->" << name(t->name) << " = (" << (t->access == Access::Read ? "const " : "")
       << storage_type_name(t->dtype) << "*)args->tensors[" << ti++ << "];\n";
  os << host_dims;
  if (any_pitched()) {
    os << "  /* rows of the tensors only tensor maps reach (and of those of rank 1), in elements:\n"
          "   * tg_realigned's repitched copies (16-byte rows), else dense; a pitch makes the call take\n"
          "   * the TMA kernel or nothing */\n";
    for (size_t i = 0; i < k_.tensors.size(); ++i)
      if (pitched_[i])
        os << "  const int64_t tg_pitch_" << name(k_.tensors[i]->name) << " = tg_pitch ? tg_pitch[" << i
           << "] : " << expr(k_.tensors[i]->shape.back()) << ";\n";
  }
  for (const auto& d : k_.dims)
    if (d.var->kind == VarKind::Dim)
      os << "  tg_p->" << name(d.var->name) << " = " << name(d.var->name) << ";\n";
  for (const auto& s : k_.scalars)
    os << "  tg_p->" << name(s->name) << " = (" << type_name(s->type) << ")args->scalars[" << si++ << "];\n";
  os << grid_code;
  if (split_ || walk.banded())
    os << "  tg_p->tg_nk = " << loop_extent_host_ << ";\n";
  else if (!np_split_nk_host_.empty())
    os << "  tg_p->tg_nk = " << np_split_nk_host_ << ";\n";
  if (walk.banded())
    os << "  tg_p->tg_group = " << walk.rows << "; // tg_run: tg_walk_rows\n";
  os << "  if (tg_gx <= 0 || tg_gy <= 0 || tg_gz <= 0)\n    return 1;\n";
  os << "  /* CUDA takes 2^31 - 1 blocks in x and 65535 in y and z: a grid over that runs folded, its\n"
        "   * blocks numbered along x (tg_kernel<0>" << (ws() ? "; the persistent kernel walks any grid" : "") << ") */\n"
        "  *tg_nfold = 0;\n"
        "  if (tg_gx > 2147483647 || tg_gy > 65535 || tg_gz > 65535) {\n"
        "    if (__builtin_mul_overflow(tg_gx, tg_gy, tg_nfold) || __builtin_mul_overflow(*tg_nfold, tg_gz, tg_nfold))\n"
        "      return TG_ERR_UNSUPPORTED_SHAPE;\n"
        "    tg_p->tg_fold[0] = tg_gx;\n    tg_p->tg_fold[1] = tg_gy;\n"
        "  }\n";
  os << "  *tg_grid = *tg_nfold ? dim3(1, 1, 1) : dim3((unsigned)tg_gx, (unsigned)tg_gy, (unsigned)tg_gz);\n";
  if (ws())
    os << "  tg_p->tg_tiles[0] = tg_gx;\n  tg_p->tg_tiles[1] = tg_gy;\n  tg_p->tg_tiles[2] = tg_gz;\n";
  os << "  *tg_vw = 0;\n  if (" << tensor_vec_check(16) << ")\n    *tg_vw = 16;\n";
  if (narrow_copies_)
    os << "  else if (" << tensor_vec_check(4) << ")\n    *tg_vw = 4;\n";
  if (!ws() && shift_smem_bytes_ > 0) {
    std::string c;
    for (const auto& t : k_.tensors)
      if (vector_tested(*t))
        c += (c.empty() ? "" : " &&\n      ") + std::string("(uintptr_t)tg_p->") + name(t->name) + " % 16 == 0";
    os << "  else if (" << (c.empty() ? "true" : c) << ")\n    *tg_vw = 2; /* rows of any width: shifted chunk copies */\n";
  }
  if (ws() && runtime_vec()) {
    // The TMA kernel needs 16-byte rows of the tensors TMA reaches; its threads move the others
    // in the widest vectors they allow (TG_VEC, at run time).
    auto maps = [&](size_t i) { return !threads_vec_[i] || tma_reaches(*k_.tensors[i]); };
    auto own = [&](size_t i) { return bool(threads_vec_[i]); };
    os << "  *tg_tma = " << tensor_vec_check(16, maps) << ";\n";
    os << "  /* the TMA kernel's threads: vectors of up to 16 bytes where their tensors allow */\n";
    os << "  tg_p->tg_vec = " << tensor_vec_check(16, own) << " ? 16\n    : " << tensor_vec_check(8, own)
       << " ? 8\n    : " << tensor_vec_check(4, own) << " ? 4 : 0;\n";
  } else if (ws()) {
    os << "  *tg_tma = *tg_vw == 16;\n";
  }
  os << tma_setup << "  return TG_OK;\n}\n\n";
  os << host_source(realign_source(host_dims));
  return os.str();
}

// The slots of a split tile's join (emit_combine), host side; split_tail_work.test runs it.
static_assert(kSplitGroup == 4, "kSplitSlotsSource spells the join's group size");
const char* const kSplitSlotsSource =
    "/* Slots of a split tile's join (docs/hopper.md): one per unit of every level of its tree of\n"
    " * groups of 4 (s parts at level 0, then ceil(u / 4) units), each holding a part's carried\n"
    " * registers, with a ready word: the group merges in unit order whichever unit arrives last. */\n"
    "static int64_t tg_split_slots(int64_t s) {\n"
    "  int64_t n = 0;\n"
    "  for (int64_t u = s; u > 1; u = (u + 3) / 4)\n"
    "    n += u;\n"
    "  return n;\n"
    "}\n\n";

// The split tail's shape, host side (docs/hopper.md); split_tail_work.test runs it.
const char* const kSplitShapeSource =
    "/* Split tail (docs/hopper.md): of T equal tiles of n iterations on P SMs, the last\n"
    " * r = T % P run as s parts each on r * s blocks of tg_kernel_ws_split, all parts of a tile\n"
    " * starting together: s = min(P / r, max(min(n / 4, 8), min(n / 16, 64))), i.e. up to 8\n"
    " * parts of at least 4 iterations or up to 64 of at least 16, whichever is more (the parts\n"
    " * join in a tree of groups of 4; on the H200 more parts of fewer iterations cost more in\n"
    " * joins than they saved, and 132 parts of a 4096-iteration tile were slower than 64), where\n"
    " * a tile has at least 32 iterations (what a part saves must outweigh a second launch and\n"
    " * the join: a 16-iteration GEMM tile in 2 parts was 12% slower) and s >= 2: the last wave\n"
    " * after whole waves (T > P), or every tile of a launch of at most P / 2 (split-K);\n"
    " * *tail = *parts = 0 (every tile whole) otherwise. q > 0: every part has at least q\n"
    " * iterations (the ping-pong kernels' 64-row tiles take 32: there, on the H200, 2 parts of\n"
    " * 16 iterations were 9-18% slower than whole tiles, 8 parts of 4 21%). r * s <= P bounds the\n"
    " * parts' registers (r * (s - 1) slots) and the arrival words (fewer than r * s) in the\n"
    " * workspace. */\n"
    "static void tg_split_shape(int64_t T, int64_t n, int64_t P, int64_t q, int64_t* tail, int64_t* parts) {\n"
    "  const int64_t r = P > 0 ? T % P : 0, a = q > 4 ? q : 4, b = q > 16 ? q : 16;\n"
    "  const int64_t short_parts = n / a < 8 ? n / a : 8, long_parts = n / b < 64 ? n / b : 64;\n"
    "  const int64_t most = short_parts > long_parts ? short_parts : long_parts;\n"
    "  int64_t s = r > 0 ? P / r : 0;\n"
    "  s = s < most ? s : most;\n"
    "  *tail = 0, *parts = 0;\n"
    "  if (r > 0 && n >= 32 && s >= 2)\n"
    "    *tail = r, *parts = s;\n"
    "}\n\n";

namespace {
// Host code around tg_setup: the locals it fills and its arguments (sm_90a files also learn
// whether the call takes the TMA kernel; files with repitched tensors pass the row pitches,
// `pitch`, first).
std::string setup_decls(bool tma) {
  return std::string("  tg_params p;\n  dim3 grid;\n  int vec = 0;\n  int64_t fold = 0;\n") +
         (tma ? "  bool tma = false;\n" : "");
}
std::string setup_args(bool tma, const std::string& pitch = "") {
  return (pitch.empty() ? "" : pitch + ", ") + (tma ? "&p, &grid, &vec, &fold, &tma" : "&p, &grid, &vec, &fold");
}
// Lines of generated code two spaces further in.
std::string indented(const std::string& code) {
  std::string out;
  size_t at = 0;
  for (size_t nl; (nl = code.find('\n', at)) != std::string::npos; at = nl + 1)
    out += (nl > at ? "  " : "") + code.substr(at, nl + 1 - at);
  return out + code.substr(at);
}
// Whether tg_setup's grid runs folded (tg_kernel<0>): sm_90a files' TMA calls take the
// persistent kernel, which walks any grid.
// `prefix`: "tg_" in tg_realigned (realign_decls' names).
std::string folded_test(bool tma, bool parenthesized = true, const std::string& prefix = "") {
  const std::string fold = prefix.empty() ? "fold" : "tg_nfold", t = prefix + "tma";
  return !tma ? fold + " > 0" : parenthesized ? "(" + fold + " > 0 && !" + t + ")" : fold + " > 0 && !" + t;
}
// The same in tg_realigned, which declares the spec's dims (and reads tile constants) next to
// them: there every local is tg_-prefixed, so that no spec name can be one of them.
std::string realign_decls(bool tma) {
  return std::string("  tg_params tg_kp;\n  dim3 tg_grid;\n  int tg_vw = 0;\n  int64_t tg_nfold = 0;\n") +
         (tma ? "  bool tg_tma = false;\n" : "");
}
std::string realign_setup_args(bool tma, const std::string& pitch = "") {
  return (pitch.empty() ? "" : pitch + ", ") +
         (tma ? "&tg_kp, &tg_grid, &tg_vw, &tg_nfold, &tg_tma" : "&tg_kp, &tg_grid, &tg_vw, &tg_nfold");
}
} // namespace

namespace {
// Repitched copies' kernels (tg_realigned): cudaMemcpy2DAsync moved rows of 2-byte alignment at
// 1.4-2 TB/s on the H200 (16x4097x4096 took 0.066 ms against the aligned shape's 0.018).
const char* const kRepitchSource =
    "/* Repitched copies (docs/cuda-backend.md): `rows` rows of w bytes, src rows sp bytes apart,\n"
    " * dst rows dp bytes apart. Copy in (e == 0): dst is the workspace (16-byte aligned rows, dp >=\n"
    " * w rounded up to 16), src any alignment: a thread per 16-byte chunk of dst reads the one or\n"
    " * two aligned chunks of src that hold its bytes (none without one of the row's bytes) and\n"
    " * shifts them into place; the bytes past w land in dst's padding. Copy back (e = element\n"
    " * bytes): src is the workspace, dst any alignment: a thread per element. */\n"
    "struct tg_repitch_args {\n"
    "  unsigned char* dst;\n  const unsigned char* src;\n  size_t dp, sp, w, rows, e;\n};\n"
    "static __device__ __forceinline__ unsigned tg_shr64(unsigned lo, unsigned hi, unsigned bits) {\n"
    "  return __funnelshift_r(lo, hi, bits);\n}\n"
    "static __global__ void tg_repitch_kernel(const tg_repitch_args a) {\n"
    "  const size_t per = a.e ? a.w / a.e : (a.w + 15) / 16, n = a.rows * per;\n"
    "  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {\n"
    "    const size_t r = i / per, c = i % per;\n"
    "    if (a.e == 2) {\n"
    "      *(uint16_t*)(a.dst + r * a.dp + 2 * c) = *(const uint16_t*)(a.src + r * a.sp + 2 * c);\n"
    "    } else if (a.e == 4) {\n"
    "      *(uint32_t*)(a.dst + r * a.dp + 4 * c) = *(const uint32_t*)(a.src + r * a.sp + 4 * c);\n"
    "    } else if (a.e == 1) {\n"
    "      a.dst[r * a.dp + c] = a.src[r * a.sp + c];\n"
    "    } else {\n"
    "      const unsigned char* p = a.src + r * a.sp + 16 * c;\n"
    "      const unsigned char* end = a.src + r * a.sp + a.w;\n"
    "      const unsigned s = (unsigned)((uintptr_t)p & 15);\n"
    "      const uint4* q = (const uint4*)(p - s);\n"
    "      const uint4 lo = q[0];\n"
    "      const uint4 hi = s != 0 && (const unsigned char*)(q + 1) < end ? q[1] : lo;\n"
    "      const unsigned b = 8 * (s & 3);\n"
    "      uint4 o;\n"
    "      switch (s >> 2) { /* uniform along a row */\n"
    "      case 0: o = make_uint4(tg_shr64(lo.x, lo.y, b), tg_shr64(lo.y, lo.z, b), tg_shr64(lo.z, lo.w, b), tg_shr64(lo.w, hi.x, b)); break;\n"
    "      case 1: o = make_uint4(tg_shr64(lo.y, lo.z, b), tg_shr64(lo.z, lo.w, b), tg_shr64(lo.w, hi.x, b), tg_shr64(hi.x, hi.y, b)); break;\n"
    "      case 2: o = make_uint4(tg_shr64(lo.z, lo.w, b), tg_shr64(lo.w, hi.x, b), tg_shr64(hi.x, hi.y, b), tg_shr64(hi.y, hi.z, b)); break;\n"
    "      default: o = make_uint4(tg_shr64(lo.w, hi.x, b), tg_shr64(hi.x, hi.y, b), tg_shr64(hi.y, hi.z, b), tg_shr64(hi.z, hi.w, b)); break;\n"
    "      }\n"
    "      *(uint4*)(a.dst + r * a.dp + 16 * c) = o;\n"
    "    }\n"
    "  }\n"
    "}\n"
    "static cudaError_t tg_repitch(void* dst, size_t dp, const void* src, size_t sp, size_t w, size_t rows, size_t e,\n"
    "                              cudaStream_t stream) {\n"
    "  const size_t n = rows * (e ? w / e : (w + 15) / 16), blocks = (n + 255) / 256;\n"
    "  cudaLaunchConfig_t tg_c = {};\n"
    "  tg_c.gridDim = dim3((unsigned)(blocks < 8192 ? blocks : 8192), 1, 1);\n"
    "  tg_c.blockDim = dim3(256, 1, 1);\n"
    "  tg_c.stream = stream;\n"
    "  const tg_repitch_args a = {(unsigned char*)dst, (const unsigned char*)src, dp, sp, w, rows, e};\n"
    "  return n == 0 ? cudaSuccess : cudaLaunchKernelEx(&tg_c, tg_repitch_kernel, a);\n"
    "}\n\n";
} // namespace

std::string CudaEmitter::realign_source(const std::string& host_dims) {
  const bool P = any_pitched();
  // Tensors the TMA kernel's threads address at any alignment (threads_vec_) stay in place.
  const bool RV = runtime_vec();
  const std::string setup = realign_setup_args(ws(), P ? "NULL" : "");
  const std::string in_place = P ? "tg_run(launch, args, NULL)" : "tg_run(launch, args)";
  std::string bytes, outs, ins, elems, lasts, rows, pitchable, own;
  for (size_t i = 0; i < k_.tensors.size(); ++i) {
    const auto& t = k_.tensors[i];
    const std::string sep = bytes.empty() ? "" : ",\n      ";
    std::string b = "(size_t)" + std::to_string(t->dtype.bytes());
    for (const auto& d : t->shape)
      b += " * (size_t)(" + expr(d) + ")";
    bytes += sep + b;
    outs += (outs.empty() ? "" : ", ") + std::string(t->access == Access::Read ? "false" : "true");
    ins += (ins.empty() ? "" : ", ") + std::string(passes::writes_whole(k_, *t) ? "false" : "true");
    // repitched files: each tensor's element size, last dim (1 for a scalar), rows (the product
    // of the other dims) and whether tensor maps alone reach it
    std::string r = "(size_t)1";
    for (size_t d = 0; d + 1 < t->shape.size(); ++d)
      r += " * (size_t)(" + expr(t->shape[d]) + ")";
    elems += (i ? ", " : "") + std::to_string(t->dtype.bytes());
    lasts += (i ? ", " : "") + (t->shape.empty() ? std::string("1") : "(int64_t)(" + expr(t->shape.back()) + ")");
    rows += sep + r;
    pitchable += (i ? ", " : "") + std::string(pitched_[i] ? "true" : "false");
    own += (i ? ", " : "") + std::string(threads_vec_[i] ? "true" : "false");
  }
  const std::string NT = std::to_string(k_.tensors.size());
  std::ostringstream os;
  if (!P) {
    os << "/* Realigned copies (docs/cuda-backend.md): a call that would run tg_kernel<0> (element by\n"
          " * element) only because tensors start off a 16-byte boundary copies those tensors to the\n"
          " * stream's realign workspace, runs the vectorized kernel on the copies and copies its outputs\n"
          " * back, all on the call's stream. Anything else (rows that are no whole 16-byte chunks, a\n"
          " * graph capture, no workspace) runs in place. */\n";
  } else {
    os << "/* Realigned and repitched copies (docs/cuda-backend.md): a call that would run\n"
          " * tg_kernel<0> or tg_kernel<4> because tensors start off a 16-byte boundary or (tensors that\n"
          " * only tensor maps reach, and those of rank 1) have rows that are no whole 16-byte chunks\n"
          " * copies those tensors to the stream's realign workspace, rows padded to whole chunks, runs\n"
          " * the TMA kernel on the copies (the maps carry the pitch) and copies its outputs back, all on\n"
          " * the call's stream. Anything else (other tensors with such rows, a graph capture, no\n"
          " * workspace) runs in place. */\n";
  }
  if (P)
    os << kRepitchSource;
  os << "static int tg_realigned(const tg_launch* launch, const tg_variant_args* args) {\n"
     << realign_decls(ws())
     << "  int tg_st = tg_setup(args, " << setup << ");\n"
     << (P ? "  if (tg_st != TG_OK || tg_vw == 16" : "  if (tg_st != TG_OK || tg_vw != 0") << (RV ? " || tg_tma" : "")
     << " || " << folded_test(ws(), true, "tg_") << ")\n"
     << "    return " << in_place << ";\n"
     << host_dims
     << "  cudaStream_t tg_stream = launch ? (cudaStream_t)launch->stream : (cudaStream_t)0;\n";
  if (!P)
    os << "  const size_t tg_bytes[" << NT << "] = {" << bytes << "};\n";
  else
    os << "  const size_t tg_elem[" << NT << "] = {" << elems << "};\n"
          "  const int64_t tg_last[" << NT << "] = {" << lasts << "};\n"
          "  const size_t tg_rows[" << NT << "] = {" << rows << "};\n"
          "  const bool tg_pitchable[" << NT << "] = {" << pitchable << "}; /* a copy may pad its rows */\n";
  os << "  const bool tg_out[" << NT << "] = {" << outs << "}; /* written by the kernel: copied back */\n"
        "  const bool tg_in[" << NT << "] = {" << ins << "}; /* copied in: all but outputs the kernel writes whole */\n";
  if (RV)
    os << "  const bool tg_own[" << NT << "] = {" << own << "}; /* the TMA kernel's threads address it as it is */\n";
  os <<
        "  void* tg_t[" << NT << "];\n  bool tg_moved[" << NT << "];\n  size_t tg_at[" << NT << "], tg_total = 0;\n";
  if (P)
    os << "  int64_t tg_pitch[" << NT << "]; /* elements per row of each copy */\n"
          "  size_t tg_bytes[" << NT << "];\n"
          "  bool tg_whole = true; /* every row of whole 16-byte chunks, copied or not */\n";
  os << "  for (int tg_i = 0; tg_i < " << NT << "; ++tg_i) {\n"
        "    tg_t[tg_i] = args->tensors[tg_i];\n";
  if (!P) {
    os << "    tg_moved[tg_i] = " << (RV ? "!tg_own[tg_i] && " : "") << "tg_t[tg_i] && (uintptr_t)tg_t[tg_i] % 16 != 0 && tg_bytes[tg_i] > 0;\n";
  } else {
    os << "    const int64_t tg_per = 16 / (int64_t)tg_elem[tg_i]; /* elements per 16-byte chunk */\n"
          "    const bool tg_uneven = tg_pitchable[tg_i] && tg_last[tg_i] % tg_per != 0;\n"
          "    tg_pitch[tg_i] = tg_uneven ? (tg_last[tg_i] + tg_per - 1) / tg_per * tg_per : tg_last[tg_i];\n"
          "    tg_bytes[tg_i] = tg_elem[tg_i] * (size_t)tg_pitch[tg_i] * tg_rows[tg_i];\n"
          "    tg_moved[tg_i] = " << (RV ? "!tg_own[tg_i] && " : "") << "tg_t[tg_i] && tg_last[tg_i] > 0 && tg_rows[tg_i] > 0 &&\n"
          "                  ((uintptr_t)tg_t[tg_i] % 16 != 0 || tg_uneven);\n"
          "    if (!tg_moved[tg_i])\n      tg_pitch[tg_i] = tg_last[tg_i];\n"
          "    tg_whole = tg_whole && " << (RV ? "(tg_own[tg_i] || tg_pitch[tg_i] % tg_per == 0)" : "tg_pitch[tg_i] % tg_per == 0") << ";\n";
  }
  os << "    tg_at[tg_i] = tg_total;\n"
        "    tg_total += tg_moved[tg_i] ? (tg_bytes[tg_i] + 255) / 256 * 256 : 0;\n"
        "  }\n";
  if (P) {
    os << "  if (!tg_whole) /* rows no copy fixes (a tensor the kernel addresses itself) */\n"
          "    return " << in_place << ";\n";
    int64_t stage = 0; // bytes the pipeline loads per iteration
    for (const StmtNode* st : ws_pipe_.producers)
      stage += tile_bytes(*st->as<Copy>()->dst.buffer);
    os << "  /* In place, tg_kernel<4> (4-byte asynchronous copies) runs at 0.55-0.8x the TMA kernel's\n"
          "   * speed; the copies cost their traffic (read and write, each way a tensor goes). They pay\n"
          "   * where the pipeline loads at least " << kRepitchShare << " times the copies' bytes (tiles x iterations\n"
          "   * x " << stage << " bytes)" << (split_ ? ", or where every tile runs in parts (split-K: in place, a long\n"
                                                   "   * loop on few SMs)" : "") << ". H200: docs/cuda-backend.md, \"Repitched copies\". */\n"
          "  if (tg_vw == 4) {\n"
          "    size_t tg_traffic = 0;\n"
          "    for (int tg_i = 0; tg_i < " << NT << "; ++tg_i)\n"
          "      tg_traffic += tg_moved[tg_i] ? ((tg_in[tg_i] ? 2 : 0) + (tg_out[tg_i] ? 2 : 0)) * tg_bytes[tg_i] : 0;\n"
          "    const int64_t tg_tiles = tg_kp.tg_tiles[0] * tg_kp.tg_tiles[1] * tg_kp.tg_tiles[2];\n"
          "    const int64_t tg_nk = " << loop_extent_host_ << ";\n"
          "    bool tg_pays = (double)tg_tiles * (double)tg_nk * " << stage << ".0 >= " << kRepitchShare
       << ".0 * (double)tg_traffic;\n";
    if (split_)
      os << "    if (!tg_pays && tg_prepare_device() == TG_OK) {\n"
            "      int64_t tg_tail = 0, tg_parts = 0;\n"
            "      tg_split_shape(tg_tiles, tg_nk, (int64_t)tg_sms, " << split_min_part() << ", &tg_tail, &tg_parts);\n"
            "      tg_pays = tg_tail == tg_tiles;\n"
            "    }\n";
    os << "    if (!tg_pays)\n      return " << in_place << ";\n  }\n";
  }
  os << "  /* held until tg_cuda_realign_release: another thread's call on the stream waits */\n"
        "  int tg_slot = -1;\n"
        "  unsigned char* tg_ws = tg_total > TG_CUDA_REALIGN_MIN_BYTES\n"
        "      ? (unsigned char*)tg_cuda_realign_workspace((void*)tg_stream, tg_total, &tg_slot) : NULL;\n"
        "  if (!tg_ws)\n    return " << in_place << ";\n"
        "  for (int tg_i = 0; tg_i < " << NT << "; ++tg_i)\n"
        "    if (tg_moved[tg_i])\n      tg_t[tg_i] = tg_ws + tg_at[tg_i];\n"
        "  tg_variant_args tg_a = *args;\n  tg_a.tensors = tg_t;\n";
  if (!P)
    os << (shift_smem_bytes_ > 0 ? "  /* the copies must take the widest kernel (rows of whole 16-byte chunks) or, aligned now,\n"
                                   "   * the shifted chunk copies (rows of any width) */\n"
                                 : "  /* the copies must take the widest kernel: their rows are whole 16-byte chunks */\n")
       << "  tg_st = tg_setup(&tg_a, " << setup << ");\n"
          "  if (tg_st != TG_OK || " << (RV ? "!tg_tma" : shift_smem_bytes_ > 0 ? "(tg_vw != 16 && tg_vw != 2)" : "tg_vw != 16")
       << ") {\n    tg_cuda_realign_release(tg_slot);\n    return " << in_place << ";\n  }\n";
  else
    os << "  /* the copies must take the TMA kernel: every row a whole number of 16-byte chunks */\n"
          "  tg_st = tg_setup(&tg_a, " << realign_setup_args(ws(), "tg_pitch") << ");\n"
          "  if (tg_st != TG_OK || " << (RV ? "" : "tg_vw != 16 || ") << "!tg_tma) {\n    tg_cuda_realign_release(tg_slot);\n    return " << in_place << ";\n  }\n";
  // A copy of tensor i in (to the workspace) or back: linear, or row by row into the pitch.
  auto copy = [&](const std::string& dst, const std::string& src, bool in) {
    if (!P)
      return "cudaMemcpyAsync(" + dst + ", " + src + ", tg_bytes[tg_i], cudaMemcpyDeviceToDevice, tg_stream)";
    const std::string wide = "tg_elem[tg_i] * (size_t)tg_pitch[tg_i]", narrow = "tg_elem[tg_i] * (size_t)tg_last[tg_i]";
    return "(tg_pitch[tg_i] == tg_last[tg_i]\n"
           "             ? cudaMemcpyAsync(" + dst + ", " + src + ", tg_bytes[tg_i], cudaMemcpyDeviceToDevice, tg_stream)\n"
           "             : tg_repitch(" + dst + ", " + (in ? wide : narrow) + ", " + src + ", " + (in ? narrow : wide) +
           ",\n                          " + narrow + ", tg_rows[tg_i], " + (in ? "0" : "tg_elem[tg_i]") + ", tg_stream))";
  };
  os << "  /* outputs too, but those the kernel writes whole: what it does not write keeps its contents */\n"
        "  for (int tg_i = 0; tg_i < " << NT << " && tg_st == TG_OK; ++tg_i)\n"
        "    if (tg_moved[tg_i] && tg_in[tg_i] && " << copy("tg_t[tg_i]", "args->tensors[tg_i]", true) << " != cudaSuccess)\n"
        "      tg_st = TG_ERR_DEVICE;\n"
        "  if (tg_st == TG_OK)\n    tg_st = " << (P ? "tg_run(launch, &tg_a, tg_pitch)" : "tg_run(launch, &tg_a)") << ";\n"
        "  for (int tg_i = 0; tg_i < " << NT << " && tg_st == TG_OK; ++tg_i)\n"
        "    if (tg_moved[tg_i] && tg_out[tg_i] && " << copy("args->tensors[tg_i]", "tg_t[tg_i]", false) << " != cudaSuccess)\n"
        "      tg_st = TG_ERR_DEVICE;\n"
        "  tg_cuda_realign_release(tg_slot);\n"
        "  return tg_st;\n}\n\n";
  if (P) { // tgv_'s test: tg_uneven_rows
    os << "/* Whether a tensor that copies may pad has rows that are no whole 16-byte chunks. */\n"
          "static bool tg_uneven_rows(const tg_variant_args* args) {\n"
       << host_dims;
    std::string uneven;
    std::set<std::string> seen; // C's rows are B's: one test
    for (size_t i = 0; i < k_.tensors.size(); ++i) {
      const std::string test = "(" + expr(k_.tensors[i]->shape.back()) + ") % " +
                               std::to_string(16 / k_.tensors[i]->dtype.bytes()) + " != 0";
      if (pitched_[i] && seen.insert(test).second)
        uneven += (uneven.empty() ? "" : " ||\n         ") + test;
    }
    os << "  return " << uneven << ";\n}\n\n";
  }
  return os.str();
}

std::string CudaEmitter::host_source(const std::string& realign) const {
  const std::string& fn = info_.function_name;
  const std::string T = std::to_string(threads_);
  // The kernels of the file: the warp-specialized TMA kernel (sm_90a, when the tensors allow
  // it) and tg_kernel<TG_VEC> per vector width, the fallback target's lowering on sm_90a.
  const bool slow_exists = !ws() || fallback_smem_ >= 0;
  // The widths instantiated. On sm_90a 16-byte aligned tensors go through TMA; the rare call
  // TMA cannot take with them anyway (no driver entry point, strides past 2^40) runs the 4-byte
  // kernel, which saves a fallback kernel per file (55 KB of SASS for the bf16 GEMM's).
  std::vector<int> tiers;
  if (!ws())
    tiers.push_back(16);
  if (narrow_copies_)
    tiers.push_back(4);
  if (!ws() && shift_smem_bytes_ > 0)
    tiers.push_back(2); // rows of any width: shifted chunk copies, with their own shared memory
  tiers.push_back(0);
  auto inst = [](int w) { return "tg_kernel<" + std::to_string(w) + ">"; };
  const std::string fast_threads = ws() ? std::to_string(threads_ * groups() + 128) : T;
  const std::string slow_smem = ws() && fallback_smem_ >= 0 ? "tg_smem_bytes_fallback" : "tg_smem_bytes";
  auto tier_smem = [&](int w) { return w == 2 ? std::string("tg_smem_bytes_shift") : slow_smem; };
  // The call's width picks its kernel: `vec >= W` for each width but the last, which takes the
  // rest (the launch's if/else chain and the _desc's ternary chain).
  auto tier_test = [&](size_t i) { return "vec >= " + std::to_string(tiers[i]); };
  // The call's width's value of `of` (index, width): a ternary chain over the widths.
  auto tier_pick = [&](const std::function<std::string(size_t, int)>& of) {
    std::string r;
    for (size_t i = 0; i + 1 < tiers.size(); ++i)
      r += tier_test(i) + " ? " + of(i, tiers[i]) + " : ";
    return tiers.size() > 1 ? "(" + r + of(tiers.size() - 1, tiers.back()) + ")" : of(0, tiers.back());
  };
  std::ostringstream os;
  if (split_ || np_split_)
    os << kSplitSlotsSource;
  if (split_)
    os << kSplitShapeSource;
  if (np_split_) {
    // blocks of tg_kernel one SM holds at once by its shared memory and threads (the estimate
    // tg_split_parts falls back to where the driver gives no occupancy)
    const std::string R = std::to_string(passes::resident_blocks(t_.gpu, smem_bytes_, threads_));
    const bool nk = !np_split_nk_host_.empty();
    const std::string Q = std::to_string(kNpSplitMinPart);
    os << "/* Split loops (docs/cuda-backend.md \"Split loops\"): the parts of each tile's loop for a launch\n"
          " * of T tiles. The device's P SMs hold P * " << R << " blocks of this kernel at once (" << R << " per SM by its\n"
          " * " << smem_bytes_ << " bytes of shared memory and " << threads_ << " threads on " << t_.name << "); where T is at most half\n"
          " * of that, each tile runs in s = min(P * " << R << " / T, 64" << (nk ? ", nk / " + Q : std::string()) << ") parts, fewer where the workspace's words\n"
          " * (TG_CUDA_SPLIT_CUTS arrival words, as many ready words: T * tg_split_slots(s) slots) would not hold\n"
          " * them; 0 (every tile whole) otherwise." << (nk ? "\n * nk: every tile's iterations; a part runs at least " + Q + " of them (its pipeline's fill\n"
          " * and the join's partial sums are then a small share of its time)." : std::string()) << "\n"
          " * The " << R << " per SM is the estimate at generation; the driver's count for the kernel the call\n"
          " * launches (cudaOccupancyMaxActiveBlocksPerMultiprocessor: its registers too, asked once per\n"
          " * device and width, `tier`) replaces it where the driver gives one. */\n"
          "static int tg_resident[64][" << tiers.size() << "]; /* per device and kernel: 0 not asked yet */\n"
          "static int64_t tg_split_parts(int64_t T" << (nk ? ", int64_t nk" : "") << ", int tier, const void* kernel, size_t smem) {\n"
          "  int dev = 0, sms = 0;\n"
          "  if (cudaGetDevice(&dev) != cudaSuccess ||\n"
          "      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1) {\n"
          "    (void)cudaGetLastError();\n    return 0;\n  }\n"
          "  int r = dev >= 0 && dev < 64 ? tg_resident[dev][tier] : 0;\n"
          "  if (r < 1) {\n"
          "    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r, kernel, " << threads_ << ", smem) != cudaSuccess || r < 1) {\n"
          "      (void)cudaGetLastError();\n"
          "      r = " << R << ";\n"
          "    }\n"
          "    if (dev >= 0 && dev < 64)\n"
          "      tg_resident[dev][tier] = r;\n"
          "  }\n"
          "  const int64_t slots = (int64_t)sms * r;\n"
          "  if (T < 1 || 2 * T > slots)\n    return 0;\n"
          "  int64_t s = slots / T < 64 ? slots / T : 64;\n"
       << (nk ? "  if (s > nk / " + Q + ")\n    s = nk / " + Q + ";\n" : std::string()) <<
          "  for (; s >= 2; --s) {\n"
          "    int64_t words = 0; /* arrival words of a tile: one per group of " << kSplitGroup << " at every level */\n"
          "    for (int64_t u = s; u > 1; u = (u + " << kSplitGroup - 1 << ") / " << kSplitGroup << ")\n"
          "      words += (u + " << kSplitGroup - 1 << ") / " << kSplitGroup << ";\n"
          "    if (T * words <= TG_CUDA_SPLIT_CUTS && T * tg_split_slots(s) <= TG_CUDA_SPLIT_CUTS)\n      break;\n"
          "  }\n"
          "  return s >= 2 ? s : 0;\n}\n\n";
  }
  const TileWalk& walk = walk_;
  if (ws())
    os << "/* SMs of the current device (set by tg_prepare_device): the persistent grid. */\n"
          "static thread_local int tg_sms = 1;\nstatic int tg_sm_count[64];\n\n";
  if (walk.banded())
    os << "/* L2 bytes of the current device (set by tg_prepare_device; 0: unknown). */\n"
          "static thread_local int tg_l2 = 0;\nstatic int tg_l2_size[64];\n\n"
          "/* Rows of tiles per group of the persistent walk (decode_tile, docs/hopper.md \"Tile\n"
          " * order\"): bands of blocks / gx whole rows where the operands that move with x for\n"
          " * all gx columns (" << walk.x_bytes << " bytes an iteration each) and those that move with y for\n"
          " * one band (" << walk.y_bytes << " each), over the loop's nk iterations, take at most an eighth\n"
          " * of the L2; else groups of " << walk.rows << " rows, the fewest bytes in flight per iteration. */\n"
          "static int64_t tg_walk_rows(int64_t gx, int64_t nk, int64_t blocks, int64_t l2_bytes) {\n"
          "  const int64_t band = blocks / gx;\n"
          "  if (band >= 1 && l2_bytes > 0 && nk <= l2_bytes / " << kBandL2Share << " / (gx * " << walk.x_bytes << " + band * " << walk.y_bytes << "))\n"
          "    return band;\n"
          "  return " << walk.rows << ";\n}\n\n";
  os << "/* Raises the dynamic shared memory limit of the kernels once per device (> 48 KB). */\n"
        "static int tg_prepare_device() {\n";
  if (std::max(smem_bytes_, shift_smem_bytes_) > t_.gpu.smem_default || ws()) {
    os << "  static int tg_done[64];\n  int dev = 0;\n"
          "  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0)\n    return TG_ERR_DEVICE;\n"
          "  if (dev < 64 && __atomic_load_n(&tg_done[dev], __ATOMIC_ACQUIRE))"
       << (!ws() ? "\n    return TG_OK;\n"
                 : std::string(" {\n    tg_sms = tg_sm_count[dev];\n") +
                       (walk.banded() ? "    tg_l2 = tg_l2_size[dev];\n" : "") + "    return TG_OK;\n  }\n");
    if (ws())
      os << "  if (cudaDeviceGetAttribute(&tg_sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || tg_sms < 1) {\n"
            "    (void)cudaGetLastError();\n    return TG_ERR_DEVICE;\n  }\n"
            "  if (dev < 64)\n    tg_sm_count[dev] = tg_sms;\n";
    if (walk.banded())
      os << "  if (cudaDeviceGetAttribute(&tg_l2, cudaDevAttrL2CacheSize, dev) != cudaSuccess || tg_l2 < 0) {\n"
            "    (void)cudaGetLastError();\n    tg_l2 = 0; /* unknown: square groups */\n  }\n"
            "  if (dev < 64)\n    tg_l2_size[dev] = tg_l2;\n";
    std::vector<std::pair<std::string, std::string>> attrs; // kernel, its shared bytes
    if (ws())
      attrs.push_back({"tg_kernel_ws", "tg_smem_bytes"});
    if (split_)
      attrs.push_back({"tg_kernel_ws_split", "tg_smem_bytes"});
    if (slow_exists)
      for (int w : tiers)
        attrs.push_back({inst(w), tier_smem(w)});
    for (size_t i = 0; i < attrs.size(); ++i)
      os << (i ? "      " : "  if (") << "cudaFuncSetAttribute(" << attrs[i].first
         << ", cudaFuncAttributeMaxDynamicSharedMemorySize, (int)" << attrs[i].second << ") != cudaSuccess"
         << (i + 1 < attrs.size() ? " ||\n" : ") {\n");
    os << "    (void)cudaGetLastError();\n    return TG_ERR_DEVICE;\n  }\n"
          "  if (dev < 64)\n    __atomic_store_n(&tg_done[dev], 1, __ATOMIC_RELEASE);\n";
  }
  os << "  return TG_OK;\n}\n\n";
  std::string no_slow = slow_exists ? "" : "  if (!tma)\n    return TG_ERR_UNSUPPORTED_SHAPE;\n";
  // Warp-specialized kernels are persistent: one block per SM walks the spec's tiles.
  const std::string persist =
      ws() ? "  if (tma) {\n"
             "    const uint64_t tg_n = (uint64_t)p.tg_tiles[0] * (uint64_t)p.tg_tiles[1] * (uint64_t)p.tg_tiles[2];\n"
             "    grid = dim3((unsigned)(tg_n < (uint64_t)tg_sms ? tg_n : (uint64_t)tg_sms), 1, 1);\n" +
                 std::string(walk.banded() ? "    p.tg_group = tg_walk_rows(p.tg_tiles[0], p.tg_nk, (int64_t)grid.x, (int64_t)tg_l2);\n" : "") +
                 "  }\n"
           : "";
  // Launch statements: with programmatic dependent launch where the target has it (tg_launch_kernel,
  // its error kept in tg_e), else the triple-chevron launch (its error read back at the end).
  const bool pdl = t_.gpu.dependent_launch;
  TG_ASSERT(!ws() || pdl, "CUDA emitter: warp-specialized kernels are launched through tg_launch_kernel");
  auto launch = [&](const std::string& kernel, const std::string& grid, const std::string& threads,
                    const std::string& smem, const std::string& when) {
    if (!pdl)
      return kernel + "<<<" + grid + ", " + threads + ", " + smem + ", stream>>>(p);\n";
    return "tg_e = tg_launch_kernel(" + kernel + ", " + grid + ", " + threads + ", " + smem + ", stream, p, " + when + ");\n";
  };
  std::string launches;
  auto launch_slow = [&](const std::string& ind) {
    std::string r;
    const std::string under = tiers.size() > 1 ? ind + "  " : ind; // a statement under its test
    for (size_t i = 0; i < tiers.size(); ++i) {
      if (i + 1 < tiers.size())
        r += ind + (i ? "else " : "") + "if (" + tier_test(i) + ")\n";
      else if (i > 0)
        r += ind + "else\n";
      r += under + launch(inst(tiers[i]), "grid", T, tier_smem(tiers[i]), "tg_pdl");
    }
    return r;
  };
  // With a split tail, every tile of a small launch may be split: then no persistent kernel.
  const std::string ws_call = launch("tg_kernel_ws", "grid", fast_threads, "tg_smem_bytes", "tg_pdl");
  const std::string whole = split_ ? "p.tg_tail < p.tg_tiles[0] * p.tg_tiles[1] * p.tg_tiles[2]" : "";
  const std::string whole_note = split_ ? " /* tiles left whole */" : "";
  // A folded grid (tg_setup): tg_kernel<0> along x, at most 2^31 - 1 blocks a launch.
  const std::string folded =
      "  if (" + folded_test(ws(), false) + ") { /* a grid over CUDA's limits: tg_kernel<0>, its blocks along x */\n"
      "    for (int64_t tg_first = 0; tg_first < fold" + std::string(pdl ? " && tg_e == cudaSuccess" : "") +
      "; tg_first += 2147483647) {\n"
      "      p.tg_fold[2] = tg_first;\n"
      "      const unsigned tg_n = (unsigned)(fold - tg_first < 2147483647 ? fold - tg_first : 2147483647);\n"
      "      " + launch(inst(0), "dim3(tg_n, 1, 1)", T, slow_smem, "tg_pdl") +
      "    }\n  } else {\n";
  if (!ws())
    launches = launch_slow("  ");
  else if (slow_exists)
    launches = "  if (!tma) {\n" + launch_slow("    ") + "  } else" +
               (split_ ? " if (" + whole + ")" : std::string()) + whole_note + "\n    " + ws_call;
  else
    launches = split_ ? "  if (" + whole + ")" + whole_note + "\n    " + ws_call : "  " + ws_call;
  if (pdl)
    os << "/* Launches `kernel` on `stream`, with programmatic dependent launch when `pdl` (docs/hopper.md\n"
          " * point 8): it may start while the stream's previous kernel finishes, and waits for it on\n"
          " * the device (griddepcontrol.wait) before touching global memory. Launched without the\n"
          " * attribute if the driver refuses it. */\n"
          "template <typename K>\n"
          "static cudaError_t tg_launch_kernel(K kernel, dim3 grid, unsigned threads, size_t smem, cudaStream_t stream,\n"
          "                                    const tg_params& p, bool pdl) {\n"
          "  cudaLaunchAttribute tg_attr[1];\n"
          "  tg_attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;\n"
          "  tg_attr[0].val.programmaticStreamSerializationAllowed = 1;\n"
          "  cudaLaunchConfig_t tg_c = {};\n"
          "  tg_c.gridDim = grid;\n"
          "  tg_c.blockDim = dim3(threads, 1, 1);\n"
          "  tg_c.dynamicSmemBytes = smem;\n"
          "  tg_c.stream = stream;\n"
          "  tg_c.attrs = tg_attr;\n"
          "  tg_c.numAttrs = pdl ? 1 : 0;\n"
          "  cudaError_t e = cudaLaunchKernelEx(&tg_c, kernel, p);\n"
          "  if (e != cudaSuccess && pdl) {\n"
          "    (void)cudaGetLastError();\n"
          "    tg_c.numAttrs = 0;\n"
          "    e = cudaLaunchKernelEx(&tg_c, kernel, p);\n"
          "  }\n"
          "  return e;\n}\n\n";
  const bool P = any_pitched();
  os << "static int tg_run(const tg_launch* launch, const tg_variant_args* args" << (P ? ", const int64_t* tg_pitch" : "")
     << ") {\n"
     << setup_decls(ws())
     << "  int s = tg_setup(args, " << setup_args(ws(), P ? "tg_pitch" : "") << ");\n  if (s != TG_OK)\n    return s == 1 ? TG_OK : s;\n"
     << (P ? "  if (tg_pitch && !tma) /* repitched copies: the fallback kernels assume dense rows */\n"
             "    return TG_ERR_DEVICE;\n"
           : "")
     << no_slow
     << "  if ((s = tg_prepare_device()) != TG_OK)\n    return s;\n"
     << persist
     << "  cudaStream_t stream = launch ? (cudaStream_t)launch->stream : (cudaStream_t)0;\n"
     << (pdl ? "  const bool tg_pdl = tg_cuda_pdl() != 0; /* programmatic dependent launch */\n"
               "  cudaError_t tg_e = cudaSuccess;\n"
             : "")
     << (dynamic_tiles() ? "  /* tiles drawn at run time, from the 32-bit counters of the stream's slot (a fixed order past 2^31) */\n"
                           "  if (tma && (uint64_t)p.tg_tiles[0] * (uint64_t)p.tg_tiles[1] * (uint64_t)p.tg_tiles[2] < 2147483648u) {\n"
                           "    const int tg_slot = tg_cuda_stream_slot((void*)stream);\n"
                           "    void* tg_pairs = NULL;\n"
                           "    if (tg_slot >= 0 && cudaGetSymbolAddress(&tg_pairs, tg_sched_pairs) == cudaSuccess)\n"
                           "      p.tg_sched = (unsigned*)tg_pairs + 2 * tg_slot;\n"
                           "    else if (tg_slot >= 0)\n"
                           "      (void)cudaGetLastError();\n"
                           "  }\n"
                         : "")
     << (split_ || np_split_ ? "  int tg_split_owned = 0; /* the split's workspace is the graph's: freed after the launches */\n" : "")
     << (split_ ? "  if (tma && tg_sms <= TG_CUDA_SPLIT_CUTS) { /* split tail (docs/hopper.md) */\n"
                  "    int64_t tg_tail = 0, tg_parts = 0;\n"
                  "    tg_split_shape(p.tg_tiles[0] * p.tg_tiles[1] * p.tg_tiles[2], p.tg_nk, (int64_t)tg_sms, " +
                  std::to_string(split_min_part()) + ", &tg_tail, &tg_parts);\n"
                  "    /* ready words, then the registers of tail * tg_split_slots(parts) <= 2 * SMs slots (the\n"
                  "     * stream slot's workspace, or memory the graph owns under a capture) */\n"
                  "    if (tg_tail > 0 && tg_tail * tg_split_slots(tg_parts) <= TG_CUDA_SPLIT_CUTS &&\n"
                  "        (p.tg_split = (unsigned char*)tg_cuda_split_acquire((void*)stream,\n"
                  "            TG_CUDA_SPLIT_FLAG_BYTES + (size_t)(tg_tail * tg_split_slots(tg_parts)) * " + std::to_string(split_state_bytes()) + "u,\n"
                  "            &tg_split_owned)) != NULL) {\n"
                  "      p.tg_tail = tg_tail;\n"
                  "      p.tg_parts = tg_parts;\n"
                  "    }\n"
                  "  }\n"
                : "")
     << (np_split_ ? "  if (fold == 0) { /* split loop (docs/cuda-backend.md \"Split loops\"): tg_parts blocks per tile */\n"
                     "    const int64_t tg_tiles = (int64_t)grid.x * (int64_t)grid.y * (int64_t)grid.z;\n"
                     "    const int64_t tg_parts = tg_split_parts(tg_tiles" + (np_split_nk_host_.empty() ? std::string() : ", p.tg_nk") +
                         ", " + tier_pick([](size_t i, int) { return std::to_string(i); }) +
                         ", " + tier_pick([&](size_t, int w) { return "(const void*)" + inst(w); }) +
                         ", " + tier_pick([&](size_t, int w) { return tier_smem(w); }) + ");\n"
                     "    /* arrival and ready words, then the registers of tiles * tg_split_slots(parts) slots (the\n"
                     "     * stream slot's workspace, or memory the graph owns under a capture) */\n"
                     "    if (tg_parts > 1 && (uint64_t)grid.x * (uint64_t)tg_parts < 2147483648u &&\n"
                     "        (p.tg_split = (unsigned char*)tg_cuda_split_acquire((void*)stream,\n"
                     "            TG_CUDA_SPLIT_FLAG_BYTES + (size_t)(tg_tiles * tg_split_slots(tg_parts)) * " +
                         std::to_string(split_state_bytes()) + "u, &tg_split_owned)) != NULL) {\n"
                     "      p.tg_parts = tg_parts;\n"
                     "      grid.x = (unsigned)((int64_t)grid.x * tg_parts);\n"
                     "    }\n"
                     "  }\n"
                   : "")
     << (slow_exists ? folded + indented(launches) + "  }\n" : launches)
     << (split_ ? "  if (tma && p.tg_tail > 0 && tg_e == cudaSuccess) /* the split tiles' parts, after the whole tiles if any */\n"
                  "    /* programmatic only right after tg_kernel_ws */\n"
                  "    " + launch("tg_kernel_ws_split", "dim3((unsigned)(p.tg_tail * p.tg_parts), 1, 1)", fast_threads,
                                  "tg_smem_bytes", "tg_pdl && " + whole)
                : "")
     << (split_ || np_split_ ? "  if (tg_split_owned)\n    tg_cuda_split_release(p.tg_split, (void*)stream);\n" : "")
     << (pdl ? "  /* the last error is read (and cleared) whatever tg_e says: a later call must not see it */\n"
               "  const bool tg_ok = cudaGetLastError() == cudaSuccess && tg_e == cudaSuccess;\n"
               "  return tg_ok ? TG_OK : TG_ERR_DEVICE;\n}\n\n"
             : "  return cudaGetLastError() == cudaSuccess ? TG_OK : TG_ERR_DEVICE;\n}\n\n");
  // Only calls with a tensor off a 16-byte boundary look further (one OR of the pointers), or,
  // with repitched tensors, one whose rows are no whole 16-byte chunks.
  std::string any_off;
  for (size_t i = 0; i < k_.tensors.size(); ++i)
    any_off += (i ? " | " : "") + std::string("(uintptr_t)args->tensors[") + std::to_string(i) + "]";
  os << realign;
  os << "extern \"C\" int " << fn << "(const tg_launch* launch, const tg_variant_args* args) {\n"
     << "  if (((" << (any_off.empty() ? "0" : any_off) << ") & 15) != 0" << (P ? " || tg_uneven_rows(args)" : "")
     << ") /* a tensor off a 16-byte boundary" << (P ? ", or uneven rows" : "") << " */\n"
     << "    return tg_realigned(launch, args);\n"
     << "  return " << (P ? "tg_run(launch, args, NULL)" : "tg_run(launch, args)") << ";\n}\n\n";
  std::string func = "  out->func = ";
  if (!slow_exists) {
    func += "(const void*)tg_kernel_ws";
  } else {
    if (ws())
      func += "tma ? (const void*)tg_kernel_ws : ";
    for (size_t i = 0; i + 1 < tiers.size(); ++i)
      func += tier_test(i) + " ? (const void*)" + inst(tiers[i]) + " : ";
    func += "(const void*)" + inst(tiers.back());
  }
  os << "extern \"C\" int " << fn << "_desc(const tg_launch* launch, const tg_variant_args* args,\n"
     << "                     tg_gpu_launch_desc* out) {\n  (void)launch;\n"
     << setup_decls(ws())
     << "  int s = tg_setup(args, " << setup_args(ws(), P ? "NULL" : "") << ");\n  if (s != TG_OK)\n    return s == 1 ? TG_ERR_INVALID_ARGUMENT : s;\n"
     << no_slow
     << "  if ((s = tg_prepare_device()) != TG_OK)\n    return s;\n"
     << persist
     << (slow_exists ? "  if (" + folded_test(ws(), false) + ") { /* a grid over CUDA's limits: tg_kernel<0> along x */\n"
                       "    if (fold > 2147483647)\n      return TG_ERR_UNSUPPORTED_SHAPE; /* more than one launch */\n"
                       "    grid = dim3((unsigned)fold, 1, 1);\n    vec = 0;\n  }\n"
                     : std::string())
     << "  static_assert(sizeof(tg_params) <= sizeof(out->params), \"kernel parameters too large\");\n"
     << func << ";\n"
     << "  out->grid[0] = grid.x;\n  out->grid[1] = grid.y;\n  out->grid[2] = grid.z;\n"
     << "  out->block[0] = " << (ws() ? "tma ? " + fast_threads + " : " + T : T) << ";\n  out->block[1] = 1;\n  out->block[2] = 1;\n"
     << "  out->smem_bytes = " << (ws() ? "tma ? tg_smem_bytes : " + slow_smem
                                       : shift_smem_bytes_ > 0 ? std::string("vec == 2 ? tg_smem_bytes_shift : tg_smem_bytes")
                                                               : std::string("tg_smem_bytes")) << ";\n"
     << "  __builtin_memcpy(out->params, &p, sizeof p);\n  out->args[0] = out->params;\n  return TG_OK;\n}\n";
  return os.str();
}

bool CudaEmitter::vector_tested(const Buffer& t) const {
  if (!scalar_only_)
    scalar_only_ = scalar_only_tensors(k_);
  return !scalar_only_->count(&t);
}

std::string CudaEmitter::tensor_vec_check(int64_t W, const std::function<bool(size_t)>& which) {
  std::string c;
  for (size_t i = 0; i < k_.tensors.size(); ++i) {
    const auto& t = k_.tensors[i];
    if ((which && !which(i)) || !vector_tested(*t))
      continue;
    const int64_t v = W / t->dtype.bytes();
    c += (c.empty() ? "" : " &&\n      ") + std::string("(uintptr_t)tg_p->") + name(t->name) + " % " +
         std::to_string(W) + " == 0";
    if (!t->shape.empty() && v > 1)
      c += " && (" + (pitched(*t) ? "tg_pitch_" + name(t->name) : expr(t->shape.back())) + ") % " +
           std::to_string(v) + " == 0";
  }
  return c.empty() ? std::string("true") : c;
}

} // namespace tilegen::emit
