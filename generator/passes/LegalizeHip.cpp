#include "passes/LegalizeHip.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "passes/LegalizeCuda.h"

namespace tilegen::passes {

using namespace ir;

bool hip_fp8_matrix_native(const Target& t, DType a, DType b, DType c, bool a_shared, bool b_shared,
                           int64_t M, int64_t N, int64_t K, int64_t threads, bool fragment_a) {
  if (t.backend != Backend::HIP || fragment_a || !a_shared || !b_shared || a != b || !a.is_fp8() ||
      c != DType::f32() || t.gpu.warp_size <= 0 || M <= 0 || N <= 0 || K <= 0)
    return false;
  const int64_t waves = threads / t.gpu.warp_size;
  for (const AmdMatrixShape& ms : t.hip.matrix) {
    if (ms.in != a.name() || K % ms.k != 0)
      continue;
    for (int64_t wm = 1; wm <= waves; ++wm)
      if (waves % wm == 0 && M % (ms.m * wm) == 0 && N % (ms.n * (waves / wm)) == 0)
        return true;
  }
  return false;
}

Kernel legalize_hip(const Kernel& k, const Target& target) {
  struct Gemms : IRVisitor {
    bool fragment_a = false;
    void visit_Gemm(const Gemm* g) override {
      fragment_a = fragment_a || g->a->scope == MemScope::Fragment;
      IRVisitor::visit_Gemm(g);
    }
  } gemms;
  gemms.visit(k.body);
  const int64_t threads = as_const_int(k.threads).value_or(0);
  return widen_fp8_gemm_operands(k, [&](const Gemm& g) {
    auto dim = [](const Expr& e) { return as_const_int(e).value_or(0); };
    if (g.c->rank() != 2 || g.a->rank() != 2)
      return false;
    const int64_t K = dim(g.transpose_a ? g.a->shape[0] : g.a->shape[1]);
    return hip_fp8_matrix_native(target, g.a->dtype, g.b->dtype, g.c->dtype,
                                 g.a->scope == MemScope::Shared, g.b->scope == MemScope::Shared,
                                 dim(g.c->shape[0]), dim(g.c->shape[1]), K, threads, gemms.fragment_a);
  });
}

} // namespace tilegen::passes
