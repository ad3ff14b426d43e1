// version_by_range(): see VersionByRange.h. The analysis is passes/RangeAnalysis.
#include "passes/VersionByRange.h"

#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "passes/RangeAnalysis.h"

#include <algorithm>
#include <set>

namespace tilegen::passes {

using namespace ir;

namespace {

// A predicate is evaluated once per tile by every thread; past this many IR nodes it is not
// worth it (and no realistic mask needs more: the causal attention mask takes 13).
constexpr int kMaxPredicateNodes = 40;

class CountNodes : public IRVisitor {
public:
  int n = 0;

protected:
#define TG_X(name)                                                                               \
  void visit_##name(const name* node) override {                                                 \
    ++n;                                                                                         \
    IRVisitor::visit_##name(node);                                                               \
  }
  TILEGEN_EXPR_KINDS(TG_X)
#undef TG_X
};

class UsedVars : public IRVisitor {
public:
  std::set<const Var*> vars;

protected:
  void visit_VarRef(const VarRef* v) override { vars.insert(v->var.get()); }
};

bool is_constant(const Expr& e) {
  if (e->as<IntImm>() || e->as<FloatImm>() || e->as<BoolImm>())
    return true;
  if (auto* c = e->as<Cast>())
    return is_constant(c->value);
  if (auto* u = e->as<Unary>())
    return is_constant(u->a);
  return false;
}

// A branch that does nothing but store constants (a mask or padding value), or nothing.
bool is_light(const Stmt& s) {
  if (!s)
    return true;
  if (auto* q = s->as<Seq>()) {
    for (const auto& c : q->stmts)
      if (!is_light(c))
        return false;
    return true;
  }
  if (s->as<LetStmt>())
    return true;
  if (auto* st = s->as<Store>())
    return st->op == StoreOp::Assign && is_constant(st->value);
  if (auto* i = s->as<IfThenElse>())
    return is_light(i->then_case) && is_light(i->else_case);
  return false;
}

// The value a condition is folded to: the one that keeps the side doing the work.
// then_light/else_light: the arm or branch only yields a constant (or nothing).
bool preferred_value(bool then_light, bool else_light) { return !then_light && else_light; }

struct Candidate {
  const ExprNode* node; // the condition as it appears in the body
  Expr subst;           // with the body's lets substituted
  bool prefer;
};

// Conditions of selects and ifs in a parallel body, in program order.
class Collect : public ParallelBodyWalker {
public:
  std::vector<Candidate> found;

protected:
  void before_if(const IfThenElse* i) override {
    add(i->cond, preferred_value(is_light(i->then_case), is_light(i->else_case)));
  }
  void add(const Expr& cond, bool prefer) {
    for (const auto& c : found)
      if (c.node == cond.get())
        return;
    found.push_back({cond.get(), substitute(cond, lets), prefer});
  }
  void visit_Select(const Select* s) override {
    add(s->cond, preferred_value(is_constant(s->t), is_constant(s->f)));
    IRVisitor::visit_Select(s);
  }
};

// Replaces the chosen condition nodes by constants.
class Fold : public IRMutator {
public:
  std::map<const ExprNode*, bool> values;

protected:
#define TG_FOLD(K)                                                                               \
  Expr mutate_##K(const K* n, const Expr& self) override {                                       \
    if (auto it = values.find(n); it != values.end())                                            \
      return BoolImm::make(it->second, n->loc);                                                  \
    return IRMutator::mutate_##K(n, self);                                                       \
  }
  TG_FOLD(Binary)
  TG_FOLD(Unary)
  TG_FOLD(VarRef)
  TG_FOLD(Cast)
  TG_FOLD(Select)
  TG_FOLD(Load)
#undef TG_FOLD
};

// Lets that nothing after them reads (the folded copy's `let kv = ...` once the mask is gone).
Stmt drop_dead_lets(const Stmt& s) {
  if (!s)
    return s;
  if (auto* i = s->as<IfThenElse>())
    return IfThenElse::make(i->cond, drop_dead_lets(i->then_case), drop_dead_lets(i->else_case),
                            i->loc);
  auto* q = s->as<Seq>();
  if (!q)
    return s;
  std::vector<Stmt> kept;
  UsedVars used;
  for (size_t i = q->stmts.size(); i-- > 0;) {
    const Stmt& c = q->stmts[i];
    if (auto* l = c->as<LetStmt>(); l && !used.vars.count(l->var.get()))
      continue;
    Stmt d = drop_dead_lets(c);
    used.visit(d);
    kept.push_back(d);
  }
  std::reverse(kept.begin(), kept.end());
  return Seq::make(std::move(kept), q->loc);
}

