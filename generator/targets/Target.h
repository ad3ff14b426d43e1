// Targets are data: one row per target in Targets.cpp. Passes and emitters read these fields;
// nothing outside a target's own emitter branches on a target's name.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tilegen {

enum class Backend { C, CUDA, HIP, Metal, WGSL };
const char* backend_name(Backend b); // "c", "cuda", "hip", "metal", "wgsl"

struct Target {
  std::string name;    // what users write in TARGETS / --targets: "c", "c_avx2", "sm_80", ...
  Backend backend;
  std::string summary; // one line for `tilegen targets`

  // Selection at run time. A variant for this target may run where the runtime reports every
  // feature in `runtime_features` (names understood by runtime/src/cpu.c and later device
  // queries). `fallbacks` lists targets whose variants also run where this one does (an
  // implication edge: c_avx512 -> c_avx2 -> c); dispatch prefers the most specific.
  std::vector<std::string> runtime_features;
  std::vector<std::string> fallbacks;
  int preference = 0; // higher wins among variants that can run

  // Budgets for schedule resolution and memory planning.
  int64_t tile_budget_bytes = 0; // on-chip bytes a block's shared+fragment+local may use
  int vector_bytes = 16;         // widest SIMD register (C) — guides micro-tile widths
  int max_threads = 1;           // threads per block the backend can run (1 on C: a block is
                                 // one OpenMP iteration)

  // Build: extra flags CMake passes to the compiler for this target's variant sources.
  std::vector<std::string> compile_flags;
};

const std::vector<Target>& all_targets();
// Targets planned (docs/internals.md) whose emitters do not exist yet: specs may already
// carry their schedule overrides, so the front end accepts these names.
const std::vector<std::string>& planned_target_names();
const Target* find_target(std::string_view name); // nullptr if unknown

} // namespace tilegen
