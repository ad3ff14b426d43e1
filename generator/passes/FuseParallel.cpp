// fuse_parallels(): see FuseParallel.h.
#include "passes/FuseParallel.h"
#include "passes/BodyStmts.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "ir/Substitute.h"
#include "passes/RedundantLoadElim.h"

#include <map>
#include <set>
#include <string>

namespace tilegen::passes {

using namespace ir;

namespace {

// Indices that are exactly the loop's variables, in order.
bool at_points(const std::vector<Expr>& idx, const std::vector<VarPtr>& vars) {
  if (idx.size() != vars.size())
    return false;
  for (size_t d = 0; d < idx.size(); ++d) {
    auto* r = idx[d]->as<VarRef>();
    if (!r || r->var != vars[d])
      return false;
  }
  return true;
}

// Buffers an expression or statement loads from.
struct LoadedBuffers : IRVisitor {
  std::set<const Buffer*> out;
  void visit_Load(const Load* n) override {
    out.insert(n->buffer.get());
    IRVisitor::visit_Load(n);
  }
};

// Whether s mentions a tensor the kernel may write (tensors may alias: an in-place call passes
// the same memory as an input and an output, so a write to one may change the other).
bool mentions_written_tensor(const Stmt& s) {
  struct V : IRVisitor {
    bool found = false;
    void visit_buffer_use(const BufferPtr& b) override {
      found = found || (b->scope == MemScope::Global && b->access != Access::Read);
    }
  } v;
  v.visit(s);
  return v.found;
}

bool reads_tensor(const std::set<const Buffer*>& reads) {
  for (const Buffer* b : reads)
    if (b->scope == MemScope::Global)
      return true;
  return false;
}

// Every load of `x` at indices other than exactly `vars`.
struct OffPointLoads : IRVisitor {
  const Buffer* x;
  const std::vector<VarPtr>* vars;
  bool found = false;
  void visit_Load(const Load* n) override {
    if (n->buffer.get() == x && !at_points(n->indices, *vars))
      found = true;
    IRVisitor::visit_Load(n);
  }
};

// Replaces loads of `x` (all at the loop's points, checked before) by `value`.
struct ReplaceLoads : IRMutator {
  const Buffer* x;
  Expr value;
  Expr mutate_Load(const Load* n, const Expr& self) override {
    if (n->buffer.get() == x)
      return value;
    return IRMutator::mutate_Load(n, self);
  }
};

// P1 of FuseParallel.h rule 1: its lets and its store, or nullopt.
struct Producer {
  std::vector<Stmt> lets;
  const Store* store = nullptr;
};
std::optional<Producer> as_producer(const Parallel* p) {
  Producer out;
  std::vector<Stmt> s = body_stmts(p->body);
  if (s.empty())
    return std::nullopt;
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    if (!s[i]->as<LetStmt>())
      return std::nullopt;
    out.lets.push_back(s[i]);
  }
  out.store = s.back()->as<Store>();
  if (!out.store || out.store->op != StoreOp::Assign ||
      out.store->buffer->scope != MemScope::Shared || !at_points(out.store->indices, p->vars))
    return std::nullopt;
  for (const auto& l : out.lets)
    if (mentions_buffer(l, out.store->buffer.get()))
      return std::nullopt;
  if (mentions_buffer(out.store->value, out.store->buffer.get()))
    return std::nullopt;
  return out;
}

// Uses of each buffer (loads, stores, regions, operands) in a statement; allocations are not
// uses.
struct BufferUses : IRVisitor {
  std::map<const Buffer*, int64_t> count;
  void visit_buffer_use(const BufferPtr& b) override { ++count[b.get()]; }
};
int64_t uses_of(const Stmt& s, const Buffer* x) {
  BufferUses u;
  u.visit(s);
  auto it = u.count.find(x);
  return it == u.count.end() ? 0 : it->second;
}

// Whether p's body ends with a store into x (P2 of rule 2 rewrites x in place).
bool rewrites(const Parallel* p, const Buffer* x) {
  std::vector<Stmt> s = body_stmts(p->body);
  auto* last = s.empty() ? nullptr : s.back()->as<Store>();
  return last && last->buffer.get() == x;
}

// Rule 2 and 3 for P2 against the producer's buffer x and what the producer reads. With
// `temporary` (x used by P1 and P2 only, in the whole kernel), P2 may read x without storing
// it: rule 2'.
bool is_consumer(const Parallel* p2, const Parallel* p1, const Buffer* x,
                 const std::set<const Buffer*>& p1_reads, bool temporary) {
  if (p2->vars.size() != p1->vars.size())
    return false;
  for (size_t d = 0; d < p1->extents.size(); ++d)
    if (!same_expr(p1->extents[d], p2->extents[d]))
      return false;
  std::vector<Stmt> s = body_stmts(p2->body);
  if (s.empty() || (reads_tensor(p1_reads) && mentions_written_tensor(p2->body)))
    return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i]->as<LetStmt>())
      continue;
    auto* st = s[i]->as<Store>();
    if (!st || p1_reads.count(st->buffer.get()))
      return false;
    if (st->buffer.get() == x && (i + 1 != s.size() || st->op != StoreOp::Assign))
      return false;
  }
  if (rewrites(p2, x) ? !at_points(s.back()->as<Store>()->indices, p2->vars)
                      : !(temporary && mentions_buffer(p2->body, x)))
    return false;
  OffPointLoads off;
  off.x = x;
  off.vars = &p2->vars;
  off.visit(p2->body);
  return !off.found;
}

