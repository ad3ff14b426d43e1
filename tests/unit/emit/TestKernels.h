// Hand-built ir::Kernels mirroring kernels/gemm.yaml and kernels/softmax.yaml, as the front
// end lowers them (16-bit loads cast to f32 before arithmetic, stores cast to the buffer
// dtype). Used by the ir/, passes/ and emit/ unit tests so they do not depend on spec/.
#pragma once

#include "ir/IR.h"

#include <cmath>
#include <memory>
#include <string>

namespace tilegen::testing {

using namespace ir;

inline SourceLoc test_loc(int line) {
  static auto file = std::make_shared<const std::string>("test.yaml");
  SourceLoc l;
  l.file = file;
  l.line = line;
  l.col = 3;
  return l;
}

inline Expr vr(const VarPtr& v) { return VarRef::make(v); }
inline Expr mul(Expr a, Expr b) { return Binary::make(BinaryOp::Mul, std::move(a), std::move(b)); }
inline Expr add(Expr a, Expr b) { return Binary::make(BinaryOp::Add, std::move(a), std::move(b)); }
inline Expr sub(Expr a, Expr b) { return Binary::make(BinaryOp::Sub, std::move(a), std::move(b)); }
inline Expr cdiv(Expr a, Expr b) { return Binary::make(BinaryOp::CeilDiv, std::move(a), std::move(b)); }
inline Expr i64(int64_t v) { return make_i64(v); }

inline TileConst tile_const(const std::string& name, std::vector<int64_t> cands, int line,
                            std::map<std::string, std::vector<int64_t>> per_target = {}) {
  TileConst t;
  t.var = make_var(name, VarKind::TileConst, DType::i64(), test_loc(line));
  t.candidates = std::move(cands);
  t.per_target = std::move(per_target);
  t.loc = test_loc(line);
  return t;
}

inline DimParam dim(const std::string& name) {
  DimParam d;
  d.var = make_var(name, VarKind::Dim, DType::i64());
  return d;
}

// kernels/gemm.yaml: C = A @ B (optionally A @ B^T), f32 accumulation.
inline Kernel make_gemm_kernel(DType T, bool transpose_b = false,
                               std::map<std::string, std::vector<int64_t>> bm = {{"c", {64, 96, 128}}},
                               std::map<std::string, std::vector<int64_t>> bn = {{"c", {64, 128, 256}}},
                               std::map<std::string, std::vector<int64_t>> bk = {{"c", {64, 128, 256}}},
                               bool transpose_a = false) {
  Kernel k;
  k.name = "gemm";
  k.summary = "C = A @ B";
  k.loc = test_loc(2);
  k.type_binding = {{"T", T}};
  auto M = dim("M"), N = dim("N"), K = dim("K");
  k.dims = {M, N, K};
  auto A = transpose_a ? make_buffer("A", MemScope::Global, T, {vr(K.var), vr(M.var)}, Access::Read)
                       : make_buffer("A", MemScope::Global, T, {vr(M.var), vr(K.var)}, Access::Read);
  auto B = transpose_b ? make_buffer("B", MemScope::Global, T, {vr(N.var), vr(K.var)}, Access::Read)
                       : make_buffer("B", MemScope::Global, T, {vr(K.var), vr(N.var)}, Access::Read);
  auto C = make_buffer("C", MemScope::Global, T, {vr(M.var), vr(N.var)}, Access::Write);
  k.tensors = {A, B, C};
  auto BM = tile_const("BM", {32, 64, 128, 256}, 15, bm);
  auto BN = tile_const("BN", {32, 64, 128, 256}, 16, bn);
  auto BK = tile_const("BK", {32, 64}, 17, bk);
  auto stages = tile_const("stages", {2, 3, 4}, 18);
  auto threads = tile_const("threads", {128, 256}, 19);
  k.tile_consts = {BM, BN, BK, stages, threads};
  Requirement req;
  req.pred = Binary::make(BinaryOp::Ge, mul(vr(BM.var), vr(BN.var)), mul(i64(64), i64(64)));
  req.text = "BM * BN >= 64 * 64";
  req.loc = test_loc(21);
  k.requirements = {req};
  auto bx = make_var("bx", VarKind::BlockIndex, DType::i64());
  auto by = make_var("by", VarKind::BlockIndex, DType::i64());
  k.grid = {{bx, cdiv(vr(N.var), vr(BN.var))}, {by, cdiv(vr(M.var), vr(BM.var))}};
  k.threads = vr(threads.var);

  auto A_s = transpose_a ? make_buffer("A_s", MemScope::Shared, T, {vr(BK.var), vr(BM.var)})
                         : make_buffer("A_s", MemScope::Shared, T, {vr(BM.var), vr(BK.var)});
  auto B_s = transpose_b ? make_buffer("B_s", MemScope::Shared, T, {vr(BN.var), vr(BK.var)})
                         : make_buffer("B_s", MemScope::Shared, T, {vr(BK.var), vr(BN.var)});
  auto acc = make_buffer("acc", MemScope::Fragment, DType::f32(), {vr(BM.var), vr(BN.var)});
  auto kv = make_var("k", VarKind::LoopVar, DType::i64());
  Region a_src = transpose_a
                     ? Region{A, {mul(vr(kv), vr(BK.var)), mul(vr(by), vr(BM.var))}, {vr(BK.var), vr(BM.var)}}
                     : Region{A, {mul(vr(by), vr(BM.var)), mul(vr(kv), vr(BK.var))}, {vr(BM.var), vr(BK.var)}};
  Region b_src = transpose_b
                     ? Region{B, {mul(vr(bx), vr(BN.var)), mul(vr(kv), vr(BK.var))}, {vr(BN.var), vr(BK.var)}}
                     : Region{B, {mul(vr(kv), vr(BK.var)), mul(vr(bx), vr(BN.var))}, {vr(BK.var), vr(BN.var)}};
  Stmt loop_body = Seq::make({
      Copy::make(a_src, Region::whole(A_s), FloatImm::make(T, 0.0), test_loc(31)),
      Copy::make(b_src, Region::whole(B_s), FloatImm::make(T, 0.0), test_loc(32)),
      Gemm::make(A_s, B_s, acc, transpose_a, transpose_b, false, test_loc(33)),
  });
  Region c_dst{C, {mul(vr(by), vr(BM.var)), mul(vr(bx), vr(BN.var))}, {vr(BM.var), vr(BN.var)}};
  k.body = Seq::make({
      Alloc::make(A_s, test_loc(26)),
      Alloc::make(B_s, test_loc(26)),
      Alloc::make(acc, test_loc(27)),
      Fill::make(acc, make_f32(0.0), test_loc(28)),
      For::make(kv, i64(0), cdiv(vr(K.var), vr(BK.var)), vr(stages.var), loop_body, test_loc(29)),
      Copy::make(Region::whole(acc), c_dst, make_f32(0.0), test_loc(34)),
  });
  return k;
}

// kernels/softmax.yaml: row softmax with an online max/sum over column blocks.
inline Kernel make_softmax_kernel(DType T, std::vector<int64_t> bn_c = {1024, 2048}) {
  Kernel k;
  k.name = "softmax";
  k.summary = "row softmax";
  k.loc = test_loc(2);
  k.type_binding = {{"T", T}};
  auto M = dim("M"), N = dim("N");
  k.dims = {M, N};
  auto X = make_buffer("X", MemScope::Global, T, {vr(M.var), vr(N.var)}, Access::Read);
  auto Y = make_buffer("Y", MemScope::Global, T, {vr(M.var), vr(N.var)}, Access::Write);
  k.tensors = {X, Y};
  auto BM = tile_const("BM", {1, 2, 4, 8}, 14, {{"c", {4}}});
  auto BN = tile_const("BN", {256, 512, 1024, 2048}, 15, {{"c", bn_c}});
  auto threads = tile_const("threads", {128, 256}, 16);
  k.tile_consts = {BM, BN, threads};
  auto bx = make_var("bx", VarKind::BlockIndex, DType::i64());
  k.grid = {{bx, cdiv(vr(M.var), vr(BM.var))}};
  k.threads = vr(threads.var);

  auto f32 = DType::f32();
  auto x = make_buffer("x", MemScope::Fragment, f32, {vr(BM.var), vr(BN.var)});
  auto m = make_buffer("m", MemScope::Fragment, f32, {vr(BM.var)});
  auto m_blk = make_buffer("m_blk", MemScope::Fragment, f32, {vr(BM.var)});
  auto l = make_buffer("l", MemScope::Fragment, f32, {vr(BM.var)});
  auto ninf = Unary::make(UnaryOp::Neg, FloatImm::make(f32, INFINITY));
  auto kv = make_var("k", VarKind::LoopVar, DType::i64());
  auto kv2 = make_var("k", VarKind::LoopVar, DType::i64());
  auto i = make_var("i", VarKind::ParallelVar, DType::i64());
  auto i2 = make_var("i", VarKind::ParallelVar, DType::i64());
  auto j2 = make_var("j", VarKind::ParallelVar, DType::i64());
  auto i3 = make_var("i", VarKind::ParallelVar, DType::i64());
  auto j3 = make_var("j", VarKind::ParallelVar, DType::i64());
  auto m_new = make_var("m_new", VarKind::Let, f32);
  auto ld = [](const BufferPtr& b, std::vector<Expr> idx) { return Load::make(b, std::move(idx)); };
  auto expf_ = [](Expr e) { return Call::make(Intrinsic::Exp, {std::move(e)}); };
  auto is_ninf = [&](Expr e) { return Binary::make(BinaryOp::Eq, std::move(e), ninf); };

  auto x_src = [&](const VarPtr& kk) {
    return Region{X, {mul(vr(bx), vr(BM.var)), mul(vr(kk), vr(BN.var))}, {vr(BM.var), vr(BN.var)}};
  };
  Stmt p1 = Parallel::make(
      {i}, {vr(BM.var)},
      Seq::make({
          LetStmt::make(m_new, Binary::make(BinaryOp::Max, ld(m, {vr(i)}), ld(m_blk, {vr(i)}))),
          Store::make(l, {vr(i)},
                      Select::make(is_ninf(vr(m_new)), make_f32(0.0),
                                   mul(ld(l, {vr(i)}), expf_(sub(ld(m, {vr(i)}), vr(m_new))))),
                      StoreOp::Assign, test_loc(36)),
          Store::make(m, {vr(i)}, vr(m_new), StoreOp::Assign, test_loc(37)),
      }),
      test_loc(33));
  Stmt p2 = Parallel::make(
      {i2, j2}, {vr(BM.var), vr(BN.var)},
      Store::make(x, {vr(i2), vr(j2)},
                  Select::make(is_ninf(ld(m, {vr(i2)})), make_f32(0.0),
                               expf_(sub(ld(x, {vr(i2), vr(j2)}), ld(m, {vr(i2)})))),
                  StoreOp::Assign, test_loc(40)),
      test_loc(38));
  Stmt pass1 = Seq::make({
      Copy::make(x_src(kv), Region::whole(x), FloatImm::make(T, -INFINITY), test_loc(30)),
      Reduce::make(ReduceOp::Max, x, m_blk, 1, true, test_loc(31)),
      p1,
      p2,
      Reduce::make(ReduceOp::Sum, x, l, 1, false, test_loc(41)),
  });
  Stmt p3 = Parallel::make(
      {i3, j3}, {vr(BM.var), vr(BN.var)},
      Store::make(x, {vr(i3), vr(j3)},
                  Binary::make(BinaryOp::Div, expf_(sub(ld(x, {vr(i3), vr(j3)}), ld(m, {vr(i3)}))),
                               ld(l, {vr(i3)})),
                  StoreOp::Assign, test_loc(47)),
      test_loc(45));
  Region y_dst{Y, {mul(vr(bx), vr(BM.var)), mul(vr(kv2), vr(BN.var))}, {vr(BM.var), vr(BN.var)}};
  Stmt pass2 = Seq::make({
      Copy::make(x_src(kv2), Region::whole(x), FloatImm::make(T, -INFINITY), test_loc(44)),
      p3,
      Copy::make(Region::whole(x), y_dst, make_f32(0.0), test_loc(48)),
  });
  k.body = Seq::make({
      Alloc::make(x, test_loc(21)),
      Alloc::make(m, test_loc(22)),
      Alloc::make(m_blk, test_loc(23)),
      Alloc::make(l, test_loc(24)),
      Fill::make(m, ninf, test_loc(25)),
      Fill::make(l, make_f32(0.0), test_loc(26)),
      For::make(kv, i64(0), cdiv(vr(N.var), vr(BN.var)), nullptr, pass1, test_loc(28)),
      For::make(kv2, i64(0), cdiv(vr(N.var), vr(BN.var)), nullptr, pass2, test_loc(43)),
  });
  return k;
}

// Column sums added atomically into S (split over row blocks), then a guarded parallel
// epilogue: exercises reduce over dim 0, atomic_add, parallel with global loads/stores, let,
// if, floor modulo and select.
inline Kernel make_misc_kernel() {
  Kernel k;
  k.name = "misc";
  k.loc = test_loc(2);
  auto f32 = DType::f32();
  auto M = dim("M"), N = dim("N");
  k.dims = {M, N};
  auto X = make_buffer("X", MemScope::Global, f32, {vr(M.var), vr(N.var)}, Access::Read);
  auto S = make_buffer("S", MemScope::Global, f32, {vr(N.var)}, Access::ReadWrite);
  auto Y = make_buffer("Y", MemScope::Global, f32, {vr(M.var), vr(N.var)}, Access::Write);
  k.tensors = {X, S, Y};
  auto bx = make_var("bx", VarKind::BlockIndex, DType::i64());
  auto by = make_var("by", VarKind::BlockIndex, DType::i64());
  k.grid = {{bx, cdiv(vr(M.var), i64(16))}, {by, cdiv(vr(N.var), i64(32))}};
  auto x = make_buffer("x", MemScope::Fragment, f32, {i64(16), i64(32)});
  auto cs = make_buffer("cs", MemScope::Fragment, f32, {i64(32)});
  auto i = make_var("i", VarKind::ParallelVar, DType::i64());
  auto j = make_var("j", VarKind::ParallelVar, DType::i64());
  auto r = make_var("r", VarKind::Let, DType::i64());
  auto c = make_var("c", VarKind::Let, DType::i64());
  Expr row = add(mul(vr(bx), i64(16)), vr(i)), col = add(mul(vr(by), i64(32)), vr(j));
  Expr odd = Binary::make(BinaryOp::Eq, Binary::make(BinaryOp::Mod, vr(r), i64(3)), i64(0));
  Stmt epilogue = Seq::make({
      LetStmt::make(r, row),
      LetStmt::make(c, col),
      IfThenElse::make(Binary::make(BinaryOp::Lt, vr(c), add(vr(N.var), i64(1))),
                       Store::make(Y, {vr(r), vr(c)},
                                   add(mul(Load::make(X, {vr(r), vr(c)}), make_f32(2.0)),
                                       Select::make(odd, make_f32(1.0), make_f32(0.0))),
                                   StoreOp::Assign, test_loc(12)),
                       nullptr),
  });
  k.body = Seq::make({
      Alloc::make(x, test_loc(5)),
      Alloc::make(cs, test_loc(6)),
      Copy::make(Region{X, {mul(vr(bx), i64(16)), mul(vr(by), i64(32))}, {i64(16), i64(32)}},
                 Region::whole(x), make_f32(0.0), test_loc(7)),
      Reduce::make(ReduceOp::Sum, x, cs, 0, true, test_loc(8)),
      AtomicAdd::make(Region::whole(cs), Region{S, {mul(vr(by), i64(32))}, {i64(32)}}, test_loc(9)),
      Parallel::make({i, j}, {i64(16), i64(32)}, epilogue, test_loc(10)),
  });
  return k;
}

} // namespace tilegen::testing
