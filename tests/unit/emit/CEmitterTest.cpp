// End-to-end checks of the C backend: hand-built gemm and softmax kernels are instantiated,
// emitted, compiled with the system C compiler into a shared object, loaded with dlopen and
// run against double-precision references at ragged sizes (and empty ones).
#include "emit/Emitter.h"
#include "ir/FloatBits.h"
#include "passes/Pipeline.h"

#include "emit/TestKernels.h"
#include "tilegen/runtime.h"
#include "tilegen/variant.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>

using namespace tilegen;
using namespace tilegen::ir;
using namespace tilegen::testing;

namespace {

struct Variant {
  void* handle = nullptr;
  tg_variant_fn fn = nullptr;
  std::string source;
};

bool cpu_can_run(const Target& t) {
  for (const auto& f : t.runtime_features)
    if (!tg_cpu_has(f.c_str()))
      return false;
  return true;
}

// Instantiates, emits, compiles (warnings are errors) and loads one variant.
Variant build(const Kernel& k, const std::string& target_name, const std::string& tag) {
  Variant v;
  const Target& target = *find_target(target_name);
  std::ostringstream diag_out;
  DiagEngine diag(diag_out);
  auto inst = passes::enumerate_instances(k).at(0);
  auto ik = passes::instantiate(k, inst, target, diag);
  EXPECT_TRUE(ik) << diag_out.str();
  if (!ik)
    return v;
  const std::string fn = "tgv_test__" + tag + "__" + target_name;
  v.source = emit::emit_variant(*ik, target, {fn, "test.yaml"});
  const std::string dir = ::testing::TempDir();
  const std::string c = dir + "/" + fn + ".c", so = dir + "/" + fn + ".so";
  std::ofstream(c) << v.source;
  std::string cmd = std::string(TILEGEN_C_COMPILER) +
                    " -O2 -fopenmp -std=c11 -Wall -Wextra -Werror -shared -fPIC -I " +
                    TILEGEN_SOURCE_DIR "/runtime/include";
  for (const auto& f : target.compile_flags)
    cmd += " " + f;
  cmd += " " + c + " " TILEGEN_SOURCE_DIR "/runtime/src/scratch.c " TILEGEN_SOURCE_DIR
         "/runtime/src/launch.c -o " + so + " -lm -lpthread 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string log;
  char buf[512];
  while (p && fgets(buf, sizeof buf, p))
    log += buf;
  int rc = p ? pclose(p) : -1;
  EXPECT_EQ(rc, 0) << cmd << "\n" << log;
  if (rc != 0)
    return v;
  v.handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_TRUE(v.handle) << dlerror();
  if (v.handle)
    v.fn = reinterpret_cast<tg_variant_fn>(dlsym(v.handle, fn.c_str()));
  EXPECT_TRUE(v.fn);
  return v;
}

// Storage of a tensor of type T (f32 as float, bf16/f16 as bit patterns) holding values that
// are exactly representable in T.
struct Tensor {
  DType t;
  std::vector<float> f;
  std::vector<uint16_t> h;
  Tensor(DType type, size_t n) : t(type) {
    if (t == DType::f32())
      f.assign(n + 1, 0.f); // +1: never a zero-size allocation
    else
      h.assign(n + 1, 0);
  }
  void* data() { return t == DType::f32() ? static_cast<void*>(f.data()) : h.data(); }
  void set(size_t i, float x) {
    if (t == DType::f32())
      f[i] = x;
    else if (t == DType::bf16())
      h[i] = f32_to_bf16_bits(x);
    else
      h[i] = f32_to_f16_bits(x);
  }
  double get(size_t i) const {
    if (t == DType::f32())
      return f[i];
    return t == DType::bf16() ? bf16_bits_to_f32(h[i]) : f16_bits_to_f32(h[i]);
  }
};

double unit_roundoff(DType t) { return t == DType::f32() ? 6e-8 : t == DType::bf16() ? 4e-3 : 5e-4; }

void check_gemm(tg_variant_fn fn, DType T, bool tb, int64_t M, int64_t N, int64_t K, int threads) {
  std::mt19937 rng(static_cast<unsigned>(M * 131 + N * 17 + K));
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  Tensor A(T, M * K), B(T, K * N), C(T, M * N);
  for (int64_t i = 0; i < M * K; ++i)
    A.set(i, dist(rng));
  for (int64_t i = 0; i < K * N; ++i)
    B.set(i, dist(rng));
  for (int64_t i = 0; i < M * N; ++i)
    C.set(i, 123.f); // must be overwritten
  void* tensors[] = {A.data(), B.data(), C.data()};
  int64_t dims[] = {M, N, K};
  tg_variant_args args{tensors, dims, nullptr, nullptr};
  tg_launch launch{sizeof(tg_launch), -1, nullptr, threads};
  ASSERT_EQ(fn(&launch, &args), 0);
  double worst = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double ref = 0, mag = 0;
      for (int64_t k = 0; k < K; ++k) {
        double p = A.get(i * K + k) * (tb ? B.get(j * K + k) : B.get(k * N + j));
        ref += p;
        mag += std::fabs(p);
      }
      // f32 accumulation error grows with K; the output rounds once to T.
      double tol = 2 * K * 6e-8 * mag + unit_roundoff(T) * std::fabs(ref) + 1e-6;
      double err = std::fabs(C.get(i * N + j) - ref);
      worst = std::max(worst, err / tol);
      ASSERT_LE(err, tol) << "C[" << i << "," << j << "] M=" << M << " N=" << N << " K=" << K;
    }
  // Nothing past the end was written (the +1 guard element).
  EXPECT_EQ(C.get(M * N), 0.0);
}

