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

// The first use of something WGSL has no type for: f64, u64, or an integer outside i32 (a u32
// constant outside u32).
class Unrepresentable : public IRVisitor {
public:
  std::string found;
  SourceLoc at;

  void note(bool bad, const std::string& what, const SourceLoc& loc) {
    if (bad && found.empty()) {
      found = what;
      at = loc;
    }
  }

protected:
  void visit_buffer_use(const BufferPtr& b) override {
    note(b->dtype == DType::f64() || b->dtype == DType::u64(),
         std::string(b->dtype.name()) + " buffer '" + b->name + "'", b->loc);
  }
  void visit_Cast(const Cast* n) override {
    note(n->type == DType::f64() || n->type == DType::u64(),
         std::string("a cast to ") + n->type.name(), n->loc);
    IRVisitor::visit_Cast(n);
  }
  void visit_FloatImm(const FloatImm* n) override {
    note(n->type == DType::f64(), "an f64 literal", n->loc);
  }
  void visit_IntImm(const IntImm* n) override {
    if (n->type.is_unsigned()) {
      note(n->type == DType::u64() || n->value < 0 || n->value > int64_t{UINT32_MAX},
           "the " + std::string(n->type.name()) + " constant " +
               std::to_string(static_cast<uint64_t>(n->value)),
           n->loc);
      return;
    }
    note(n->value < INT32_MIN || n->value > INT32_MAX,
         "the integer " + std::to_string(n->value) +
             (n->name.empty() ? std::string() : " ('" + n->name + "')") + ", outside i32",
         n->loc);
  }
};

} // namespace

bool check_wgsl(const Kernel& k, const Target& target, DiagEngine& diag) {
  Unrepresentable u;
  for (const auto& s : k.scalars)
    u.note(s->type == DType::f64() || s->type == DType::u64(),
           std::string(s->type.name()) + " scalar '" + s->name + "'", s->loc);
  u.visit(k.body);
  if (u.found.empty())
    return true;
  diag.error(u.at.known() ? u.at : k.loc,
             "target '" + target.name + "': kernel '" + k.name + "' uses " + u.found +
                 ", which WGSL cannot express (no 64-bit types); use f32, i32 and u32 values, or "
                 "leave the WGSL targets out of this library's TARGETS");
  return false;
}

Kernel legalize_wgsl(const Kernel& k, const Target& target) {
  TG_ASSERT(target.backend == Backend::WGSL, "legalize_wgsl: target '" + target.name + "' is not WGSL");
  // On-chip 16-bit floats held as f32 with rounding writes: the same rewrite as C.
  Kernel out = legalize_c(k);
  return FiniteLiterals().mutate_kernel(out);
}

} // namespace tilegen::passes
