// The target table. Sizes: C targets budget a block's tiles to stay within a private L2
// (1 MiB on recent x86 cores; half of it so that the streamed operands stay resident too).
#include "targets/Target.h"

#include "support/InternalError.h"

#include <algorithm>

namespace tilegen {

const char* backend_name(Backend b) {
  switch (b) {
  case Backend::C: return "c";
  case Backend::CUDA: return "cuda";
  case Backend::HIP: return "hip";
  case Backend::Metal: return "metal";
  case Backend::WGSL: return "wgsl";
  }
  return "?";
}

const char* variant_extension(Backend b) {
  switch (b) {
  case Backend::C: return ".c";
  case Backend::CUDA: return ".cu";
  case Backend::HIP: return ".hip";
  case Backend::Metal: return ".metal";
  case Backend::WGSL: return ".wgsl";
  }
  return ".txt";
}

// C targets compile with -fno-trapping-math (values unchanged; FP exception flags are not
// observable through the variant ABI): under gcc's default -ftrapping-math, a `c ? a : f(x)`
// whose arm computes in floating point is not if-converted, so the loop is not vectorized
// (softmax's `m == -inf ? 0 : exp(x - m)`). clang's default already is -fno-trapping-math.
std::vector<Target> c_targets() {
  std::vector<Target> rows = {
      {"c", Backend::C, "portable C11 + OpenMP, any CPU (the fallback of every library)",
       /*runtime_features=*/{}, /*fallbacks=*/{}, /*preference=*/0,
       /*tile_budget_bytes=*/256 * 1024, /*vector_bytes=*/16, /*max_threads=*/1,
       /*compile_flags=*/{"-fno-trapping-math"}, /*cpu_arch=*/"", /*gcc_flags=*/{}},
      {"c_avx2", Backend::C, "C for x86-64 with AVX2 + FMA + F16C",
       {"avx2", "fma", "f16c"}, {"c"}, 10,
       256 * 1024, 32, 1,
       {"-mavx2", "-mfma", "-mf16c", "-fno-trapping-math"}, "x86", {}},
      {"c_avx512", Backend::C, "C for x86-64 with AVX-512 (F, BW, VL, DQ)",
       {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512dq"}, {"c_avx2", "c"}, 20,
       512 * 1024, 64, 1,
       {"-mavx2", "-mfma", "-mf16c", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq",
        "-mprefer-vector-width=512", "-fno-trapping-math"}, "x86", {}},
      // Arm (docs/c-backend.md, "Arm"). Plain Armv8.0 Advanced SIMD is no row of its own: it is
      // mandatory on AArch64, so `c` compiled there already vectorizes with it. c_neon adds what
      // Armv8.2-A cores (Cortex-A55/A76 and later, Neoverse N1/V1/N2/V2, Graviton2-4, Apple M)
      // have over Armv8.0 ones (Cortex-A53/A72, Graviton1), FP16 arithmetic included: a flag of
      // this row rather than a feature of its own, checked at run time as fphp + asimdhp, so an
      // Armv8.0 core takes `c`. Budgets: 1 MiB private L2 on Neoverse N1/V1 (half of it, as on
      // x86) but 256 KiB on the small cores, hence c's budget for c_neon.
      {"c_neon", Backend::C, "C for AArch64 Armv8.2-A: Advanced SIMD with FP16 arithmetic",
       {"asimd", "fphp", "asimdhp"}, {"c"}, 10,
       256 * 1024, 16, 1,
       {"-march=armv8.2-a+fp16", "-fno-trapping-math"}, "aarch64", {}},
      // SVE, vector-length agnostic: one variant is right at every vector length (128-bit
      // Graviton4 / Grace / Neoverse V2, 256-bit Graviton3 / Neoverse V1, 512-bit A64FX), where
      // -msve-vector-bits=256 code would compute wrong results on the other lengths unless the
      // runtime checked the length too. vector_bytes 32 (Graviton3) only guides micro-tile widths.
      // GCC only: -fno-tree-forwprop. gcc 12.2 (Debian's aarch64 cross compiler) stops with an
      // internal compiler error (expand_insn, optabs.cc:8029) when it vectorizes gemm_bias_gelu's
      // epilogue (tg_erf_f32 -> tg_select_f32's bit masks) for SVE; without forward propagation
      // it vectorizes the same loops (687 of the shipped kernels' c_sve variants, as before) and
      // compiles them all. clang rejects the flag, hence gcc_flags.
      {"c_sve", Backend::C, "C for AArch64 with SVE (vector-length agnostic), Armv8.2-A + FP16",
       {"asimd", "fphp", "asimdhp", "sve"}, {"c_neon", "c"}, 20,
       512 * 1024, 32, 1,
       {"-march=armv8.2-a+fp16+sve", "-fno-trapping-math"}, "aarch64", {"-fno-tree-forwprop"}},
  };
  for (auto& t : rows) {
    t.streaming_tile_rule = true;              // every C budget is a share of a private L2
    // the rows whose flags give tg_exp_row_f32 its intrinsics (vscalefps; AVX2 + FMA)
    t.c_exp_rows = t.name == "c_avx512" || t.name == "c_avx2";
    t.c_put16 = t.name == "c_avx512" || t.name == "c_avx2"; // tg_put16_<type>'s vector stores
    // AVX2 + F16C intrinsics; c_avx512 (which has both) keeps its 512-bit pieces and chunks:
    // there the 256-bit intrinsics measured 0.88-0.99x on a Xeon (docs/c-backend.md)
    t.c_vec_store = t.name == "c_avx2";
    t.c_f16_rows = std::find(t.runtime_features.begin(), t.runtime_features.end(), "f16c") !=
                   t.runtime_features.end(); // tg_load_row_f16's vcvtph2ps
  }
  return rows;
}

std::string cpu_arch_guard(const std::string& cpu_arch) {
  if (cpu_arch == "x86") // as runtime/src/cpu.c's x86 probes
    return "defined(__x86_64__) || defined(__i386__)";
  if (cpu_arch == "aarch64")
    return "defined(__aarch64__)";
  TG_ASSERT(false, "no preprocessor guard for CPU architecture '" + cpu_arch + "'");
  return "0";
}

const std::vector<Target>& all_targets() {
  static const std::vector<Target> table = [] {
    std::vector<Target> t = c_targets();
    for (auto* family : {&cuda_targets, &hip_targets, &wgsl_targets, &metal_targets})
      for (auto& row : family())
        t.push_back(std::move(row));
    return t;
  }();
  return table;
}

const std::vector<std::string>& planned_target_names() {
  // Names of the plan (docs/internals.md) that have no row in the table yet.
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const char* n : {"sm_80", "sm_86", "sm_89", "sm_100a", "gfx90a", "gfx942",
                          "gfx1100", "metal", "wgsl"}) {
      bool present = false;
      for (const auto& t : all_targets())
        present = present || t.name == n;
      if (!present)
        out.push_back(n);
    }
    return out;
  }();
  return names;
}

const Target* find_target(std::string_view name) {
  for (const auto& t : all_targets())
    if (t.name == name)
      return &t;
  return nullptr;
}

} // namespace tilegen
