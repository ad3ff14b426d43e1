// The CUDA emitter (work in progress this session: replaced by the real emitter).
#include "emit/Emitter.h"

#include "support/InternalError.h"

namespace tilegen::emit {

std::string emit_cuda_variant(const ir::Kernel& k, const Target& target, const VariantInfo&) {
  internal_error("the CUDA emitter is not written yet (kernel '" + k.name + "', target " +
                 target.name + ")");
}

} // namespace tilegen::emit
