// version_single_trip(): see VersionSingleTrip.h.
#include "passes/VersionSingleTrip.h"

#include "ir/IRMutator.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "passes/RangeAnalysis.h"
#include "passes/RedundantLoadElim.h"

namespace tilegen::passes {

using namespace ir;

namespace {

// E is uniform over the block and does not change while the block runs.
class UniformExtent : public IRVisitor {
public:
  bool ok = true;

protected:
  void visit_Load(const Load*) override { ok = false; }
  void visit_VarRef(const VarRef* v) override {
    switch (v->var->kind) {
    case VarKind::Dim:
    case VarKind::ValueParam:
    case VarKind::Flag:
    case VarKind::Scalar:
    case VarKind::TileConst:
    case VarKind::BlockIndex:
    case VarKind::LoopVar:
      return;
    case VarKind::ParallelVar:
    case VarKind::Let:
      ok = false;
      return;
    }
  }
};

bool declares(const Stmt& s) {
  return s->as<Alloc>() || s->as<LetStmt>();
}

bool body_declares(const Stmt& body) {
  if (auto* q = body->as<Seq>()) {
    for (const auto& c : q->stmts)
      if (declares(c))
        return true;
    return false;
  }
  return declares(body);
}

// Copies of read-only tensors into register tiles, with no load in their regions.
class RegisterTileLoads : public IRVisitor {
public:
  std::vector<const Copy*> found;

protected:
  void visit_Copy(const Copy* c) override {
    const Buffer& src = *c->src.buffer;
    const Buffer& dst = *c->dst.buffer;
    if (src.scope == MemScope::Global && src.access == Access::Read &&
        (dst.scope == MemScope::Fragment || dst.scope == MemScope::Local))
      found.push_back(c);
  }
};

// Replaces every occurrence of one expression (structurally) by another: inside the
// single-trip line the trip count E is 1, so `k == cdiv(N, BN) - 1` (the last chunk) folds.
class ReplaceExpr : public IRMutator {
public:
  ReplaceExpr(Expr from, Expr to) : from_(std::move(from)), to_(std::move(to)) {}

protected:
#define TG_REPLACE(K)                                                                              \
  Expr mutate_##K(const K* n, const Expr& self) override {                                         \
    if (same_expr(self, from_))                                                                    \
      return to_;                                                                                  \
    return IRMutator::mutate_##K(n, self);                                                         \
  }
  TG_REPLACE(Binary)
  TG_REPLACE(Unary)
  TG_REPLACE(VarRef)
  TG_REPLACE(Cast)
  TG_REPLACE(Select)
  TG_REPLACE(Call)
#undef TG_REPLACE

private:
  Expr from_, to_;
};

class Versioner : public IRMutator {
public:
  explicit Versioner(const Kernel& k) : env_(body_ranges(k)) {}
  SingleTripStats stats;
  std::vector<std::string> notes;

protected:
  Stmt mutate_Seq(const Seq* n, const Stmt& self) override {
    // Inner statements first (loops nested in loops or ifs), then the groups of this Seq.
    bool changed = false;
    std::vector<Stmt> stmts;
    for (const auto& c : n->stmts) {
      Stmt m = mutate(c);
      changed |= m != c;
      stmts.push_back(std::move(m));
    }
    std::vector<Stmt> out;
    for (size_t i = 0; i < stmts.size();) {
      size_t last = group_end(stmts, i);
      if (last == i) {
        out.push_back(stmts[i++]);
        continue;
      }
      std::vector<Stmt> span(stmts.begin() + static_cast<std::ptrdiff_t>(i),
                             stmts.begin() + static_cast<std::ptrdiff_t>(last) + 1);
      if (Stmt v = version(span)) {
        out.push_back(std::move(v));
        changed = true;
        i = last + 1;
      } else {
        out.push_back(stmts[i++]);
      }
    }
    return changed ? Seq::make(std::move(out), n->loc) : self;
  }

private:
  static const For* serial(const Stmt& s) {
    auto* f = s->as<For>();
    return f && !f->pipelined() ? f : nullptr;
  }
  static bool same_trips(const For* a, const For* b) {
    return same_expr(a->start, b->start) && same_expr(a->extent, b->extent);
  }

