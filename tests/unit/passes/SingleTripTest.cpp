// passes/RedundantLoadElim on hand-built IR (each condition of its header, positive and
// negative) and passes/VersionSingleTrip through instantiate() on small specs and on the
// shipped softmax and rmsnorm: which loops are versioned, and that the single-trip branch reads
// each tile of X once.
#include "passes/RedundantLoadElim.h"
#include "passes/VersionSingleTrip.h"

#include "ir/IRPrinter.h"
#include "ir/IRVerifier.h"
#include "ir/IRVisitor.h"
#include "passes/Pipeline.h"
#include "spec/Frontend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

using namespace tilegen;
using namespace tilegen::ir;

namespace {

// ---- RedundantLoadElim on hand-built IR ------------------------------------------------------

struct Fixture {
  VarPtr M = make_var("M", VarKind::Dim, DType::i64());
  VarPtr N = make_var("N", VarKind::Dim, DType::i64());
  VarPtr bx = make_var("bx", VarKind::BlockIndex, DType::i64());
  VarPtr i = make_var("i", VarKind::ParallelVar, DType::i64());
  VarPtr j = make_var("j", VarKind::ParallelVar, DType::i64());
  BufferPtr X = make_buffer("X", MemScope::Global, DType::f32(), {ref(M), ref(N)}, Access::Read);
  BufferPtr Z =
      make_buffer("Z", MemScope::Global, DType::f32(), {ref(M), ref(N)}, Access::ReadWrite);
  BufferPtr Y = make_buffer("Y", MemScope::Global, DType::f32(), {ref(M), ref(N)}, Access::Write);
  BufferPtr x = make_buffer("x", MemScope::Fragment, DType::f32(), {make_i64(1), make_i64(64)});
  BufferPtr t = make_buffer("t", MemScope::Fragment, DType::f32(), {make_i64(1), make_i64(64)});
  BufferPtr xs = make_buffer("xs", MemScope::Shared, DType::f32(), {make_i64(1), make_i64(64)});
  BufferPtr idx = make_buffer("idx", MemScope::Fragment, DType::i64(), {make_i64(1)});

