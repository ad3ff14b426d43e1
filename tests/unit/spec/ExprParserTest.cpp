// ExprParser: precedence, associativity, locations, syntax errors and limits.
#include "spec/ExprParser.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tilegen;
using namespace tilegen::spec;

namespace {

// Prints an SExpr as an s-expression, to compare tree shapes.
std::string sexp(const SExprPtr& e) {
  std::ostringstream o;
  switch (e->kind) {
  case EKind::Int:
    o << e->ival;
    break;
  case EKind::Float:
    o << e->fval;
    break;
  case EKind::Bool:
    o << (e->bval ? "true" : "false");
    break;
  case EKind::Name:
    o << e->name;
    break;
  case EKind::Index:
  case EKind::Call:
    o << (e->kind == EKind::Index ? "[" : "(") << e->name;
    for (const auto& a : e->args)
      o << " " << sexp(a);
    o << (e->kind == EKind::Index ? "]" : ")");
    break;
  case EKind::Unary:
    o << "(" << e->op << " " << sexp(e->args[0]) << ")";
    break;
  case EKind::Binary:
    o << "(" << e->op << " " << sexp(e->args[0]) << " " << sexp(e->args[1]) << ")";
    break;
  case EKind::Ternary:
    o << "(? " << sexp(e->args[0]) << " " << sexp(e->args[1]) << " " << sexp(e->args[2]) << ")";
    break;
  }
  return o.str();
}

struct Fixture {
  std::ostringstream out;
  DiagEngine diag{out};
  std::shared_ptr<const std::string> file = diag.add_source("e", "");
  // Offsets in the string map to line 1, column offset + 1.
  LocMapper map = [this](size_t off, size_t len) {
    SourceLoc l;
    l.file = file;
    l.line = 1;
    l.col = static_cast<int>(off) + 1;
    l.length = static_cast<int>(len);
    return l;
  };
  SExprPtr parse(const std::string& s) { return parse_expr(s, map, diag); }
};

std::string tree(const std::string& s) {
  Fixture f;
  auto e = f.parse(s);
  return e ? sexp(e) : "ERROR: " + f.out.str();
}

std::string error_of(const std::string& s) {
  Fixture f;
  auto e = f.parse(s);
  EXPECT_EQ(e, nullptr) << s;
  return f.out.str().substr(0, f.out.str().find('\n'));
}

} // namespace

