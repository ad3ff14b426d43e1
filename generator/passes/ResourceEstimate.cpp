#include "passes/ResourceEstimate.h"

#include "ir/IRPrinter.h"
#include "ir/Simplify.h"
#include "passes/LegalizeCuda.h"
#include "support/InternalError.h"

#include <algorithm>
#include <limits>
#include <map>

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
  return s.empty() ? "no shared buffers" : s;
}

std::string ResourceUse::register_breakdown() const {
  return std::to_string(fragment_words) + " fragment + " + std::to_string(operand_words) +
         " operand + " + std::to_string(kRegisterOverhead) + " fixed";
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

  const bool async = target.gpu.async_copy != AsyncCopy::None;
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
      // LegalizeCuda widens FP8 gemm operands to f16 where wgmma does not take them.
      if (b->dtype.is_fp8() && target.backend == Backend::CUDA && !cuda_fp8_tiles_native(target))
        sb.dtype_bytes = 2;
      auto it = w.pipeline_factor.find(b.get());
      sb.factor = async && it != w.pipeline_factor.end() ? it->second : 1;
      sb.bytes = round_up(sat_mul(sat_mul(n, sb.dtype_bytes), sb.factor), kSmemAlign);
      r.smem_bytes = sat_add(r.smem_bytes, sb.bytes);
      r.smem_buffers.push_back(std::move(sb));
    } else {
      auto [num, den] = words_per_elem(b->dtype);
      int64_t words = ceil_div(sat_mul(n, num), den);
      if (b->scope == MemScope::Fragment)
        words = ceil_div(words, r.threads);
      r.fragment_words = sat_add(r.fragment_words, words);
    }
  }

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

  if (target.gpu.mma != MatrixInst::None) {
    for (const Gemm* g : w.gemms) {
      if (!g->a->dtype.is_narrow_float())
        continue; // f32 gemms run on FMA pipes straight from shared memory
      // c is [m, n]; one k16 slice of a ([m, 16]) and b ([16, n]), 16-bit elements.
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
      r.operand_words = sat_add(r.operand_words, ceil_div(ceil_div(halves, 2), r.threads));
    }
  }
  r.registers = sat_add(sat_add(r.fragment_words, r.operand_words), kRegisterOverhead);
  return r;
}

} // namespace tilegen::passes
