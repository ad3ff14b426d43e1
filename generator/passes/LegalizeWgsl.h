// LegalizeWgsl: rewrites the IR into what the WGSL emitter can print (docs/wgsl.md).
//
// WGSL is the most constrained backend; what it lacks is rewritten here, not papered over in
// the printer:
//  * 16-bit floats: without `shader-f16` there is no f16 type at all, and bf16 exists nowhere.
//    On-chip 16-bit buffers are held as f32 with every write rounded through the 16-bit type
//    (exactly LegalizeC's rewrite, reused). Global 16-bit tensors keep their dtype: the emitter
//    stores them packed two to a u32 word (or as array<f16> with shader-f16) and converts on
//    load (exact) and store (round to nearest even).
//  * Infinities: WGSL lets an implementation assume that no infinity or NaN occurs, and
//    has no literal for them. Every +-inf literal (softmax's pad value, max's identity, the
//    masks of attention) becomes +-FLT_MAX, the largest finite f32: comparisons against it
//    keep their meaning for finite data, exp(-FLT_MAX - m) is 0 as exp(-inf) was.
//  * No 64-bit types: f64 is rejected (internal error naming the kernel: no shipped kernel
//    uses it); i64 index arithmetic is printed as i32, and the host glue checks that every
//    dim and every tensor's element count is below 2^31 before a dispatch.
// Precondition: an instantiated kernel. Postcondition: no on-chip 16-bit buffer, no infinite
// float literal, no f64.
#pragma once

#include "ir/IR.h"
#include "targets/Target.h"

namespace tilegen::passes {

ir::Kernel legalize_wgsl(const ir::Kernel& k, const Target& target);

} // namespace tilegen::passes
