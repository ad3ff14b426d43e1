// exp in chunks (docs/c-backend.md, "Math functions"; #38). gcc vectorizes a simd loop that
// calls tg_exp_f32 into about 24 vector instructions per 16 elements, 9 of them for the
// scaling by 2^n with correct overflow and gradual underflow; AVX-512's vscalefps does that
// scaling in one, but the autovectorizer never emits it (gcc 12 has no vector ldexp); with AVX2
// the same steps written with intrinsics ran 1.28x gcc's vectorized loop (Zen 3). On a
// target with Target::c_exp_rows the innermost loop of a simd parallel whose statements call
// exp (f32) is strip-mined into chunks: a first simd loop writes each exp's argument into an L1
// buffer, tg_exp_row_f32 evaluates the chunk in place with intrinsics (bit-identical to
// tg_exp_f32), and a second simd loop runs the statements with each exp read from its buffer.
//
// Conditions (else the parallel prints as before): the innermost extent is a constant >= 16
// and a multiple of the chunk (256, or the extent when smaller); the body is lets and stores
// only; no let calls exp; no exp argument reads a buffer the body stores (the first loop runs
// before any store of the chunk). Loads of on-chip buffers that do not depend on the innermost
// variable and that the body does not store (softmax's m[i]) are read once before the chunk
// loop: without that gcc kept reloading m[i] (the store into e may alias it) and turned
// `m[i] == -inf ? 0 : tg_e` into a branch, leaving the second loop scalar.
#include "emit/CEmitter.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "passes/RedundantLoadElim.h"

