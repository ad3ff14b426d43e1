#include "passes/ResourceEstimate.h"

#include "layout/MatrixCore.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "passes/LegalizeCuda.h"
#include "passes/LegalizeHip.h"
#include "passes/RangeAnalysis.h"
#include "support/InternalError.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace tilegen::passes {

using namespace ir;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kMax : r;
}
int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? kMax : r;
}
int64_t round_up(int64_t v, int64_t a) { return v >= kMax - a ? kMax : (v + a - 1) / a * a; }
int64_t ceil_div(int64_t a, int64_t b) { return a >= kMax - b ? kMax / b : (a + b - 1) / b; }

// 32-bit words per element, as a fraction num/den: 16-bit types pack two to a register.
std::pair<int64_t, int64_t> words_per_elem(DType t) {
  int bytes = t.bytes();
  if (bytes >= 4)
    return {bytes / 4, 1};
  return {1, 4 / bytes};
}

// One walk over the body: the buffers a block allocates and how the ops use them.
class Walker {
public:
  Walker(const VarMap& m, DiagEngine& diag) : m_(m), diag_(diag) {}

  bool ok = true;
  std::vector<const Alloc*> allocs;                 // program order
  std::map<const Buffer*, int64_t> pipeline_factor; // shared buffers filled from Global
  std::vector<const Reduce*> reduces;
  std::vector<const Gemm*> gemms;
  std::vector<const StmtNode*> gemm_nodes; // same order, the keys of LayoutPlan::gemms

  // The value of an integer expression under the bindings, or nullopt after an error.
  std::optional<int64_t> value(const Expr& e, const SourceLoc& loc, const std::string& what) {
    Expr v = simplify(substitute(e, m_));
    if (auto c = as_const_int(v))
      return *c;
    diag_.error(loc, what + " " + to_string(e) + " is not a constant once the schedule is fixed (" +
                         to_string(v) + ")");
    ok = false;
    return std::nullopt;
  }

  void walk(const Stmt& s, int64_t stages) {
    if (!s || !ok)
      return;
    switch (s->kind) {
    case StmtKind::Seq:
      for (const auto& c : s->as<Seq>()->stmts)
        walk(c, stages);
      return;
    case StmtKind::Alloc:
      allocs.push_back(s->as<Alloc>());
      return;
    case StmtKind::Copy: {
      const Copy* c = s->as<Copy>();
      if (c->src.buffer->scope == MemScope::Global && c->dst.buffer->scope == MemScope::Shared &&
          stages >= 2) {
        int64_t& f = pipeline_factor[c->dst.buffer.get()];
        f = std::max(f, stages);
      }
      return;
    }
    case StmtKind::Gemm:
      gemms.push_back(s->as<Gemm>());
      gemm_nodes.push_back(s.get());
      return;
    case StmtKind::Reduce:
      reduces.push_back(s->as<Reduce>());
      return;
    case StmtKind::For: {
      const For* f = s->as<For>();
      int64_t inner = 1; // only copies directly in a pipelined loop are multi-buffered
      if (f->pipelined()) {
        auto st = value(f->stages, f->loc, "pipeline depth");
        if (!st)
          return;
        inner = *st;
      }
      walk(f->body, inner);
      return;
    }
    case StmtKind::IfThenElse: {
      const IfThenElse* i = s->as<IfThenElse>();
      walk(i->then_case, stages);
      walk(i->else_case, stages);
      return;
    }
    case StmtKind::Parallel:
    case StmtKind::Fill:
    case StmtKind::Store:
    case StmtKind::LetStmt:
    case StmtKind::AtomicAdd:
    case StmtKind::Combine: // its peers are read from global memory where they are used
      return; // no allocation, no shared-memory or register use of their own
    }
  }

