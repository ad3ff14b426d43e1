// passes/RangeAnalysis: property tests against a reference evaluator (every value of random
// expressions lies inside the computed interval; symbolic tile bounds contain every point and
// are attained for affine expressions; a tile predicate that holds implies the condition's
// value at every point, and for affine comparisons holds exactly when it should), plus the
// attention mask's predicates spelled out.
#include "passes/RangeAnalysis.h"

#include "ir/IRPrinter.h"
#include "ir/Simplify.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <random>

using namespace tilegen;
using namespace tilegen::ir;
using namespace tilegen::passes;

namespace {

using Values = std::map<const Var*, int64_t>;

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// The IR's integer semantics (docs/ir.md): floor division and modulo, cdiv rounds up.
int64_t eval(const Expr& e, const Values& v) {
  switch (e->kind) {
  case ExprKind::IntImm: return e->as<IntImm>()->value;
  case ExprKind::BoolImm: return e->as<BoolImm>()->value ? 1 : 0;
  case ExprKind::VarRef: return v.at(e->as<VarRef>()->var.get());
  case ExprKind::Unary: {
    auto* u = e->as<Unary>();
    int64_t a = eval(u->a, v);
    return u->op == UnaryOp::Neg ? -a : !a;
  }
  case ExprKind::Select: {
    auto* s = e->as<Select>();
    return eval(s->cond, v) ? eval(s->t, v) : eval(s->f, v);
  }
  case ExprKind::Cast: return eval(e->as<Cast>()->value, v);
  case ExprKind::Binary: {
    auto* b = e->as<Binary>();
    int64_t x = eval(b->a, v), y = eval(b->b, v);
    switch (b->op) {
    case BinaryOp::Add: return x + y;
    case BinaryOp::Sub: return x - y;
    case BinaryOp::Mul: return x * y;
    case BinaryOp::Div: return floor_div(x, y);
    case BinaryOp::Mod: return x - floor_div(x, y) * y;
    case BinaryOp::CeilDiv: return -floor_div(-x, y);
    case BinaryOp::Min: return std::min(x, y);
    case BinaryOp::Max: return std::max(x, y);
    case BinaryOp::Eq: return x == y;
    case BinaryOp::Ne: return x != y;
    case BinaryOp::Lt: return x < y;
    case BinaryOp::Le: return x <= y;
    case BinaryOp::Gt: return x > y;
    case BinaryOp::Ge: return x >= y;
    case BinaryOp::And: return x && y;
    case BinaryOp::Or: return x || y;
    }
    break;
  }
  default: break;
  }
  ADD_FAILURE() << "cannot evaluate " << to_string(e);
  return 0;
}

Expr vr(const VarPtr& v) { return VarRef::make(v); }
Expr c(int64_t v) { return make_i64(v); }
Expr bin(BinaryOp op, Expr a, Expr b) { return Binary::make(op, std::move(a), std::move(b)); }

// Four variables: two tile vars (i, j) and two outer ones (k a loop index, S a dim).
struct Vars {
  VarPtr i = make_var("i", VarKind::ParallelVar, DType::i64());
  VarPtr j = make_var("j", VarKind::ParallelVar, DType::i64());
  VarPtr k = make_var("k", VarKind::LoopVar, DType::i64());
  VarPtr S = make_var("S", VarKind::Dim, DType::i64());
  std::vector<VarPtr> all() const { return {i, j, k, S}; }
};

// Random integer expressions; `affine` restricts to sums of constant multiples.
struct Gen {
  std::mt19937 rng{12345};
  const Vars& v;
  bool affine = false;

