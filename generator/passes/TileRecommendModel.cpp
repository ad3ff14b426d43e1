// The analytic model of the tile recommender (docs/recommend.md "The model"): one configuration
// at one class's representative shape -> traffic, flops, occupancy, waves and an estimated
// time. Read model_config() top to bottom.
#include "passes/TileRecommend.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

#include <algorithm>
#include <cmath>

namespace tilegen::passes {

using namespace ir;

namespace {

// Global element accesses of a parallel body: bytes read and written per point.
class GlobalAccesses : public IRVisitor {
public:
  double read = 0, written = 0;

protected:
  void visit_Load(const Load* n) override {
    if (n->buffer->scope == MemScope::Global) // a packed u4/i4/e2m1 element: half its byte
      read += static_cast<double>(n->buffer->dtype.bytes()) / packed_per_byte(n->buffer->packed);
    IRVisitor::visit_Load(n);
  }
  void visit_Store(const Store* n) override {
    if (n->buffer->scope == MemScope::Global)
      written += n->buffer->dtype.bytes() * (n->op == StoreOp::Add ? 2 : 1);
    IRVisitor::visit_Store(n);
  }
};

// The index expressions of global tensors in a statement (loads anywhere, an index tensor's
// inside another's copy region included, and copy regions), each with the extent of the dim it
// indexes.
class GlobalIndices : public IRVisitor {
public:
  std::vector<std::pair<Expr, Expr>> uses;

protected:
  void visit_Load(const Load* n) override {
    if (n->buffer->scope == MemScope::Global)
      for (size_t d = 0; d < n->indices.size() && d < n->buffer->rank(); ++d)
        uses.push_back({n->indices[d], n->buffer->shape[d]});
    IRVisitor::visit_Load(n);
  }
  void visit_region(const Region& r) override {
    if (r.buffer->scope == MemScope::Global)
      for (size_t d = 0; d < r.offsets.size() && d < r.buffer->rank(); ++d)
        uses.push_back({r.offsets[d], r.buffer->shape[d]});
    IRVisitor::visit_region(r);
  }
};

// Whether an expression chooses between values by a condition that reads a global tensor
// (grouped_gemm's `rows of expert e meet this tile ? cdiv(K, BK) : 0`): how often the condition
// holds is data, which the model does not guess.
class TensorCondition : public IRVisitor {
public:
  bool found = false;

protected:
  void visit_Select(const Select* n) override {
    GlobalIndices g; // a global load anywhere in the condition
    g.visit(n->cond);
    if (!g.uses.empty())
      found = true;
    IRVisitor::visit_Select(n);
  }
};

// Walks the body of one block at the representative shape. Block indices and loop variables
// stand at their midpoint, so extents that depend on them (a causal mask's shorter loop,
// ragged last tiles) count what the average block does.
class BlockWalker {
public:
  BlockWalker(VarMap m, bool mma, bool async, bool one_ahead = false)
      : m_(std::move(m)), mma_(mma), async_(async), one_ahead_(one_ahead) {}

  double traffic = 0;        // bytes to/from global memory, one block
  double flops_mma = 0;      // gemm flops on the matrix instruction, one block
  double flops_fma = 0;      // gemm flops on FMA pipes
  double stage_bytes = 0;    // most global bytes a block has in flight at once
  bool pipelined = false;    // a pipelined loop with async copies and >= 2 stages reads global

  // The integer value of e, or `fallback` where it does not fold (a scalar-dependent extent):
  // the model then counts one trip, and says so nowhere else; docs/recommend.md lists it.
  int64_t eval(const Expr& e, int64_t fallback) {
    auto v = as_const_int(simplify(substitute(e, m_)));
    return v ? *v : fallback;
  }
  void bind(const VarPtr& v, int64_t value) { m_[v.get()] = make_i64(value); }

