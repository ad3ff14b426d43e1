// plan_hopper: the sm_90a decisions of layout inference (docs/hopper.md).
//
//  * A gemm lowers to wgmma.mma_async m64nNk16 when its operands are 16-bit floats, its
//    accumulator is an f32 fragment of 64 rows per warpgroup of the block, N is a multiple of
//    8 up to 256, B (and A unless it comes from registers) are shared buffers whose K-major or
//    N-major rows can be cut into panels of 128, 64 or 32 bytes, and A is not transposed.
//  * The shared operands of those gemms are stored as swizzled column panels of the widest of
//    those widths that divides the row (128 bytes for every shipped tile): the layout a TMA
//    box with CU_TENSOR_MAP_SWIZZLE_128B/64B/32B writes and a wgmma descriptor with the same
//    swizzle mode reads (8 rows of a panel = one 1024/512/256-byte swizzle atom).
//  * A pipelined loop at the top of the kernel whose producer copies can all be TMA boxes
//    (zero padding, a 2-D tile of the last two dims of a tensor of rank 2..5, same type, rows
//    a multiple of 8 and at most 256, columns whole panels) and feed only wgmma gemms becomes
//    a warp-specialized TMA pipeline. Everything else keeps the sm_80 lowering.
#include "passes/LayoutInference.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "support/InternalError.h"

#include <algorithm>

