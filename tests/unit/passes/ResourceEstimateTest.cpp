// ResourceEstimate: exact shared-memory numbers (the contract with the CUDA emitter) and the
// register estimate, on the shipped gemm and flash_attention_fwd specs and small specs.
#include "passes/ResourceEstimate.h"

#include "ir/Simplify.h"
#include "passes/ScheduleResolver.h"
#include "spec/Frontend.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tilegen;
using namespace tilegen::ir;

namespace {

Kernel shipped(const std::string& file, const std::string& type) {
  std::ostringstream out;
  DiagEngine diag(out);
  auto ks = spec::load_kernels(std::string(TILEGEN_KERNELS_DIR) + "/" + file, diag);
  EXPECT_TRUE(ks) << out.str();
  for (auto& k : *ks)
    if (k.type_suffix() == type)
      return k;
  ADD_FAILURE() << "no " << type << " binding in " << file;
  return {};
}

Kernel from_text(const std::string& text) {
  std::ostringstream out;
  DiagEngine diag(out);
  auto ks = spec::load_kernels_from_text("t.yaml", text, diag);
  EXPECT_TRUE(ks) << out.str();
  return ks->front();
}

// Instance values + one configuration, by name.
VarMap bind(const Kernel& k, const std::map<std::string, int64_t>& inst,
            const std::map<std::string, int64_t>& config) {
  VarMap m = passes::instance_var_map(k, inst);
  for (const auto& tc : k.tile_consts)
    m[tc.var.get()] = make_i64(config.at(tc.var->name));
  return m;
}

passes::ResourceUse estimate(const Kernel& k, const VarMap& m, const Target& t) {
  std::ostringstream out;
  DiagEngine diag(out);
  auto r = passes::estimate_resources(k, m, t, diag);
  EXPECT_TRUE(r) << out.str();
  return r ? *r : passes::ResourceUse{};
}

const Target& sm(const char* name) { return *find_target(name); }

TEST(ResourceEstimate, GemmBf16MultiBuffersPipelinedSharedTiles) {
  Kernel k = shipped("gemm.yaml", "bf16");
  auto m = bind(k, {}, {{"BM", 128}, {"BN", 128}, {"BK", 64}, {"stages", 4}, {"threads", 256}});
  auto r = estimate(k, m, sm("sm_86"));
  // A_s, B_s: 128*64*2 = 16384 B each, x 4 stages; no reduce.
  ASSERT_EQ(r.smem_buffers.size(), 2u);
  EXPECT_EQ(r.smem_buffers[0].name, "A_s");
  EXPECT_EQ(r.smem_buffers[0].factor, 4);
  EXPECT_EQ(r.smem_buffers[0].bytes, 65536);
  EXPECT_EQ(r.smem_buffers[1].bytes, 65536);
  EXPECT_EQ(r.reduce_scratch, 0);
  EXPECT_EQ(r.smem_bytes, 131072);
  EXPECT_EQ(r.smem_breakdown(), "A_s 4 \u00d7 16384 B, B_s 4 \u00d7 16384 B");
  // acc: 128*128 f32 / 256 threads = 64 words; one k16 slice of a and b: (128 + 128) * 16
  // halves / 2 / 256 = 8 words; + 40.
  EXPECT_EQ(r.threads, 256);
  EXPECT_EQ(r.fragment_words, 64);
  EXPECT_EQ(r.operand_words, 8);
  EXPECT_EQ(r.registers, 112);
}

TEST(ResourceEstimate, GemmF32AndStagesOneAndNoAsyncCopy) {
  Kernel k = shipped("gemm.yaml", "f32");
  auto m = bind(k, {}, {{"BM", 64}, {"BN", 128}, {"BK", 32}, {"stages", 3}, {"threads", 128}});
  auto r = estimate(k, m, sm("sm_80"));
  // A_s 64*32*4 = 8192 x 3, B_s 32*128*4 = 16384 x 3.
  EXPECT_EQ(r.smem_bytes, 3 * 8192 + 3 * 16384);
  EXPECT_EQ(r.operand_words, 0); // f32 gemm: FMA pipes, no mma operands
  EXPECT_EQ(r.fragment_words, 64 * 128 / 128);

  // A target without async copies single-buffers: F = 1.
  Target plain = sm("sm_80");
  plain.gpu.async_copy = AsyncCopy::None;
  EXPECT_EQ(estimate(k, m, plain).smem_bytes, 8192 + 16384);
  // stages = 1 is not a pipeline either.
  auto m1 = bind(k, {}, {{"BM", 64}, {"BN", 128}, {"BK", 32}, {"stages", 1}, {"threads", 128}});
  EXPECT_EQ(estimate(k, m1, sm("sm_80")).smem_bytes, 8192 + 16384);
}

// HIP targets stage pipelines through registers (HipPipeline.cpp): `stages` LDS buffers per
// pipelined tile, and each thread's 16-byte chunks of one stage as staging registers.
TEST(ResourceEstimate, HipPipelineCountsStagesAndStagingRegisters) {
  Kernel k = shipped("gemm.yaml", "f16");
  auto m = bind(k, {}, {{"BM", 128}, {"BN", 256}, {"BK", 32}, {"stages", 2}, {"threads", 256}});
  for (const char* t : {"hip", "gfx90a", "gfx942", "gfx1100"}) {
    auto r = estimate(k, m, sm(t));
    // A_s 128*32*2 = 8192 B, B_s 32*256*2 = 16384 B, x 2 stages
    EXPECT_EQ(r.smem_bytes, 2 * 8192 + 2 * 16384) << t;
    EXPECT_EQ(r.smem_buffers[0].factor, 2) << t;
    // chunks per thread: A 512 / 256 = 2, B 1024 / 256 = 4: 6 x 4 words
    EXPECT_EQ(r.staging_words, 24) << t;
    EXPECT_NE(r.register_breakdown().find("24 staging"), std::string::npos) << t;
  }
  // three stages of this tile exceed the 64 KiB of LDS: 72 KiB
  auto m3 = bind(k, {}, {{"BM", 128}, {"BN", 256}, {"BK", 32}, {"stages", 3}, {"threads", 256}});
  EXPECT_EQ(estimate(k, m3, sm("gfx942")).smem_bytes, 3 * 8192 + 3 * 16384);
  // CUDA targets have no staging registers
  EXPECT_EQ(estimate(k, m, sm("sm_80")).staging_words, 0);
}

// gemm_fp8 keeps FP8 tiles at one byte in LDS where gfx942's FP8 MFMA takes the gemm
// (LegalizeHip::hip_fp8_matrix_native) and counts them widened to f16 elsewhere.
TEST(ResourceEstimate, HipFp8TilesAreBytesOnlyWithFp8Mfma) {
  for (const char* type : {"e4m3", "e5m2"}) {
    Kernel k = shipped("gemm_fp8.yaml", type);
    auto m = bind(k, {}, {{"BM", 128}, {"BN", 128}, {"BK", 64}, {"stages", 2}, {"threads", 256}});
    // A_s, B_s: 128 x 64 each, 2 stages
    EXPECT_EQ(estimate(k, m, sm("gfx942")).smem_bytes, 2 * 2 * 128 * 64) << type;
    EXPECT_EQ(estimate(k, m, sm("gfx90a")).smem_bytes, 2 * 2 * 128 * 64 * 2) << type;
    EXPECT_EQ(estimate(k, m, sm("hip")).smem_bytes, 2 * 2 * 128 * 64 * 2) << type;
  }
}

TEST(ResourceEstimate, FlashAttentionD128) {
  Kernel k = shipped("flash_attention_fwd.yaml", "bf16");
  auto m = bind(k, {{"causal", 1}, {"D", 128}},
                {{"BM", 128}, {"BN", 64}, {"stages", 2}, {"threads", 256}, {"WR", 16}});
  auto r = estimate(k, m, sm("sm_90"));
  // Q_s is copied before the loop: 128*128*2 = 32768 once. K_s, V_s: 64*128*2 = 16384 x 2.
  // Reduce scratch: 256/32 warps * 4 B * 128 (m_blk and l have BM elements) = 4096.
  ASSERT_EQ(r.smem_buffers.size(), 3u);
  EXPECT_EQ(r.smem_buffers[0].factor, 1);
  EXPECT_EQ(r.smem_buffers[0].bytes, 32768);
  EXPECT_EQ(r.smem_buffers[1].bytes, 32768);
  EXPECT_EQ(r.smem_buffers[2].bytes, 32768);
  EXPECT_EQ(r.reduce_scratch, 4096);
  EXPECT_EQ(r.smem_bytes, 102400);
  // s 8192 f32 / 256 = 32; p 8192 bf16 = 4096 words / 256 = 16; acc 16384 / 256 = 64;
  // m, m_blk, l, alpha: 128 / 256 -> 1 each. Operands: QK^T (128+64)*16/2/256 = 6,
  // PV (128+128)*16/2/256 = 8. Live at once: acc, m, l (read after the loop or in the next
  // iteration) and alpha (its first mention in the loop body reads it) throughout the loop;
  // s from the first gemm to the copy into p, p from there to the second gemm, m_blk from its
  // reduce to the merge. The peak is the copy s -> p: 64 + 3 + 32 + 16 (the gemms: QK^T
  // 64 + 3 + 32 + 6 operand, PV 64 + 3 + 16 + 8).
  EXPECT_EQ(r.fragment_words, 64 + 3 + 32 + 16);
  EXPECT_EQ(r.operand_words, 0);
  EXPECT_EQ(r.registers, 115 + 40);
}

// FA2's 32 query rows per warp on the sm_90 path: the sum of all fragments is over 255, but s and p and the two gemms' operands are never live together. Layout planning
// loads the second gemm's B (V) in n16 chunks: with a whole k16 step ahead, its operands
// (P packed in place: 4 x 2 m16 tiles; V: 2 steps x 2 x 16 n8 tiles) would not fit beside the
// live fragments. The first gemm, and 16-row warp tiles (one m16 tile: a chunk would feed
// only two mma), keep whole steps.
TEST(ResourceEstimate, ThirtyTwoRowWarpTilesFitAndChunkTheSecondGemm) {
  Kernel k = shipped("flash_attention_fwd.yaml", "bf16");
  auto m = bind(k, {{"causal", 0}, {"D", 128}},
                {{"BM", 128}, {"BN", 32}, {"stages", 2}, {"threads", 128}, {"WR", 32}});
  Kernel ik = simplify(substitute(k, m));
  std::ostringstream out;
  DiagEngine diag(out);
  auto plan = passes::infer_layouts(ik, sm("sm_90"), diag);
  ASSERT_TRUE(plan) << out.str();
  auto r = passes::estimate_resources(ik, {}, sm("sm_90"), diag, &*plan);
  ASSERT_TRUE(r) << out.str();
  // Peak at the copy s -> p: acc 128 + m, l, alpha 3 + s 32 + p 16 (the shipped BM 128 BN 32).
  EXPECT_EQ(r->fragment_words, 128 + 3 + 32 + 16);
  EXPECT_EQ(r->registers, 179 + 40);
  // The first gemm: 163 live + Q 2 x 2 x 4 + K 2 x 2 x 4 + 40 = 235 fits; the second: 147 live +
  // P 4 x 2 + V 2 x 2 x 16 + 40 = 259 does not.
  // The first gemm reads Q_s from shared memory, the second P from registers.
  bool qk = false, pv = false;
  for (const auto& [stmt, gp] : plan->gemms)
    (stmt->as<Gemm>()->a->scope == MemScope::Fragment ? pv : qk) = gp.b_chunked;
  EXPECT_FALSE(qk);
  EXPECT_TRUE(pv);

  auto m64 = bind(k, {{"causal", 0}, {"D", 128}},
                  {{"BM", 64}, {"BN", 64}, {"stages", 2}, {"threads", 128}, {"WR", 16}});
  auto plan64 = passes::infer_layouts(simplify(substitute(k, m64)), sm("sm_90"), diag);
  ASSERT_TRUE(plan64) << out.str();
  for (const auto& [stmt, gp] : plan64->gemms)
    EXPECT_FALSE(gp.b_chunked);
}

// A fragment written in full at the top of a loop body is not carried around the loop; one that
// the body reads first, or that is used after the loop, stays live through all of it.
TEST(ResourceEstimate, LivenessFollowsLoops) {
  Kernel k = from_text(R"Y(kernel: live
summary: two temporaries, one inside a loop and one after it
params: {N: dim}
tensors:
  Y: {type: f32, shape: [64, 64], access: write}
grid: {bx: 1}
threads: 128
body:
  - fragment:
      acc: [f32, 64, 64]
      t: [f32, 64, 64]
      u: [f32, 64, 64]
  - fill: {dst: acc, value: 0}
  - for: {var: k, extent: "cdiv(N, 64)"}
    body:
      - fill: {dst: t, value: 1}
      - parallel: {i: 64, j: 64}
        body:
          - "acc[i, j] = acc[i, j] + t[i, j]"
  - fill: {dst: u, value: 2}
  - parallel: {i: 64, j: 64}
    body:
      - "acc[i, j] = acc[i, j] * u[i, j]"
  - copy: {src: acc, dst: "Y[0, 0]"}
)Y");
  auto r = estimate(k, {}, sm("sm_80"));
  // acc, t, u: 32 words each; t and u are never live together.
  EXPECT_EQ(r.fragment_words, 64);
  EXPECT_EQ(r.registers, 64 + 40);
}

TEST(ResourceEstimate, FlashAttentionD64SmallTiles) {
  Kernel k = shipped("flash_attention_fwd.yaml", "f16");
  auto m = bind(k, {{"causal", 0}, {"D", 64}},
                {{"BM", 64}, {"BN", 128}, {"stages", 2}, {"threads", 128}, {"WR", 16}});
  auto r = estimate(k, m, sm("sm_80"));
  // Q_s 64*64*2 = 8192; K_s, V_s 128*64*2 = 16384 x 2 each; scratch 4 warps * 4 * 64 = 1024.
  EXPECT_EQ(r.smem_bytes, 8192 + 2 * 32768 + 1024);
}

TEST(ResourceEstimate, F32FlashAttentionStagesTheProbabilitiesForTheSimtGemm) {
  Kernel k = shipped("flash_attention_fwd.yaml", "f32");
  auto m = bind(k, {{"causal", 0}, {"D", 64}},
                {{"BM", 64}, {"BN", 64}, {"stages", 2}, {"threads", 128}, {"WR", 16}});
  // Q_s 64*64*4 = 16384; K_s, V_s 16384 x 2 each; reduce scratch 4 warps * 4 * 64 = 1024;
  // p (f32 fragment, A of a SIMT gemm) staged through 64*64*4 = 16384 B.
  auto r = estimate(k, m, sm("sm_80"));
  EXPECT_EQ(r.stage_scratch, 16384);
  EXPECT_EQ(r.smem_bytes, 16384 + 2 * 32768 + 1024 + 16384);
  // The same from the layout plan of the instantiated kernel (what the recommender uses).
  Kernel ik = simplify(substitute(k, m));
  std::ostringstream out;
  DiagEngine diag(out);
  auto plan = passes::infer_layouts(ik, sm("sm_80"), diag);
  ASSERT_TRUE(plan) << out.str();
  auto rp = passes::estimate_resources(ik, {}, sm("sm_80"), diag, &*plan);
  ASSERT_TRUE(rp) << out.str();
  EXPECT_EQ(rp->smem_bytes, r.smem_bytes);
  // bf16 runs both gemms on mma, P from registers: nothing staged.
  Kernel kb = shipped("flash_attention_fwd.yaml", "bf16");
  EXPECT_EQ(estimate(kb, bind(kb, {{"causal", 0}, {"D", 64}},
                              {{"BM", 64}, {"BN", 64}, {"stages", 2}, {"threads", 128}, {"WR", 16}}),
                     sm("sm_80"))
                .stage_scratch,
            0);
}

TEST(ResourceEstimate, EachBufferRoundsUpTo128Bytes) {
  Kernel k = from_text(R"Y(kernel: odd
summary: odd-sized shared tiles
params: {M: dim}
tensors:
  X: {type: f16, shape: [M]}
  Y: {type: f32, shape: [M], access: write}
schedule:
  n: [3, 64]
grid: {bx: "cdiv(M, 64)"}
threads: 32
body:
  - shared: {a: [f16, n, 5], b: [f32, 33]}
  - fragment: {s: [f32, 5]}
  - copy: {src: "X[bx * 64]", dst: b}
  - reduce: {op: sum, src: a, dst: s, dim: 0}
)Y");
  auto r = estimate(k, bind(k, {}, {{"n", 3}}), sm("sm_89"));
  // a: 3*5*2 = 30 -> 128; b: 33*4 = 132 -> 256; scratch: 1 warp * 4 B * 5 (s) = 20 -> 128
  // (CudaEmitter::plan_memory rounds the scratch regions too).
  ASSERT_EQ(r.smem_buffers.size(), 2u);
  EXPECT_EQ(r.smem_buffers[0].bytes, 128);
  EXPECT_EQ(r.smem_buffers[1].bytes, 256);
  EXPECT_EQ(r.reduce_scratch, 128);
  EXPECT_EQ(r.smem_bytes, 512);
  EXPECT_EQ(r.smem_breakdown(),
            "a 30 B (128 B aligned), b 132 B (256 B aligned), reduce scratch 128 B");
  // 32 threads: s is 5 words over 32 threads -> 1.
  EXPECT_EQ(r.fragment_words, 1);
}

TEST(ResourceEstimate, NonConstantExtentIsALocatedError) {
  Kernel k = shipped("gemm.yaml", "f32");
  VarMap m = passes::instance_var_map(k, {}); // tile constants left unbound
  std::ostringstream out;
  DiagEngine diag(out);
  EXPECT_FALSE(passes::estimate_resources(k, m, sm("sm_80"), diag));
  ASSERT_FALSE(diag.diagnostics().empty());
  EXPECT_GT(diag.diagnostics()[0].loc.line, 0);
  EXPECT_NE(out.str().find("is not a constant once the schedule is fixed"), std::string::npos)
      << out.str();
}

} // namespace

