// WGSL rows of the target table (docs/wgsl.md). Limits are WebGPU's guaranteed defaults
// (https://www.w3.org/TR/webgpu/#limits): a device created without `requiredLimits` has at
// least these, so every variant runs on every adapter that has the row's features.
//
// `runtime_features` are WebGPU feature names (GPUDevice.features): the generated ES module
// picks, per call, the highest-preference row whose features the caller's device has.
//
// The schedule resolver's footprint budget counts every on-chip buffer, including the
// fragments the WGSL emitter keeps in registers; the emitter checks the workgroup-memory part
// against `wgsl.workgroup_storage_bytes` separately (it must fit 16 KiB).
#include "targets/Target.h"

namespace tilegen {

namespace {

Target wgsl_row(const char* name, const char* summary, std::vector<std::string> features,
                std::vector<std::string> fallbacks, int preference, WgslFacts w) {
  Target t;
  t.name = name;
  t.backend = Backend::WGSL;
  t.summary = summary;
  t.runtime_features = std::move(features);
  t.fallbacks = std::move(fallbacks);
  t.preference = preference;
  t.max_threads = w.max_invocations;
  t.vector_bytes = 16; // vec4<f32>
  // 16 KiB of workgroup memory plus 16 KiB of register tiles (256 invocations x 16 f32).
  t.tile_budget_bytes = w.workgroup_storage_bytes + 16 * 1024;
  t.wgsl = w;
  return t;
}

WgslFacts core() { return WgslFacts{}; }
WgslFacts with_f16() {
  WgslFacts w;
  w.shader_f16 = true;
  return w;
}
WgslFacts with_subgroups() {
  WgslFacts w;
  w.subgroups = true;
  return w;
}
WgslFacts with_both() {
  WgslFacts w;
  w.shader_f16 = true;
  w.subgroups = true;
  return w;
}

} // namespace

std::vector<Target> wgsl_targets() {
  return {
      wgsl_row("wgsl", "WGSL core (WebGPU, any adapter): 16-bit and 8-bit tensors packed in u32, f32 compute",
               {}, {}, 0, core()),
      wgsl_row("wgsl_f16", "WGSL with shader-f16: f16 tensors as array<f16>, f32 compute",
               {"shader-f16"}, {"wgsl"}, 10, with_f16()),
      wgsl_row("wgsl_subgroups", "WGSL with subgroups: row reductions through subgroup shuffles",
               {"subgroups"}, {"wgsl"}, 20, with_subgroups()),
      wgsl_row("wgsl_f16_subgroups", "WGSL with shader-f16 and subgroups",
               {"shader-f16", "subgroups"}, {"wgsl_subgroups", "wgsl_f16", "wgsl"}, 30,
               with_both()),
  };
}

} // namespace tilegen
