// emit_variant: one switch from a target's backend to its emitter.
#include "emit/Emitter.h"

#include "support/InternalError.h"

namespace tilegen::emit {

std::string emit_variant(const ir::Kernel& k, const Target& target, const VariantInfo& info) {
  switch (target.backend) {
  case Backend::C: return emit_c_variant(k, target, info);
  case Backend::CUDA: return emit_cuda_variant(k, target, info);
  case Backend::HIP: return emit_hip_variant(k, target, info);
  case Backend::WGSL: return emit_wgsl_variant(k, target, info);
  case Backend::Metal: return emit_metal_variant(k, target, info);
  default: break;
  }
  internal_error(std::string("emit_variant: no emitter for backend ") + backend_name(target.backend));
}

} // namespace tilegen::emit