  static Expr ref(const VarPtr& v) { return VarRef::make(v); }
  // X[bx, col : 1x64]
  Region tile(const BufferPtr& g, Expr col) const {
    return Region{g, {ref(bx), std::move(col)}, {make_i64(1), make_i64(64)}};
  }
  Stmt load(const BufferPtr& g, const BufferPtr& dst, Expr col = make_i64(0),
            Expr pad = make_f32(0.0)) const {
    return Copy::make(tile(g, std::move(col)), Region::whole(dst), std::move(pad));
  }
  // parallel i, j { dst[i, j] = src[i, j] * 2 }
  Stmt scale(const BufferPtr& dst, const BufferPtr& src) const {
    Expr v = Binary::make(BinaryOp::Mul, Load::make(src, {ref(i), ref(j)}), make_f32(2.0));
    return Parallel::make({i, j}, {make_i64(1), make_i64(64)},
                          Store::make(dst, {ref(i), ref(j)}, v, StoreOp::Assign));
  }
};

struct Counted {
  Stmt out;
  int removed;
  int copies_from_x; // copies whose source is a Global buffer left in `out`
};

Counted run(const Stmt& s) {
  passes::LoadElimStats st;
  Stmt out = passes::eliminate_redundant_loads(s, &st);
  struct Count : IRVisitor {
    int n = 0;
    void visit_Copy(const Copy* c) override {
      n += c->src.buffer->scope == MemScope::Global;
      IRVisitor::visit_Copy(c);
    }
  } c;
  c.visit(out);
  return {out, st.removed, c.n};
}

TEST(RedundantLoadElim, SecondCopyOfTheSameTileIsRemoved) {
  Fixture f;
  // copy X -> x; t = x * 2 (reads x, writes t); copy X -> x again: still valid.
  auto r =
      run(Seq::make({f.load(f.X, f.x), f.scale(f.t, f.x), f.load(f.X, f.x), f.scale(f.x, f.x)}));
  EXPECT_EQ(r.removed, 1) << to_string(r.out);
  EXPECT_EQ(r.copies_from_x, 1);
}

TEST(RedundantLoadElim, NestedSeqsAreOneStraightLine) {
  Fixture f;
  auto r = run(Seq::make({Seq::make({f.load(f.X, f.x)}), f.scale(f.t, f.x),
                          Seq::make({f.load(f.X, f.x), f.scale(f.x, f.x)})}));
  EXPECT_EQ(r.removed, 1) << to_string(r.out);
}

TEST(RedundantLoadElim, BufferWrittenInBetweenKeepsTheCopy) {
  Fixture f;
  auto r = run(Seq::make({f.load(f.X, f.x), f.scale(f.x, f.x), f.load(f.X, f.x)}));
  EXPECT_EQ(r.removed, 0) << to_string(r.out);
  // A fill, or a copy of another tile into x, invalidates too.
  r = run(Seq::make({f.load(f.X, f.x), Fill::make(f.x, make_f32(0.0)), f.load(f.X, f.x)}));
  EXPECT_EQ(r.removed, 0);
  r = run(Seq::make({f.load(f.X, f.x), f.load(f.X, f.x, make_i64(64)), f.load(f.X, f.x)}));
  EXPECT_EQ(r.removed, 0);
}

TEST(RedundantLoadElim, TensorWrittenInBetweenKeepsTheCopy) {
  Fixture f;
  // Y may alias X (in-place calls): any global write forgets every tile.
  auto r = run(Seq::make({f.load(f.X, f.x), f.scale(f.t, f.x),
                          Copy::make(Region::whole(f.t), f.tile(f.Y, make_i64(0)), make_f32(0.0)),
                          f.load(f.X, f.x)}));
  EXPECT_EQ(r.removed, 0) << to_string(r.out);
  // A store into a tensor from a parallel body as well.
  Stmt st = Parallel::make(
      {f.i}, {make_i64(1)},
      Store::make(f.Y, {Fixture::ref(f.bx), Fixture::ref(f.i)}, make_f32(1.0), StoreOp::Assign));
  r = run(Seq::make({f.load(f.X, f.x), st, f.load(f.X, f.x)}));
  EXPECT_EQ(r.removed, 0);
}

TEST(RedundantLoadElim, OnlyReadOnlyTensorsIntoRegisterTiles) {
  Fixture f;
  // Z is readwrite: never assumed unchanged.
  auto r = run(Seq::make({f.load(f.Z, f.x), f.scale(f.t, f.x), f.load(f.Z, f.x)}));
  EXPECT_EQ(r.removed, 0);
  // Shared destinations take part in barriers and async copies: left alone.
  r = run(Seq::make({f.load(f.X, f.xs), f.load(f.X, f.xs)}));
  EXPECT_EQ(r.removed, 0);
}

TEST(RedundantLoadElim, PadsMustMatch) {
  Fixture f;
  const Expr ninf = make_f32(-INFINITY);
  auto r = run(Seq::make({f.load(f.X, f.x, make_i64(0), ninf), f.load(f.X, f.x, make_i64(0))}));
  EXPECT_EQ(r.removed, 0) << "-inf pad then zero pad";
  r = run(Seq::make({f.load(f.X, f.x, make_i64(0), ninf), f.load(f.X, f.x, make_i64(0), ninf)}));
  EXPECT_EQ(r.removed, 1);
  // Pads compare by value: 0.0 and -0.0 differ (a -0.0 pad is observable through 1 / x).
  r = run(Seq::make({f.load(f.X, f.x), f.load(f.X, f.x, make_i64(0), make_f32(-0.0))}));
  EXPECT_EQ(r.removed, 0);
}

TEST(RedundantLoadElim, DifferentRegionOrDestinationIsKept) {
  Fixture f;
  auto r = run(Seq::make({f.load(f.X, f.x), f.load(f.X, f.t)}));
  EXPECT_EQ(r.removed, 0) << "other destination";
  r = run(Seq::make({f.load(f.X, f.t, make_i64(0)), f.load(f.X, f.x, make_i64(64)),
                     f.load(f.X, f.t, make_i64(64))}));
  EXPECT_EQ(r.removed, 0) << "other column";
}

TEST(RedundantLoadElim, OffsetsWithLoadsAreNeverMatched) {
  Fixture f;
  Expr col = Load::make(f.idx, {make_i64(0)});
  auto r = run(Seq::make({f.load(f.X, f.x, col), f.scale(f.t, f.x), f.load(f.X, f.x, col)}));
  EXPECT_EQ(r.removed, 0);
}

TEST(RedundantLoadElim, LoopVariablesAreNotKnownAcrossIterationsOrLoops) {
  Fixture f;
  VarPtr k = make_var("k", VarKind::LoopVar, DType::i64());
  VarPtr k2 = make_var("k", VarKind::LoopVar, DType::i64());
  auto col = [&](const VarPtr& v) {
    return Binary::make(BinaryOp::Mul, Fixture::ref(v), make_i64(64));
  };
  Expr trips = Binary::make(BinaryOp::CeilDiv, Fixture::ref(f.N), make_i64(64));
  // Two loops: X[bx, k*64] and X[bx, k2*64] are different variables, so different tiles.
  Stmt a = For::make(k, make_i64(0), trips, nullptr,
                     Seq::make({f.load(f.X, f.x, col(k)), f.scale(f.t, f.x)}));
  Stmt b = For::make(k2, make_i64(0), trips, nullptr,
                     Seq::make({f.load(f.X, f.x, col(k2)), f.scale(f.x, f.x)}));
  auto r = run(Seq::make({a, b}));
  EXPECT_EQ(r.removed, 0) << to_string(r.out);
  // One loop whose body loads, then overwrites x: the load in the next iteration stays.
  Stmt c =
      For::make(k, make_i64(0), trips, nullptr, Seq::make({f.load(f.X, f.x), f.scale(f.x, f.x)}));
  r = run(Seq::make({f.load(f.X, f.x), c}));
  EXPECT_EQ(r.removed, 0) << to_string(r.out);
  // Within one iteration the body is a straight line; a tile loaded before the loop is not
  // assumed in the body, whose own copy writes x.
  Stmt d = For::make(k, make_i64(0), trips, nullptr,
                     Seq::make({f.load(f.X, f.x), f.scale(f.t, f.x), f.load(f.X, f.x)}));
  r = run(d);
  EXPECT_EQ(r.removed, 1) << to_string(r.out);
  r = run(Seq::make({f.load(f.X, f.x), d}));
  EXPECT_EQ(r.removed, 1) << to_string(r.out);
  // Nothing a loop body loads is known after the loop (it may run zero times): only the
  // body's second copy goes.
  r = run(Seq::make({d, f.load(f.X, f.x)}));
  EXPECT_EQ(r.removed, 1) << to_string(r.out);
  EXPECT_EQ(r.copies_from_x, 2);
}

TEST(RedundantLoadElim, IfBranchesInheritAndForget) {
  Fixture f;
  Expr cond = Binary::make(BinaryOp::Lt, Fixture::ref(f.N), make_i64(64));
  // Known before the `if`: holds in both branches.
  auto r = run(Seq::make({f.load(f.X, f.x), IfThenElse::make(cond, Seq::make({f.load(f.X, f.x)}),
                                                             Seq::make({f.load(f.X, f.x)}))}));
  EXPECT_EQ(r.removed, 2) << to_string(r.out);
  // A branch that writes x: forgotten after the `if`.
  r = run(Seq::make(
      {f.load(f.X, f.x), IfThenElse::make(cond, f.scale(f.x, f.x), nullptr), f.load(f.X, f.x)}));
  EXPECT_EQ(r.removed, 0) << to_string(r.out);
}

// ---- VersionSingleTrip through instantiate() -------------------------------------------------

const char* kTwoPass = R"yaml(kernel: two_pass
summary: test kernel for single-trip versioning
params:
  M: dim
  N: dim
tensors:
  X: {type: f32, shape: [M, N]}
  Y: {type: f32, shape: [M, N], access: write}
schedule:
  BN: [64]
  threads: [64]
grid: {bx: "M"}
threads: threads
body:
  - fragment:
      x: [f32, 1, BN]
      t: [f32, 1, BN]
      s: [f32, 1]
  - fill: {dst: s, value: 0}
  - for: {var: k, extent: "cdiv(N, BN)"}
    body:
      - copy: {src: "X[bx, k * BN]", dst: x}
      - parallel: {i: 1, j: BN}
        body:
          - "t[i, j] = x[i, j] * x[i, j]"
      - reduce: {op: sum, src: t, dst: s, dim: 1, clear: false}
  - for: {var: k, extent: "cdiv(N, BN)"}
    body:
      - copy: {src: "X[bx, k * BN]", dst: x}
      - parallel: {i: 1, j: BN}
        body:
          - "x[i, j] = x[i, j] / s[i]"
      - copy: {src: x, dst: "Y[bx, k * BN]"}
)yaml";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    s.replace(at, from.size(), to);
  return s;
}

