// The C gemm: one static helper per (shape, transposes, clear, types), built around a
// register-blocked micro-kernel. The block's c (M x N) is cut into MR x NR tiles; each tile's
// accumulators live in a small local array that the compiler keeps in vector registers
// (constant trip counts, fully unrolled rows, a simd loop over NR columns), and k runs
// innermost so each tile reads c once and writes it once. Rows of b are contiguous for the
// simd loop: a transposed b (N x K) is first packed into a K x N scratch; a transposed a
// needs no packing (its elements are broadcast one at a time).
#include "emit/CEmitter.h"

#include "support/InternalError.h"

#include <algorithm>

namespace tilegen::emit {

using namespace ir;

namespace {

// MR x (NR vectors) per vector width. With 16 vector registers (SSE, AVX2, NEON), 6 x 2
// keeps 12 accumulators + 2 vectors of b + 1 broadcast in registers. With 32 (AVX-512),
// 4 x 4 keeps 16 accumulators + 4 vectors of b: measured 1.2-1.3x of 6 x 2 over several
// block shapes (docs/c-backend.md has the sweep).
constexpr CGemmTile kTiles[] = {
    {64, 4, 4}, // AVX-512: 4 x 64 floats
    {32, 6, 2}, // AVX2:    6 x 16 floats
    {16, 6, 2}, // SSE/NEON: 6 x 8 floats
};

std::string c_type(DType t) {
  switch (t.kind) {
  case ScalarKind::I8: return "int8_t";
  case ScalarKind::I32: return "int32_t";
  case ScalarKind::I64: return "int64_t";
  case ScalarKind::F64: return "double";
  case ScalarKind::F32: return "float";
  default: internal_error(std::string("C gemm: unsupported operand type ") + t.name());
  }
}

std::string zero_of(DType t) { return t.is_float() ? (t == DType::f64() ? "0.0" : "0.0f") : "0"; }

} // namespace

CGemmTile c_gemm_tile(int vector_bytes) {
  for (const auto& t : kTiles)
    if (t.vector_bytes == vector_bytes)
      return t;
  return kTiles[std::size(kTiles) - 1];
}

std::string c_gemm_helper_name(const CGemmShape& g) {
  return "tg_gemm_" + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k) +
         "_" + (g.transpose_a ? "t" : "n") + (g.transpose_b ? "t" : "n") + (g.clear ? "_clear" : "") +
         "_" + g.a.name() + g.b.name() + g.c.name();
}

