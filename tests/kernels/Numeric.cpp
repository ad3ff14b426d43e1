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
  case Dt::E4M3: return "e4m3";
  case Dt::E5M2: return "e5m2";
  }
  return "?";
}

static bool is_fp8(Dt dt) { return dt == Dt::E4M3 || dt == Dt::E5M2; }

size_t dt_bytes(Dt dt) { return dt == Dt::F32 ? 4 : is_fp8(dt) ? 1 : 2; }

double unit_roundoff(Dt dt) {
  switch (dt) {
  case Dt::F32: return std::ldexp(1.0, -24);
  case Dt::F16: return std::ldexp(1.0, -11);
  case Dt::BF16: return std::ldexp(1.0, -8);
  case Dt::E4M3: return std::ldexp(1.0, -4);
  case Dt::E5M2: return std::ldexp(1.0, -3);
  }
  return 1;
}

// FP8 decoding straight from the field definitions; encoding searches the table of finite
// values (the non-negative codes are increasing in value), so it does not share a single line
// of arithmetic with the bit-twiddling conversions it checks.
float fp8_bits_to_f32(Dt dt, uint8_t b) {
  const bool e4m3 = dt == Dt::E4M3;
  const int mbits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15, emax = e4m3 ? 15 : 31;
  const int e = (b & 0x7F) >> mbits, m = b & ((1 << mbits) - 1);
  double v;
  if (e4m3 && e == emax && m == 7)
    v = std::numeric_limits<double>::quiet_NaN();
  else if (!e4m3 && e == emax)
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else if (e == 0)
    v = std::ldexp(m, 1 - bias - mbits);
  else
    v = std::ldexp(m + (1 << mbits), e - bias - mbits);
  return static_cast<float>((b & 0x80) ? -v : v);
}

namespace {
const std::vector<double>& fp8_magnitudes(Dt dt) { // codes 0 .. largest finite, in order
  static std::vector<double> table[2];
  std::vector<double>& t = table[dt == Dt::E4M3 ? 0 : 1];
  if (t.empty())
    for (int c = 0; c < 0x80 && std::isfinite(fp8_bits_to_f32(dt, static_cast<uint8_t>(c))); ++c)
      t.push_back(fp8_bits_to_f32(dt, static_cast<uint8_t>(c)));
  return t;
}
} // namespace

