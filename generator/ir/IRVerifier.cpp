#include "ir/IRVerifier.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"

#include <set>

namespace tilegen::ir {

namespace {

std::optional<int64_t> const_of(const Expr& e) {
  if (auto i = e->as<IntImm>())
    return i->value;
  return std::nullopt;
}

class Verifier : public IRVisitor {
public:
  Verifier(const Kernel& k, const VerifyOptions& o) : k_(k), opts_(o) {}

  std::vector<std::string> run() {
    for (const auto& d : k_.dims)
      vars_.insert(d.var.get());
    for (const auto& f : k_.flags)
      vars_.insert(f.get());
    for (const auto& s : k_.scalars)
      vars_.insert(s.get());
    for (const auto& t : k_.tile_consts)
      vars_.insert(t.var.get());
    for (const auto& t : k_.tensors) {
      if (t->scope != MemScope::Global)
        error("tensor '" + t->name + "' is not global");
      buffers_.insert(t.get());
      where_ = "shape of tensor '" + t->name + "'";
      for (const auto& e : t->shape)
        visit(e);
    }
    for (const auto& r : k_.requirements) {
      where_ = "requirement";
      visit(r.pred);
    }
    for (const auto& g : k_.grid) {
      if (g.index->kind != VarKind::BlockIndex)
        error("grid index '" + g.index->name + "' is not a block index");
      where_ = "grid extent";
      visit(g.extent);
    }
    if (k_.threads) {
      where_ = "threads";
      visit(k_.threads);
    }
    for (const auto& g : k_.grid)
      vars_.insert(g.index.get());
    where_.clear();
    if (!k_.body)
      error("kernel has no body");
    else
      visit(k_.body);
    return errors_;
  }

protected:
  void visit_VarRef(const VarRef* n) override {
    const Var* v = n->var.get();
    if (!vars_.count(v))
      error("'" + v->name + "' (" + var_kind_name(v->kind) + ") used out of scope");
    if (opts_.instantiated && (v->kind == VarKind::Flag || v->kind == VarKind::ValueParam ||
                               v->kind == VarKind::TileConst))
      error("'" + v->name + "' (" + var_kind_name(v->kind) + ") still referenced after instantiation");
    if (n->type != v->type)
      error("reference to '" + v->name + "' has the wrong type");
  }

  void visit_Load(const Load* n) override {
    check_buffer(n->buffer, "load");
    IRVisitor::visit_Load(n);
  }

  void visit_Binary(const Binary* n) override {
    if (n->a->type != n->b->type)
      error("operands of '" + std::string(binary_op_name(n->op)) + "' have different types");
    IRVisitor::visit_Binary(n);
  }

  void visit_region(const Region& r) override {
    check_buffer(r.buffer, "region");
    if (r.offsets.size() != r.buffer->rank())
      error("region of '" + r.buffer->name + "' has " + std::to_string(r.offsets.size()) +
            " offsets for rank " + std::to_string(r.buffer->rank()));
    if (r.extents.empty() || r.extents.size() > r.buffer->rank())
      error("region of '" + r.buffer->name + "' has a bad tile rank");
    if (opts_.instantiated && r.buffer->scope != MemScope::Global &&
        r.extents.size() <= r.buffer->rank() && r.offsets.size() == r.buffer->rank()) {
      size_t lead = r.buffer->rank() - r.extents.size();
      for (size_t i = 0; i < r.extents.size(); ++i) {
        auto e = const_of(r.extents[i]);
        auto dim = const_of(r.buffer->shape[lead + i]);
        auto off = const_of(r.offsets[lead + i]);
        if (!e || *e <= 0)
          error("region of on-chip '" + r.buffer->name + "' has a non-constant extent " +
                to_string(r.extents[i]));
        else if (dim && off && (*off < 0 || *off + *e > *dim))
          error("region of '" + r.buffer->name + "' exceeds its shape in dim " +
                std::to_string(lead + i));
      }
    }
    IRVisitor::visit_region(r);
  }