  explicit Gen(const Vars& vars) : v(vars) {}
  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  Expr leaf() {
    auto all = v.all();
    return pick(0, 4) == 0 ? c(pick(-9, 9)) : vr(all[pick(0, 3)]);
  }
  Expr expr(int depth) {
    if (depth == 0)
      return leaf();
    int n = affine ? 4 : 11;
    switch (pick(0, n)) {
    case 0: return bin(BinaryOp::Add, expr(depth - 1), expr(depth - 1));
    case 1: return bin(BinaryOp::Sub, expr(depth - 1), expr(depth - 1));
    case 2: return bin(BinaryOp::Mul, expr(depth - 1), c(pick(-4, 4)));
    case 3: return Unary::make(UnaryOp::Neg, expr(depth - 1));
    case 4: return leaf();
    case 5: return bin(BinaryOp::Mul, expr(depth - 1), expr(depth - 1));
    case 6: return bin(BinaryOp::Div, expr(depth - 1), c(pick(1, 5)));
    case 7: return bin(BinaryOp::Mod, expr(depth - 1), c(pick(1, 5)));
    case 8: return bin(BinaryOp::CeilDiv, expr(depth - 1), c(pick(1, 5)));
    case 9: return bin(pick(0, 1) ? BinaryOp::Min : BinaryOp::Max, expr(depth - 1), expr(depth - 1));
    case 10:
      return Select::make(bin(BinaryOp::Lt, expr(depth - 1), expr(depth - 1)), expr(depth - 1),
                          expr(depth - 1));
    default: return bin(BinaryOp::Div, expr(depth - 1), vr(v.S)); // divisor may be 0: skipped
    }
  }
  Expr cond(int depth) {
    static const BinaryOp cmp[] = {BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt,
                                   BinaryOp::Ge, BinaryOp::Eq, BinaryOp::Ne};
    switch (depth == 0 ? 0 : pick(0, 3)) {
    case 1: return bin(BinaryOp::And, cond(depth - 1), cond(depth - 1));
    case 2: return bin(BinaryOp::Or, cond(depth - 1), cond(depth - 1));
    case 3: return Unary::make(UnaryOp::Not, cond(depth - 1));
    default: return bin(cmp[pick(0, 5)], expr(2), expr(2));
    }
  }
};

bool divides_by_zero(const Expr& e, const Values& v) {
  if (auto* b = e->as<Binary>()) {
    if ((b->op == BinaryOp::Div || b->op == BinaryOp::Mod || b->op == BinaryOp::CeilDiv) &&
        eval(b->b, v) == 0)
      return true;
    return divides_by_zero(b->a, v) || divides_by_zero(b->b, v);
  }
  if (auto* u = e->as<Unary>())
    return divides_by_zero(u->a, v);
  if (auto* s = e->as<Select>())
    return divides_by_zero(s->cond, v) || divides_by_zero(s->t, v) || divides_by_zero(s->f, v);
  return false;
}

// Calls f for every assignment of the tile vars within their ranges.
void for_each_point(const TileVars& tile, Values& v, const std::function<void()>& f,
                    TileVars::const_iterator it) {
  if (it == tile.end())
    return f();
  for (int64_t x = *it->second.lo; x <= *it->second.hi; ++x) {
    v[it->first] = x;
    for_each_point(tile, v, f, std::next(it));
  }
}
void for_each_point(const TileVars& tile, Values& v, const std::function<void()>& f) {
  for_each_point(tile, v, f, tile.begin());
}

TEST(RangeAnalysis, IntervalBasics) {
  EXPECT_EQ(Interval::of(0, 3).hull(Interval::of(5, 9)), Interval::of(0, 9));
  EXPECT_EQ(Interval::at_least(2).intersect(Interval::of(0, 5)), Interval::of(2, 5));
  EXPECT_TRUE(Interval::of(3, 2).empty());
  EXPECT_TRUE(Interval::of(-5, 1 << 30).fits_i32());
  EXPECT_FALSE(Interval::of(0, int64_t(1) << 31).fits_i32());
  EXPECT_FALSE(Interval::at_least(0).fits_i32());
  EXPECT_EQ(Interval::at_least(0).str(), "[0, +inf)");
  EXPECT_EQ(Interval::of_type(DType::i8()), Interval::of(-128, 127));
}

TEST(RangeAnalysis, DefaultsAndKnownShapes) {
  Vars v;
  RangeEnv env;
  EXPECT_EQ(bounds_of(vr(v.S), env), Interval::at_least(0)) << "a dim is never negative";
  EXPECT_EQ(bounds_of(vr(v.k), env), Interval::everything());
  env.set(v.i.get(), Interval::of(0, 63));
  env.set(v.j.get(), Interval::of(0, 31));
  env.set(v.k.get(), Interval::of(0, 9));
  // k * 32 + j covers [0, 319]; (k * 32 + j) / 32 is k again; % 32 is j's range.
  Expr kv = bin(BinaryOp::Add, bin(BinaryOp::Mul, vr(v.k), c(32)), vr(v.j));
  EXPECT_EQ(bounds_of(kv, env), Interval::of(0, 319));
  EXPECT_EQ(bounds_of(bin(BinaryOp::Div, kv, c(32)), env), Interval::of(0, 9));
  EXPECT_EQ(bounds_of(bin(BinaryOp::Mod, kv, c(32)), env), Interval::of(0, 31));
  EXPECT_EQ(bounds_of(bin(BinaryOp::Mod, vr(v.j), c(64)), env), Interval::of(0, 31));
  EXPECT_EQ(bounds_of(bin(BinaryOp::CeilDiv, kv, c(64)), env), Interval::of(0, 5));
  // S is unbounded above: kv - S too, below.
  EXPECT_EQ(bounds_of(bin(BinaryOp::Sub, kv, vr(v.S)), env).hi, std::optional<int64_t>(319));
  EXPECT_FALSE(bounds_of(bin(BinaryOp::Sub, kv, vr(v.S)), env).lo.has_value());
  // Decided comparisons and selects.
  EXPECT_EQ(bounds_of(bin(BinaryOp::Lt, vr(v.j), c(32)), env), Interval::point(1));
  EXPECT_EQ(bounds_of(bin(BinaryOp::Ge, vr(v.j), c(32)), env), Interval::point(0));
  EXPECT_EQ(bounds_of(bin(BinaryOp::Lt, vr(v.j), c(16)), env), Interval::of(0, 1));
  EXPECT_EQ(bounds_of(Select::make(bin(BinaryOp::Lt, vr(v.j), c(32)), c(7), vr(v.S)), env),
            Interval::point(7));
  // Division by a range that holds 0 says nothing.
  EXPECT_EQ(bounds_of(bin(BinaryOp::Div, kv, vr(v.j)), env), Interval::everything());
  // A narrowing cast that may wrap gives the type's range; one that fits keeps the interval.
  EXPECT_EQ(bounds_of(Cast::make(DType::i8(), kv), env), Interval::of_type(DType::i8()));
  EXPECT_EQ(bounds_of(Cast::make(DType::i32(), kv), env), Interval::of(0, 319));
  // Bitwise: a non-negative operand of & bounds it (masks), ~x = -x - 1, the rest is unknown.
  EXPECT_EQ(bounds_of(bin(BinaryOp::BitAnd, vr(v.k), c(15)), env), Interval::of(0, 9));
  EXPECT_EQ(bounds_of(bin(BinaryOp::BitAnd, kv, c(15)), env), Interval::of(0, 15));
  EXPECT_EQ(bounds_of(bin(BinaryOp::BitAnd, vr(v.S), c(-16)), env), Interval::at_least(0));
  EXPECT_EQ(bounds_of(Unary::make(UnaryOp::BitNot, vr(v.j)), env), Interval::of(-32, -1));
  EXPECT_EQ(bounds_of(bin(BinaryOp::BitOr, vr(v.j), c(1)), env), Interval::everything());
  // x >> n for a count n >= 0 is floor(x / 2^n); a count that may be negative gives the sign
  // fill, so it says nothing.
  EXPECT_EQ(bounds_of(bin(BinaryOp::Shr, kv, c(4)), env), Interval::of(0, 19));
  EXPECT_EQ(bounds_of(bin(BinaryOp::Shr, Unary::make(UnaryOp::BitNot, vr(v.j)), c(1)), env),
            Interval::of(-16, -1));
  EXPECT_EQ(bounds_of(bin(BinaryOp::Shr, kv, c(-1)), env), Interval::everything());
  // Unbounded products saturate to unbounded, not to a wrong finite bound.
  env.set(v.S.get(), Interval::at_least(1));
  Interval sq = bounds_of(bin(BinaryOp::Mul, vr(v.S), vr(v.S)), env);
  EXPECT_EQ(sq, Interval::at_least(1));
  // ... and so do shifts of an unbounded value.
  EXPECT_EQ(bounds_of(bin(BinaryOp::Shr, vr(v.S), c(1)), env), Interval::at_least(0));
}

TEST(RangeAnalysis, KernelRangesUseDimConstraintsAndGrid) {
  Kernel k;
  DimParam m;
  m.var = make_var("M", VarKind::Dim, DType::i64());
  m.min = 1;
  m.max = 4096;
  k.dims.push_back(m);
  GridDim g;
  g.index = make_var("bx", VarKind::BlockIndex, DType::i64());
  g.extent = bin(BinaryOp::CeilDiv, vr(m.var), c(64));
  k.grid.push_back(g);
  RangeEnv env = kernel_ranges(k);
  EXPECT_EQ(env.range_of(m.var.get()), Interval::of(1, 4096));
  EXPECT_EQ(env.range_of(g.index.get()), Interval::of(0, 63));
  // bx * 64 + 63 < 2^31: the row index of this kernel fits in 32 bits.
  EXPECT_TRUE(bounds_of(bin(BinaryOp::Add, bin(BinaryOp::Mul, vr(g.index), c(64)), c(63)), env)
                  .fits_i32());
}

// body_ranges: loop and parallel variables get their bounds, and "index below its extent"
// facts decide comparisons against runtime dims that intervals alone cannot.
TEST(RangeAnalysis, BodyRangesAndPruning) {
  Kernel k;
  DimParam m, n;
  m.var = make_var("M", VarKind::Dim, DType::i64());
  n.var = make_var("N", VarKind::Dim, DType::i64());
  k.dims = {m, n};
  GridDim g;
  g.index = make_var("bx", VarKind::BlockIndex, DType::i64());
  g.extent = bin(BinaryOp::CeilDiv, vr(m.var), c(64));
  k.grid.push_back(g);
  VarPtr kv = make_var("k", VarKind::LoopVar, DType::i64());
  VarPtr j = make_var("j", VarKind::ParallelVar, DType::i64());
  BufferPtr x = make_buffer("x", MemScope::Fragment, DType::f32(), {c(32)});
  Stmt par = Parallel::make({j}, {c(32)}, Store::make(x, {vr(j)}, make_f32(0), StoreOp::Assign));
  k.body = For::make(kv, c(0), bin(BinaryOp::CeilDiv, vr(n.var), c(32)), nullptr, par);
  RangeEnv env = body_ranges(k);
  // k < cdiv(N, 32) with N up to INT64_MAX: k < 2^58, far from 32 bits.
  EXPECT_EQ(env.range_of(kv.get()), Interval::of(0, (int64_t(1) << 58) - 1));
  EXPECT_EQ(env.range_of(j.get()), Interval::of(0, 31));
  // 0 <= bx * 64 (a grid index is >= 0), bx < cdiv(M, 64) (its extent), k < cdiv(N, 32)
  // (its loop's extent) are decided; k * 32 + 31 < N is the real question.
  Expr e = bin(BinaryOp::And,
               bin(BinaryOp::And, bin(BinaryOp::Le, c(0), bin(BinaryOp::Mul, vr(g.index), c(64))),
                   bin(BinaryOp::Lt, vr(g.index), g.extent)),
               bin(BinaryOp::And, bin(BinaryOp::Gt, bin(BinaryOp::CeilDiv, vr(n.var), c(32)), vr(kv)),
                   bin(BinaryOp::Lt, bin(BinaryOp::Add, bin(BinaryOp::Mul, vr(kv), c(32)), c(31)),
                       vr(n.var))));
  EXPECT_EQ(to_string(prune_decided(e, env)), "k * 32 + 31 < N");
  EXPECT_EQ(to_string(prune_decided(bin(BinaryOp::Ge, vr(g.index), g.extent), env)), "false");
  // Not the extent: undecided.
  EXPECT_EQ(to_string(prune_decided(bin(BinaryOp::Lt, vr(g.index), vr(m.var)), env)), "bx < M");
}

// Property: for random expressions and ranges, every evaluated value lies in bounds_of.
TEST(RangeAnalysis, BoundsContainEveryValue) {
  Vars v;
  Gen gen(v);
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    RangeEnv env;
    std::map<const Var*, Interval> r;
    for (const auto& x : v.all()) {
      int64_t lo = x == v.S ? 0 : gen.pick(-6, 4);
      r[x.get()] = Interval::of(lo, lo + gen.pick(0, 6));
      env.set(x.get(), r[x.get()]);
    }
    Expr e = gen.expr(3);
    Interval b = bounds_of(e, env);
    TileVars all(r.begin(), r.end());
    Values vals;
    for_each_point(all, vals, [&] {
      if (divides_by_zero(e, vals))
        return;
      int64_t x = eval(e, vals);
      ++checked;
      ASSERT_TRUE(b.contains(x)) << to_string(e) << " = " << x << " outside " << b.str();
    });
  }
  EXPECT_GT(checked, 10000);
}

