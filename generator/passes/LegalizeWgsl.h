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
//  * No 64-bit types: f64 anywhere and integer constants outside i32 are located user errors
//    (check_wgsl, before legalization: a GPU-only rule of docs/spec.md); i64 index arithmetic
//    is printed as i32, and the host glue checks that every dim and every tensor's element
//    count is below 2^31 before a dispatch.
// Precondition: an instantiated kernel that check_wgsl accepted. Postcondition: no on-chip
// 16-bit buffer, no infinite float literal, no f64.
#pragma once

#include "ir/IR.h"
#include "support/Diagnostics.h"
#include "targets/Target.h"

namespace tilegen::passes {

// What WGSL cannot express, as located errors: f64 (a buffer, scalar, cast or literal) and
// integer constants outside i32 (a parallel extent of 2^32, a shape constant). False if any.
bool check_wgsl(const ir::Kernel& k, const Target& target, DiagEngine& diag);

ir::Kernel legalize_wgsl(const ir::Kernel& k, const Target& target);

} // namespace tilegen::passes