class GemmC : public ::testing::TestWithParam<std::tuple<std::string, std::string, bool>> {};

TEST_P(GemmC, RaggedSizesAgainstDouble) {
  auto [target, type, tb] = GetParam();
  if (!cpu_can_run(*find_target(target)))
    GTEST_SKIP() << "this CPU cannot run " << target;
  DType T = *DType::from_name(type);
  // Small tiles keep the test fast and make ragged edges common.
  Kernel k = make_gemm_kernel(T, tb, {{target, {64}}}, {{target, {64}}}, {{target, {64}}});
  Variant v = build(k, target, type + std::string(tb ? "_nt" : "_nn"));
  ASSERT_TRUE(v.fn);
  const int64_t sizes[][3] = {{1, 1, 1}, {7, 129, 1000}, {129, 7, 129}, {1000, 65, 7},
                              {64, 64, 64}, {130, 129, 65}};
  for (const auto& s : sizes)
    check_gemm(v.fn, T, tb, s[0], s[1], s[2], 2);
  check_gemm(v.fn, T, tb, 129, 129, 129, 1);
  // Empty problems: nothing to do, TG_OK; K = 0 gives zeros.
  check_gemm(v.fn, T, tb, 0, 5, 5, 0);
  check_gemm(v.fn, T, tb, 5, 0, 5, 0);
  check_gemm(v.fn, T, tb, 5, 5, 0, 0);
}

TEST(GemmC, ShippedScheduleOnEveryCTarget) {
  // The default rule's choice (largest tiles), including the heap scratch path.
  for (const char* target : {"c", "c_avx2", "c_avx512"}) {
    if (!cpu_can_run(*find_target(target)))
      continue;
    Variant v = build(make_gemm_kernel(DType::f32()), target, "f32_default");
    ASSERT_TRUE(v.fn);
    check_gemm(v.fn, DType::f32(), false, 300, 257, 513, 2);
    EXPECT_NE(v.source.find("= tg_fma_f32(ar, brow[j], acc[r][j]);"), std::string::npos);
  }
}