std::optional<Kernel> instantiate_text(const std::string& text, const char* target,
                                       std::ostringstream& out) {
  DiagEngine diag(out);
  auto ks = spec::load_kernels_from_text("test.yaml", text, diag);
  if (!ks)
    return std::nullopt;
  auto inst = passes::enumerate_instances(ks->at(0)).at(0);
  return passes::instantiate(ks->at(0), inst, *find_target(target), diag);
}

Kernel instantiate_ok(const std::string& text, const char* target) {
  std::ostringstream out;
  auto k = instantiate_text(text, target, out);
  EXPECT_TRUE(k) << out.str();
  if (!k)
    return {};
  EXPECT_TRUE(verify(*k, VerifyOptions{true}).empty());
  return *k;
}

// The statement-level ifs the pass adds (condition `... == 1`).
std::vector<const IfThenElse*> single_trip_ifs(const Stmt& s) {
  struct Find : IRVisitor {
    std::vector<const IfThenElse*> found;
    void visit_IfThenElse(const IfThenElse* i) override {
      if (to_string(i->cond).find("== 1") != std::string::npos && i->else_case)
        found.push_back(i);
      IRVisitor::visit_IfThenElse(i);
    }
  } f;
  f.visit(s);
  return f.found;
}

struct Shape {
  int loops = 0;      // For statements
  int reads_of_x = 0; // copies whose source is tensor X
};
Shape shape_of(const Stmt& s) {
  struct Count : IRVisitor {
    Shape sh;
    void visit_For(const For* f) override {
      ++sh.loops;
      IRVisitor::visit_For(f);
    }
    void visit_Copy(const Copy* c) override {
      sh.reads_of_x += c->src.buffer->name == "X";
      IRVisitor::visit_Copy(c);
    }
  } c;
  if (s)
    c.visit(s);
  return c.sh;
}

