// CudaEmitter, sm_90a: wgmma gemms, TMA + mbarrier pipelines and the warp-specialized kernel
// (docs/hopper.md). The decisions are LayoutInference's (plan_hopper): which gemms use wgmma,
// which shared buffers are swizzled panels (128, 64 or 32 bytes), which pipelined loop becomes a
// TMA pipeline. This file only prints them.
//
// A warp-specialized kernel runs `threads` consumer threads (warpgroups 0..W-1, the spec's
// block) plus one producer warpgroup W. After the mbarriers are initialized the producer
// warpgroup lowers its register budget (setmaxnreg.dec), one of its threads issues every
// stage's TMA boxes, and it leaves; the consumers raise their budget (setmaxnreg.inc) and run
// the spec's statements, the pipelined loop waiting on `full[stage]` and releasing the stage
// through `empty[stage]` (one arrival per consumer warp) once its wgmmas have read it.
#include "emit/CudaEmitter.h"

#include "passes/ResourceEstimate.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "support/InternalError.h"
#include "support/TextEscape.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace tilegen::emit {

using namespace ir;

namespace {

// PTX type names of the wgmma operand types; all but f16 are spelled as in ir/DType.h.
const char* ptx_type(DType t) { return t.name(); }
// K of one wgmma: 32 bytes of either operand type (k16 for 16-bit, k32 for FP8).
int64_t wgmma_k(DType t) { return 32 / t.bytes(); }

std::string wgmma_fn_name(int64_t n, DType a, DType b, bool a_regs, bool trans_b) {
  std::string types = ptx_type(a);
  if (a != b)
    types += std::string("_") + ptx_type(b);
  return "tg_wgmma_m64n" + std::to_string(n) + "k" + std::to_string(wgmma_k(a)) + "_" + types +
         (a_regs ? "_rs" : "_ss") + (trans_b ? "_tb" : "");
}

const Copy* as_copy(const StmtNode* s) { return s->as<Copy>(); }

// Whether a TMA load box of the file fills panels narrower than 128 bytes (64- or 32-byte
// swizzle); the epilogue's store boxes are always 128-byte panels.
template <class Maps> bool narrow_panels(const Maps& maps, const passes::LayoutPlan& plan) {
  for (const auto& m : maps)
    if (plan.panel_swizzles.at(m.copy->dst.buffer.get())->bytes != passes::kPanelBytes)
      return true;
  return false;
}

// Whether s writes shared memory (a copy or a store into a shared buffer).
bool writes_shared(const Stmt& s) {
  struct Finder : IRVisitor {
    bool found = false;

  protected:
    void visit_Copy(const Copy* c) override {
      found = found || c->dst.buffer->scope == MemScope::Shared;
      IRVisitor::visit_Copy(c);
    }
    void visit_Store(const Store* st) override {
      found = found || st->buffer->scope == MemScope::Shared;
      IRVisitor::visit_Store(st);
    }
  } f;
  f.visit(s);
  return f.found;
}

// The statements of a warp-specialized loop's body that are not its TMA producers, in order.
std::vector<Stmt> ws_consumers(const For* f, const passes::TmaPipeline& tp) {
  std::vector<Stmt> body, consumers;
  if (auto* q = f->body->as<Seq>())
    body = q->stmts;
  else
    body = {f->body};
  for (const auto& s : body)
    if (std::find(tp.producers.begin(), tp.producers.end(), s.get()) == tp.producers.end())
      consumers.push_back(s);
  return consumers;
}

// One k step of a wgmma gemm as the emitter computes it: the A argument (a descriptor offset
// or packed registers) and B's byte offset from the descriptor's start.
using WgmmaStep = std::pair<std::string, int64_t>;

// The call of wgmma helper `fn` for step `s` into accumulator `d`, B `b_bytes` further on
// (a column chunk of B), with scale-d `scale`: 0 overwrites, 1 accumulates (a run-time value
// is a predicate).
std::string wgmma_call(const std::string& fn, const std::string& d, const WgmmaStep& s,
                       int64_t b_bytes, const std::string& scale) {
  return fn + "(" + d + ", " + s.first + ", tg_db + " + std::to_string((s.second + b_bytes) >> 4) +
         ", " + scale + ");";
}

// k steps of a wgmma gemm: its K over one instruction's k (32 bytes of the operand type).
int64_t wgmma_ksteps(const Gemm* g) { return cuda_const(g->a->shape[1]) / wgmma_k(g->b->dtype); }

// The previous pipeline iteration's stage, in a loop that has advanced tg_pipe past it.
std::string prev_stage(int64_t stages) {
  return "(int)((tg_pipe + " + std::to_string(stages - 1) + ") % " + std::to_string(stages) + ")";
}

} // namespace

TmaCoordOperands tma_coord_operands(int n, int first) {
  TmaCoordOperands t;
  for (int i = 0; i < n; ++i) {
    t.params += ", int c" + std::to_string(i);
    t.regs += std::string(i ? ", " : "") + "%" + std::to_string(first + i);
    t.ops += ", \"r\"(c" + std::to_string(i) + ")";
  }
  return t;
}

std::string CudaEmitter::tma_coords(const Region& r, int64_t col, const std::string& row) {
  const size_t n = r.offsets.size();
  std::string coords;
  for (size_t d = n; d-- > 0;) {
    std::string o = expr(r.offsets[d]);
    if (d == n - 1 && col > 0)
      o = "(" + o + ") + " + std::to_string(col);
    if (n >= 2 && d == n - 2 && !row.empty())
      o = "(" + o + ") + " + row;
    coords += ", (int)(" + o + ")";
  }
  return coords;
}

// ---- the producer ------------------------------------------------------------------------------

// One TMA box per panel (128, 64 or 32 bytes of columns) of the destination tile, completing
// on mbarrier `bar`.
void CudaEmitter::tma_issue(const Copy* c, const std::string& stage, const std::string& bar) {
  const Buffer& g = *c->src.buffer;
  const Buffer* sb = c->dst.buffer.get();
  const SharedSlot& sl = slots_.at(sb);
  const int64_t pc = plan_.panels.at(sb);
  const size_t n = g.rank();
  std::string member;
  for (const auto& m : tma_maps_)
    if (m.copy == c)
      member = m.member;
  TG_ASSERT(!member.empty(), "CUDA emitter: TMA copy without a tensor map");
  stage_expr_[sb] = stage;
  std::string dst = shared_ptr(sb);
  stage_expr_.erase(sb);
  for (int64_t p = 0; p < sl.cols / pc; ++p) // coordinates innermost first, as the map's dims
    line(need("tg_tma_load_" + std::to_string(n) + "d") + "(" + dst + " + " +
         std::to_string(p * sl.rows * pc) + ", &tg_p." + member + ", " + bar +
         tma_coords(c->src, p * pc) + ");");
}

void CudaEmitter::emit_producer_branch() {
  const For* f = ws_loop_;
  const int64_t S = ws_pipe_.stages;
  line("// producer warpgroup: one thread issues every stage's TMA boxes, then the warpgroup "
       "leaves");
  const std::string consumers = std::to_string(threads_ * groups());
  open("if (tg_tid_all >= " + consumers + ")");
  // setmaxnreg budgets: passes/ResourceEstimate.h, which the recommender checks too
  const int64_t producer_regs = passes::ws_producer_registers(k_, plan_);
  line(need("tg_setmaxnreg_dec") + "<" + std::to_string(producer_regs) + ">();");
  open("if (tg_tid_all == " + consumers + ")");
  line("int64_t tg_pipe = 0; // pipeline iterations issued so far, over all tiles (stage, phase)");
  if (dynamic_tiles()) {
    open("for (int64_t tg_ti = 0;; ++tg_ti)");
    take_ring_tile("tg_ti", false);
  } else if (split_kernel_) {
    open("for (int64_t tg_ti = 0; tg_ti < 1; ++tg_ti)");
    split_part_head();
  } else {
    open("for (int64_t tg_tile = blockIdx.x; tg_tile < tg_ntiles; tg_tile += gridDim.x)");
  }
  decode_tile();
  // A grid index no TMA box of this producer, no bound of its loop and no let before it names
  // (its tile's other copies run in the consumers, e.g. a packed tensor's per-element copy) is
  // unused here.
  struct Uses : IRVisitor {
    std::set<const Var*> vars;
    void visit_VarRef(const VarRef* r) override { vars.insert(r->var.get()); }
  } uses;
  uses.visit(f->start);
  uses.visit(f->extent);
  if (auto* q = k_.body->as<Seq>()) // the lets emit_lets_before prints
    for (const auto& st : q->stmts) {
      if (st.get() == f)
        break;
      if (auto* l = st->as<LetStmt>())
        uses.visit(l->value);
    }
  for (const StmtNode* s : ws_pipe_.producers)
    for (const Region* r : {&as_copy(s)->src, &as_copy(s)->dst})
      for (const auto& e : r->offsets)
        uses.visit(e);
  // (nvcc reports it otherwise, #177-D: first seen in a W4A16 GEMM, whose packed copies run in
  // the consumers)
  for (const auto& g : k_.grid)
    if (!uses.vars.count(g.index.get()))
      line("(void)" + name(g.index->name) + ";");
  emit_lets_before(f);
  line(ws_trip_count(f));
  open("for (int64_t tg_it = 0; tg_it < tg_n; ++tg_it, ++tg_pipe)");
  line("const int tg_st = (int)(tg_pipe % " + std::to_string(S) + ");");
  line(ws_iteration(f));
  // Two barrier sets when the consumers release the first gemm's tiles before the second's
  // (the rotated body): tg_full/tg_empty for the early copies, tg_full2/tg_empty2 for the late.
  for (int set = 0; set < (late_producers_.empty() ? 1 : 2); ++set) {
    const std::string full = set ? "tg_full2" : "tg_full", empty = set ? "tg_empty2" : "tg_empty";
    int64_t set_bytes = 0;
    for (const StmtNode* s : ws_pipe_.producers)
      if (late_producers_.count(s) == static_cast<size_t>(set)) {
        const Buffer& b = *as_copy(s)->dst.buffer;
        set_bytes += tile_bytes(b);
      }
    line("// stage tg_st is free once the consumers released iteration tg_pipe - " + std::to_string(S));
    line("if (tg_pipe >= " + std::to_string(S) + ") " + need("tg_mbar_wait") + "(&" + empty +
         "[tg_st], (unsigned)(((tg_pipe / " + std::to_string(S) + ") + 1) & 1));");
    line(need("tg_mbar_expect_tx") + "(&" + full + "[tg_st], " + std::to_string(set_bytes) + "u);");
    for (const StmtNode* s : ws_pipe_.producers) {
      if (late_producers_.count(s) != static_cast<size_t>(set))
        continue;
      if (s->loc.line > 0)
        line("// " + c_line_comment(info_.spec_path) + ":" + std::to_string(s->loc.line) +
             ": copy (TMA)");
      tma_issue(as_copy(s), "tg_st", "&" + full + "[tg_st]");
    }
  }
  if (!ws_pipe_.prologue.empty()) {
    // After the first stage: that stage was freed by the previous tile's last iterations,
    // the prologue buffer only once that tile's loop is over.
    open("if (tg_it == 0)");
    emit_prologue_issue();
    close();
  }
  close();
  if (!ws_pipe_.prologue.empty()) {
    open("if (tg_n == 0)");
    emit_prologue_issue();
    close();
  }
  if (dynamic_tiles())
    line(need("tg_mbar_arrive") + "(&tg_tq[4]); // this tile's boxes are issued: draw the next");
  close();
  close();
  if (dynamic_tiles())
    emit_tile_scheduler();
  line("return;");
  close();
  line(need("tg_setmaxnreg_inc") + "<" +
       std::to_string(passes::ws_consumer_registers(threads_ * groups(), t_.gpu.regs_per_sm,
                                                    producer_regs)) +
       ">();");
}