  int64_t elems(const BufferPtr& b) {
    int64_t n = 1;
    for (const auto& e : b->shape) {
      auto v = value(e, b->loc, "extent of '" + b->name + "'");
      if (!v)
        return 0;
      if (*v < 0) {
        diag_.error(b->loc, "extent " + to_string(e) + " of '" + b->name + "' is negative (" +
                                std::to_string(*v) + ") once the schedule is fixed");
        ok = false;
        return 0;
      }
      n = sat_mul(n, *v);
    }
    return n;
  }

private:
  const VarMap& m_;
  DiagEngine& diag_;
};

// The body's program points in order: every statement other than a Seq, For or
// IfThenElse, with the loops as [first, last] point ranges.
struct Points {
  std::vector<Stmt> at;
  std::vector<bool> conditional; // inside an IfThenElse: not a definite definition
  std::vector<std::pair<size_t, size_t>> loops;

  void walk(const Stmt& s, bool cond = false) {
    if (!s)
      return;
    switch (s->kind) {
    case StmtKind::Seq:
      for (const auto& c : s->as<Seq>()->stmts)
        walk(c, cond);
      return;
    case StmtKind::For: {
      size_t first = at.size();
      walk(s->as<For>()->body, cond);
      if (at.size() > first)
        loops.emplace_back(first, at.size() - 1);
      return;
    }
    case StmtKind::IfThenElse:
      walk(s->as<IfThenElse>()->then_case, true);
      walk(s->as<IfThenElse>()->else_case, true);
      return;
    case StmtKind::Combine:
      // The join of a split loop runs on few tiles and only where loops split; its peers are
      // loads, and it writes the scratch it reads (the attention spec's factors) first.
      return;
    default:
      at.push_back(s);
      conditional.push_back(cond);
      return;
    }
  }
};

// Whether statement `s` overwrites all of `b` without reading it first.
bool defines_whole(const StmtNode* s, const Buffer* b) {
  if (auto* f = s->as<Fill>())
    return f->dst.get() == b;
  if (auto* c = s->as<Copy>())
    return c->dst.buffer.get() == b && c->src.buffer.get() != b;
  if (auto* g = s->as<Gemm>())
    return g->clear && g->c.get() == b && g->a.get() != b && g->b.get() != b;
  if (auto* r = s->as<Reduce>())
    return r->clear && r->dst.get() == b && r->src.get() != b;
  return false;
}

// Words of the register buffers live at each program point. A buffer is live from its first
// to its last mention; a loop that it is mentioned in and also outside of, or whose body
// reads it before overwriting all of it (a value carried to the next iteration), keeps it
// live through the whole loop.
std::vector<int64_t> live_words(const Points& P,
                                const std::vector<std::pair<const Buffer*, int64_t>>& bufs) {
  std::vector<int64_t> live(P.at.size(), 0);
  for (const auto& [b, w] : bufs) {
    std::vector<size_t> uses;
    for (size_t i = 0; i < P.at.size(); ++i)
      if (mentions_buffer(P.at[i], b))
        uses.push_back(i);
    if (uses.empty())
      continue;
    size_t lo = uses.front(), hi = uses.back();
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& [s, e] : P.loops) {
        if (hi < s || lo > e || (lo <= s && hi >= e))
          continue; // disjoint, or live through the loop already
        bool extend = !(lo >= s && hi <= e); // mentioned inside and outside
        if (!extend) {
          size_t first = *std::lower_bound(uses.begin(), uses.end(), s);
          extend = P.conditional[first] || !defines_whole(P.at[first].get(), b);
        }
        if (extend) {
          lo = std::min(lo, s);
          hi = std::max(hi, e);
          changed = true;
        }
      }
    }
    for (size_t i = lo; i <= hi; ++i)
      live[i] = sat_add(live[i], w);
  }
  return live;
}

