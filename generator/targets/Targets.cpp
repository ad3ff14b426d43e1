// The target table. Sizes: C targets budget a block's tiles to stay within a private L2
// (1 MiB on recent x86 cores; half of it so that the streamed operands stay resident too).
#include "targets/Target.h"

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
  return {
      {"c", Backend::C, "portable C11 + OpenMP, any CPU (the fallback of every library)",
       /*runtime_features=*/{}, /*fallbacks=*/{}, /*preference=*/0,
       /*tile_budget_bytes=*/256 * 1024, /*vector_bytes=*/16, /*max_threads=*/1,
       /*compile_flags=*/{"-fno-trapping-math"}},
      {"c_avx2", Backend::C, "C for x86-64 with AVX2 + FMA + F16C",
       {"avx2", "fma", "f16c"}, {"c"}, 10,
       256 * 1024, 32, 1,
       {"-mavx2", "-mfma", "-mf16c", "-fno-trapping-math"}},
      {"c_avx512", Backend::C, "C for x86-64 with AVX-512 (F, BW, VL, DQ)",
       {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512dq"}, {"c_avx2", "c"}, 20,
       512 * 1024, 64, 1,
       {"-mavx2", "-mfma", "-mf16c", "-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq",
        "-mprefer-vector-width=512", "-fno-trapping-math"}},
  };
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
