// Runs every shipped kernel x type (gemm_fp8: e4m3 and e5m2; decode_attention: f16 and bf16, pages of
// 16 and 64; mla_decode: f16 and bf16; grouped_gemm: bf16; gemm_w4a16: f16 and bf16, symmetric
// and with zero points; gemm_mxfp4: bf16) through the generated dispatch library `shipped`, at
// ragged
// sizes on fresh random inputs, checks each result against a float64 reference (the same
// references and tolerances as tests/kernels, see docs/kernels.md) and prints one table row
// per run: the variant the dispatcher chose, the error, and the time.
#include "Numeric.h"
#include "Reference.h"
#include "shipped.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace tgtest;

namespace {

int g_failures = 0;

// Times `call` (median of 3 after one warm-up) and returns milliseconds; the last run's
// output is what gets verified.
double time_ms(const std::function<tg_status()>& call, tg_status& st) {
  st = call();
  std::vector<double> t;
  for (int i = 0; i < 3 && st == TG_OK; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    st = call();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                    .count());
  }
  if (t.empty())
    return 0;
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void row(const char* kernel, Dt dt, const std::string& shape, const tg_selection& sel,
         tg_status st, const ErrorStats& e, double tol, double ms, const std::string& rate,
         bool other_checks_ok = true) {
  bool ok = st == TG_OK && e.nonfinite == 0 && e.rel <= tol && other_checks_ok;
  g_failures += !ok;
  std::printf("| %-19s | %-4s | %-22s | %-9s | %8.2e | %8.2e | %8.2f | %-14s | %-4s |\n", kernel,
              dt_name(dt), shape.c_str(), sel.target, e.rel, tol, ms, rate.c_str(),
              ok ? "ok" : (st != TG_OK ? tg_status_string(st) : "FAIL"));
}

std::string gflops(double flops, double ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f GFLOP/s", flops / (ms * 1e-3) * 1e-9);
  return b;
}
std::string gbps(double bytes, double ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f GB/s", bytes / (ms * 1e-3) * 1e-9);
  return b;
}

std::mt19937_64 rng_for(const std::string& what) { return std::mt19937_64(seed_of(what)); }

#define TG_CALL3(name, dt, ...)                                                                \
  (dt == Dt::F32    ? shipped_##name##_f32(__VA_ARGS__)                                        \
   : dt == Dt::F16  ? shipped_##name##_f16(__VA_ARGS__)                                        \
                    : shipped_##name##_bf16(__VA_ARGS__))
#define TG_QUERY3(name, dt, ...)                                                               \
  (dt == Dt::F32    ? shipped_##name##_f32_query(__VA_ARGS__)                                  \
   : dt == Dt::F16  ? shipped_##name##_f16_query(__VA_ARGS__)                                  \
                    : shipped_##name##_bf16_query(__VA_ARGS__))

// The generated prototypes are typed (float*, tg_f16*, tg_bf16*); one void* adapter per type.
struct P {
  void* p;
  operator float*() const { return static_cast<float*>(p); }
  operator uint16_t*() const { return static_cast<uint16_t*>(p); }
};

void gemm(Dt dt, int64_t M, int64_t N, int64_t K, bool gelu) {
  auto rng = rng_for(std::string("verify_all gemm") + dt_name(dt));
  GuardedBuffer A(dt, M * K), B(dt, K * N), bias(dt, N), C(dt, M * N);
  auto a = fill_random(A, rng), b = fill_random(B, rng), bi = fill_random(bias, rng);
  tg_selection sel{};
  tg_status st;
  double ms;
  std::vector<double> ref;
  if (gelu) {
    TG_QUERY3(gemm_bias_gelu, dt, nullptr, P{A.data()}, P{B.data()}, P{bias.data()}, P{C.data()},
              M, N, K, &sel);
    ms = time_ms([&] { return TG_CALL3(gemm_bias_gelu, dt, nullptr, P{A.data()}, P{B.data()},
                                       P{bias.data()}, P{C.data()}, M, N, K); }, st);
    ref = ref::gemm_bias_gelu(a, b, bi, M, N, K);
  } else {
    TG_QUERY3(gemm, dt, nullptr, P{A.data()}, P{B.data()}, P{C.data()}, M, N, K, &sel);
    ms = time_ms([&] { return TG_CALL3(gemm, dt, nullptr, P{A.data()}, P{B.data()}, P{C.data()},
                                       M, N, K); }, st);
    ref = ref::gemm(a, b, M, N, K);
  }
  auto e = compare(C.values(), ref);
  row(gelu ? "gemm_bias_gelu" : "gemm", dt, std::to_string(M) + "x" + std::to_string(N) + "x" +
      std::to_string(K), sel, st, e, tolerance(dt, K), ms, gflops(2.0 * M * N * K, ms));
}

// gemm_fp8: FP8 A [M, K] and B [N, K] (codes uniform among |x| in [2^-4, 4]), per-tensor
// scales, bf16 C. Passes if every element is within the sound bound of Numeric.h
// fp8_gemm_bound and the normwise error within the bf16 rule (the table shows the latter).
void gemm_fp8(Dt dt, int64_t M, int64_t N, int64_t K) {
  auto rng = rng_for(std::string("verify_all gemm_fp8") + dt_name(dt));
  GuardedBuffer A(dt, M * K), B(dt, N * K), C(Dt::BF16, M * N);
  auto a = fill_random_fp8(A, rng), b = fill_random_fp8(B, rng);
  const float sa = 0.37f, sb = 2.5f;
  tg_selection sel{};
  tg_status st;
  const bool e4m3 = dt == Dt::E4M3;
  auto* pa = static_cast<const uint8_t*>(A.data());
  auto* pb = static_cast<const uint8_t*>(B.data());
  auto* pc = static_cast<tg_bf16*>(C.data());
  if (e4m3)
    shipped_gemm_fp8_e4m3_query(nullptr, pa, pb, pc, M, N, K, sa, sb, &sel);
  else
    shipped_gemm_fp8_e5m2_query(nullptr, pa, pb, pc, M, N, K, sa, sb, &sel);
  double ms = time_ms([&] { return e4m3 ? shipped_gemm_fp8_e4m3(nullptr, pa, pb, pc, M, N, K, sa, sb)
                                        : shipped_gemm_fp8_e5m2(nullptr, pa, pb, pc, M, N, K, sa, sb); },
                      st);
  auto ref = ref::gemm_fp8(a, b, M, N, K, sa, sb);
  auto absref = ref::gemm_fp8(a, b, M, N, K, sa, sb, true);
  std::vector<double> bound(ref.size());
  for (size_t i = 0; i < ref.size(); ++i)
    bound[i] = fp8_gemm_bound(ref[i], absref[i], K);
  auto got = C.values();
  const bool within_bound = max_bound_ratio(got, ref, bound) <= 1 && C.guards_intact();
  row("gemm_fp8", dt, std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K), sel,
      st, compare(got, ref), tolerance(Dt::BF16, K), ms, gflops(2.0 * M * N * K, ms),
      within_bound);
}

void rows(Dt dt, int64_t M, int64_t N, bool softmax) {
  auto rng = rng_for(std::string("verify_all rows") + dt_name(dt));
  GuardedBuffer X(dt, M * N), W(dt, N), Y(dt, M * N);
  auto x = fill_random(X, rng, -4, 4), w = fill_random(W, rng);
  tg_selection sel{};
  tg_status st;
  double ms;
  std::vector<double> ref;
  const float eps = 1e-5f;
  if (softmax) {
    TG_QUERY3(softmax, dt, nullptr, P{X.data()}, P{Y.data()}, M, N, &sel);
    ms = time_ms([&] { return TG_CALL3(softmax, dt, nullptr, P{X.data()}, P{Y.data()}, M, N); },
                 st);
    ref = ref::softmax(x, M, N);
  } else {
    TG_QUERY3(rmsnorm, dt, nullptr, P{X.data()}, P{W.data()}, P{Y.data()}, M, N, eps, &sel);
    ms = time_ms([&] { return TG_CALL3(rmsnorm, dt, nullptr, P{X.data()}, P{W.data()},
                                       P{Y.data()}, M, N, eps); }, st);
    ref = ref::rmsnorm(x, w, M, N, eps);
  }
  auto e = compare(Y.values(), ref);
  row(softmax ? "softmax" : "rmsnorm", dt, std::to_string(M) + "x" + std::to_string(N), sel, st,
      e, tolerance(dt, N), ms, gbps(2.0 * M * N * dt_bytes(dt), ms));
}

void attention(Dt dt, int64_t B, int64_t H, int64_t S, int64_t D, int causal) {
  auto rng = rng_for(std::string("verify_all attention") + dt_name(dt));
  size_t n = B * H * S * D;
  GuardedBuffer Q(dt, n), K(dt, n), V(dt, n), O(dt, n);
  auto q = fill_random(Q, rng), k = fill_random(K, rng), v = fill_random(V, rng);
  float scale = 1.0f / std::sqrt(static_cast<float>(D));
  tg_selection sel{};
  tg_status st;
  TG_QUERY3(flash_attention_fwd, dt, nullptr, P{Q.data()}, P{K.data()}, P{V.data()},
            P{O.data()}, B, H, S, D, scale, causal, &sel);
  double ms = time_ms([&] { return TG_CALL3(flash_attention_fwd, dt, nullptr, P{Q.data()},
                                            P{K.data()}, P{V.data()}, P{O.data()}, B, H, S, D,
                                            scale, causal); }, st);
  auto ref = ref::flash_attention(q, k, v, B, H, S, D, scale, causal != 0);
  auto e = compare(O.values(), ref);
  double flops = 4.0 * B * H * S * S * D * (causal ? 0.5 : 1.0);
  char shape[64];
  std::snprintf(shape, sizeof shape, "B%lldH%lldS%lldD%lld%s", (long long)B, (long long)H,
                (long long)S, (long long)D, causal ? " causal" : "");
  row("flash_attention_fwd", dt, shape, sel, st, e, tolerance(dt, S), ms, gflops(flops, ms));
}

// decode_attention: B sequences of ragged lengths (one of them 0) over a paged K/V cache whose
// pages are dealt out of order, GQA group G = 8 over Hkv = 2 KV heads, D = 128.
void decode(Dt dt, int64_t page) {
  auto rng = rng_for(std::string("verify_all decode") + dt_name(dt) + std::to_string(page));
  const std::vector<int32_t> lens = {1, 17, 0, 1000, static_cast<int32_t>(page) - 1};
  const int64_t B = static_cast<int64_t>(lens.size()), Hkv = 2, G = 8, D = 128;
  // pages dealt out of order from one shuffled pool with 2 unused pages
  const PagedTable pt = paged_table(lens, page, 2, 0, rng);
  const int64_t MP = pt.MP, NP = pt.NP;
  const std::vector<int32_t>& table = pt.table;
  GuardedBuffer q(dt, B * Hkv * G * D), K(dt, NP * Hkv * page * D), V(dt, NP * Hkv * page * D),
      o(dt, B * Hkv * G * D);
  auto qv = fill_random(q, rng), kv = fill_random(K, rng, -0.5, 0.5), vv = fill_random(V, rng);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  tg_selection sel{};
  tg_status st;
  auto call = [&](tg_selection* s) {
    if (dt == Dt::F16)
      return s ? shipped_decode_attention_f16_query(nullptr, P{q.data()}, P{K.data()}, P{V.data()},
                                                    table.data(), lens.data(), P{o.data()}, B, Hkv,
                                                    G, NP, MP, page, D, scale, s)
               : shipped_decode_attention_f16(nullptr, P{q.data()}, P{K.data()}, P{V.data()},
                                              table.data(), lens.data(), P{o.data()}, B, Hkv, G,
                                              NP, MP, page, D, scale);
    return s ? shipped_decode_attention_bf16_query(nullptr, P{q.data()}, P{K.data()}, P{V.data()},
                                                   table.data(), lens.data(), P{o.data()}, B, Hkv,
                                                   G, NP, MP, page, D, scale, s)
             : shipped_decode_attention_bf16(nullptr, P{q.data()}, P{K.data()}, P{V.data()},
                                             table.data(), lens.data(), P{o.data()}, B, Hkv, G, NP,
                                             MP, page, D, scale);
  };
  call(&sel);
  double ms = time_ms([&] { return call(nullptr); }, st);
  auto ref = ref::decode_attention(qv, kv, vv, table, lens, B, Hkv, G, MP, page, D, scale);
  auto e = compare(o.values(), ref);
  double kv_bytes = 0;
  for (int32_t n : lens)
    kv_bytes += 2.0 * n * Hkv * D * dt_bytes(dt);
  char shape[64];
  std::snprintf(shape, sizeof shape, "B%lldG%lld page %lld", (long long)B, (long long)G,
                (long long)page);
  row("decode_attention", dt, shape, sel, st, e, tolerance(dt, 1000 + D), ms, gbps(kv_bytes, ms),
      o.guards_intact());
}

// mla_decode: DeepSeek-V3's 128 heads of 576 against one shared paged latent cache (V its first
// 512 dims), B sequences of ragged lengths (one of them 0), pages of 64 dealt out of order.
void mla(Dt dt) {
  auto rng = rng_for(std::string("verify_all mla") + dt_name(dt));
  const std::vector<int32_t> lens = {1, 65, 0, 1000, 63};
  const int64_t B = static_cast<int64_t>(lens.size()), H = 128, page = 64, DL = 512, DR = 64;
  const int64_t D = DL + DR;
  // pages dealt out of order from one shuffled pool with 2 unused pages
  const PagedTable pt = paged_table(lens, page, 2, 0, rng);
  const int64_t MP = pt.MP, NP = pt.NP;
  const std::vector<int32_t>& table = pt.table;
  GuardedBuffer q(dt, B * H * D), KV(dt, NP * page * D), o(dt, B * H * DL);
  auto qv = fill_random(q, rng), kvv = fill_random(KV, rng);
  const float scale = 1.0f / std::sqrt(192.0f);
  tg_selection sel{};
  tg_status st;
  auto call = [&](tg_selection* s) {
    if (dt == Dt::F16)
      return s ? shipped_mla_decode_f16_query(nullptr, P{q.data()}, P{KV.data()}, table.data(),
                                              lens.data(), P{o.data()}, B, H, NP, MP, page, DL, DR,
                                              scale, s)
               : shipped_mla_decode_f16(nullptr, P{q.data()}, P{KV.data()}, table.data(),
                                        lens.data(), P{o.data()}, B, H, NP, MP, page, DL, DR, scale);
    return s ? shipped_mla_decode_bf16_query(nullptr, P{q.data()}, P{KV.data()}, table.data(),
                                             lens.data(), P{o.data()}, B, H, NP, MP, page, DL, DR,
                                             scale, s)
             : shipped_mla_decode_bf16(nullptr, P{q.data()}, P{KV.data()}, table.data(),
                                       lens.data(), P{o.data()}, B, H, NP, MP, page, DL, DR, scale);
  };
  call(&sel);
  double ms = time_ms([&] { return call(nullptr); }, st);
  auto ref = ref::mla_decode(qv, kvv, table, lens, B, H, MP, page, DL, DR, scale);
  auto e = compare(o.values(), ref, 1.0);
  // compute-bound on a CPU: 2 H (D + DL) flops per token (the score and the value gemm)
  double flops = 0;
  for (int32_t n : lens)
    flops += 2.0 * H * n * (D + DL);
  char shape[64];
  std::snprintf(shape, sizeof shape, "B%lldH%lld page %lld", (long long)B, (long long)H,
                (long long)page);
  row("mla_decode", dt, shape, sel, st, e, tolerance(dt, 1000 + D), ms, gflops(flops, ms),
      o.guards_intact());
}

// grouped_gemm: E = 6 experts over M = 700 sorted tokens, uneven (two empty, one of 3 rows), 45
// rows past the last offset (not written: they must keep the guard pattern), ragged N and K.
void grouped(int64_t M, int64_t N, int64_t K) {
  const Dt dt = Dt::BF16;
  auto rng = rng_for("verify_all grouped_gemm");
  const std::vector<int32_t> sizes = {0, 300, 3, 0, 222, 130};
  std::vector<int32_t> offs(sizes.size());
  int32_t end = 0;
  for (size_t e = 0; e < sizes.size(); ++e)
    offs[e] = end += sizes[e];
  const int64_t E = static_cast<int64_t>(sizes.size());
  GuardedBuffer A(dt, M * K), W(dt, E * K * N), C(dt, M * N);
  auto av = fill_random(A, rng), wv = fill_random(W, rng);
  tg_selection sel{};
  tg_status st;
  shipped_grouped_gemm_bf16_query(nullptr, P{A.data()}, P{W.data()}, offs.data(), P{C.data()}, M, N,
                                  K, E, &sel);
  double ms = time_ms([&] {
    return shipped_grouped_gemm_bf16(nullptr, P{A.data()}, P{W.data()}, offs.data(), P{C.data()}, M,
                                     N, K, E);
  }, st);
  auto ref = ref::grouped_gemm(av, wv, offs, M, N, K);
  auto got = C.values();
  const size_t n = static_cast<size_t>(end) * N;
  auto e = compare(std::vector<double>(got.begin(), got.begin() + n),
                   std::vector<double>(ref.begin(), ref.begin() + n));
  bool untouched = C.guards_intact();
  auto bytes = C.snapshot();
  for (size_t b = n * dt_bytes(dt); b < bytes.size(); ++b)
    untouched = untouched && bytes[b] == GuardedBuffer::kPattern;
  char shape[64];
  std::snprintf(shape, sizeof shape, "%lldx%lldx%lld E%lld", (long long)M, (long long)N,
                (long long)K, (long long)E);
  row("grouped_gemm", dt, shape, sel, st, e, tolerance(dt, K), ms, gflops(2.0 * end * N * K, ms),
      untouched);
}

// gemm_w4a16: A [M, K] in T, u4 weights [K, N] with scales (and zero points, 0 and 15 among
// them) per group along K; gemm_mxfp4: e2m1 weights [N, K] with e8m0 scales per 32. Each element
// of C must lie within the per-element bound of Numeric.h gemm_bound_ratio (the "rel err"
// column shows error / bound there, the tolerance 1).
void gemm_w4a16(Dt dt, int64_t M, int64_t N, int64_t K, int64_t group, int64_t zp) {
  auto rng = rng_for(std::string("verify_all gemm_w4a16") + dt_name(dt) + std::to_string(M));
  const int64_t G = (K + group - 1) / group;
  std::uniform_int_distribution<int> code(0, 15);
  std::vector<uint8_t> q(static_cast<size_t>(K * N)), z(static_cast<size_t>(G * N));
  for (auto& v : q)
    v = static_cast<uint8_t>(code(rng));
  for (size_t i = 0; i < z.size(); ++i)
    z[i] = i % 3 == 0 ? 0 : i % 3 == 1 ? 15 : static_cast<uint8_t>(code(rng));
  GuardedBuffer A(dt, M * K), S(dt, G * N), C(dt, M * N);
  auto a = fill_random(A, rng), s = fill_random(S, rng, 0.001, 0.1);
  const auto bq = ref::pack_nibbles(q, K, N), zq = ref::pack_nibbles(z, G, N);
  const uint8_t* Z = zp ? zq.data() : nullptr;
  tg_selection sel{};
  tg_status st;
  auto call = [&](tg_selection* o) {
    if (dt == Dt::F16)
      return o ? shipped_gemm_w4a16_f16_query(nullptr, P{A.data()}, bq.data(), P{S.data()}, Z,
                                              P{C.data()}, M, N, K, group, zp, o)
               : shipped_gemm_w4a16_f16(nullptr, P{A.data()}, bq.data(), P{S.data()}, Z,
                                        P{C.data()}, M, N, K, group, zp);
    return o ? shipped_gemm_w4a16_bf16_query(nullptr, P{A.data()}, bq.data(), P{S.data()}, Z,
                                             P{C.data()}, M, N, K, group, zp, o)
             : shipped_gemm_w4a16_bf16(nullptr, P{A.data()}, bq.data(), P{S.data()}, Z,
                                       P{C.data()}, M, N, K, group, zp);
  };
  call(&sel);
  double ms = time_ms([&] { return call(nullptr); }, st);
  auto w = ref::w4a16_weights(q, s, zp ? &z : nullptr, N, K, group);
  for (auto& v : w)
    v = round_to(dt, v);
  ErrorStats e;
  e.rel = gemm_bound_ratio(C.values(), ref::gemm(a, w, M, N, K),
                           ref::gemm(abs_of(a), abs_of(w), M, N, K), dt, K, &e.worst);
  char shape[64];
  std::snprintf(shape, sizeof shape, "%lldx%lldx%lld g%lld%s", (long long)M, (long long)N,
                (long long)K, (long long)group, zp ? " zp" : "");
  row("gemm_w4a16", dt, shape, sel, st, e, 1.0, ms, gflops(2.0 * M * N * K, ms),
      C.guards_intact());
}

void gemm_mxfp4(int64_t M, int64_t N, int64_t K) {
  auto rng = rng_for("verify_all gemm_mxfp4 " + std::to_string(M));
  const int64_t KB = (K + 31) / 32;
  std::uniform_int_distribution<int> code(0, 15), expo(122, 132);
  std::vector<uint8_t> b(static_cast<size_t>(N * K)), E(static_cast<size_t>(N * KB));
  for (auto& v : b)
    v = static_cast<uint8_t>(code(rng));
  for (auto& v : E)
    v = static_cast<uint8_t>(expo(rng));
  GuardedBuffer A(Dt::BF16, M * K), C(Dt::BF16, M * N);
  auto a = fill_random(A, rng);
  const auto bq = ref::pack_nibbles(b, N, K);
  tg_selection sel{};
  tg_status st;
  auto* pa = static_cast<const tg_bf16*>(A.data());
  auto* pc = static_cast<tg_bf16*>(C.data());
  shipped_gemm_mxfp4_bf16_query(nullptr, pa, bq.data(), E.data(), pc, M, N, K, &sel);
  double ms = time_ms([&] { return shipped_gemm_mxfp4_bf16(nullptr, pa, bq.data(), E.data(), pc,
                                                           M, N, K); }, st);
  auto w = ref::mxfp4_weights_kn(b, E, N, K);
  for (auto& v : w)
    v = round_to(Dt::BF16, v);
  ErrorStats e;
  e.rel = gemm_bound_ratio(C.values(), ref::gemm(a, w, M, N, K),
                           ref::gemm(abs_of(a), abs_of(w), M, N, K), Dt::BF16, K, &e.worst);
  row("gemm_mxfp4", Dt::BF16, std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K),
      sel, st, e, 1.0, ms, gflops(2.0 * M * N * K, ms), C.guards_intact());
}

} // namespace