// The fragment and local buffers of the walked body with their words per thread:
// ceil(elems * w / threads) for fragments, ceil(elems * w) for locals (w: words_per_elem).
std::vector<std::pair<const Buffer*, int64_t>> register_buffers(Walker& w, int64_t threads) {
  std::vector<std::pair<const Buffer*, int64_t>> bufs;
  for (const Alloc* a : w.allocs) {
    const BufferPtr& b = a->buffer;
    if (b->scope == MemScope::Shared)
      continue;
    auto [num, den] = words_per_elem(b->dtype);
    int64_t words = ceil_div(sat_mul(w.elems(b), num), den);
    if (b->scope == MemScope::Fragment)
      words = ceil_div(words, threads);
    bufs.emplace_back(b.get(), words);
  }
  return bufs;
}

// The register words live at each program point of `k`'s body, which `w` has walked, and
// their sum over every fragment and local (the all-at-once bound).
struct Liveness {
  Points points;
  std::vector<int64_t> live;
  int64_t all = 0;
};
Liveness liveness(const Kernel& k, Walker& w, int64_t threads) {
  Liveness L;
  auto bufs = register_buffers(w, threads);
  for (const auto& b : bufs)
    L.all = sat_add(L.all, b.second);
  L.points.walk(k.body);
  L.live = live_words(L.points, bufs);
  return L;
}

// The program points (liveness's leaf statements) of the warp-specialized loop's body: where a
// hoisted A operand is live. Empty without a warp-specialized loop.
std::set<const StmtNode*> ws_loop_points(const LayoutPlan& plan) {
  std::set<const StmtNode*> out;
  if (plan.tma_loops.size() != 1)
    return out;
  const For* loop = plan.tma_loops.begin()->first->as<For>();
  if (!loop)
    return out;
  Points p;
  p.walk(loop->body);
  for (const auto& s : p.at)
    out.insert(s.get());
  return out;
}

// The registers per thread a hoisted A of gemm `g` holds: four per wgmma k step (32 bytes of K).
int64_t hoisted_a_words(const Gemm& g, int64_t K) { return K / (32 / g.a->dtype.bytes()) * 4; }

// Registers per thread the plan's hoisted A operands hold inside the warp-specialized loop.
int64_t hoisted_words(const LayoutPlan& plan, Walker& w) {
  int64_t n = 0;
  for (const auto& [s, gp] : plan.gemms) {
    const Gemm* g = s->as<Gemm>();
    if (!gp.a_hoisted || !g)
      continue;
    if (auto K = w.value(g->a->shape[1], g->loc, "gemm K"))
      n = sat_add(n, hoisted_a_words(*g, *K));
  }
  return n;
}

} // namespace

std::string ResourceUse::smem_breakdown() const {
  std::string s;
  for (const auto& b : smem_buffers) {
    s += (s.empty() ? "" : ", ") + b.name + " ";
    int64_t one = b.elems * b.dtype_bytes;
    if (b.factor > 1)
      s += std::to_string(b.factor) + " \u00d7 " + std::to_string(one) + " B";
    else
      s += std::to_string(one) + " B";
    if (b.bytes != sat_mul(one, b.factor))
      s += " (" + std::to_string(b.bytes) + " B aligned)";
  }
  if (reduce_scratch > 0)
    s += (s.empty() ? "" : ", ") + std::string("reduce scratch ") +
         std::to_string(reduce_scratch) + " B";
  if (stage_scratch > 0)
    s += (s.empty() ? "" : ", ") + std::string("gemm staging ") + std::to_string(stage_scratch) +
         " B";
  if (pipeline_smem > 0)
    s += (s.empty() ? "" : ", ") + std::string("mbarriers and window alignment ") +
         std::to_string(pipeline_smem) + " B";
  if (static_smem > 0)
    s += (s.empty() ? "" : ", ") + std::string("split join word ") + std::to_string(static_smem) +
         " B (static, 1024-aligned)";
  return s.empty() ? "no shared buffers" : s;
}

std::string ResourceUse::register_breakdown() const {
  return std::to_string(fragment_words) + " fragment + " + std::to_string(operand_words) +
         " operand + " + (staging_words > 0 ? std::to_string(staging_words) + " staging + " : "") +
         std::to_string(overhead) + " fixed";
}

