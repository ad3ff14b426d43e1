// Expression printing of the C dialect: precedence, literals, casts, helpers.
#include "emit/CEmitter.h"

#include "emit/TestKernels.h"
#include "support/InternalError.h"

#include <gtest/gtest.h>

using namespace tilegen;
using namespace tilegen::ir;
using namespace tilegen::testing;

namespace {

// Exposes the protected printer of the C dialect for expressions without loads.
class Probe : public emit::CFamilyPrinter {
public:
  using CFamilyPrinter::helpers_;
  std::string load(const Load* l, int& prec) { return print_load(l, prec); }

protected:
  std::string print_load(const Load* l, int&) override { return l->buffer->name + "[...]"; }
};

VarPtr v(const char* n, DType t = DType::i64()) { return make_var(n, VarKind::Dim, t); }

TEST(CFamilyPrinter, PrecedenceAndCalls) {
  Probe p;
  auto a = vr(v("a")), b = vr(v("b")), c = vr(v("c"));
  EXPECT_EQ(p.expr(mul(add(a, b), c)), "(a + b) * c");
  EXPECT_EQ(p.expr(sub(a, add(b, c))), "a - (b + c)");
  EXPECT_EQ(p.expr(cdiv(a, i64(64))), "tg_cdiv_i64(a, 64)");
  // A divisor that is not a constant > 0 takes the helpers defined for every divisor (a / 0 =
  // 0, INT64_MIN / -1 wraps); a positive constant the plain ones.
  EXPECT_EQ(p.expr(Binary::make(BinaryOp::Div, a, b)), "tg_floordiv_any_i64(a, b)");
  EXPECT_EQ(p.expr(Binary::make(BinaryOp::Mod, a, b)), "tg_floormod_any_i64(a, b)");
  EXPECT_EQ(p.expr(cdiv(a, b)), "tg_cdiv_any_i64(a, b)");
  EXPECT_EQ(p.expr(Binary::make(BinaryOp::Div, a, i64(-1))), "tg_floordiv_any_i64(a, -1)");
  EXPECT_EQ(p.expr(Binary::make(BinaryOp::Mod, a, i64(8))), "tg_floormod_i64(a, 8)");
  EXPECT_TRUE(p.helpers_.count("tg_cdiv_i64") && p.helpers_.count("tg_floormod_i64") &&
              p.helpers_.count("tg_floormod_any_i64"));
  auto cond = Binary::make(BinaryOp::And, Binary::make(BinaryOp::Lt, a, b),
                           Binary::make(BinaryOp::Or, BoolImm::make(true), BoolImm::make(false)));
  EXPECT_EQ(p.expr(cond), "a < b && (true || false)");
  EXPECT_EQ(p.expr(Select::make(cond, a, Select::make(cond, b, c))),
            "a < b && (true || false) ? a : a < b && (true || false) ? b : c");
  EXPECT_EQ(p.expr(Unary::make(UnaryOp::Neg, i64(-3))), "-(-3)");
  EXPECT_EQ(p.expr(mul(a, i64(5000000000))), "a * INT64_C(5000000000)");
  EXPECT_EQ(p.expr(IntImm::make_named(DType::i64(), 128, "BM")), "BM");
  // Spec names print unchanged: the front end refuses C keywords and the names of the headers
  // (docs/spec.md, "Reserved names"), so one reaching the printer is a bug, not a rename.
  EXPECT_EQ(p.expr(vr(v("expf_"))), "expf_");
  EXPECT_THROW(p.expr(vr(v("int"))), InternalError);
  EXPECT_THROW(p.expr(vr(v("expf"))), InternalError);
}

TEST(CFamilyPrinter, FloatLiteralsAndMath) {
  Probe p;
  auto x = vr(v("x", DType::f32()));
  EXPECT_EQ(p.expr(make_f32(1.0)), "1.0f");
  EXPECT_EQ(p.expr(make_f32(1e-5)), "1e-05f");
  EXPECT_EQ(p.expr(FloatImm::make(DType::f64(), 0.1)), "0.1");
  EXPECT_EQ(p.expr(make_f32(INFINITY)), "INFINITY");
  EXPECT_EQ(p.expr(make_f32(-INFINITY)), "-INFINITY");
  EXPECT_EQ(p.expr(make_f32(NAN)), "NAN");
  EXPECT_EQ(p.expr(sub(x, make_f32(-INFINITY))), "x - -INFINITY");
  EXPECT_EQ(p.expr(Call::make(Intrinsic::Exp, {x})), "tg_exp_f32(x)");
  EXPECT_EQ(p.expr(Call::make(Intrinsic::Rsqrt, {x})), "1.0f / sqrtf(x)");
  EXPECT_EQ(p.expr(mul(Call::make(Intrinsic::Rsqrt, {x}), x)), "1.0f / sqrtf(x) * x");
  EXPECT_EQ(p.expr(mul(x, Call::make(Intrinsic::Rsqrt, {x}))), "x * (1.0f / sqrtf(x))");
  EXPECT_EQ(p.expr(Binary::make(BinaryOp::Max, x, make_f32(0.0))), "tg_max_f32(x, 0.0f)");
  EXPECT_EQ(p.expr(Call::make(Intrinsic::Exp, {FloatImm::make(DType::f64(), 1.0)})), "exp(1.0)");
}

TEST(CFamilyPrinter, Casts) {
  Probe p;
  auto x = vr(v("x", DType::f32()));
  auto n = vr(v("n"));
  EXPECT_EQ(p.expr(Cast::make(DType::bf16(), x)), "tg_round_bf16(x)");
  EXPECT_EQ(p.expr(Cast::make(DType::f16(), n)), "tg_round_f16((float)n)");
  EXPECT_EQ(p.expr(Cast::make(DType::f32(), Cast::make(DType::bf16(), x))), "tg_round_bf16(x)");
  EXPECT_EQ(p.expr(Cast::make(DType::i32(), add(x, x))), "(int32_t)(x + x)");
  EXPECT_EQ(p.expr(Cast::make(DType::f32(), n)), "(float)n");
  EXPECT_EQ(p.expr(Cast::make(DType::boolean(), n)), "(n != 0)");
}

} // namespace