  // A loop whose trip count is a tensor's value (a sequence's length) has none at the
  // representative shape. It runs at most as long as the indices its variable computes stay
  // inside the tensors they index (a block table's columns bound a paged sequence's pages): the
  // largest n for which every such index that folds is in [0, dim) at iteration n - 1. 1 where
  // no index mentions the variable, or where a condition on a tensor's values picks the trip
  // count (how often it holds is data).
  int64_t trips_bounded_by_indices(const For* f, int64_t start) {
    TensorCondition c;
    c.visit(f->extent);
    if (c.found)
      return 1;
    GlobalIndices g;
    g.visit(f->body);
    std::vector<std::pair<Expr, Expr>> uses;
    for (const auto& u : g.uses)
      if (mentions_var(u.first, f->var.get()))
        uses.push_back(u);
    auto inside = [&](int64_t n) {
      bind(f->var, start + n - 1);
      bool any = false;
      for (const auto& [index, dim] : uses) {
        auto i = as_const_int(simplify(substitute(index, m_)));
        auto d = as_const_int(simplify(substitute(dim, m_)));
        if (!i || !d)
          continue;
        any = true;
        if (*i < 0 || *i >= *d)
          return false;
      }
      return any;
    };
    if (uses.empty() || !inside(1))
      return 1;
    int64_t lo = 1, hi = 2; // inside(lo), and hi is the next to try
    constexpr int64_t kMax = int64_t(1) << 30;
    while (hi <= kMax && inside(hi)) {
      lo = hi;
      hi *= 2;
    }
    if (hi > kMax)
      return lo;
    while (hi - lo > 1) { // inside(lo), !inside(hi)
      int64_t mid = lo + (hi - lo) / 2;
      (inside(mid) ? lo : hi) = mid;
    }
    return lo;
  }

  // Bytes of the part of a global region inside its tensor.
  double region_bytes(const Region& r) {
    const Buffer& b = *r.buffer;
    size_t lead = b.rank() - r.tile_rank();
    double n = 1;
    for (size_t d = 0; d < b.rank(); ++d) {
      int64_t size = eval(b.shape[d], 1);
      int64_t off = eval(r.offsets[d], 0);
      int64_t ext = d < lead ? 1 : eval(r.extents[d - lead], 1);
      n *= static_cast<double>(std::clamp<int64_t>(size - off, 0, ext));
    }
    return n * b.dtype.bytes();
  }

