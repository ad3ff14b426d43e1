#include "passes/DivisorCheck.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"

#include <optional>
#include <set>

namespace tilegen::passes {

using namespace ir;

namespace {

// The bound variables an expression reads, first use first, each once.
class BoundNames : public IRVisitor {
public:
  BoundNames(const VarMap& bound) : bound_(bound) {}
  std::vector<const Var*> names;

protected:
  void visit_VarRef(const VarRef* n) override {
    if (bound_.count(n->var.get()) && seen_.insert(n->var.get()).second)
      names.push_back(n->var.get());
  }

private:
  const VarMap& bound_;
  std::set<const Var*> seen_;
};

class Divisors : public IRVisitor {
public:
  Divisors(const VarMap& bound, const Target& t, DiagEngine& d) : bound_(bound), target_(t), diag_(d) {}
  bool ok = true;

protected:
  // What the binding decides is never evaluated: `D == 0 ? 0 : i / D` at D = 0 has no zero
  // divisor (instantiation folds the select away).
  std::optional<bool> decided(const Expr& cond) const {
    const Expr folded = simplify(substitute(cond, bound_));
    if (auto b = folded->as<BoolImm>())
      return b->value;
    return std::nullopt;
  }
  void visit_Select(const Select* n) override {
    auto c = decided(n->cond);
    if (!c)
      return IRVisitor::visit_Select(n);
    visit(*c ? n->t : n->f);
  }
  void visit_IfThenElse(const IfThenElse* n) override {
    auto c = decided(n->cond);
    if (!c)
      return IRVisitor::visit_IfThenElse(n);
    if (*c)
      visit(n->then_case);
    else if (n->else_case)
      visit(n->else_case);
  }
  void visit_Binary(const Binary* n) override {
    IRVisitor::visit_Binary(n);
    if (!(n->op == BinaryOp::Div || n->op == BinaryOp::Mod || n->op == BinaryOp::CeilDiv) ||
        !n->type.is_int())
      return;
    // Hold the simplified divisor: as<>() points into it (a temporary would be freed).
    const Expr folded = simplify(substitute(n->b, bound_));
    const IntImm* zero = folded->as<IntImm>();
    if (!zero || zero->value != 0)
      return;
    BoundNames reads(bound_);
    reads.visit(n->b);
    std::string values;
    for (const Var* v : reads.names) {
      const Expr& x = bound_.at(v);
      std::string value = x->as<IntImm>()   ? std::to_string(x->as<IntImm>()->value)
                          : x->as<BoolImm>() ? (x->as<BoolImm>()->value ? "1" : "0")
                                             : "?";
      values += (values.empty() ? "" : ", ") + v->name + " = " + value;
    }
    const std::string op = binary_op_name(n->op);
    diag_.error(n->b->loc.known() ? n->b->loc : n->loc,
                "integer division by zero: the divisor of '" + op + "' is 0 on target '" +
                    target_.name + "'" + (values.empty() ? "" : " (" + values + ")") +
                    "; change the divisor or the values that make it 0");
    ok = false;
  }

private:
  const VarMap& bound_;
  const Target& target_;
  DiagEngine& diag_;
};

} // namespace

bool check_divisors(const Kernel& k, const VarMap& bound, const Target& target, DiagEngine& diag) {
  Divisors d(bound, target, diag);
  d.visit_kernel(k);
  return d.ok;
}

} // namespace tilegen::passes