int main() {
  std::printf("tilegen: every shipped kernel x type on this CPU, checked against float64\n\n");
  std::printf("| %-19s | %-4s | %-22s | %-9s | %-8s | %-8s | %-8s | %-14s | %-4s |\n", "kernel",
              "type", "shape", "variant", "rel err", "tol", "ms", "rate", "ok");
  std::printf("|%s|------|%s|-----------|----------|----------|----------|----------------|------|\n",
              std::string(21, '-').c_str(), std::string(24, '-').c_str());
  for (Dt dt : kAllDts) {
    gemm(dt, 513, 1000, 777, false);
    gemm(dt, 513, 1000, 777, true);
    rows(dt, 1000, 4099, true);
    rows(dt, 1000, 4099, false);
    for (int64_t D : {64, 128})
      for (int causal : {0, 1})
        attention(dt, 2, 4, 257, D, causal);
  }
  for (Dt dt : kFp8Dts)
    gemm_fp8(dt, 513, 1000, 777);
  for (Dt dt : {Dt::F16, Dt::BF16})
    for (int64_t page : {16, 64})
      decode(dt, page);
  for (Dt dt : {Dt::F16, Dt::BF16})
    mla(dt);
  grouped(700, 1000, 777);
  for (Dt dt : {Dt::F16, Dt::BF16}) {
    gemm_w4a16(dt, 1, 1000, 777, 128, 0);
    gemm_w4a16(dt, 130, 1000, 777, 64, 1);
  }
  gemm_mxfp4(1, 1000, 778);
  gemm_mxfp4(130, 1000, 778);
  std::printf("\n%s: %d failure(s)\n", g_failures ? "FAILED" : "all verified", g_failures);
  return g_failures ? 1 : 0;
}