TEST(GemmC, TransposedA) {
  // A stored K x M: the micro-kernel broadcasts a[k][i] without packing.
  Kernel k = make_gemm_kernel(DType::f32(), false, {{"c", {64}}}, {{"c", {64}}}, {{"c", {32}}}, true);
  Variant v = build(k, "c", "f32_tn");
  ASSERT_TRUE(v.fn);
  for (int64_t n : {1, 45, 100}) {
    const int64_t M = n, N = n + 3, K = n + 7;
    std::vector<float> A(K * M + 1), B(K * N + 1), C(M * N + 1, 0.f);
    for (size_t i = 0; i < A.size(); ++i)
      A[i] = static_cast<float>((i * 7) % 11) - 5.f;
    for (size_t i = 0; i < B.size(); ++i)
      B[i] = static_cast<float>((i * 3) % 7) - 3.f;
    void* tensors[] = {A.data(), B.data(), C.data()};
    int64_t dims[] = {M, N, K};
    tg_variant_args args{tensors, dims, nullptr, nullptr};
    ASSERT_EQ(v.fn(nullptr, &args), 0);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double ref = 0;
        for (int64_t kk = 0; kk < K; ++kk)
          ref += static_cast<double>(A[kk * M + i]) * B[kk * N + j];
        ASSERT_EQ(C[i * N + j], ref) << i << "," << j; // small integers: exact
      }
  }
}

TEST(MiscC, ReduceDim0AtomicAddGuardedParallel) {
  for (const char* target : {"c", "c_avx512"}) {
    if (!cpu_can_run(*find_target(target)))
      continue;
    Variant v = build(make_misc_kernel(), target, "misc");
    ASSERT_TRUE(v.fn);
    EXPECT_NE(v.source.find("#pragma omp atomic"), std::string::npos);
    for (auto [M, N] : {std::pair<int64_t, int64_t>{37, 45}, {1, 1}, {16, 32}, {100, 3}}) {
      std::vector<float> X(M * N + 1), S(N + 1, 1.f), Y(M * N + 1, -7.f);
      for (int64_t i = 0; i < M * N; ++i)
        X[i] = static_cast<float>((i * 5) % 9) - 4.f;
      S[N] = 0.f;
      Y[M * N] = 0.f;
      void* tensors[] = {X.data(), S.data(), Y.data()};
      int64_t dims[] = {M, N};
      tg_variant_args args{tensors, dims, nullptr, nullptr};
      tg_launch launch{sizeof(tg_launch), -1, nullptr, 2};
      ASSERT_EQ(v.fn(&launch, &args), 0);
      for (int64_t j = 0; j < N; ++j) {
        double ref = 1;
        for (int64_t i = 0; i < M; ++i)
          ref += X[i * N + j];
        EXPECT_EQ(S[j], ref) << target << " S[" << j << "]";
      }
      EXPECT_EQ(S[N], 0.f);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j)
          EXPECT_EQ(Y[i * N + j], X[i * N + j] * 2 + (i % 3 == 0 ? 1 : 0)) << i << "," << j;
      EXPECT_EQ(Y[M * N], 0.f); // writes past the last row/column were dropped
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, GemmC,
                         ::testing::Combine(::testing::Values("c", "c_avx512"),
                                            ::testing::Values("f32", "bf16"),
                                            ::testing::Values(false, true)));

void check_softmax(tg_variant_fn fn, DType T, int64_t M, int64_t N) {
  std::mt19937 rng(static_cast<unsigned>(M * 7 + N));
  std::uniform_real_distribution<float> dist(-8.f, 8.f);
  Tensor X(T, M * N), Y(T, M * N);
  for (int64_t i = 0; i < M * N; ++i)
    X.set(i, dist(rng));
  void* tensors[] = {X.data(), Y.data()};
  int64_t dims[] = {M, N};
  tg_variant_args args{tensors, dims, nullptr, nullptr};
  ASSERT_EQ(fn(nullptr, &args), 0);
  for (int64_t i = 0; i < M; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < N; ++j)
      mx = std::max(mx, X.get(i * N + j));
    for (int64_t j = 0; j < N; ++j)
      sum += std::exp(X.get(i * N + j) - mx);
    for (int64_t j = 0; j < N; ++j) {
      double ref = std::exp(X.get(i * N + j) - mx) / sum;
      double tol = 1e-6 + (unit_roundoff(T) + 1e-5) * ref;
      ASSERT_NEAR(Y.get(i * N + j), ref, tol) << "Y[" << i << "," << j << "] M=" << M << " N=" << N;
    }
  }
  EXPECT_EQ(Y.get(M * N), 0.0);
}