// Dynamic tile order (dynamic_tiles()): thread 32 of the producer warpgroup draws the tiles
// and hands each to the TMA thread and the consumers through a two-slot ring in shared memory
// (tg_tq: [0..1] full, [2..3] empty, [4] the TMA thread's request; tg_tq_slot[2]); -1 ends
// their loops. It draws tile i + 1 when the TMA thread has issued tile i's boxes, stages
// iterations before the consumers finish tile i: late enough for a block that runs slow to
// draw fewer tiles, early enough to hide the atomic. Its own thread, because the TMA thread
// has no registers to spare.
void CudaEmitter::emit_tile_scheduler() {
  open("if (tg_tid_all == " + std::to_string(threads_ * groups() + 32) + ")");
  line("// the tile scheduler: the next tile is the launch's next undrawn one (one counter per");
  line("// stream, zeroed by the last block), or gridDim.x on without a counter");
  line("int64_t tg_tile = blockIdx.x;");
  open("for (int64_t tg_ti = 0;; ++tg_ti)");
  line("if (tg_ti >= 2) " + need("tg_mbar_wait") +
       "(&tg_tq[2 + (tg_ti & 1)], (unsigned)(((tg_ti >> 1) + 1) & 1)); // slot read by all");
  line("tg_tq_slot[tg_ti & 1] = tg_tile < tg_ntiles ? tg_tile : -1;");
  line(need("tg_mbar_arrive") + "(&tg_tq[tg_ti & 1]); // publishes the slot (release)");
  line("if (tg_tile >= tg_ntiles)");
  line("  break;");
  line("tg_mbar_wait(&tg_tq[4], (unsigned)(tg_ti & 1)); // the TMA thread issued tile tg_ti");
  line("tg_tile = tg_p.tg_sched ? (int64_t)gridDim.x + (int64_t)atomicAdd(&tg_p.tg_sched[0], 1u)");
  line("                        : tg_tile + gridDim.x;");
  close();
  // Every block has drawn its last tile before it counts itself done, so the last block to
  // count can zero both counters: the next launch on the stream finds them at 0.
  open("if (tg_p.tg_sched)");
  line("__threadfence();");
  open("if (atomicAdd(&tg_p.tg_sched[1], 1u) == gridDim.x - 1)");
  line("__threadfence();");
  line("tg_p.tg_sched[0] = 0u;");
  line("tg_p.tg_sched[1] = 0u;");
  close();
  close();
  close();
}

// The head of a loop over the ring's tiles: tile number `counter` of this block, read and
// released by the consumer warps (one arrive each) or the TMA thread; -1 leaves the loop.
void CudaEmitter::take_ring_tile(const std::string& counter, bool consumers) {
  line(need("tg_mbar_wait") + "(&tg_tq[" + counter + " & 1], (unsigned)((" + counter +
       " >> 1) & 1)); // the scheduler's next tile");
  line("const int64_t tg_tile = tg_tq_slot[" + counter + " & 1];");
  if (consumers)
    line("__syncwarp();");
  line(std::string(consumers ? "if (tg_tid % 32 == 0) " : "") + need("tg_mbar_arrive") + "(&tg_tq[2 + (" + counter + " & 1)]); // slot read");
  line("if (tg_tile < 0)");
  line("  break;");
}

bool CudaEmitter::wgmma_accumulator(const Buffer* b) const {
  for (const auto& [s, p] : plan_.gemms)
    if (p.kind == passes::GemmPlan::Wgmma && s->as<Gemm>() && s->as<Gemm>()->c.get() == b)
      return true;
  return false;
}

bool CudaEmitter::wgmma_gemm(const StmtNode* s) const {
  auto it = plan_.gemms.find(s);
  return it != plan_.gemms.end() && it->second.kind == passes::GemmPlan::Wgmma;
}

int64_t CudaEmitter::tile_bytes(const Buffer& b) const {
  return slots_.at(&b).stage_elems * b.dtype.bytes();
}

bool CudaEmitter::prologue_copy(const Copy* c) const {
  return ws() && std::find(ws_pipe_.prologue.begin(), ws_pipe_.prologue.end(), c) != ws_pipe_.prologue.end();
}

// The prologue boxes of this block's tile tg_ti (in the producer's tile loop), once the
// consumers released the previous tile's.
void CudaEmitter::emit_prologue_issue() {
  int64_t bytes = 0;
  for (const StmtNode* s : ws_pipe_.prologue)
    bytes += tile_bytes(*as_copy(s)->dst.buffer);
  if (!dynamic_tiles() && !split_kernel_) // (the ring's and the split part's loops count them in tg_ti)
    line("const int64_t tg_ti = (tg_tile - blockIdx.x) / gridDim.x; // this block's tiles before");
  line("if (tg_ti > 0) tg_mbar_wait(&tg_pro[1], (unsigned)((tg_ti - 1) & 1));");
  line(need("tg_mbar_expect_tx") + "(&tg_pro[0], " + std::to_string(bytes) + "u);");
  for (const StmtNode* s : ws_pipe_.prologue) {
    if (s->loc.line > 0)
      line("// " + c_line_comment(info_.spec_path) + ":" + std::to_string(s->loc.line) +
           ": copy (TMA, once per tile)");
    tma_issue(as_copy(s), "0", "&tg_pro[0]");
  }
}

// Top-level lets before the loop may appear in its extent or the copies' offsets.
void CudaEmitter::emit_lets_before(const For* f) {
  if (auto* q = k_.body->as<Seq>())
    for (const auto& s : q->stmts) {
      if (s.get() == f)
        break;
      if (auto* l = s->as<LetStmt>())
        line("const " + type_name(l->var->type) + " " + name(l->var->name) + " = " +
             expr(l->value) + ";");
    }
}

// ---- the consumers' loop -----------------------------------------------------------------------

// Whether the consumers' body is wgmma gemms alone (a promoted FP8 gemm waits for its own
// chunks: nothing stays in flight past it).
bool CudaEmitter::body_only_wgmma(const std::vector<Stmt>& consumers) const {
  bool only_wgmma = true;
  for (const auto& s : consumers)
    only_wgmma = only_wgmma && wgmma_gemm(s.get()) && plan_.gemms.at(s.get()).promote_n == 0;
  return only_wgmma;
}

bool CudaEmitter::stages_released_late() const {
  return ws() && ws_loop_ && body_only_wgmma(ws_consumers(ws_loop_, ws_pipe_));
}

// Two warpgroups sharing a tile with more than its gemms in the body (attention): they take
// turns issuing the body's first gemm (FA3's warpgroup ping-pong), so one warpgroup's
// softmax runs while the other's gemm does. Named barriers 3 + wg: a warpgroup syncs on its
// own before issuing and arrives on the other's after.
bool CudaEmitter::warpgroups_take_turns() const {
  if (!ws() || !ws_loop_)
    return false;
  const std::vector<Stmt> consumers = ws_consumers(ws_loop_, ws_pipe_);
  int wgmmas = 0;
  for (const auto& c : consumers)
    if (wgmma_gemm(c.get()))
      ++wgmmas;
  return !body_only_wgmma(consumers) && groups() == 1 && threads_ >= 256 && threads_ % 128 == 0 &&
         threads_ / 128 + 2 < 16 && wgmmas >= 2;
}

// Hoisted A operands (GemmPlan::a_hoisted): each thread reads its rows of the gemm's A, a
// shared buffer the producer filled once for this tile, into the registers of every k step at
// once, before the loop. ldmatrix.x4 gives a warp the 16 x 16 slice of mma.sync's A fragment
// layout, which is the wgmma A register layout of the warp's 16 rows (PTX ISA "wgmma register
// fragments"): lane l names row l % 16 and 8 columns from (l / 16) * 8 of its warp's slice.
// The buffer is stored as 128-byte panels of K-major rows (chunk c of row r at c ^ (r % 8)).
void CudaEmitter::emit_hoisted_a(const For* f) {
  // (in program order, wherever the plan found it: every nested body)
  walk(f->body, [&](const Stmt& s, const For*) {
    const Gemm* g = s->as<Gemm>();
    auto it = g ? plan_.gemms.find(s.get()) : plan_.gemms.end();
    if (it == plan_.gemms.end() || !it->second.a_hoisted || hoisted_a_.count(g->a.get()))
      return;
    const Buffer* A = g->a.get();
    const passes::PanelSwizzle& m = *plan_.panel_swizzles.at(A);
    TG_ASSERT(m.bytes == passes::kPanelBytes && A->dtype.bytes() == 2,
              "CUDA emitter: hoisted A of 128-byte panels of 16-bit elements");
    const int64_t rows = cuda_const(A->shape[0]), pa = plan_.panels.at(A), ks = wgmma_ksteps(g);
    const std::string r = "tg_ha_" + name(A->name);
    hoisted_a_[A] = r;
    line("// " + c_line_comment(info_.spec_path) + ":" + std::to_string(g->loc.line) +
         ": gemm's A (" + A->name + ") into registers once per tile (" + std::to_string(ks * 4) +
         " per thread), in the wgmma A-fragment layout");
    line("uint32_t " + r + "[" + std::to_string(ks) + "][4];");
    open("");
    line("const int tg_hr = (tg_tid / 128) * 64 + (tg_tid % 128) / 32 * 16 + tg_tid % 16; "
         "// this lane's row");
    line("const unsigned char* tg_hp = (const unsigned char*)(" + shared_ptr(A) + ") + tg_hr * " +
         std::to_string(m.bytes) + ";");
    line("#pragma unroll");
    open("for (int tg_k = 0; tg_k < " + std::to_string(ks) + "; ++tg_k)");
    line(need("tg_ldmatrix_x4") + "(" + r + "[tg_k], tg_hp + (tg_k * 16 / " + std::to_string(pa) +
         ") * " + std::to_string(rows * m.bytes) + " + ((((tg_k * 16) % " + std::to_string(pa) +
         " / 8 + tg_tid % 32 / 16) ^ (tg_hr % 8)) * 16));");
    close();
    close();
  });
}

void CudaEmitter::emit_ws_consumer_loop(const For* f, const passes::TmaPipeline& tp) {
  const std::vector<Stmt> consumers = ws_consumers(f, tp);
  const bool only_wgmma = body_only_wgmma(consumers);
  // Shared memory the consumers wrote before the loop (attention's Q tile): settled once here.
  fence_async_proxy_writes();
  hoisted_a_.clear();
  emit_hoisted_a(f);
  const std::string v = name(f->var->name), S = std::to_string(tp.stages);
  std::vector<const Buffer*> staged;
  for (const StmtNode* s : tp.producers)
    staged.push_back(as_copy(s)->dst.buffer.get());
  open("");
  line(ws_trip_count(f));
  // A body of wgmma gemms alone keeps one group in flight: iteration i's gemms are issued
  // before i-1's are waited for, and i-1's stage is released then.
  if (only_wgmma)
    line("// the body is wgmma alone: one group stays in flight across iterations");
  const int64_t G = groups();
  if (G > 1) {
    // Groups take their main loops in tile order: a group starts waiting on the stages of
    // its tile only once the group before it has consumed the previous tile's, so every
    // mbarrier it waits on is at most one phase ahead (parity waits cannot tell more apart),
    // and one group's wgmmas overlap the other's epilogue.
    line("// wait for the previous tile's group to finish its main loop");
    line("if (tg_grp > 0) " + need("tg_mbar_wait") + "(&tg_order[tg_grp], (unsigned)(tg_turn & 1));");
    line("else if (tg_turn > 0) tg_mbar_wait(&tg_order[0], (unsigned)((tg_turn - 1) & 1));");
  }
  TG_ASSERT(f == ws_loop_ && &tp == &ws_pipe_, "CUDA emitter: the consumers' loop is the planned one");
  alternate_wgs_ = warpgroups_take_turns();
  if (alternate_wgs_) {
    const std::string last = std::to_string(threads_ / 128 - 1);
    line("// warpgroups take turns issuing the first gemm; warpgroup 0 goes first");
    line("if (tg_tid / 128 == " + last + ") " + need("tg_bar_arrive_n") + "(3, 256);");
  }
  const size_t split = rot_split_;
  if (split > 0) {
    line("// P of the previous block, packed as the second gemm's A registers");
    line("uint32_t tg_pa[" + std::to_string(wgmma_ksteps(consumers.back()->as<Gemm>())) + "][4];");
  }
  open("for (int64_t tg_it = 0; tg_it < tg_n; ++tg_it, ++tg_pipe)");
  line("const int tg_st = (int)(tg_pipe % " + S + ");");
  line(need("tg_mbar_wait") + "(&tg_full[tg_st], (unsigned)((tg_pipe / " + S + ") & 1));");
  turn_pending_ = alternate_wgs_;
  open("");
  line(ws_iteration(f));
  line("(void)" + v + ";");
  for (const Buffer* b : staged)
    stage_expr_[b] = "tg_st";
  smem_dirty_ = smem_read_ = false;
  if (split > 0) {
    emit_rotated_body(consumers, split, tp);
    close();
  } else {
    emit_ws_body(consumers, only_wgmma, tp);
  }
  close();
  if (alternate_wgs_)
    line("if (tg_tid / 128 == 0) " + need("tg_bar_sync_n") + "(3, 256); // warpgroup " +
         std::to_string(threads_ / 128 - 1) + "'s last turn");
  alternate_wgs_ = turn_pending_ = false;
  if (split > 0)
    emit_rotated_tail(consumers, tp);
  if (G > 1)
    line("if (tg_tid % 32 == 0) " + need("tg_mbar_arrive") + "(&tg_order[(tg_grp + 1) % " +
         std::to_string(G) + "]); // the next tile's group may start");
  if (wgmma_pending_) {
    wait_wgmma(0);
    line("// the last iteration's stage");
    line("if (tg_n > 0 && tg_tid % 32 == 0) tg_mbar_arrive(&tg_empty[(tg_pipe + " +
         std::to_string(tp.stages - 1) + ") % " + S + "]);");
  }
  if (!tp.prologue.empty())
    line("if (tg_tid % 32 == 0) " + need("tg_mbar_arrive") +
         "(&tg_pro[1]); // the prologue buffers: the loop's gemms are done with them");
  if (const Fill* fill = folded_fill_) {
    line("// without an iteration no wgmma zeroed " + name(fill->dst->name));
    open("if (tg_n == 0)");
    emit_fill(fill);
    close();
  }
  close();
  for (const Buffer* b : staged)
    stage_expr_.erase(b);
  // Stages are handed back through the mbarriers; only other shared reads count here.
}

