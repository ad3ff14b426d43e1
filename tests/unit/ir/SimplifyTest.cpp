#include "ir/IRPrinter.h"
#include "ir/Simplify.h"

#include "emit/TestKernels.h"

#include <gtest/gtest.h>

using namespace tilegen::ir;
using namespace tilegen::testing;

namespace {

VarPtr x_var() {
  static VarPtr x = make_var("x", VarKind::Dim, DType::i64());
  return x;
}
Expr x() { return VarRef::make(x_var()); }
Expr bin(BinaryOp op, Expr a, Expr b) { return Binary::make(op, a, b); }
std::string s(const Expr& e) { return to_string(simplify(e)); }

TEST(Simplify, FoldsIntegerArithmetic) {
  EXPECT_EQ(s(bin(BinaryOp::Add, i64(2), mul(i64(3), i64(4)))), "14");
  EXPECT_EQ(s(bin(BinaryOp::Sub, i64(2), i64(5))), "-3");
  EXPECT_EQ(s(cdiv(i64(1000), i64(64))), "16");
  EXPECT_EQ(s(cdiv(i64(1024), i64(64))), "16");
  EXPECT_EQ(s(cdiv(i64(0), i64(64))), "0");
  EXPECT_EQ(s(bin(BinaryOp::Min, i64(3), i64(-7))), "-7");
  EXPECT_EQ(s(bin(BinaryOp::Max, i64(3), i64(-7))), "3");
}

TEST(Simplify, DivisionIsFloorDivision) {
  EXPECT_EQ(s(bin(BinaryOp::Div, i64(7), i64(2))), "3");
  EXPECT_EQ(s(bin(BinaryOp::Div, i64(-7), i64(2))), "-4");
  EXPECT_EQ(s(bin(BinaryOp::Mod, i64(-7), i64(2))), "1");
  EXPECT_EQ(s(bin(BinaryOp::Mod, i64(7), i64(-2))), "-1");
}

TEST(Simplify, NeverFoldsUndefinedOrOverflowingResults) {
  EXPECT_EQ(s(bin(BinaryOp::Div, i64(7), i64(0))), "7 / 0");
  EXPECT_EQ(s(bin(BinaryOp::Mod, i64(7), i64(0))), "7 % 0");
  EXPECT_EQ(s(bin(BinaryOp::Add, i64(INT64_MAX), i64(1))), "9223372036854775807 + 1");
  EXPECT_EQ(s(mul(i64(INT64_MAX / 2 + 1), i64(2))), "4611686018427387904 * 2");
  EXPECT_EQ(s(bin(BinaryOp::Div, i64(INT64_MIN), i64(-1))), "-9223372036854775808 / -1");
  auto i32max = IntImm::make(DType::i32(), INT32_MAX);
  EXPECT_EQ(simplify(bin(BinaryOp::Add, i32max, IntImm::make(DType::i32(), 1)))->kind,
            ExprKind::Binary);
  EXPECT_EQ(simplify(Unary::make(UnaryOp::Neg, i64(INT64_MIN)))->kind, ExprKind::Unary);
}

// docs/spec.md "Unsigned integers": unsigned constants fold modulo 2^n (no overflow to refuse),
// with logical shifts, C's / and % (a zero divisor is left to run time) and unsigned compares.
TEST(Simplify, FoldsUnsignedModulo2n) {
  auto u32 = [](int64_t v) { return IntImm::make(DType::u32(), v); };
  auto u64 = [](int64_t v) { return IntImm::make(DType::u64(), v); };
  EXPECT_EQ(s(bin(BinaryOp::Sub, u32(0), u32(1))), "u32(4294967295)");
  EXPECT_EQ(s(bin(BinaryOp::Add, u32(4294967295), u32(2))), "u32(1)");
  EXPECT_EQ(s(mul(u32(65536), u32(65536))), "u32(0)");
  EXPECT_EQ(s(bin(BinaryOp::Sub, u64(0), u64(1))), "u64(18446744073709551615)");
  EXPECT_EQ(s(mul(u64(INT64_MIN), u64(2))), "u64(0)");
  EXPECT_EQ(s(bin(BinaryOp::Shr, u32(4294967295), u32(28))), "u32(15)"); // logical
  EXPECT_EQ(s(bin(BinaryOp::Shl, u32(4294967295), u32(28))), "u32(4026531840)");
  EXPECT_EQ(s(bin(BinaryOp::Shr, u32(8), u32(32))), "u32(0)");
  EXPECT_EQ(s(bin(BinaryOp::Shr, u64(-1), u64(63))), "u64(1)");
  EXPECT_EQ(s(bin(BinaryOp::Div, u64(-2), u64(3))), "u64(6148914691236517204)");
  EXPECT_EQ(s(bin(BinaryOp::Mod, u32(7), u32(0))), "u32(7) % u32(0)");
  EXPECT_EQ(s(bin(BinaryOp::Lt, u64(1), u64(-1))), "true"); // 1 < 2^64 - 1
  EXPECT_EQ(s(Unary::make(UnaryOp::BitNot, u32(0))), "u32(4294967295)");
  EXPECT_EQ(s(Unary::make(UnaryOp::Neg, u32(1))), "u32(4294967295)");
  // Conversions wrap between any two integer types, both ways.
  EXPECT_EQ(s(Cast::make(DType::u8(), i64(300))), "u8(44)");
  EXPECT_EQ(s(Cast::make(DType::u32(), i64(-1))), "u32(4294967295)");
  EXPECT_EQ(s(Cast::make(DType::i32(), u32(4294967295))), "-1");
  EXPECT_EQ(s(Cast::make(DType::i64(), u64(-1))), "-1");
  EXPECT_EQ(to_string(simplify(Cast::make(DType::f64(), u64(-1)))), "1.8446744073709552e+19");
}

// docs/spec.md "Bitwise operators": the folding every backend's generated code agrees with.
TEST(Simplify, FoldsBitwiseOperatorsForEveryShiftCount) {
  EXPECT_EQ(s(bin(BinaryOp::BitAnd, i64(-1), i64(0xF0))), "240");
  EXPECT_EQ(s(bin(BinaryOp::BitOr, i64(0x0F), i64(0xF0))), "255");
  EXPECT_EQ(s(bin(BinaryOp::BitXor, i64(-1), i64(5))), "-6");
  EXPECT_EQ(s(Unary::make(UnaryOp::BitNot, i64(0))), "-1");
  EXPECT_EQ(s(bin(BinaryOp::Shl, i64(1), i64(63))), "-9223372036854775808");
  EXPECT_EQ(s(bin(BinaryOp::Shl, i64(1), i64(64))), "0");
  EXPECT_EQ(s(bin(BinaryOp::Shl, i64(3), i64(-1))), "0");
  EXPECT_EQ(s(bin(BinaryOp::Shr, i64(-8), i64(1))), "-4");
  EXPECT_EQ(s(bin(BinaryOp::Shr, i64(-8), i64(100))), "-1");
  EXPECT_EQ(s(bin(BinaryOp::Shr, i64(8), i64(-3))), "0");
  auto i32 = [](int64_t v) { return IntImm::make(DType::i32(), v); };
  auto i8 = [](int64_t v) { return IntImm::make(DType::i8(), v); };
  EXPECT_EQ(s(bin(BinaryOp::Shl, i32(0x12345678), i32(4))), "591751040"); // 0x23456780: wraps
  EXPECT_EQ(s(bin(BinaryOp::Shl, i32(1), i32(31))), "-2147483648");
  EXPECT_EQ(s(bin(BinaryOp::Shl, i32(1), i32(32))), "0");
  EXPECT_EQ(s(bin(BinaryOp::Shr, i32(-1), i32(40))), "-1");
  EXPECT_EQ(s(bin(BinaryOp::Shl, i8(0x10), i8(4))), "0"); // 0x100 wraps to 8 bits
  EXPECT_EQ(s(bin(BinaryOp::Shl, i8(0x0F), i8(4))), "-16");
  EXPECT_EQ(s(bin(BinaryOp::Shl, i8(1), i8(8))), "0");
  // x & 0 and friends are left alone (no identities), but stay typed.
  EXPECT_EQ(s(bin(BinaryOp::BitAnd, x(), i64(15))), "x & 15");
  EXPECT_EQ(s(bin(BinaryOp::BitAnd, bin(BinaryOp::Shr, x(), i64(4)), i64(15))), "x >> 4 & 15");
}

TEST(Simplify, Identities) {
  EXPECT_EQ(s(bin(BinaryOp::Add, x(), i64(0))), "x");
  EXPECT_EQ(s(bin(BinaryOp::Add, i64(0), x())), "x");
  EXPECT_EQ(s(bin(BinaryOp::Sub, x(), i64(0))), "x");
  EXPECT_EQ(s(mul(x(), i64(1))), "x");
  EXPECT_EQ(s(mul(i64(1), x())), "x");
  EXPECT_EQ(s(mul(x(), i64(0))), "0");
  EXPECT_EQ(s(cdiv(x(), i64(1))), "x");
  EXPECT_EQ(s(bin(BinaryOp::Mod, x(), i64(1))), "0");
  Expr same = x();
  EXPECT_EQ(s(bin(BinaryOp::Max, same, same)), "x");
  // Not identities for floats: x + 0.0 (x = -0.0) and x * 0.0 (x = inf, nan) stay.
  auto f = make_var("f", VarKind::Scalar, DType::f32());
  EXPECT_EQ(s(bin(BinaryOp::Add, VarRef::make(f), make_f32(0.0))), "f + 0.0");
  EXPECT_EQ(s(mul(VarRef::make(f), make_f32(0.0))), "f * 0.0");
  EXPECT_EQ(s(mul(VarRef::make(f), make_f32(1.0))), "f");
}

TEST(Simplify, ComparisonsLogicAndSelect) {
  EXPECT_EQ(s(bin(BinaryOp::Lt, i64(2), i64(3))), "true");
  EXPECT_EQ(s(bin(BinaryOp::Ge, i64(2), i64(3))), "false");
  EXPECT_EQ(s(bin(BinaryOp::Eq, make_f32(NAN), make_f32(NAN))), "false");
  auto c = bin(BinaryOp::Lt, x(), i64(3));
  EXPECT_EQ(s(bin(BinaryOp::And, BoolImm::make(true), c)), "x < 3");
  EXPECT_EQ(s(bin(BinaryOp::And, c, BoolImm::make(false))), "false");
  EXPECT_EQ(s(bin(BinaryOp::Or, c, BoolImm::make(true))), "true");
  EXPECT_EQ(s(Unary::make(UnaryOp::Not, BoolImm::make(true))), "false");
  EXPECT_EQ(s(Select::make(bin(BinaryOp::Gt, i64(4), i64(3)), x(), i64(7))), "x");
  EXPECT_EQ(s(Select::make(BoolImm::make(false), x(), i64(7))), "7");
}

TEST(Simplify, CastsOfConstants) {
  EXPECT_EQ(s(Cast::make(DType::f32(), i64(3))), "3.0");
  EXPECT_EQ(s(Cast::make(DType::i32(), make_f32(-2.75))), "-2");
  EXPECT_EQ(s(Cast::make(DType::boolean(), i64(2))), "true");
  // Out of range for i8: not folded.
  EXPECT_EQ(simplify(Cast::make(DType::i8(), i64(300)))->kind, ExprKind::Cast);
  // Rounded exactly as the generated code rounds: 1 + 2^-9 is not a bf16; ties to even.
  auto v = simplify(Cast::make(DType::bf16(), make_f32(1.0 + 1.0 / 512)));
  ASSERT_TRUE(v->as<FloatImm>());
  EXPECT_EQ(v->as<FloatImm>()->value, 1.0);
  auto h = simplify(Cast::make(DType::f16(), make_f32(65520.0)));
  EXPECT_TRUE(std::isinf(h->as<FloatImm>()->value));
  EXPECT_EQ(s(Unary::make(UnaryOp::Neg, FloatImm::make(DType::f32(), INFINITY))), "-inf");
}

TEST(Simplify, StatementsWithConstantConditions) {
  auto buf = make_buffer("t", MemScope::Local, DType::f32(), {i64(4)});
  auto fill = Fill::make(buf, make_f32(1.0));
  auto iff = IfThenElse::make(bin(BinaryOp::Lt, i64(1), i64(2)), fill, nullptr);
  EXPECT_EQ(simplify(iff), fill);
  auto dead = IfThenElse::make(bin(BinaryOp::Gt, i64(1), i64(2)), fill, nullptr);
  auto r = simplify(dead);
  ASSERT_TRUE(r->as<Seq>());
  EXPECT_TRUE(r->as<Seq>()->stmts.empty());
  auto k = make_var("k", VarKind::LoopVar, DType::i64());
  auto loop = For::make(k, i64(0), cdiv(i64(0), i64(64)), nullptr, fill);
  EXPECT_TRUE(simplify(loop)->as<Seq>());
}

TEST(Simplify, UnchangedTreesAreShared) {
  auto e = bin(BinaryOp::Add, x(), mul(x(), i64(3)));
  EXPECT_EQ(simplify(e), e);
}

TEST(Simplify, ConstIntHelpers) {
  EXPECT_EQ(as_const_int(mul(i64(6), i64(7))), 42);
  EXPECT_FALSE(as_const_int(x()).has_value());
  EXPECT_TRUE(is_const_int(cdiv(i64(9), i64(4)), 3));
}

} // namespace
