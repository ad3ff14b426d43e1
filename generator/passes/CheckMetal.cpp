#include "passes/CheckMetal.h"

#include "ir/IRVisitor.h"

namespace tilegen::passes {

using namespace ir;

namespace {

// The first construct MSL has no type or instruction for.
class MetalUnrepresentable : public IRVisitor {
public:
  std::string found, fix;
  SourceLoc at;

  void note(bool bad, const std::string& what, const SourceLoc& loc, const std::string& how) {
    if (bad && found.empty()) {
      found = what;
      at = loc;
      fix = how;
    }
  }

protected:
  static constexpr const char* kNoF64 =
      "Apple GPUs have no 64-bit floats; use f32, or leave target 'metal' out of this library's "
      "TARGETS";
  void visit_buffer_use(const BufferPtr& b) override {
    note(b->dtype == DType::f64(), "f64 buffer '" + b->name + "'", b->loc, kNoF64);
  }
  void visit_Cast(const Cast* n) override {
    note(n->type == DType::f64(), "a cast to f64", n->loc, kNoF64);
    IRVisitor::visit_Cast(n);
  }
  void visit_FloatImm(const FloatImm* n) override {
    note(n->type == DType::f64(), "an f64 literal", n->loc, kNoF64);
  }
};

} // namespace

bool check_metal(const Kernel& k, const Target& target, DiagEngine& diag) {
  MetalUnrepresentable u;
  for (const auto& s : k.scalars)
    u.note(s->type == DType::f64(), "f64 scalar '" + s->name + "'", s->loc,
           "Apple GPUs have no 64-bit floats; use an f32 scalar");
  for (const auto& t : k.tensors)
    u.note(t->dtype == DType::f64(), "f64 tensor '" + t->name + "'", t->loc,
           "Apple GPUs have no 64-bit floats; use f32, or leave target 'metal' out of this "
           "library's TARGETS");
  u.visit(k.body);
  if (u.found.empty())
    return true;
  diag.error(u.at.known() ? u.at : k.loc, "target '" + target.name + "': kernel '" + k.name +
                                              "' uses " + u.found +
                                              ", which Metal cannot express (" + u.fix + ")");
  return false;
}

} // namespace tilegen::passes
