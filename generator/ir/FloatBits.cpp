// The same algorithms the C backend emits as static helpers (emit/CRuntimeHelpers.cpp), so a
// folded constant and a value computed at run time agree bit for bit.
#include "ir/FloatBits.h"

#include <cmath>
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

namespace {
// Exponent and mantissa bits, bias and largest finite code of an FP8 format.
struct Fp8Format {
  int ebits, mbits, bias;
  uint8_t max_code; // largest finite magnitude
};
Fp8Format fp8_format(DType t) {
  return t == DType::e4m3() ? Fp8Format{4, 3, 7, 0x7e} : Fp8Format{5, 2, 15, 0x7b};
}
} // namespace

uint8_t f32_to_fp8_bits(float f, DType t) {
  const Fp8Format F = fp8_format(t);
  const uint8_t sign = std::signbit(f) ? 0x80 : 0x00;
  if (std::isnan(f))
    return sign | 0x7f;
  if (std::isinf(f)) // satfinite (and ilogb(inf) = INT_MAX would overflow `e` below)
    return sign | F.max_code;
  const double a = std::fabs(static_cast<double>(f));
  const int emin = 1 - F.bias; // exponent of the smallest normal
  // Quantum of the binade holding a (subnormals share the smallest normal's quantum).
  int e = a == 0 ? emin : std::max(emin, std::ilogb(a));
  double q = std::nearbyint(std::ldexp(a, F.mbits - e)); // round to nearest even
  if (q >= std::ldexp(1.0, F.mbits + 1)) { // rounded up into the next binade
    q /= 2;
    ++e;
  }
  uint32_t code;
  if (q < std::ldexp(1.0, F.mbits)) // subnormal (or zero)
    code = static_cast<uint32_t>(q);
  else
    code = (static_cast<uint32_t>(e + F.bias) << F.mbits) | (static_cast<uint32_t>(q) - (1u << F.mbits));
  if (code > F.max_code)
    code = F.max_code; // satfinite
  return sign | static_cast<uint8_t>(code);
}

float fp8_bits_to_f32(uint8_t b, DType t) {
  const Fp8Format F = fp8_format(t);
  const bool neg = b & 0x80;
  const int e = (b & 0x7f) >> F.mbits, m = b & ((1 << F.mbits) - 1);
  double v;
  if ((b & 0x7f) > F.max_code) { // e4m3: only S.1111.111; e5m2: infinities and NaNs
    if (t == DType::e5m2() && m == 0)
      v = INFINITY;
    else
      return NAN;
  } else if (e == 0) {
    v = std::ldexp(m, 1 - F.bias - F.mbits);
  } else {
    v = std::ldexp(m + (1 << F.mbits), e - F.bias - F.mbits);
  }
  return static_cast<float>(neg ? -v : v);
}

double round_to_float_type(double v, DType t) {
  switch (t.kind) {
  case ScalarKind::F32: return static_cast<float>(v);
  case ScalarKind::BF16: return bf16_bits_to_f32(f32_to_bf16_bits(static_cast<float>(v)));
  case ScalarKind::F16: return f16_bits_to_f32(f32_to_f16_bits(static_cast<float>(v)));
  case ScalarKind::E4M3:
  case ScalarKind::E5M2: return fp8_bits_to_f32(f32_to_fp8_bits(static_cast<float>(v), t), t);
  default: return v;
  }
}

} // namespace tilegen::ir
