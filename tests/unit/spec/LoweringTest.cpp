// Lowering of the shipped kernels: the ir::Kernel fields IR.h documents.
#include "spec/Frontend.h"

#include "ir/IRPrinter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>

#include <sys/stat.h>

using namespace tilegen;

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<ir::Kernel> load(const std::string& name) {
  std::ostringstream err;
  DiagEngine diag(err);
  std::string path = std::string(TILEGEN_KERNELS_DIR) + "/" + name;
  auto ks = spec::load_kernels(path, diag);
  EXPECT_TRUE(ks.has_value()) << err.str();
  EXPECT_EQ(err.str(), "");
  return ks ? *ks : std::vector<ir::Kernel>{};
}

// 1-based line of the first line of `path` containing `needle`, and the column where it starts
// there; {0, 0} if none. Locations are checked against the spec's text, not hard-coded line
// numbers, so that editing the shipped spec (a target override, a class) keeps the test valid.
std::pair<int, int> find_line(const std::string& path, const std::string& needle) {
  std::istringstream in(read(path));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n)
    if (auto col = line.find(needle); col != std::string::npos)
      return {n, static_cast<int>(col) + 1};
  return {0, 0};
}

std::vector<ir::StmtKind> kinds(const ir::Stmt& s) {
  std::vector<ir::StmtKind> out;
  if (auto seq = s->as<ir::Seq>())
    for (const auto& x : seq->stmts)
      out.push_back(x->kind);
  return out;
}

} // namespace

