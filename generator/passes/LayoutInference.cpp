#include "passes/LayoutInference.h"
#include "passes/ResourceEstimate.h"
#include "passes/VectorParallel.h"

#include "ir/IRVisitor.h"
#include "layout/MatrixCore.h"
#include "support/InternalError.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <set>

namespace tilegen::passes {

using namespace ir;
using layout::FragmentLayout;

namespace {

// The arrangement wm x wn of `groups` warps (SIMD-groups, waves) over an M x N accumulator whose
// per-warp tiles are whole multiples of tm x tn: the squarest warp tile wins (the fewest operand
// bytes per instruction), ties going to more rows; `one_column`: wn must be 1 (each warp owns
// whole rows). False if no arrangement fits.
bool best_warp_split(int64_t groups, int64_t M, int64_t N, int64_t tm, int64_t tn, bool one_column,
                     int64_t& wm_out, int64_t& wn_out) {
  double best = 1e30;
  bool found = false;
  for (int64_t wm = 1; wm <= groups; ++wm) {
    const int64_t wn = groups / wm;
    if (wm * wn != groups || (one_column && wn != 1) || M % (tm * wm) != 0 || N % (tn * wn) != 0)
      continue;
    const double cost = std::fabs(std::log2(double(M / wm) / double(N / wn))) - 1e-3 * double(wm);
    if (cost < best) {
      best = cost;
      wm_out = wm;
      wn_out = wn;
      found = true;
    }
  }
  return found;
}

// Points of a parallel loop without a fragment (LayoutPlan::loops) a block may run: far more
// than any tile, small enough that every register coordinate fits in 32 bits.
constexpr int64_t kMaxLoopPoints = int64_t(1) << 24;

std::string points_str(const Parallel* p) {
  std::string s;
  for (const auto& e : p->extents)
    s += (s.empty() ? "" : " x ") + std::to_string(e->as<IntImm>() ? e->as<IntImm>()->value : -1);
  return s;
}

std::string upper(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

int64_t const_of(const Expr& e, const char* what) {
  auto* i = e->as<IntImm>();
  TG_ASSERT(i, std::string("layout inference: ") + what + " is not constant after instantiation");
  return i->value;
}

std::vector<int64_t> shape_of(const Buffer& b) {
  std::vector<int64_t> s;
  for (const auto& e : b.shape)
    s.push_back(const_of(e, "an on-chip shape"));
  return s;
}

void flatten(const Stmt& s, std::vector<Stmt>& out) {
  if (!s)
    return;
  out.push_back(s);
  if (auto* q = s->as<Seq>())
    for (const auto& c : q->stmts)
      flatten(c, out);
  else if (auto* f = s->as<For>())
    flatten(f->body, out);
  else if (auto* i = s->as<IfThenElse>()) {
    flatten(i->then_case, out);
    flatten(i->else_case, out);
  } else if (auto* c = s->as<Combine>())
    flatten(c->body, out);
}

bool is_fragment(const BufferPtr& b) { return b && b->scope == MemScope::Fragment; }

// Fragment accesses inside a parallel body: (buffer, indices, where).
struct Access {
  BufferPtr buffer;
  std::vector<Expr> indices;
  SourceLoc loc;
};
class AccessCollector : public IRVisitor {
public:
  std::vector<Access> out;

protected:
  void visit_Load(const Load* l) override {
    if (is_fragment(l->buffer))
      out.push_back({l->buffer, l->indices, l->loc});
    IRVisitor::visit_Load(l);
  }
  void visit_Store(const Store* s) override {
    if (is_fragment(s->buffer))
      out.push_back({s->buffer, s->indices, s->loc});
    IRVisitor::visit_Store(s);
  }
};

class Inference {
public:
  Inference(const Kernel& k, const Target& t, DiagEngine& d) : k_(k), t_(t), diag_(d) {}

  std::optional<LayoutPlan> run() {
    threads_ = const_of(k_.threads, "threads");
    flatten(k_.body, stmts_);
    for (const auto& s : stmts_)
      if (auto* a = s->as<Alloc>())
        if (a->buffer->scope == MemScope::Fragment)
          fragments_.push_back(a->buffer);
    if (threads_ % t_.gpu.warp_size != 0) {
      diag_.error(k_.loc, t_.name + ": a block of " + std::to_string(threads_) +
                              " threads is not a whole number of " +
                              std::to_string(t_.gpu.warp_size) + "-thread " +
                              t_.gpu.warp_word + "s");
      return std::nullopt;
    }
    for (const auto& s : stmts_)
      if (auto* a = s->as<Alloc>(); a && a->buffer->scope != MemScope::Local &&
                                    a->buffer->rank() > static_cast<size_t>(t_.gpu.max_tile_rank)) {
        diag_.error(a->buffer->loc, t_.name + ": " + mem_scope_name(a->buffer->scope) + " buffer '" +
                                        a->buffer->name + "' has rank " +
                                        std::to_string(a->buffer->rank()) + "; " +
                                        upper(backend_name(t_.backend)) + " targets lay out shared and "
                                        "fragment buffers of rank 1 to " +
                                        std::to_string(t_.gpu.max_tile_rank) +
                                        " (rows x columns): merge dims or split the buffer");
        return std::nullopt;
      }
    if (!check_operands())
      return std::nullopt;
    mark_row_owned();
    for (const auto& s : stmts_)
      if (auto* g = s->as<Gemm>(); g && is_fragment(g->a))
        fragment_a_ = true;
    wgmma_ = plan_hopper(k_, t_, plan_);
    for (const auto& s : stmts_)
      if (auto* g = s->as<Gemm>())
        if (!plan_gemm(s, *g))
          return std::nullopt;
    while (true) {
      if (!propagate())
        return std::nullopt;
      const BufferPtr* pick = nullptr;
      for (const auto& b : fragments_)
        if (!plan_.fragments.count(b.get()) && (!pick || b->rank() > (*pick)->rank()))
          pick = &b;
      if (!pick)
        break;
      // A fragment that nothing placed but a gemm reads as its A operand from registers
      // (weights a parallel dequantizes into registers, tests/lit/cuda/weights_in_registers.test)
      // takes that operand's layout: the parallel that writes it then computes each thread's
      // own operand registers.
      if (auto want = a_operand_layout(*pick)) {
        assign(*pick, want->first, want->second);
        continue;
      }
      assign(*pick,
             layout::elementwise(shape_of(**pick), threads_, default_vector(*pick),
                                 t_.gpu.warp_size),
             (*pick)->loc);
    }
    if (!check_gemm_operands())
      return std::nullopt;
    if (!plan_loops())
      return std::nullopt;
    plan_swizzles();
    for (const auto& b : fragments_)
      plan_.notes.push_back("fragment " + b->name + ": " + plan_.fragments.at(b.get()).origin +
                            "; " + plan_.fragments.at(b.get()).str());
    return std::move(plan_);
  }

private:
  // Where each op's operands may live on a GPU target (docs/spec.md "Rules of the GPU
  // targets"): a thread block's registers are split among its threads, so an op that combines
  // elements across threads needs them in fragments (whose layout says who holds what) or in
  // shared memory; a local buffer is one thread's scratch for parallel bodies.
  bool check_operands() {
    auto fail = [&](const StmtNode& s, const std::string& msg) {
      diag_.error(s.loc, t_.name + ": " + msg);
      return false;
    };
    for (const auto& st : stmts_) {
      const StmtNode& s = *st;
      if (auto* c = s.as<Copy>()) {
        for (const Buffer* b : {c->src.buffer.get(), c->dst.buffer.get()})
          if (b->scope == MemScope::Local)
            return fail(s, "copy into or out of local buffer '" + b->name + "': on GPU targets "
                           "a local buffer is each thread's own scratch for parallel bodies, so "
                           "a tile copy has no meaning there; use a fragment or shared buffer");
      } else if (auto* r = s.as<Reduce>()) {
        for (const BufferPtr& b : {r->src, r->dst})
          if (!is_fragment(b))
            return fail(s, "reduce " + std::string(b == r->src ? "from" : "into") + " " +
                               mem_scope_name(b->scope) + " buffer '" + b->name +
                               "': GPU targets reduce fragments (the threads that hold a row "
                               "combine it); copy it into a fragment first");
      } else if (auto* g = s.as<Gemm>()) {
        if (!is_fragment(g->c))
          return fail(s, "gemm into " + std::string(mem_scope_name(g->c->scope)) + " buffer '" +
                             g->c->name + "': GPU targets accumulate in a fragment; declare '" +
                             g->c->name + "' as a fragment (copy it to shared memory after the gemm)");
        if (g->b->scope != MemScope::Shared)
          return fail(s, "gemm reads operand b from " + std::string(mem_scope_name(g->b->scope)) +
                             " buffer '" + g->b->name + "': GPU targets read b from shared "
                             "memory (every warp needs all of it); copy it into a shared buffer");
        if (g->a->scope != MemScope::Shared && !is_fragment(g->a))
          return fail(s, "gemm reads operand a from local buffer '" + g->a->name +
                             "': GPU targets read a from shared memory or a fragment");
      } else if (auto* a = s.as<AtomicAdd>()) {
        if (!is_fragment(a->src.buffer))
          return fail(s, "atomic_add from " + std::string(mem_scope_name(a->src.buffer->scope)) +
                             " buffer '" + a->src.buffer->name + "': GPU targets add from a "
                             "fragment; copy it into one first");
      }
    }
    return true;
  }

  // Fragments read as a gemm's A operand, and what they are copied from: their producers
  // must give each warp whole rows so the registers are the A operand as they are.
  void mark_row_owned() {
    for (const auto& s : stmts_)
      if (auto* g = s->as<Gemm>())
        if (is_fragment(g->a) && !g->transpose_a)
          row_owned_.insert(g->a.get());
    bool changed = true;
    while (changed) {
      changed = false;
      for (const auto& s : stmts_)
        if (auto* c = s->as<Copy>())
          if (is_fragment(c->src.buffer) && is_fragment(c->dst.buffer) &&
              row_owned_.count(c->dst.buffer.get()) &&
              row_owned_.insert(c->src.buffer.get()).second)
            changed = true;
    }
  }

  bool mma_eligible(const Gemm& g) const {
    if (t_.gpu.mma != MatrixInst::MmaM16N8K16 && t_.gpu.mma != MatrixInst::Wgmma)
      return false;
    DType a = g.a->dtype, b = g.b->dtype;
    if (!(a == b && a.is_16bit_float() && g.c->dtype == DType::f32()))
      return false;
    if (g.b->scope != MemScope::Shared || (g.a->scope != MemScope::Shared && !is_fragment(g.a)))
      return false;
    if (is_fragment(g.a) && g.transpose_a)
      return false;
    auto c = shape_of(*g.c);
    auto as = shape_of(*g.a);
    int64_t K = g.transpose_a ? as[0] : as[1];
    return c[0] % 16 == 0 && c[1] % 16 == 0 && K % 16 == 0;
  }

  // Metal's simdgroup_matrix: an f32 accumulator of 8-multiple sides and depth; operands of
  // any float type (each lane converts its elements to f32 as it loads them), b in shared
  // memory, a in shared memory or (not transposed) a fragment.
  bool simdgroup_eligible(const Gemm& g) const {
    if (t_.gpu.mma != MatrixInst::Simdgroup8x8 || g.c->dtype != DType::f32())
      return false;
    if (!g.a->dtype.is_float() || !g.b->dtype.is_float() || g.a->dtype == DType::f64() ||
        g.b->dtype == DType::f64())
      return false;
    if (g.b->scope != MemScope::Shared || (g.a->scope != MemScope::Shared && !is_fragment(g.a)))
      return false;
    if (is_fragment(g.a) && g.transpose_a)
      return false;
    auto c = shape_of(*g.c);
    auto as = shape_of(*g.a);
    const int64_t K = g.transpose_a ? as[0] : as[1];
    return c[0] % 8 == 0 && c[1] % 8 == 0 && K % 8 == 0;
  }

  // The AMD matrix instruction (index into HipFacts::matrix) of gemm `g` on a HIP target with
  // MFMA/WMMA, or -1 (FMA tiles): A and B 16-bit floats of the instruction's type in shared
  // memory, C f32, and some arrangement of the block's waves into whole instruction tiles. A
  // kernel where any gemm reads A from a fragment (attention's P) keeps FMA tiles for all of
  // them: the accumulator rows of the two gemms must agree, and the MFMA accumulator is not
  // an A operand (docs/hip.md "Limits").
  int64_t matrix_core_instruction(const Gemm& g) const {
    // The table says which targets have MFMA/WMMA (only HIP rows do): no backend test here.
    if (t_.gpu.mma != MatrixInst::Mfma && t_.gpu.mma != MatrixInst::Wmma)
      return -1;
    if (fragment_a_ || g.a->scope != MemScope::Shared || g.b->scope != MemScope::Shared)
      return -1;
    const DType a = g.a->dtype, b = g.b->dtype;
    // FP8 reaches here only where LegalizeHip kept it (hip_fp8_matrix_native: the same test)
    if (!(a == b && (a.is_16bit_float() || a.is_fp8()) && g.c->dtype == DType::f32()))
      return -1;
    auto c = shape_of(*g.c);
    auto as = shape_of(*g.a);
    const int64_t K = g.transpose_a ? as[0] : as[1];
    const int64_t waves = threads_ / t_.gpu.warp_size;
    for (size_t i = 0; i < t_.hip.matrix.size(); ++i) {
      const AmdMatrixShape& ms = t_.hip.matrix[i];
      if (ms.in != a.name() || K % ms.k != 0)
        continue;
      for (int64_t wm = 1; wm <= waves; ++wm)
        if (waves % wm == 0 && c[0] % (ms.m * wm) == 0 && c[1] % (ms.n * (waves / wm)) == 0)
          return static_cast<int64_t>(i);
    }
    return -1;
  }

  // GemmPlan::promote_n of an FP8 wgmma gemm that adds into its accumulator (not `clear`) on
  // a target whose FP8 accumulation keeps fewer bits than f32: the fewest equal column chunks
  // of at most 128 columns (a partial of at most 64 registers per thread next to the
  // accumulator's N / 2), each a multiple of 8 (a wgmma N). 0 where no promotion is needed.
  int64_t fp8_promote_chunk(const Gemm& g, int64_t N) const {
    const int bits = t_.gpu.fp8_accum_bits;
    if (!g.a->dtype.is_fp8() || g.clear || g.fast_accum || bits <= 0 || bits >= 23)
      return 0;
    for (int64_t chunks = 1; chunks <= N / 8; ++chunks) {
      const int64_t n = N / chunks;
      if (N % chunks == 0 && n % 8 == 0 && n <= 128)
        return n;
    }
    return 8;
  }

  bool plan_gemm(const Stmt& s, const Gemm& g) {
    GemmPlan p;
    auto c = shape_of(*g.c);
    int64_t M = c[0], N = c[1];
    FragmentLayout acc;
    if (wgmma_.count(s.get())) {
      // wgmma m64nNk16: warp w of warpgroup g owns rows 64 g + 16 (w % 4) .. + 15 and, per
      // 8 columns, the registers of an mma.sync m16n8 accumulator (PTX ISA "wgmma register
      // fragments"), so the block's accumulator is the mma.sync layout of one warp per 16
      // rows; the emitter maps the instruction's operand order onto it.
      p.kind = GemmPlan::Wgmma;
      p.wg = threads_ / 128;
      p.wm = threads_ / 32;
      p.wn = 1;
      p.a_in_regs = is_fragment(g.a);
      p.promote_n = fp8_promote_chunk(g, N);
      // two partials next to the accumulator: N / 2 + promote_n registers per thread
      p.promote_pairs = p.promote_n > 0 && p.promote_n < N && N / 2 + p.promote_n <= 192;
      if (p.promote_n > 0)
        plan_.notes.push_back(
            "gemm at line " + std::to_string(g.loc.line) + ": FP8 wgmma keeps ~" +
            std::to_string(t_.gpu.fp8_accum_bits) + " accumulator bits: each call's partial sums " +
            "(K " + std::to_string(shape_of(*g.a)[1]) + ") go to " +
            (p.promote_pairs ? "two zeroed fragments of " : "a zeroed fragment of ") +
            std::to_string(p.promote_n) + " columns" + (p.promote_pairs ? " in turn" : " at a time") +
            ", added to " + g.c->name + " in f32");
      acc = layout::mma_m16n8k16_accumulator(M, N, p.wm, 1);
      acc.origin = "wgmma m64n" + std::to_string(N) + "k" + std::to_string(32 / g.a->dtype.bytes()) + " accumulator, " + std::to_string(p.wg) +
                   " warpgroup(s) of 64 rows";
    } else if (int64_t mi = matrix_core_instruction(g); mi >= 0) {
      // An AMD matrix instruction: waves WM x WN over the tile, the squarest wave tile winning
      // (as for mma.sync), the 32x32 shape before 16x16 (the table's order).
      const AmdMatrixShape& ms = t_.hip.matrix[static_cast<size_t>(mi)];
      const auto& shape = layout::matrix_core_shape(
          layout::matrix_core_kind(ms.m, ms.n, ms.k, t_.gpu.warp_size));
      // matrix_core_instruction found an arrangement: this picks the squarest.
      best_warp_split(threads_ / t_.gpu.warp_size, M, N, ms.m, ms.n, false, p.wm, p.wn);
      p.kind = GemmPlan::MatrixCore;
      p.matrix = mi;
      auto as = shape_of(*g.a);
      const int64_t K = g.transpose_a ? as[0] : as[1];
      p.steps = shape.groups > 1 && K % (2 * ms.k) == 0 ? 2 : 1;
      acc = layout::matrix_core_accumulator(shape, M, N, p.wm, p.wn, ms.mnemonic);
    } else if (mma_eligible(g)) {
      p.kind = GemmPlan::Mma;
      int64_t warps = threads_ / 32;
      bool rows = row_owned_.count(g.c.get()) || is_fragment(g.a);
      p.a_in_regs = is_fragment(g.a);
      // every split (12 warps: 3 warpgroups), warp tiles of whole 16 x 16
      if (!best_warp_split(warps, M, N, 16, 16, rows, p.wm, p.wn)) {
        diag_.error(s->loc, t_.name + ": gemm into '" + g.c->name + "' [" + std::to_string(M) +
                                ", " + std::to_string(N) + "]: no arrangement of " +
                                std::to_string(warps) + " warps" +
                                (rows ? " with whole rows per warp" : "") +
                                " tiles it with mma.sync m16n8k16 (each warp needs a multiple "
                                "of 16 rows and 16 columns)");
        if (rows)
          diag_.note(s->loc, "whole rows per warp are needed because the result feeds a gemm's "
                             "A operand from registers");
        return false;
      }
      acc = layout::mma_m16n8k16_accumulator(M, N, p.wm, p.wn);
    } else if (simdgroup_eligible(g)) {
      // Metal: SIMD-groups of 8x8 matrices, the same search as mma.sync with 8-row tiles.
      p.kind = GemmPlan::Simdgroup;
      const int64_t groups = threads_ / t_.gpu.warp_size;
      const bool rows = row_owned_.count(g.c.get()) || is_fragment(g.a);
      p.a_in_regs = is_fragment(g.a);
      if (!best_warp_split(groups, M, N, 8, 8, rows, p.wm, p.wn)) {
        diag_.error(s->loc, t_.name + ": gemm into '" + g.c->name + "' [" + std::to_string(M) +
                                ", " + std::to_string(N) + "]: no arrangement of " +
                                std::to_string(groups) + " SIMD-groups" +
                                (rows ? " with whole rows per SIMD-group" : "") +
                                " tiles it with simdgroup_matrix 8x8 (each SIMD-group needs a "
                                "multiple of 8 rows and 8 columns): give the block fewer "
                                "threads or the gemm a larger tile");
        if (rows)
          diag_.note(s->loc, "whole rows per SIMD-group are needed because the result feeds a "
                             "gemm's A operand from registers");
        return false;
      }
      acc = layout::simdgroup_accumulator(M, N, p.wm, p.wn);
    } else {
      p.kind = GemmPlan::Simt;
      p.a_staged = is_fragment(g.a);
      double best = 1e30;
      bool found = false;
      // Gemms with the same number of rows use the same threads along M, so that their
      // accumulators agree on the row map (attention: the scores and the output rows).
      auto same_rows = simt_rows_.find(M);
      for (int64_t ty = 1; ty <= threads_; ty *= 2) {
        int64_t tx = threads_ / ty;
        if (tx * ty != threads_ || M % ty != 0 || N % (4 * tx) != 0)
          continue;
        double cost = std::fabs(std::log2(double(M / ty) / double(N / tx)));
        if (same_rows != simt_rows_.end() && same_rows->second != ty)
          cost += 1e6;
        if (cost < best) {
          best = cost;
          p.ty = ty;
          p.tx = tx;
          found = true;
        }
      }
      if (!found) {
        diag_.error(s->loc, t_.name + ": gemm into '" + g.c->name + "' [" + std::to_string(M) +
                                ", " + std::to_string(N) + "]: " + std::to_string(threads_) +
                                " threads cannot tile it with FMA tiles (rows must divide by the "
                                "threads along M, columns by 4 x the threads along N)");
        return false;
      }
      simt_rows_.emplace(M, p.ty);
      acc = layout::simt_accumulator(M, N, p.ty, p.tx);
    }
    plan_.gemms[s.get()] = p;
    return assign(g.c, acc, s->loc);
  }

  // Sets b's layout, or reports a conflict with the op that set it before.
  bool assign(const BufferPtr& b, const FragmentLayout& l, const SourceLoc& where) {
    auto it = plan_.fragments.find(b.get());
    if (it == plan_.fragments.end()) {
      plan_.fragments.emplace(b.get(), l);
      decided_at_[b.get()] = where;
      return true;
    }
    if (it->second.shape == l.shape && it->second.thread_modes == l.thread_modes &&
        it->second.regs == l.regs)
      return true;
    diag_.error(where, t_.name + ": layout conflict on fragment '" + b->name + "': this op needs " +
                           l.origin + " but it already has " + it->second.origin);
    diag_.note(decided_at_[b.get()], "the layout of '" + b->name + "' was decided here");
    return false;
  }

  int64_t default_vector(const BufferPtr& b) const {
    // The widest 16-byte access of the global tensors this fragment is copied from or to.
    int64_t vec = 4;
    for (const auto& s : stmts_)
      if (auto* c = s->as<Copy>()) {
        const Region* other = nullptr;
        if (c->dst.buffer == b && c->src.buffer->scope == MemScope::Global)
          other = &c->src;
        if (c->src.buffer == b && c->dst.buffer->scope == MemScope::Global)
          other = &c->dst;
        if (other)
          vec = std::max<int64_t>(vec, 16 / other->buffer->dtype.bytes());
      }
    return vec;
  }

  bool propagate() {
    bool changed = true;
    while (changed) {
      changed = false;
      for (const auto& s : stmts_) {
        if (auto* c = s->as<Copy>()) {
          if (!is_fragment(c->src.buffer) || !is_fragment(c->dst.buffer))
            continue;
          auto* ls = find(c->src.buffer), *ld = find(c->dst.buffer);
          if (ls && !ld) {
            FragmentLayout l = *ls;
            l.origin = "follows '" + c->src.buffer->name + "' (" + ls->origin + ")";
            assign(c->dst.buffer, l, s->loc);
            changed = true;
          } else if (ld && !ls) {
            FragmentLayout l = *ld;
            l.origin = "follows '" + c->dst.buffer->name + "' (" + ld->origin + ")";
            assign(c->src.buffer, l, s->loc);
            changed = true;
          } else if (ls && ld && !same(*ls, *ld)) {
            diag_.error(s->loc, t_.name + ": copy between fragments '" + c->src.buffer->name +
                                    "' and '" + c->dst.buffer->name +
                                    "' with different layouts (" + ls->origin + " vs " +
                                    ld->origin + "); copy through a shared buffer instead");
            diag_.note(decided_at_[c->src.buffer.get()], "layout of '" + c->src.buffer->name +
                                                             "' decided here");
            diag_.note(decided_at_[c->dst.buffer.get()], "layout of '" + c->dst.buffer->name +
                                                             "' decided here");
            return false;
          }
        } else if (auto* r = s->as<Reduce>()) {
          if (!is_fragment(r->src) || !is_fragment(r->dst))
            continue;
          auto* ls = find(r->src);
          reduced_from_[r->dst.get()] = {r->src.get(), r->dim};
          if (ls && !find(r->dst)) {
            assign(r->dst, ls->drop_dim(static_cast<size_t>(r->dim)), s->loc);
            changed = true;
          } else if (ls && !assign(r->dst, ls->drop_dim(static_cast<size_t>(r->dim)), s->loc)) {
            return false;
          }
        } else if (auto* cb = s->as<Combine>()) {
          // A peer holds the other part's registers of its state fragment, thread by thread.
          for (const auto& c : cb->carry) {
            auto* ls = find(c.state), *lp = find(c.peer);
            if (ls && !lp) {
              FragmentLayout l = *ls;
              l.origin = "the other part's '" + c.state->name + "' (" + ls->origin + ")";
              assign(c.peer, l, s->loc);
              changed = true;
            } else if (ls && lp && !same(*ls, *lp)) {
              diag_.error(c.peer->loc, t_.name + ": '" + c.peer->name + "' needs the layout of '" +
                                           c.state->name + "' (" + ls->origin + ") but 'combine' gave it " +
                                           lp->origin + "; index both the same way");
              return false;
            }
          }
        } else if (auto* p = s->as<Parallel>()) {
          int res = propagate_parallel(s, *p);
          if (res < 0)
            return false;
          changed = changed || res > 0;
        }
      }
    }
    return true;
  }

  // A layout conflict between a reduce's result and its source, where the variable indexes the
  // source's reduced dim (`reduce ... dim: 0` then `m[i]` beside `x[i, j]`): usually the wrong
  // `dim`; the note says so. (p, dp) and (q, dq): the two buffers and the dims v indexes.
  void reduce_hint(const Var* v, const Buffer* p, size_t dp, const Buffer* q, size_t dq) {
    for (int pass = 0; pass < 2; ++pass, std::swap(p, q), std::swap(dp, dq)) {
      auto it = reduced_from_.find(p);
      if (it == reduced_from_.end() || it->second.first != q ||
          dq != static_cast<size_t>(it->second.second))
        continue;
      const int rd = it->second.second;
      std::string fix = q->rank() == 2 ? "reduce over dim " + std::to_string(1 - rd) +
                                             " for one value per " + (rd == 1 ? "column" : "row") +
                                             " of '" + q->name + "', or index '" + p->name +
                                             "' by the variable of dim " + std::to_string(1 - rd) + " of '" +
                                             q->name + "'"
                                       : "reduce over another dim, or index '" + p->name +
                                             "' by a variable of the other dims of '" + q->name + "'";
      diag_.note(decided_at_[p], "'" + p->name + "' is '" + q->name + "' reduced over dim " +
                                     std::to_string(rd) + ", but '" + v->name + "' indexes dim " +
                                     std::to_string(rd) + " of '" + q->name +
                                     "' here, the dim the reduce removed: " + fix);
      return;
    }
  }

  // Returns -1 on a conflict, 1 if a layout was assigned, 0 otherwise.
  int propagate_parallel(const Stmt& s, const Parallel& p) {
    AccessCollector ac;
    ac.visit(p.body);
    std::map<const Var*, FragmentLayout::DimMap> maps;
    std::map<const Var*, std::pair<std::string, std::vector<std::string>>> from; // buffer, names
    std::map<const Var*, std::pair<const Buffer*, size_t>> first_use; // buffer, dim it indexes
    auto var_of = [&](const Expr& e) -> const Var* {
      auto* v = e->as<VarRef>();
      if (!v)
        return nullptr;
      for (const auto& pv : p.vars)
        if (pv.get() == v->var.get())
          return pv.get();
      return nullptr;
    };
    for (const auto& a : ac.out) {
      for (const auto& i : a.indices)
        if (!var_of(i)) {
          diag_.error(a.loc, t_.name + ": fragment '" + a.buffer->name +
                                 "' must be indexed by the parallel variables themselves on GPU "
                                 "targets (each thread owns fixed elements of it)");
          return -1;
        }
      auto* l = find(a.buffer);
      if (!l)
        continue;
      for (size_t d = 0; d < a.indices.size(); ++d) {
        const Var* v = var_of(a.indices[d]);
        auto m = l->dim_map(d);
        auto it = maps.find(v);
        if (it == maps.end()) {
          maps[v] = m;
          std::vector<std::string> names;
          for (const auto& t : l->thread_modes)
            names.push_back(t.name);
          from[v] = {a.buffer->name, names};
          first_use[v] = {a.buffer.get(), d};
        } else if (!(it->second == m)) {
          diag_.error(a.loc, t_.name + ": layout conflict in a parallel loop: variable '" +
                                 v->name + "' indexes '" + a.buffer->name + "' (" + l->origin +
                                 ") and '" + from[v].first + "', whose layouts place it differently");
          diag_.note(s->loc, "in this parallel loop");
          diag_.note(decided_at_[a.buffer.get()], "layout of '" + a.buffer->name + "' decided here");
          reduce_hint(v, a.buffer.get(), d, first_use[v].first, first_use[v].second);
          return -1;
        }
      }
    }
    int changed = 0;
    for (const auto& a : ac.out) {
      if (find(a.buffer))
        continue;
      std::vector<FragmentLayout::DimMap> dm;
      std::vector<std::string> names;
      bool all = true;
      for (const auto& i : a.indices) {
        auto it = maps.find(var_of(i));
        if (it == maps.end()) {
          all = false;
          break;
        }
        if (!dm.empty() && it->second.thread_sizes != dm[0].thread_sizes) {
          all = false;
          break;
        }
        dm.push_back(it->second);
        names = from[var_of(i)].second;
      }
      if (!all || dm.empty())
        continue;
      auto shape = shape_of(*a.buffer);
      assign(a.buffer,
             FragmentLayout::from_dim_maps(dm, names, shape,
                                           "follows '" + from[var_of(a.indices[0])].first +
                                               "' in the parallel loop at line " +
                                               std::to_string(s->loc.line)),
             s->loc);
      changed = 1;
    }
    return changed;
  }

  // Parallel loops no fragment drives get a layout of their own: the dim maps of the fragments
  // they index by some variables (propagate_parallel made those agree), every point of the
  // other variables in each thread's registers; with no fragment at all, the elementwise
  // layout of the loop's extents.
  bool plan_loops() {
    for (const auto& s : stmts_) {
      auto* p = s->as<Parallel>();
      if (!p || parallel_driver(*p).buffer)
        continue;
      std::vector<int64_t> extents;
      int64_t points = 1;
      for (const auto& e : p->extents) {
        extents.push_back(const_of(e, "a parallel extent"));
        if (__builtin_mul_overflow(points, extents.back(), &points) || points > kMaxLoopPoints) {
          diag_.error(p->loc, t_.name + ": a parallel loop of " + points_str(p) + " points; " +
                                  upper(backend_name(t_.backend)) + " targets run parallel "
                                  "loops of at most 2^24 points per block (their register "
                                  "coordinates are 32-bit): put a serial 'for' around a "
                                  "smaller parallel loop");
          return false;
        }
      }
      AccessCollector ac;
      ac.visit(p->body);
      std::vector<std::optional<FragmentLayout::DimMap>> maps(p->vars.size());
      const FragmentLayout* first = nullptr;
      const Access* first_access = nullptr;
      for (const auto& a : ac.out) {
        const FragmentLayout* l = find(a.buffer);
        TG_ASSERT(l, "layout inference: fragment '" + a.buffer->name + "' has no layout");
        if (first && l->dim_map(0).thread_sizes != first->dim_map(0).thread_sizes) {
          diag_.error(a.loc, t_.name + ": this parallel loop indexes '" + a.buffer->name + "' (" +
                                 l->origin + ") and '" + first_access->buffer->name + "' (" +
                                 first->origin + ") by different variables, and their layouts "
                                 "split the threads differently (a thread holds only its own "
                                 "part of each); copy one of them into a shared buffer and read "
                                 "it from there, or index one fragment by all of the loop's "
                                 "variables");
          diag_.note(s->loc, "in this parallel loop");
          return false;
        }
        if (!first) {
          first = l;
          first_access = &a;
        }
        for (size_t d = 0; d < a.indices.size(); ++d)
          for (size_t v = 0; v < p->vars.size(); ++v)
            if (auto* r = a.indices[d]->as<VarRef>(); r && r->var.get() == p->vars[v].get())
              maps[v] = l->dim_map(d);
      }
      FragmentLayout loop;
      if (!first) {
        // Element-wise over shared memory: runs of consecutive points where the accesses
        // allow vectors (passes/VectorParallel), else one point per thread and access.
        const int64_t vec = plan_parallel_vector(*p, t_.gpu.parallel_vector_bytes).width;
        if (vec > 1) {
          loop = layout::elementwise_runs(extents, threads_, vec, t_.gpu.warp_size);
          plan_.loop_vectors[s.get()] = vec;
        } else {
          loop = layout::elementwise(extents, threads_, 1, t_.gpu.warp_size);
        }
      } else {
        std::vector<FragmentLayout::DimMap> dm;
        std::vector<std::string> names;
        for (const auto& t : first->thread_modes)
          names.push_back(t.name);
        for (size_t v = 0; v < p->vars.size(); ++v) {
          if (maps[v]) {
            dm.push_back(*maps[v]);
            continue;
          }
          FragmentLayout::DimMap all_in_regs;
          all_in_regs.thread_sizes = first->dim_map(0).thread_sizes;
          all_in_regs.thread_strides.assign(all_in_regs.thread_sizes.size(), 0);
          all_in_regs.regs = {{extents[v], 1}};
          dm.push_back(all_in_regs);
        }
        loop = FragmentLayout::from_dim_maps(dm, names, extents,
                                             "follows '" + first_access->buffer->name + "'");
      }
      plan_.notes.push_back("parallel loop at line " + std::to_string(p->loc.line) +
                            " (no fragment indexed by all of its variables): " + loop.origin +
                            "; " + loop.str());
      plan_.loops.emplace(s.get(), std::move(loop));
    }
    return true;
  }

  // The layout gemm `g`'s A operand from registers needs (check_gemm_operands tests it).
  FragmentLayout a_operand_want(const Gemm& g, const GemmPlan& p) const {
    auto as = shape_of(*g.a);
    return p.kind == GemmPlan::Simdgroup ? layout::simdgroup_accumulator(as[0], as[1], p.wm, 1)
                                         : layout::mma_m16n8k16_accumulator(as[0], as[1], p.wm, 1);
  }

  // The layout of b and the gemm's location if some gemm reads b as its A operand from
  // registers (its first such gemm), else nothing.
  std::optional<std::pair<FragmentLayout, SourceLoc>> a_operand_layout(const BufferPtr& b) const {
    for (const auto& s : stmts_) {
      auto* g = s->as<Gemm>();
      if (!g || g->a != b)
        continue;
      const GemmPlan& p = plan_.gemms.at(s.get());
      if (p.kind == GemmPlan::Simt || !p.a_in_regs)
        return std::nullopt;
      FragmentLayout l = a_operand_want(*g, p);
      l.origin += " (A operand from registers of the gemm at line " + std::to_string(s->loc.line) + ")";
      return std::make_pair(std::move(l), s->loc);
    }
    return std::nullopt;
  }

  bool check_gemm_operands() {
    for (const auto& s : stmts_) {
      auto* g = s->as<Gemm>();
      if (!g)
        continue;
      const GemmPlan& p = plan_.gemms.at(s.get());
      if (p.kind == GemmPlan::Simt || !p.a_in_regs)
        continue;
      const FragmentLayout want = a_operand_want(*g, p);
      const FragmentLayout& have = plan_.fragments.at(g->a.get());
      if (!same(have, want)) {
        diag_.error(s->loc, t_.name + ": gemm reads '" + g->a->name +
                                "' as its A operand from registers, which needs " + want.origin +
                                ", but it has " + have.origin);
        diag_.note(decided_at_[g->a.get()], "layout of '" + g->a->name + "' decided here");
        return false;
      }
    }
    return true;
  }

  void plan_swizzles() {
    // In allocation order (the map is keyed by pointer): generated comments are deterministic.
    for (const auto& st : stmts_) {
      auto* a = st->as<Alloc>();
      auto pit = a ? plan_.panels.find(a->buffer.get()) : plan_.panels.end();
      if (pit == plan_.panels.end())
        continue;
      const Buffer* b = pit->first;
      const int64_t pc = pit->second;
      // The panel's swizzle mode (128, 64 or 32 bytes, plan_hopper) inside each panel.
      const PanelSwizzle& mode = *plan_.panel_swizzles.at(b);
      layout::Swizzle sw = panel_element_swizzle(mode, b->dtype.bytes());
      plan_.swizzles[b] = sw;
      const std::string w = std::to_string(mode.bytes);
      plan_.notes.push_back("shared " + b->name + ": panels of " + std::to_string(pc) +
                            " columns, " + sw.str() + " in each (TMA SWIZZLE_" + w + "B, wgmma " +
                            w + "-byte descriptors)");
    }
    for (const auto& [loop, tp] : plan_.tma_loops)
      plan_.notes.push_back("pipelined loop at line " + std::to_string(loop->loc.line) + ": " +
                            std::to_string(tp.stages) + "-stage TMA + mbarrier pipeline, " +
                            std::to_string(tp.producers.size()) +
                            " producer cop(ies) issued by a producer warp; " +
                            std::to_string(threads_) + " consumer threads");
    // AMD matrix instructions: each operand buffer gets the first layout whose reads, as HipGemm
    // issues them (layout::matrix_core_operand_reads), are conflict-free under the target's LDS
    // bank model (the table's banks and ds_read_b128 lane groups): the ldmatrix swizzle for a
    // K-major operand, then none, then XOR swizzles of 16-byte chunks (Swizzle<B, log2(16 /
    // elem), S>, which keep the 16-byte global->LDS stores whole), fewest bits first; if none is,
    // the one with the fewest conflicts, and a note says so.
    for (const auto& s : stmts_) {
      auto* g = s->as<Gemm>();
      if (!g || plan_.gemms.at(s.get()).kind != GemmPlan::MatrixCore)
        continue;
      const GemmPlan& p = plan_.gemms.at(s.get());
      const AmdMatrixShape& ms = t_.hip.matrix[static_cast<size_t>(p.matrix)];
      const auto& shape =
          layout::matrix_core_shape(layout::matrix_core_kind(ms.m, ms.n, ms.k, t_.gpu.warp_size));
      const layout::LdsBankModel model{t_.gpu.smem_banks, t_.gpu.warp_size, t_.hip.lds_b128_groups};
      for (const BufferPtr& b : {g->a, g->b}) {
        const bool k_major = b == g->a ? !g->transpose_a : g->transpose_b;
        if (b->scope != MemScope::Shared || b->rank() != 2)
          continue;
        auto sh = shape_of(*b);
        const int eb = b->dtype.bytes();
        int best_ways = 0;
        const layout::Swizzle best =
            layout::matrix_core_operand_swizzle(model, shape, p.steps, k_major, sh[0], sh[1], eb,
                                                &best_ways);
        if (best.B == 0 && !k_major)
          continue; // stays as stored (no note: sources unchanged where nothing is needed)
        plan_.swizzles[b.get()] = best;
        plan_.notes.push_back(
            "shared " + b->name + ": " + best.str() +
            (best_ways == 1 ? std::string(" (the matrix instructions' operand reads conflict-free)")
                            : " (the matrix instructions' operand reads " + std::to_string(best_ways) +
                                  "-way bank-conflicted: no XOR swizzle of 16-byte chunks avoids it)"));
      }
    }
    for (const auto& s : stmts_) {
      auto* g = s->as<Gemm>();
      if (!g || plan_.gemms.at(s.get()).kind != GemmPlan::Mma)
        continue;
      for (const BufferPtr& b : {g->a, g->b}) {
        if (b->scope != MemScope::Shared || b->rank() != 2)
          continue;
        auto sh = shape_of(*b);
        auto sw = layout::ldmatrix_swizzle(sh[1], b->dtype.bytes());
        plan_.swizzles[b.get()] = sw;
        plan_.notes.push_back("shared " + b->name + ": " + sw.str() +
                              " (ldmatrix rows and cp.async chunks conflict-free)");
      }
    }
  }

  static bool same(const FragmentLayout& a, const FragmentLayout& b) {
    return a.shape == b.shape && a.thread_modes == b.thread_modes && a.regs == b.regs;
  }
  const FragmentLayout* find(const BufferPtr& b) const {
    auto it = plan_.fragments.find(b.get());
    return it == plan_.fragments.end() ? nullptr : &it->second;
  }

  const Kernel& k_;
  const Target& t_;
  DiagEngine& diag_;
  int64_t threads_ = 0;
  std::vector<Stmt> stmts_;
  std::vector<BufferPtr> fragments_;
  std::set<const Buffer*> row_owned_;
  bool fragment_a_ = false; // some gemm reads A from a fragment
  std::set<const StmtNode*> wgmma_; // gemms lowered to wgmma (plan_hopper)
  std::map<int64_t, int64_t> simt_rows_; // rows of a SIMT gemm -> threads along them
  std::map<const Buffer*, SourceLoc> decided_at_;
  // reduce results: their source and the dim the reduce removed (the hint of reduce_hint)
  std::map<const Buffer*, std::pair<const Buffer*, int>> reduced_from_;
  LayoutPlan plan_;
};

} // namespace

ParallelDriver parallel_driver(const Parallel& p) {
  AccessCollector ac;
  ac.visit(p.body);
  for (const auto& a : ac.out) {
    std::vector<size_t> dims(p.vars.size(), SIZE_MAX);
    for (size_t d = 0; d < a.indices.size(); ++d)
      for (size_t v = 0; v < p.vars.size(); ++v)
        if (auto* r = a.indices[d]->as<VarRef>(); r && r->var.get() == p.vars[v].get())
          dims[v] = d;
    if (std::find(dims.begin(), dims.end(), SIZE_MAX) == dims.end())
      return {a.buffer.get(), dims};
  }
  return {};
}

std::optional<LayoutPlan> infer_layouts(const Kernel& k, const Target& target, DiagEngine& diag) {
  auto plan = Inference(k, target, diag).run();
  if (plan && target.is_gpu()) {
    plan_operand_buffers(k, target, *plan);
    plan_hoisted_operands(k, target, *plan);
  }
  return plan;
}

} // namespace tilegen::passes
