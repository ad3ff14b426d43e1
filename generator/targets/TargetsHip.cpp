// HIP rows of the target table (docs/hip.md). Sources for the numbers:
//  - gfx90a: AMD Instinct MI250X (one GCD, which HIP reports as one device: 110 CUs, 1.6 TB/s of
//    HBM2e, 191.5 TFLOP/s dense f16/bf16 MFMA, 23.9 TFLOP/s f32 FMA) and the CDNA2 ISA guide:
//    64 KiB of LDS per CU and per workgroup, 32 banks of 4 bytes (ds_read_b128's lane groups:
//    hip_targets), wave64, 4 SIMDs per CU with a
//    512-entry unified register file per lane (256 architectural VGPRs + 256 AccVGPRs), at most 8
//    waves per SIMD.
//  - gfx942: AMD Instinct MI300X (304 CUs, 5.3 TB/s of HBM3, 1307 TFLOP/s dense f16/bf16 MFMA,
//    81.7 TFLOP/s f32 FMA without packed math) and the CDNA3 ISA guide (same CU as CDNA2 for
//    what the table holds; FP8 MFMA in the FNUZ encodings).
//  - gfx1100: AMD Radeon RX 7900 XTX (96 CUs, 960 GB/s, 122.8 TFLOP/s f16 WMMA, 61.4 TFLOP/s f32
//    with dual issue) and the RDNA3 ISA guide: wave32, 2 SIMD32 per CU with 1536 VGPRs each (at
//    most 256 per wave), 16 waves per SIMD, 64 KiB of LDS per workgroup.
// The matrix instructions' lane/register mappings are layout/MatrixCore.h's. Loaded memory
// latency is not on datasheets; 700 ns is the model's single figure for HBM parts (microbenchmark
// papers on MI200/MI300 report 600-800 ns), 600 for GDDR6.
#include "targets/Target.h"

