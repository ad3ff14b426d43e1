// CheckMetal: what the Metal Shading Language cannot express, reported as located user errors
// before anything is generated for a Metal target (a GPU-only rule of docs/spec.md, "Rules of
// the GPU targets"; docs/metal.md):
//  * f64 anywhere (a tensor, an on-chip buffer, a scalar, a cast or a literal): Apple GPUs have
//    no double type.
// (atomic_add into a tensor other than f32 or i32, which MSL's atomic_float and atomic_int could
// not express either, is rejected by the front end for every target.)
// Nothing is rewritten for Metal: the emitter holds 16- and 8-bit floats as float registers
// and keeps them half/bfloat/uchar in memory itself (emit/MslEmitter.h).
#pragma once

#include "ir/IR.h"
#include "support/Diagnostics.h"
#include "targets/Target.h"

namespace tilegen::passes {

// False (errors reported) if `k`, instantiated for Metal target `target`, uses one of the
// constructs above.
bool check_metal(const ir::Kernel& k, const Target& target, DiagEngine& diag);

} // namespace tilegen::passes