TEST(Lowering, Gemm) {
  auto ks = load("gemm.yaml");
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_EQ(ks[0].type_suffix(), "f32");
  EXPECT_EQ(ks[1].type_suffix(), "f16");
  EXPECT_EQ(ks[2].type_suffix(), "bf16");
  const ir::Kernel& k = ks[2];
  EXPECT_EQ(k.name, "gemm");
  ASSERT_EQ(k.dims.size(), 3u);
  EXPECT_EQ(k.dims[0].var->name, "M");
  EXPECT_EQ(k.dims[0].var->kind, ir::VarKind::Dim);
  ASSERT_EQ(k.tensors.size(), 3u);
  EXPECT_EQ(k.tensors[0]->dtype, ir::DType::bf16());
  EXPECT_EQ(k.tensors[2]->access, ir::Access::Write);
  EXPECT_EQ(k.tensors[0]->access, ir::Access::Read);
  ASSERT_EQ(k.tile_consts.size(), 5u);
  EXPECT_EQ(k.tile_consts[0].var->name, "BM");
  EXPECT_EQ(k.tile_consts[0].candidates, (std::vector<int64_t>{32, 64, 128, 256}));
  EXPECT_EQ(k.tile_consts[0].per_target.at("c"), (std::vector<int64_t>{64, 96, 128}));
  EXPECT_EQ(k.tile_consts[3].per_target.count("c"), 0u);
  ASSERT_EQ(k.requirements.size(), 1u);
  EXPECT_EQ(k.requirements[0].text, "BM * BN >= 8 * threads");
  EXPECT_TRUE(k.requirements[0].pred->type.is_bool());
  const std::string gemm = std::string(TILEGEN_KERNELS_DIR) + "/gemm.yaml";
  int req_line = find_line(gemm, "- \"BM * BN >= 8 * threads\"").first;
  ASSERT_GT(req_line, 0);
  EXPECT_EQ(k.requirements[0].loc.line, req_line);
  ASSERT_EQ(k.shape_classes.size(), 8u); // GPU dispatch: small M and small outputs get their own tiles
  EXPECT_EQ(k.shape_classes[0].first, "gemv_narrow");
  EXPECT_EQ(k.shape_classes[1].first, "gemv");
  EXPECT_EQ(k.shape_classes[2].first, "gemv32");
  EXPECT_EQ(k.shape_classes[2].second.text, "M <= 32 && N >= 8192 && K % 8 == 0");
  EXPECT_EQ(k.shape_classes[3].first, "small_m");
  EXPECT_EQ(k.shape_classes[3].second.text, "M <= 32");
  EXPECT_EQ(k.shape_classes[4].first, "m64");
  EXPECT_EQ(k.shape_classes[4].second.text, "M <= 64 && N <= 8192");
  EXPECT_EQ(k.shape_classes[5].first, "wide_m");
  EXPECT_EQ(k.shape_classes[5].second.text, "M <= 64");
  EXPECT_EQ(k.shape_classes[6].first, "narrow");
  EXPECT_EQ(k.shape_classes[6].second.text, "M * N <= 1048576");
  EXPECT_EQ(k.shape_classes[7].first, "mid");
  EXPECT_EQ(k.shape_classes[7].second.text, "M * N <= 2097152");
  // The classes' own candidates (schedule.classes.<class>.targets) reach the IR
  EXPECT_EQ(k.tile_consts[0].per_class_target.at("gemv").at("sm_80"), (std::vector<int64_t>{16}));
  EXPECT_EQ(k.tile_consts[1].per_class_target.at("gemv_narrow").at("sm_90a"), (std::vector<int64_t>{32})); // BN
  EXPECT_EQ(k.tile_consts[0].per_class_target.at("gemv32").at("sm_90a"), (std::vector<int64_t>{32}));
  EXPECT_EQ(k.tile_consts[0].per_class_target.at("small_m").at("sm_90a"),
            (std::vector<int64_t>{64}));
  EXPECT_EQ(k.tile_consts[1].per_class_target.at("m64").at("sm_90a"), (std::vector<int64_t>{64})); // BN
  EXPECT_EQ(k.tile_consts[0].per_class_target.count("narrow"), 0u); // narrow keeps BM
  ASSERT_EQ(k.grid.size(), 2u);
  EXPECT_EQ(k.grid[0].index->name, "bx");
  EXPECT_EQ(k.grid[0].index->kind, ir::VarKind::BlockIndex);
  EXPECT_EQ(k.grid[1].index->name, "by");
  ASSERT_TRUE(k.threads);
  ASSERT_TRUE(k.threads->as<ir::VarRef>());
  EXPECT_EQ(k.threads->as<ir::VarRef>()->var->name, "threads");
  using K = ir::StmtKind;
  EXPECT_EQ(kinds(k.body),
            (std::vector<K>{K::Alloc, K::Alloc, K::Alloc, K::Fill, K::For, K::Combine, K::Copy}));
  auto seq = k.body->as<ir::Seq>();
  auto loop = seq->stmts[4]->as<ir::For>();
  ASSERT_TRUE(loop);
  EXPECT_TRUE(loop->pipelined());
  EXPECT_EQ(kinds(loop->body), (std::vector<K>{K::Copy, K::Copy, K::Gemm}));
  auto copy = loop->body->as<ir::Seq>()->stmts[0]->as<ir::Copy>();
  EXPECT_EQ(copy->src.buffer->name, "A");
  EXPECT_EQ(copy->dst.buffer->name, "A_s");
  EXPECT_EQ(copy->src.extents.size(), 2u);
  auto [copy_line, copy_col] = find_line(gemm, "copy: {src: \"A[by * BM, k * BK]\"");
  ASSERT_GT(copy_line, 0);
  EXPECT_EQ(copy->loc.line, copy_line);
  EXPECT_EQ(copy->loc.col, copy_col); // the mapping's key
  // The loop's split: acc's peer, a read-only f32 fragment of acc's shape, read by the combine.
  auto join = seq->stmts[5]->as<ir::Combine>();
  ASSERT_TRUE(join);
  ASSERT_EQ(join->carry.size(), 1u);
  EXPECT_EQ(join->carry[0].state->name, "acc");
  EXPECT_EQ(join->carry[0].peer->name, "acc_part");
  EXPECT_EQ(join->carry[0].peer->scope, ir::MemScope::Fragment);
  EXPECT_EQ(join->carry[0].peer->dtype, ir::DType::f32());
  EXPECT_EQ(join->carry[0].peer->rank(), 2u);
  EXPECT_EQ(kinds(join->body), (std::vector<K>{K::Parallel}));
  auto out = seq->stmts[6]->as<ir::Copy>();
  ASSERT_TRUE(out);
  EXPECT_EQ(out->dst.buffer->name, "C");
  EXPECT_EQ(out->src.buffer->dtype, ir::DType::f32());
}