// `b[i, j] = b[i, j]`: what a folded select leaves of `b = c ? x : b` (the attention mask once
// the scale moved out of it). Indices equal as the same variables or constants.
bool self_store(const Stmt& s) {
  auto* st = s->as<Store>();
  auto* ld = st ? st->value->as<Load>() : nullptr;
  if (!ld || st->op != StoreOp::Assign || ld->buffer != st->buffer ||
      ld->indices.size() != st->indices.size())
    return false;
  for (size_t i = 0; i < ld->indices.size(); ++i) {
    const Expr &a = ld->indices[i], &b = st->indices[i];
    auto *va = a->as<VarRef>(), *vb = b->as<VarRef>();
    auto ca = as_const_int(a), cb = as_const_int(b);
    if (!(va && vb && va->var == vb->var) && !(ca && cb && *ca == *cb))
      return false;
  }
  return true;
}

Stmt drop_self_stores(const Stmt& s) {
  auto* q = s ? s->as<Seq>() : nullptr;
  if (!q)
    return s && self_store(s) ? Seq::make({}, s->loc) : s;
  std::vector<Stmt> kept;
  for (const Stmt& c : q->stmts)
    if (!self_store(c))
      kept.push_back(c);
  return Seq::make(std::move(kept), q->loc);
}

bool empty_seq(const Stmt& s) {
  auto* q = s->as<Seq>();
  return q && q->stmts.empty();
}

class Versioner : public IRMutator {
public:
  explicit Versioner(const Kernel& k) : env_(kernel_ranges(k)) {}
  VersionStats stats;
  std::vector<std::string> notes;

protected:
  Stmt mutate_For(const For* n, const Stmt& self) override {
    // Inside the body the loop runs at least once: var in [start, start + extent - 1].
    Interval s = bounds_of(n->start, env_), e = bounds_of(n->extent, env_);
    Interval r;
    r.lo = s.lo;
    if (s.hi && e.hi && *e.hi >= 1)
      r.hi = *s.hi + (*e.hi - 1);
    env_.set(n->var.get(), r);
    if (is_const_int(n->start, 0))
      env_.set_upper(n->var.get(), n->extent);
    return IRMutator::mutate_For(n, self);
  }
  Stmt mutate_LetStmt(const LetStmt* n, const Stmt& self) override {
    env_.bind_let(n->var.get(), n->value);
    return IRMutator::mutate_LetStmt(n, self);
  }
  Stmt mutate_Parallel(const Parallel* n, const Stmt& self) override {
    TileVars tile;
    for (size_t i = 0; i < n->vars.size(); ++i) {
      auto ext = as_const_int(n->extents[i]);
      if (!ext || *ext < 1)
        return self;
      tile[n->vars[i].get()] = Interval::of(0, *ext - 1);
    }
    Collect c;
    c.walk(n->body);
    Fold fold;
    Expr pred;
    for (const auto& cand : c.found) {
      if (!mentions(cand.subst, tile))
        continue; // already uniform: nothing to gain per tile
      bool value = cand.prefer;
      Expr p = uniform_predicate(cand.subst, value, tile, env_);
      if (!p || is_const_int(p, 0)) {
        value = !value;
        p = uniform_predicate(cand.subst, value, tile, env_);
      }
      if (!p || is_const_int(p, 0))
        continue;
      Expr joined = simplify(pred ? Binary::make(BinaryOp::And, pred, p) : p);
      CountNodes count;
      count.visit(joined);
      if (count.n > kMaxPredicateNodes)
        continue;
      pred = joined;
      fold.values[cand.node] = value;
    }
    if (!pred)
      return self;
    Stmt fast = drop_dead_lets(drop_self_stores(simplify(fold.mutate(n->body))));
    // Nothing left to do where the predicate holds: only the other side runs.
    const bool nothing = empty_seq(fast);
    Stmt folded = nothing ? fast : Parallel::make(n->vars, n->extents, fast, n->loc);
    std::string where = "parallel at line " + std::to_string(n->loc.line);
    if (is_const_int(pred, 1)) {
      ++stats.folded;
      notes.push_back(where + ": its conditions are uniform over every tile (folded" +
                      (nothing ? ", nothing left)" : ")"));
      return folded;
    }
    ++stats.versioned;
    notes.push_back(where + " versioned: conditions folded when " + to_string(pred) +
                    (nothing ? " (nothing left to do)" : ""));
    if (nothing)
      return IfThenElse::make(simplify(Unary::make(UnaryOp::Not, pred)), self, nullptr, n->loc);
    return IfThenElse::make(pred, folded, self, n->loc);
  }

private:
  RangeEnv env_;
};

} // namespace

Kernel version_by_range(const Kernel& k, VersionStats* stats) {
  Versioner v(k);
  Kernel out = v.mutate_kernel(k);
  for (auto& n : v.notes)
    out.notes.push_back(std::move(n));
  if (stats)
    *stats = v.stats;
  return out;
}

} // namespace tilegen::passes