// Property: symbolic tile bounds contain every point of the tile for random outer values;
// for affine expressions both bounds are attained.
TEST(RangeAnalysis, SymbolicBoundsContainTheTile) {
  Vars v;
  Gen gen(v);
  TileVars tile{{v.i.get(), Interval::of(0, 5)}, {v.j.get(), Interval::of(0, 3)}};
  RangeEnv env;
  env.set(v.k.get(), Interval::of(0, 6));
  env.set(v.S.get(), Interval::of(0, 30));
  int exact = 0, derived = 0;
  for (int trial = 0; trial < 600; ++trial) {
    gen.affine = trial % 2 == 0;
    Expr e = gen.expr(3);
    auto sb = symbolic_bounds(e, tile, env);
    if (gen.affine)
      ASSERT_TRUE(sb.has_value()) << "affine: " << to_string(e);
    if (!sb)
      continue;
    ++derived;
    ASSERT_FALSE(mentions(sb->lo, tile) || mentions(sb->hi, tile)) << to_string(e);
    for (int64_t k = 0; k <= 6; ++k)
      for (int64_t S = 0; S <= 30; S += 3) {
        Values vals{{v.k.get(), k}, {v.S.get(), S}};
        if (divides_by_zero(sb->lo, vals) || divides_by_zero(sb->hi, vals))
          continue;
        int64_t lo = eval(sb->lo, vals), hi = eval(sb->hi, vals);
        bool lo_hit = false, hi_hit = false, skipped = false;
        for_each_point(tile, vals, [&] {
          if (divides_by_zero(e, vals)) {
            skipped = true;
            return;
          }
          int64_t x = eval(e, vals);
          ASSERT_LE(lo, x) << to_string(e) << " lo " << to_string(sb->lo);
          ASSERT_LE(x, hi) << to_string(e) << " hi " << to_string(sb->hi);
          lo_hit = lo_hit || x == lo;
          hi_hit = hi_hit || x == hi;
        });
        if (gen.affine && !skipped) {
          ASSERT_TRUE(lo_hit && hi_hit) << "affine bounds are exact: " << to_string(e);
          ++exact;
        }
      }
  }
  EXPECT_GT(exact, 1000);
  EXPECT_GT(derived, 350);
}

