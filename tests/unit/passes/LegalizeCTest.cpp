#include "passes/LegalizeC.h"

#include "ir/IRPrinter.h"
#include "ir/IRVerifier.h"
#include "ir/Simplify.h"

#include "emit/TestKernels.h"

#include <gtest/gtest.h>

using namespace tilegen;
using namespace tilegen::ir;
using namespace tilegen::testing;

namespace {

// A small instantiated kernel exercising every 16-bit rule.
Kernel narrow_kernel() {
  Kernel k;
  k.name = "narrow";
  k.target = "c";
  auto M = make_var("M", VarKind::Dim, DType::i64());
  k.dims = {DimParam{M, {}, {}, {}, {}}};
  auto X = make_buffer("X", MemScope::Global, DType::f32(), {VarRef::make(M)}, Access::Read);
  auto Y = make_buffer("Y", MemScope::Global, DType::bf16(), {VarRef::make(M)}, Access::Write);
  k.tensors = {X, Y};
  auto bx = make_var("bx", VarKind::BlockIndex, DType::i64());
  k.grid = {{bx, VarRef::make(M)}};
  auto s = make_buffer("s", MemScope::Shared, DType::bf16(), {i64(8)});
  auto a = make_buffer("a", MemScope::Shared, DType::bf16(), {i64(8), i64(8)});
  auto c = make_buffer("c", MemScope::Fragment, DType::bf16(), {i64(8), i64(8)});
  auto i = make_var("i", VarKind::ParallelVar, DType::i64());
  auto f32 = [](Expr e) { return Cast::make(DType::f32(), e); };
  k.body = Seq::make({
      Alloc::make(s), Alloc::make(a), Alloc::make(c),
      Fill::make(s, Cast::make(DType::bf16(), make_f32(0.1))),
      Copy::make(Region{X, {i64(0)}, {i64(8)}}, Region::whole(s), make_f32(0.0)),
      Parallel::make({i}, {i64(8)},
                     Store::make(s, {VarRef::make(i)},
                                 Cast::make(DType::bf16(), mul(f32(Load::make(s, {VarRef::make(i)})),
                                                               make_f32(3.0))),
                                 StoreOp::Add)),
      Gemm::make(a, a, c, false, false, true),
      Copy::make(Region::whole(s), Region{Y, {i64(0)}, {i64(8)}}, make_f32(0.0)),
  });
  return k;
}

TEST(LegalizeC, SixteenBitOnChipBuffersBecomeRoundedF32) {
  Kernel k = narrow_kernel();
  ASSERT_TRUE(verify(k, VerifyOptions{true}).empty());
  Kernel out = simplify(passes::legalize_c(k));
  auto errs = verify(out, VerifyOptions{true});
  EXPECT_TRUE(errs.empty()) << (errs.empty() ? "" : errs[0]);
  std::string t = to_string(out);
  EXPECT_NE(t.find("  shared s: f32[8]\n"), std::string::npos) << t;
  EXPECT_NE(t.find("  fragment c: f32[8, 8]\n"), std::string::npos) << t;
  // The fill constant is rounded to bf16 at generation time: 0.1 -> 0.10009765625 (printed
  // as the shortest f32 literal).
  EXPECT_NE(t.find("  fill s = 0.100097656\n"), std::string::npos) << t;
  // f32 -> bf16 shared: a rounding parallel keeps the bounds check and the pad.
  EXPECT_NE(t.find("  parallel tg_i0 in [0, 8) {\n    s[tg_i0] = f32(bf16(tg_i0 >= 0 && tg_i0 < M "
                   "? X[tg_i0] : 0.0))\n"),
            std::string::npos)
      << t;
  // `+=` on a 16-bit buffer: add in f32, round once (the addend is not rounded first).
  EXPECT_NE(t.find("s[i] = f32(bf16(s[i] + s[i] * 3.0))"), std::string::npos) << t;
  // gemm into a bf16 fragment: accumulated in f32, rounded after.
  EXPECT_NE(t.find("  gemm c = a @ a\n  parallel tg_i0 in [0, 8), tg_i1 in [0, 8) {\n"
                   "    c[tg_i0, tg_i1] = f32(bf16(c[tg_i0, tg_i1]))\n"),
            std::string::npos)
      << t;
  // Global bf16 tensors keep their type (the emitter stores bits).
  EXPECT_NE(t.find("tensor Y: bf16[M] write"), std::string::npos);
  EXPECT_NE(t.find("  copy s -> Y[0 : 8]\n"), std::string::npos) << t;
}

TEST(LegalizeC, ExactCopiesStayCopies) {
  Kernel k = make_gemm_kernel(DType::bf16());
  // Global bf16 -> shared bf16 is exact as f32: no rewrite beyond the buffer type.
  Kernel out = passes::legalize_c(k);
  std::string t = to_string(out);
  EXPECT_NE(t.find("copy A[by * BM, k * BK : BMxBK] -> A_s pad 0.0"), std::string::npos) << t;
  EXPECT_NE(t.find("shared A_s: f32[BM, BK]"), std::string::npos) << t;
}

} // namespace