TEST(ExprParser, Precedence) {
  EXPECT_EQ(tree("1 + 2 * 3"), "(+ 1 (* 2 3))");
  EXPECT_EQ(tree("(1 + 2) * 3"), "(* (+ 1 2) 3)");
  EXPECT_EQ(tree("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(tree("a / b % c"), "(% (/ a b) c)");
  EXPECT_EQ(tree("-a * b"), "(* (- a) b)");
  EXPECT_EQ(tree("!a && b || c"), "(|| (&& (! a) b) c)");
  EXPECT_EQ(tree("a || b && c"), "(|| a (&& b c))");
  EXPECT_EQ(tree("a < b == c >= d"), "(== (< a b) (>= c d))");
  EXPECT_EQ(tree("a + b < c * d"), "(< (+ a b) (* c d))");
  EXPECT_EQ(tree("c ? x : y ? z : w"), "(? c x (? y z w))");
  EXPECT_EQ(tree("a || b ? 1 : 2"), "(? (|| a b) 1 2)");
  EXPECT_EQ(tree("m == -inf ? 0.0 : l * exp(m - n)"), "(? (== m (- inf)) 0 (* l (exp (- m n))))");
}

// Bitwise operators at C's levels: | below ^ below & below == (and above &&); shifts between
// + and <; unary ~. `&`/`|` are distinct tokens from `&&`/`||`, `<<`/`>>` from `<`, `<=`.
TEST(ExprParser, BitwisePrecedence) {
  EXPECT_EQ(tree("a | b ^ c & d"), "(| a (^ b (& c d)))");
  EXPECT_EQ(tree("a & b | c && d || e"), "(|| (&& (| (& a b) c) d) e)");
  EXPECT_EQ(tree("a & b == c"), "(& a (== b c))");
  EXPECT_EQ(tree("a << 1 < b >> 2"), "(< (<< a 1) (>> b 2))");
  EXPECT_EQ(tree("q >> 4 & 15"), "(& (>> q 4) 15)");
  EXPECT_EQ(tree("a + b << c - d"), "(<< (+ a b) (- c d))");
  EXPECT_EQ(tree("a << b << c"), "(<< (<< a b) c)");
  EXPECT_EQ(tree("~a & ~-b"), "(& (~ a) (~ (- b)))");
  EXPECT_EQ(tree("a&&b&c||d|e"), "(|| (&& a (& b c)) (| d e))");
  EXPECT_EQ(error_of("a<<=b"), "e:1:4: error: expected an expression, found '='");
  EXPECT_EQ(error_of("a >>= 1"), "e:1:5: error: expected an expression, found '='");
}

TEST(ExprParser, Bitcast) {
  EXPECT_EQ(tree("bitcast<f32>(x) + 1"), "(+ (bitcast x) 1)");
  EXPECT_EQ(tree("bitcast<i32>(bitcast<f32>(w)) >> 23 & 255"), "(& (>> (bitcast (bitcast w)) 23) 255)");
  Fixture f;
  auto e = f.parse("bitcast<i32>(x)");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->op, "i32");
  EXPECT_EQ(e->op_loc.col, 9); // the type
  EXPECT_EQ(e->loc.length, 15);
  EXPECT_EQ(error_of("bitcast<(x)"), "e:1:9: error: expected a type after 'bitcast<', found '('");
  EXPECT_EQ(error_of("bitcast<f32(x)"), "e:1:12: error: expected '>' after 'bitcast<f32', found '('");
  EXPECT_EQ(error_of("bitcast<f32>x"), "e:1:13: error: expected '(' after 'bitcast<f32>', found 'x'");
  EXPECT_EQ(error_of("bitcast<f32>>(x)"), "e:1:12: error: expected '>' after 'bitcast<f32', found '>>'");
}

TEST(ExprParser, LiteralsCallsAndIndexing) {
  EXPECT_EQ(tree("A[by * BM, k * BK]"), "[A (* by BM) (* k BK)]");
  EXPECT_EQ(tree("cdiv(K, BK)"), "(cdiv K BK)");
  EXPECT_EQ(tree("max(m[i], m_blk[i])"), "(max [m i] [m_blk i])");
  EXPECT_EQ(tree("1e-5"), "1e-05");
  EXPECT_EQ(tree("2.5E3"), "2500");
  EXPECT_EQ(tree(".5"), "0.5");
  EXPECT_EQ(tree("true && false"), "(&& true false)");
  EXPECT_EQ(tree("9223372036854775807"), "9223372036854775807");
  EXPECT_EQ(tree("f32(x) + bf16(y)"), "(+ (f32 x) (bf16 y))");
}

TEST(ExprParser, Locations) {
  Fixture f;
  auto e = f.parse("a + max(bb, 3)");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->loc.col, 1);
  EXPECT_EQ(e->loc.length, 14); // the whole expression
  EXPECT_EQ(e->op_loc.col, 3);  // '+'
  const auto& call = e->args[1];
  EXPECT_EQ(call->op_loc.col, 5); // 'max'
  EXPECT_EQ(call->op_loc.length, 3);
  EXPECT_EQ(call->args[0]->loc.col, 9); // 'bb'
  EXPECT_EQ(call->args[0]->loc.length, 2);
  EXPECT_EQ(call->text(), "max(bb, 3)");
  // Parentheses belong to the parent's range.
  auto p = f.parse("(a + b) * c");
  EXPECT_EQ(p->text(), "(a + b) * c");
}