// The consumer body as written, then the stage hand-back: a body of wgmma gemms alone keeps
// its group in flight and releases the previous iteration's stage; any other body waits for its
// gemms and releases this iteration's.
void CudaEmitter::emit_ws_body(const std::vector<Stmt>& consumers, bool only_wgmma,
                               const passes::TmaPipeline& tp) {
  const std::string S = std::to_string(tp.stages);
  defer_wgmma_wait_ = only_wgmma;
  for (const auto& s : consumers)
    stmt(s);
  defer_wgmma_wait_ = false;
  close();
  if (only_wgmma) {
    wait_wgmma(1);
    line("if (tg_it > 0 && tg_tid % 32 == 0) " + need("tg_mbar_arrive") + "(&tg_empty[(tg_pipe + " +
         std::to_string(tp.stages - 1) + ") % " + S + "]);");
  } else {
    if (wgmma_pending_)
      wait_wgmma(0);
    bool writes = false;
    for (const auto& c : consumers)
      writes = writes || writes_shared(c);
    if (writes && (smem_dirty_ || smem_read_))
      barrier(); // the next iteration writes shared memory this one read
    line("if (tg_tid % 32 == 0) " + need("tg_mbar_arrive") + "(&tg_empty[tg_st]);");
  }
}

// ---- FA3's intra-warpgroup overlap -------------------------------------------------------------
//
// A consumer body [g1, middle..., g2] of two wgmma gemms where g2 takes its A operand from
// registers (attention: S = Q K^T; softmax; P = S; O *= alpha; O += P V) is rotated so that
// iteration j issues g1 for block j, then g2 for block j-1, and the softmax of block j runs while
// g2 of block j-1 is still on the tensor cores:
//
//   issue g1(j); issue g2(j-1)             (one turn of the warpgroup ping-pong)
//   wgmma.wait_group 1; release K(j)        g1(j) complete; g2(j-1) may still run
//   middle statements that touch neither g2's A nor its accumulator (the softmax of block j)
//   wgmma.wait_group 0; release V(j-1)      g2(j-1) complete: its V tile and P are free
//   the rest of the middle (P = S, O *= alpha); P packed into g2's A registers
//
// and g2 of the last block runs after the loop. The first middle statement that mentions g2's
// A or accumulator starts the part after the wait; the part before must not mention them. The
// copies into g2's B (V) get their own full/empty barriers (plan_rotation): V(j) is released
// an iteration after K(j), and with one barrier set the producer could not refill K's half of a
// stage until then (H200, B4 H32 S4096 D128: 2.50 ms with one set, 2.03 with two, 2.23 without
// the rotation). Returns the index in `consumers` of the first statement after the wait, or 0
// where the body does not have this shape.
size_t CudaEmitter::rotation_split(const std::vector<Stmt>& consumers, int64_t groups) const {
  if (consumers.size() < 3 || groups != 1)
    return 0;
  auto wgmma = [&](const Stmt& s) { return wgmma_gemm(s.get()) ? s->as<Gemm>() : nullptr; };
  const Gemm* g1 = wgmma(consumers.front());
  const Gemm* g2 = wgmma(consumers.back());
  if (!g1 || !g2 || !plan_.gemms.at(consumers.back().get()).a_in_regs)
    return 0;
  if (mentions_buffer(consumers.front(), g2->a.get()) ||
      mentions_buffer(consumers.front(), g2->c.get()) || g1->c == g2->c)
    return 0;
  size_t split = 1;
  while (split + 1 < consumers.size() && !mentions_buffer(consumers[split], g2->a.get()) &&
         !mentions_buffer(consumers[split], g2->c.get()))
    ++split;
  if (split + 1 == consumers.size()) // nothing writes g2's A in the body
    return 0;
  for (size_t i = 1; i + 1 < consumers.size(); ++i)
    if (wgmma(consumers[i]) || writes_shared(consumers[i]))
      return 0;
  return split;
}

void CudaEmitter::plan_rotation() {
  rot_split_ = 0;
  late_producers_.clear();
  if (plan_.tma_loops.empty())
    return;
  const auto& [loop, tp] = *plan_.tma_loops.begin();
  const std::vector<Stmt> consumers = ws_consumers(loop->as<For>(), tp);
  const size_t split = rotation_split(consumers, tp.groups);
  if (split == 0)
    return;
  // The late barrier set holds the copies into the second gemm's B; the first gemm must not
  // read them (it runs before they are waited for).
  const Gemm* g1 = consumers.front()->as<Gemm>();
  const Gemm* g2 = consumers.back()->as<Gemm>();
  std::set<const StmtNode*> late;
  for (const StmtNode* p : tp.producers) {
    const Buffer* dst = as_copy(p)->dst.buffer.get();
    if (dst == g2->b.get()) {
      if (dst == g1->a.get() || dst == g1->b.get())
        return;
      late.insert(p);
    }
  }
  if (late.empty() || late.size() == tp.producers.size())
    return;
  rot_split_ = split;
  late_producers_ = std::move(late);
}

// The consumers zeroed a GEMM's accumulator between tiles (64 register writes a thread for a
// 128x256 tile) while the tensor cores waited (H200: within +-1%, ahead in most interleaved
// pairs; bench/RESULTS.md, 2026-11-30 session 15). Where the spec fills the accumulator with zero right
// before the warp-specialized loop (statements between do not mention it), and the loop's
// first consumer statement that mentions it is a wgmma gemm accumulating into it (not
// promoted, not rotated), that gemm's first wgmma of iteration 0 overwrites it instead
// (scale-d is a predicate: tg_it != 0); the fill runs only if the loop has no iteration.
void CudaEmitter::plan_accumulator_clear() {
  folded_fill_ = nullptr;
  clearing_gemm_ = nullptr;
  auto* top = k_.body->as<Seq>();
  if (!ws_loop_ || rot_split_ > 0 || !top)
    return;
  auto at = std::find_if(top->stmts.begin(), top->stmts.end(),
                         [&](const Stmt& s) { return s.get() == ws_loop_; });
  const Fill* fill = nullptr;
  for (auto it = at; !fill && it != top->stmts.begin();) {
    --it;
    auto* f = (*it)->as<Fill>();
    if (f && f->dst->scope == MemScope::Fragment && is_const_zero(f->value) && wgmma_accumulator(f->dst.get())) {
      fill = f;
      for (auto j = it + 1; j != at; ++j)
        if (mentions_buffer(*j, f->dst.get()))
          return;
    }
  }
  if (!fill)
    return;
  for (const Stmt& c : ws_consumers(ws_loop_, ws_pipe_)) {
    if (!mentions_buffer(c, fill->dst.get()))
      continue;
    auto* g = c->as<Gemm>();
    if (!g || !wgmma_gemm(g) || g->c != fill->dst || g->clear || plan_.gemms.at(g).promote_n > 0 ||
        g->a == g->c || g->b == g->c)
      return;
    folded_fill_ = fill;
    clearing_gemm_ = g;
    return;
  }
}

void CudaEmitter::emit_rotated_body(const std::vector<Stmt>& consumers, size_t split,
                                    const passes::TmaPipeline& tp) {
  const Gemm* g1 = consumers.front()->as<Gemm>();
  const Gemm* g2 = consumers.back()->as<Gemm>();
  const std::string S = std::to_string(tp.stages), prev = prev_stage(tp.stages);
  line("// FA3 intra-warpgroup overlap: this block's first gemm, then the previous block's last");
  line("// gemm, whose tensor-core work overlaps this block's softmax");
  const bool turn = turn_pending_;
  turn_pending_ = false;
  if (turn)
    line(need("tg_bar_sync_n") + "(3 + tg_tid / 128, 256); // this warpgroup's turn");
  defer_wgmma_wait_ = true;
  stmt(consumers.front());
  // Each path waits in its own branch: ptxas serializes every wgmma of the kernel when a path
  // could read S before the wait that completes it (C7514).
  open("if (tg_it > 0)");
  line(need("tg_mbar_wait") + "(&tg_full2[" + prev + "], (unsigned)(((tg_pipe - 1) / " + S +
       ") & 1)); // the previous block's V");
  const std::string cur = stage_expr_.at(g2->b.get());
  stage_expr_[g2->b.get()] = prev;
  prepacked_a_ = "tg_pa";
  stmt(consumers.back());
  prepacked_a_.clear();
  stage_expr_[g2->b.get()] = cur;
  if (turn)
    line(arrive_next_turn("tg_tid / 128"));
  line(need("tg_wgmma_wait") + "<1>();");
  open_else();
  if (turn)
    line(need("tg_bar_arrive_n") + "(" + next_turn("tg_tid / 128") + ", 256);");
  line("tg_wgmma_wait<0>();");
  close();
  defer_wgmma_wait_ = false;
  fence_accumulator(g1->c.get());
  line("if (tg_tid % 32 == 0) " + need("tg_mbar_arrive") + "(&tg_empty[tg_st]); // this block's K");
  for (size_t i = 1; i < split; ++i)
    stmt(consumers[i]);
  wait_wgmma(0);
  line("if (tg_it > 0 && tg_tid % 32 == 0) tg_mbar_arrive(&tg_empty2[" + prev +
       "]); // the previous block's V");
  for (size_t i = split; i + 1 < consumers.size(); ++i)
    stmt(consumers[i]);
  // P packed into the wgmma A registers right where it is computed (the conversion and the
  // packing fuse into one cvt.rn.bf16x2 per pair); the next iteration's second gemm reads them.
  for (int64_t kk = 0; kk < wgmma_ksteps(g2); ++kk) {
    const std::string k = std::to_string(kk);
    line("{ const uint32_t tg_t[4] = {" + wgmma_a_pack(g2, kk) + "};");
    line("  for (int tg_e = 0; tg_e < 4; ++tg_e) tg_pa[" + k + "][tg_e] = tg_t[tg_e]; }");
  }
}

// After the loop: the last block's g2, then its stage.
void CudaEmitter::emit_rotated_tail(const std::vector<Stmt>& consumers,
                                    const passes::TmaPipeline& tp) {
  const Gemm* g2 = consumers.back()->as<Gemm>();
  const std::string S = std::to_string(tp.stages), prev = prev_stage(tp.stages);
  open("if (tg_n > 0)");
  line("// the last block's second gemm");
  line(need("tg_mbar_wait") + "(&tg_full2[" + prev + "], (unsigned)(((tg_pipe - 1) / " + S + ") & 1));");
  stage_expr_[g2->b.get()] = prev;
  prepacked_a_ = "tg_pa";
  stmt(consumers.back());
  prepacked_a_.clear();
  if (wgmma_pending_)
    wait_wgmma(0);
  line("if (tg_tid % 32 == 0) " + need("tg_mbar_arrive") + "(&tg_empty2[" + prev + "]);");
  close();
}

// Keeps the compiler from moving reads of a wgmma accumulator above the wait that completed it,
// while other groups (other accumulators) may still be in flight.
void CudaEmitter::fence_accumulator(const Buffer* acc) {
  fence_registers(name(acc->name), frag(acc).num_regs());
  wgmma_accs_.erase(std::remove(wgmma_accs_.begin(), wgmma_accs_.end(), acc), wgmma_accs_.end());
}

