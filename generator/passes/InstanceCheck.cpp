#include "passes/InstanceCheck.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"
#include "passes/RangeAnalysis.h"
#include "passes/RedundantLoadElim.h"

#include <map>
#include <optional>
#include <set>

namespace tilegen::passes {

using namespace ir;

namespace {

std::optional<int64_t> const_of(const Expr& e) {
  if (auto* i = e->as<IntImm>())
    return i->value;
  return std::nullopt;
}

std::string shape_str(const std::vector<Expr>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + to_string(shape[i]);
  return s + "]";
}

bool on_chip(const Buffer& b) { return b.scope != MemScope::Global; }

// The accesses of one parallel body to the buffers it writes, with the body's lets replaced by
// their values (so `let k = j` then `x[i, k]` is the element x[i, j]).
class PointAccesses : public IRVisitor {
public:
  struct Access {
    std::vector<Expr> indices; // simplified, lets substituted
    std::string index;         // "[i, j]", for the messages
    bool store = false, accumulate = false;
    SourceLoc loc;
    std::set<const Var*> vars; // variables of the index
  };
  std::map<const Buffer*, std::vector<Access>> by_buffer;
  std::vector<const Buffer*> order; // buffers in the order of their first access

protected:
  void visit_LetStmt(const LetStmt* l) override {
    IRVisitor::visit_LetStmt(l);
    lets_[l->var.get()] = substitute(l->value, lets_);
  }
  void visit_Store(const Store* s) override {
    IRVisitor::visit_Store(s);
    add(s->buffer.get(), s->indices, true, s->op == StoreOp::Add, s->loc);
  }
  void visit_Load(const Load* l) override {
    IRVisitor::visit_Load(l);
    add(l->buffer.get(), l->indices, false, false, l->loc);
  }

private:
  class Vars : public IRVisitor {
  public:
    std::set<const Var*> vars;

  protected:
    void visit_VarRef(const VarRef* r) override { vars.insert(r->var.get()); }
  };
  void add(const Buffer* b, const std::vector<Expr>& idx, bool store, bool acc, const SourceLoc& loc) {
    Access a;
    a.store = store, a.accumulate = acc, a.loc = loc;
    Vars v;
    a.index.push_back('[');
    for (size_t i = 0; i < idx.size(); ++i) {
      Expr e = simplify(substitute(idx[i], lets_));
      a.indices.push_back(e);
      if (i)
        a.index += ", ";
      a.index += to_string(e);
      v.visit(e);
    }
    a.index += "]";
    a.vars = std::move(v.vars);
    if (!by_buffer.count(b))
      order.push_back(b);
    by_buffer[b].push_back(std::move(a));
  }
  VarMap lets_;
};

class Checker : public IRVisitor {
public:
  Checker(const Kernel& k, const std::string& config, DiagEngine& diag)
      : ranges_(body_ranges(k)), diag_(diag),
        fixed_(config.empty() ? std::string(" once the instance is fixed")
                              : " once the schedule is fixed (" + config + ")") {}

  bool ok() const { return ok_; }

protected:
  void visit_Copy(const Copy* c) override {
    at_ = c->loc;
    uniform_use_ = "in a start index of a copy";
    const Buffer &s = *c->src.buffer, &d = *c->dst.buffer;
    if (on_chip(s) && on_chip(d) && whole(c->src) && whole(c->dst) &&
        shape_str(s.shape) != shape_str(d.shape)) {
      error("'copy' between tiles of different shapes" + fixed_ + ": '" + s.name + "' is " +
            shape_str(s.shape) + ", '" + d.name + "' is " + shape_str(d.shape));
      return;
    }
    region_fits(c->src, "copy");
    region_fits(c->dst, "copy");
    IRVisitor::visit_Copy(c);
  }

  void visit_AtomicAdd(const AtomicAdd* a) override {
    at_ = a->loc;
    uniform_use_ = "in a start index of an atomic_add";
    region_fits(a->src, "atomic_add");
    IRVisitor::visit_AtomicAdd(a);
  }

  void visit_Gemm(const Gemm* g) override {
    at_ = g->loc;
    auto dim = [](const BufferPtr& b, int i) { return const_of(b->shape[i]); };
    auto am = dim(g->a, g->transpose_a ? 1 : 0), ak = dim(g->a, g->transpose_a ? 0 : 1);
    auto bk = dim(g->b, g->transpose_b ? 1 : 0), bn = dim(g->b, g->transpose_b ? 0 : 1);
    auto cm = dim(g->c, 0), cn = dim(g->c, 1);
    const char* which = nullptr;
    int64_t x = 0, y = 0;
    const char *xs = "", *ys = "";
    if (ak && bk && *ak != *bk)
      which = "K", x = *ak, y = *bk, xs = "a", ys = "b";
    else if (am && cm && *am != *cm)
      which = "M", x = *am, y = *cm, xs = "a", ys = "c";
    else if (bn && cn && *bn != *cn)
      which = "N", x = *bn, y = *cn, xs = "b", ys = "c";
    if (which)
      error(std::string("gemm shape mismatch") + fixed_ + ": " + which + " is " +
            std::to_string(x) + " in '" + xs + "' but " + std::to_string(y) + " in '" + ys +
            "' (a: '" + g->a->name + "' " + shape_str(g->a->shape) +
            (g->transpose_a ? " transposed" : "") + ", b: '" + g->b->name + "' " +
            shape_str(g->b->shape) + (g->transpose_b ? " transposed" : "") + ", c: '" +
            g->c->name + "' " + shape_str(g->c->shape) + ")");
  }