std::optional<ResourceUse> estimate_resources(const Kernel& k, const VarMap& m,
                                              const Target& target, DiagEngine& diag,
                                              const LayoutPlan* plan) {
  TG_ASSERT(target.is_gpu(), "estimate_resources on non-GPU target '" + target.name + "'");
  Walker w(m, diag);
  ResourceUse r;
  if (k.threads) {
    auto t = w.value(k.threads, k.threads->loc.known() ? k.threads->loc : k.loc, "thread count");
    if (!t)
      return std::nullopt;
    if (*t <= 0) {
      diag.error(k.threads->loc.known() ? k.threads->loc : k.loc,
                 "the thread count must be positive, found " + std::to_string(*t));
      return std::nullopt;
    }
    r.threads = *t;
  } else {
    r.threads = 128;
  }
  w.walk(k.body, 1);
  if (!w.ok)
    return std::nullopt;

  // Multi-buffered where the target copies asynchronously or stages the copies through
  // registers (HIP, HipPipeline.cpp): then each thread also holds its 16-byte chunks of one
  // stage of every such buffer (as the source stores them: FP8 before widening).
  const bool async = target.gpu.async_copy != AsyncCopy::None || target.hip.register_staged_pipeline;
  int64_t staging_chunks = 0;
  // the FP8 operands LegalizeHip widens to f16: those of gemms no FP8 matrix instruction takes
  // (gfx942 has some), by the same rule (fp8_widened_operands)
  std::set<const Buffer*> hip_widened;
  if (target.backend == Backend::HIP) {
    bool fragment_a = false;
    for (const Gemm* g : w.gemms)
      fragment_a = fragment_a || g->a->scope == MemScope::Fragment;
    bool known = true;
    hip_widened = fp8_widened_operands(w.gemms, [&](const Gemm& g) {
      if (g.c->rank() != 2 || g.a->rank() != 2)
        return false;
      auto M = w.value(g.c->shape[0], g.loc, "gemm extent");
      auto N = w.value(g.c->shape[1], g.loc, "gemm extent");
      auto K = w.value(g.transpose_a ? g.a->shape[0] : g.a->shape[1], g.loc, "gemm extent");
      if (!M || !N || !K) {
        known = false;
        return false;
      }
      return hip_fp8_matrix_native(target, g.a->dtype, g.b->dtype, g.c->dtype,
                                   g.a->scope == MemScope::Shared, g.b->scope == MemScope::Shared,
                                   *M, *N, *K, r.threads, fragment_a);
    });
    if (!known)
      return std::nullopt;
  }
  for (const Alloc* a : w.allocs) {
    const BufferPtr& b = a->buffer;
    int64_t n = w.elems(b);
    if (!w.ok)
      return std::nullopt;
    if (b->scope == MemScope::Shared) {
      SmemBuffer sb;
      sb.name = b->name;
      sb.elems = n;
      sb.dtype_bytes = b->dtype.bytes();
      // LegalizeCuda widens FP8 gemm operands to f16 where wgmma does not take them, and
      // LegalizeHip where no FP8 matrix instruction does (above).
      if (b->dtype.is_fp8() && ((target.backend == Backend::CUDA && !cuda_fp8_tiles_native(target)) ||
                                (target.backend == Backend::HIP && hip_widened.count(b.get()))))
        sb.dtype_bytes = 2;
      auto it = w.pipeline_factor.find(b.get());
      sb.factor = async && it != w.pipeline_factor.end() ? it->second : 1;
      if (target.hip.register_staged_pipeline && sb.factor >= 2)
        staging_chunks = sat_add(staging_chunks, ceil_div(ceil_div(sat_mul(n, b->dtype.bytes()), 16), r.threads));
      // Panels of wgmma operands and TMA boxes start and end on 1024-byte swizzle atoms
      // (emit/CudaEmitter.cpp plan_memory): the padding before one counts with it.
      const int64_t align = plan && plan->panels.count(b.get()) ? 1024 : kSmemAlign;
      const int64_t start = round_up(r.smem_bytes, align);
      sb.bytes = sat_add(start - r.smem_bytes,
                         round_up(sat_mul(sat_mul(n, sb.dtype_bytes), sb.factor), align));
      r.smem_bytes = sat_add(r.smem_bytes, sb.bytes);
      r.smem_buffers.push_back(std::move(sb));
    }
  }
  if (!w.ok)
    return std::nullopt;

  int64_t max_reduce = 0;
  for (const Reduce* red : w.reduces) {
    max_reduce = std::max(max_reduce, w.elems(red->dst));
    if (!w.ok)
      return std::nullopt;
  }
  if (max_reduce > 0)
    r.reduce_scratch = round_up(sat_mul((r.threads / 32) * 4, max_reduce), kSmemAlign);
  r.smem_bytes = sat_add(r.smem_bytes, r.reduce_scratch);

  int64_t staged = 0;
  for (size_t i = 0; i < w.gemms.size(); ++i) {
    const Gemm* g = w.gemms[i];
    bool is_staged;
    if (plan) {
      auto it = plan->gemms.find(w.gemm_nodes[i]);
      is_staged = it != plan->gemms.end() && it->second.a_staged;
    } else {
      bool mma = target.gpu.mma != MatrixInst::None && g->a->dtype.is_narrow_float() &&
                 g->b->dtype.is_narrow_float() && g->c->dtype == DType::f32();
      is_staged = g->a->scope == MemScope::Fragment && !mma;
    }
    if (is_staged) {
      staged = std::max(staged, sat_mul(w.elems(g->a), 4));
      if (!w.ok)
        return std::nullopt;
    }
  }
  r.stage_scratch = staged > 0 ? round_up(staged, kSmemAlign) : 0;
  r.smem_bytes = sat_add(r.smem_bytes, r.stage_scratch);
  // What the emitter adds beside the buffers (GpuFacts::split_join_smem, ws_window_align). Without
  // it, configurations within a kilobyte of sm_90a's limit generated and cudaFuncSetAttribute
  // refused them (H100, 2026-12-07: mla_decode with 64-head tiles, 512 B under the limit).
  const bool ws = plan && plan->warp_specialized();
  if (!ws && np_split_join(k))
    r.static_smem = target.gpu.split_join_smem;
  r.smem_bytes = sat_add(r.smem_bytes, r.static_smem);
  // A warp-specialized kernel: the TMA pipeline's mbarriers after everything else, an upper
  // bound (full and empty per stage, twice for a rotated body; the consumer groups' order
  // barriers; the prologue's pair; a dynamic schedule's tile ring, 56 bytes; a split tail's
  // arrival words), and the window's run-time alignment.
  if (ws) {
    for (const auto& [s, tp] : plan->tma_loops)
      r.pipeline_smem = sat_add(r.pipeline_smem,
                                round_up(8 * (4 * tp.stages + tp.groups + 2) + 56 + 8 * tp.groups,
                                         kSmemAlign));
    r.pipeline_smem = sat_add(r.pipeline_smem, target.gpu.ws_window_align);
  }
  r.smem_bytes = sat_add(r.smem_bytes, r.pipeline_smem);

  // Registers at each program point: the live fragments, plus a gemm's operand slices, plus
  // inside the warp-specialized loop the hoisted A operands (GemmPlan::a_hoisted).
  Liveness L = liveness(k, w, r.threads);
  if (!w.ok)
    return std::nullopt;
  const int64_t hoist = plan ? hoisted_words(*plan, w) : 0;
  const std::set<const StmtNode*> in_loop =
      hoist > 0 ? ws_loop_points(*plan) : std::set<const StmtNode*>{};
  if (!w.ok)
    return std::nullopt;
  int64_t all = sat_add(L.all, hoist);
  for (size_t i = 0; i < L.points.at.size(); ++i) {
    int64_t operand = 0;
    const Gemm* g = L.points.at[i]->as<Gemm>();
    // wgmma reads shared operands by descriptor (an A from registers is a fragment, counted)
    bool wgmma = false, matrix_core = false;
    if (g && plan)
      if (auto gp = plan->gemms.find(L.points.at[i].get()); gp != plan->gemms.end()) {
        wgmma = gp->second.kind == GemmPlan::Wgmma;
        // An AMD matrix instruction (HipGemm.cpp): each lane holds, per k block, its operand
        // values of every instruction tile of its wave, A and B: (tm + tn) x steps x
        // k_per_lane 16-bit values (WMMA's upper half-wave holds copies, counted per lane).
        const GemmPlan& p = gp->second;
        if (p.kind == GemmPlan::MatrixCore && g->c->shape.size() == 2 && p.matrix >= 0 &&
            static_cast<size_t>(p.matrix) < target.hip.matrix.size()) {
          const AmdMatrixShape& ms = target.hip.matrix[static_cast<size_t>(p.matrix)];
          const auto& S = layout::matrix_core_shape(
              layout::matrix_core_kind(ms.m, ms.n, ms.k, target.gpu.warp_size));
          auto mv = w.value(g->c->shape[0], g->loc, "gemm extent");
          auto nv = w.value(g->c->shape[1], g->loc, "gemm extent");
          if (!mv || !nv)
            return std::nullopt;
          const int64_t tiles = *mv / p.wm / S.m + *nv / p.wn / S.n;
          const int64_t per_word = ms.in == "e4m3" || ms.in == "e5m2" ? 4 : 2; // values per register
          operand = ceil_div(sat_mul(tiles, p.steps * S.k_per_lane), per_word);
          matrix_core = true;
        }
        // a promoted FP8 gemm's partial fragment(s): promote_n columns of 64 rows per
        // warpgroup, two of them when the chunks alternate
        if (wgmma)
          operand = gp->second.promote_n / 2 * gp->second.promote_partials();
      }
    if (g && !wgmma && !matrix_core && target.gpu.mma != MatrixInst::None &&
        g->a->dtype.is_narrow_float()) {
      // f32 gemms run on FMA pipes straight from shared memory; mma operands are one k16
      // slice of a ([m, 16]) and b ([16, n]), 16-bit elements, spread over the threads.
      int64_t mm = 0, nn = 0;
      if (g->c->shape.size() == 2) {
        auto mv = w.value(g->c->shape[0], g->loc, "gemm extent");
        auto nv = w.value(g->c->shape[1], g->loc, "gemm extent");
        if (!mv || !nv)
          return std::nullopt;
        mm = *mv;
        nn = *nv;
      }
      int64_t halves = sat_mul(sat_add(mm, nn), 16);
      operand = ceil_div(ceil_div(halves, 2), r.threads);
    }
    all = sat_add(all, operand);
    const int64_t live =
        in_loop.count(L.points.at[i].get()) ? sat_add(L.live[i], hoist) : L.live[i];
    if (sat_add(live, operand) > sat_add(r.fragment_words, r.operand_words)) {
      r.fragment_words = live;
      r.operand_words = operand;
    }
  }
  r.overhead = kRegisterOverhead;
  if (plan && plan->warp_specialized()) {
    int64_t groups = 1;
    for (const auto& [s, tp] : plan->tma_loops)
      groups = std::max<int64_t>(groups, tp.groups);
    r.overhead = kRegisterOverheadWs;
    r.register_budget = ws_consumer_registers(r.threads * groups, target.gpu.regs_per_sm,
                                              ws_producer_registers(k, *plan));
  }
  r.staging_words = sat_mul(staging_chunks, 4);
  r.registers = sat_add(sat_add(sat_add(r.fragment_words, r.operand_words), r.staging_words), r.overhead);
  r.registers_all = sat_add(sat_add(all, r.staging_words), r.overhead);
  return r;
}

