// tgh_check: every shipped kernel x type of the library `tgh` (generated for the portable HIP
// target `hip` and `c`, bench/hip/run_device.sh) run on GPU 0 through the generated dispatch
// code and the HIP runtime layer (runtime/src/hip.c), on HIP's NVIDIA platform, against the
// float64 references of tests/kernels (Reference.cpp), on ragged shapes, with 16-byte-aligned
// tensors (tg_kernel_16) and with every tensor one element off (tg_kernel_0); decode_attention
// also over a paged cache with pages out of order (ragged lengths incl. 0, G above the tile's
// rows, MQA), and mla_decode likewise (H above the tile's heads); grouped_gemm over uneven and
// empty experts (rows past the last offset must stay unwritten); gemm_w4a16 (groups 32/128,
// with and without zero points) and gemm_mxfp4 (e8m0 edge scales) held to the per-element
// bound of tests/kernels/DequantGemmTest (gemm_bound_ratio). Each call is
// first asked (_query) which variant it runs: anything but the `hip` one is a failure (the
// point is to run the HIP sources). Device buffers carry 256 guard bytes on each side, checked
// after every call; calls go on a created stream and the program (not the library)
// synchronizes. Small shapes, so that compute-sanitizer's slowdown stays in seconds.
//
//   tgh_check [--quick] [--cpu] [kernel]   exit 0 = all ok, 1 = a mismatch or error, 2 = no device
//   --quick: the first shape of each kernel x type (both alignments), for the sanitizers
#include "tgh.h"

#include "Numeric.h"
#include "Reference.h"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace tgtest;

namespace {

int g_fail = 0, g_runs = 0;
// --cpu (a dry run without a GPU): host buffers, launch.device = -1, the `c` variant expected;
// checks the harness, its shapes and tolerances against the library's C variants.
bool g_cpu = false;
const char* expected_target() { return g_cpu ? "c" : "hip"; }

#define CK(expr)                                                                                 \
  do {                                                                                           \
    cudaError_t e_ = (expr);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(e_)); \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)

constexpr size_t kGuard = 256;

// A device pointer that converts to the typed pointer of whichever entry point takes it.
struct AnyPtr {
  void* p;
  template <class T> operator T*() const { return static_cast<T*>(p); }
};

// Device memory for n elements of `elem` bytes at an offset of `off` elements past a 256-byte
// boundary, between guard bytes of 0xFF.
struct DevBytes {
  size_t elem, off;
  unsigned char* base = nullptr;
  size_t bytes;
  DevBytes(size_t elem_bytes, size_t n, size_t off_elems) : elem(elem_bytes), off(off_elems) {
    bytes = n * elem;
    if (g_cpu) {
      base = static_cast<unsigned char*>(std::malloc(bytes + 2 * kGuard + 64));
      std::memset(base, 0xFF, bytes + 2 * kGuard + 64);
      return;
    }
    CK(cudaMalloc(&base, bytes + 2 * kGuard + 64));
    CK(cudaMemset(base, 0xFF, bytes + 2 * kGuard + 64));
  }
  ~DevBytes() {
    if (g_cpu)
      std::free(base);
    else
      cudaFree(base);
  }
  DevBytes(const DevBytes&) = delete;
  DevBytes& operator=(const DevBytes&) = delete;
  AnyPtr ptr() { return {base + kGuard + off * elem}; }
  void copy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
    if (g_cpu)
      std::memcpy(dst, src, n);
    else
      CK(cudaMemcpy(dst, src, n, kind));
  }
  bool guards_intact() {
    std::vector<unsigned char> all(bytes + 2 * kGuard + 64);
    copy(all.data(), base, all.size(), cudaMemcpyDeviceToHost);
    const size_t lo = kGuard + off * elem, hi = lo + bytes;
    for (size_t i = 0; i < all.size(); ++i)
      if ((i < lo || i >= hi) && all[i] != 0xFF)
        return false;
    return true;
  }
};

// A host tensor (GuardedBuffer, rounded values) mirrored on the device (DevBytes).
struct DevTensor : DevBytes {
  GuardedBuffer host;
  DevTensor(Dt dt, size_t n, size_t off_elems) : DevBytes(dt_bytes(dt), n, off_elems), host(dt, n) {}
  void upload() { copy(ptr(), host.data(), bytes, cudaMemcpyHostToDevice); }
  void download() { copy(host.data(), ptr(), bytes, cudaMemcpyDeviceToHost); }
};