// An empty asm on each of `array`'s first `n` registers: reads after it stay after the wgmma
// wait that completed them.
void CudaEmitter::fence_registers(const std::string& array, int64_t n) {
  line("#pragma unroll");
  line("for (int tg_r = 0; tg_r < " + std::to_string(n) + "; ++tg_r) " + need("tg_fence_reg") +
       "(" + array + "[tg_r]);");
}

// ---- wgmma -------------------------------------------------------------------------------------

// Shared memory written by threads (cp.async or stores: the generic proxy) and read next by
// wgmma (the async proxy): wait for the copies, fence the proxies, then one barrier.
void CudaEmitter::fence_async_proxy_writes() {
  if (!smem_dirty_ && !async_pending_)
    return;
  if (async_pending_)
    line(need("tg_cp_async_wait") + "<0>();");
  line(need("tg_fence_proxy_async") + "();");
  async_pending_ = false;
  barrier();
}

void CudaEmitter::wait_wgmma(int pending) {
  line(need("tg_wgmma_wait") + "<" + std::to_string(pending) + ">();");
  if (pending > 0)
    return;
  // The accumulators are complete: keep the compiler from moving their reads above the wait.
  for (const Buffer* acc : wgmma_accs_)
    fence_registers(name(acc->name), frag(acc).num_regs());
  wgmma_accs_.clear();
  wgmma_pending_ = false;
}

// The four 32-bit A registers of k step kk of a wgmma whose A is a 16-bit fragment: pairs of
// consecutive elements of rows h*8 + lane/4 (h = 0, 1), packed (PTX ISA wgmma register
// fragments, the same layout as the accumulator it was computed in).
std::string CudaEmitter::wgmma_a_pack(const Gemm* g, int64_t kk) {
  const Buffer* A = g->a.get();
  const int64_t R1 = frag(A).regs_of_dim(1);
  const std::string pack = need(A->dtype == DType::bf16() ? "tg_pack_bf16" : "tg_pack_f16");
  const std::string an = name(A->name);
  auto at = [&](int h, int e2) {
    const int64_t base = h * R1 + 4 * kk + e2;
    return pack + "(" + an + "[" + std::to_string(base) + "], " + an + "[" +
           std::to_string(base + 1) + "])";
  };
  return at(0, 0) + ", " + at(1, 0) + ", " + at(0, 2) + ", " + at(1, 2);
}

void CudaEmitter::gemm_wgmma(const Gemm* g, const passes::GemmPlan& p) {
  const int64_t M = cuda_const(g->c->shape[0]), N = cuda_const(g->c->shape[1]);
  const int64_t K = cuda_const(g->a->shape[1]);
  const Buffer* A = g->a.get();
  const Buffer* B = g->b.get();
  // A from registers: a fragment's, or a shared A read into registers before the loop
  const bool a_regs = p.a_in_regs || p.a_hoisted, trans_b = !g->transpose_b; // B [K, N] is N-major
  const int64_t eb = B->dtype.bytes();
  // Each shared operand's panels: elements per panel row (pa, pb) and swizzle mode.
  const passes::PanelSwizzle* mode_a = a_regs ? nullptr : plan_.panel_swizzles.at(A);
  const passes::PanelSwizzle& mode_b = *plan_.panel_swizzles.at(B);
  const int64_t pa = a_regs ? 0 : plan_.panels.at(A), pb = plan_.panels.at(B);
  auto staged = [&](const Buffer* b) { return stage_expr_.count(b) > 0 && ws(); };
  // Operands written by threads (not TMA) need their writes fenced for the async proxy.
  if ((!a_regs && !staged(A)) || !staged(B)) {
    fence_async_proxy_writes();
    smem_read_ = true;
  }
  // (promoted chunks wait for every group of the warpgroup, deferred or not)
  if (wgmma_pending_ && (!defer_wgmma_wait_ || p.promote_n > 0))
    wait_wgmma(0);
  const std::string fn = wgmma_fn_name(N, A->dtype, B->dtype, a_regs, trans_b);
  if (p.promote_n == 0) {
    need(fn);
    wgmma_shapes_.insert({N, A->dtype.kind, B->dtype.kind, a_regs, trans_b});
  }
  const int64_t ks = wgmma_k(B->dtype);
  TG_ASSERT(!trans_b || ks == 16, "CUDA emitter: FP8 wgmma with an N-major B");
  open("");
  line("const int tg_wg = tg_tid / 128;");
  line("(void)tg_wg;");
  const int64_t a_rows = M, b_rows = cuda_const(B->shape[0]);
  // The descriptor helper of a swizzle mode: tg_wgmma_desc has the 128-byte mode in bits
  // 62-63; tg_wgmma_desc_sw<L> takes mode L (2: 64-byte, 3: 32-byte).
  auto wgmma_desc = [&](const passes::PanelSwizzle& m) {
    return m.desc_layout == 1
               ? need("tg_wgmma_desc")
               : need("tg_wgmma_desc_sw") + "<" + std::to_string(m.desc_layout) + ">";
  };
  // Stride offset: 8 rows of a panel (one swizzle atom). Leading offset: for N-major B, the
  // next panel of columns; unused for K-major operands (a k step stays inside one panel).
  if (!a_regs)
    line("const uint64_t tg_da = " + wgmma_desc(*mode_a) + "(" + shared_ptr(A) + " + tg_wg * " +
         std::to_string(64 * pa) + ", 16, " + std::to_string(mode_a->atom_bytes) + ");");
  line("const uint64_t tg_db = " + wgmma_desc(mode_b) + "(" + shared_ptr(B) + ", " +
       std::to_string(trans_b ? b_rows * mode_b.bytes : 16) + ", " +
       std::to_string(mode_b.atom_bytes) + ");");
  // Each k step's A operand and B byte offset.
  std::vector<WgmmaStep> steps;
  for (int64_t kk = 0; kk < K / ks; ++kk) {
    const int64_t k0 = kk * ks;
    // K-major operand: panel k0 / pc, then k0 % pc elements into the swizzled row (a k step
    // is 32 bytes, so it never straddles panels of 32 bytes or more).
    auto kmajor = [&](int64_t rows, int64_t pc, int64_t width) {
      return (k0 / pc) * rows * width + (k0 % pc) * eb;
    };
    // N-major B: k0 rows down the panels.
    const int64_t off_b = trans_b ? k0 * mode_b.bytes : kmajor(b_rows, pb, mode_b.bytes);
    std::string a_arg;
    if (p.a_hoisted) {
      TG_ASSERT(hoisted_a_.count(A), "CUDA emitter: a hoisted A read before its loop");
      a_arg = hoisted_a_.at(A) + "[" + std::to_string(kk) + "]";
    } else if (a_regs && !prepacked_a_.empty()) {
      a_arg = prepacked_a_ + "[" + std::to_string(kk) + "]";
    } else if (a_regs) {
      // Packed before the first wgmma: registers written between wgmmas of one group make
      // ptxas insert warpgroup.arrive fences.
      line("const uint32_t tg_a" + std::to_string(kk) + "[4] = {" + wgmma_a_pack(g, kk) + "};");
      a_arg = "tg_a" + std::to_string(kk);
    } else {
      a_arg = "tg_da + " + std::to_string(kmajor(a_rows, pa, mode_a->bytes) >> 4);
    }
    steps.emplace_back(a_arg, off_b);
  }
  if (p.promote_n > 0) {
    gemm_wgmma_promoted(g, p, steps, mode_b.bytes);
    close();
    return;
  }
  std::vector<std::string> calls;
  for (size_t kk = 0; kk < steps.size(); ++kk)
    calls.push_back(wgmma_call(fn, name(g->c->name), steps[kk], 0,
                               kk > 0 ? "1" : g->clear ? "0" : g == clearing_gemm_ ? "tg_it != 0" : "1"));
  const bool turn = turn_pending_;
  turn_pending_ = false;
  if (turn)
    line(need("tg_bar_sync_n") + "(3 + tg_wg, 256); // this warpgroup's turn");
  line(need("tg_wgmma_fence") + "();");
  for (const auto& c : calls)
    line(c);
  line(need("tg_wgmma_commit") + "();");
  if (turn)
    line(arrive_next_turn("tg_wg"));
  close();
  wgmma_pending_ = true;
  if (std::find(wgmma_accs_.begin(), wgmma_accs_.end(), g->c.get()) == wgmma_accs_.end())
    wgmma_accs_.push_back(g->c.get());
  if (!defer_wgmma_wait_)
    wait_wgmma(0);
}

// An FP8 gemm whose partial sums are promoted (GemmPlan::promote_n): per column chunk of
// promote_n, the gemm's k steps run into a zeroed partial fragment, and the partial is added
// to the accumulator in f32 once its group is complete. With promote_pairs two partials
// alternate: chunk c + 1 is issued before chunk c is waited for and added, so the warpgroup
// keeps a group on the tensor cores while it adds; otherwise each chunk is waited for before
// the next is issued. Nothing stays in flight past the gemm (ptxas serializes the wgmmas,
// C7514, when a partial issued in one loop iteration is read in the next). The chunk's
// accumulator registers are contiguous: wgmma operand 4j+2h+e of an N-column tile is
// d[h*N/4 + 2j + e], so chunk c covers d[h*N/4 + c*n/4 .. + n/4) for each row half h.
void CudaEmitter::gemm_wgmma_promoted(const Gemm* g, const passes::GemmPlan& p,
                                      const std::vector<WgmmaStep>& steps, int64_t b_row_bytes) {
  const int64_t N = cuda_const(g->c->shape[1]), n = p.promote_n, C = N / n;
  TG_ASSERT(n > 0 && N % n == 0 && n % 8 == 0, "CUDA emitter: FP8 promotion chunk " +
                                                   std::to_string(n) + " of N " + std::to_string(N));
  TG_ASSERT(!turn_pending_, "CUDA emitter: promoted FP8 gemm in a warpgroup turn");
  const bool pairs = p.promote_partials() == 2;
  const std::string fn = wgmma_fn_name(n, g->a->dtype, g->b->dtype, false, false);
  need(fn);
  wgmma_shapes_.insert({n, g->a->dtype.kind, g->b->dtype.kind, false, false});
  const std::string R = std::to_string(n / 2);
  line("// FP8 partial sums promoted to f32: " + std::to_string(C) + " chunk(s) of " +
       std::to_string(n) + " columns" + (pairs ? ", two in flight" : ""));
  line(std::string("float tg_part") + (pairs ? "[2]" : "") + "[" + R + "];");
  auto part = [&](int64_t c) {
    return pairs ? "tg_part[" + std::to_string(c % 2) + "]" : std::string("tg_part");
  };
  auto issue = [&](int64_t c) {
    line(need("tg_wgmma_fence") + "();");
    for (size_t kk = 0; kk < steps.size(); ++kk)
      // the chunk starts n*c rows down B's K-major panels (a multiple of the 8-row atom)
      line(wgmma_call(fn, part(c), steps[kk], c * n * b_row_bytes, kk > 0 ? "1" : "0"));
    line(need("tg_wgmma_commit") + "();");
  };
  if (pairs)
    issue(0);
  for (int64_t c = 0; c < C; ++c) {
    const bool next = pairs && c + 1 < C;
    if (!pairs)
      issue(c);
    else if (next)
      issue(c + 1);
    line(need("tg_wgmma_wait") + "<" + (next ? "1" : "0") + ">(); // chunk " + std::to_string(c) +
         " is complete");
    fence_registers(part(c), n / 2);
    const std::string acc = name(g->c->name), Q = std::to_string(n / 4);
    line("#pragma unroll");
    open("for (int tg_r = 0; tg_r < " + Q + "; ++tg_r)");
    line(acc + "[" + std::to_string(c * n / 4) + " + tg_r] += " + part(c) + "[tg_r];");
    line(acc + "[" + std::to_string(N / 4 + c * n / 4) + " + tg_r] += " + part(c) + "[" + Q +
         " + tg_r];");
    close();
  }
}

// ---- helpers -----------------------------------------------------------------------------------

// The named barrier of the warpgroup after `wg` in the turn order (barrier 3 + w is warpgroup
// w's turn; each barrier pairs the warpgroup that syncs on it with the one that arrives).
std::string CudaEmitter::next_turn(const std::string& wg) const {
  const int64_t n = threads_ / 128;
  if (n == 2)
    return "4 - " + wg;
  return "3 + (" + wg + " + 1) % " + std::to_string(n);
}

std::string CudaEmitter::arrive_next_turn(const std::string& wg) {
  return need("tg_bar_arrive_n") + "(" + next_turn(wg) + ", 256); // the " +
         (threads_ == 256 ? "other" : "next") + " warpgroup's turn";
}

