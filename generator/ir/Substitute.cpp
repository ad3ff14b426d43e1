#include "ir/Substitute.h"

#include "ir/IRMutator.h"
#include "support/InternalError.h"

namespace tilegen::ir {

namespace {
class Substituter : public IRMutator {
public:
  explicit Substituter(const VarMap& m) : map_(m) {}

protected:
  Expr mutate_VarRef(const VarRef* n, const Expr& self) override {
    auto it = map_.find(n->var.get());
    if (it == map_.end())
      return self;
    TG_ASSERT(it->second && it->second->type == n->type,
              "substitute: replacement for '" + n->var->name + "' has the wrong type");
    return it->second;
  }

private:
  const VarMap& map_;
};
} // namespace

Expr substitute(const Expr& e, const VarMap& m) { return Substituter(m).mutate(e); }
Stmt substitute(const Stmt& s, const VarMap& m) { return Substituter(m).mutate(s); }
Kernel substitute(const Kernel& k, const VarMap& m) { return Substituter(m).mutate_kernel(k); }

} // namespace tilegen::ir