  // Returns the global bytes `s` reads per execution outside nested loops (a loop's own are
  // accounted as its stage).
  double walk(const Stmt& s, double trips) {
    if (!s)
      return 0;
    switch (s->kind) {
    case StmtKind::Seq: {
      double r = 0;
      for (const auto& c : s->as<Seq>()->stmts)
        r += walk(c, trips);
      return r;
    }
    case StmtKind::Copy: {
      const Copy* c = s->as<Copy>();
      double r = 0;
      if (c->src.buffer->scope == MemScope::Global) {
        r = region_bytes(c->src);
        traffic += r * trips;
      }
      if (c->dst.buffer->scope == MemScope::Global)
        traffic += region_bytes(c->dst) * trips;
      return r;
    }
    case StmtKind::AtomicAdd: {
      const AtomicAdd* a = s->as<AtomicAdd>();
      traffic += 2 * region_bytes(a->dst) * trips; // read-modify-write in L2
      return 0;
    }
    case StmtKind::Combine:
      return 0; // a few tiles per launch, on the targets that split loops at all
    case StmtKind::Gemm: {
      const Gemm* g = s->as<Gemm>();
      double mm = eval(g->c->shape[0], 0), nn = eval(g->c->shape[1], 0);
      double kk = eval(g->transpose_a ? g->a->shape[0] : g->a->shape[1], 0);
      double f = 2 * mm * nn * kk * trips;
      (mma_ && g->a->dtype.is_narrow_float() ? flops_mma : flops_fma) += f;
      return 0;
    }
    case StmtKind::Parallel: {
      const Parallel* p = s->as<Parallel>();
      double points = 1;
      for (const auto& e : p->extents)
        points *= static_cast<double>(eval(e, 1));
      GlobalAccesses g;
      g.visit(p->body);
      traffic += (g.read + g.written) * points * trips;
      return g.read * points;
    }
    case StmtKind::LetStmt: {
      const LetStmt* l = s->as<LetStmt>();
      if (auto v = as_const_int(simplify(substitute(l->value, m_))))
        bind(l->var, *v);
      return 0;
    }
    case StmtKind::IfThenElse: {
      const IfThenElse* i = s->as<IfThenElse>();
      Expr c = simplify(substitute(i->cond, m_));
      if (auto b = c->as<BoolImm>())
        return walk(b->value ? i->then_case : i->else_case, trips);
      return walk(i->then_case, trips) + walk(i->else_case, trips); // unknown: both count
    }
    case StmtKind::For: {
      const For* f = s->as<For>();
      int64_t start = eval(f->start, 0), extent = std::max<int64_t>(eval(f->extent, -1), -1);
      if (extent < 0) // no value at the shape: bounded by what the loop indexes
        extent = trips_bounded_by_indices(f, start);
      int64_t stages = f->pipelined() ? eval(f->stages, 1) : 1;
      bind(f->var, start + std::max<int64_t>(extent - 1, 0) / 2);
      double per_iter = walk(f->body, trips * static_cast<double>(extent));
      bool overlapped = async_ && stages >= 2;
      if (per_iter > 0 && overlapped)
        pipelined = true;
      // in flight: stages - 1 tiles of cp.async; one tile of a register-staged pipeline (HIP:
      // the loads of tile i + S - 1 are waited for at the end of iteration i)
      stage_bytes = std::max(stage_bytes, per_iter * (overlapped && !one_ahead_ ? stages - 1 : 1));
      return 0;
    }
    case StmtKind::Alloc:
    case StmtKind::Fill:
    case StmtKind::Reduce:
    case StmtKind::Store:
      return 0;
    }
    return 0;
  }

private:
  VarMap m_;
  bool mma_, async_, one_ahead_;
};

} // namespace

ModelNumbers model_config(const Kernel& k, const VarMap& m, const ResourceUse& use,
                          const ShapeClassRep& shape, const Target& target) {
  const GpuFacts& g = target.gpu;
  ModelNumbers r;

  // The problem: runtime dims at the class's shape, on top of the instance and configuration.
  VarMap at_shape = m;
  for (const auto& d : k.dims)
    for (const auto& [name, v] : shape.dims)
      if (d.var->name == name)
        at_shape[d.var.get()] = make_i64(v);
  // register-staged pipelines (HIP) overlap the next tile's loads with the compute, one tile ahead
  BlockWalker w(at_shape, g.mma != MatrixInst::None,
                g.async_copy != AsyncCopy::None || target.hip.register_staged_pipeline,
                target.hip.register_staged_pipeline);

  // Grid at the shape; each block index at its midpoint.
  double blocks = 1;
  for (const auto& gd : k.grid) {
    int64_t e = std::max<int64_t>(w.eval(gd.extent, 1), 0);
    blocks *= static_cast<double>(e);
    w.bind(gd.index, std::max<int64_t>(e - 1, 0) / 2);
  }
  r.blocks = static_cast<int64_t>(blocks);

  // One block's work.
  double top = w.walk(k.body, 1);
  w.stage_bytes = std::max(w.stage_bytes, top);
  r.stage_bytes = w.stage_bytes;

  // Occupancy: resident blocks per SM, limited by shared memory (plus the driver's reserve),
  // registers (allocated per warp in 256-register units of 8-register-rounded counts),
  // threads and the block limit. Registers: every fragment at once (registers_all), not the
  // live peak that decides eligibility: with the peak, the model's occupancy term tied
  // configurations that measured slower on the H200 (docs/recommend.md "Registers").
  int64_t warps = (use.threads + g.warp_size - 1) / g.warp_size;
  int64_t regs = (use.registers_all + 7) / 8 * 8;
  int64_t regs_per_warp = (regs * g.warp_size + 255) / 256 * 256;
  // (a block without shared memory on a target that reserves none, HIP: no limit from it)
  const int64_t smem_block = use.smem_bytes + g.smem_reserved_per_block;
  int64_t by_smem = smem_block > 0 ? g.smem_per_sm / smem_block : g.max_blocks_per_sm;
  int64_t by_regs = regs_per_warp > 0 ? g.regs_per_sm / regs_per_warp / warps : 0;
  // A warp-specialized block is persistent, one per SM, and redistributes the register file
  // with setmaxnreg (its producer warpgroup gives registers up): one block when its consumers
  // fit their budget, whatever threads x registers.
  if (use.register_budget > 0)
    by_regs = use.registers_all <= use.register_budget ? 1 : 0;
  int64_t by_threads = g.max_threads_per_sm / (warps * g.warp_size);
  r.blocks_per_sm = std::min({by_smem, by_regs, by_threads, int64_t(g.max_blocks_per_sm)});
  r.occupancy_limit = r.blocks_per_sm == by_smem      ? "smem"
                      : r.blocks_per_sm == by_regs    ? "regs"
                      : r.blocks_per_sm == by_threads ? "threads"
                                                      : "blocks/SM";
  if (r.blocks_per_sm <= 0 || r.blocks <= 0) {
    r.time_us = INFINITY;
    r.bound = r.blocks <= 0 ? "empty" : "unlaunchable";
    return r;
  }

  // Split loops (CUDA's non-persistent kernel, docs/cuda-backend.md "Split loops"): a launch of
  // at most half the resident blocks runs each tile's loop in s parts, as tg_split_parts
  // chooses them (its resident blocks: shared memory and threads, not registers; at least 8
  // iterations a part where every tile's trip count is known). Each of the s x blocks then
  // does 1/s of a block's work, plus the join: every part but one stores its carried
  // fragments and the part that merges reads them back.
  const For* split_loop = nullptr;
  bool uniform = false;
  if (target.backend == Backend::CUDA && use.register_budget == 0 &&
      np_split_join(k, &split_loop, &uniform)) {
    const int64_t slots = resident_blocks(g, use.smem_bytes, use.threads) * g.sm_count, T = r.blocks;
    int64_t s = 2 * T <= slots ? std::min<int64_t>(slots / T, 64) : 0;
    const int64_t nk = uniform ? w.eval(split_loop->extent, -1) : -1;
    if (nk >= 0)
      s = std::min<int64_t>(s, nk / 8);
    // the workspace's arrival and ready words (TG_CUDA_SPLIT_CUTS each)
    while (s >= 2 && (T * split_join_words(s) > 1024 || T * split_join_slots(s) > 1024))
      --s;
    if (s >= 2) {
      double carry = 0;
      for (const auto& c : np_split_join(k)->carry) {
        double n = c.state->dtype.bytes();
        for (const auto& e : c.state->shape)
          n *= static_cast<double>(std::max<int64_t>(w.eval(e, 1), 1));
        carry += n;
      }
      const double sd = static_cast<double>(s);
      w.traffic = w.traffic / sd + 2 * carry * (sd - 1) / sd;
      w.flops_mma /= sd;
      w.flops_fma /= sd;
      r.parts = s;
      r.blocks = T * s;
      blocks = static_cast<double>(r.blocks);
    }
  }

  // Totals (reported) and the time: full waves of slots = blocks_per_sm * sm_count blocks,
  // then the last partial wave.
  r.traffic_bytes = w.traffic * blocks;
  r.flops = (w.flops_mma + w.flops_fma) * blocks;
  r.overlap = w.pipelined || r.blocks_per_sm >= 2;
  const double slots = static_cast<double>(r.blocks_per_sm) * g.sm_count;
  const double full = std::floor(blocks / slots), last = blocks - full * slots;
  r.waves = static_cast<int64_t>(full + (last > 0 ? 1 : 0));
  r.wave_eff = blocks / (static_cast<double>(r.waves) * slots);

  // Unique bytes: every tensor once, at the shape (what DRAM must move at least).
  double unique = 0;
  for (const auto& t : k.tensors) {
    double n = t->dtype.bytes();
    for (const auto& e : t->shape)
      n *= static_cast<double>(std::max<int64_t>(w.eval(e, 1), 0));
    unique += n;
  }
  r.unique_bytes = unique;

  const double dram = g.dram_gbps * 1e3;            // bytes per microsecond
  const double l2 = std::max(g.l2_gbps, g.dram_gbps) * 1e3;
  const double peak_mma_sm = g.mma_tflops * 1e6 / g.sm_count; // flops per us per SM
  const double peak_fma_sm = g.fp32_tflops * 1e6 / g.sm_count;
  const double lat_us = g.mem_latency_ns * 1e-3;
  auto wave = [&](double nblk, double per_sm, bool& latency_bound) {
    // Memory: the blocks' bytes come through L2 at the L2 bandwidth or at what their bytes in
    // flight sustain (Little's law: in-flight bytes / latency), whichever is lower; the
    // wave's share of the unique bytes must also come from DRAM.
    double bytes = nblk * w.traffic;
    double sustain = nblk * w.stage_bytes / lat_us;
    double rate = std::min(l2, sustain > 0 ? sustain : l2);
    latency_bound = sustain < l2;
    double mem = std::max(bytes / rate, unique * (nblk / blocks) / dram);
    // Compute: the busiest SM runs `per_sm` blocks at its share of the peak.
    double comp = per_sm * (w.flops_mma / (peak_mma_sm > 0 ? peak_mma_sm : peak_fma_sm) +
                            w.flops_fma / peak_fma_sm);
    r.mem_us += mem;
    r.compute_us += comp;
    return r.overlap ? std::max(mem, comp) : mem + comp;
  };
  bool lat_full = false, lat_last = false;
  double t = 0;
  if (full > 0)
    t += full * wave(slots, static_cast<double>(r.blocks_per_sm), lat_full);
  if (full > 0) { // wave() added one wave's worth: scale to all full waves
    r.mem_us *= full;
    r.compute_us *= full;
  }
  if (last > 0)
    t += wave(last, std::ceil(last / g.sm_count), lat_last);
  r.time_us = t;
  bool latency = full > 0 ? lat_full : lat_last;
  r.bound = r.compute_us >= r.mem_us ? "compute" : latency ? "latency" : "memory";
  return r;
}

} // namespace tilegen::passes