class SoftmaxC : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(SoftmaxC, RaggedSizesAgainstDouble) {
  auto [target, type] = GetParam();
  if (!cpu_can_run(*find_target(target)))
    GTEST_SKIP() << "this CPU cannot run " << target;
  DType T = *DType::from_name(type);
  // BN = 1024 on c: N = 1000 is one ragged block, N = 2500 three.
  Kernel k = make_softmax_kernel(T, {1024});
  Variant v = build(k, target, "softmax_" + type);
  ASSERT_TRUE(v.fn);
  const int64_t sizes[][2] = {{1, 1}, {7, 129}, {129, 1000}, {3, 2500}, {5, 1024}, {0, 7}, {7, 0}};
  for (const auto& s : sizes)
    check_softmax(v.fn, T, s[0], s[1]);
}

// The row max runs in 4 strips of 256 at BN 1024 (emit/COps.cpp emit_reduce_loop): a row's
// one large value in each strip in turn, the other values -inf (exp gives 0 there) or NaN-free
// negatives, must give exactly the one-hot softmax: 1 at the max, 0 elsewhere.
TEST(SoftmaxStrips, MaxInEveryStrip) {
  for (const char* target : {"c", "c_avx512"}) {
    if (!cpu_can_run(*find_target(target)))
      continue;
    Variant v = build(make_softmax_kernel(DType::f32(), {1024}), target, "softmax_strips");
    ASSERT_TRUE(v.fn);
    ASSERT_NE(v.source.find("reduction(max:tg_acc, tg_acc1, tg_acc2, tg_acc3)"), std::string::npos);
    const int64_t M = 8, N = 1024;
    std::vector<float> X(M * N), Y(M * N + 1, 0.f);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        X[i * N + j] = i < 4 ? -INFINITY : -200.f - static_cast<float>(j % 7);
    for (int64_t i = 0; i < M; ++i)
      X[i * N + 256 * (i % 4) + 17 + i] = i < 4 ? 3.f : 500.f; // strip i % 4
    void* tensors[] = {X.data(), Y.data()};
    int64_t dims[] = {M, N};
    tg_variant_args args{tensors, dims, nullptr, nullptr};
    ASSERT_EQ(v.fn(nullptr, &args), 0);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        ASSERT_EQ(Y[i * N + j], j == 256 * (i % 4) + 17 + i ? 1.f : 0.f) << target << " " << i << "," << j;
    EXPECT_EQ(Y[M * N], 0.f);
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, SoftmaxC,
                         ::testing::Combine(::testing::Values("c", "c_avx512"),
                                            ::testing::Values("f32", "bf16", "f16")));

TEST(CEmitter, OutputIsDeterministicAndCommented) {
  const Target& t = *find_target("c_avx512");
  std::ostringstream o;
  DiagEngine diag(o);
  Kernel k = make_softmax_kernel(DType::bf16());
  auto ik = passes::instantiate(k, passes::enumerate_instances(k).at(0), t, diag);
  ASSERT_TRUE(ik);
  std::string a = emit::emit_variant(*ik, t, {"tgv_x", "kernels/softmax.yaml"});
  std::string b = emit::emit_variant(*ik, t, {"tgv_x", "kernels/softmax.yaml"});
  EXPECT_EQ(a, b);
  for (const char* s : {"enum { BM = 4, BN = 2048, threads = 128 };",
                        "/* spec: kernels/softmax.yaml:31 reduce max x dim=1 -> m_blk */",
                        "#pragma omp simd reduction(max:tg_acc, tg_acc1, tg_acc2, tg_acc3)",
                        "int tgv_x(const tg_launch* launch, const tg_variant_args* args)",
                        "static inline uint16_t tg_f32_to_bf16(float f)",
                        "#include \"tilegen/variant.h\""})
    EXPECT_NE(a.find(s), std::string::npos) << s;
}

} // namespace