bool ws_dynamic_tiles(const Kernel& k, const LayoutPlan& plan) {
  if (plan.tma_loops.size() != 1)
    return false;
  const auto& [loop, tp] = *plan.tma_loops.begin();
  const For* f = loop->as<For>();
  return tp.groups == 1 && extent_rises_with_grid_x(k, f);
}

namespace {
bool uniform_over_tiles(const Expr& e) {
  struct V : IRVisitor {
    bool ok = true;
    void visit_VarRef(const VarRef* n) override {
      const VarKind k = n->var->kind;
      ok = ok && (k == VarKind::Dim || k == VarKind::ValueParam || k == VarKind::Flag ||
                  k == VarKind::Scalar || k == VarKind::TileConst);
    }
  } v;
  v.visit(e);
  return v.ok;
}
} // namespace

const Combine* ws_split_join(const Kernel& k, const LayoutPlan& plan) {
  if (plan.tma_loops.size() != 1 || ws_dynamic_tiles(k, plan))
    return nullptr;
  const For* loop = plan.tma_loops.begin()->first->as<For>();
  auto* q = k.body->as<Seq>();
  if (!loop || !q || !uniform_over_tiles(loop->extent))
    return nullptr;
  for (size_t i = 0; i + 1 < q->stmts.size(); ++i)
    if (q->stmts[i].get() == loop)
      return q->stmts[i + 1]->as<Combine>();
  return nullptr;
}

