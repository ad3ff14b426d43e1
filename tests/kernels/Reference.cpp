#include "Reference.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tgtest::ref {

Vec gemm(const Vec& A, const Vec& B, int64_t M, int64_t N, int64_t K) {
  Vec C(static_cast<size_t>(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t k = 0; k < K; ++k) {
      double a = A[i * K + k];
      for (int64_t j = 0; j < N; ++j)
        C[i * N + j] += a * B[k * N + j];
    }
  return C;
}

Vec gemm_fp8(const Vec& A, const Vec& B, int64_t M, int64_t N, int64_t K, double scale_a,
             double scale_b, bool abs) {
  Vec C(static_cast<size_t>(M * N), 0.0);
  const double s = abs ? std::fabs(scale_a * scale_b) : scale_a * scale_b;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0; // exact for the usual inputs (|x| in [2^-4, 4]: 2^-15 quanta), else
                      // within 2^-53 relative: far below any tolerance
      for (int64_t k = 0; k < K; ++k) {
        const double p = A[i * K + k] * B[j * K + k];
        acc += abs ? std::fabs(p) : p;
      }
      C[i * N + j] = acc * s;
    }
  return C;
}

Vec gemm_bias_gelu(const Vec& A, const Vec& B, const Vec& bias, int64_t M, int64_t N, int64_t K) {
  Vec C = gemm(A, B, M, N, K);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double x = C[i * N + j] + bias[j];
      C[i * N + j] = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    }
  return C;
}

Vec softmax(const Vec& X, int64_t M, int64_t N) {
  Vec Y(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i) {
    const double* x = &X[i * N];
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < N; ++j)
      m = std::max(m, x[j]);
    double l = 0;
    for (int64_t j = 0; j < N; ++j)
      l += std::exp(x[j] - m);
    for (int64_t j = 0; j < N; ++j)
      Y[i * N + j] = std::exp(x[j] - m) / l;
  }
  return Y;
}

Vec rmsnorm(const Vec& X, const Vec& W, int64_t M, int64_t N, double eps) {
  Vec Y(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i) {
    double ss = 0;
    for (int64_t j = 0; j < N; ++j)
      ss += X[i * N + j] * X[i * N + j];
    double r = 1.0 / std::sqrt(ss / static_cast<double>(N) + eps);
    for (int64_t j = 0; j < N; ++j)
      Y[i * N + j] = X[i * N + j] * r * W[j];
  }
  return Y;
}

Vec layernorm(const Vec& X, const Vec& W, const Vec& Bias, int64_t M, int64_t N, double eps) {
  Vec Y(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i) {
    double s = 0, v = 0;
    for (int64_t j = 0; j < N; ++j)
      s += X[i * N + j];
    const double mean = s / static_cast<double>(N);
    for (int64_t j = 0; j < N; ++j)
      v += (X[i * N + j] - mean) * (X[i * N + j] - mean);
    const double r = 1.0 / std::sqrt(v / static_cast<double>(N) + eps);
    for (int64_t j = 0; j < N; ++j)
      Y[i * N + j] = (X[i * N + j] - mean) * r * W[j] + Bias[j];
  }
  return Y;
}

Vec flash_attention(const Vec& Q, const Vec& K, const Vec& V, int64_t B, int64_t H, int64_t S,
                    int64_t D, double sm_scale, bool causal) {
  Vec O(static_cast<size_t>(B * H * S * D), 0.0);
  Vec s(static_cast<size_t>(S));
  for (int64_t bh = 0; bh < B * H; ++bh) {
    const double* q = &Q[bh * S * D];
    const double* k = &K[bh * S * D];
    const double* v = &V[bh * S * D];
    double* o = &O[bh * S * D];
    for (int64_t i = 0; i < S; ++i) {
      int64_t keys = causal ? i + 1 : S;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += q[i * D + d] * k[j * D + d];
        s[j] = dot * sm_scale;
        m = std::max(m, s[j]);
      }
      double l = 0;
      for (int64_t j = 0; j < keys; ++j) {
        s[j] = std::exp(s[j] - m);
        l += s[j];
      }
      for (int64_t j = 0; j < keys; ++j)
        for (int64_t d = 0; d < D; ++d)
          o[i * D + d] += s[j] / l * v[j * D + d];
    }
  }
  return O;
}

