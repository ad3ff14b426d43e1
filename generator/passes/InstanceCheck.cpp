#include "passes/InstanceCheck.h"

#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "passes/RangeAnalysis.h"

#include <optional>

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
    indices_fit(*l->buffer, l->indices, "read of");
    IRVisitor::visit_Load(l);
  }

  void visit_Parallel(const Parallel* p) override {
    at_ = p->loc;
    IRVisitor::visit_Parallel(p);
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

  void error(const std::string& msg) {
    diag_.error(at_, msg);
    ok_ = false;
  }

  RangeEnv ranges_;
  DiagEngine& diag_;
  std::string fixed_;
  SourceLoc at_;
  bool ok_ = true;
};

} // namespace

bool check_instance(const Kernel& k, const std::string& config, DiagEngine& diag) {
  Checker c(k, config, diag);
  c.visit(k.body);
  return c.ok();
}

} // namespace tilegen::passes