TEST(Lowering, Softmax) {
  auto ks = load("softmax.yaml");
  ASSERT_EQ(ks.size(), 3u);
  const ir::Kernel& k = ks[1];
  EXPECT_EQ(k.type_suffix(), "f16");
  ASSERT_EQ(k.grid.size(), 1u);
  using K = ir::StmtKind;
  EXPECT_EQ(kinds(k.body),
            (std::vector<K>{K::Alloc, K::Alloc, K::Alloc, K::Alloc, K::Alloc, K::Alloc, K::Fill,
                            K::Fill, K::For, K::Parallel, K::For}));
  auto seq = k.body->as<ir::Seq>();
  ASSERT_EQ(seq->stmts.size(), 11u);
  auto fill = seq->stmts[6]->as<ir::Fill>();
  ASSERT_TRUE(fill->value->as<ir::FloatImm>());
  EXPECT_TRUE(std::isinf(fill->value->as<ir::FloatImm>()->value));
  EXPECT_LT(fill->value->as<ir::FloatImm>()->value, 0);
  auto pass1 = seq->stmts[8]->as<ir::For>();
  EXPECT_FALSE(pass1->pipelined());
  EXPECT_EQ(kinds(pass1->body),
            (std::vector<K>{K::Copy, K::Reduce, K::Parallel, K::Parallel, K::Reduce}));
  auto par = pass1->body->as<ir::Seq>()->stmts[2]->as<ir::Parallel>();
  ASSERT_EQ(par->vars.size(), 1u);
  EXPECT_EQ(kinds(par->body), (std::vector<K>{K::LetStmt, K::Store, K::Store}));
  auto red = pass1->body->as<ir::Seq>()->stmts[4]->as<ir::Reduce>();
  EXPECT_FALSE(red->clear);
  EXPECT_EQ(red->op, ir::ReduceOp::Sum);
  auto red0 = pass1->body->as<ir::Seq>()->stmts[1]->as<ir::Reduce>();
  EXPECT_TRUE(red0->clear);
  // The copy from a f16 tensor into the f32 fragment pads with -inf of the source dtype.
  auto copy = pass1->body->as<ir::Seq>()->stmts[0]->as<ir::Copy>();
  EXPECT_EQ(copy->pad->type, ir::DType::f16());
}

namespace {

std::optional<std::vector<ir::Kernel>> load_text(const std::string& text, std::string* err) {
  std::ostringstream out;
  DiagEngine diag(out);
  auto ks = spec::load_kernels_from_text("t.yaml", text, diag);
  *err = out.str();
  return ks;
}

const char* kTyped = R"Y(kernel: typed
summary: type rules
types: {T: [f16, bf16], U: [f32, i8]}
params: {M: dim, D: {values: [64, 128]}, N: {dim: dynamic, multiple_of: 8, min: 8, max: 4096}}
flags: {causal: bool}
scalars: {alpha: T}
tensors:
  X: {type: T, shape: [M, D]}
  Y: {type: U, shape: [M, D], access: readwrite}
schedule:
  BM: {range: [16, 64], multiple_of: 16}
grid: {bx: "cdiv(M, BM)"}
body:
  - local: {t: [i32, 4]}
  - if: "causal && M > 0"
    then:
      - parallel: {i: BM, j: D}
        body:
          - "let v = X[bx * BM + i, j] * alpha"
          - "Y[bx * BM + i, j] += U == U ? 0 : 0"
)Y";

} // namespace

