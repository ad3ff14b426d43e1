// Bit-exact rounding of a double to the value sets of the narrower float types, used to fold
// constants exactly as the generated code would compute them (f32: IEEE single; bf16 and
// f16: round to nearest even from f32, NaN stays NaN, overflow goes to infinity; e4m3 and e5m2:
// round to nearest even from f32, NaN stays NaN, overflow saturates to the largest finite value).
#pragma once

#include "ir/DType.h"

#include <cstdint>

namespace tilegen::ir {

uint16_t f32_to_bf16_bits(float f);
float bf16_bits_to_f32(uint16_t h);
uint16_t f32_to_f16_bits(float f);
float f16_bits_to_f32(uint16_t h);
// The OCP FP8 formats (ir/DType.h): `t` is e4m3 or e5m2.
uint8_t f32_to_fp8_bits(float f, DType t);
float fp8_bits_to_f32(uint8_t b, DType t);

// `v` rounded to the values representable in float type `t` (f64: unchanged).
double round_to_float_type(double v, DType t);

} // namespace tilegen::ir