// An integer tensor uploaded once: i32 (decode_attention's and mla_decode's block table and
// lengths, grouped_gemm's offsets) or u8 (the dequant GEMMs' packed codes, zero points and e8m0
// scales); `off_elems` of its own elements off.
struct DevInts : DevBytes {
  template <class T>
  DevInts(const std::vector<T>& v, size_t off_elems) : DevBytes(sizeof(T), v.size(), off_elems) {
    copy(ptr(), v.data(), bytes, cudaMemcpyHostToDevice);
  }
};

cudaStream_t g_stream;

struct Case {
  std::string kernel;
  Dt dt;
  std::vector<int64_t> dims;
  int flag = 0;
};

// Runs one case at one alignment; prints one line.
void run_case(const Case& c, size_t off) {
  tg_launch launch{};
  launch.device = g_cpu ? -1 : 0;
  launch.stream = g_cpu ? nullptr : g_stream;
  const Dt dt = c.dt;
  const auto& d = c.dims;
  std::mt19937_64 rng(seed_of(c.kernel + dt_name(dt) + std::to_string(d[0]) + std::to_string(off)));
  std::vector<std::unique_ptr<DevTensor>> t;
  auto add = [&](Dt tdt, size_t n) {
    t.push_back(std::make_unique<DevTensor>(tdt, n, off));
    return t.back().get();
  };
  std::vector<double> ref, got;
  double scale = 0;
  int64_t L = 1;
  tg_selection sel{};
  tg_status st = TG_OK, qs = TG_OK;
  std::string what = c.kernel + " " + dt_name(dt) + " [";
  for (size_t i = 0; i < d.size(); ++i)
    what += (i ? "," : "") + std::to_string(d[i]);
  what += "]" + std::string(c.flag ? " causal" : "") + (off ? " off-by-one" : " aligned");
  double bound_ratio = -1;
  std::vector<std::unique_ptr<DevInts>> ints; // i32 tensors, checked for guards like t
  size_t zero_from = 0, zero_to = 0;          // outputs that must be exactly 0
  bool zeros_ok = true;
  // the dequant GEMMs: the per-element bound of gemm_bound_ratio (S = sum |a w| in absref)
  // instead of the tolerance on the max error
  std::vector<double> absref;
  int64_t bound_k = 0;
  // grouped_gemm: only the first cmp_n outputs are compared; the rest must keep the 0xFF
  // bytes DevBytes filled them with (not written)
  size_t cmp_n = SIZE_MAX;
  // a kernel's further checks on the output values: an empty string if they hold
  std::function<std::string(const std::vector<double>&)> extra;

#define CALL(fn, ...)                                                                            \
  do {                                                                                           \
    qs = fn##_query(&launch, __VA_ARGS__, &sel);                                                 \
    st = qs == TG_OK && std::string(sel.target) == expected_target() ? fn(&launch, __VA_ARGS__) : TG_ERR_NO_VARIANT; \
  } while (0)
#define DISPATCH3(name, ...)                                                                     \
  do {                                                                                           \
    if (dt == Dt::F32) CALL(tgh_##name##_f32, __VA_ARGS__);                                      \
    else if (dt == Dt::F16) CALL(tgh_##name##_f16, __VA_ARGS__);                                 \
    else CALL(tgh_##name##_bf16, __VA_ARGS__);                                                   \
  } while (0)

  if (c.kernel == "gemm" || c.kernel == "gemm_bias_gelu") {
    const int64_t M = d[0], N = d[1], K = d[2];
    L = K;
    auto *A = add(dt, M * K), *B = add(dt, K * N);
    auto a = fill_random(A->host, rng), b = fill_random(B->host, rng);
    DevTensor* bias = nullptr;
    std::vector<double> bv;
    if (c.kernel == "gemm_bias_gelu") {
      bias = add(dt, N);
      bv = fill_random(bias->host, rng);
    }
    auto* C = add(dt, M * N);
    for (auto& x : t)
      x->upload();
    if (!bias) {
      ref = ref::gemm(a, b, M, N, K);
      DISPATCH3(gemm, A->ptr(), B->ptr(), C->ptr(), M, N, K);
    } else {
      ref = ref::gemm_bias_gelu(a, b, bv, M, N, K);
      DISPATCH3(gemm_bias_gelu, A->ptr(), B->ptr(), bias->ptr(), C->ptr(), M, N, K);
    }
  } else if (c.kernel == "softmax" || c.kernel == "rmsnorm") {
    const int64_t M = d[0], N = d[1];
    L = N;
    auto* X = add(dt, M * N);
    auto x = fill_random(X->host, rng);
    DevTensor* W = nullptr;
    std::vector<double> w;
    if (c.kernel == "rmsnorm") {
      W = add(dt, N);
      w = fill_random(W->host, rng);
    }
    auto* Y = add(dt, M * N);
    for (auto& p : t)
      p->upload();
    if (!W) {
      ref = ref::softmax(x, M, N);
      DISPATCH3(softmax, X->ptr(), Y->ptr(), M, N);
    } else {
      ref = ref::rmsnorm(x, w, M, N, 1e-6);
      DISPATCH3(rmsnorm, X->ptr(), W->ptr(), Y->ptr(), M, N, 1e-6f);
    }
  } else if (c.kernel == "flash_attention_fwd") {
    const int64_t Bn = d[0], H = d[1], S = d[2], D = d[3];
    L = S + D; // as tests/kernels: the softmax over S keys and the dot products over D
    const size_t n = size_t(Bn * H * S * D);
    auto *Q = add(dt, n), *K = add(dt, n), *V = add(dt, n), *O = add(dt, n);
    auto q = fill_random(Q->host, rng), k = fill_random(K->host, rng), v = fill_random(V->host, rng);
    for (auto& p : t)
      p->upload();
    const float sm = float(1.0 / std::sqrt(double(D)));
    ref = ref::flash_attention(q, k, v, Bn, H, S, D, sm, c.flag != 0);
    scale = 0;
    for (double x : v)
      scale = std::max(scale, std::fabs(x));
    DISPATCH3(flash_attention_fwd, Q->ptr(), K->ptr(), V->ptr(), O->ptr(), Bn, H, S, D, sm, c.flag);
  } else if (c.kernel == "gemm_fp8") {
    const int64_t M = d[0], N = d[1], K = d[2];
    L = K;
    auto *A = add(dt, M * K), *B = add(dt, N * K);
    auto a = fill_random_fp8(A->host, rng), b = fill_random_fp8(B->host, rng);
    auto* C = add(Dt::BF16, M * N);
    for (auto& p : t)
      p->upload();
    const float sa = 0.75f, sb = 2.5f;
    ref = ref::gemm_fp8(a, b, M, N, K, sa, sb);
    std::vector<double> absref = ref::gemm_fp8(a, b, M, N, K, sa, sb, true), bound(ref.size());
    for (size_t i = 0; i < ref.size(); ++i)
      bound[i] = fp8_gemm_bound(ref[i], absref[i], K);
    if (dt == Dt::E4M3)
      CALL(tgh_gemm_fp8_e4m3, (const tg_e4m3*)A->ptr(), (const tg_e4m3*)B->ptr(), (tg_bf16*)C->ptr(), M, N, K, sa, sb);
    else
      CALL(tgh_gemm_fp8_e5m2, (const tg_e5m2*)A->ptr(), (const tg_e5m2*)B->ptr(), (tg_bf16*)C->ptr(), M, N, K, sa, sb);
    if (st == TG_OK) {
      if (!g_cpu)
        CK(cudaStreamSynchronize(g_stream));
      C->download();
      bound_ratio = max_bound_ratio(C->host.values(), ref, bound);
    }
  } else if (c.kernel == "decode_attention") {
    // dims: Hkv, G, PAGE; D = 128 (the spec's only value). B = 8 sequences of ragged lengths
    // (0, 1, PAGE-1, PAGE+1, 1000, ...; 8 so that seq_lens passes the 16-byte kernel's check
    // when aligned), their pages dealt out of order and interleaved from one shuffled pool with
    // 3 pages no sequence uses; table columns past a sequence's pages hold 2^30 (never read).
    const int64_t Hkv = d[0], G = d[1], page = d[2], D = 128;
    const std::vector<int32_t> lens = {1, int32_t(page) - 1, 0, int32_t(page) + 1, 1000,
                                       2 * int32_t(page), 3, int32_t(page)};
    const int64_t B = int64_t(lens.size());
    const PagedTable pt = paged_table(lens, page, 3, 1 << 30, rng);
    const int64_t MP = pt.MP, NP = pt.NP;
    const std::vector<int32_t>& table = pt.table;
    L = 1000 + D; // as tests/kernels: f32 sums over the keys and over D, p rounded to T
    scale = 1.0;  // |V| < 1: errors relative to 1
    const size_t nq = size_t(B * Hkv * G * D), nkv = size_t(NP * Hkv * page * D);
    auto *Q = add(dt, nq), *K = add(dt, nkv), *V = add(dt, nkv), *O = add(dt, nq);
    auto q = fill_random(Q->host, rng, -1.0, 1.0), k = fill_random(K->host, rng, -0.5, 0.5),
         v = fill_random(V->host, rng, -1.0, 1.0);
    for (auto& p : t)
      p->upload();
    ints.push_back(std::make_unique<DevInts>(table, off));
    ints.push_back(std::make_unique<DevInts>(lens, off));
    const AnyPtr Tb = ints[0]->ptr(), Ln = ints[1]->ptr();
    const float sm = float(1.0 / std::sqrt(double(D)) * 4.0); // scores of a few units
    ref = ref::decode_attention(q, k, v, table, lens, B, Hkv, G, MP, page, D, sm);
    zero_from = size_t(2 * Hkv * G * D), zero_to = size_t(3 * Hkv * G * D); // sequence 2: length 0
    what = c.kernel + " " + dt_name(dt) + " [Hkv " + std::to_string(Hkv) + ", G " + std::to_string(G) +
           ", page " + std::to_string(page) + ", B " + std::to_string(B) + ", NP " + std::to_string(NP) + "]" +
           (off ? " off-by-one" : " aligned");
    if (dt == Dt::F16)
      CALL(tgh_decode_attention_f16, Q->ptr(), K->ptr(), V->ptr(), Tb, Ln, O->ptr(), B, Hkv, G, NP, MP, page, D, sm);
    else
      CALL(tgh_decode_attention_bf16, Q->ptr(), K->ptr(), V->ptr(), Tb, Ln, O->ptr(), B, Hkv, G, NP, MP, page, D, sm);
  } else if (c.kernel == "mla_decode") {
    // dims: H (query heads). PAGE 64, DL 512, DR 64 (the spec's only values). B = 8 sequences
    // of ragged lengths (0, 1, 63, 65, 200, ...; 8 so that seq_lens passes the 16-byte kernel's
    // check when aligned) over pages dealt out of order from one shuffled pool with 3 unused
    // pages, as decode_attention; table columns past a sequence's pages hold 2^30.
    const int64_t H = d[0], page = 64, DL = 512, DR = 64, D = DL + DR;
    const std::vector<int32_t> lens = {1, 63, 0, 65, 200, 64, 3, 128};
    const int64_t B = int64_t(lens.size());
    const PagedTable pt = paged_table(lens, page, 3, 1 << 30, rng);
    const int64_t MP = pt.MP, NP = pt.NP;
    const std::vector<int32_t>& table = pt.table;
    L = 200 + D; // as tests/kernels/MlaDecodeTest: the longest sequence plus D, relative to |V| < 1
    scale = 1.0;
    auto *Q = add(dt, size_t(B * H * D)), *KV = add(dt, size_t(NP * page * D)), *O = add(dt, size_t(B * H * DL));
    auto q = fill_random(Q->host, rng, -1.0, 1.0), kv = fill_random(KV->host, rng, -1.0, 1.0);
    for (auto& p : t)
      p->upload();
    ints.push_back(std::make_unique<DevInts>(table, off));
    ints.push_back(std::make_unique<DevInts>(lens, off));
    const AnyPtr Tb = ints[0]->ptr(), Ln = ints[1]->ptr();
    const float sm = float(2.0 / std::sqrt(double(D))); // scores of a few units
    ref = ref::mla_decode(q, kv, table, lens, B, H, MP, page, DL, DR, sm);
    zero_from = size_t(2 * H * DL), zero_to = size_t(3 * H * DL); // sequence 2: length 0
    what = c.kernel + " " + dt_name(dt) + " [H " + std::to_string(H) + ", B " + std::to_string(B) +
           ", NP " + std::to_string(NP) + "]" + (off ? " off-by-one" : " aligned");
    if (dt == Dt::F16)
      CALL(tgh_mla_decode_f16, Q->ptr(), KV->ptr(), Tb, Ln, O->ptr(), B, H, NP, MP, page, DL, DR, sm);
    else
      CALL(tgh_mla_decode_bf16, Q->ptr(), KV->ptr(), Tb, Ln, O->ptr(), B, H, NP, MP, page, DL, DR, sm);
  } else if (c.kernel == "grouped_gemm") {
    // dims: M, N, K, then the rows of each expert (E = dims - 3; their sum <= M: the rows past
    // the last offset are not written)
    const int64_t M = d[0], N = d[1], K = d[2], E = int64_t(d.size()) - 3;
    std::vector<int32_t> offs(static_cast<size_t>(E));
    for (int64_t e = 0; e < E; ++e)
      offs[size_t(e)] = int32_t((e ? offs[size_t(e - 1)] : 0) + d[size_t(3 + e)]);
    const int64_t end = offs.back();
    L = K;
    auto *A = add(dt, size_t(M * K)), *W = add(dt, size_t(E * K * N)), *C = add(dt, size_t(M * N));
    auto a = fill_random(A->host, rng), w = fill_random(W->host, rng);
    A->upload();
    W->upload(); // not C: its bytes stay 0xFF (a NaN) until the kernel writes them
    ints.push_back(std::make_unique<DevInts>(offs, off));
    ref = ref::grouped_gemm(a, w, offs, M, N, K);
    cmp_n = size_t(end * N);
    extra = [cmp_n, C, N](const std::vector<double>&) -> std::string {
      const auto bytes = C->host.snapshot();
      for (size_t b = cmp_n * 2; b < bytes.size(); ++b)
        if (bytes[b] != 0xFF)
          return "row " + std::to_string(b / 2 / size_t(N)) + " past the last offset was written";
      return "";
    };
    what = c.kernel + " " + dt_name(dt) + " [M " + std::to_string(M) + ", N " + std::to_string(N) + ", K " +
           std::to_string(K) + "; groups";
    for (int64_t e = 0; e < E; ++e)
      what += " " + std::to_string(d[size_t(3 + e)]);
    what += std::string("]") + (off ? " off-by-one" : " aligned");
    CALL(tgh_grouped_gemm_bf16, A->ptr(), W->ptr(), ints[0]->ptr(), C->ptr(), M, N, K, E);
  } else if (c.kernel == "gemm_w4a16") {
    // dims: M, N, K, GROUP, ZP. Codes uniform in 0..15; zero points 0 and 15 (the extremes) in
    // two thirds of the columns, random in the rest; scales in [0.001, 0.1]. Bound as
    // tests/kernels/DequantGemmTest: the weights rounded to T once, then gemm_bound_ratio.
    const int64_t M = d[0], N = d[1], K = d[2], group = d[3], zp = d[4], G = (K + group - 1) / group;
    std::uniform_int_distribution<int> code(0, 15);
    std::vector<uint8_t> q(size_t(K * N)), z(size_t(G * N));
    for (auto& v : q)
      v = uint8_t(code(rng));
    for (int64_t g = 0; g < G; ++g)
      for (int64_t n = 0; n < N; ++n)
        z[size_t(g * N + n)] = n % 3 == 0 ? 0 : n % 3 == 1 ? 15 : uint8_t(code(rng));
    auto *A = add(dt, size_t(M * K)), *S = add(dt, size_t(G * N)), *C = add(dt, size_t(M * N));
    auto a = fill_random(A->host, rng, -1.0, 1.0), sv = fill_random(S->host, rng, 0.001, 0.1);
    for (auto& p : t)
      p->upload();
    ints.push_back(std::make_unique<DevInts>(ref::pack_nibbles(q, K, N), off));
    if (zp)
      ints.push_back(std::make_unique<DevInts>(ref::pack_nibbles(z, G, N), off));
    const uint8_t* Bq = ints[0]->ptr();
    const uint8_t* Z = zp ? static_cast<const uint8_t*>(ints[1]->ptr()) : nullptr;
    auto w = ref::w4a16_weights(q, sv, zp ? &z : nullptr, N, K, group);
    for (auto& v : w)
      v = round_to(dt, v);
    ref = ref::gemm(a, w, M, N, K);
    absref = ref::gemm(abs_of(a), abs_of(w), M, N, K);
    bound_k = K;
    what = c.kernel + " " + dt_name(dt) + " [M " + std::to_string(M) + ", N " + std::to_string(N) + ", K " +
           std::to_string(K) + ", group " + std::to_string(group) + (zp ? ", zero points" : ", symmetric") +
           "]" + (off ? " off-by-one" : " aligned");
    if (dt == Dt::F16)
      CALL(tgh_gemm_w4a16_f16, A->ptr(), Bq, S->ptr(), Z, C->ptr(), M, N, K, group, zp);
    else
      CALL(tgh_gemm_w4a16_bf16, A->ptr(), Bq, S->ptr(), Z, C->ptr(), M, N, K, group, zp);
  } else if (c.kernel == "gemm_mxfp4") {
    // dims: M, N, K, edges. e2m1 codes uniform, e8m0 scales 124..130 (2^-3 .. 2^3); with edges,
    // as tests/kernels/DequantGemmTest, by column n % 4: 0: every scale 0 (2^-127: subnormal
    // weights and outputs); 1: block 1's scale 254 (2^127) over weights <= 1.5 and A's block-1
    // columns scaled by 2^-120; 2: block 2's scale 255 (NaN: the column's outputs are NaN).
    const int64_t M = d[0], N = d[1], K = d[2], KB = (K + 31) / 32;
    const bool edges = d[3] != 0;
    std::uniform_int_distribution<int> code(0, 15), small(0, 3), expo(124, 130);
    std::vector<uint8_t> b(size_t(N * K)), e(size_t(N * KB));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) {
        const bool big = edges && n % 4 == 1 && k / 32 == 1;
        b[size_t(n * K + k)] = uint8_t(big ? small(rng) | (code(rng) & 8) : code(rng));
      }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t kb = 0; kb < KB; ++kb) {
        uint8_t v = uint8_t(expo(rng));
        if (edges && n % 4 == 0)
          v = 0;
        else if (edges && n % 4 == 1 && kb == 1)
          v = 254;
        else if (edges && n % 4 == 2 && kb == 2)
          v = 255;
        e[size_t(n * KB + kb)] = v;
      }
    auto *A = add(Dt::BF16, size_t(M * K)), *C = add(Dt::BF16, size_t(M * N));
    auto a = fill_random(A->host, rng, -1.0, 1.0);
    if (edges)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t k = 32; k < 64 && k < K; ++k) {
          const size_t i = size_t(m * K + k);
          A->host.set(i, std::ldexp(a[i], -120));
          a[i] = A->host.get(i); // as stored (bf16 subnormals round)
        }
    for (auto& p : t)
      p->upload();
    ints.push_back(std::make_unique<DevInts>(ref::pack_nibbles(b, N, K), off));
    ints.push_back(std::make_unique<DevInts>(e, off));
    auto w = ref::mxfp4_weights_kn(b, e, N, K);
    for (auto& v : w)
      v = std::isnan(v) ? v : round_to(Dt::BF16, v);
    ref = ref::gemm(a, w, M, N, K);
    absref = ref::gemm(abs_of(a), abs_of(w), M, N, K);
    bound_k = K;
    if (edges) // the edges are exercised: tiny (not flushed) outputs in the e8m0-0 columns, NaN columns
      extra = [M, N](const std::vector<double>& got) -> std::string {
        size_t tiny = 0, nan = 0;
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n) {
            const double v = got[size_t(m * N + n)];
            tiny += n % 4 == 0 && v != 0 && std::fabs(v) < std::ldexp(1.0, -110);
            nan += n % 4 == 2 && std::isnan(v);
          }
        if (tiny < size_t(M * ((N + 3) / 4) * 95 / 100)) // a sum may cancel
          return std::to_string(tiny) + " tiny outputs in the e8m0-0 columns";
        if (nan != size_t(M * ((N + 1) / 4)))
          return std::to_string(nan) + " NaN outputs in the e8m0-255 columns";
        return "";
      };
    what = c.kernel + " " + dt_name(dt) + " [M " + std::to_string(M) + ", N " + std::to_string(N) + ", K " +
           std::to_string(K) + (edges ? ", scale edges" : "") + "]" + (off ? " off-by-one" : " aligned");
    CALL(tgh_gemm_mxfp4_bf16, A->ptr(), ints[0]->ptr(), ints[1]->ptr(), C->ptr(), M, N, K);
  }
  ++g_runs;
  const char* result = "ok";
  ErrorStats s;
  double tol = 0;
  bool guards = true;
  std::string extra_msg;
  if (qs != TG_OK || std::string(sel.target) != expected_target()) {
    result = "FAIL (not the expected variant)";
  } else if (st != TG_OK) {
    result = "FAIL (status)";
  } else {
    if (!g_cpu) {
      CK(cudaStreamSynchronize(g_stream));
      CK(cudaGetLastError());
    }
    DevTensor* out = t.back().get();
    out->download();
    for (auto& p : t)
      guards = guards && p->guards_intact();
    for (auto& p : ints)
      guards = guards && p->guards_intact();
    const auto vals = out->host.values();
    if (!absref.empty()) {
      size_t worst = 0;
      bound_ratio = gemm_bound_ratio(vals, ref, absref, dt, bound_k, &worst);
    } else if (cmp_n < vals.size()) {
      s = compare(std::vector<double>(vals.begin(), vals.begin() + cmp_n),
                  std::vector<double>(ref.begin(), ref.begin() + cmp_n), scale);
    } else {
      s = compare(vals, ref, scale);
    }
    for (size_t i = zero_from; i < zero_to; ++i)
      zeros_ok = zeros_ok && vals[i] == 0.0;
    tol = absref.empty() ? tolerance(c.kernel == "gemm_fp8" ? Dt::BF16 : dt, L) : 0;
    extra_msg = extra ? extra(vals) : "";
    if (!guards)
      result = "FAIL (guard bytes written)";
    else if ((absref.empty() && (s.nonfinite || s.rel > tol)) || bound_ratio > 1)
      result = "FAIL (numerics)";
    else if (!zeros_ok)
      result = "FAIL (a length-0 sequence's output is not 0)";
    else if (!extra_msg.empty()) {
      extra_msg = "FAIL (" + extra_msg + ")";
      result = extra_msg.c_str();
    }
  }
  if (std::strncmp(result, "ok", 2) != 0)
    ++g_fail;
  std::printf("[hip-nvidia] %-52s %-22s rel %.3e tol %.3e%s %s (status %d/%d) %s\n", what.c_str(),
              sel.variant[0] ? sel.variant + std::strlen(sel.variant) - std::min<size_t>(22, std::strlen(sel.variant)) : "-",
              s.rel, tol, bound_ratio >= 0 ? (" bound " + std::to_string(bound_ratio)).c_str() : "",
              result, int(qs), int(st), sel.reason);
}

} // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (std::strcmp(argv[i], "--cpu") == 0)
      g_cpu = true;
    else
      only = argv[i];
  }
  int n = 0;
  if (!g_cpu && (cudaGetDeviceCount(&n) != cudaSuccess || n == 0)) {
    std::fprintf(stderr, "tgh_check: no CUDA device\n");
    return 2;
  }
  if (!g_cpu)
    CK(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking));
  // Ragged shapes: no extent a multiple of a tile, rows of odd lengths (no 16-byte chunks), and
  // one shape whose rows are whole chunks (the aligned run takes tg_kernel_16 there).
  std::vector<Case> cases;
  for (Dt dt : kAllDts) {
    for (auto mnk : std::vector<std::vector<int64_t>>{{67, 45, 37}, {128, 136, 64}, {1, 77, 300}, {130, 8, 24}}) {
      cases.push_back({"gemm", dt, mnk});
      cases.push_back({"gemm_bias_gelu", dt, mnk});
    }
    for (auto mn : std::vector<std::vector<int64_t>>{{5, 1}, {33, 1000}, {7, 4096}, {3, 4099}}) {
      cases.push_back({"softmax", dt, mn});
      cases.push_back({"rmsnorm", dt, mn});
    }
    for (int causal : {0, 1})
      for (auto bhsd : std::vector<std::vector<int64_t>>{{1, 2, 77, 64}, {2, 1, 130, 128}})
        cases.push_back({"flash_attention_fwd", dt, bhsd, causal});
  }
  for (Dt dt : kFp8Dts)
    for (auto mnk : std::vector<std::vector<int64_t>>{{67, 45, 48}, {16, 136, 128}, {130, 64, 80}})
      cases.push_back({"gemm_fp8", dt, mnk});
  // decode_attention {Hkv, G, PAGE}: GQA (G = 8), MQA (one KV head), G = 1, and G = 20, above
  // the HIP tile's 16 query heads (two tiles along x, the second ragged; 3 on C's 8-row tiles)
  for (Dt dt : {Dt::F16, Dt::BF16})
    for (int64_t page : {16, 64})
      for (auto hg : std::vector<std::vector<int64_t>>{{2, 8}, {1, 8}, {3, 1}, {1, 20}})
        cases.push_back({"decode_attention", dt, {hg[0], hg[1], page}});
  // mla_decode {H}: H = 20 above the HIP tile's 16 heads (two tiles, the second ragged), 3
  // (one ragged tile), 16 (one whole tile); 8 sequences of lengths 0, 1, 63, 65, ... (above)
  for (Dt dt : {Dt::F16, Dt::BF16})
    for (int64_t h : {20, 3, 16})
      cases.push_back({"mla_decode", dt, {h}});
  // grouped_gemm {M, N, K, rows of each expert...}: uneven groups with empty experts first, in
  // the middle and last and rows past the last offset; several groups in one tile with N, K
  // multiples of 8 (the aligned run takes tg_kernel_16); groups of 1..10 rows with K over
  // several k tiles; every expert empty (nothing is written)
  for (auto g : std::vector<std::vector<int64_t>>{{300, 200, 100, 0, 130, 3, 0, 150, 0},
                                                  {157, 96, 40, 5, 0, 7, 64, 1, 0, 60, 20},
                                                  {55, 130, 300, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10},
                                                  {40, 64, 64, 0, 0, 0}})
    cases.push_back({"grouped_gemm", Dt::BF16, g});
  // gemm_w4a16 {M, N, K, GROUP, ZP}: ragged M, N, K (K not a multiple of the group), groups 32
  // and 128, with and without zero points, both shape classes (decode: M <= 16); N a multiple
  // of 32 and K of 8 in two (tg_kernel_16 when aligned, one with Z, one without)
  for (Dt dt : {Dt::F16, Dt::BF16})
    for (auto w : std::vector<std::vector<int64_t>>{{5, 70, 300, 128, 1}, {1, 64, 256, 128, 0},
                                                    {33, 130, 129, 32, 1}, {130, 96, 200, 32, 1},
                                                    {7, 2, 32, 32, 0}, {20, 66, 260, 128, 0}})
      cases.push_back({"gemm_w4a16", dt, w});
  // gemm_mxfp4 {M, N, K, edges}: ragged M, N, K (K not a multiple of the 32-weight block), the
  // e8m0 edges (0, 254, 255) in both shape classes, and K = 512, N = 64 (one 16-byte row of
  // scales: tg_kernel_16 when aligned) in both classes
  for (auto m : std::vector<std::vector<int64_t>>{{5, 67, 302, 0}, {16, 130, 96, 1}, {33, 200, 130, 1},
                                                  {6, 64, 512, 0}, {130, 64, 512, 0}})
    cases.push_back({"gemm_mxfp4", Dt::BF16, m});
  // --quick: the first shape of each kernel x type (decode_attention: and page size, one
  // variant each), both alignments
  std::set<std::string> seen;
  for (const Case& c : cases) {
    if (!only.empty() && c.kernel != only)
      continue;
    const std::string key = c.kernel + dt_name(c.dt) + (c.kernel == "decode_attention" ? std::to_string(c.dims[2]) : "");
    if (quick && !seen.insert(key).second)
      continue;
    for (size_t off : {size_t(0), size_t(1)})
      run_case(c, off);
  }
  std::printf("tgh_check: %d runs, %d failures\n", g_runs, g_fail);
  return g_fail ? 1 : 0;
}
