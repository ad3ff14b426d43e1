// WGSL rows of the target table (the WGSL backend fills this in; see docs/wgsl.md).
#include "targets/Target.h"

namespace tilegen {

std::vector<Target> wgsl_targets() { return {}; }

} // namespace tilegen