  void visit_Seq(const Seq* n) override {
    // A combine joins the pipelined loop just before it.
    for (size_t i = 0; i < n->stmts.size(); ++i)
      if (n->stmts[i]->kind == StmtKind::Combine) {
        const For* f = i > 0 ? n->stmts[i - 1]->as<For>() : nullptr;
        if (!f || !f->pipelined())
          error("combine does not follow a pipelined loop");
      }
    // Allocs and Lets scope over the rest of this Seq only.
    auto saved_vars = vars_;
    auto saved_bufs = buffers_;
    IRVisitor::visit_Seq(n);
    vars_ = std::move(saved_vars);
    buffers_ = std::move(saved_bufs);
  }

  void visit_Alloc(const Alloc* n) override {
    const auto& b = n->buffer;
    if (b->scope == MemScope::Global)
      error("Alloc of global '" + b->name + "'");
    if (!allocated_.insert(b.get()).second)
      error("buffer '" + b->name + "' is allocated twice");
    if (opts_.instantiated)
      for (const auto& e : b->shape)
        if (auto c = const_of(e); !c || *c <= 0)
          error("on-chip buffer '" + b->name + "' has a non-constant or non-positive extent " +
                to_string(e));
    IRVisitor::visit_Alloc(n);
    buffers_.insert(b.get());
  }

  void visit_Fill(const Fill* n) override {
    check_buffer(n->dst, "fill");
    IRVisitor::visit_Fill(n);
  }

  void visit_Copy(const Copy* n) override {
    if (n->src.extents.size() != n->dst.extents.size())
      error("copy between tiles of different rank");
    else
      for (size_t i = 0; i < n->src.extents.size(); ++i) {
        auto a = const_of(n->src.extents[i]), b = const_of(n->dst.extents[i]);
        if (a && b && *a != *b)
          error("copy tile extents differ in dim " + std::to_string(i) + ": " +
                std::to_string(*a) + " vs " + std::to_string(*b));
      }
    if (n->pad->type.is_bool())
      error("copy pad is bool");
    IRVisitor::visit_Copy(n);
  }

  void visit_Gemm(const Gemm* n) override {
    check_buffer(n->a, "gemm");
    check_buffer(n->b, "gemm");
    check_buffer(n->c, "gemm");
    auto dim = [](const BufferPtr& b, int i) { return const_of(b->shape[i]); };
    auto m = dim(n->c, 0), nn = dim(n->c, 1);
    auto am = dim(n->a, n->transpose_a ? 1 : 0), ak = dim(n->a, n->transpose_a ? 0 : 1);
    auto bk = dim(n->b, n->transpose_b ? 1 : 0), bn = dim(n->b, n->transpose_b ? 0 : 1);
    if ((m && am && *m != *am) || (nn && bn && *nn != *bn) || (ak && bk && *ak != *bk))
      error("gemm shapes do not agree: c " + to_string_shape(n->c) + ", a " +
            to_string_shape(n->a) + ", b " + to_string_shape(n->b));
  }

  void visit_Reduce(const Reduce* n) override {
    check_buffer(n->src, "reduce");
    check_buffer(n->dst, "reduce");
    for (size_t i = 0, j = 0; i < n->src->rank(); ++i) {
      if (static_cast<int>(i) == n->dim)
        continue;
      auto a = const_of(n->src->shape[i]), b = const_of(n->dst->shape[j++]);
      if (a && b && *a != *b)
        error("reduce '" + n->src->name + "' -> '" + n->dst->name + "': shapes do not agree");
    }
  }

  void visit_Parallel(const Parallel* n) override {
    for (const auto& e : n->extents)
      visit(e);
    check_parallel_body(n->body);
    auto saved = vars_;
    for (const auto& v : n->vars)
      vars_.insert(v.get());
    visit(n->body);
    vars_ = std::move(saved);
  }