std::string CudaEmitter::hopper_helpers_source() const {
  std::ostringstream os;
  auto has = [&](const std::string& h) { return helpers_.count(h) > 0; };
  auto smem = "(unsigned)__cvta_generic_to_shared";
  if (has("tg_mbar_wait") || has("tg_mbar_arrive") || has("tg_mbar_expect_tx")) {
    os << "/* mbarriers (PTX ISA 9.7.13.15): 64-bit objects in shared memory. */\n"
       << "TG_DEV void tg_mbar_init(uint64_t* b, unsigned count) {\n"
       << "  asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\\n\" ::\"r\"(" << smem
       << "(b)), \"r\"(count) : \"memory\");\n}\n"
       << "TG_DEV void tg_mbar_init_fence() { asm volatile(\"fence.mbarrier_init.release.cluster;\\n\" ::: \"memory\"); }\n"
       << "/* Arrives and adds `bytes` to the transaction count the phase waits for. */\n"
       << "TG_DEV void tg_mbar_expect_tx(uint64_t* b, unsigned bytes) {\n"
       << "  asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\\n\" ::\"r\"(" << smem
       << "(b)), \"r\"(bytes) : \"memory\");\n}\n"
       << "TG_DEV void tg_mbar_arrive(uint64_t* b) {\n"
       << "  asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\\n\" ::\"r\"(" << smem
       << "(b)) : \"memory\");\n}\n"
       << "/* Waits until the phase with parity `parity` has completed. */\n"
       << "TG_DEV void tg_mbar_wait(uint64_t* b, unsigned parity) {\n"
       << "  unsigned a = " << smem << "(b), done = 0;\n"
       << "  do {\n"
       << "    asm volatile(\"{\\n .reg .pred p;\\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\\n"
          " selp.u32 %0, 1, 0, p;\\n}\\n\" : \"=r\"(done) : \"r\"(a), \"r\"(parity) : \"memory\");\n"
       << "  } while (!done);\n}\n";
  }
  for (int n = 2; n <= 5; ++n) {
    std::string h = "tg_tma_load_" + std::to_string(n) + "d";
    if (!has(h))
      continue;
    const auto [params, regs, ops] = tma_coord_operands(n, 3);
    os << "/* TMA: one box of tensor map `map` at coordinates (c0 innermost) into shared memory,\n"
          " * completing on mbarrier `bar`; out-of-bounds elements are zero-filled. */\n"
       << "TG_DEV void " << h << "(void* dst, const CUtensorMap* map, uint64_t* bar" << params << ") {\n"
       << "  asm volatile(\"cp.async.bulk.tensor." << n
       << "d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {" << regs
       << "}], [%2];\\n\"\n"
       << "               ::\"r\"(" << smem << "(dst)), \"l\"(map), \"r\"(" << smem << "(bar))" << ops
       << " : \"memory\");\n}\n";
  }
  if (has("tg_grid_wait") || has("tg_grid_launch_dependents"))
    os << "/* Programmatic dependent launch (PTX griddepcontrol, sm_90): wait until the grids this\n"
          " * one depends on have completed and their writes are visible; let the stream's next launch\n"
          " * start. Both do nothing in a launch without the programmatic attribute. */\n"
          "TG_DEV void tg_grid_wait() { asm volatile(\"griddepcontrol.wait;\\n\" ::: \"memory\"); }\n"
          "TG_DEV void tg_grid_launch_dependents() { asm volatile(\"griddepcontrol.launch_dependents;\\n\" ::: \"memory\"); }\n";
  if (has("tg_prefetch_map"))
    os << "/* Fetches a tensor map (a __grid_constant__ parameter) into the TMA unit's descriptor cache. */\n"
          "TG_DEV void tg_prefetch_map(const CUtensorMap* m) {\n"
          "  asm volatile(\"prefetch.tensormap [%0];\\n\" ::\"l\"(m) : \"memory\");\n}\n";
  if (has("tg_setmaxnreg_dec") || has("tg_setmaxnreg_inc"))
    os << "/* setmaxnreg: the warpgroup's per-thread register budget (all its warps execute it). */\n"
          "template <int N> TG_DEV void tg_setmaxnreg_dec() { asm volatile(\"setmaxnreg.dec.sync.aligned.u32 %0;\\n\" ::\"n\"(N)); }\n"
          "template <int N> TG_DEV void tg_setmaxnreg_inc() { asm volatile(\"setmaxnreg.inc.sync.aligned.u32 %0;\\n\" ::\"n\"(N)); }\n";
  if (has("tg_bar_sync_n") || has("tg_bar_arrive_n"))
    os << "/* Named barrier `id` of n threads: wait for all n, or arrive without waiting. */\n";
  if (has("tg_bar_sync_n"))
    os << "TG_DEV void tg_bar_sync_n(int id, int n) { asm volatile(\"bar.sync %0, %1;\\n\" ::\"r\"(id), \"r\"(n) : \"memory\"); }\n";
  if (has("tg_bar_arrive_n"))
    os << "TG_DEV void tg_bar_arrive_n(int id, int n) { asm volatile(\"bar.arrive %0, %1;\\n\" ::\"r\"(id), \"r\"(n) : \"memory\"); }\n";
  if (has("tg_fence_proxy_async"))
    os << "/* Orders this thread's generic-proxy shared-memory writes before async-proxy reads (wgmma). */\n"
          "TG_DEV void tg_fence_proxy_async() { asm volatile(\"fence.proxy.async.shared::cta;\\n\" ::: \"memory\"); }\n";
  if (has("tg_bar_consumers"))
    os << "/* A consumer group's barrier (named barrier 1 + group): the producer has left. */\n"
          "TG_DEV void tg_bar_consumers(int grp) { asm volatile(\"bar.sync %0, " << threads_
       << ";\\n\" ::\"r\"(1 + grp) : \"memory\"); }\n";
  if (has("tg_wgmma_desc"))
    os << "/* wgmma shared-memory matrix descriptor (PTX ISA 9.7.15.5.1): start address, leading and\n"
          " * stride byte offsets (>> 4), 128-byte swizzle. Tiles are 1024-byte aligned, so the\n"
          " * base offset is 0; adding (bytes >> 4) advances the start within a swizzle atom. */\n"
          "TG_DEV uint64_t tg_wgmma_desc(const void* p, unsigned lbo, unsigned sbo) {\n"
          "  uint64_t a = " << smem << "(p);\n"
          "  return ((a & 0x3FFFF) >> 4) | ((uint64_t)((lbo & 0x3FFFF) >> 4) << 16) |\n"
          "         ((uint64_t)((sbo & 0x3FFFF) >> 4) << 32) | ((uint64_t)1 << 62);\n}\n";
  if (has("tg_wgmma_desc_sw"))
    os << "/* The same descriptor with swizzle mode L in bits 62-63 (PTX ISA 9.7.15.5.1.1: 1 = 128-byte,\n"
          " * 2 = 64-byte, 3 = 32-byte) for panels of 64 or 32 bytes, whose atoms (8 rows, 512 or 256\n"
          " * bytes) start on 1024-byte boundaries too: base offset 0. */\n"
          "template <int L> TG_DEV uint64_t tg_wgmma_desc_sw(const void* p, unsigned lbo, unsigned sbo) {\n"
          "  uint64_t a = " << smem << "(p);\n"
          "  return ((a & 0x3FFFF) >> 4) | ((uint64_t)((lbo & 0x3FFFF) >> 4) << 16) |\n"
          "         ((uint64_t)((sbo & 0x3FFFF) >> 4) << 32) | ((uint64_t)L << 62);\n}\n";
  if (has("tg_wgmma_fence") || has("tg_wgmma_commit") || has("tg_wgmma_wait"))
    os << "TG_DEV void tg_wgmma_fence() { asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\"); }\n"
          "TG_DEV void tg_wgmma_commit() { asm volatile(\"wgmma.commit_group.sync.aligned;\\n\" ::: \"memory\"); }\n"
          "/* Waits until at most N committed wgmma groups are pending. */\n"
          "template <int N> TG_DEV void tg_wgmma_wait() { asm volatile(\"wgmma.wait_group.sync.aligned %0;\\n\" ::\"n\"(N) : \"memory\"); }\n";
  if (has("tg_fence_reg"))
    os << "TG_DEV void tg_fence_reg(float& r) { asm volatile(\"\" : \"+f\"(r)::\"memory\"); }\n";
  for (const auto& w : wgmma_shapes_) {
    const int64_t n = w.n;
    const DType ta(w.a), tb(w.b);
    const std::string fn = wgmma_fn_name(n, ta, tb, w.a_regs, w.trans_b);
    const int64_t nd = n / 2, r1 = n / 4, kw = wgmma_k(ta);
    const bool fp8 = ta.is_fp8();
    os << "/* D[64 x " << n << "] (+)= A[64 x " << kw << "] * B[" << kw << " x " << n << "], "
       << ptx_type(ta) << (ta != tb ? std::string(" x ") + ptx_type(tb) : std::string())
       << " inputs, f32 accumulators, per warpgroup; A " << (w.a_regs ? "from registers" : "by descriptor")
       << ", B by descriptor (" << (w.trans_b ? "N-major" : "K-major") << ").\n"
       << " * d is the mma.sync-ordered accumulator: operand 4j+2h+e is d[h*" << r1 << " + 2j + e]. */\n";
    os << "TG_DEV void " << fn << "(float (&d)[" << nd << "], "
       << (w.a_regs ? "const uint32_t (&a)[4]" : "uint64_t da") << ", uint64_t db, int scale_d) {\n";
    std::string list;
    for (int64_t q = 0; q < nd; ++q)
      list += (q ? ", %" : "%") + std::to_string(q);
    int64_t next = nd;
    std::string a_ops, a_str;
    if (w.a_regs) {
      a_str = "{%" + std::to_string(next) + ", %" + std::to_string(next + 1) + ", %" +
              std::to_string(next + 2) + ", %" + std::to_string(next + 3) + "}";
      next += 4;
    } else {
      a_str = "%" + std::to_string(next++);
    }
    std::string b_str = "%" + std::to_string(next++);
    std::string s_str = "%" + std::to_string(next++);
    os << "  asm volatile(\"{\\n .reg .pred p;\\n setp.ne.b32 p, " << s_str << ", 0;\\n"
       << " wgmma.mma_async.sync.aligned.m64n" << n << "k" << kw << ".f32." << ptx_type(ta) << "."
       << ptx_type(tb) << " {" << list << "}, " << a_str << ", " << b_str << ", p, 1, 1";
    // The transpose immediates exist for 16-bit types only (FP8 operands are K-major).
    if (!fp8)
      os << ", " << (w.a_regs ? "" : "0, ") << (w.trans_b ? 1 : 0);
    os << ";\\n}\\n\"\n      : ";
    for (int64_t q = 0; q < nd; ++q) {
      int64_t j = q / 4, h = (q / 2) % 2, e = q % 2;
      os << (q ? ", " : "") << "\"+f\"(d[" << h * r1 + 2 * j + e << "])";
      if (q % 8 == 7 && q + 1 < nd)
        os << "\n        ";
    }
    os << "\n      : ";
    if (w.a_regs)
      os << "\"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), \"r\"(a[3])";
    else
      os << "\"l\"(da)";
    os << ", \"l\"(db), \"r\"(scale_d));\n}\n";
  }
  if (has("tg_red_release_u32"))
    os << "/* Adds to a global word with release semantics at GPU scope. */\n"
          "TG_DEV void tg_red_release_u32(unsigned* p, unsigned v) {\n"
          "  asm volatile(\"red.release.gpu.global.add.u32 [%0], %1;\\n\" :: \"l\"(p), \"r\"(v) : \"memory\");\n}\n";
  if (has("tg_ld_acquire_u32"))
    os << "/* A global word read with acquire semantics at GPU scope. */\n"
          "TG_DEV unsigned tg_ld_acquire_u32(const unsigned* p) {\n"
          "  unsigned v;\n"
          "  asm volatile(\"ld.acquire.gpu.global.u32 %0, [%1];\\n\" : \"=r\"(v) : \"l\"(p) : \"memory\");\n"
          "  return v;\n}\n";
  os << tma_store_helpers_source();
  return os.str();
}

// ---- tensor maps -------------------------------------------------------------------------------