// Property: a tile predicate that holds implies the condition's value at every point; for a
// single affine comparison the predicate holds exactly when the condition is uniform.
TEST(RangeAnalysis, UniformPredicatesAreSoundAndAffineOnesExact) {
  Vars v;
  Gen gen(v);
  TileVars tile{{v.i.get(), Interval::of(0, 3)}, {v.j.get(), Interval::of(0, 4)}};
  RangeEnv env;
  env.set(v.k.get(), Interval::of(-3, 5));
  env.set(v.S.get(), Interval::of(0, 20));
  int fired = 0, exact_checked = 0;
  for (int trial = 0; trial < 800; ++trial) {
    gen.affine = trial % 3 != 0;
    const bool single = trial % 2 == 0 && gen.affine;
    Expr cond = single ? gen.cond(0) : gen.cond(2);
    for (bool value : {false, true}) {
      Expr p = uniform_predicate(cond, value, tile, env);
      // Orderings are decided exactly by the affine bounds; (in)equalities only soundly
      // (`2 * j != k` holds everywhere for odd k, which intervals cannot see).
      const BinaryOp op = single ? cond->as<Binary>()->op : BinaryOp::Add;
      const bool ordering = op != BinaryOp::Eq && op != BinaryOp::Ne;
      if (single && ordering)
        ASSERT_TRUE(p) << "affine comparison without a predicate: " << to_string(cond);
      if (!p)
        continue;
      ASSERT_FALSE(mentions(p, tile));
      for (int64_t k = -3; k <= 5; ++k)
        for (int64_t S = 0; S <= 20; ++S) {
          Values vals{{v.k.get(), k}, {v.S.get(), S}};
          if (divides_by_zero(p, vals))
            continue;
          const bool holds = eval(p, vals) != 0;
          bool uniform = true, skipped = false;
          for_each_point(tile, vals, [&] {
            if (divides_by_zero(cond, vals)) {
              skipped = true;
              return;
            }
            uniform = uniform && (eval(cond, vals) != 0) == value;
          });
          if (skipped)
            continue;
          if (holds) {
            ++fired;
            ASSERT_TRUE(uniform) << to_string(cond) << " is not " << value << " everywhere when "
                                 << to_string(p) << " (k=" << k << " S=" << S << ")";
          }
          if (single && ordering) {
            ++exact_checked;
            ASSERT_EQ(holds, uniform) << to_string(cond) << " value " << value << " pred "
                                      << to_string(p) << " k=" << k << " S=" << S;
          }
        }
    }
  }
  EXPECT_GT(fired, 5000);
  EXPECT_GT(exact_checked, 20000);
}