namespace tilegen::emit {

using namespace ir;

namespace {

constexpr int64_t kExpChunk = 256; // floats: 1 KiB per exp buffer, in L1 with the chunk's data

bool is_exp_f32(const Call* c) { return c->fn == Intrinsic::Exp && c->type == DType::f32(); }

// The exp calls of an expression not nested in another exp's argument, in print order.
void outer_exps(const Expr& e, std::vector<const Call*>& out) {
  class Finder : public IRVisitor {
  public:
    std::vector<const Call*>* out = nullptr;

  protected:
    void visit_Call(const Call* n) override {
      if (is_exp_f32(n))
        out->push_back(n);
      else
        IRVisitor::visit_Call(n);
    }
  } f;
  f.out = &out;
  f.visit(e);
}

bool has_exp(const Expr& e) {
  std::vector<const Call*> found;
  outer_exps(e, found);
  return !found.empty();
}

// Replaces the planned exp calls and invariant loads by references to their locals.
class ChunkRewriter : public IRMutator {
public:
  std::map<const ExprNode*, Expr> repl;

protected:
  Expr mutate_Call(const Call* n, const Expr& self) override {
    auto it = repl.find(n);
    return it != repl.end() ? it->second : IRMutator::mutate_Call(n, self);
  }
  Expr mutate_Load(const Load* n, const Expr& self) override {
    auto it = repl.find(n);
    return it != repl.end() ? it->second : IRMutator::mutate_Load(n, self);
  }
};

} // namespace

bool CEmitter::emit_exp_rows(const Parallel* n, const std::vector<std::string>& vars) {
  if (!target_.c_exp_rows || c_touches_global(n->body))
    return false;
  auto ext = n->extents.back()->as<IntImm>();
  if (!ext || ext->value < 16)
    return false;
  const int64_t extent = ext->value, chunk = std::min(extent, kExpChunk);
  if (extent % chunk != 0)
    return false;
  std::vector<Stmt> body;
  if (auto seq = n->body->as<Seq>())
    body = seq->stmts;
  else
    body = {n->body};
  std::set<const Buffer*> stored;
  std::vector<const Call*> exps;
  for (const auto& s : body) {
    if (auto st = s->as<Store>()) {
      if (st->op != StoreOp::Assign && st->op != StoreOp::Add)
        return false;
      stored.insert(st->buffer.get());
      outer_exps(st->value, exps);
    } else if (auto let = s->as<LetStmt>()) {
      if (has_exp(let->value))
        return false;
    } else {
      return false;
    }
  }
  if (exps.empty())
    return false;
  for (const Call* c : exps)
    for (const Buffer* b : stored)
      if (mentions_buffer(c->args[0], b))
        return false;

  // Invariant loads: on-chip, not stored by the body, indices free of the innermost variable.
  const Var* inner = n->vars.back().get();
  class Loads : public IRVisitor {
  public:
    std::vector<const Load*> found;

  protected:
    void visit_Load(const Load* l) override {
      found.push_back(l);
      IRVisitor::visit_Load(l);
    }
  } loads;
  for (const auto& s : body)
    loads.visit(s);
  std::vector<const Load*> invariant;
  for (const Load* l : loads.found) {
    bool inv = l->buffer->scope != MemScope::Global && !stored.count(l->buffer.get());
    for (const auto& i : l->indices)
      inv &= !mentions_var(i, inner);
    if (inv)
      invariant.push_back(l);
  }

  const size_t outer = vars.size() - 1;
  open_loops(std::vector<std::string>(vars.begin(), vars.begin() + outer),
             std::vector<Expr>(n->extents.begin(), n->extents.begin() + outer), false);
  const bool saved_guard = guard_loads_;
  guard_loads_ = true;
  const auto saved_point = point_vars_;
  point_vars_.clear();
  for (const auto& v : n->vars)
    point_vars_.push_back(v.get());

  ChunkRewriter rw;
  std::vector<std::pair<const Load*, Expr>> hoisted; // equal loads share one local
  for (const Load* l : invariant) {
    Expr same;
    for (const auto& [o, r] : hoisted)
      if (o->buffer == l->buffer && passes::same_expr(Load::make(o->buffer, o->indices),
                                                      Load::make(l->buffer, l->indices)))
        same = r;
    if (!same) {
      const std::string v = "tg_h" + std::to_string(++next_read_id_);
      line("const " + type_name(l->type) + " " + v + " = " + load_value(l->buffer, l->indices) +
           "; /* the same in every point of the loop below */");
      same = VarRef::make(make_var(v, VarKind::Let, l->type));
      hoisted.emplace_back(l, same);
    }
    rw.repl[l] = same;
  }
  std::vector<std::string> bufs, vals; // tg_ea<n>[chunk], and its element as a local tg_e<n>
  for (size_t e = 0; e < exps.size(); ++e) {
    const std::string id = std::to_string(++next_read_id_);
    bufs.push_back("tg_ea" + id);
    vals.push_back("tg_e" + id);
    rw.repl[exps[e]] = VarRef::make(make_var(vals.back(), VarKind::Let, DType::f32()));
  }
  const std::string inner_name = vars.back(), c = std::to_string(chunk);
  line("/* exp in chunks of " + c + ": arguments, " + need("tg_exp_row_f32") + " (" +
       (target_.vector_bytes >= 64 ? "vscalefps" : "intrinsics") + "), then the statements */");
  if (chunk < extent)
    open("for (int64_t tg_c = 0; tg_c < " + expr(n->extents.back(), kRel + 1) + "; tg_c += " + c + ")");
  else
    open("");
  const std::string point = "const int64_t " + inner_name + " = " +
                            (chunk < extent ? "tg_c + tg_k;" : "tg_k;");
  for (const auto& b : bufs)
    line("_Alignas(64) float " + b + "[" + c + "];");
  // f16 views: the chunk's columns (or the tile's row) converted first (CF16Rows.cpp)
  const bool rows = chunk < extent ? begin_f16_rows({"tg_k", inner_name}, "tg_c", inner_name, "tg_k", chunk)
                                   : begin_f16_rows({"tg_k", inner_name});
  line("#pragma omp simd");
  open("for (int64_t tg_k = 0; tg_k < " + c + "; ++tg_k)");
  // (void): the exp arguments may not read the point (a row's rescale factor), nor the f16
  // views (tg_xr)
  line(point + " (void)" + inner_name + ";");
  for (const auto& s : body)
    if (s->kind == StmtKind::LetStmt)
      stmt(rw.mutate(s));
  for (size_t e = 0; e < exps.size(); ++e)
    line(bufs[e] + "[tg_k] = " + expr(simplify(rw.mutate(exps[e]->args[0])), kAssign) + ";");
  close();
  for (const auto& b : bufs)
    line("tg_exp_row_f32(" + b + ", " + c + ");");
  line("#pragma omp simd");
  open("for (int64_t tg_k = 0; tg_k < " + c + "; ++tg_k)");
  line(point);
  for (size_t e = 0; e < exps.size(); ++e)
    line("const float " + vals[e] + " = " + bufs[e] + "[tg_k];");
  for (const auto& s : body)
    stmt(rw.mutate(s));
  close();
  if (rows)
    end_f16_rows();
  close();

  point_vars_ = saved_point;
  guard_loads_ = saved_guard;
  close_loops(outer);
  return true;
}

} // namespace tilegen::emit
