// Float64 references of the shipped kernels (docs/kernels.md gives the math). Inputs are the
// values the kernel received (already rounded to the storage type); outputs are exact-ish
// float64 results before any rounding to the output type. Row-major everywhere.
#pragma once

#include <cstdint>
#include <vector>

namespace tgtest::ref {

using Vec = std::vector<double>;

// C[M, N] = A[M, K] @ B[K, N]
Vec gemm(const Vec& A, const Vec& B, int64_t M, int64_t N, int64_t K);

// gemm_fp8: C[M, N] = (A[M, K] @ B[N, K]^T) * scale_a * scale_b (B is [N, K]: K-major), and
// with `abs` set, the same over |A| and |B| and |scale_a scale_b| (the error bound's scale).
Vec gemm_fp8(const Vec& A, const Vec& B, int64_t M, int64_t N, int64_t K, double scale_a,
             double scale_b, bool abs = false);

// C[M, N] = gelu(A @ B + bias[None, :]), gelu(x) = 0.5 x (1 + erf(x / sqrt(2)))
Vec gemm_bias_gelu(const Vec& A, const Vec& B, const Vec& bias, int64_t M, int64_t N, int64_t K);

// Y[i, :] = softmax(X[i, :])
Vec softmax(const Vec& X, int64_t M, int64_t N);

// Y[i, :] = X[i, :] / sqrt(mean(X[i, :]^2) + eps) * W[:]
Vec rmsnorm(const Vec& X, const Vec& W, int64_t M, int64_t N, double eps);
// Y = (X - mean) / sqrt(var + eps) * W + Bias per row (population variance).
Vec layernorm(const Vec& X, const Vec& W, const Vec& Bias, int64_t M, int64_t N, double eps);

// O[b, h, i, :] = sum_j softmax_j(sm_scale * Q[b, h, i, :] . K[b, h, j, :]) V[b, h, j, :]
// over keys j < S (and j <= i if causal). Shapes [B, H, S, D].
Vec flash_attention(const Vec& Q, const Vec& K, const Vec& V, int64_t B, int64_t H, int64_t S,
                    int64_t D, double sm_scale, bool causal);

// Paged decode attention (kernels/decode_attention.yaml): o[b, h, g, :] = softmax_j(q[b, h, g, :]
// . K[j] * scale) @ V over keys j < lens[b] of sequence b, token j at row j % page of page
// table[b * MP + j / page] of the [NP, Hkv, page, D] caches; 0 for a sequence of length 0.
Vec decode_attention(const Vec& q, const Vec& K, const Vec& V, const std::vector<int32_t>& table,
                     const std::vector<int32_t>& lens, int64_t B, int64_t Hkv, int64_t G,
                     int64_t MP, int64_t page, int64_t D, double scale);

// Multi-head latent attention decode (kernels/mla_decode.yaml): o[b, h, :] = softmax_j(q[b, h, :]
// . KV[j] * scale) @ KV[j, :DL] over tokens j < lens[b], token j at row j % page of page
// table[b * MP + j / page] of the [NP, page, DL + DR] cache, with q [B, H, DL + DR] and o
// [B, H, DL]; 0 for a sequence of length 0.
Vec mla_decode(const Vec& q, const Vec& KV, const std::vector<int32_t>& table,
               const std::vector<int32_t>& lens, int64_t B, int64_t H, int64_t MP, int64_t page,
               int64_t DL, int64_t DR, double scale);
// MoE grouped GEMM (kernels/grouped_gemm.yaml): rows [offs[e - 1], offs[e]) of C[M, N] (offs[-1]
// = 0) are the same rows of A[M, K] times W[e] (W is [E, K, N]); rows at and past offs[E - 1]
// are 0 here (the kernel does not write them).
Vec grouped_gemm(const Vec& A, const Vec& W, const std::vector<int32_t>& offs, int64_t M,
                 int64_t N, int64_t K);

} // namespace tgtest::ref

namespace tgtest::ref {

// Packs 4-bit codes (one per byte, 0..15, row-major [rows, cols], cols even) two to a byte, low
// nibble first: code (r, c) is the low (c even) or high (c odd) nibble of byte r * cols / 2 + c / 2.
std::vector<uint8_t> pack_nibbles(const std::vector<uint8_t>& codes, int64_t rows, int64_t cols);

// gemm_w4a16's weights before their rounding to T (docs/kernels.md): W[K, N] with
// W[k, n] = (q[k, n] - z) * S[k / group, n], z = Z[k / group, n] when Z is given, else 8.
// q and Z are codes (one per byte, row-major), S is [cdiv(K, group), N].
Vec w4a16_weights(const std::vector<uint8_t>& q, const Vec& S, const std::vector<uint8_t>* Z,
                  int64_t N, int64_t K, int64_t group);

// OCP MX: the value of an e2m1 code (S.EE.M: ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}) and of an e8m0
// scale (2^(e - 127), NaN for 255).
double e2m1_value(uint8_t code);
double e8m0_value(uint8_t e);

// gemm_mxfp4's weights before their rounding to bf16, transposed to [K, N] for ref::gemm:
// W[k, n] = e2m1(B[n, k]) * e8m0(E[n, k / 32]); B codes [N, K], E [N, cdiv(K, 32)].
Vec mxfp4_weights_kn(const std::vector<uint8_t>& B, const std::vector<uint8_t>& E, int64_t N,
                     int64_t K);

} // namespace tgtest::ref
