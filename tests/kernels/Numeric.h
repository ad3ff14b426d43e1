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

// E4M3 and E5M2 are the OCP FP8 formats (gemm_fp8's operands); the other kernels take the
// three types of kAllDts.
enum class Dt { F32, F16, BF16, E4M3, E5M2 };
constexpr Dt kAllDts[] = {Dt::F32, Dt::F16, Dt::BF16};
constexpr Dt kFp8Dts[] = {Dt::E4M3, Dt::E5M2};

const char* dt_name(Dt dt);       // "f32", "f16", "bf16", "e4m3", "e5m2"
size_t dt_bytes(Dt dt);           // 4, 2, 2, 1, 1
double unit_roundoff(Dt dt);      // 2^-24, 2^-11, 2^-8, 2^-4, 2^-3: half an ulp at 1.0

uint16_t f32_to_f16_bits(float f);   // round to nearest even, overflow to inf
float f16_bits_to_f32(uint16_t h);
uint16_t f32_to_bf16_bits(float f);  // round to nearest even
float bf16_bits_to_f32(uint16_t h);

// FP8, from the format definitions (e4m3: bias 7, no inf, S.1111.111 NaN, max 448; e5m2:
// bias 15, IEEE-like, max 57344). Encoding rounds to nearest even by searching the code table
// and saturates everything above the largest finite value to it (satfinite); NaN -> NaN.
float fp8_bits_to_f32(Dt dt, uint8_t b);
uint8_t f32_to_fp8_bits(Dt dt, float f);

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

// Fills an FP8 buffer with codes drawn uniformly among the finite codes with magnitude in
// [lo, hi] (both signs; lo > 0: no zeros), or among all finite codes if lo == 0 (zeros,
// subnormals and the largest values included). Returns the decoded values.
std::vector<double> fill_random_fp8(GuardedBuffer& b, std::mt19937_64& rng, double lo = 0.0625,
                                    double hi = 4.0);

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

// gemm_fp8, a bound per element that holds for any summation order (docs/kernels.md
// "Verification"): the FP8 inputs are exact in f32 and so are their products (at most 8
// significant bits, far from f32's range limits), so the only roundings before the output are
// the K - 1 f32 additions and the two scale multiplies (s = fl(scale_a * scale_b), then
// fl(acc * s)); the bf16 store then rounds once more. With g = (K + 2) u_f32 / (1 - (K + 2) u_f32)
// and S = |scale_a scale_b| sum_k |A[i,k] B[j,k]|:
//   |got - ref| <= u_bf16 |ref| + (1 + u_bf16) g S
// `abs_ref` is S, `ref` the exact float64 result.
double fp8_gemm_bound(double ref, double abs_ref, int64_t K);

// max over elements of |got - ref| / bound (0/0 counts as 0; a NaN or inf in got is inf).
double max_bound_ratio(const std::vector<double>& got, const std::vector<double>& ref,
                       const std::vector<double>& bound, size_t* worst = nullptr);

// GEMMs whose operands are exact in f32 and whose products are too (16-bit A times weights
// dequantized and rounded to T: gemm_w4a16, gemm_mxfp4): the only roundings are the K - 1 f32
// additions and the store to T, so whatever the summation order, per element
//   |got - ref| <= u_T |ref| + (1 + u_T) g S + tiny,  g = (K + 1) u_f32 / (1 - (K + 1) u_f32),
// S = sum_k |A[i,k] W[k,j]| (`absref`), tiny = half T's subnormal spacing + 2 K f32 subnormal
// spacings. Returns the max over elements of |got - ref| / bound; a NaN reference needs a NaN
// result (ratio 0), any other non-finite result counts as inf.
double gemm_bound_ratio(const std::vector<double>& got, const std::vector<double>& ref,
                        const std::vector<double>& absref, Dt dt, int64_t K, size_t* worst);
std::vector<double> abs_of(const std::vector<double>& v);

// The block table of a paged cache (decode_attention, mla_decode): sequence b's cdiv(lens[b],
// page) pages are dealt from one shuffled pool of all used pages plus `spare` that no sequence
// uses, so pages come out of order and interleaved between sequences. table is [B, MP], MP the
// most pages of a sequence (at least 1); columns a sequence does not use hold `unused`.
struct PagedTable {
  std::vector<int32_t> table;
  int64_t MP = 1, NP = 0;
};
PagedTable paged_table(const std::vector<int32_t>& lens, int64_t page, int64_t spare,
                       int32_t unused, std::mt19937_64& rng);

} // namespace tgtest