// A tensor can take a repitched copy (tg_realigned) when every statement of the body that
// reaches it is one of the TMA copies or the TMA store: the tensor maps then carry its row pitch
// and no address is computed from its shape in the kernels. A tensor of rank 1 can too, however
// the kernels reach it: its addresses do not involve a pitch, and the copy only pads its end to
// a whole chunk (gemm_bias_gelu's bias; the kernels check their accesses against the logical
// length). Only tensors whose rows may be no whole 16-byte chunks (a last dim that is not a
// constant multiple of the chunk).
// A tensor the kernels' threads address otherwise keeps its rows; where one of those may be
// uneven, the kernels take the vector width for those tensors at run time (threads_vec_), so
// that the TMA kernel can still run the call.
void CudaEmitter::plan_pitched_tensors() {
  pitched_.assign(k_.tensors.size(), false);
  threads_vec_.assign(k_.tensors.size(), false);
  if (!ws())
    return;
  std::set<const StmtNode*> tma;
  for (const auto& m : tma_maps_)
    tma.insert(m.copy);
  if (tma_store_)
    tma.insert(tma_store_);
  class Direct : public IRVisitor {
  public:
    const std::set<const StmtNode*>* tma = nullptr;
    const Buffer* g = nullptr;
    bool found = false;

  protected:
    void visit_Copy(const Copy* c) override {
      if (!tma->count(c))
        IRVisitor::visit_Copy(c);
    }
    void visit_buffer_use(const BufferPtr& b) override { found = found || b.get() == g; }
  };
  bool uneven_own = false;
  for (size_t i = 0; i < k_.tensors.size(); ++i) {
    const Buffer& g = *k_.tensors[i];
    if (g.rank() < 1)
      continue;
    Direct d;
    d.tma = &tma;
    d.g = &g;
    d.visit(k_.body);
    const int64_t chunk = 16 / g.dtype.bytes();
    const auto* c = g.shape.back()->as<IntImm>();
    const bool whole = c && c->value % chunk == 0; // rows always whole chunks
    pitched_[i] = !whole && (g.rank() == 1 || !d.found);
    threads_vec_[i] = d.found && !pitched_[i];
    uneven_own = uneven_own || (threads_vec_[i] && !whole);
  }
  // Only where such a tensor's rows may be uneven: the other kernels keep TG_VEC a constant.
  if (!uneven_own)
    threads_vec_.assign(k_.tensors.size(), false);
}

bool CudaEmitter::tma_reaches(const Buffer& g) const {
  for (const auto& m : tma_maps_)
    if (m.copy->src.buffer.get() == &g)
      return true;
  return tma_store_ && tma_store_->dst.buffer.get() == &g;
}

bool CudaEmitter::runtime_vec() const {
  return std::find(threads_vec_.begin(), threads_vec_.end(), true) != threads_vec_.end();
}

bool CudaEmitter::any_pitched() const {
  return std::find(pitched_.begin(), pitched_.end(), true) != pitched_.end();
}

bool CudaEmitter::pitched(const Buffer& g) const {
  for (size_t i = 0; i < k_.tensors.size(); ++i)
    if (k_.tensors[i].get() == &g)
      return i < pitched_.size() && pitched_[i];
  return false;
}

std::string CudaEmitter::tma_params_source() const {
  std::string s;
  for (const auto& m : tma_maps_)
    s += "  CUtensorMap " + m.member + "; // 64-byte aligned by its type\n";
  if (tma_store_)
    // tg_tm_<buffer> are the loads' maps; `out` is a reserved name, so no buffer's map is this
    s += "  CUtensorMap tg_tm_out; // the epilogue's TMA store\n";
  return s;
}

// Host code: encodes tensor map tg_p-><member> of global tensor g (dims innermost first,
// strides of the outer dims in bytes, a box of `pc` columns (one panel of 128, 64 or 32 bytes)
// by `rows`, swizzled in the panel's width); an empty tensor or a failed encode clears tg_ok.
std::string CudaEmitter::encode_tensor_map(const Buffer& g, int64_t pc, int64_t rows,
                                           const std::string& member, const char* l2) {
  const size_t n = g.rank();
  // The swizzle is an argument of tg_encode_memo only in files with narrower panels (the
  // helper keeps its 128-byte-only text otherwise).
  std::string swizzle;
  if (narrow_panels(tma_maps_, plan_))
    swizzle = std::string(", ") + passes::panel_swizzle_of(pc * g.dtype.bytes()).tma;
  std::string dims, strides, box, ones, stride = std::to_string(g.dtype.bytes());
  for (size_t i = 0; i < n; ++i) {
    std::string d = "(cuuint64_t)(" + expr(g.shape[n - 1 - i]) + ")";
    dims += (i ? ", " : "") + d;
    if (i > 0)
      strides += std::string(i > 1 ? ", " : "") + stride;
    // a repitched tensor's rows are tg_pitch_<name> elements apart (tg_setup)
    stride = stride + " * " + (i == 0 && pitched(g) ? "(cuuint64_t)tg_pitch_" + name(g.name) : d);
    box += std::string(i ? ", " : "") + (i == 0 ? std::to_string(pc) : i == 1 ? std::to_string(rows) : "1");
    ones += std::string(i ? ", " : "") + "1";
  }
  const char* dt = g.dtype == DType::bf16()  ? "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16"
                   : g.dtype == DType::f16() ? "CU_TENSOR_MAP_DATA_TYPE_FLOAT16"
                                             : "CU_TENSOR_MAP_DATA_TYPE_UINT8"; // FP8: bytes
  std::ostringstream os;
  // tg_ names: the extents are expressions over the spec's dims, declared in tg_setup.
  os << "    {\n"
     << "      const cuuint64_t tg_dims[" << n << "] = {" << dims << "};\n"
     << "      const cuuint64_t tg_strides[" << n - 1 << "] = {" << strides << "};\n"
     << "      const cuuint32_t tg_box[" << n << "] = {" << box << "}, tg_estr[" << n << "] = {" << ones << "};\n"
     << "      static thread_local tg_tm_memo tg_memo;\n"
     << "      bool tg_empty = false;\n"
     << "      for (int tg_d = 0; tg_d < " << n << "; ++tg_d)\n        tg_empty = tg_empty || tg_dims[tg_d] == 0;\n"
     << "      tg_ok = tg_ok && !tg_empty &&\n"
     << "              tg_encode_memo(&tg_memo, tg_encode, &tg_p->" << member << ", " << dt << ", " << n
     << ", (void*)tg_p->" << name(g.name) << ", tg_dims, tg_strides, tg_box, tg_estr,\n"
     << "                             CU_TENSOR_MAP_L2_PROMOTION_" << l2 << swizzle << ");\n"
     << "    }\n";
  return os.str();
}

// File-scope host helper of tg_setup: cuTensorMapEncodeTiled memoized per tensor-map slot and
// thread. Encoding costs about 0.3 us per map, which the dispatch call pays on every launch
// (issue #3: dispatch cost <= 1.2x a raw launch); a call with the same pointer, dims and
// strides as the slot's previous one copies the previous map instead. The box, swizzle and
// data type are constants of the slot, so they are not part of the key.
std::string CudaEmitter::tma_memo_source() const {
  // With panels narrower than 128 bytes the swizzle mode is a per-map argument.
  const bool sw = narrow_panels(tma_maps_, plan_);
  return "typedef CUresult (*tg_encode_fn)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,\n"
         "    const cuuint64_t*, const cuuint64_t*, const cuuint32_t*, const cuuint32_t*,\n"
         "    CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion,\n"
         "    CUtensorMapFloatOOBfill);\n"
         "/* The last map one slot encoded on this thread, and what it was encoded from. */\n"
         "struct tg_tm_memo {\n"
         "  bool valid, ok;\n"
         "  void* ptr;\n"
         "  cuuint64_t dims[5], strides[4];\n"
         "  CUtensorMap map;\n"
         "};\n"
         "/* cuTensorMapEncodeTiled (" + std::string(sw ? "swizzle sw" : "128-byte swizzle") +
         ", no interleave, no OOB fill), skipped when\n"
         " * pointer, dims and strides equal the slot's previous call on this thread. */\n"
         "static bool tg_encode_memo(tg_tm_memo* m, tg_encode_fn enc, CUtensorMap* out,\n"
         "                           CUtensorMapDataType dt, cuuint32_t rank, void* ptr,\n"
         "                           const cuuint64_t* dims, const cuuint64_t* strides,\n"
         "                           const cuuint32_t* box, const cuuint32_t* estr,\n"
         "                           CUtensorMapL2promotion l2" + (sw ? ", CUtensorMapSwizzle sw" : "") + ") {\n"
         "  if (m->valid && m->ptr == ptr &&\n"
         "      __builtin_memcmp(m->dims, dims, rank * sizeof(cuuint64_t)) == 0 &&\n"
         "      __builtin_memcmp(m->strides, strides, (rank - 1) * sizeof(cuuint64_t)) == 0) {\n"
         "    *out = m->map;\n"
         "    return m->ok;\n"
         "  }\n"
         "  const bool ok = enc(out, dt, rank, ptr, dims, strides, box, estr,\n"
         "                      CU_TENSOR_MAP_INTERLEAVE_NONE, " + (sw ? "sw" : "CU_TENSOR_MAP_SWIZZLE_128B") + ", l2,\n"
         "                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;\n"
         "  m->valid = true;\n"
         "  m->ok = ok;\n"
         "  m->ptr = ptr;\n"
         "  __builtin_memcpy(m->dims, dims, rank * sizeof(cuuint64_t));\n"
         "  __builtin_memcpy(m->strides, strides, (rank - 1) * sizeof(cuuint64_t));\n"
         "  m->map = *out;\n"
         "  return ok;\n"
         "}\n\n";
}

// Host code inside tg_setup: encodes each TMA copy's tensor map (dims innermost first, strides
// of the outer dims in bytes, one panel by the tile's rows as the box). A tensor TMA
// cannot describe (empty, misaligned, strides past 2^40) makes the call use the fallback kernel.
std::string CudaEmitter::tma_setup_source() {
  std::ostringstream os;
  os << "  if (*tg_tma) {\n"
     << "    /* looked up once per process (thread-safe static initialization) */\n"
     << "    static const tg_encode_fn tg_encode = (tg_encode_fn)tg_cuda_driver_entry(\"cuTensorMapEncodeTiled\");\n"
     << "    bool tg_ok = tg_encode != NULL;\n";
  for (const auto& m : tma_maps_)
    os << encode_tensor_map(*m.copy->src.buffer, plan_.panels.at(m.copy->dst.buffer.get()),
                            slots_.at(m.copy->dst.buffer.get()).rows, m.member, "L2_256B");
  os << tma_store_setup_source();
  os << "    *tg_tma = tg_ok;\n  }\n";
  return os.str();
}

// ---- split tail --------------------------------------------------------------------------------
//
// A persistent launch of T equal tiles on P blocks runs ceil(T / P) waves, the last one
// T % P / P full (4096 attention tiles on 132 SMs: 31.03 waves of work in 32). Where the spec
// says how two parts of a tile's loop combine (`split` on the pipelined loop, ir::Combine) and
// the last wave is at most half full, the host launches tg_kernel_ws for the whole waves and
// then tg_kernel_ws_split for the last r = T % P tiles, each in s = min(P / r, n / 4, 8) parts
// on its own block (tg_split_shape). All parts of a tile start together (the same iterations
// of every split tile run at the same time, as in the whole waves, so blocks sharing operand
// panels still read them together). At the join each part counts its arrival on the tile's
// word in the stream's workspace; all but the last store their carried registers and release
// a ready word, the last merges them one by one with the spec's combine and runs the epilogue.
// The persistent kernel itself is the one without a split: keeping the join out of it keeps
// its schedule (with the join in the same loop, ptxas's code for the whole tiles ran 5-13%
// more cycles on the H200 without a single split, bench/RESULTS.md).

namespace {
int64_t round16(int64_t v) { return (v + 15) / 16 * 16; }
} // namespace

// Each carried fragment's registers, thread-major per register (coalesced), 16-byte aligned:
// the byte offset of each carried fragment in one part's registers, then their total.
std::vector<int64_t> CudaEmitter::split_offsets() const {
  std::vector<int64_t> off{0};
  for (const auto& c : (split_ ? split_ : np_split_)->carry)
    off.push_back(off.back() + round16(frag(c.state.get()).num_regs() * threads_ * c.state->dtype.bytes()));
  return off;
}

int64_t CudaEmitter::split_state_bytes() const { return split_offsets().back(); }