struct Fuser : IRMutator {
  std::vector<std::string> notes;
  BufferUses kernel_uses;           // in the whole kernel body
  std::set<const Buffer*> dropped;  // temporaries no statement uses after their fusion

  Stmt mutate_Seq(const Seq* n, const Stmt& self) override {
    Stmt first = IRMutator::mutate_Seq(n, self);
    std::vector<Stmt> stmts = first->as<Seq>()->stmts;
    bool changed = first != self;
    for (size_t a = 0; a < stmts.size(); ++a) {
      auto* p1 = stmts[a]->as<Parallel>();
      if (!p1)
        continue;
      auto prod = as_producer(p1);
      if (!prod)
        continue;
      const Buffer* x = prod->store->buffer.get();
      LoadedBuffers reads;
      reads.visit(p1->body);
      const int64_t p1_uses = uses_of(stmts[a], x);
      for (size_t b = a + 1; b < stmts.size(); ++b) {
        auto* p2 = stmts[b]->as<Parallel>();
        const bool temporary = p2 && kernel_uses.count[x] == p1_uses + uses_of(stmts[b], x);
        if (p2 && is_consumer(p2, p1, x, reads.out, temporary)) {
          const bool in_place = rewrites(p2, x);
          notes.push_back("the parallel loop at line " + std::to_string(p1->loc.line) +
                          " (writing '" + prod->store->buffer->name + "') is fused into the one at line " +
                          std::to_string(p2->loc.line) +
                          (in_place ? ", which rewrites each of its elements"
                                    : ", its only reader: '" + prod->store->buffer->name +
                                          "' is not allocated") +
                          " (passes/FuseParallel)");
          if (!in_place)
            dropped.insert(x);
          stmts[b] = fuse(*p1, *prod, *p2);
          stmts.erase(stmts.begin() + static_cast<std::ptrdiff_t>(a));
          --a;
          changed = true;
          break;
        }
        // Rule 4: what lies between touches neither X nor what P1 reads.
        bool blocks = mentions_buffer(stmts[b], x) ||
                      (reads_tensor(reads.out) && mentions_written_tensor(stmts[b]));
        for (const Buffer* r : reads.out)
          blocks = blocks || mentions_buffer(stmts[b], r);
        if (blocks)
          break;
      }
    }
    return changed ? Seq::make(std::move(stmts), n->loc) : self;
  }

  Stmt fuse(const Parallel& p1, const Producer& prod, const Parallel& p2) {
    VarMap rename;
    for (size_t d = 0; d < p1.vars.size(); ++d)
      rename[p1.vars[d].get()] = VarRef::make(p2.vars[d], p2.loc);
    std::vector<Stmt> body;
    for (const auto& l : prod.lets)
      body.push_back(substitute(l, rename));
    const BufferPtr& x = prod.store->buffer;
    auto v = make_var("tg_" + x->name + "_v", VarKind::Let, x->dtype, prod.store->loc);
    body.push_back(LetStmt::make(v, substitute(prod.store->value, rename), prod.store->loc));
    ReplaceLoads r;
    r.x = x.get();
    r.value = VarRef::make(v, prod.store->loc);
    for (const auto& s : body_stmts(p2.body))
      body.push_back(r.mutate(s));
    return Parallel::make(p2.vars, p2.extents, Seq::make(std::move(body), p2.loc), p2.loc);
  }
};

} // namespace

// Removes the allocations of the buffers in `dead` (no statement uses them).
struct DropAllocs : IRMutator {
  const std::set<const Buffer*>* dead;
  Stmt mutate_Seq(const Seq* n, const Stmt& self) override {
    Stmt first = IRMutator::mutate_Seq(n, self);
    std::vector<Stmt> kept;
    bool changed = first != self;
    for (const auto& s : first->as<Seq>()->stmts) {
      if (auto* a = s->as<Alloc>(); a && dead->count(a->buffer.get())) {
        changed = true;
        continue;
      }
      kept.push_back(s);
    }
    return changed ? Seq::make(std::move(kept), n->loc) : self;
  }
};

Kernel fuse_parallels(const Kernel& k) {
  Fuser f;
  if (k.body)
    f.kernel_uses.visit(k.body);
  Kernel out = f.mutate_kernel(k);
  if (!f.dropped.empty()) {
    DropAllocs d;
    d.dead = &f.dropped;
    out = d.mutate_kernel(out);
  }
  out.notes.insert(out.notes.end(), f.notes.begin(), f.notes.end());
  return out;
}

} // namespace tilegen::passes
