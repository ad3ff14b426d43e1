#include "ir/IRVerifier.h"

#include "emit/TestKernels.h"

#include <gtest/gtest.h>

using namespace tilegen::ir;
using namespace tilegen::testing;

namespace {

bool mentions(const std::vector<std::string>& errs, const std::string& what) {
  for (const auto& e : errs)
    if (e.find(what) != std::string::npos)
      return true;
  return false;
}

TEST(Verifier, ShippedShapesAreValid) {
  for (auto t : {DType::f32(), DType::bf16()}) {
    EXPECT_TRUE(verify(make_gemm_kernel(t)).empty());
    EXPECT_TRUE(verify(make_gemm_kernel(t, true)).empty());
    EXPECT_TRUE(verify(make_softmax_kernel(t)).empty());
  }
}

TEST(Verifier, SymbolicShapesAreErrorsAfterInstantiation) {
  auto errs = verify(make_gemm_kernel(DType::f32()), VerifyOptions{true});
  EXPECT_TRUE(mentions(errs, "'BM' (tile_const) still referenced after instantiation"));
  EXPECT_TRUE(mentions(errs, "on-chip buffer 'A_s' has a non-constant"));
  EXPECT_TRUE(mentions(errs, "pipelined loop 'k' has non-constant stages"));
}

TEST(Verifier, VarOutOfScope) {
  Kernel k = make_softmax_kernel(DType::f32());
  auto stray = make_var("k", VarKind::LoopVar, DType::i64());
  auto buf = k.tensors[1];
  k.body = Seq::make({k.body, Store::make(buf, {VarRef::make(stray), i64(0)}, make_f32(1.0),
                                          StoreOp::Assign)});
  auto errs = verify(k);
  EXPECT_TRUE(mentions(errs, "'k' (loop_var) used out of scope")) << errs.size();
}

TEST(Verifier, BufferUsedBeforeOrWithoutAlloc) {
  Kernel k = make_softmax_kernel(DType::f32());
  auto ghost = make_buffer("ghost", MemScope::Fragment, DType::f32(), {i64(4)});
  k.body = Seq::make({Fill::make(ghost, make_f32(0.0)), Alloc::make(ghost), k.body});
  auto errs = verify(k);
  EXPECT_TRUE(mentions(errs, "fill uses buffer 'ghost' that is not declared in scope"));
}

TEST(Verifier, AllocScopeEndsWithItsSeq) {
  Kernel k = make_softmax_kernel(DType::f32());
  auto t = make_buffer("t", MemScope::Local, DType::f32(), {i64(4)});
  auto inner = Seq::make({Alloc::make(t), Fill::make(t, make_f32(0.0))});
  k.body = Seq::make({k.body, inner, Fill::make(t, make_f32(1.0))});
  auto errs = verify(k);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_TRUE(mentions(errs, "'t' that is not declared in scope"));
}

TEST(Verifier, LetIsVisibleAfterItOnly) {
  Kernel k = make_softmax_kernel(DType::f32());
  auto v = make_var("v", VarKind::Let, DType::f32());
  auto i = make_var("i", VarKind::ParallelVar, DType::i64());
  auto buf = make_buffer("t", MemScope::Local, DType::f32(), {i64(4)});
  auto body = Seq::make({Store::make(buf, {VarRef::make(i)}, VarRef::make(v), StoreOp::Assign),
                         LetStmt::make(v, make_f32(2.0))});
  k.body = Seq::make({Alloc::make(buf), Parallel::make({i}, {i64(4)}, body)});
  EXPECT_TRUE(mentions(verify(k), "'v' (let) used out of scope"));
}

TEST(Verifier, ParallelBodyKinds) {
  Kernel k = make_softmax_kernel(DType::f32());
  auto buf = make_buffer("t", MemScope::Local, DType::f32(), {i64(4)});
  auto i = make_var("i", VarKind::ParallelVar, DType::i64());
  k.body = Seq::make({Alloc::make(buf), Parallel::make({i}, {i64(4)}, Fill::make(buf, make_f32(0.0)))});
  EXPECT_TRUE(mentions(verify(k), "parallel body holds a Fill statement"));
}

TEST(Verifier, GemmShapesMustAgree) {
  Kernel k;
  k.name = "bad";
  auto a = make_buffer("a", MemScope::Shared, DType::f32(), {i64(8), i64(4)});
  auto b = make_buffer("b", MemScope::Shared, DType::f32(), {i64(5), i64(8)});
  auto c = make_buffer("c", MemScope::Fragment, DType::f32(), {i64(8), i64(8)});
  k.body = Seq::make({Alloc::make(a), Alloc::make(b), Alloc::make(c),
                      Gemm::make(a, b, c, false, false, true)});
  EXPECT_TRUE(mentions(verify(k), "gemm shapes do not agree"));
}

TEST(Verifier, CopyExtentsAndRegionBounds) {
  Kernel k;
  k.name = "bad";
  auto a = make_buffer("a", MemScope::Shared, DType::f32(), {i64(8), i64(4)});
  auto b = make_buffer("b", MemScope::Shared, DType::f32(), {i64(8), i64(8)});
  Region src = Region::whole(a);
  Region dst{b, {i64(0), i64(6)}, {i64(8), i64(4)}};
  k.body = Seq::make({Alloc::make(a), Alloc::make(b), Copy::make(src, dst, make_f32(0.0))});
  EXPECT_TRUE(mentions(verify(k, VerifyOptions{true}), "region of 'b' exceeds its shape in dim 1"));
}

TEST(Verifier, AtomicAddDtype) {
  Kernel k;
  k.name = "bad";
  auto M = make_var("M", VarKind::Dim, DType::i64());
  auto out = make_buffer("O", MemScope::Global, DType::bf16(), {VarRef::make(M)});
  k.dims = {DimParam{M, {}, {}, {}, {}}};
  k.tensors = {out};
  auto f = make_buffer("f", MemScope::Fragment, DType::f32(), {i64(4)});
  k.body = Seq::make({Alloc::make(f), AtomicAdd::make(Region::whole(f), Region{out, {i64(0)}, {i64(4)}})});
  EXPECT_TRUE(mentions(verify(k), "atomic_add into a bf16 tensor"));
}

} // namespace