// The attention mask: kv = k*32 + j, q = bx*64 + i, i in [0, 64), j in [0, 32).
TEST(RangeAnalysis, AttentionMaskPredicates) {
  Vars v;
  VarPtr bx = make_var("bx", VarKind::BlockIndex, DType::i64());
  TileVars tile{{v.i.get(), Interval::of(0, 63)}, {v.j.get(), Interval::of(0, 31)}};
  RangeEnv env;
  Expr kv = bin(BinaryOp::Add, bin(BinaryOp::Mul, vr(v.k), c(32)), vr(v.j));
  Expr q = bin(BinaryOp::Add, bin(BinaryOp::Mul, vr(bx), c(64)), vr(v.i));
  Expr past_s = bin(BinaryOp::Ge, kv, vr(v.S));
  Expr future = bin(BinaryOp::Gt, kv, q);
  auto pred = [&](const Expr& e, bool value) {
    Expr p = uniform_predicate(e, value, tile, env);
    return p ? to_string(p) : std::string("none");
  };
  EXPECT_EQ(pred(past_s, false), "k * 32 + 31 < S");
  EXPECT_EQ(pred(past_s, true), "k * 32 >= S");
  EXPECT_EQ(pred(future, false), "k * 32 + 31 <= bx * 64");
  EXPECT_EQ(pred(bin(BinaryOp::Or, past_s, future), false),
            "k * 32 + 31 < S && k * 32 + 31 <= bx * 64");
  EXPECT_EQ(pred(bin(BinaryOp::Or, past_s, future), true), "k * 32 >= S || k * 32 > bx * 64 + 63");
  // Written the other way round the mask is true inside.
  EXPECT_EQ(pred(bin(BinaryOp::Lt, kv, vr(v.S)), true), "k * 32 + 31 < S");
  // A condition over a load has no predicate; one without tile vars is its own.
  BufferPtr x = make_buffer("x", MemScope::Fragment, DType::i64(), {c(64)});
  EXPECT_EQ(pred(bin(BinaryOp::Lt, Load::make(x, {vr(v.i)}), vr(v.S)), false), "none");
  EXPECT_EQ(pred(bin(BinaryOp::Lt, vr(v.k), vr(v.S)), true), "k < S");
  // A product of two tile vars is neither affine nor scaled by a tile-free factor: no
  // predicate. A floor division by a positive constant is monotone: bounded at the corner.
  EXPECT_EQ(pred(bin(BinaryOp::Lt, bin(BinaryOp::Mul, vr(v.i), vr(v.j)), vr(v.S)), true), "none");
  EXPECT_EQ(pred(bin(BinaryOp::Lt, bin(BinaryOp::Div, kv, c(4)), vr(v.S)), true),
            "(k * 32 + 31) / 4 < S");
}

