#include "ir/IRPrinter.h"

#include "emit/TestKernels.h"

#include <gtest/gtest.h>

using namespace tilegen::ir;
using namespace tilegen::testing;

namespace {

VarPtr var(const char* n) { return make_var(n, VarKind::Dim, DType::i64()); }

TEST(Printer, MinimalParentheses) {
  auto a = vr(var("a")), b = vr(var("b")), c = vr(var("c"));
  EXPECT_EQ(to_string(mul(add(a, b), c)), "(a + b) * c");
  EXPECT_EQ(to_string(add(mul(a, b), c)), "a * b + c");
  EXPECT_EQ(to_string(sub(a, sub(b, c))), "a - (b - c)");
  EXPECT_EQ(to_string(sub(sub(a, b), c)), "a - b - c");
  EXPECT_EQ(to_string(cdiv(add(a, b), i64(64))), "cdiv(a + b, 64)");
  auto cond = Binary::make(BinaryOp::Lt, a, b);
  auto sel = Select::make(cond, a, Select::make(cond, b, c));
  EXPECT_EQ(to_string(sel), "a < b ? a : a < b ? b : c");
  EXPECT_EQ(to_string(Select::make(cond, sel, c)), "a < b ? (a < b ? a : a < b ? b : c) : c");
  EXPECT_EQ(to_string(Unary::make(UnaryOp::Neg, Unary::make(UnaryOp::Neg, a))), "- -a");
  EXPECT_EQ(to_string(mul(a, i64(-3))), "a * -3");
}

TEST(Printer, Literals) {
  EXPECT_EQ(float_literal(1.0, DType::f32()), "1.0");
  EXPECT_EQ(float_literal(0.1f, DType::f32()), "0.1");
  EXPECT_EQ(float_literal(0.1, DType::f64()), "0.1");
  EXPECT_EQ(float_literal(1e-5f, DType::f32()), "1e-05");
  EXPECT_EQ(float_literal(INFINITY, DType::f32()), "inf");
  EXPECT_EQ(float_literal(-INFINITY, DType::f32()), "-inf");
  EXPECT_EQ(float_literal(NAN, DType::f32()), "nan");
  EXPECT_EQ(float_literal(0.44269504088896340736, DType::f64()), "0.4426950408889634");
  EXPECT_EQ(to_string(Cast::make(DType::bf16(), make_f32(0.5))), "bf16(0.5)");
}

TEST(Printer, GemmKernelIsReadableAndDeterministic) {
  std::string t1 = to_string(make_gemm_kernel(DType::bf16()));
  std::string t2 = to_string(make_gemm_kernel(DType::bf16()));
  EXPECT_EQ(t1, t2);
  for (const char* line : {"kernel gemm<T=bf16>\n", "tensor A: bf16[M, K] read\n",
                           "tile_const BM: {32, 64, 128, 256} c: {64, 96, 128}\n",
                           "require BM * BN >= 64 * 64\n", "grid bx < cdiv(N, BN)\n",
                           "  shared A_s: bf16[BM, BK]\n", "  fill acc = 0.0\n",
                           "  for k in [0, cdiv(K, BK)) pipelined(stages=stages) {\n",
                           "    copy A[by * BM, k * BK : BMxBK] -> A_s pad 0.0\n",
                           "    gemm acc += A_s @ B_s\n",
                           "  copy acc -> C[by * BM, bx * BN : BMxBN]\n"})
    EXPECT_NE(t1.find(line), std::string::npos) << line << "\nin:\n" << t1;
}

TEST(Printer, SoftmaxStatements) {
  std::string t = to_string(make_softmax_kernel(DType::f32()));
  for (const char* line : {"  fill m = -inf\n", "    reduce max x dim=1 -> m_blk\n",
                           "    reduce sum x dim=1 -> l (accumulate)\n",
                           "    parallel i in [0, BM) {\n",
                           "      let m_new: f32 = max(m[i], m_blk[i])\n",
                           "      l[i] = m_new == -inf ? 0.0 : l[i] * exp(m[i] - m_new)\n",
                           "    parallel i in [0, BM), j in [0, BN) {\n"})
    EXPECT_NE(t.find(line), std::string::npos) << line << "\nin:\n" << t;
}

TEST(Printer, Locations) {
  Kernel k = make_gemm_kernel(DType::f32(), true);
  std::string t = to_string(k.body, PrintOptions{true});
  EXPECT_NE(t.find("gemm acc += A_s @ B_s^T  # test.yaml:33:3"), std::string::npos) << t;
}

} // namespace
