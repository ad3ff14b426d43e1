#include "ir/IRVisitor.h"

#include "support/InternalError.h"

namespace tilegen::ir {

void IRVisitor::visit(const Expr& e) {
  TG_ASSERT(e != nullptr, "IRVisitor: null expression");
  switch (e->kind) {
#define TG_X(name)                                                                               \
  case ExprKind::name: visit_##name(static_cast<const name*>(e.get())); return;
    TILEGEN_EXPR_KINDS(TG_X)
#undef TG_X
  }
}

void IRVisitor::visit(const Stmt& s) {
  TG_ASSERT(s != nullptr, "IRVisitor: null statement");
  switch (s->kind) {
#define TG_X(name)                                                                               \
  case StmtKind::name: visit_##name(static_cast<const name*>(s.get())); return;
    TILEGEN_STMT_KINDS(TG_X)
#undef TG_X
  }
}

void IRVisitor::visit_kernel(const Kernel& k) {
  for (const auto& t : k.tensors)
    for (const auto& e : t->shape)
      visit(e);
  for (const auto& g : k.grid)
    visit(g.extent);
  if (k.threads)
    visit(k.threads);
  if (k.body)
    visit(k.body);
}

void IRVisitor::visit_IntImm(const IntImm*) {}
void IRVisitor::visit_FloatImm(const FloatImm*) {}
void IRVisitor::visit_BoolImm(const BoolImm*) {}
void IRVisitor::visit_VarRef(const VarRef*) {}
void IRVisitor::visit_Load(const Load* n) {
  visit_buffer_use(n->buffer);
  for (const auto& i : n->indices)
    visit(i);
}
void IRVisitor::visit_Unary(const Unary* n) { visit(n->a); }
void IRVisitor::visit_Binary(const Binary* n) {
  visit(n->a);
  visit(n->b);
}
void IRVisitor::visit_Select(const Select* n) {
  visit(n->cond);
  visit(n->t);
  visit(n->f);
}
void IRVisitor::visit_Call(const Call* n) {
  for (const auto& a : n->args)
    visit(a);
}
void IRVisitor::visit_Cast(const Cast* n) { visit(n->value); }

void IRVisitor::visit_region(const Region& r) {
  visit_buffer_use(r.buffer);
  for (const auto& e : r.offsets)
    visit(e);
  for (const auto& e : r.extents)
    visit(e);
}

void IRVisitor::visit_Seq(const Seq* n) {
  for (const auto& s : n->stmts)
    visit(s);
}
void IRVisitor::visit_Alloc(const Alloc* n) {
  for (const auto& e : n->buffer->shape)
    visit(e);
}
void IRVisitor::visit_Fill(const Fill* n) {
  visit_buffer_use(n->dst);
  visit(n->value);
}
void IRVisitor::visit_Copy(const Copy* n) {
  visit_region(n->src);
  visit_region(n->dst);
  visit(n->pad);
}
void IRVisitor::visit_Gemm(const Gemm* n) {
  visit_buffer_use(n->a);
  visit_buffer_use(n->b);
  visit_buffer_use(n->c);
}
void IRVisitor::visit_Reduce(const Reduce* n) {
  visit_buffer_use(n->src);
  visit_buffer_use(n->dst);
}
void IRVisitor::visit_Parallel(const Parallel* n) {
  for (const auto& e : n->extents)
    visit(e);
  visit(n->body);
}
void IRVisitor::visit_Store(const Store* n) {
  visit_buffer_use(n->buffer);
  for (const auto& i : n->indices)
    visit(i);
  visit(n->value);
}
void IRVisitor::visit_LetStmt(const LetStmt* n) { visit(n->value); }
void IRVisitor::visit_For(const For* n) {
  visit(n->start);
  visit(n->extent);
  if (n->stages)
    visit(n->stages);
  visit(n->body);
}
void IRVisitor::visit_IfThenElse(const IfThenElse* n) {
  visit(n->cond);
  visit(n->then_case);
  if (n->else_case)
    visit(n->else_case);
}
void IRVisitor::visit_AtomicAdd(const AtomicAdd* n) {
  visit_region(n->src);
  visit_region(n->dst);
}
void IRVisitor::visit_Combine(const Combine* n) {
  for (const auto& c : n->carry) {
    visit_buffer_use(c.state);
    visit_buffer_use(c.peer);
  }
  visit(n->body);
}

namespace {
struct BufferFinder : IRVisitor {
  const Buffer* b = nullptr;
  bool found = false;

protected:
  void visit_buffer_use(const BufferPtr& u) override { found = found || u.get() == b; }
};

struct StoreFinder : IRVisitor {
  const Buffer* b = nullptr;
  const Store* found = nullptr;

protected:
  void visit_Store(const Store* n) override {
    if (!found && n->buffer.get() == b)
      found = n;
    IRVisitor::visit_Store(n);
  }
};
} // namespace

void ParallelBodyWalker::walk(const Stmt& s) {
  if (!s)
    return;
  if (auto* q = s->as<Seq>()) {
    for (const auto& c : q->stmts)
      walk(c);
  } else if (auto* l = s->as<LetStmt>()) {
    visit(l->value);
    lets[l->var.get()] = substitute(l->value, lets);
  } else if (auto* st = s->as<Store>()) {
    for (const auto& i : st->indices)
      visit(i);
    visit(st->value);
  } else if (auto* i = s->as<IfThenElse>()) {
    before_if(i);
    visit(i->cond);
    walk(i->then_case);
    walk(i->else_case);
  }
}

bool mentions_buffer(const Stmt& s, const Buffer* b) {
  BufferFinder f;
  f.b = b;
  f.visit(s);
  return f.found;
}
bool mentions_buffer(const Expr& e, const Buffer* b) {
  BufferFinder f;
  f.b = b;
  f.visit(e);
  return f.found;
}
std::set<const Var*> vars_of(const Expr& e) {
  struct Vars : IRVisitor {
    std::set<const Var*> vars;
    void visit_VarRef(const VarRef* n) override { vars.insert(n->var.get()); }
  } v;
  v.visit(e);
  return v.vars;
}
namespace {
struct VarFinder : IRVisitor {
  const Var* v = nullptr;
  bool found = false;
  void visit_VarRef(const VarRef* n) override { found |= n->var.get() == v; }
};
} // namespace
bool mentions_var(const Stmt& s, const Var* v) {
  VarFinder f;
  f.v = v;
  f.visit(s);
  return f.found;
}
bool mentions_var(const Expr& e, const Var* v) {
  VarFinder f;
  f.v = v;
  f.visit(e);
  return f.found;
}
const Store* first_store(const Stmt& s, const Buffer* b) {
  StoreFinder f;
  f.b = b;
  f.visit(s);
  return f.found;
}

} // namespace tilegen::ir