TEST(Lowering, TypeProductParamsFlagsAndDefaults) {
  std::string spec = kTyped;
  // `U == U` is not valid (U is a type): first check the error, then the fixed spec.
  std::string err;
  auto bad = load_text(spec, &err);
  EXPECT_FALSE(bad);
  EXPECT_NE(err.find("a type parameter is not a value; 'U' is a type parameter"), std::string::npos)
      << err;
  spec.replace(spec.find("U == U ? 0 : 0"), 14, "i32(v)");
  auto ks = load_text(spec, &err);
  ASSERT_TRUE(ks) << err;
  ASSERT_EQ(ks->size(), 4u); // Cartesian product, first parameter slowest
  EXPECT_EQ((*ks)[0].type_suffix(), "f16_f32");
  EXPECT_EQ((*ks)[1].type_suffix(), "f16_i8");
  EXPECT_EQ((*ks)[2].type_suffix(), "bf16_f32");
  EXPECT_EQ((*ks)[3].type_suffix(), "bf16_i8");
  const ir::Kernel& k = (*ks)[1];
  ASSERT_EQ(k.dims.size(), 3u);
  EXPECT_EQ(k.dims[1].var->kind, ir::VarKind::ValueParam);
  EXPECT_EQ(k.dims[1].values, (std::vector<int64_t>{64, 128}));
  EXPECT_EQ(k.dims[2].var->kind, ir::VarKind::Dim);
  EXPECT_EQ(k.dims[2].multiple_of, 8);
  EXPECT_EQ(k.dims[2].min, 8);
  EXPECT_EQ(k.dims[2].max, 4096);
  ASSERT_EQ(k.flags.size(), 1u);
  EXPECT_EQ(k.flags[0]->type, ir::DType::boolean());
  ASSERT_EQ(k.scalars.size(), 1u);
  EXPECT_EQ(k.scalars[0]->type, ir::DType::f16());
  EXPECT_EQ(k.tile_consts[0].candidates, (std::vector<int64_t>{16, 32, 48, 64}));
  ASSERT_TRUE(k.threads->as<ir::IntImm>());
  EXPECT_EQ(k.threads->as<ir::IntImm>()->value, 128); // default
  EXPECT_EQ(k.tensors[1]->dtype, ir::DType::i8());
  EXPECT_EQ(k.tensors[1]->access, ir::Access::ReadWrite);

  auto seq = k.body->as<ir::Seq>();
  auto iff = seq->stmts[1]->as<ir::IfThenElse>();
  ASSERT_TRUE(iff);
  EXPECT_EQ(iff->else_case, nullptr);
  auto par = iff->then_case->as<ir::Seq>()->stmts[0]->as<ir::Parallel>();
  auto body = par->body->as<ir::Seq>();
  // let v = X[...] * alpha: both 16-bit operands are widened to f32 before the multiply.
  auto let = body->stmts[0]->as<ir::LetStmt>();
  EXPECT_EQ(let->var->type, ir::DType::f32());
  auto mul = let->value->as<ir::Binary>();
  ASSERT_TRUE(mul);
  ASSERT_TRUE(mul->a->as<ir::Cast>());
  EXPECT_EQ(mul->a->as<ir::Cast>()->value->kind, ir::ExprKind::Load);
  ASSERT_TRUE(mul->b->as<ir::Cast>());
  EXPECT_EQ(mul->b->as<ir::Cast>()->value->kind, ir::ExprKind::VarRef);
  // Y[...] += i32(v): the stored value is cast to Y's dtype (i8).
  auto store = body->stmts[1]->as<ir::Store>();
  EXPECT_EQ(store->op, ir::StoreOp::Add);
  EXPECT_EQ(store->value->type, ir::DType::i8());
}

TEST(Lowering, LiteralsFoldAndStoresCast) {
  std::string err;
  auto ks = load_text(R"Y(kernel: lit
summary: s
types: {T: [bf16]}
params: {M: dim}
tensors:
  Y: {type: T, shape: [M], access: write}
grid: {bx: 1}
body:
  - fragment: {acc: [f32, "2 * 64"]}
  - fill: {dst: acc, value: 1}
  - parallel: {i: "cdiv(256, 2)"}
    body:
      - "Y[i] = acc[i] * 0.5"
)Y",
                      &err);
  ASSERT_TRUE(ks) << err;
  const ir::Kernel& k = (*ks)[0];
  auto seq = k.body->as<ir::Seq>();
  auto alloc = seq->stmts[0]->as<ir::Alloc>();
  ASSERT_TRUE(alloc->buffer->shape[0]->as<ir::IntImm>());
  EXPECT_EQ(alloc->buffer->shape[0]->as<ir::IntImm>()->value, 128);
  auto fill = seq->stmts[1]->as<ir::Fill>();
  ASSERT_TRUE(fill->value->as<ir::FloatImm>());
  EXPECT_EQ(fill->value->type, ir::DType::f32());
  auto par = seq->stmts[2]->as<ir::Parallel>();
  EXPECT_EQ(par->extents[0]->as<ir::IntImm>()->value, 128);
  auto store = par->body->as<ir::Seq>()->stmts[0]->as<ir::Store>();
  ASSERT_TRUE(store->value->as<ir::Cast>());
  EXPECT_EQ(store->value->type, ir::DType::bf16());
  EXPECT_EQ(store->value->as<ir::Cast>()->value->type, ir::DType::f32());
}