const Combine* np_split_join(const Kernel& k, const For** loop, bool* uniform) {
  struct ReadsTensor : IRVisitor {
    bool found = false;
    void visit_Load(const Load* n) override {
      found = found || n->buffer->scope == MemScope::Global;
      IRVisitor::visit_Load(n);
    }
  };
  // A store into shared memory in the loop's body (not a copy: a `parallel` that rewrites a
  // loaded tile, such as the dequantization of 4-bit weights before the gemm).
  struct TransformsTile : IRVisitor {
    bool found = false;
    void visit_Store(const Store* n) override {
      found = found || n->buffer->scope == MemScope::Shared;
      IRVisitor::visit_Store(n);
    }
  };
  auto* q = k.body->as<Seq>();
  if (!q || k.grid.empty())
    return nullptr;
  for (size_t i = 0; i + 1 < q->stmts.size(); ++i) {
    const For* f = q->stmts[i]->as<For>();
    const Combine* c = q->stmts[i + 1]->as<Combine>();
    if (!f || !c)
      continue;
    ReadsTensor v;
    v.visit(f->extent);
    TransformsTile t;
    t.visit(f->body);
    if (!v.found && !t.found)
      return nullptr;
    if (loop)
      *loop = f;
    if (uniform)
      *uniform = !v.found && uniform_over_tiles(f->extent);
    return c;
  }
  return nullptr;
}

