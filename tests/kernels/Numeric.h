// Numeric helpers of the kernel tests: storage types, independent f16/bf16 conversions, guarded
// buffers that catch out-of-bounds writes, seeded random inputs and the error metric.
//
// The conversions are written here from the IEEE formats (not taken from the runtime), so a
// rounding bug in the runtime or in generated code cannot hide behind the same bug in the test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tgtest {

enum class Dt { F32, F16, BF16 };
constexpr Dt kAllDts[] = {Dt::F32, Dt::F16, Dt::BF16};

const char* dt_name(Dt dt);       // "f32", "f16", "bf16"
size_t dt_bytes(Dt dt);           // 4, 2, 2
double unit_roundoff(Dt dt);      // 2^-24, 2^-11, 2^-8: half an ulp at 1.0

uint16_t f32_to_f16_bits(float f);   // round to nearest even, overflow to inf
float f16_bits_to_f32(uint16_t h);
uint16_t f32_to_bf16_bits(float f);  // round to nearest even
float bf16_bits_to_f32(uint16_t h);

// Rounds a value to the storage type and back (what the kernel sees when we store `v`).
double round_to(Dt dt, double v);

// A tensor in its storage format, surrounded by guard bytes. Data starts 64-byte aligned.
// Output tensors are pre-filled with the guard pattern too (0xFF: a NaN in every float
// format), so an element the kernel fails to write shows up as NaN.
class GuardedBuffer {
public:
  static constexpr size_t kGuard = 256;
  static constexpr unsigned char kPattern = 0xFF;

  GuardedBuffer(Dt dt, size_t count);
  Dt dtype() const { return dt_; }
  size_t count() const { return count_; }
  void* data() { return bytes_.data() + offset_; }
  const void* data() const { return bytes_.data() + offset_; }

  void set(size_t i, double v);  // stores round_to(dt, v)
  double get(size_t i) const;
  std::vector<double> values() const;
  // True iff the guard bytes on both sides are untouched.
  bool guards_intact() const;
  // True iff the data bytes equal the guard pattern (nothing was written).
  bool untouched() const;
  std::vector<unsigned char> snapshot() const; // data bytes
  bool same_as(const std::vector<unsigned char>& snap) const;

private:
  Dt dt_;
  size_t count_;
  size_t offset_ = 0;
  std::vector<unsigned char> bytes_;
};

// Fills `b` with values uniform in [lo, hi], rounded to its type, never exactly zero; returns
// the rounded values (what a float64 reference must use).
std::vector<double> fill_random(GuardedBuffer& b, std::mt19937_64& rng, double lo = -1.0,
                                double hi = 1.0);

// A seed that depends only on the test's inputs (kernel, dtype, sizes), not on the target, so
// every target library sees identical inputs.
uint64_t seed_of(const std::string& what);

struct ErrorStats {
  double max_abs_err = 0;  // max |got - ref|
  double scale = 0;        // normalizer (max |ref| unless the kernel says otherwise)
  double rel = 0;          // max_abs_err / scale
  size_t worst = 0;        // index of the worst element
  size_t nonfinite = 0;    // elements of `got` that are NaN or inf
};

// Compares got (kernel output) with ref (float64). `scale` <= 0 means max |ref| (1 if that is 0).
ErrorStats compare(const std::vector<double>& got, const std::vector<double>& ref, double scale = 0);

// The per-dtype tolerance on ErrorStats::rel (docs/kernels.md "Tolerances"):
//   3 u_T                 rounding of the output to T (1 u), and of one intermediate stored in T
//                         (p in attention) or a last-bit difference in exp/erf (2 u more)
// + 4 u_f32 sqrt(L)       f32 accumulation over a reduction of length L: rounding errors of
//                         random sign grow like sqrt(L) (observed: at most 0.7 u sqrt(L) on
//                         gemm K=513); 4x covers libm ulps and per-target summation orders
double tolerance(Dt dt, int64_t reduction_len);

} // namespace tgtest
