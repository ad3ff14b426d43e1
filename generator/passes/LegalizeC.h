// LegalizeC: rewrites the IR into what the C backend can print directly.
//
// C has no portable 16-bit float arithmetic type, so on the C backend:
//  * an on-chip (shared/fragment/local) f16/bf16 buffer is held as an f32 buffer whose
//    elements are always exactly representable in the original type: every write into it
//    rounds through the 16-bit type, written explicitly as f32(bf16(v)) in the IR
//    (stores, fills; a `+=` store becomes `= f32(bf16(old + v))`);
//  * a copy into such a buffer from a source that is not exactly representable (f32, f64,
//    i32, the other 16-bit type) becomes a `parallel` of rounding stores (global sources keep
//    their bounds check and pad value);
//  * a gemm or reduce that accumulates into such a buffer accumulates in f32 and is followed
//    by a `parallel` that rounds the result once (more accurate than rounding every step;
//    documented in docs/c-backend.md);
//  * global f16/bf16 tensors are untouched: they stay uint16_t bit patterns, which the
//    emitter converts on load (exact) and on store (round to nearest even, NaN stays NaN).
// Precondition: an instantiated kernel (constant on-chip shapes). Postcondition: no on-chip
// buffer has a 16-bit float dtype.
#pragma once

#include "ir/IR.h"

namespace tilegen::passes {

ir::Kernel legalize_c(const ir::Kernel& k);

} // namespace tilegen::passes