TEST(VersionSingleTrip, TwoPassRowReadsOnceWhenOneTrip) {
  for (const char* target : {"c", "c_avx2", "sm_80", "sm_90", "wgsl"}) {
    Kernel k = instantiate_ok(kTwoPass, target);
    auto ifs = single_trip_ifs(k.body);
    ASSERT_EQ(ifs.size(), 1u) << target << "\n" << to_string(k);
    EXPECT_EQ(to_string(ifs[0]->cond), "cdiv(N, 64) == 1") << target;
    Shape fast = shape_of(ifs[0]->then_case), slow = shape_of(ifs[0]->else_case);
    EXPECT_EQ(fast.loops, 0) << target;
    EXPECT_EQ(fast.reads_of_x, 1) << target << "\n" << to_string(ifs[0]->then_case);
    EXPECT_EQ(slow.loops, 2) << target;
    EXPECT_EQ(slow.reads_of_x, 2) << target;
    bool noted = false;
    for (const auto& n : k.notes)
      noted |= n.find("versioned: inlined when cdiv(N, 64) == 1") != std::string::npos;
    EXPECT_TRUE(noted) << target;
  }
}

TEST(VersionSingleTrip, TheTripCountIsOneInTheSingleTripLine) {
  // `k == cdiv(N, BN) - 1` (the last trip) folds to true in the single-trip line only.
  std::string text = replace(kTwoPass, "\"x[i, j] = x[i, j] / s[i]\"",
                             "\"x[i, j] = k == cdiv(N, BN) - 1 ? t[i, j] : x[i, j] / s[i]\"");
  Kernel k = instantiate_ok(text, "c");
  auto ifs = single_trip_ifs(k.body);
  ASSERT_EQ(ifs.size(), 1u) << to_string(k);
  const std::string fast = to_string(ifs[0]->then_case), slow = to_string(ifs[0]->else_case);
  EXPECT_NE(fast.find("x[i, j] = t[i, j]\n"), std::string::npos) << fast;
  EXPECT_EQ(fast.find("cdiv"), std::string::npos) << fast;
  EXPECT_NE(slow.find("k == cdiv(N, 64) - 1 ? t[i, j] : x[i, j] / s[i]"), std::string::npos)
      << slow;
}

