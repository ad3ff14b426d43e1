#include "ir/IRMutator.h"

#include "support/InternalError.h"

namespace tilegen::ir {

Expr IRMutator::mutate(const Expr& e) {
  TG_ASSERT(e != nullptr, "IRMutator: null expression");
  switch (e->kind) {
#define TG_X(name)                                                                               \
  case ExprKind::name: return mutate_##name(static_cast<const name*>(e.get()), e);
    TILEGEN_EXPR_KINDS(TG_X)
#undef TG_X
  }
  internal_error("IRMutator: unknown expression kind");
}

Stmt IRMutator::mutate(const Stmt& s) {
  TG_ASSERT(s != nullptr, "IRMutator: null statement");
  switch (s->kind) {
#define TG_X(name)                                                                               \
  case StmtKind::name: return mutate_##name(static_cast<const name*>(s.get()), s);
    TILEGEN_STMT_KINDS(TG_X)
#undef TG_X
  }
  internal_error("IRMutator: unknown statement kind");
}

std::vector<Expr> IRMutator::mutate_all(const std::vector<Expr>& es, bool& changed) {
  std::vector<Expr> out;
  out.reserve(es.size());
  for (const auto& e : es) {
    out.push_back(mutate(e));
    changed |= out.back() != e;
  }
  return out;
}

BufferPtr IRMutator::mutate_buffer(const BufferPtr& b) {
  if (!b)
    return b;
  auto it = buffer_map_.find(b.get());
  if (it != buffer_map_.end())
    return it->second.second;
  BufferPtr nb = rewrite_buffer(b);
  buffer_map_.emplace(b.get(), std::make_pair(b, nb));
  return nb;
}

BufferPtr IRMutator::rewrite_buffer(const BufferPtr& b) {
  bool changed = false;
  auto shape = mutate_all(b->shape, changed);
  if (!changed)
    return b;
  auto nb = std::make_shared<Buffer>(*b); // keeps every other field (packed)
  nb->shape = std::move(shape);
  return nb;
}

Kernel IRMutator::mutate_kernel(const Kernel& k) {
  Kernel out = k;
  for (auto& t : out.tensors)
    t = mutate_buffer(t);
  for (auto& g : out.grid)
    g.extent = mutate(g.extent);
  if (out.threads)
    out.threads = mutate(out.threads);
  for (auto& r : out.requirements)
    r.pred = mutate(r.pred);
  if (out.body)
    out.body = mutate(out.body);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Expressions

Expr IRMutator::mutate_IntImm(const IntImm*, const Expr& self) { return self; }
Expr IRMutator::mutate_FloatImm(const FloatImm*, const Expr& self) { return self; }
Expr IRMutator::mutate_BoolImm(const BoolImm*, const Expr& self) { return self; }
Expr IRMutator::mutate_VarRef(const VarRef*, const Expr& self) { return self; }

Expr IRMutator::mutate_Load(const Load* n, const Expr& self) {
  bool changed = false;
  auto idx = mutate_all(n->indices, changed);
  BufferPtr b = mutate_buffer(n->buffer);
  if (!changed && b == n->buffer)
    return self;
  return Load::make(std::move(b), std::move(idx), n->loc);
}

Expr IRMutator::mutate_Unary(const Unary* n, const Expr& self) {
  Expr a = mutate(n->a);
  return a == n->a ? self : Unary::make(n->op, std::move(a), n->loc);
}

Expr IRMutator::mutate_Binary(const Binary* n, const Expr& self) {
  Expr a = mutate(n->a), b = mutate(n->b);
  if (a == n->a && b == n->b)
    return self;
  return Binary::make(n->op, std::move(a), std::move(b), n->loc);
}

Expr IRMutator::mutate_Select(const Select* n, const Expr& self) {
  Expr c = mutate(n->cond), t = mutate(n->t), f = mutate(n->f);
  if (c == n->cond && t == n->t && f == n->f)
    return self;
  return Select::make(std::move(c), std::move(t), std::move(f), n->loc);
}

Expr IRMutator::mutate_Call(const Call* n, const Expr& self) {
  bool changed = false;
  auto args = mutate_all(n->args, changed);
  return changed ? Call::make(n->fn, std::move(args), n->loc) : self;
}

Expr IRMutator::mutate_Cast(const Cast* n, const Expr& self) {
  Expr v = mutate(n->value);
  return v == n->value ? self : Cast::make(n->type, std::move(v), n->loc);
}

// ---------------------------------------------------------------------------------------------
// Statements

Region IRMutator::mutate_region(const Region& r) {
  bool changed = false;
  Region out;
  out.buffer = mutate_buffer(r.buffer);
  out.offsets = mutate_all(r.offsets, changed);
  out.extents = mutate_all(r.extents, changed);
  return out;
}

namespace {
bool same_region(const Region& a, const Region& b) {
  return a.buffer == b.buffer && a.offsets == b.offsets && a.extents == b.extents;
}
} // namespace

Stmt IRMutator::mutate_Seq(const Seq* n, const Stmt& self) {
  bool changed = false;
  std::vector<Stmt> out;
  out.reserve(n->stmts.size());
  for (const auto& s : n->stmts) {
    out.push_back(mutate(s));
    changed |= out.back() != s;
  }
  return changed ? Seq::make(std::move(out), n->loc) : self;
}

Stmt IRMutator::mutate_Alloc(const Alloc* n, const Stmt& self) {
  BufferPtr b = mutate_buffer(n->buffer);
  return b == n->buffer ? self : Alloc::make(std::move(b), n->loc);
}

Stmt IRMutator::mutate_Fill(const Fill* n, const Stmt& self) {
  BufferPtr d = mutate_buffer(n->dst);
  Expr v = mutate(n->value);
  if (d == n->dst && v == n->value)
    return self;
  return Fill::make(std::move(d), std::move(v), n->loc);
}

Stmt IRMutator::mutate_Copy(const Copy* n, const Stmt& self) {
  Region s = mutate_region(n->src), d = mutate_region(n->dst);
  Expr p = mutate(n->pad);
  if (same_region(s, n->src) && same_region(d, n->dst) && p == n->pad)
    return self;
  return Copy::make(std::move(s), std::move(d), std::move(p), n->loc);
}

Stmt IRMutator::mutate_Gemm(const Gemm* n, const Stmt& self) {
  BufferPtr a = mutate_buffer(n->a), b = mutate_buffer(n->b), c = mutate_buffer(n->c);
  if (a == n->a && b == n->b && c == n->c)
    return self;
  return Gemm::make(std::move(a), std::move(b), std::move(c), n->transpose_a, n->transpose_b,
                    n->clear, n->loc, n->fast_accum);
}

Stmt IRMutator::mutate_Reduce(const Reduce* n, const Stmt& self) {
  BufferPtr s = mutate_buffer(n->src), d = mutate_buffer(n->dst);
  if (s == n->src && d == n->dst)
    return self;
  return Reduce::make(n->op, std::move(s), std::move(d), n->dim, n->clear, n->loc);
}

Stmt IRMutator::mutate_Parallel(const Parallel* n, const Stmt& self) {
  bool changed = false;
  auto ext = mutate_all(n->extents, changed);
  Stmt body = mutate(n->body);
  if (!changed && body == n->body)
    return self;
  return Parallel::make(n->vars, std::move(ext), std::move(body), n->loc);
}

Stmt IRMutator::mutate_Store(const Store* n, const Stmt& self) {
  bool changed = false;
  auto idx = mutate_all(n->indices, changed);
  BufferPtr b = mutate_buffer(n->buffer);
  Expr v = mutate(n->value);
  if (!changed && b == n->buffer && v == n->value)
    return self;
  return Store::make(std::move(b), std::move(idx), std::move(v), n->op, n->loc);
}

Stmt IRMutator::mutate_LetStmt(const LetStmt* n, const Stmt& self) {
  Expr v = mutate(n->value);
  return v == n->value ? self : LetStmt::make(n->var, std::move(v), n->loc);
}

Stmt IRMutator::mutate_For(const For* n, const Stmt& self) {
  Expr s = mutate(n->start), e = mutate(n->extent);
  Expr st = n->stages ? mutate(n->stages) : nullptr;
  Stmt body = mutate(n->body);
  if (s == n->start && e == n->extent && st == n->stages && body == n->body)
    return self;
  return For::make(n->var, std::move(s), std::move(e), std::move(st), std::move(body), n->loc);
}

Stmt IRMutator::mutate_IfThenElse(const IfThenElse* n, const Stmt& self) {
  Expr c = mutate(n->cond);
  Stmt t = mutate(n->then_case);
  Stmt e = n->else_case ? mutate(n->else_case) : nullptr;
  if (c == n->cond && t == n->then_case && e == n->else_case)
    return self;
  return IfThenElse::make(std::move(c), std::move(t), std::move(e), n->loc);
}

Stmt IRMutator::mutate_AtomicAdd(const AtomicAdd* n, const Stmt& self) {
  Region s = mutate_region(n->src), d = mutate_region(n->dst);
  if (same_region(s, n->src) && same_region(d, n->dst))
    return self;
  return AtomicAdd::make(std::move(s), std::move(d), n->loc);
}

Stmt IRMutator::mutate_Combine(const Combine* n, const Stmt& self) {
  bool changed = false;
  std::vector<Combine::Carry> carry;
  for (const auto& c : n->carry) {
    carry.push_back({mutate_buffer(c.state), mutate_buffer(c.peer)});
    changed = changed || carry.back().state != c.state || carry.back().peer != c.peer;
  }
  Stmt body = mutate(n->body);
  if (!changed && body == n->body)
    return self;
  return Combine::make(std::move(carry), std::move(body), n->loc);
}

} // namespace tilegen::ir