bool extent_rises_with_grid_x(const Kernel& k, const For* loop) {
  if (!loop || k.grid.empty())
    return false;
  auto mono = monotonicity(loop->extent, k.grid[0].index.get());
  return mono && *mono == 1;
}

int64_t ws_producer_registers(const Kernel& k, const LayoutPlan& plan) {
  int64_t r = kProducerRegs;
  for (const auto& [s, gp] : plan.gemms)
    if (gp.kind == GemmPlan::Wgmma && gp.a_in_regs)
      r = kProducerRegsMin;
  return ws_dynamic_tiles(k, plan) ? std::max(r, kProducerRegsScheduler) : r;
}

void plan_operand_buffers(const Kernel& k, const Target& target, LayoutPlan& plan) {
  std::ostringstream sink;
  DiagEngine diag(sink);
  Walker w({}, diag);
  int64_t threads = 128;
  if (k.threads) {
    auto t = w.value(k.threads, k.loc, "thread count");
    if (!t || *t <= 0)
      return;
    threads = *t;
  }
  w.walk(k.body, 1);
  Liveness L = liveness(k, w, threads);
  if (!w.ok)
    return;
  for (size_t i = 0; i < L.points.at.size(); ++i) {
    const Gemm* g = L.points.at[i]->as<Gemm>();
    auto it = plan.gemms.find(L.points.at[i].get());
    if (!g || it == plan.gemms.end() || it->second.kind != GemmPlan::Mma)
      continue;
    GemmPlan& gp = it->second;
    auto M = w.value(g->c->shape[0], g->loc, ""), N = w.value(g->c->shape[1], g->loc, "");
    auto K = w.value(g->transpose_a ? g->a->shape[0] : g->a->shape[1], g->loc, "");
    if (!M || !N || !K)
      return;
    const int64_t MI = *M / gp.wm / 16, NI = *N / gp.wn / 8, bufs_per_step = *K > 16 ? 2 : 1;
    if (MI < 2)
      continue; // a chunk would feed only 2 mma: too few to hide its ldmatrix
    // The emitter's operand registers with B a whole k16 step ahead (CudaEmitter::gemm_mma).
    const int64_t full = (gp.a_in_regs ? 4 * MI : bufs_per_step * 4 * MI) + bufs_per_step * 2 * NI;
    const int64_t need = sat_add(sat_add(L.live[i], full), kRegisterOverhead);
    if (need <= target.gpu.regs_per_thread)
      continue;
    gp.b_chunked = true;
    plan.notes.push_back("gemm at line " + std::to_string(g->loc.line) + ": B in n16 chunks (~" +
                         std::to_string(L.live[i]) + " live fragment + " + std::to_string(full) +
                         " whole-step operand + " + std::to_string(kRegisterOverhead) +
                         " fixed registers > " + std::to_string(target.gpu.regs_per_thread) + ")");
  }
}