uint8_t f32_to_fp8_bits(Dt dt, float f) {
  const uint8_t sign = std::signbit(f) ? 0x80 : 0;
  if (std::isnan(f))
    return sign | 0x7F;
  const std::vector<double>& v = fp8_magnitudes(dt);
  const double a = std::fabs(static_cast<double>(f));
  size_t hi = std::lower_bound(v.begin(), v.end(), a) - v.begin(); // first value >= a
  if (hi == v.size()) // above the largest finite value: saturate
    return sign | static_cast<uint8_t>(v.size() - 1);
  if (v[hi] == a || hi == 0)
    return sign | static_cast<uint8_t>(hi);
  const size_t lo = hi - 1;
  const double mid = (v[lo] + v[hi]) / 2;
  const size_t c = a < mid ? lo : a > mid ? hi : (lo % 2 == 0 ? lo : hi);
  return sign | static_cast<uint8_t>(c);
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
  case Dt::E4M3:
  case Dt::E5M2: return fp8_bits_to_f32(dt, f32_to_fp8_bits(dt, f));
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
  } else if (is_fp8(dt_)) {
    *p = f32_to_fp8_bits(dt_, f);
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
  if (is_fp8(dt_))
    return fp8_bits_to_f32(dt_, *p);
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

std::vector<double> fill_random_fp8(GuardedBuffer& b, std::mt19937_64& rng, double lo,
                                    double hi) {
  std::vector<uint8_t> codes; // the allowed non-negative codes
  for (int c = 0; c < 0x80; ++c) {
    const double v = fp8_bits_to_f32(b.dtype(), static_cast<uint8_t>(c));
    if (std::isfinite(v) && (lo == 0 || (v >= lo && v <= hi)))
      codes.push_back(static_cast<uint8_t>(c));
  }
  std::uniform_int_distribution<size_t> pick(0, codes.size() - 1);
  std::uniform_int_distribution<int> sign(0, 1);
  std::vector<double> out(b.count());
  unsigned char* p = static_cast<unsigned char*>(b.data());
  for (size_t i = 0; i < b.count(); ++i) {
    p[i] = static_cast<unsigned char>(codes[pick(rng)] | (sign(rng) ? 0x80 : 0));
    out[i] = fp8_bits_to_f32(b.dtype(), p[i]);
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

double fp8_gemm_bound(double ref, double abs_ref, int64_t K) {
  const double u32 = std::ldexp(1.0, -24), u16 = unit_roundoff(Dt::BF16);
  const double n = static_cast<double>(std::max<int64_t>(K, 0) + 2);
  const double g = n * u32 / (1 - n * u32);
  // + 2^-134: bf16's absolute rounding error below its smallest normal (never reached by
  // these inputs, whose partial sums are multiples of 2^-35 at least; kept for soundness).
  return u16 * std::fabs(ref) + (1 + u16) * g * abs_ref + std::ldexp(1.0, -134);
}

double max_bound_ratio(const std::vector<double>& got, const std::vector<double>& ref,
                       const std::vector<double>& bound, size_t* worst) {
  double m = 0;
  if (worst)
    *worst = 0;
  for (size_t i = 0; i < got.size() && i < ref.size() && i < bound.size(); ++i) {
    const double e = std::fabs(got[i] - ref[i]);
    const double r = !std::isfinite(got[i]) ? std::numeric_limits<double>::infinity()
                     : e == 0               ? 0.0
                                            : e / bound[i];
    if (r > m) {
      m = r;
      if (worst)
        *worst = i;
    }
  }
  return m;
}

double gemm_bound_ratio(const std::vector<double>& got, const std::vector<double>& ref,
                        const std::vector<double>& absref, Dt dt, int64_t K, size_t* worst) {
  const double u32 = std::ldexp(1.0, -24), uT = unit_roundoff(dt);
  const double gamma = (K + 1) * u32 / (1 - (K + 1) * u32);
  const double tiny = (dt == Dt::BF16 ? std::ldexp(1.0, -134) : std::ldexp(1.0, -25)) +
                      2.0 * K * std::ldexp(1.0, -149);
  double w = 0;
  *worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double r;
    if (std::isnan(ref[i]))
      r = std::isnan(got[i]) ? 0 : INFINITY;
    else if (!std::isfinite(got[i]))
      r = INFINITY;
    else
      r = std::fabs(got[i] - ref[i]) /
          (uT * std::fabs(ref[i]) + (1 + uT) * gamma * absref[i] + tiny);
    if (r > w || std::isnan(r)) {
      w = std::isnan(r) ? INFINITY : r;
      *worst = i;
    }
  }
  return w;
}

std::vector<double> abs_of(const std::vector<double>& v) {
  std::vector<double> a(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    a[i] = std::fabs(v[i]);
  return a;
}

PagedTable paged_table(const std::vector<int32_t>& lens, int64_t page, int64_t spare,
                       int32_t unused, std::mt19937_64& rng) {
  PagedTable t;
  int64_t used = 0;
  for (int32_t n : lens) {
    t.MP = std::max<int64_t>(t.MP, (n + page - 1) / page);
    used += (n + page - 1) / page;
  }
  t.NP = used + spare;
  std::vector<int32_t> pool(static_cast<size_t>(t.NP));
  for (size_t i = 0; i < pool.size(); ++i)
    pool[i] = static_cast<int32_t>(i);
  std::shuffle(pool.begin(), pool.end(), rng);
  t.table.assign(lens.size() * static_cast<size_t>(t.MP), unused);
  size_t next = 0;
  for (size_t b = 0; b < lens.size(); ++b)
    for (int64_t k = 0; k < (lens[b] + page - 1) / page; ++k)
      t.table[b * static_cast<size_t>(t.MP) + static_cast<size_t>(k)] = pool[next++];
  return t;
}

} // namespace tgtest