TEST(VersionSingleTrip, TheVersionConditionFoldsInBothBranches) {
  // `cdiv(N, BN) == 1` is true in the single-trip line and false in the original loops.
  std::string text = replace(kTwoPass, "\"x[i, j] = x[i, j] / s[i]\"",
                             "\"x[i, j] = cdiv(N, BN) == 1 ? t[i, j] : x[i, j] / s[i]\"");
  Kernel k = instantiate_ok(text, "c");
  auto ifs = single_trip_ifs(k.body);
  ASSERT_EQ(ifs.size(), 1u) << to_string(k);
  const std::string fast = to_string(ifs[0]->then_case), slow = to_string(ifs[0]->else_case);
  EXPECT_NE(fast.find("x[i, j] = t[i, j]\n"), std::string::npos) << fast;
  EXPECT_NE(slow.find("x[i, j] = x[i, j] / s[i]\n"), std::string::npos) << slow;
  EXPECT_EQ(slow.find("? t[i, j]"), std::string::npos) << slow;
}

TEST(VersionSingleTrip, PassOneOverwritingTheTileKeepsTheSecondRead) {
  // Versioned (the loops copy the same tile), but x changes in between: both reads stay.
  std::string text =
      replace(kTwoPass, "\"t[i, j] = x[i, j] * x[i, j]\"", "\"x[i, j] = x[i, j] * x[i, j]\"");
  text = replace(text, "{op: sum, src: t,", "{op: sum, src: x,");
  Kernel k = instantiate_ok(text, "c");
  auto ifs = single_trip_ifs(k.body);
  ASSERT_EQ(ifs.size(), 1u) << to_string(k);
  EXPECT_EQ(shape_of(ifs[0]->then_case).reads_of_x, 2) << to_string(ifs[0]->then_case);
}

TEST(VersionSingleTrip, NotVersionedWithoutARepeatedTile) {
  // Different extents.
  Kernel k =
      instantiate_ok(replace(kTwoPass,
                             "- for: {var: k, extent: \"cdiv(N, BN)\"}\n    body:\n      - copy: "
                             "{src: \"X[bx, k * BN]\", dst: x}\n      - parallel: {i: 1, j: BN}\n  "
                             "      body:\n          - \"x[i, j] = x[i, j] / s[i]\"",
                             "- for: {var: k, extent: \"cdiv(N, 32)\"}\n    body:\n      - copy: "
                             "{src: \"X[bx, k * BN]\", dst: x}\n      - parallel: {i: 1, j: BN}\n  "
                             "      body:\n          - \"x[i, j] = x[i, j] / s[i]\""),
                     "c");
  EXPECT_TRUE(single_trip_ifs(k.body).empty()) << to_string(k);
  // Same extents, different tiles (pass 2 reads the next chunk).
  k = instantiate_ok(replace(kTwoPass,
                             "- copy: {src: \"X[bx, k * BN]\", dst: x}\n      - parallel: {i: 1, "
                             "j: BN}\n        body:\n          - \"x[i, j] = x[i, j] / s[i]\"",
                             "- copy: {src: \"X[bx, k * BN + BN]\", dst: x}\n      - parallel: {i: "
                             "1, j: BN}\n        body:\n          - \"x[i, j] = x[i, j] / s[i]\""),
                     "c");
  EXPECT_TRUE(single_trip_ifs(k.body).empty()) << to_string(k);
  // X writable: its tile may change, nothing to save.
  k = instantiate_ok(replace(kTwoPass, "X: {type: f32, shape: [M, N]}",
                             "X: {type: f32, shape: [M, N], access: readwrite}"),
                     "c");
  EXPECT_TRUE(single_trip_ifs(k.body).empty()) << to_string(k);
}

