// MetalHostEmitter: the host side of a library's Metal variants, <lib>_metal.c. Per Metal
// variant one C function with the variant ABI (docs/internals.md, tilegen/variant.h):
//   int tgv_<lib>__<kernel>__<inst>__metal(const tg_launch*, const tg_variant_args*);
// It computes the grid from the call's dims (checked int64 arithmetic, an empty grid returns
// TG_OK without encoding), packs the kernel's `tg_params` (emit/MslEmitter.h msl_params: 8-byte
// fields first, so the C struct and the MSL struct have one layout) and hands a
// tg_metal_dispatch_desc to tg_metal_dispatch (tilegen/metal.h): metal-cpp on macOS, the CPU
// simulator in tests. Plain C11: it compiles on every platform, so the launchers are built and
// tested here even though the metallib they name needs Apple's compiler (docs/metal.md).
#pragma once

#include "emit/MslEmitter.h"
#include "ir/IR.h"
#include "targets/Target.h"

#include <string>
#include <vector>

namespace tilegen::dispatch {

struct MetalVariant {
  const ir::Kernel* kernel = nullptr; // instantiated for the Metal target
  const Target* target = nullptr;
  std::string function_name;          // tgv_...: the MSL kernel function and the C launcher
  std::string file_name;              // the .metal file
  std::string spec_path;
  emit::MslLayout layout;             // threads, threadgroup memory
};

// <lib>_metal.c
std::string metal_host_file_name(const std::string& lib);
// <lib>: the symbols <lib>_metallib / <lib>_metallib_size the launchers reference; the build
// defines them (cmake/TileGen.cmake embeds the metallib on macOS).
std::string metallib_symbol(const std::string& lib);

// The whole file (starting with the library's generated marker). Pure function of its inputs.
std::string emit_metal_host(const std::string& lib, const std::vector<MetalVariant>& variants);

} // namespace tilegen::dispatch
