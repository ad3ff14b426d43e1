#include "Numeric.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace tgtest {

const char* dt_name(Dt dt) {
  switch (dt) {
  case Dt::F32: return "f32";
  case Dt::F16: return "f16";
  case Dt::BF16: return "bf16";
  }
  return "?";
}

size_t dt_bytes(Dt dt) { return dt == Dt::F32 ? 4 : 2; }

double unit_roundoff(Dt dt) {
  switch (dt) {
  case Dt::F32: return std::ldexp(1.0, -24);
  case Dt::F16: return std::ldexp(1.0, -11);
  case Dt::BF16: return std::ldexp(1.0, -8);
  }
  return 1;
}

// f16: 1 sign, 5 exponent (bias 15), 10 mantissa bits. Rounding is done on the exact value in
// double arithmetic with nearbyint (the default rounding mode is to-nearest-even), one binade at
// a time, which is easy to check against the format definition.
uint16_t f32_to_f16_bits(float f) {
  uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  double a = std::fabs(static_cast<double>(f));
  if (std::isnan(f))
    return sign | 0x7E00;
  if (a >= 65520.0) // max half 65504; halfway to the next binade step rounds up to inf
    return sign | 0x7C00;
  if (a < std::ldexp(1.0, -14)) { // subnormal: multiples of 2^-24
    double q = std::nearbyint(a / std::ldexp(1.0, -24));
    return sign | static_cast<uint16_t>(q); // q == 1024 is the smallest normal: same bits
  }
  int e = 0;
  double m = std::frexp(a, &e); // a = m * 2^e, m in [0.5, 1)
  m *= 2;
  e -= 1; // a = m * 2^e, m in [1, 2)
  double q = std::nearbyint((m - 1.0) * 1024.0);
  if (q == 1024.0) {
    q = 0;
    e += 1;
  }
  if (e + 15 >= 31)
    return sign | 0x7C00;
  return sign | static_cast<uint16_t>(((e + 15) << 10) | static_cast<int>(q));
}

float f16_bits_to_f32(uint16_t h) {
  int exp = (h >> 10) & 0x1F;
  int man = h & 0x3FF;
  double v;
  if (exp == 0)
    v = std::ldexp(man, -24);
  else if (exp == 31)
    v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else
    v = std::ldexp(1024 + man, exp - 25);
  return static_cast<float>((h & 0x8000) ? -v : v);
}

uint16_t f32_to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f))
    return static_cast<uint16_t>((u >> 16) | 0x40);
  uint32_t lower = u & 0xFFFF, upper = u >> 16;
  if (lower > 0x8000 || (lower == 0x8000 && (upper & 1)))
    ++upper; // carries into the exponent correctly, up to inf
  return static_cast<uint16_t>(upper);
}

float bf16_bits_to_f32(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

double round_to(Dt dt, double v) {
  float f = static_cast<float>(v);
  switch (dt) {
  case Dt::F32: return f;
  case Dt::F16: return f16_bits_to_f32(f32_to_f16_bits(f));
  case Dt::BF16: return bf16_bits_to_f32(f32_to_bf16_bits(f));
  }
  return v;
}

GuardedBuffer::GuardedBuffer(Dt dt, size_t count) : dt_(dt), count_(count) {
  bytes_.assign(kGuard + count * dt_bytes(dt) + kGuard + 64, kPattern);
  uintptr_t base = reinterpret_cast<uintptr_t>(bytes_.data()) + kGuard;
  offset_ = kGuard + ((64 - base % 64) % 64);
}

void GuardedBuffer::set(size_t i, double v) {
  unsigned char* p = static_cast<unsigned char*>(data()) + i * dt_bytes(dt_);
  float f = static_cast<float>(v);
  if (dt_ == Dt::F32) {
    std::memcpy(p, &f, 4);
  } else {
    uint16_t h = dt_ == Dt::F16 ? f32_to_f16_bits(f) : f32_to_bf16_bits(f);
    std::memcpy(p, &h, 2);
  }
}

double GuardedBuffer::get(size_t i) const {
  const unsigned char* p = static_cast<const unsigned char*>(data()) + i * dt_bytes(dt_);
  if (dt_ == Dt::F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return dt_ == Dt::F16 ? f16_bits_to_f32(h) : bf16_bits_to_f32(h);
}

std::vector<double> GuardedBuffer::values() const {
  std::vector<double> v(count_);
  for (size_t i = 0; i < count_; ++i)
    v[i] = get(i);
  return v;
}

bool GuardedBuffer::guards_intact() const {
  size_t end = offset_ + count_ * dt_bytes(dt_);
  for (size_t i = 0; i < offset_; ++i)
    if (bytes_[i] != kPattern)
      return false;
  for (size_t i = end; i < bytes_.size(); ++i)
    if (bytes_[i] != kPattern)
      return false;
  return true;
}

bool GuardedBuffer::untouched() const {
  const unsigned char* p = static_cast<const unsigned char*>(data());
  return std::all_of(p, p + count_ * dt_bytes(dt_), [](unsigned char c) { return c == kPattern; });
}

std::vector<unsigned char> GuardedBuffer::snapshot() const {
  const unsigned char* p = static_cast<const unsigned char*>(data());
  return {p, p + count_ * dt_bytes(dt_)};
}

bool GuardedBuffer::same_as(const std::vector<unsigned char>& snap) const {
  return snap == snapshot();
}

std::vector<double> fill_random(GuardedBuffer& b, std::mt19937_64& rng, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> out(b.count());
  for (size_t i = 0; i < b.count(); ++i) {
    double v;
    do
      v = round_to(b.dtype(), dist(rng));
    while (v == 0.0);
    b.set(i, v);
    out[i] = v;
  }
  return out;
}

uint64_t seed_of(const std::string& what) {
  uint64_t h = 1469598103934665603ull; // FNV-1a: stable across platforms and runs
  for (unsigned char c : what) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

ErrorStats compare(const std::vector<double>& got, const std::vector<double>& ref, double scale) {
  ErrorStats s;
  double maxref = 0;
  for (double r : ref)
    maxref = std::max(maxref, std::fabs(r));
  s.scale = scale > 0 ? scale : (maxref > 0 ? maxref : 1.0);
  for (size_t i = 0; i < got.size() && i < ref.size(); ++i) {
    if (!std::isfinite(got[i])) {
      ++s.nonfinite;
      s.max_abs_err = std::numeric_limits<double>::infinity();
      s.worst = i;
      continue;
    }
    double e = std::fabs(got[i] - ref[i]);
    if (e > s.max_abs_err) {
      s.max_abs_err = e;
      s.worst = i;
    }
  }
  s.rel = s.max_abs_err / s.scale;
  return s;
}

double tolerance(Dt dt, int64_t reduction_len) {
  double n = static_cast<double>(std::max<int64_t>(reduction_len, 1));
  return 3 * unit_roundoff(dt) + 4 * std::ldexp(1.0, -24) * std::sqrt(n);
}

} // namespace tgtest
