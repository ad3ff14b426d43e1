#include "ir/IRPrinter.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

#include "emit/TestKernels.h"

#include <gtest/gtest.h>

using namespace tilegen::ir;
using namespace tilegen::testing;

namespace {

TEST(Substitute, ReplacesVarsByIdentityNotName) {
  auto a = make_var("n", VarKind::Dim, DType::i64());
  auto b = make_var("n", VarKind::Dim, DType::i64()); // same name, different var
  Expr e = add(vr(a), vr(b));
  VarMap m{{a.get(), i64(5)}};
  EXPECT_EQ(to_string(substitute(e, m)), "5 + n");
}

TEST(Substitute, RewritesBufferShapesConsistently) {
  auto bm = make_var("BM", VarKind::TileConst, DType::i64());
  auto buf = make_buffer("acc", MemScope::Fragment, DType::f32(), {vr(bm), i64(4)});
  auto i = make_var("i", VarKind::ParallelVar, DType::i64());
  Stmt body = Seq::make({
      Alloc::make(buf),
      Fill::make(buf, make_f32(0.0)),
      Parallel::make({i}, {vr(bm)},
                     Store::make(buf, {vr(i), i64(0)},
                                 add(Load::make(buf, {vr(i), i64(1)}), make_f32(1.0)),
                                 StoreOp::Assign)),
  });
  Stmt out = substitute(body, VarMap{{bm.get(), i64(64)}});
  auto seq = out->as<Seq>();
  ASSERT_TRUE(seq);
  auto alloc = seq->stmts[0]->as<Alloc>();
  auto fill = seq->stmts[1]->as<Fill>();
  auto par = seq->stmts[2]->as<Parallel>();
  auto store = par->body->as<Store>();
  auto load = store->value->as<Binary>()->a->as<Load>();
  // One new buffer, referenced everywhere; the old one nowhere.
  EXPECT_NE(alloc->buffer, buf);
  EXPECT_EQ(fill->dst, alloc->buffer);
  EXPECT_EQ(store->buffer, alloc->buffer);
  EXPECT_EQ(load->buffer, alloc->buffer);
  EXPECT_EQ(to_string(alloc->buffer->shape[0]), "64");
  EXPECT_EQ(to_string(par->extents[0]), "64");
}

TEST(Substitute, KernelTensorsAndBodyAgree) {
  Kernel k = make_gemm_kernel(DType::f32());
  VarMap m;
  for (const auto& tc : k.tile_consts)
    m[tc.var.get()] = i64(64);
  Kernel out = simplify(substitute(k, m));
  // Tensors do not mention tile constants: they are shared, not copied.
  EXPECT_EQ(out.tensors[0], k.tensors[0]);
  EXPECT_EQ(to_string(out.grid[0].extent), "cdiv(N, 64)");
  EXPECT_EQ(to_string(out.threads), "64");
}

} // namespace