TEST(Lowering, ErrorsStopAtTheFirstFailingBindingWithANote) {
  std::string err;
  auto ks = load_text(R"Y(kernel: k
summary: s
types: {T: [f32, i32]}
params: {M: dim}
tensors:
  Y: {type: T, shape: [M], access: write}
grid: {bx: 1}
body:
  - parallel: {i: 4}
    body:
      - "Y[i] = 0.5"
)Y",
                      &err);
  EXPECT_FALSE(ks);
  EXPECT_NE(err.find("t.yaml:11:17: error: storing a value of type f32 into 'Y' (i32) needs an "
                     "explicit cast, e.g. i32(...)"),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("t.yaml:3:9: note: in the instantiation with T = i32"), std::string::npos)
      << err;
}

// docs/spec.md "Bitwise operators" and "bitcast": typing, constant folding, and the rules.
namespace {
std::string bit_kernel(const std::string& tensor_shape, const std::string& stmt) {
  return R"Y(kernel: k
summary: s
params: {N: dim}
scalars: {s: f64}
tensors:
  W: {type: i32, shape: [N]}
  F: {type: f32, shape: [N]}
  Y: {type: i32, shape: [)Y" + tensor_shape + R"Y(], access: write}
grid: {bx: 1}
body:
  - parallel: {i: 4}
    body:
      - ")Y" + stmt + R"Y("
)Y";
}
std::string lowered_value(const std::string& stmt, std::string* err) {
  auto ks = load_text(bit_kernel("N", stmt), err);
  if (!ks)
    return "ERROR";
  ir::Stmt s = (*ks)[0].body;
  while (true) { // the one Store, through Seqs and the Parallel
    if (auto q = s->as<ir::Seq>())
      s = q->stmts.back();
    else if (auto p = s->as<ir::Parallel>())
      s = p->body;
    else
      break;
  }
  auto st = s->as<ir::Store>();
  return st ? ir::to_string(st->value) : "NO STORE";
}
} // namespace

TEST(Lowering, BitwiseTypingAndFolding) {
  std::string err;
  EXPECT_EQ(lowered_value("Y[i] = i32(W[i] >> 4 & 15)", &err), "i32(i64(W[i]) >> 4 & 15)") << err;
  EXPECT_EQ(lowered_value("Y[i] = W[i] ^ W[i] << W[i]", &err), "W[i] ^ W[i] << W[i]") << err;
  // (~7) | (1 << 70) | ((-8 >> 1) ^ (6 & 3)) = -8 | 0 | (-4 ^ 2) = -2
  EXPECT_EQ(lowered_value("Y[i] = i32(~7 | 1 << 70 | -8 >> 1 ^ 6 & 3)", &err), "i32(-2)") << err;
  EXPECT_EQ(lowered_value("Y[i] = i32(~i)", &err), "i32(~i)") << err;
  EXPECT_EQ(lowered_value("Y[i] = bitcast<i32>(F[i])", &err), "bitcast<i32>(F[i])") << err;
  EXPECT_EQ(lowered_value("Y[i] = i32(bitcast<f32>(1065353216))", &err), "i32(bitcast<f32>(1065353216))") << err;
  EXPECT_EQ(lowered_value("Y[i] = bitcast<i32>(W[i])", &err), "W[i]") << err;
}