Vec decode_attention(const Vec& q, const Vec& K, const Vec& V, const std::vector<int32_t>& table,
                     const std::vector<int32_t>& lens, int64_t B, int64_t Hkv, int64_t G,
                     int64_t MP, int64_t page, int64_t D, double scale) {
  Vec o(static_cast<size_t>(B * Hkv * G * D), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hkv; ++h)
      for (int64_t g = 0; g < G; ++g) {
        const double* qv = &q[((b * Hkv + h) * G + g) * D];
        double* ov = &o[((b * Hkv + h) * G + g) * D];
        const int64_t n = lens[b];
        Vec s(static_cast<size_t>(n));
        double m = -std::numeric_limits<double>::infinity();
        auto row = [&](int64_t j) { // offset of token j's row for head h
          return ((static_cast<int64_t>(table[b * MP + j / page]) * Hkv + h) * page + j % page) * D;
        };
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += qv[d] * K[row(j) + d];
          s[j] = dot * scale;
          m = std::max(m, s[j]);
        }
        double l = 0;
        for (int64_t j = 0; j < n; ++j)
          l += (s[j] = std::exp(s[j] - m));
        for (int64_t j = 0; j < n; ++j)
          for (int64_t d = 0; d < D; ++d)
            ov[d] += s[j] / l * V[row(j) + d];
      }
  return o;
}

Vec mla_decode(const Vec& q, const Vec& KV, const std::vector<int32_t>& table,
               const std::vector<int32_t>& lens, int64_t B, int64_t H, int64_t MP, int64_t page,
               int64_t DL, int64_t DR, double scale) {
  const int64_t D = DL + DR;
  Vec o(static_cast<size_t>(B * H * DL), 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const double* qv = &q[(b * H + h) * D];
      double* ov = &o[(b * H + h) * DL];
      const int64_t n = lens[b];
      Vec s(static_cast<size_t>(n));
      double m = -std::numeric_limits<double>::infinity();
      auto row = [&](int64_t j) { // offset of token j's cache row
        return (static_cast<int64_t>(table[b * MP + j / page]) * page + j % page) * D;
      };
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += qv[d] * KV[row(j) + d];
        s[j] = dot * scale;
        m = std::max(m, s[j]);
      }
      double l = 0;
      for (int64_t j = 0; j < n; ++j)
        l += (s[j] = std::exp(s[j] - m));
      for (int64_t j = 0; j < n; ++j)
        for (int64_t d = 0; d < DL; ++d)
          ov[d] += s[j] / l * KV[row(j) + d];
    }
  return o;
}

Vec grouped_gemm(const Vec& A, const Vec& W, const std::vector<int32_t>& offs, int64_t M,
                 int64_t N, int64_t K) {
  Vec C(static_cast<size_t>(M * N), 0.0);
  int64_t begin = 0;
  for (size_t e = 0; e < offs.size(); ++e) {
    const double* w = &W[e * K * N];
    for (int64_t i = begin; i < offs[e]; ++i)
      for (int64_t k = 0; k < K; ++k) {
        const double a = A[i * K + k];
        for (int64_t j = 0; j < N; ++j)
          C[i * N + j] += a * w[k * N + j];
      }
    begin = offs[e];
  }
  return C;
}

} // namespace tgtest::ref

namespace tgtest::ref {

std::vector<uint8_t> pack_nibbles(const std::vector<uint8_t>& codes, int64_t rows, int64_t cols) {
  std::vector<uint8_t> out(static_cast<size_t>(rows * cols / 2), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const uint8_t v = codes[r * cols + c] & 15;
      out[(r * cols + c) / 2] |= static_cast<uint8_t>(c % 2 ? v << 4 : v);
    }
  return out;
}

Vec w4a16_weights(const std::vector<uint8_t>& q, const Vec& S, const std::vector<uint8_t>* Z,
                  int64_t N, int64_t K, int64_t group) {
  Vec W(static_cast<size_t>(K * N));
  for (int64_t k = 0; k < K; ++k)
    for (int64_t n = 0; n < N; ++n) {
      const int64_t g = k / group;
      const double z = Z ? (*Z)[g * N + n] : 8.0;
      W[k * N + n] = (q[k * N + n] - z) * S[g * N + n];
    }
  return W;
}

double e2m1_value(uint8_t code) {
  static const double mag[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (code & 8 ? -1.0 : 1.0) * mag[code & 7];
}

double e8m0_value(uint8_t e) {
  return e == 255 ? std::numeric_limits<double>::quiet_NaN() : std::ldexp(1.0, e - 127);
}

Vec mxfp4_weights_kn(const std::vector<uint8_t>& B, const std::vector<uint8_t>& E, int64_t N,
                     int64_t K) {
  const int64_t KB = (K + 31) / 32;
  Vec W(static_cast<size_t>(K * N));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      W[k * N + n] = e2m1_value(B[n * K + k]) * e8m0_value(E[n * KB + k / 32]);
  return W;
}

} // namespace tgtest::ref