  void visit_Reduce(const Reduce* r) override {
    at_ = r->loc;
    std::vector<Expr> want = r->src->shape;
    want.erase(want.begin() + r->dim);
    if (shape_str(want) != shape_str(r->dst->shape))
      error("reduce destination '" + r->dst->name + "' has shape " + shape_str(r->dst->shape) +
            "; expected " + shape_str(want) + " ('" + r->src->name + "' without dim " +
            std::to_string(r->dim) + ")" + fixed_);
  }

  void visit_Store(const Store* s) override {
    at_ = s->loc.known() ? s->loc : at_;
    indices_fit(*s->buffer, s->indices, "store into");
    IRVisitor::visit_Store(s);
  }

  void visit_Load(const Load* l) override {
    at_ = l->loc.known() ? l->loc : at_;
    if (parallel_depth_ == 0 && l->buffer->scope == MemScope::Fragment &&
        fragment_reads_.insert(l->buffer.get()).second) {
      // The GPU targets spread a fragment's elements over the block's threads (docs/spec.md
      // "shared, fragment, local"): a uniform value cannot come from one of them.
      error("fragment '" + l->buffer->name + "' is read outside a 'parallel' (" + uniform_use_ +
            "): its elements are spread over the block's threads, and only a 'parallel' over "
            "it reads them. Declare it 'shared' instead (or copy it into a shared buffer) "
            "and read that");
    }
    indices_fit(*l->buffer, l->indices, "read of");
    IRVisitor::visit_Load(l);
  }

  void visit_Parallel(const Parallel* p) override {
    at_ = p->loc;
    ++parallel_depth_;
    IRVisitor::visit_Parallel(p);
    --parallel_depth_;
    points_independent(p);
  }

  void visit_For(const For* f) override {
    at_ = f->loc;
    uniform_use_ = "in a loop's start or extent";
    visit(f->start);
    visit(f->extent);
    if (f->stages)
      visit(f->stages);
    visit(f->body);
  }

  void visit_LetStmt(const LetStmt* l) override {
    at_ = l->loc.known() ? l->loc : at_;
    uniform_use_ = "in a 'let' outside every parallel";
    IRVisitor::visit_LetStmt(l);
  }

private:
  static bool whole(const Region& r) {
    if (r.extents.size() != r.buffer->rank())
      return false;
    for (size_t i = 0; i < r.extents.size(); ++i)
      if (!is_zero(r.offsets[i]) || to_string(r.extents[i]) != to_string(r.buffer->shape[i]))
        return false;
    return true;
  }
  static bool is_zero(const Expr& e) {
    auto c = const_of(e);
    return c && *c == 0;
  }

  // The tile of an on-chip region lies inside its buffer.
  void region_fits(const Region& r, const char* op) {
    const Buffer& b = *r.buffer;
    if (!on_chip(b) || r.extents.size() > b.rank() || r.offsets.size() != b.rank())
      return;
    const size_t lead = b.rank() - r.extents.size();
    for (size_t d = 0; d < b.rank(); ++d) {
      const int64_t tile = d < lead ? 1 : const_of(r.extents[d - lead]).value_or(1);
      auto dim = const_of(b.shape[d]);
      if (!dim)
        continue;
      Interval at = bounds_of(r.offsets[d], ranges_);
      if (at.lo && at.hi && *at.lo >= 0 && *at.hi <= *dim - tile)
        continue;
      error(std::string("the tile of '") + op + "' does not fit '" + b.name + "' " +
            shape_str(b.shape) + fixed_ + ": along dim " + std::to_string(d) + " it starts at " +
            to_string(r.offsets[d]) + " (" + at.str() + ") and spans " + std::to_string(tile) +
            (tile == 1 ? " element" : " elements") +
            "; on-chip buffers have no bounds checks, so the start must stay in [0, " +
            std::to_string(*dim - tile) + "]");
      return;
    }
  }