TEST(Lowering, BitcastRules) {
  std::string err;
  EXPECT_FALSE(load_text(bit_kernel("bitcast<i64>(s)", "Y[i] = 0"), &err));
  EXPECT_NE(err.find("error: 'bitcast' is not allowed in a tensor shape, which the host evaluates at "
                     "dispatch"),
            std::string::npos)
      << err;
  err.clear();
  EXPECT_FALSE(load_text(bit_kernel("N", "Y[i] = bitcast<i32>(F[i], F[i])"), &err));
  EXPECT_NE(err.find("error: 'bitcast<i32>' takes 1 argument, found 2"), std::string::npos) << err;
  err.clear();
  EXPECT_FALSE(load_text(bit_kernel("N", "Y[i] = bitcast<i32>(i < 2)"), &err));
  EXPECT_NE(err.find("error: bitcast<i32> needs an argument of the same width: i32 is 32 bits, the "
                     "argument is bool;"),
            std::string::npos)
      << err;
  err.clear();
  EXPECT_FALSE(load_text(bit_kernel("N", "Y[i] = i32(~F[i])"), &err));
  EXPECT_NE(err.find("error: operator '~' needs an integer, found f32"), std::string::npos) << err;
  err.clear();
  EXPECT_FALSE(load_text(bit_kernel("N", "Y[i] = (~(i < 2)) ? 1 : 0"), &err));
  EXPECT_NE(err.find("error: operator '~' needs an integer, found bool (bitwise operators take "
                     "integer operands only; did you mean '!'?)"),
            std::string::npos)
      << err;
}

namespace {
std::string unsigned_kernel(const std::string& stmt, const std::string& y = "u32") {
  return R"Y(kernel: k
summary: s
params: {N: dim}
scalars: {s: i32}
tensors:
  U: {type: u32, shape: [N]}
  B: {type: u8, shape: [N]}
  L: {type: u64, shape: [N]}
  F: {type: f32, shape: [N]}
  Y: {type: )Y" + y + R"Y(, shape: [N], access: write}
grid: {bx: 1}
body:
  - parallel: {i: 4}
    body:
      - ")Y" + stmt + R"Y("
)Y";
}
std::string unsigned_value(const std::string& stmt, std::string* err, const std::string& y = "u32") {
  auto ks = load_text(unsigned_kernel(stmt, y), err);
  if (!ks)
    return "ERROR";
  ir::Stmt s = (*ks)[0].body;
  while (auto q = s->as<ir::Seq>())
    s = q->stmts.back();
  s = s->as<ir::Parallel>()->body;
  while (auto q = s->as<ir::Seq>())
    s = q->stmts.back();
  auto st = s->as<ir::Store>();
  return st ? ir::to_string(st->value) : "NO STORE";
}
} // namespace

// docs/spec.md "Unsigned integers": u8 computes as u32, a literal >= 0 takes the unsigned type,
// u32(5) is a constant, signed and unsigned never mix, bitcast goes through the signed partner.
TEST(Lowering, UnsignedTyping) {
  std::string err;
  EXPECT_EQ(unsigned_value("Y[i] = B[i] & 15", &err), "u32(B[i]) & u32(15)") << err;
  EXPECT_EQ(unsigned_value("Y[i] = U[i] >> 4", &err), "U[i] >> u32(4)") << err;
  EXPECT_EQ(unsigned_value("Y[i] = u32(5)", &err), "u32(5)") << err;
  EXPECT_EQ(unsigned_value("Y[i] = u32(-1)", &err), "u32(4294967295)") << err;
  EXPECT_EQ(unsigned_value("Y[i] = -U[i]", &err), "u32(0) - U[i]") << err;
  EXPECT_EQ(unsigned_value("Y[i] = bitcast<u32>(F[i])", &err), "u32(bitcast<i32>(F[i]))") << err;
  EXPECT_EQ(unsigned_value("Y[i] = bitcast<u32>(i32(s))", &err), "u32(i32(s))") << err;
  EXPECT_EQ(unsigned_value("Y[i] = bitcast<f32>(U[i])", &err, "f32"), "bitcast<f32>(i32(U[i]))") << err;
  EXPECT_EQ(unsigned_value("Y[i] = bitcast<u64>(L[i])", &err, "u64"), "L[i]") << err;
  EXPECT_EQ(unsigned_value("Y[i] = L[i] + U[i]", &err, "u64"), "L[i] + u64(U[i])") << err;
  err.clear();
  EXPECT_EQ(unsigned_value("Y[i] = U[i] + s", &err), "ERROR");
  EXPECT_NE(err.find("error: operator '+' mixes signed and unsigned integers (u32 and i32)"), std::string::npos) << err;
  err.clear();
  EXPECT_EQ(unsigned_value("Y[i] = U[i] + -1", &err), "ERROR");
  EXPECT_NE(err.find("mixes signed and unsigned integers (u32 and i64)"), std::string::npos) << err;
  err.clear();
  EXPECT_EQ(unsigned_value("Y[i] = max(U[i], s)", &err), "ERROR");
  EXPECT_NE(err.find("error: 'max' mixes signed and unsigned"), std::string::npos) << err;
  err.clear();
  EXPECT_EQ(unsigned_value("Y[i] = i < 2 ? U[i] : s", &err), "ERROR");
  EXPECT_NE(err.find("error: '?:' mixes signed and unsigned"), std::string::npos) << err;
  err.clear();
  EXPECT_EQ(unsigned_value("Y[i] = bitcast<f16>(B[i] | 0)", &err), "ERROR");
  EXPECT_NE(err.find("bitcast<f16> needs an argument of the same width: f16 is 16 bits, the argument is u32"), std::string::npos) << err;
  err.clear();
  EXPECT_EQ(unsigned_value("Y[i] = U[i] % u32(0)", &err), "ERROR");
  EXPECT_NE(err.find("error: integer division by zero: the divisor of '%' is 0"), std::string::npos) << err;
}