TEST(VersionSingleTrip, RangesDecideTheTripCount) {
  // 1 <= N <= 64: always one trip, the loops are replaced by their single-trip line.
  Kernel k = instantiate_ok(
      replace(kTwoPass, "  N: dim\n", "  N: {dim: dynamic, min: 1, max: 64}\n"), "c");
  EXPECT_TRUE(single_trip_ifs(k.body).empty()) << to_string(k);
  Shape s = shape_of(k.body);
  EXPECT_EQ(s.loops, 0) << to_string(k);
  EXPECT_EQ(s.reads_of_x, 1);
  // N <= 64 may also be 0 (no trip): still versioned.
  k = instantiate_ok(replace(kTwoPass, "  N: dim\n", "  N: {dim: dynamic, max: 64}\n"), "c");
  EXPECT_EQ(single_trip_ifs(k.body).size(), 1u) << to_string(k);
  // N > 64: never one trip, left alone.
  k = instantiate_ok(replace(kTwoPass, "  N: dim\n", "  N: {dim: dynamic, min: 65}\n"), "c");
  EXPECT_TRUE(single_trip_ifs(k.body).empty()) << to_string(k);
  s = shape_of(k.body);
  EXPECT_EQ(s.loops, 2);
  EXPECT_EQ(s.reads_of_x, 2);
}

TEST(VersionSingleTrip, ShippedRowKernels) {
  // softmax and rmsnorm: one read of X in the single-trip branch on every backend.
  for (const char* spec : {"softmax.yaml", "rmsnorm.yaml"})
    for (const char* target : {"c", "sm_80", "sm_90", "wgsl"}) {
      std::ostringstream out;
      DiagEngine diag(out);
      auto ks = spec::load_kernels(std::string(TILEGEN_KERNELS_DIR) + "/" + spec, diag);
      ASSERT_TRUE(ks) << out.str();
      for (const auto& kern : *ks)
        for (const auto& inst : passes::enumerate_instances(kern)) {
          auto k = passes::instantiate(kern, inst, *find_target(target), diag);
          ASSERT_TRUE(k) << out.str();
          auto ifs = single_trip_ifs(k->body);
          ASSERT_EQ(ifs.size(), 1u) << spec << " " << target << " " << inst.name;
          EXPECT_EQ(shape_of(ifs[0]->then_case).reads_of_x, 1) << spec << " " << target;
          EXPECT_EQ(shape_of(ifs[0]->then_case).loops, 0);
          EXPECT_EQ(shape_of(ifs[0]->else_case).reads_of_x, 2);
        }
    }
}

TEST(SameExpr, StructuralEquality) {
  VarPtr a = make_var("a", VarKind::Dim, DType::i64());
  VarPtr a2 = make_var("a", VarKind::Dim, DType::i64()); // same name, other variable
  Expr e1 = Binary::make(BinaryOp::Add, VarRef::make(a), make_i64(1));
  Expr e2 = Binary::make(BinaryOp::Add, VarRef::make(a), make_i64(1));
  EXPECT_TRUE(passes::same_expr(e1, e2));
  EXPECT_FALSE(passes::same_expr(e1, Binary::make(BinaryOp::Add, VarRef::make(a2), make_i64(1))));
  EXPECT_FALSE(passes::same_expr(e1, Binary::make(BinaryOp::Sub, VarRef::make(a), make_i64(1))));
  EXPECT_FALSE(passes::same_expr(e1, Binary::make(BinaryOp::Add, VarRef::make(a), make_i64(2))));
  // IntImm names are ignored; float constants compare by value (nan equal to nan, 0 vs -0 not).
  EXPECT_TRUE(passes::same_expr(IntImm::make_named(DType::i64(), 64, "BN"), make_i64(64)));
  EXPECT_TRUE(passes::same_expr(make_f32(NAN), make_f32(NAN)));
  EXPECT_FALSE(passes::same_expr(make_f32(0.0), make_f32(-0.0)));
  EXPECT_FALSE(passes::same_expr(make_f32(1.0), FloatImm::make(DType::f64(), 1.0)));
}

} // namespace