// setmaxnreg budgets: the block holds regs_per_sm / threads registers per thread from launch (a
// multiple of 8), and setmaxnreg only moves them between warpgroups, so the consumers get what
// the producer leaves of that (asking for more would hang setmaxnreg.inc).
TEST(ResourceEstimate, ConsumerBudgetIsWhatTheLaunchGaveMinusTheProducer) {
  const int64_t rf = 65536;
  EXPECT_EQ(passes::ws_consumer_registers(256, rf, 24), 240); // 168 x 384 - 24 x 128 = 240 x 256
  EXPECT_EQ(passes::ws_consumer_registers(256, rf, 32), 232); // the causal tile scheduler's 32
  EXPECT_EQ(passes::ws_consumer_registers(256, rf, 40), 232); // GEMM
  EXPECT_EQ(passes::ws_consumer_registers(384, rf, 24), 160); // three warpgroups: 128 x 512
  EXPECT_EQ(passes::ws_consumer_registers(384, rf, 32), 160);
  EXPECT_EQ(passes::ws_consumer_registers(128, rf, 40), 248); // capped
  for (int64_t c : {128, 256, 384})
    for (int64_t p : {24, 32, 40}) {
      const int64_t threads = c + 128, launch = std::min<int64_t>(rf / threads, 255) / 8 * 8;
      EXPECT_LE(passes::ws_consumer_registers(c, rf, p) * c + p * 128, launch * threads) << c << " " << p;
    }
}