TEST(Lowering, EveryShippedKernelLowers) {
  for (const char* name : {"gemm.yaml", "softmax.yaml", "rmsnorm.yaml", "gemm_bias_gelu.yaml",
                           "flash_attention_fwd.yaml"}) {
    std::string path = std::string(TILEGEN_KERNELS_DIR) + "/" + name;
    if (!std::ifstream(path))
      continue; // written by another part of the tree; gemm and softmax always exist
    std::ostringstream out;
    DiagEngine diag(out);
    auto ks = spec::load_kernels(path, diag);
    EXPECT_TRUE(ks) << name << "\n" << out.str();
  }
}

TEST(Frontend, FileErrors) {
  std::ostringstream out;
  DiagEngine diag(out);
  EXPECT_FALSE(spec::load_kernels("/nonexistent/dir/x.yaml", diag));
  EXPECT_EQ(out.str(), "/nonexistent/dir/x.yaml: error: cannot open spec file: No such file or "
                       "directory\n");

  std::string big = ::testing::TempDir() + "/tilegen_big_spec.yaml";
  {
    std::ofstream f(big, std::ios::binary);
    f << std::string((1 << 20) + 5, '#');
  }
  std::ostringstream out2;
  DiagEngine diag2(out2);
  EXPECT_FALSE(spec::load_kernels(big, diag2));
  // Located at the first byte past the limit (one line of '#': column 1048577), the line shown
  // as a window around it.
  EXPECT_EQ(out2.str().substr(0, out2.str().find('\n') + 1),
            big + ":1:1048577: error: spec file is too large (1048581 bytes; the limit is "
                  "1048576); this is the first byte past it\n");
  std::remove(big.c_str());

  // Not regular files: a folder; /dev/zero and a pipe that never ends are read up to the limit
  // + 1 bytes; a FIFO without a writer does not block (it reads as empty).
  std::ostringstream out3;
  DiagEngine diag3(out3);
  EXPECT_FALSE(spec::load_kernels(::testing::TempDir(), diag3));
  EXPECT_NE(out3.str().find(": error: this is a folder, not a spec file\n"), std::string::npos)
      << out3.str();
  std::ostringstream out4;
  DiagEngine diag4(out4);
  EXPECT_FALSE(spec::load_kernels("/dev/zero", diag4));
  EXPECT_EQ(out4.str().substr(0, out4.str().find('\n') + 1),
            "/dev/zero:1:1048577: error: spec file is too large (more than 1048576 bytes; the "
            "limit is 1048576); this is the first byte past it\n");
  std::string fifo = ::testing::TempDir() + "/tilegen_fifo_spec.yaml";
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::ostringstream out5;
  DiagEngine diag5(out5);
  EXPECT_FALSE(spec::load_kernels(fifo, diag5));
  EXPECT_NE(out5.str().find("empty spec"), std::string::npos) << out5.str();
  std::remove(fifo.c_str());
}
