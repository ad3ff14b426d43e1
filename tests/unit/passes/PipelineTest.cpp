#include "passes/Pipeline.h"

#include "ir/IRPrinter.h"
#include "ir/IRVerifier.h"

#include "emit/TestKernels.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tilegen;
using namespace tilegen::ir;
using namespace tilegen::testing;

namespace {

TEST(Pipeline, InstancesWithoutFlagsOrValueParams) {
  auto insts = passes::enumerate_instances(make_gemm_kernel(DType::bf16()));
  ASSERT_EQ(insts.size(), 1u);
  EXPECT_EQ(insts[0].name, "bf16");
  EXPECT_TRUE(insts[0].values.empty());
}

TEST(Pipeline, InstancesFlagsThenValueParamsInOrder) {
  Kernel k = make_softmax_kernel(DType::bf16());
  k.flags = {make_var("causal", VarKind::Flag, DType::boolean())};
  DimParam d;
  d.var = make_var("D", VarKind::ValueParam, DType::i64());
  d.values = {128, 64};
  k.dims.push_back(d);
  auto insts = passes::enumerate_instances(k);
  std::vector<std::string> names;
  for (const auto& i : insts)
    names.push_back(i.name);
  EXPECT_EQ(names, (std::vector<std::string>{"bf16_causal0_D64", "bf16_causal0_D128",
                                             "bf16_causal1_D64", "bf16_causal1_D128"}));
  EXPECT_EQ(insts[3].values.at("causal"), 1);
  EXPECT_EQ(insts[3].values.at("D"), 128);
}

TEST(Pipeline, InstantiateGemmForC) {
  std::ostringstream out;
  DiagEngine diag(out);
  Kernel k = make_gemm_kernel(DType::bf16());
  auto inst = passes::enumerate_instances(k).at(0);
  auto r = passes::instantiate(k, inst, *find_target("c"), diag);
  ASSERT_TRUE(r) << out.str();
  EXPECT_EQ(r->target, "c");
  EXPECT_EQ(r->bindings.at("BK"), 256);
  EXPECT_TRUE(verify(*r, VerifyOptions{true}).empty());
  ASSERT_GE(r->notes.size(), 1u);
  EXPECT_EQ(r->notes[0], "BM=64 BN=256 BK=256 stages=2 threads=128: footprint 229376 B of "
                         "262144 B budget");
  std::string text = to_string(*r);
  // Shapes are constant; 16-bit shared buffers are held as f32 on C; globals stay bf16.
  EXPECT_NE(text.find("  shared A_s: f32[64, 256]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("tensor A: bf16[M, K] read\n"), std::string::npos) << text;
  EXPECT_NE(text.find("for k in [0, cdiv(K, 256)) pipelined(stages=2) {"), std::string::npos);
  EXPECT_NE(text.find("grid by < cdiv(M, 64)\n"), std::string::npos) << text;
}

TEST(Pipeline, InstantiateSubstitutesValueParamsAndFlags) {
  Kernel k = make_softmax_kernel(DType::f32());
  auto flag = make_var("twice", VarKind::Flag, DType::boolean());
  k.flags = {flag};
  auto x = k.tensors[0];
  // if (twice) { fill m = 2 } appended: must fold away in the twice=0 instance.
  auto m = make_buffer("extra", MemScope::Local, DType::f32(), {i64(2)});
  k.body = Seq::make({k.body, Alloc::make(m),
                      IfThenElse::make(VarRef::make(flag), Fill::make(m, make_f32(2.0)), nullptr)});
  std::ostringstream out;
  DiagEngine diag(out);
  auto insts = passes::enumerate_instances(k);
  auto r0 = passes::instantiate(k, insts[0], *find_target("c"), diag);
  auto r1 = passes::instantiate(k, insts[1], *find_target("c"), diag);
  ASSERT_TRUE(r0 && r1) << out.str();
  EXPECT_EQ(to_string(*r0).find("fill extra = 2.0"), std::string::npos);
  EXPECT_NE(to_string(*r1).find("fill extra = 2.0"), std::string::npos);
  EXPECT_EQ(r1->bindings.at("twice"), 1);
}

TEST(Pipeline, UnsatisfiableScheduleStopsInstantiation) {
  Kernel k = make_gemm_kernel(DType::f32(), false, {{"c", {128}}}, {{"c", {256}}}, {{"c", {256}}});
  std::ostringstream out;
  DiagEngine diag(out);
  auto r = passes::instantiate(k, passes::enumerate_instances(k).at(0), *find_target("c"), diag);
  EXPECT_FALSE(r);
  EXPECT_TRUE(diag.has_errors());
  EXPECT_NE(out.str().find("unsatisfiable schedule for target 'c'"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("test.yaml:15:3: error"), std::string::npos) << out.str();
}

} // namespace
