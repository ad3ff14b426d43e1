// Emitters print an instantiated ir::Kernel as one self-contained source file for a target.
#pragma once

#include "ir/IR.h"
#include "targets/Target.h"

#include <string>

namespace tilegen::emit {

struct VariantInfo {
  std::string function_name; // the exported symbol: tgv_<lib>__<kernel>__<inst>__<target>
  std::string spec_path;     // for the header comment (as given on the command line)
};

// The whole source of one variant file, implementing the variant ABI of docs/internals.md:
//   int <function_name>(const tg_launch* launch, const tg_variant_args* args);
// Output is a pure function of its inputs (byte-identical across runs and machines).
// Routes to the target's backend (Emitter.cpp).
std::string emit_variant(const ir::Kernel& instantiated, const Target& target,
                         const VariantInfo& info);

// The backends' entry points (one per emitter family).
std::string emit_c_variant(const ir::Kernel& k, const Target& target, const VariantInfo& info);
std::string emit_cuda_variant(const ir::Kernel& k, const Target& target, const VariantInfo& info);
std::string emit_hip_variant(const ir::Kernel& k, const Target& target, const VariantInfo& info);
std::string emit_wgsl_variant(const ir::Kernel& k, const Target& target, const VariantInfo& info);
std::string emit_metal_variant(const ir::Kernel& k, const Target& target, const VariantInfo& info);

} // namespace tilegen::emit