  void indices_fit(const Buffer& b, const std::vector<Expr>& idx, const char* what) {
    if (!on_chip(b) || idx.size() != b.rank())
      return;
    for (size_t d = 0; d < idx.size(); ++d) {
      auto dim = const_of(b.shape[d]);
      if (!dim)
        continue;
      Interval at = bounds_of(idx[d], ranges_);
      if (at.lo && at.hi && *at.lo >= 0 && *at.hi < *dim)
        continue;
      error(std::string(what) + " '" + b.name + "' " + shape_str(b.shape) + fixed_ +
            ": index " + std::to_string(d) + " (" + to_string(idx[d]) + ") ranges over " +
            at.str() + ", outside [0, " + std::to_string(*dim - 1) +
            "]; on-chip buffers have no bounds checks: keep the index within the extent (a "
            "parallel extent equal to it, or a guard such as min(...))");
      return;
    }
  }

  // docs/spec.md#parallel: points run in any order or at once, so a point may read only the
  // element of a written buffer that it writes itself, and elements that several points write
  // (an index without one of the loop's variables) are written, never read or accumulated.
  // A buffer written at two different indices, or read at another index than it is written,
  // would give each backend (and each run on a GPU) its own result. `local` buffers are each
  // thread's own scratch and run their points in order: they are exempt.
  void points_independent(const Parallel* p) {
    PointAccesses acc;
    acc.visit(p->body);
    std::string vars;
    for (size_t i = 0; i < p->vars.size(); ++i)
      vars += (i ? ", " : "") + p->vars[i]->name;
    for (const Buffer* b : acc.order) {
      if (b->scope == MemScope::Local)
        continue;
      const auto& list = acc.by_buffer.at(b);
      const PointAccesses::Access* first = nullptr;
      for (const auto& a : list)
        if (a.store && !first)
          first = &a;
      if (!first)
        continue;
      auto same_element = [&](const PointAccesses::Access& a) {
        if (a.indices.size() != first->indices.size())
          return false;
        for (size_t d = 0; d < a.indices.size(); ++d)
          if (!same_expr(a.indices[d], first->indices[d]))
            return false;
        return true;
      };
      for (const auto& a : list) {
        if (same_element(a))
          continue;
        at_ = a.loc.known() ? a.loc : p->loc;
        if (a.store) { // one point, two elements: which other point touches them is not known
          std::string decl;
          for (size_t i = 0; i < p->vars.size(); ++i) {
            auto ext = const_of(p->extents[i]);
            decl += p->vars[i]->name + (ext ? ": " + std::to_string(*ext) : std::string()) + ", ";
          }
          error(std::string("the points of this parallel (") + vars + ") are independent, and each "
                "writes one element of a buffer: this store into '" + b->name + a.index +
                "' is a second element of '" + b->name + "' (the point also writes '" + b->name +
                first->index + "' at line " + std::to_string(first->loc.line) +
                "). Give each element its own point (another parallel variable: {" + decl +
                "h: 2} and one store at an index that uses h), or write into another buffer");
          return;
        }
        error(std::string("the points of this parallel (") + vars + ") are independent: a " +
              (a.store ? "store into" : "read of") + " '" + b->name + a.index + "' touches an element that another point writes ('" +
              b->name + first->index + "' at line " + std::to_string(first->loc.line) +
              "); a point may read and write only its own element of a buffer it writes. Write the "
              "result into another buffer (a second parallel reads it), or use one index for "
              "every access to '" + b->name + "'");
        return;
      }
      bool read_back = false;
      for (const auto& a : list)
        read_back = read_back || !a.store || a.accumulate;
      if (!read_back)
        continue;
      for (size_t v = 0; v < p->vars.size(); ++v) {
        auto ext = const_of(p->extents[v]);
        if (first->vars.count(p->vars[v].get()) || (ext && *ext <= 1))
          continue;
        at_ = first->loc.known() ? first->loc : p->loc;
        error("the points of this parallel (" + vars + ") are independent, but every value of '" +
              p->vars[v]->name + "' writes the same element '" + b->name + first->index +
              "', which the body also reads" + (first->accumulate ? " (`+=`)" : "") +
              ": the result would depend on the order of the points. Index '" + b->name +
              "' by '" + p->vars[v]->name + "' too, or reduce over it with a `reduce` op");
        return;
      }
    }
  }

  void error(const std::string& msg) {
    diag_.error(at_, msg);
    ok_ = false;
  }

  RangeEnv ranges_;
  DiagEngine& diag_;
  std::string fixed_;
  SourceLoc at_;
  bool ok_ = true;
  int parallel_depth_ = 0;
  std::string uniform_use_ = "outside every parallel"; // where a load outside a parallel sits
  std::set<const Buffer*> fragment_reads_;             // reported once per fragment
};

} // namespace

bool check_instance(const Kernel& k, const std::string& config, DiagEngine& diag) {
  Checker c(k, config, diag);
  c.visit(k.body);
  return c.ok();
}

} // namespace tilegen::passes