namespace tilegen::passes {

using namespace ir;

namespace {

int64_t const_or(const Expr& e, int64_t fallback) { return as_const_int(e).value_or(fallback); }

// The gemms, and the copies into shared memory, of a statement (IRVisitor walks them all).
struct OpCollector : IRVisitor {
  std::vector<const Gemm*> gemms;
  std::vector<const Copy*> shared_fills;

protected:
  void visit_Gemm(const Gemm* g) override {
    gemms.push_back(g);
    IRVisitor::visit_Gemm(g);
  }
  void visit_Copy(const Copy* c) override {
    if (c->dst.buffer->scope == MemScope::Shared)
      shared_fills.push_back(c);
    IRVisitor::visit_Copy(c);
  }
};

// The swizzle mode of a shared buffer's panels, null if it cannot be cut into panels along
// its columns (rank 2, rows whole panels of 128, 64 or 32 bytes, rows a multiple of the 8-row
// atom).
const PanelSwizzle* panel_mode(const Buffer& b) {
  if (b.scope != MemScope::Shared || b.rank() != 2 || !b.dtype.is_narrow_float())
    return nullptr;
  int64_t rows = const_or(b.shape[0], -1), cols = const_or(b.shape[1], -1);
  if (rows <= 0 || cols <= 0 || rows % 8 != 0)
    return nullptr;
  return panel_swizzle_for(cols * b.dtype.bytes());
}

// Elements per panel row of a shared buffer, 0 if it has no panels.
int64_t panel_of(const Buffer& b) {
  const PanelSwizzle* m = panel_mode(b);
  return m ? m->bytes / b.dtype.bytes() : 0;
}

} // namespace

const PanelSwizzle* panel_swizzle_for(int64_t row_bytes) {
  if (row_bytes <= 0)
    return nullptr;
  for (const PanelSwizzle& m : kPanelSwizzles) // widest first
    if (row_bytes % m.bytes == 0)
      return &m;
  return nullptr;
}

const PanelSwizzle& panel_swizzle_of(int64_t bytes) {
  for (const PanelSwizzle& m : kPanelSwizzles)
    if (m.bytes == bytes)
      return m;
  internal_error("no " + std::to_string(bytes) + "-byte panel swizzle");
}

layout::Swizzle panel_element_swizzle(const PanelSwizzle& m, int elem_bytes) {
  int chunk = 0; // log2 of the elements of a 16-byte chunk
  while ((int64_t(1) << chunk) * elem_bytes < 16)
    ++chunk;
  TG_ASSERT((int64_t(1) << chunk) * elem_bytes == 16, "panel swizzle: element size must divide 16");
  return layout::Swizzle{m.xor_bits, chunk, 3};
}

bool wgmma_eligible(const Gemm& g, int64_t threads) {
  DType a = g.a->dtype, b = g.b->dtype;
  // f16/bf16 (both operands the same type), or FP8 in any mix of e4m3 and e5m2.
  const bool fp8 = a.is_fp8() && b.is_fp8();
  if (!((a == b && a.is_16bit_float()) || fp8) || g.c->dtype != DType::f32() ||
      g.c->scope != MemScope::Fragment || g.c->rank() != 2)
    return false;
  if (g.transpose_a || threads % 128 != 0)
    return false;
  int64_t M = const_or(g.c->shape[0], -1), N = const_or(g.c->shape[1], -1);
  int64_t K = const_or(g.a->shape[1], -1);
  const int64_t k_step = fp8 ? 32 : 16; // one instruction's K: 32 bytes of either type
  if (M != 64 * (threads / 128) || N <= 0 || N % 8 != 0 || N > 256 || K <= 0 || K % k_step != 0)
    return false;
  // FP8 wgmma reads both operands K-major from shared memory (no transpose, no A registers).
  if (fp8 && (g.a->scope != MemScope::Shared || !g.transpose_b))
    return false;
  // A: K-major panels along K from shared memory, or registers (the warp-row fragment).
  if (g.a->scope == MemScope::Shared && panel_of(*g.a) == 0)
    return false;
  if (g.a->scope != MemScope::Shared && g.a->scope != MemScope::Fragment)
    return false;
  // B: [K, N] N-major (panels along N) or, transposed, [N, K] K-major (panels along K).
  return g.b->scope == MemScope::Shared && panel_of(*g.b) != 0;
}

namespace {

// A producer copy a TMA box can perform: 2-D tile of the last two dims, zero padding.
bool tma_copy(const Copy& c) {
  const Buffer& g = *c.src.buffer;
  const Buffer& s = *c.dst.buffer;
  if (g.scope != MemScope::Global || s.scope != MemScope::Shared || g.dtype != s.dtype)
    return false;
  if (c.src.tile_rank() != 2 || g.rank() < 2 || g.rank() > 5 || !is_const_zero(c.pad))
    return false;
  int64_t pc = panel_of(s);
  return pc != 0 && const_or(s.shape[0], 0) <= 256;
}

// TmaPipeline::prologue: the top-level TMA-able copies before `loop` into wgmma operands that
// nothing but the loop reads afterwards and nothing else writes.
std::vector<const StmtNode*> prologue_copies(const std::vector<Stmt>& top, const For* loop,
                                             const std::set<const Buffer*>& wgmma_operands) {
  std::vector<const StmtNode*> out;
  OpCollector fills; // the loop reads the buffer (its gemms) but must fill other buffers
  fills.visit(loop->body);
  for (const auto& s : top) {
    if (s.get() == loop)
      break;
    auto* c = s->as<Copy>();
    if (!c || !tma_copy(*c) || !wgmma_operands.count(c->dst.buffer.get()))
      continue;
    const Buffer* b = c->dst.buffer.get();
    bool alone = true;
    for (const auto& o : top)
      if (o.get() != c && o.get() != loop && !o->as<Alloc>())
        alone = alone && !mentions_buffer(o, b);
    for (const Copy* f : fills.shared_fills)
      alone = alone && f->dst.buffer.get() != b;
    if (alone)
      out.push_back(s.get());
  }
  return out;
}

} // namespace

std::set<const StmtNode*> plan_hopper(const Kernel& k, const Target& t, LayoutPlan& plan) {
  std::set<const StmtNode*> wgmma;
  if (t.gpu.mma != MatrixInst::Wgmma)
    return wgmma;
  const int64_t threads = const_or(k.threads, 0);
  OpCollector ops;
  ops.visit(k.body);
  for (const Gemm* g : ops.gemms)
    if (wgmma_eligible(*g, threads))
      wgmma.insert(g);
  // Shared buffers read by a gemm that stays on mma.sync keep the ldmatrix swizzle, so a
  // buffer shared by both kinds disqualifies its wgmma readers.
  std::set<const Buffer*> mma_read;
  for (const Gemm* g : ops.gemms)
    if (!wgmma.count(g)) {
      mma_read.insert(g->a.get());
      mma_read.insert(g->b.get());
    }
  for (auto it = wgmma.begin(); it != wgmma.end();) {
    auto* g = (*it)->as<Gemm>();
    if (mma_read.count(g->a.get()) || mma_read.count(g->b.get()))
      it = wgmma.erase(it);
    else
      ++it;
  }
  std::set<const Buffer*> wgmma_operands;
  for (const StmtNode* s : wgmma) {
    auto* g = s->as<Gemm>();
    for (const BufferPtr& b : {g->a, g->b})
      if (b->scope == MemScope::Shared) {
        plan.panels[b.get()] = panel_of(*b);
        plan.panel_swizzles[b.get()] = panel_mode(*b);
        wgmma_operands.insert(b.get());
      }
  }

  // The TMA pipeline: one pipelined loop among the top-level statements.
  std::vector<Stmt> top;
  if (auto* q = k.body->as<Seq>())
    top = q->stmts;
  else
    top = {k.body};
  const For* loop = nullptr;
  int loops = 0;
  for (const auto& s : top)
    if (auto* f = s->as<For>(); f && f->pipelined()) {
      loop = f;
      ++loops;
    }
  if (loops != 1 || const_or(loop->stages, 1) < 2 || threads % 128 != 0 || wgmma.empty())
    return wgmma;
  std::vector<Stmt> body;
  if (auto* q = loop->body->as<Seq>())
    body = q->stmts;
  else
    body = {loop->body};
  TmaPipeline p;
  p.stages = const_or(loop->stages, 2);
  for (const auto& s : body) {
    if (s->as<LetStmt>())
      return wgmma; // producers after a `let` may use it: not hoisted (as on sm_80)
    auto* c = s->as<Copy>();
    if (!c || c->src.buffer->scope != MemScope::Global || c->dst.buffer->scope != MemScope::Shared)
      continue;
    if (!tma_copy(*c) || !wgmma_operands.count(c->dst.buffer.get()))
      return wgmma;
    p.producers.push_back(s.get());
  }
  // Producers nested deeper than the loop body's top level stay synchronous on sm_80; a TMA
  // pipeline needs every shared fill of the loop at its top.
  OpCollector fills;
  fills.visit(loop->body);
  bool nested = false;
  for (const Copy* c : fills.shared_fills)
    nested = nested || std::find(p.producers.begin(), p.producers.end(), c) == p.producers.end();
  if (p.producers.empty() || nested)
    return wgmma;
  // One consumer warpgroup per tile: run two of them, ping-pong (the emitter falls back to
  // one if the second group's private shared memory does not fit).
  p.groups = threads == 128 ? 2 : 1;
  if (p.groups == 1)
    p.prologue = prologue_copies(top, loop, wgmma_operands);
  plan.tma_loops[loop] = p;
  return wgmma;
}

} // namespace tilegen::passes