// The warp-specialized loop's trip count for this tile (tg_n) and its variable at iteration tg_it:
// the whole loop, or in the split kernel the part's iterations [tg_kb, tg_ke).
std::string CudaEmitter::ws_trip_count(const For* f) {
  return "const int64_t tg_n = " +
         (split_kernel_ ? std::string("tg_ke - tg_kb; // this part's iterations") : expr(f->extent) + ";");
}

std::string CudaEmitter::ws_iteration(const For* f) {
  return "const int64_t " + name(f->var->name) + " = " + expr(f->start, kAdd) +
         (split_kernel_ ? " + tg_kb" : "") + " + tg_it;";
}

// The item of a split_kernel block: part b % tg_parts of the last tg_tail tiles' tile b / tg_parts,
// iterations [part * n / parts, (part + 1) * n / parts) (every split tile's parts start
// together); its slot among the split tiles is its cut.
void CudaEmitter::split_part_head() {
  line("const int64_t tg_slot = (int64_t)blockIdx.x / tg_p.tg_parts; // which split tile");
  line("const int64_t tg_piece = (int64_t)blockIdx.x % tg_p.tg_parts; // which part of it");
  line("const int64_t tg_tile = tg_ntiles - tg_p.tg_tail + tg_slot;");
  line("const int64_t tg_kb = tg_piece * tg_p.tg_nk / tg_p.tg_parts;");
  line("const int64_t tg_ke = (tg_piece + 1) * tg_p.tg_nk / tg_p.tg_parts;");
}

void CudaEmitter::emit_combine(const Combine* c, bool persistent) {
  // where a part's arrival is broadcast, and the barrier of the threads that hold the carry
  const std::string arrival = persistent ? "tg_split_arrival[tg_grp]" : "tg_split_arrival";
  const std::string bar = persistent ? "tg_bar_consumers(tg_grp);" : "__syncthreads();";
  if (c->loc.line > 0)
    line("// " + c_line_comment(info_.spec_path) + ":" + std::to_string(c->loc.line) +
         ": split (the parts of a split tile join here)");
  const std::string B = std::to_string(split_state_bytes());
  const std::string G = std::to_string(kSplitGroup), G1 = std::to_string(kSplitGroup - 1);
  open("");
  line("// The parts join in a tree of groups of " + G + ": at level 0 each group of " + G + " parts (by part");
  line("// number), at level 1 each group of " + G + " level-0 groups, and so on up to one. At each level");
  line("// each unit but the last to arrive leaves its registers in its own slot (by unit number) and");
  line("// sets that slot's ready word; the last (nobody waits on a part not yet running) merges the");
  line("// group in unit order, x0 + x1 + x2 + x3, whichever of them arrived last, so the result does");
  line("// not depend on the order the parts finish in (bitwise reproducible), and goes on to the next");
  line("// level as its group's unit. Slots: one per unit of every level (u = parts at level 0, then");
  line("// ceil(u / " + G + ")), a level's after the lower levels'; arrival words: one per group of every");
  line("// level (zero between launches).");
  line("const int64_t tg_np = tg_p.tg_parts;");
  line("int64_t tg_nw = 0, tg_ns = 0; // arrival words and slots per split tile");
  line("for (int64_t tg_u = tg_np; tg_u > 1; tg_u = (tg_u + " + G1 + ") / " + G + ") {");
  line("  tg_nw += (tg_u + " + G1 + ") / " + G + ";");
  line("  tg_ns += tg_u;");
  line("}");
  line("unsigned* tg_words = (unsigned*)tg_p.tg_split + tg_slot * tg_nw;");
  line("const int64_t tg_slot0 = tg_slot * tg_ns; // its first slot");
  line("unsigned* tg_ready = (unsigned*)tg_p.tg_split + TG_CUDA_SPLIT_CUTS + tg_slot0;");
  line("unsigned char* tg_regs = tg_p.tg_split + TG_CUDA_SPLIT_FLAG_BYTES + tg_slot0 * " + B + "ll;");
  line("bool tg_left = false; // handed its registers on: the tile is not this part's to finish");
  line("// units at this level, this part's unit (the group it won below), this level's first word and slot");
  line("int64_t tg_u = tg_np, tg_unit = tg_piece, tg_w0 = 0, tg_s0 = 0;");
  line("#pragma unroll 1");
  open("for (; tg_u > 1; tg_w0 += (tg_u + " + G1 + ") / " + G + ", tg_s0 += tg_u, tg_u = (tg_u + " + G1 + ") / " + G +
       ", tg_unit /= " + G + ")");
  line("const int64_t tg_team = tg_unit / " + G + "; // this part's group at this level");
  line("const int64_t tg_meet = tg_u - tg_team * " + G + " < " + G + " ? tg_u - tg_team * " + G + " : " + G +
       "; // units that meet here");
  line("if (tg_meet == 1)");
  line("  continue; // alone at this level");
  line("unsigned* tg_arrivals = tg_words + tg_w0 + tg_team;");
  line("const int64_t tg_base = tg_s0 + tg_team * " + G + "; // the group's first slot");
  line("const int64_t tg_pos = tg_unit - tg_team * " + G + "; // this unit's place in it");
  line("if (tg_tid == 0) " + arrival + " = atomicAdd(tg_arrivals, 1u);");
  line(persistent ? need("tg_bar_consumers") + "(tg_grp);" : bar);
  line("// (broadcast from lane 0: ptxas then knows the branch is warp-uniform)");
  line("const int64_t tg_arrival = (int64_t)__shfl_sync(0xffffffffu, " + arrival + ", 0);");
  const std::vector<int64_t> off = split_offsets();
  // Each thread stores (loads) its own registers of the carried fragments at slot `at`.
  auto store_regs = [&](const std::string& at) {
    line("unsigned char* tg_mine = tg_regs + (" + at + ") * " + B + "ll;");
    for (size_t i = 0; i < c->carry.size(); ++i) {
      const Buffer& st = *c->carry[i].state;
      line("#pragma unroll");
      line("for (int tg_r = 0; tg_r < " + std::to_string(frag(&st).num_regs()) + "; ++tg_r) __stcg((" +
           storage_type_name(st.dtype) + "*)(tg_mine + " + std::to_string(off[i]) + ") + tg_r * " +
           std::to_string(threads_) + " + tg_tid, " + name(st.name) + "[tg_r]);");
    }
  };
  // Thread 0 waits for slot q's ready word and clears it for the next launch; then the block.
  auto wait_ready = [&](const std::string& q) {
    line("if (tg_tid == 0) {");
    line("  while (" + need("tg_ld_acquire_u32") + "(&tg_ready[" + q + "]) == 0u) {");
    line("  }");
    line("  tg_ready[" + q + "] = 0u; // clear for the next launch");
    line("}");
    line(bar);
  };
  open("if (tg_arrival < tg_meet - 1)");
  line("// not the last here: hand the carried registers on and leave the tile");
  store_regs("tg_base + tg_pos");
  line(bar + " // every thread's stores, then one release at GPU scope");
  line("if (tg_tid == 0) " + need("tg_red_release_u32") + "(&tg_ready[tg_base + tg_pos], 1u);");
  line("tg_left = true;");
  line("break;");
  close();
  line("// the last here: merge the group in unit order. Unless it is the first unit, its own registers");
  line("// go to its slot (each thread reads back only what it wrote) and the first unit's are loaded.");
  open("if (tg_pos > 0)");
  store_regs("tg_base + tg_pos");
  wait_ready("tg_base");
  line("const unsigned char* tg_first = tg_regs + tg_base * " + B + "ll;");
  for (size_t i = 0; i < c->carry.size(); ++i) {
    const Buffer& st = *c->carry[i].state;
    line("#pragma unroll");
    line("for (int tg_r = 0; tg_r < " + std::to_string(frag(&st).num_regs()) + "; ++tg_r) " + name(st.name) +
         "[tg_r] = __ldcg((const " + storage_type_name(st.dtype) + "*)(tg_first + " + std::to_string(off[i]) +
         ") + tg_r * " + std::to_string(threads_) + " + tg_tid);");
  }
  close();
  line("#pragma unroll 1");
  open("for (int64_t tg_q = tg_base + 1; tg_q < tg_base + tg_meet; ++tg_q)");
  open("if (tg_q != tg_base + tg_pos)"); // its own slot needs no wait
  wait_ready("tg_q");
  close();
  line("const unsigned char* tg_peer = tg_regs + tg_q * " + B + "ll;");
  for (size_t i = 0; i < c->carry.size(); ++i)
    peer_ptr_[c->carry[i].peer.get()] = "((const " + storage_type_name(c->carry[i].state->dtype) +
                                        "*)(tg_peer + " + std::to_string(off[i]) + "))";
  stmt(c->body);
  peer_ptr_.clear();
  close();
  line("if (tg_tid == 0) *tg_arrivals = 0u; // all in at this level: clear for the next launch");
  close();
  open("if (tg_left)");
  if (persistent) {
    line("++tg_turn;");
    line("continue;");
  } else {
    line("return; // the part that merges last writes the tile");
  }
  close();
  close();
}

// ---- the kernel --------------------------------------------------------------------------------

// The persistent walk's groups (decode_tile). The P blocks resident at once span about `rows`
// rows of tiles and P / rows columns, so the pipelined copies whose source moves with y only (a
// GEMM's A row panels) read `rows` panels per k step and those that move with x only (B column
// panels) P / rows: the fewest bytes in flight through L2 at rows = sqrt(P * x_bytes / y_bytes)
// (16 for 128x256 GEMM tiles on 132 SMs). That square group is the walk where x_bytes or
// y_bytes is 0 (attention: K and V move with y only; then 8 rows) and, for the others, unless
// the host finds that a band of P / gx whole rows is small (tg_walk_rows): the x operands of all
// gx columns and the y operands of one band, over the whole loop, within an eighth of the L2.
// Then the resident blocks read each B panel once per band, in whole rows of B. H200
// (bench/RESULTS.md, 2026-11-30 session 16; tile_walk.test), interleaved against groups of 16:
// 4096x4096x512 (a band's operands 5 MB) 3.6-4.9% faster after an L2 flush or with inputs
// rotating through two copies, 1-1.7% back to back; 8192x8192x1024 (17 MB) and
// 16384x4096x1024 (10 MB) within +-2% either way; 6144x6144x2048 (27 MB) and 4096^3 (40 MB)
// 6% slower with rotating inputs, although those fit in the 60 MB L2.
CudaEmitter::TileWalk CudaEmitter::tile_walk() const {
  TileWalk w;
  w.heaviest_first = passes::extent_rises_with_grid_x(k_, ws_loop_);
  if (k_.grid.size() < 2 || !ws_loop_ || t_.gpu.sm_count <= 0)
    return w;
  const passes::TileVars x{{k_.grid[0].index.get(), passes::Interval{}}};
  const passes::TileVars y{{k_.grid[1].index.get(), passes::Interval{}}};
  for (const StmtNode* s : ws_pipe_.producers) {
    const Copy* c = as_copy(s);
    bool mx = false, my = false;
    for (const auto& o : c->src.offsets) {
      mx = mx || passes::mentions(o, x);
      my = my || passes::mentions(o, y);
    }
    if (mx != my)
      (mx ? w.x_bytes : w.y_bytes) += tile_bytes(*c->dst.buffer);
  }
  if (!w.banded()) {
    // Copies that move with y only (attention's K and V move with the head): one row at a
    // time, so the P resident blocks span the fewest rows and the blocks of a row read the
    // same stages at about the same time (fewer L2 requests and DRAM reads). Where the tiles
    // go heaviest first (causal attention), the last z plane's last 8 rows still run as one
    // group, so that the last waves get the light tiles of 8 rows, not a row's heavy ones.
    if (w.y_bytes > 0 && w.x_bytes == 0) {
      w.rows = 1;
      if (w.heaviest_first)
        w.last_group = 8;
    }
    w.x_bytes = w.y_bytes = 0;
    return w;
  }
  w.rows = std::max<int64_t>(
      1, std::llround(std::sqrt(double(t_.gpu.sm_count) * double(w.x_bytes) / double(w.y_bytes))));
  return w;
}