  void visit_Store(const Store* n) override {
    check_buffer(n->buffer, "store");
    if (peers_.count(n->buffer.get()))
      error("store into combine peer '" + n->buffer->name + "' (peers are read only)");
    IRVisitor::visit_Store(n);
  }

  void visit_LetStmt(const LetStmt* n) override {
    IRVisitor::visit_LetStmt(n);
    vars_.insert(n->var.get()); // visible to the rest of the enclosing Seq
  }

  void visit_For(const For* n) override {
    visit(n->start);
    visit(n->extent);
    if (n->stages) {
      visit(n->stages);
      if (opts_.instantiated && !const_of(n->stages))
        error("pipelined loop '" + n->var->name + "' has non-constant stages");
    }
    auto saved = vars_;
    vars_.insert(n->var.get());
    visit(n->body);
    vars_ = std::move(saved);
  }

  void visit_AtomicAdd(const AtomicAdd* n) override {
    DType t = n->dst.buffer->dtype;
    if (t != DType::f32() && t != DType::i32() && t != DType::f64() && t != DType::i64())
      error(std::string("atomic_add into a ") + t.name() + " tensor");
    IRVisitor::visit_AtomicAdd(n);
  }

  void visit_Combine(const Combine* n) override {
    for (const auto& c : n->carry) {
      check_buffer(c.state, "combine");
      if (c.state->scope != MemScope::Fragment || c.peer->scope != MemScope::Fragment)
        error("combine carries '" + c.state->name + "' into '" + c.peer->name +
              "': both must be fragments");
      if (c.state->dtype != c.peer->dtype || to_string_shape(c.state) != to_string_shape(c.peer))
        error("combine pairs '" + c.state->name + "' " + to_string_shape(c.state) + " with '" +
              c.peer->name + "' " + to_string_shape(c.peer) + " (same dtype and shape needed)");
      if (buffers_.count(c.peer.get()) || allocated_.count(c.peer.get()))
        error("combine peer '" + c.peer->name + "' is declared elsewhere");
    }
    auto saved = buffers_;
    for (const auto& c : n->carry) {
      buffers_.insert(c.peer.get());
      peers_.insert(c.peer.get());
    }
    visit(n->body);
    buffers_ = std::move(saved);
  }

private:
  static std::string to_string_shape(const BufferPtr& b) {
    std::string s = "[";
    for (size_t i = 0; i < b->shape.size(); ++i)
      s += (i ? ", " : "") + to_string(b->shape[i]);
    return s + "]";
  }

  void check_parallel_body(const Stmt& s) {
    switch (s->kind) {
    case StmtKind::Seq:
      for (const auto& c : s->as<Seq>()->stmts)
        check_parallel_body(c);
      return;
    case StmtKind::IfThenElse: {
      auto i = s->as<IfThenElse>();
      check_parallel_body(i->then_case);
      if (i->else_case)
        check_parallel_body(i->else_case);
      return;
    }
    case StmtKind::Store:
    case StmtKind::LetStmt: return;
    default:
      error(std::string("parallel body holds a ") + stmt_kind_name(s->kind) + " statement");
    }
  }

  void check_buffer(const BufferPtr& b, const char* what) {
    if (!buffers_.count(b.get()))
      error(std::string(what) + " uses buffer '" + b->name + "' that is not declared in scope");
  }

  void error(const std::string& msg) {
    errors_.push_back(where_.empty() ? msg : where_ + ": " + msg);
  }

  const Kernel& k_;
  const VerifyOptions& opts_;
  std::set<const Var*> vars_;       // membership only, never iterated
  std::set<const Buffer*> buffers_; // membership only
  std::set<const Buffer*> allocated_;
  std::set<const Buffer*> peers_; // combine peers: read only
  std::string where_;
  std::vector<std::string> errors_;
};

} // namespace

std::vector<std::string> verify(const Kernel& k, const VerifyOptions& opts) {
  return Verifier(k, opts).run();
}

} // namespace tilegen::ir
