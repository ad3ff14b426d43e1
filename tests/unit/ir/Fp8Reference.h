// An independent model of the OCP FP8 formats (e4m3, e5m2), written from the format definition
// for the tests of every implementation (ir/FloatBits.cpp, the C and WGSL helpers, the runtime):
//   e4m3: S.EEEE.MMM, bias 7, subnormals E = 0, no infinities, S.1111.111 is NaN (max 448);
//   e5m2: S.EEEEE.MM, bias 15, subnormals E = 0, E = 31 is inf (M = 0) or NaN (max 57344).
// Encoding is specified by search, not by bit arithmetic: the nearest finite value to |x| among
// all codes, a tie going to the code with an even mantissa (= an even code, since the mantissa
// is the code's low bits); anything above the largest finite value, infinities included,
// saturates to it (cvt.rn.satfinite); the sign is x's sign bit (so -0 and values that round to
// zero keep it); NaN gives a NaN code. The test-input set covers every place these rules bite.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace fp8ref {

struct Format {
  const char* name;
  int ebits, mbits, bias;
  bool has_inf;
};
inline constexpr Format kE4M3{"e4m3", 4, 3, 7, false};
inline constexpr Format kE5M2{"e5m2", 5, 2, 15, true};

inline bool is_nan_code(const Format& f, uint8_t c) {
  const int e = (c & 0x7f) >> f.mbits, m = c & ((1 << f.mbits) - 1);
  const int emax = (1 << f.ebits) - 1;
  return f.has_inf ? (e == emax && m != 0) : (e == emax && m == (1 << f.mbits) - 1);
}

// The value of a code, in double (exact).
inline double decode(const Format& f, uint8_t c) {
  const int e = (c & 0x7f) >> f.mbits, m = c & ((1 << f.mbits) - 1);
  const double sign = (c & 0x80) ? -1.0 : 1.0;
  if (is_nan_code(f, c))
    return NAN;
  if (f.has_inf && e == (1 << f.ebits) - 1)
    return sign * INFINITY;
  const double frac = static_cast<double>(m) / (1 << f.mbits);
  if (e == 0)
    return sign * frac * std::pow(2.0, 1 - f.bias);
  return sign * (1.0 + frac) * std::pow(2.0, e - f.bias);
}

// The largest finite code magnitude: the non-negative codes are increasing in value.
inline uint8_t max_finite_code(const Format& f) {
  uint8_t best = 0;
  for (int c = 0; c < 0x80; ++c)
    if (std::isfinite(decode(f, static_cast<uint8_t>(c))))
      best = static_cast<uint8_t>(c);
  return best;
}

// The values of codes 0 .. max_finite_code(f), cached per format.
inline const std::vector<double>& magnitudes(const Format& f) {
  static std::vector<double> tables[2];
  std::vector<double>& t = tables[f.has_inf ? 1 : 0];
  if (t.empty())
    for (int c = 0; c <= max_finite_code(f); ++c)
      t.push_back(decode(f, static_cast<uint8_t>(c)));
  return t;
}

inline uint8_t encode(const Format& f, float x) {
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  if (std::isnan(x))
    return sign | 0x7f; // one NaN code; callers compare NaN-ness, not the payload
  const std::vector<double>& v = magnitudes(f);
  const int top = static_cast<int>(v.size()) - 1;
  const double a = std::fabs(static_cast<double>(x));
  if (a >= v[top])
    return sign | static_cast<uint8_t>(top);
  int lo = 0;
  while (v[lo + 1] <= a)
    ++lo;
  const double vlo = v[lo];
  if (vlo == a)
    return sign | static_cast<uint8_t>(lo);
  const double vhi = v[lo + 1];
  const double mid = (vlo + vhi) / 2; // exact: a few significant bits
  int c = a < mid ? lo : a > mid ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
  return sign | static_cast<uint8_t>(c);
}

inline float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Inputs for the encoders: every code's value, every midpoint between neighbouring codes (and
// between the largest finite value and the next step up), one f32 ulp either side of each of
// those, far overflow and infinities, f32 subnormals, +-0, NaNs with several payloads, and a
// strided sweep of all f32 bit patterns; each with both signs.
inline std::vector<float> encoder_inputs(const Format& f) {
  std::vector<double> points;
  const uint8_t top = max_finite_code(f);
  for (int c = 0; c <= top; ++c) {
    const double v = decode(f, static_cast<uint8_t>(c));
    points.push_back(v);
    const double next = c < top ? decode(f, static_cast<uint8_t>(c + 1))
                                : v + (v - decode(f, static_cast<uint8_t>(c - 1)));
    points.push_back((v + next) / 2);
  }
  std::vector<float> xs;
  for (double p : points) {
    const float v = static_cast<float>(p);
    xs.push_back(v);
    xs.push_back(std::nextafter(v, INFINITY));
    xs.push_back(std::nextafter(v, -INFINITY));
  }
  for (float v : {2.0f * static_cast<float>(decode(f, top)), 65536.0f, 0x1p100f, 0x1p101f,
                  0x1p127f, FLT_MAX, INFINITY, FLT_MIN, std::nextafter(FLT_MIN, 0.0f),
                  0x1p-149f, 0x1p-140f, 0x1p-126f, 0x1p-20f, 0x1p-17f, 0x1p-10f, 1.0f / 3,
                  0.1f, 0.0f})
    xs.push_back(v);
  for (uint64_t u = 0; u < (1ull << 32); u += 65521)
    xs.push_back(bits_f32(static_cast<uint32_t>(u)));
  const size_t n = xs.size();
  for (size_t i = 0; i < n; ++i)
    xs.push_back(-xs[i]);
  for (uint32_t nan : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fbfffffu, 0xffffffffu})
    xs.push_back(bits_f32(nan));
  return xs;
}

} // namespace fp8ref