// Grid indices of tile tg_tile. Tiles run in groups of R rows along y (tile_walk: a constant, or
// the host's tg_p.tg_group), column-major inside a group, so the blocks resident at once share
// few rows of tiles along y and few along x (for a GEMM: A row panels and B column panels stay
// in L2 while the group runs); z is outermost.
void CudaEmitter::decode_tile() {
  const char* v[3] = {"tg_bx", "tg_by", "tg_bz"};
  const std::string R = walk_.banded() ? "tg_gr" : std::to_string(walk_.rows);
  line("const int64_t tg_gx = tg_p.tg_tiles[0], tg_gy = tg_p.tg_tiles[1];");
  if (walk_.banded())
    line("const int64_t tg_gr = tg_p.tg_group; // rows of tiles per group (tg_walk_rows)");
  line("const int64_t tg_plane = tg_tile % (tg_gx * tg_gy);");
  line("const int64_t tg_bz = tg_tile / (tg_gx * tg_gy);");
  // A pipelined loop whose trip count never decreases with x (causal attention: keys up to the
  // query block) takes its tiles from the highest x down: the heaviest tiles of each group run
  // first and the last wave gets the lightest, instead of finishing on the heaviest.
  const bool heaviest_first = walk_.heaviest_first;
  if (walk_.last_group > 0) { // rows one at a time, the last group of rows together (heaviest first)
    const std::string G = std::to_string(walk_.last_group);
    line("// a row of tiles at a time, except the last plane's last " + G + " rows: one group");
    line("const int64_t tg_lr = tg_gy < " + G + " ? tg_gy : " + G + "; // the last group's rows");
    line("const int64_t tg_q = tg_plane - (tg_gy - tg_lr) * tg_gx; // the tile's place in it");
    line("const bool tg_in_last = tg_bz == tg_p.tg_tiles[2] - 1 && tg_q >= 0;");
    line("const int64_t tg_by = tg_in_last ? tg_gy - tg_lr + tg_q % tg_lr : tg_plane / tg_gx;");
    line("const int64_t tg_bx = tg_gx - 1 - (tg_in_last ? tg_q / tg_lr : tg_plane % tg_gx); // heaviest first");
  } else if (!walk_.banded() && walk_.rows == 1) { // groups of one row: row-major
    line("const int64_t tg_by = tg_plane / tg_gx; // a row of tiles at a time");
    line(std::string("const int64_t tg_bx = ") +
         (heaviest_first ? "tg_gx - 1 - tg_plane % tg_gx; // heaviest first" : "tg_plane % tg_gx;"));
  } else {
    line("const int64_t tg_first = tg_plane / (" + R + " * tg_gx) * " + R + ";");
    line("const int64_t tg_rows = tg_gy - tg_first < " + R + " ? tg_gy - tg_first : " + R + ";");
    line("const int64_t tg_by = tg_first + tg_plane % (" + R + " * tg_gx) % tg_rows;");
    if (heaviest_first)
      line("const int64_t tg_bx = tg_gx - 1 - tg_plane % (" + R + " * tg_gx) / tg_rows; // heaviest first");
    else
      line("const int64_t tg_bx = tg_plane % (" + R + " * tg_gx) / tg_rows;");
  }
  line("(void)tg_bx; (void)tg_by; (void)tg_bz;");
  for (size_t i = 0; i < k_.grid.size(); ++i)
    line("const int64_t " + name(k_.grid[i].index->name) + " = " + v[i] + ";");
}

// Programmatic dependent launch (docs/hopper.md point 8): the host launches the kernels of cc 9.0+
// targets with cudaLaunchAttributeProgrammaticStreamSerialization (tg_launch_kernel), so a
// launch may start while the stream's previous kernel is still running, once each of that
// kernel's blocks has executed griddepcontrol.launch_dependents (or exited). Every block of
// tg_kernel_ws and tg_kernel therefore waits (griddepcontrol.wait: the previous grids complete,
// their writes visible) before its first access to global memory, and only then lets the next
// launch go: the overlap is its prologue (shared memory, barriers, tensor-map prefetch) and the
// launch latency. tg_kernel_ws_split,
// launched with the attribute only right after tg_kernel_ws, does not wait at its start: every
// block of tg_kernel_ws has passed its wait when it starts, so what the stream ran before is
// complete and visible, and its tiles are disjoint from tg_kernel_ws's. It waits at its end
// instead, so that its completion, which the next launch waits for, implies tg_kernel_ws's.
// Without the attribute (the _desc launch, TILEGEN_GPU_PDL=0) both instructions do nothing.
void CudaEmitter::emit_launch_order() {
  if (split_kernel_) {
    line("// programmatic dependent launch (emit_launch_order): tg_kernel_ws's blocks have all passed");
    line("// their wait, so no wait here; the next launch may start its prologue");
  } else {
    line("// programmatic dependent launch (emit_launch_order): the stream's previous kernels are");
    line("// complete and their writes visible from here; the next launch may start");
    line(need("tg_grid_wait") + "();");
  }
  line(need("tg_grid_launch_dependents") + "();");
}

std::string CudaEmitter::ws_kernel_text(bool split_kernel) {
  split_kernel_ = split_kernel;
  out_.str("");
  indent_ = 1;
  if (runtime_vec())
    line("const int TG_VEC = tg_p.tg_vec; // what the tensors its threads address allow (tg_setup)");
  else
    line("constexpr int TG_VEC = 16; // TMA: the host checked 16-byte alignment and rows");
  line("extern __shared__ __align__(1024) unsigned char tg_smem_raw[];");
  line("// 128-byte swizzle atoms must be 1024-byte aligned in the shared window");
  line("unsigned char* tg_smem = tg_smem_raw + ((1024u - (" +
       std::string("(unsigned)__cvta_generic_to_shared(tg_smem_raw) & 1023u)) & 1023u);"));
  line("const int tg_tid_all = (int)threadIdx.x;");
  line("(void)tg_smem; (void)TG_VEC;");
  kernel_preamble(false);
  if (split_ && !split_kernel_)
    line("// the last tg_tail tiles, if any, are tg_kernel_ws_split's");
  line("const int64_t tg_ntiles = tg_p.tg_tiles[0] * tg_p.tg_tiles[1] * tg_p.tg_tiles[2]" +
       std::string(split_ && !split_kernel_ ? " - tg_p.tg_tail;" : ";"));
  const std::string S = std::to_string(ws_pipe_.stages);
  line("uint64_t* tg_full = (uint64_t*)(tg_smem + " + std::to_string(barrier_offset_) + ");");
  line("uint64_t* tg_empty = tg_full + " + S + ";");
  line("uint64_t* tg_order = tg_empty + " + S + "; // per consumer group: its turn to start");
  line("(void)tg_order;");
  if (!late_producers_.empty()) {
    line("// the second gemm's tiles (V): their own full/empty barriers");
    line("uint64_t* tg_full2 = tg_order + " + std::to_string(groups()) + ";");
    line("uint64_t* tg_empty2 = tg_full2 + " + S + ";");
  }
  if (!ws_pipe_.prologue.empty()) {
    line("// the tile's prologue boxes (copies before the loop): [0] full, [1] empty");
    line(std::string("uint64_t* tg_pro = ") + (late_producers_.empty() ? "tg_order + " + std::to_string(groups())
                                                                    : "tg_empty2 + " + S) + ";");
  }
  if (dynamic_tiles()) {
    line("// the tile ring: [0..1] full, [2..3] empty, [4] the TMA thread's request (emit_tile_scheduler)");
    line("uint64_t* tg_tq = tg_full + " + std::to_string(barrier_count(ws_pipe_)) + ";");
    line("int64_t* tg_tq_slot = (int64_t*)(tg_tq + 5);");
  }
  if (split_kernel_)
    line("unsigned* tg_split_arrival = (unsigned*)(tg_full + " + std::to_string(barrier_count(ws_pipe_)) +
         "); // per group: the part's arrival number at its cut");
  open("if (tg_tid_all == 0)");
  open("for (int tg_s = 0; tg_s < " + S + "; ++tg_s)");
  need("tg_mbar_wait");
  line("tg_mbar_init(&tg_full[tg_s], 1);");
  line("tg_mbar_init(&tg_empty[tg_s], " + std::to_string(threads_ / 32) + ");");
  if (!late_producers_.empty()) {
    line("tg_mbar_init(&tg_full2[tg_s], 1);");
    line("tg_mbar_init(&tg_empty2[tg_s], " + std::to_string(threads_ / 32) + ");");
  }
  close();
  line("for (int tg_s = 0; tg_s < " + std::to_string(groups()) + "; ++tg_s)");
  line("  tg_mbar_init(&tg_order[tg_s], " + std::to_string(threads_ / 32) + ");");
  if (!ws_pipe_.prologue.empty()) {
    line("tg_mbar_init(&tg_pro[0], 1);");
    line("tg_mbar_init(&tg_pro[1], " + std::to_string(threads_ / 32) + ");");
  }
  if (dynamic_tiles()) {
    line("tg_mbar_init(&tg_tq[0], 1);");
    line("tg_mbar_init(&tg_tq[1], 1);");
    line("tg_mbar_init(&tg_tq[2], " + std::to_string(threads_ / 32 + 1) + "); // the consumer warps, the TMA thread");
    line("tg_mbar_init(&tg_tq[3], " + std::to_string(threads_ / 32 + 1) + ");");
    line("tg_mbar_init(&tg_tq[4], 1);");
  }
  line("tg_mbar_init_fence();");
  // The tensor maps are parameters, not memory an earlier launch writes: fetched before the wait.
  for (const auto& m : tma_maps_)
    line(need("tg_prefetch_map") + "(&tg_p." + m.member + ");");
  if (tma_store_)
    line(need("tg_prefetch_map") + "(&tg_p.tg_tm_out);");
  close();
  line("__syncthreads();");
  emit_launch_order();
  emit_producer_branch();
  const int64_t G = groups();
  line("// consumer group tg_grp (" + std::to_string(G) + " of " + std::to_string(threads_) +
       " threads) takes every " + (G > 1 ? std::to_string(G) + "th tile" : "tile"));
  line("const int tg_grp = tg_tid_all / " + std::to_string(threads_) + ";");
  line("const int tg_tid = tg_tid_all % " + std::to_string(threads_) + ";");
  line("(void)tg_grp;");
  line("int64_t tg_pipe = 0; // ring positions consumed so far (all groups' tiles)");
  line("// tiles so far: this block's, this group's (the split kernel's one tile uses neither)");
  line("[[maybe_unused]] int64_t tg_i = 0;");
  line("[[maybe_unused]] int64_t tg_turn = 0;");
  if (dynamic_tiles()) {
    open("for (;; ++tg_i)");
    take_ring_tile("tg_i", true);
  } else if (split_kernel_) {
    // One item, in a block that is not a loop: with a loop around it (even one of one trip),
    // the combine's writes to the accumulator reach the wgmma pipeline again through the back
    // edge, and ptxas serializes every wgmma of the kernel (C7515 on the bf16 GEMM).
    open("do");
    split_part_head();
  } else {
    open("for (int64_t tg_tile = blockIdx.x; tg_tile < tg_ntiles; tg_tile += gridDim.x, ++tg_i)");
  }
  decode_tile();
  if (G > 1) {
    open("if (tg_i % " + std::to_string(G) + " != tg_grp)");
    line("// another group's tile: its iterations pass through the ring all the same");
    emit_lets_before(ws_loop_);
    line("tg_pipe += " + (split_kernel_ ? std::string("tg_ke - tg_kb") : expr(ws_loop_->extent)) + ";");
    line("continue;");
    close();
  }
  stmt(k_.body);
  // The next tile's statements may overwrite shared memory this one read.
  if (smem_dirty_ || smem_read_ || async_pending_)
    barrier();
  line("++tg_turn;");
  close(split_kernel_ ? "} while (0); // `continue` leaves it" : "}");
  if (tma_store_)
    line("if (" + store_issuer() + ") " + need("tg_bulk_wait") + "<0>(); // the last tile's TMA store is done");
  if (split_kernel_)
    line(need("tg_grid_wait") + "(); // complete only after tg_kernel_ws (emit_launch_order)");
  std::ostringstream os;
  if (split_kernel_)
    os << "/* The split tail (docs/hopper.md): block b runs part b % tg_parts of the last tg_tail\n"
          " * tiles' tile b / tg_parts, after tg_kernel_ws ran the others; the parts join. */\n";
  else
    os << "/* Warp-specialized: " << threads_ * G << " consumer threads (warpgroups 0.."
       << threads_ * G / 128 - 1 << ", " << G << " group(s)) and producer warpgroup "
       << threads_ * G / 128 << ". */\n";
  os << "__global__ void __launch_bounds__(" << threads_ * G + 128 << ", 1) "
     << (split_kernel_ ? "tg_kernel_ws_split" : "tg_kernel_ws")
     << "(const __grid_constant__ tg_params tg_p) {\n" << out_.str() << "}\n";
  split_kernel_ = false;
  return os.str();
}

} // namespace tilegen::emit