void plan_hoisted_operands(const Kernel& k, const Target& target, LayoutPlan& plan) {
  if (plan.tma_loops.size() != 1)
    return;
  const TmaPipeline& tp = plan.tma_loops.begin()->second;
  if (tp.groups != 1 || tp.prologue.empty())
    return;
  std::set<const Buffer*> once; // shared buffers the producer fills once per tile
  for (const StmtNode* s : tp.prologue)
    if (auto* c = s->as<Copy>())
      once.insert(c->dst.buffer.get());
  const std::set<const StmtNode*> in_loop = ws_loop_points(plan);
  std::vector<GemmPlan*> picked;
  std::vector<std::string> names;
  for (auto& [s, gp] : plan.gemms) {
    const Gemm* g = s->as<Gemm>();
    if (!g || !in_loop.count(s) || gp.kind != GemmPlan::Wgmma || gp.a_in_regs || gp.promote_n > 0 ||
        g->transpose_a || !once.count(g->a.get()) || g->a->dtype.bytes() != 2)
      continue;
    auto sw = plan.panel_swizzles.find(g->a.get());
    if (sw == plan.panel_swizzles.end() || !sw->second || sw->second->bytes != kPanelBytes)
      continue; // the emitter's ldmatrix addressing covers 128-byte panels
    gp.a_hoisted = true;
    picked.push_back(&gp);
    names.push_back("gemm at line " + std::to_string(g->loc.line) + " (" + g->a->name + ")");
  }
  if (picked.empty())
    return;
  // Kept only where the estimate with the hoisted registers leaves kHoistMargin of the
  // consumers' budget free.
  std::ostringstream sink;
  DiagEngine diag(sink);
  auto r = estimate_resources(k, {}, target, diag, &plan);
  if (!r || r->register_budget <= 0 || sat_add(r->registers, kHoistMargin) > r->register_budget) {
    for (GemmPlan* gp : picked)
      gp->a_hoisted = false;
    return;
  }
  for (const auto& n : names)
    plan.notes.push_back(n + ": A read into registers once per tile, before the loop (" +
                         r->register_breakdown() + " registers of " +
                         std::to_string(r->register_budget) + ")");
}

} // namespace tilegen::passes