namespace tilegen {

namespace {

Target hip_row(const char* name, const char* summary, int preference, GpuFacts g, HipFacts h,
               std::vector<std::string> fallbacks) {
  Target t;
  t.name = name;
  t.backend = Backend::HIP;
  t.summary = summary;
  t.preference = preference;
  t.fallbacks = std::move(fallbacks);
  t.max_threads = 1024;
  t.vector_bytes = 16;
  g.smem_default = g.smem_per_block; // LDS needs no opt-in
  g.smem_reserved_per_block = 0;
  g.async_copy = AsyncCopy::None;    // global -> LDS goes through registers (docs/hip.md)
  // The schedule resolver's footprint budget, as for CUDA: the LDS a block may take plus the
  // registers of 256 threads at 128 words.
  t.tile_budget_bytes = g.smem_per_block + 256 * 128 * 4;
  t.gpu = g;
  t.hip = std::move(h);
  // `stages` LDS buffers, filled through registers (no cp.async on AMD): every HIP row, the
  // portable one included (plain loads and stores, valid on HIP's NVIDIA platform too)
  t.hip.register_staged_pipeline = true;
  return t;
}

GpuFacts cdna(int cus, double dram_gbps, double l2_gbps, double mma_tflops, double fp32_tflops) {
  GpuFacts g;
  g.warp_size = 64;
  g.warp_word = "wave";
  g.smem_per_block = 64 * 1024;
  g.smem_per_sm = 64 * 1024;
  // 256 VGPRs + 256 AccVGPRs per lane, but the schedule resolver's budget is the 256 a lane
  // can address in one file: a wave tile of 128x128 f32 accumulators (256 per lane) with its
  // operands spilled 300 VGPRs to scratch on gfx942 (clang 19; tests/hip/compile_all.sh).
  g.regs_per_thread = 256;
  g.regs_per_sm = 4 * 512 * 64;         // 4 SIMDs x 512 registers x 64 lanes
  g.max_threads_per_sm = 4 * 8 * 64;    // 8 waves per SIMD
  g.max_blocks_per_sm = 32;
  g.sm_count = cus;
  g.smem_banks = 32;
  g.mma = MatrixInst::Mfma;
  g.dram_gbps = dram_gbps;
  g.l2_gbps = l2_gbps;
  g.mma_tflops = mma_tflops;
  g.fp32_tflops = fp32_tflops;
  g.mem_latency_ns = 700;
  return g;
}

// The MFMA shapes of CDNA2/CDNA3 for 16-bit operands, 32x32 first (twice the work per operand
// byte of 16x16). gfx90a's bf16 forms are the "_1k" ones (4 bf16 per lane, as f16).
std::vector<AmdMatrixShape> mfma_shapes(bool cdna3) {
  const char* sep = cdna3 ? "_" : "";
  const char* bf = cdna3 ? "bf16" : "bf16_1k";
  std::string p = "v_mfma_f32_";
  return {
      {p + "32x32x8" + sep + "f16", "__builtin_amdgcn_mfma_f32_32x32x8f16", "f16", 32, 32, 8},
      {p + "32x32x8" + sep + bf, "__builtin_amdgcn_mfma_f32_32x32x8bf16_1k", "bf16", 32, 32, 8},
      {p + "16x16x16" + sep + "f16", "__builtin_amdgcn_mfma_f32_16x16x16f16", "f16", 16, 16, 16},
      {p + "16x16x16" + sep + bf, "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k", "bf16", 16, 16, 16},
  };
}

// CDNA3's FP8 MFMA (gfx942; CDNA3 ISA guide, "MFMA" opcodes V_MFMA_F32_32X32X16_FP8_FP8 /
// _BF8_BF8 and 16X16X32): eight FP8 values per lane and 64-bit operand, the f16 instruction's
// accumulator of the same M x N. "fp8" is e4m3fnuz and "bf8" e5m2fnuz (the FNUZ encodings,
// bias 8 / 16), which the spec's OCP e4m3 / e5m2 are not: `fnuz` (HipGemm.cpp converts).
std::vector<AmdMatrixShape> mfma_fp8_shapes() {
  std::string p = "v_mfma_f32_", b = "__builtin_amdgcn_mfma_f32_";
  return {
      {p + "32x32x16_fp8_fp8", b + "32x32x16_fp8_fp8", "e4m3", 32, 32, 16, true},
      {p + "32x32x16_bf8_bf8", b + "32x32x16_bf8_bf8", "e5m2", 32, 32, 16, true},
      {p + "16x16x32_fp8_fp8", b + "16x16x32_fp8_fp8", "e4m3", 16, 16, 32, true},
      {p + "16x16x32_bf8_bf8", b + "16x16x32_bf8_bf8", "e5m2", 16, 16, 32, true},
  };
}

} // namespace

std::vector<Target> hip_targets() {
  HipFacts portable;
  portable.compiler = "hipcc";
  // The portable row: 32-lane groups (valid on wave64, wave32 and NVIDIA's warps: every
  // butterfly stays within 32 lanes), no matrix instruction, and the limits all three AMD rows
  // and HIP's NVIDIA platform share: 64 KiB of LDS (NVIDIA: dynamic shared memory past 48 KiB,
  // which runtime/src/hip.c opts each kernel into on that platform).
  GpuFacts pg = cdna(96, 960, 2400, 0, 30);
  pg.warp_size = 32;
  pg.mma = MatrixInst::None;
  pg.smem_per_block = 64 * 1024;
  pg.smem_per_sm = 64 * 1024;
  pg.regs_per_thread = 255;
  pg.regs_per_sm = 65536;
  pg.max_threads_per_sm = 1024;

  HipFacts h90a;
  h90a.offload_arch = "gfx90a";
  h90a.compiler = "hipcc";
  h90a.vgprs = 256;
  h90a.agprs = 256;
  h90a.vgpr_file_per_simd = 512 * 1024 / 4;
  h90a.matrix = mfma_shapes(false);
  // ds_read_b128 on CDNA: eight phases of 8 lanes, 0-3 with 20-23, 4-7 with 16-19, 8-11 with
  // 28-31, 12-15 with 24-27, and the same in lanes 32-63 (AMD's composable_kernel docs,
  // conceptual/ck_tile/hardware/lds_bank_conflicts: "Read Access Pattern"). Narrower reads: 32
  // banks filled once per phase in lane order (b64: 16 lanes, b32/b16: 32), the OpenCL
  // optimization guide's half- and quarter-wave rule.
  h90a.lds_b128_groups = {{0, 1, 2, 3, 20, 21, 22, 23},
                          {4, 5, 6, 7, 16, 17, 18, 19},
                          {8, 9, 10, 11, 28, 29, 30, 31},
                          {12, 13, 14, 15, 24, 25, 26, 27}};

  HipFacts h942 = h90a;
  h942.offload_arch = "gfx942";
  h942.compiler = "clang-19";
  h942.matrix = mfma_shapes(true);
  for (auto& m : mfma_fp8_shapes())
    h942.matrix.push_back(m);

  HipFacts h1100;
  h1100.offload_arch = "gfx1100";
  h1100.compiler = "clang-19";
  h1100.vgprs = 256;
  h1100.agprs = 0;
  h1100.vgpr_file_per_simd = 192 * 1024;
  h1100.simds_per_cu = 2;
  h1100.max_waves_per_simd = 16;
  h1100.matrix = {
      {"v_wmma_f32_16x16x16_f16", "__builtin_amdgcn_wmma_f32_16x16x16_f16_w32", "f16", 16, 16, 16},
      {"v_wmma_f32_16x16x16_bf16", "__builtin_amdgcn_wmma_f32_16x16x16_bf16_w32", "bf16", 16, 16, 16},
  };
  GpuFacts g1100 = cdna(96, 960, 2400, 122.8, 61.4);
  g1100.warp_size = 32;
  g1100.mma = MatrixInst::Wmma;
  // 256 VGPRs per lane, but the estimate's fixed part (40) is CUDA's: clang-19 used 266 VGPRs
  // (10 spilled) for a 128x128 WMMA tile the estimate put at 232, and 256 + 410 spilled for an
  // f32 FMA tile of 128 accumulators per thread (estimate 168; tests/hip/compile_all.sh), so
  // the resolver's budget keeps that margin.
  g1100.regs_per_thread = 160;
  g1100.regs_per_sm = 2 * 1536 * 32;   // 2 SIMD32 x 1536 VGPRs x 32 lanes
  g1100.max_threads_per_sm = 2 * 16 * 32;
  g1100.mem_latency_ns = 600;
  // RDNA3's LDS: 64 banks of 4 bytes (the RDNA ISA guides; composable_kernel's docs: "32 or 64
  // banks depending on the hardware"); phases in lane order (no b128 lane-group table: not
  // published), so a wave32 b128 read is two phases of 16 lanes. Not checked on hardware.
  g1100.smem_banks = 64;

  return {
      hip_row("hip",
              "HIP, portable: wave-size-generic (32-lane groups), no matrix instructions; built "
              "for every gfx target of the library and for HIP's NVIDIA platform",
              100, pg, portable, {}),
      hip_row("gfx90a", "HIP, CDNA2 (MI200): MFMA 32x32x8 / 16x16x16 f16 bf16, wave64, 64 KiB LDS",
              110, cdna(110, 1638, 4000, 191.5, 23.9), h90a, {"hip"}),
      hip_row("gfx942",
              "HIP, CDNA3 (MI300): MFMA 32x32x8 / 16x16x16 f16 bf16, wave64, 64 KiB LDS",
              120, cdna(304, 5300, 14000, 1307.4, 81.7), h942, {"hip"}),
      hip_row("gfx1100", "HIP, RDNA3 (RX 7900): WMMA 16x16x16 f16 bf16, wave32, 64 KiB LDS", 110,
              g1100, h1100, {"hip"}),
  };
}

} // namespace tilegen