  // The index of the group's last loop if stmts[i] starts a group of at least two loops, else i.
  size_t group_end(const std::vector<Stmt>& stmts, size_t i) const {
    const For* first = serial(stmts[i]);
    if (!first || as_const_int(first->extent))
      return i;
    size_t last = i;
    for (size_t j = i + 1; j < stmts.size(); ++j) {
      if (declares(stmts[j]))
        break;
      if (const For* f = serial(stmts[j]); f && same_trips(first, f))
        last = j;
    }
    return last;
  }

  // The `if`, or the single-trip line, for a group; nullptr when it is not versioned.
  Stmt version(const std::vector<Stmt>& span) {
    const For* first = serial(span.front());
    UniformExtent uniform;
    uniform.visit(first->extent);
    uniform.visit(first->start);
    if (!uniform.ok)
      return nullptr;
    Interval trips = bounds_of(first->extent, env_);
    if (!trips.contains(1))
      return nullptr;

    std::vector<Stmt> line;
    std::vector<std::vector<const Copy*>> loads; // per inlined loop
    for (const auto& s : span) {
      const For* f = serial(s);
      if (!f || !same_trips(first, f)) {
        line.push_back(s);
        continue;
      }
      if (body_declares(f->body))
        return nullptr;
      VarMap m;
      m[f->var.get()] = f->start;
      Stmt body = simplify(substitute(f->body, m));
      if (!body->as<Seq>())
        body = Seq::make({body}, f->body->loc);
      RegisterTileLoads r;
      r.visit(body);
      loads.push_back(std::move(r.found));
      line.push_back(std::move(body));
    }
    if (!worth_it(loads))
      return nullptr;

    ReplaceExpr one(first->extent, make_i64(1, first->loc));
    Stmt single = simplify(one.mutate(Seq::make(std::move(line), first->loc)));
    Expr cond = Binary::make(BinaryOp::Eq, first->extent, make_i64(1, first->loc), first->loc);
    Expr decided = prune_decided(cond, env_);
    std::string where = "for loops at lines";
    for (const auto& s : span)
      if (const For* f = serial(s); f && same_trips(first, f))
        where += (f == first ? " " : ", ") + std::to_string(f->loc.line);
    if (is_const_int(decided, 1) || trips.is_point()) {
      ++stats.inlined;
      notes.push_back(where + ": always one trip (inlined)");
      return single;
    }
    if (is_const_int(decided, 0))
      return nullptr;
    ++stats.versioned;
    notes.push_back(where + " versioned: inlined when " + to_string(cond));
    // In the original the trip count is not 1: a test of exactly that folds to false there.
    ReplaceExpr not_one(cond, BoolImm::make(false, first->loc));
    Stmt original = Seq::make(span, first->loc);
    if (Stmt o = not_one.mutate(original); o != original)
      original = simplify(o);
    return IfThenElse::make(cond, single, original, first->loc);
  }

  // Two different loops copy the same read-only region into the same kind of register tile.
  static bool worth_it(const std::vector<std::vector<const Copy*>>& loads) {
    for (size_t a = 0; a < loads.size(); ++a)
      for (size_t b = a + 1; b < loads.size(); ++b)
        for (const Copy* x : loads[a])
          for (const Copy* y : loads[b])
            if (same_region(x->src, y->src))
              return true;
    return false;
  }

  RangeEnv env_;
};

} // namespace

Kernel version_single_trip(const Kernel& k, SingleTripStats* stats) {
  Versioner v(k);
  Kernel out = v.mutate_kernel(k);
  for (auto& n : v.notes)
    out.notes.push_back(std::move(n));
  if (stats)
    *stats = v.stats;
  return out;
}

} // namespace tilegen::passes
