// Lowering of the shipped kernels: the ir::Kernel fields IR.h documents.
#include "spec/Frontend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

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
  EXPECT_EQ(k.requirements[0].text, "BM * BN >= 64 * 64");
  EXPECT_TRUE(k.requirements[0].pred->type.is_bool());
  EXPECT_EQ(k.requirements[0].loc.line, 21);
  ASSERT_EQ(k.grid.size(), 2u);
  EXPECT_EQ(k.grid[0].index->name, "bx");
  EXPECT_EQ(k.grid[0].index->kind, ir::VarKind::BlockIndex);
  EXPECT_EQ(k.grid[1].index->name, "by");
  ASSERT_TRUE(k.threads);
  ASSERT_TRUE(k.threads->as<ir::VarRef>());
  EXPECT_EQ(k.threads->as<ir::VarRef>()->var->name, "threads");
  using K = ir::StmtKind;
  EXPECT_EQ(kinds(k.body), (std::vector<K>{K::Alloc, K::Alloc, K::Alloc, K::Fill, K::For, K::Copy}));
  auto seq = k.body->as<ir::Seq>();
  auto loop = seq->stmts[4]->as<ir::For>();
  ASSERT_TRUE(loop);
  EXPECT_TRUE(loop->pipelined());
  EXPECT_EQ(kinds(loop->body), (std::vector<K>{K::Copy, K::Copy, K::Gemm}));
  auto copy = loop->body->as<ir::Seq>()->stmts[0]->as<ir::Copy>();
  EXPECT_EQ(copy->src.buffer->name, "A");
  EXPECT_EQ(copy->dst.buffer->name, "A_s");
  EXPECT_EQ(copy->src.extents.size(), 2u);
  EXPECT_EQ(copy->loc.line, 32);
  EXPECT_EQ(copy->loc.col, 9);
  auto out = seq->stmts[5]->as<ir::Copy>();
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
            (std::vector<K>{K::Alloc, K::Alloc, K::Alloc, K::Alloc, K::Fill, K::Fill, K::For,
                            K::For}));
  auto seq = k.body->as<ir::Seq>();
  auto fill = seq->stmts[4]->as<ir::Fill>();
  ASSERT_TRUE(fill->value->as<ir::FloatImm>());
  EXPECT_TRUE(std::isinf(fill->value->as<ir::FloatImm>()->value));
  EXPECT_LT(fill->value->as<ir::FloatImm>()->value, 0);
  auto pass1 = seq->stmts[6]->as<ir::For>();
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
