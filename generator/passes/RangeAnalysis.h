// RangeAnalysis: what values an integer expression can take, given the ranges of its variables.
//
// Two questions, both asked by passes that version or narrow code (passes/VersionByRange):
//  * numeric: the interval [lo, hi] of an expression when every variable lies in its interval
//    (bounds_of). Used to prove that index arithmetic fits in 32 bits, that a coefficient is
//    non-negative, that a condition is decided;
//  * symbolic, per tile: the least and greatest value of an expression over the points of a
//    `parallel` loop (its variables range over constant extents), as expressions of the
//    remaining variables (symbolic_bounds), and from them a tile-level predicate that implies
//    a condition has the same value at every point (uniform_predicate). `kv >= S` with
//    `kv = k*BN + j`, j in [0, BN) is false at every point iff `k*BN + (BN-1) < S`.
//
// Semantics: integers are mathematical (the IR's index arithmetic is i64 and does not overflow
// in the kernels it describes, docs/ir.md); an interval bound that does not fit in int64 is
// reported as unbounded. Every answer is sound: a value is never outside the interval, and a
// predicate is only returned when it implies the condition's value at every point. Exactness
// is not promised (interval arithmetic forgets that `j - j` is 0), except for affine
// expressions, whose symbolic bounds are attained.
#pragma once

#include "ir/IR.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace tilegen::passes {

// A closed interval of integers; a missing bound means unbounded on that side. Booleans are
// the interval of 0 (false) and 1 (true).
struct Interval {
  std::optional<int64_t> lo, hi;

  static Interval everything() { return {}; }
  static Interval point(int64_t v) { return {v, v}; }
  static Interval of(int64_t lo, int64_t hi) { return {lo, hi}; }
  static Interval at_least(int64_t lo) { return {lo, std::nullopt}; }
  static Interval of_type(ir::DType t); // the values of an integer or bool type

  bool bounded() const { return lo.has_value() && hi.has_value(); }
  bool is_point() const { return bounded() && *lo == *hi; }
  bool contains(int64_t v) const { return (!lo || *lo <= v) && (!hi || v <= *hi); }
  bool empty() const { return lo && hi && *lo > *hi; }
  // Every value fits in a signed 32-bit integer.
  bool fits_i32() const;
  Interval hull(const Interval& o) const;      // smallest interval holding both
  Interval intersect(const Interval& o) const; // may be empty
  std::string str() const;                     // "[0, 63]", "[0, +inf)"

  friend bool operator==(const Interval& a, const Interval& b) {
    return a.lo == b.lo && a.hi == b.hi;
  }
};

// The ranges of variables at one program point, looked up by identity. A variable not listed
// takes its kind's default: Dim -> [0, +inf), BlockIndex -> [0, +inf), Flag -> [0, 1], any
// other -> the values of its type. Lets may be bound to their value instead of a range: their
// uses are then analysed through the value (more precise than its interval alone would be
// for symbolic bounds, and the same for numeric ones).
class RangeEnv {
public:
  void set(const ir::Var* v, Interval r) { ranges_[v] = r; }
  void bind_let(const ir::Var* v, ir::Expr value) { lets_[v] = std::move(value); }
  Interval range_of(const ir::Var* v) const; // the listed range, else the default above
  const ir::Expr* let_value(const ir::Var* v) const;
  // A symbolic exclusive upper bound: v < bound always (a grid index below its grid extent, a
  // loop index from 0 below its extent). Used by prune_decided for `v < bound`, which
  // intervals cannot decide when the bound is a runtime dim.
  void set_upper(const ir::Var* v, ir::Expr bound) { uppers_[v] = std::move(bound); }
  const ir::Expr* upper_of(const ir::Var* v) const;

private:
  std::map<const ir::Var*, Interval> ranges_;
  std::map<const ir::Var*, ir::Expr> lets_;
  std::map<const ir::Var*, ir::Expr> uppers_;
};

// The interval of e's values over every assignment of its variables within `env`. Integer and
// bool expressions only are meaningful; a float expression (or a load of a 64-bit integer)
// gives everything.
Interval bounds_of(const ir::Expr& e, const RangeEnv& env);

// The kernel-level ranges: dims from their declared min/max (default [0, +inf)), value params
// over their values, grid indices in [0, extent - 1] where the extent's bound is known.
RangeEnv kernel_ranges(const ir::Kernel& k);

// kernel_ranges plus every loop variable ([start, start + extent - 1] over the bounds of start
// and extent), parallel variable ([0, extent - 1]) and let (its value) of the body. Variables
// are unique objects, so one flat map serves every program point: use it where the point's
// own scope is not at hand (emitters).
RangeEnv body_ranges(const ir::Kernel& k);

// e with every comparison and logical operator that `env` decides replaced by its constant,
// then simplified (`0 <= bx * 64` is true for a grid index, and so is `bx < B` when B is bx's
// grid extent).
ir::Expr prune_decided(const ir::Expr& e, const RangeEnv& env);

// ---- per-tile (symbolic) bounds --------------------------------------------------------------

// Variables eliminated by a tile: each ranges over a constant, non-empty interval (a parallel
// loop's variables over [0, extent - 1]).
using TileVars = std::map<const ir::Var*, Interval>;

// e = rest + sum(coeff * var) with `rest` free of tile vars and constant coefficients.
struct Affine {
  ir::Expr rest;                                 // over non-tile variables (i64 or e's type)
  std::map<const ir::Var*, int64_t> coeffs;      // tile var -> coefficient (non-zero)
};
// nullopt if e is not affine in the tile vars (a product of two tile vars, a division, a load
// of one...). Lets must have been substituted by the caller.
std::optional<Affine> linearize(const ir::Expr& e, const TileVars& tile);

// The least and greatest value of an integer expression over the tile, as expressions over
// the other variables (simplified). Exact for affine expressions; otherwise interval rules
// (monotone operators, products and floor divisions by a factor of known sign from `env`).
// nullopt when no rule applies. The result never mentions a tile var.
struct SymBounds {
  ir::Expr lo, hi;
};
std::optional<SymBounds> symbolic_bounds(const ir::Expr& e, const TileVars& tile,
                                         const RangeEnv& env);

// A bool expression over the non-tile variables that, when true, implies `cond` == `value` at
// every point of the tile; nullptr if none can be derived. Built from comparisons of integer
// expressions (a OP b decided by the symbolic bounds of a - b, or of a and b separately),
// combined through && || ! (a condition with no tile var is its own predicate). The result
// is simplified, with the parts `env` decides folded (prune_decided); it mentions no load
// (cheap to evaluate once per tile). Lets must have been substituted by the caller.
ir::Expr uniform_predicate(const ir::Expr& cond, bool value, const TileVars& tile,
                           const RangeEnv& env);

// True if e mentions one of the tile vars.
bool mentions(const ir::Expr& e, const TileVars& tile);

// How an integer expression moves with `v` over v >= 0 when every dim and value param is >= 0:
// 0 if it does not mention v, +1 if it provably never decreases as v grows (built from v,
// variables other than v, constants, +, - of a term without v, * and floor/ceil division by
// non-negative terms without v, min, max, and selects whose condition has no v), nullopt when
// no rule shows it. Used to run a warp-specialized kernel's tiles heaviest first (causal
// attention: the loop's extent grows with the query block).
std::optional<int> monotonicity(const ir::Expr& e, const ir::Var* v);

} // namespace tilegen::passes