std::string c_gemm_helper_source(const CGemmShape& g, const Target& target) {
  const std::string Ta = c_type(g.a), Tb = c_type(g.b), Tc = c_type(g.c);
  const CGemmTile tile = c_gemm_tile(target.vector_bytes);
  const int64_t elems_per_vec = std::max<int64_t>(1, target.vector_bytes / g.c.bytes());
  const int64_t MR = std::min<int64_t>(tile.mr, g.m);
  const int64_t NR = std::min<int64_t>(tile.nr_vectors * elems_per_vec, g.n);
  const std::string M = std::to_string(g.m), N = std::to_string(g.n), K = std::to_string(g.k);
  const std::string name = c_gemm_helper_name(g);
  const std::string cast_a = Ta == Tc ? "" : "(" + Tc + ")";
  const std::string cast_b = Tb == Tc ? "" : "(" + Tc + ")";
  // ISO C forbids the compiler to fuse a * b + c (-std=c11 implies -ffp-contract=off in
  // gcc), and an unfused multiply-add halves the FMA units' throughput: call fma explicitly.
  const std::string fma = "tg_fma_" + std::string(g.c.name());

  std::string s;
  // f32 on an x86 row of 32-byte vectors (c_avx2): micro-kernels with AVX2 intrinsics below
  const bool x86_f32 = target.vector_bytes == 32 && target.cpu_arch == "x86" && Ta == "float" &&
                       Tb == "float" && Tc == "float";
  if (x86_f32)
    s += "#if defined(__AVX2__) && defined(__FMA__)\n#include <immintrin.h>\n#endif\n";
  // The micro-kernel for an mr x nr tile at (i0, j0); a/b/c point at the block's operands.
  auto micro = [&](int64_t mr, int64_t nr) {
    const std::string fn = name + "_tile" + std::to_string(mr) + "x" + std::to_string(nr);
    const std::string smr = std::to_string(mr), snr = std::to_string(nr);
    std::string a_elem = g.transpose_a ? "a[kk * " + M + " + i0 + r]" : "a[(i0 + r) * " + K + " + kk]";
    s += "static inline void " + fn + "(" + Tc + "* restrict c, const " + Ta + "* restrict a, const " + Tb +
         "* restrict b, int i0, int j0) {\n";
    // f32 on 32-byte vectors with AVX2 + FMA: the accumulators as named __m256 values. gcc 12
    // kept about half of the 6 x 2 vectors of the acc array below in memory (a load and a store
    // around every FMA of the k loop); named, they stay in registers: 1024^3 on one thread of a
    // Zen 3 VM 27-31 -> 58-62 GFLOP/s, the same FMAs in the same order (identical results).
    const bool avx2 = x86_f32 && nr % 8 == 0 && nr <= 16;
    if (avx2) {
      auto a_at = [&](int64_t r) {
        const std::string row = "i0 + " + std::to_string(r);
        return g.transpose_a ? "a[kk * " + M + " + " + row + "]" : "a[(" + row + ") * " + K + " + kk]";
      };
      auto c_at = [&](int64_t r, int64_t v) {
        return "c + (i0 + " + std::to_string(r) + ") * " + N + " + j0 + " + std::to_string(8 * v);
      };
      auto acc = [](int64_t r, int64_t v) { return "tg_c" + std::to_string(r) + "_" + std::to_string(v); };
      const int64_t nv = nr / 8;
      s += "#if defined(__AVX2__) && defined(__FMA__)\n";
      for (int64_t r = 0; r < mr; ++r)
        for (int64_t v = 0; v < nv; ++v)
          s += "  __m256 " + acc(r, v) + " = " +
               (g.clear ? std::string("_mm256_setzero_ps()") : "_mm256_loadu_ps(" + c_at(r, v) + ")") + ";\n";
      s += "  for (int kk = 0; kk < " + K + "; ++kk) {\n";
      s += "    const float* restrict brow = b + kk * " + N + " + j0;\n";
      for (int64_t v = 0; v < nv; ++v)
        s += "    const __m256 tg_b" + std::to_string(v) + " = _mm256_loadu_ps(brow + " + std::to_string(8 * v) + ");\n";
      for (int64_t r = 0; r < mr; ++r) {
        s += "    {\n      const __m256 ar = _mm256_set1_ps(" + a_at(r) + ");\n";
        for (int64_t v = 0; v < nv; ++v)
          s += "      " + acc(r, v) + " = _mm256_fmadd_ps(ar, tg_b" + std::to_string(v) + ", " + acc(r, v) + ");\n";
        s += "    }\n";
      }
      s += "  }\n";
      for (int64_t r = 0; r < mr; ++r)
        for (int64_t v = 0; v < nv; ++v)
          s += "  _mm256_storeu_ps(" + c_at(r, v) + ", " + acc(r, v) + ");\n";
      s += "#else\n";
    }
    s += "  " + Tc + " acc[" + smr + "][" + snr + "];\n";
    s += "#pragma GCC unroll " + smr + "\n";
    s += "  for (int r = 0; r < " + smr + "; ++r) {\n#pragma omp simd\n";
    s += "    for (int j = 0; j < " + snr + "; ++j)\n";
    s += g.clear ? "      acc[r][j] = " + zero_of(g.c) + ";\n"
                 : "      acc[r][j] = c[(i0 + r) * " + N + " + j0 + j];\n";
    s += "  }\n";
    s += "  for (int kk = 0; kk < " + K + "; ++kk) {\n";
    s += "    const " + Tb + "* restrict brow = b + kk * " + N + " + j0;\n";
    s += "#pragma GCC unroll " + smr + "\n";
    s += "    for (int r = 0; r < " + smr + "; ++r) {\n";
    s += "      const " + Tc + " ar = " + cast_a + a_elem + ";\n#pragma omp simd\n";
    s += "      for (int j = 0; j < " + snr + "; ++j)\n";
    s += "        acc[r][j] = " + fma + "(ar, " + cast_b + "brow[j], acc[r][j]);\n";
    s += "    }\n  }\n";
    s += "#pragma GCC unroll " + smr + "\n";
    s += "  for (int r = 0; r < " + smr + "; ++r) {\n#pragma omp simd\n";
    s += "    for (int j = 0; j < " + snr + "; ++j)\n";
    s += "      c[(i0 + r) * " + N + " + j0 + j] = acc[r][j];\n  }\n";
    if (avx2)
      s += "#endif\n";
    s += "}\n\n";
    return fn;
  };

  const int64_t m_full = g.m / MR * MR, n_full = g.n / NR * NR;
  const int64_t m_rem = g.m - m_full, n_rem = g.n - n_full;
  std::string k_full = micro(MR, NR);
  std::string k_mrem = m_rem ? micro(m_rem, NR) : "";
  std::string k_nrem = n_rem ? micro(MR, n_rem) : "";
  std::string k_both = m_rem && n_rem ? micro(m_rem, n_rem) : "";

  s += "/* c[" + M + "x" + N + "] " + (g.clear ? "= " : "+= ") + "a" + (g.transpose_a ? "^T" : "") +
       " @ b" + (g.transpose_b ? "^T" : "") + " with k = " + K + ", accumulated in " + g.c.name() +
       ": register tiles of " + std::to_string(MR) + "x" + std::to_string(NR) + ", k innermost. */\n";
  s += "static void " + name + "(" + Tc + "* restrict c, const " + Ta + "* restrict a, const " + Tb +
       "* restrict b" + (g.transpose_b ? ", " + Tb + "* restrict bp" : std::string()) + ") {\n";
  if (g.transpose_b) {
    // Strips of W rows of b: for each k, W reads from W row streams and one contiguous W-wide
    // store. A row at a time (contiguous reads, stores W*N floats apart) ran the fp8 gemm at
    // half the speed of the f32 one on AVX-512 (1024^3: 30 vs 54-61 GFLOP/s this way).
    int64_t W = 16;
    while (g.n % W != 0)
      W /= 2;
    const std::string w = std::to_string(W);
    s += "  /* b is N x K: pack it into K x N (bp, from the caller) so that the micro-kernel\n"
         "     reads rows; strips of " + w + " rows of b, one contiguous store per k. */\n";
    s += "  for (int n0 = 0; n0 < " + N + "; n0 += " + w + ")\n";
    s += "    for (int kk = 0; kk < " + K + "; ++kk) {\n#pragma omp simd\n";
    s += "      for (int n = 0; n < " + w + "; ++n)\n";
    s += "        bp[kk * " + N + " + n0 + n] = b[(n0 + n) * " + K + " + kk];\n    }\n";
    s += "  b = bp;\n";
  }
  auto row_loop = [&](const std::string& j0, const std::string& kf, const std::string& kr) {
    std::string t;
    if (m_full > 0)
      t += "    for (int i0 = 0; i0 < " + std::to_string(m_full) + "; i0 += " + std::to_string(MR) +
           ")\n      " + kf + "(c, a, b, i0, " + j0 + ");\n";
    if (m_rem)
      t += "    " + kr + "(c, a, b, " + std::to_string(m_full) + ", " + j0 + ");\n";
    return t;
  };
  if (n_full > 0)
    s += "  for (int j0 = 0; j0 < " + std::to_string(n_full) + "; j0 += " + std::to_string(NR) +
         ") {\n" + row_loop("j0", k_full, k_mrem) + "  }\n";
  if (n_rem)
    s += "  {\n" + row_loop(std::to_string(n_full), k_nrem, k_both) + "  }\n";
  s += "}\n";
  return s;
}

} // namespace tilegen::emit
