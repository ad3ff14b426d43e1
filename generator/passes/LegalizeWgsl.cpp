#include "passes/LegalizeWgsl.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "passes/LegalizeC.h"
#include "support/InternalError.h"

#include <cfloat>
#include <cmath>

namespace tilegen::passes {

using namespace ir;

namespace {

// +-inf -> +-FLT_MAX (see the header: WGSL may assume that no infinity occurs).
class FiniteLiterals : public IRMutator {
protected:
  Expr mutate_FloatImm(const FloatImm* n, const Expr& self) override {
    if (!std::isinf(n->value))
      return self;
    return FloatImm::make(n->type, n->value > 0 ? FLT_MAX : -FLT_MAX, n->loc);
  }
};

class No64BitFloats : public IRVisitor {
public:
  std::string found;

protected:
  void note(DType t, const std::string& what) {
    if (t == DType::f64() && found.empty())
      found = what;
  }
  void visit_buffer_use(const BufferPtr& b) override { note(b->dtype, "buffer '" + b->name + "'"); }
  void visit_Cast(const Cast* n) override {
    note(n->type, "a cast to f64");
    IRVisitor::visit_Cast(n);
  }
  void visit_FloatImm(const FloatImm* n) override { note(n->type, "an f64 literal"); }
};

} // namespace

Kernel legalize_wgsl(const Kernel& k, const Target& target) {
  TG_ASSERT(target.backend == Backend::WGSL, "legalize_wgsl: target '" + target.name + "' is not WGSL");
  No64BitFloats check;
  check.visit(k.body);
  for (const auto& s : k.scalars)
    if (s->type == DType::f64() && check.found.empty())
      check.found = "scalar '" + s->name + "'";
  if (!check.found.empty())
    internal_error("kernel '" + k.name + "' uses f64 (" + check.found +
                   "), which WGSL does not have; leave target '" + target.name +
                   "' out of this library's TARGETS");
  // On-chip 16-bit floats held as f32 with rounding writes: the same rewrite as C.
  Kernel out = legalize_c(k);
  return FiniteLiterals().mutate_kernel(out);
}

} // namespace tilegen::passes
