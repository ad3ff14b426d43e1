#include "passes/LegalizeCuda.h"

#include "ir/IRMutator.h"
#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "passes/LayoutInference.h"

#include <functional>
#include <set>
#include <vector>

namespace tilegen::passes {

using namespace ir;

namespace {

struct GemmCollector : IRVisitor {
  std::vector<const Gemm*> gemms;

protected:
  void visit_Gemm(const Gemm* g) override {
    gemms.push_back(g);
    IRVisitor::visit_Gemm(g);
  }
};

bool fp8_shared(const Buffer& b) { return b.scope == MemScope::Shared && b.dtype.is_fp8(); }

class Widener : public IRMutator {
public:
  explicit Widener(std::set<const Buffer*> widen) : widen_(std::move(widen)) {}

protected:
  BufferPtr rewrite_buffer(const BufferPtr& b) override {
    BufferPtr nb = IRMutator::rewrite_buffer(b);
    if (!widen_.count(b.get()))
      return nb;
    return make_buffer(nb->name, nb->scope, DType::f16(), nb->shape, nb->access, nb->loc);
  }

private:
  std::set<const Buffer*> widen_;
};

} // namespace

std::set<const Buffer*> fp8_widened_operands(const std::vector<const Gemm*>& gemms,
                                             const std::function<bool(const Gemm&)>& native) {
  std::set<const Buffer*> widen;
  for (const Gemm* g : gemms) {
    const bool keep = native(*g);
    for (const Buffer* b : {g->a.get(), g->b.get()})
      if (!keep && fp8_shared(*b))
        widen.insert(b);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const Gemm* g : gemms)
      if (widen.count(g->a.get()) || widen.count(g->b.get()))
        for (const Buffer* b : {g->a.get(), g->b.get()})
          if (fp8_shared(*b) && widen.insert(b).second)
            changed = true;
  }
  return widen;
}

Kernel widen_fp8_gemm_operands(const Kernel& k, const std::function<bool(const Gemm&)>& native) {
  GemmCollector c;
  c.visit(k.body);
  std::set<const Buffer*> widen = fp8_widened_operands(c.gemms, native);
  if (widen.empty())
    return k;
  return Widener(std::move(widen)).mutate_kernel(k);
}

Kernel legalize_cuda(const Kernel& k, const Target& target) {
  const int64_t threads = as_const_int(k.threads).value_or(0);
  return widen_fp8_gemm_operands(k, [&](const Gemm& g) {
    return cuda_fp8_tiles_native(target) && wgmma_eligible(g, threads);
  });
}

} // namespace tilegen::passes