// monotonicity(e, k): +1 means e(k) <= e(k + 1) for every k >= 0 whatever the other variables
// (dims >= 0); checked by evaluation on random expressions, plus the causal-attention extent.
TEST(RangeAnalysis, MonotonicityIsSound) {
  Vars v;
  Gen gen(v);
  int claimed = 0, checked = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Expr e = gen.expr(3);
    auto m = monotonicity(e, v.k.get());
    if (!m)
      continue;
    claimed += *m == 1;
    for (int sample = 0; sample < 20; ++sample) {
      Values vals{{v.i.get(), gen.pick(-6, 6)}, {v.j.get(), gen.pick(-6, 6)},
                  {v.S.get(), gen.pick(0, 40)}, {v.k.get(), gen.pick(0, 20)}};
      Values next = vals;
      ++next[v.k.get()];
      if (divides_by_zero(e, vals) || divides_by_zero(e, next))
        continue;
      ++checked;
      if (*m == 0)
        ASSERT_EQ(eval(e, vals), eval(e, next)) << to_string(e);
      else
        ASSERT_LE(eval(e, vals), eval(e, next)) << to_string(e) << " at k = " << vals[v.k.get()];
    }
  }
  EXPECT_GT(claimed, 100);
  EXPECT_GT(checked, 10000);
  // min(cdiv(S, 128), cdiv((k + 1) * 128, 128)): grows with the query block k.
  Expr causal = bin(BinaryOp::Min, bin(BinaryOp::CeilDiv, vr(v.S), c(128)),
                    bin(BinaryOp::CeilDiv, bin(BinaryOp::Mul, bin(BinaryOp::Add, vr(v.k), c(1)), c(128)), c(128)));
  EXPECT_EQ(monotonicity(causal, v.k.get()), 1);
  EXPECT_EQ(monotonicity(bin(BinaryOp::CeilDiv, vr(v.S), c(128)), v.k.get()), 0);
  EXPECT_EQ(monotonicity(bin(BinaryOp::Sub, vr(v.S), vr(v.k)), v.k.get()), std::nullopt);
  EXPECT_EQ(monotonicity(bin(BinaryOp::Mul, vr(v.k), c(-2)), v.k.get()), std::nullopt);
  EXPECT_EQ(monotonicity(bin(BinaryOp::Mul, vr(v.k), vr(v.i)), v.k.get()), std::nullopt);
}

} // namespace