TEST(ExprParser, SyntaxErrorsAreLocatedAtTheOffendingToken) {
  EXPECT_EQ(error_of("cdiv(N, BN"), "e:1:11: error: expected ',' or ')', found end of expression");
  EXPECT_EQ(error_of("(a + b"), "e:1:7: error: expected ')', found end of expression");
  EXPECT_EQ(error_of("a + * b"), "e:1:5: error: expected an expression, found '*'");
  EXPECT_EQ(error_of("a b"), "e:1:3: error: unexpected 'b' after expression");
  EXPECT_EQ(error_of("a @ b"), "e:1:3: error: unexpected character '@' in expression");
  EXPECT_EQ(error_of("0.5f"), "e:1:1: error: invalid number '0.5f'");
  EXPECT_EQ(error_of("1.2.3"), "e:1:1: error: invalid number '1.2.3'");
  EXPECT_EQ(error_of(""), "e:1:1: error: empty expression");
  EXPECT_EQ(error_of("   "), "e:1:1: error: empty expression");
  EXPECT_EQ(error_of("A[]"), "e:1:3: error: expected an expression before ']'");
  EXPECT_EQ(error_of("c ? a"), "e:1:6: error: expected ':' in conditional expression, found end "
                               "of expression");
  EXPECT_EQ(error_of("9223372036854775808"),
            "e:1:1: error: integer literal '9223372036854775808' is too large (the limit is "
            "2^63-1)");
  EXPECT_EQ(error_of("1e999"), "e:1:1: error: float literal '1e999' is out of range");
  EXPECT_EQ(error_of("a = b"), "e:1:3: error: unexpected '=' after expression");
}

TEST(ExprParser, NoteOnUnclosedBracket) {
  Fixture f;
  EXPECT_FALSE(f.parse("A[i, j"));
  EXPECT_NE(f.out.str().find("e:1:2: note: to match this '['"), std::string::npos) << f.out.str();
}

TEST(ExprParser, NestingLimits) {
  std::string deep = std::string(100000, '(') + "x" + std::string(100000, ')');
  EXPECT_NE(error_of(deep).find("is too long"), std::string::npos);
  std::string parens = std::string(300, '(') + "x" + std::string(300, ')');
  EXPECT_NE(error_of(parens).find("nested too deeply"), std::string::npos);
  std::string minus(1000, '-');
  EXPECT_NE(error_of(minus + "x").find("nested too deeply"), std::string::npos);
  // Depth counts nesting, not terms: a long left-associative chain is one level (the length
  // limit bounds it), and its text is shared, not copied into every node.
  std::string chain = "1";
  for (int i = 0; i < 8000; ++i)
    chain += "+1";
  Fixture f;
  auto e = f.parse(chain);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->text().size(), chain.size());
  EXPECT_EQ(e->args[0]->text(), chain.substr(0, chain.size() - 2));
  EXPECT_EQ(e->args[0]->source, e->source);
  std::string ok = std::string(100, '(') + "x" + std::string(100, ')');
  EXPECT_EQ(tree(ok), "x");
}

TEST(ExprParser, Statements) {
  Fixture f;
  SStmt s;
  ASSERT_TRUE(parse_stmt("x[i, j] += a * 2", f.map, f.diag, s));
  EXPECT_EQ(s.kind, SStmt::Kind::AddAssign);
  EXPECT_EQ(sexp(s.target), "[x i j]");
  EXPECT_EQ(sexp(s.value), "(* a 2)");
  SStmt l;
  ASSERT_TRUE(parse_stmt("let m_new = max(a, b)", f.map, f.diag, l));
  EXPECT_EQ(l.kind, SStmt::Kind::Let);
  EXPECT_EQ(l.let_name, "m_new");
  EXPECT_EQ(l.let_loc.col, 5);
  SStmt bad;
  EXPECT_FALSE(parse_stmt("x[i] == 1", f.map, f.diag, bad));
  EXPECT_NE(f.out.str().find("e:1:6: error: expected '=' or '+=' in statement, found '=='"),
            std::string::npos);
  EXPECT_FALSE(parse_stmt("let = 1", f.map, f.diag, bad));
  EXPECT_FALSE(parse_stmt("1 + x = 2", f.map, f.diag, bad));
  EXPECT_FALSE(parse_stmt("x[i] = ", f.map, f.diag, bad));
}

TEST(ExprParser, Identifiers) {
  EXPECT_TRUE(is_identifier("A_s"));
  EXPECT_TRUE(is_identifier("_x9"));
  EXPECT_FALSE(is_identifier("9x"));
  EXPECT_FALSE(is_identifier("a-b"));
  EXPECT_FALSE(is_identifier(""));
  EXPECT_TRUE(is_reserved_name("exp"));
  EXPECT_TRUE(is_reserved_name("bf16"));
  EXPECT_TRUE(is_reserved_name("inf"));
  EXPECT_TRUE(is_reserved_name("let"));
  EXPECT_FALSE(is_reserved_name("BM"));
}
