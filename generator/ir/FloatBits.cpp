// The same algorithms the C backend emits as static helpers (emit/CRuntimeHelpers.cpp), so a
// folded constant and a value computed at run time agree bit for bit.
#include "ir/FloatBits.h"

#include <cstring>

namespace tilegen::ir {

uint16_t f32_to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)             // NaN: keep it a (quiet) NaN
    return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);                 // round to nearest, ties to even
  return static_cast<uint16_t>(u >> 16);
}

float bf16_bits_to_f32(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// After F. Giesen's float_to_half_fast3_rtne (public domain): the subnormal range is rounded
// by a float addition of a magic number, the normal range by integer rounding of the bits.
uint16_t f32_to_f16_bits(float f) {
  const uint32_t f32_infty = 255u << 23;
  const uint32_t f16_max = (127u + 16u) << 23;                       // 65536.0f
  const uint32_t denorm_magic = ((127u - 15u) + (23u - 10u) + 1u) << 23; // 0.5f
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = u & 0x80000000u;
  u ^= sign;
  uint16_t o;
  if (u >= f16_max) {
    o = u > f32_infty ? 0x7e00u : 0x7c00u; // NaN -> quiet NaN, too large -> infinity
  } else if (u < (113u << 23)) {           // below the smallest normal f16: subnormal or 0
    float fu, magic;
    std::memcpy(&fu, &u, 4);
    std::memcpy(&magic, &denorm_magic, 4);
    fu += magic;
    uint32_t r;
    std::memcpy(&r, &fu, 4);
    o = static_cast<uint16_t>(r - denorm_magic);
  } else {
    const uint32_t mant_odd = (u >> 13) & 1u;
    u += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu;
    u += mant_odd;
    o = static_cast<uint16_t>(u >> 13);
  }
  return static_cast<uint16_t>(o | (sign >> 16));
}

float f16_bits_to_f32(uint16_t h) {
  const uint32_t shifted_exp = 0x7c00u << 13;
  uint32_t o = (static_cast<uint32_t>(h) & 0x7fffu) << 13;
  const uint32_t exp = shifted_exp & o;
  o += (127u - 15u) << 23;
  if (exp == shifted_exp) {
    o += (128u - 16u) << 23; // Inf / NaN
  } else if (exp == 0) {     // zero / subnormal: renormalize through a float subtraction
    o += 1u << 23;
    const uint32_t magic_bits = 113u << 23;
    float fo, magic;
    std::memcpy(&fo, &o, 4);
    std::memcpy(&magic, &magic_bits, 4);
    fo -= magic;
    std::memcpy(&o, &fo, 4);
  }
  o |= (static_cast<uint32_t>(h) & 0x8000u) << 16;
  float r;
  std::memcpy(&r, &o, 4);
  return r;
}

double round_to_float_type(double v, DType t) {
  switch (t.kind) {
  case ScalarKind::F32: return static_cast<float>(v);
  case ScalarKind::BF16: return bf16_bits_to_f32(f32_to_bf16_bits(static_cast<float>(v)));
  case ScalarKind::F16: return f16_bits_to_f32(f32_to_f16_bits(static_cast<float>(v)));
  default: return v;
  }
}

} // namespace tilegen::ir
