#include "explain/ExplainWalk.h"

#include "ir/IRVisitor.h"

#include <string>
#include <tuple>

namespace tilegen::explain {

namespace {

class Collector : public ir::IRVisitor {
public:
  Walk w;

protected:
  void visit_Gemm(const ir::Gemm* n) override {
    auto key = std::make_tuple(n->a->name, n->b->name, n->c->name);
    if (gemm_keys_.insert(key).second)
      w.gemms.push_back(n);
    IRVisitor::visit_Gemm(n);
  }
  void visit_Alloc(const ir::Alloc* n) override {
    if (n->buffer->scope == ir::MemScope::Shared && shared_names_.insert(n->buffer->name).second)
      w.shared.push_back(n->buffer.get());
    IRVisitor::visit_Alloc(n);
  }
  void visit_For(const ir::For* n) override {
    if (n->pipelined() &&
        loop_locs_.insert({n->loc.line, n->loc.col, n->var->name}).second)
      w.pipelined.push_back(n);
    IRVisitor::visit_For(n);
  }
  void visit_Copy(const ir::Copy* n) override {
    if (n->dst.buffer->scope == ir::MemScope::Shared &&
        n->src.buffer->scope == ir::MemScope::Global)
      if (w.filled_from_global.insert(n->dst.buffer->name).second)
        w.fills.push_back(n->dst.buffer.get());
    IRVisitor::visit_Copy(n);
  }

private:
  std::set<std::tuple<std::string, std::string, std::string>> gemm_keys_;
  std::set<std::string> shared_names_;
  std::set<std::tuple<int, int, std::string>> loop_locs_;
};

} // namespace

Walk walk(const ir::Stmt& body) {
  Collector c;
  c.visit(body);
  return c.w;
}

} // namespace tilegen::explain
