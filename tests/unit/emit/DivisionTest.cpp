// Integer `/`, `%` and cdiv in generated C for every divisor (docs/spec.md "Operators and
// typing"): a kernel dividing tensor elements by tensor elements (divisors unknown until run
// time, so the guarded helpers) is generated for target c, compiled with the system C compiler
// and run on pairs that include a zero divisor, -1 and the most negative value of i8, i32 and
// i64. Before the guarded helpers, the call died of SIGFPE. A divisor that is a constant > 0
// (`/ BN`) keeps the plain helpers.
#include "emit/Emitter.h"
#include "passes/Pipeline.h"
#include "spec/Frontend.h"

#include "tilegen/variant.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

using namespace tilegen;

namespace {

const char* kSpec = R"Y(kernel: divs
summary: Q = A / B, R = A % B, C = cdiv(A, B), D = A / 4 + A % 8 elementwise
types: {T: [i64, i32, i8]}
params: {N: dim}
tensors:
  A: {type: T, shape: [N]}
  B: {type: T, shape: [N]}
  Q: {type: T, shape: [N], access: write}
  R: {type: T, shape: [N], access: write}
  C: {type: i64, shape: [N], access: write}
  D: {type: T, shape: [N], access: write}
schedule:
  BN: [16]
grid: {bx: "cdiv(N, BN)"}
body:
  - parallel: {i: BN}
    body:
      - "let n = bx * BN + i"
      - "Q[n] = A[n] / B[n]"
      - "R[n] = A[n] % B[n]"
      - "C[n] = cdiv(i64(A[n]), i64(B[n]))"
      - "D[n] = A[n] / 4 + A[n] % 8"
)Y";

// The language's definitions in 128 bits, the quotient wrapped to the type (INT_MIN / -1).
__int128 floor_div(__int128 a, __int128 b) {
  if (b == 0)
    return 0;
  __int128 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__int128 floor_mod(__int128 a, __int128 b) { return b == 0 ? a : a - b * floor_div(a, b); }
__int128 ceil_div(__int128 a, __int128 b) { return b == 0 ? 0 : -floor_div(-a, b); }
template <typename T> T wrap(__int128 v) {
  using U = typename std::make_unsigned<T>::type;
  return static_cast<T>(static_cast<U>(static_cast<unsigned __int128>(v)));
}

struct Built {
  std::string source;
  tg_variant_fn fn = nullptr;
};

// Lowers kSpec, instantiates type binding `which` for target c, emits, compiles, loads.
Built build(size_t which, const std::string& tag) {
  Built b;
  std::ostringstream diag_out;
  DiagEngine diag(diag_out);
  auto ks = spec::load_kernels_from_text("divs.yaml", kSpec, diag);
  EXPECT_TRUE(ks) << diag_out.str();
  if (!ks)
    return b;
  const ir::Kernel& k = ks->at(which);
  const Target& target = *find_target("c");
  auto ik = passes::instantiate(k, passes::enumerate_instances(k).at(0), target, diag);
  EXPECT_TRUE(ik) << diag_out.str();
  if (!ik)
    return b;
  const std::string fn = "tgv_div__" + tag;
  b.source = emit::emit_variant(*ik, target, {fn, "divs.yaml"});
  const std::string dir = ::testing::TempDir(), c = dir + "/" + fn + ".c", so = dir + "/" + fn + ".so";
  std::ofstream(c) << b.source;
  const std::string cmd = std::string(TILEGEN_C_COMPILER) +
                          " -O2 -fopenmp -std=c11 -Wall -Wextra -Werror -shared -fPIC -I " TILEGEN_SOURCE_DIR
                          "/runtime/include " + c + " " TILEGEN_SOURCE_DIR "/runtime/src/scratch.c " TILEGEN_SOURCE_DIR
                          "/runtime/src/launch.c -o " + so + " -lm -lpthread 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string log;
  char buf[512];
  while (p && fgets(buf, sizeof buf, p))
    log += buf;
  const int rc = p ? pclose(p) : -1;
  EXPECT_EQ(rc, 0) << cmd << "\n" << log;
  if (rc != 0)
    return b;
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_TRUE(h) << dlerror();
  if (h)
    b.fn = reinterpret_cast<tg_variant_fn>(dlsym(h, fn.c_str()));
  EXPECT_TRUE(b.fn);
  return b;
}

template <typename T> void check_type(size_t which, const char* tag, const char* helper_suffix) {
  SCOPED_TRACE(tag);
  Built b = build(which, tag);
  ASSERT_TRUE(b.fn);
  // Non-constant divisors take the helpers for every divisor; `/ 4` and `% 8` (i64: the
  // literals are i64) the plain ones.
  for (const char* h : {"floordiv_any", "floormod_any"})
    EXPECT_NE(b.source.find(std::string("tg_") + h + "_" + helper_suffix + "("), std::string::npos) << h;
  for (const char* h : {"tg_cdiv_any_i64(", ", 4) + tg_floormod_i64(", ", 8)"})
    EXPECT_NE(b.source.find(h), std::string::npos) << h;
  const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  const T vals[] = {lo, static_cast<T>(lo + 1), -7, -2, -1, 0, 1, 2, 3, 7, static_cast<T>(hi - 1), hi};
  std::vector<T> A, B;
  for (T a : vals)
    for (T d : vals) {
      A.push_back(a);
      B.push_back(d);
    }
  const int64_t n = static_cast<int64_t>(A.size());
  std::vector<T> Q(n), R(n), D(n);
  std::vector<int64_t> C(n);
  void* tensors[] = {A.data(), B.data(), Q.data(), R.data(), C.data(), D.data()};
  int64_t dims[] = {n};
  tg_variant_args args{tensors, dims, nullptr, nullptr};
  ASSERT_EQ(b.fn(nullptr, &args), 0);
  for (int64_t i = 0; i < n; ++i) {
    const __int128 a = A[i], d = B[i];
    EXPECT_EQ(Q[i], wrap<T>(floor_div(a, d))) << +A[i] << " / " << +B[i];
    EXPECT_EQ(R[i], wrap<T>(floor_mod(a, d))) << +A[i] << " % " << +B[i];
    EXPECT_EQ(C[i], wrap<int64_t>(ceil_div(a, d))) << "cdiv(" << +A[i] << ", " << +B[i] << ")";
    EXPECT_EQ(D[i], wrap<T>(floor_div(a, 4) + floor_mod(a, 8))) << +A[i];
  }
}

TEST(Division, EveryDivisorI64) { check_type<int64_t>(0, "i64", "i64"); }
TEST(Division, EveryDivisorI32) { check_type<int32_t>(1, "i32", "i32"); }
TEST(Division, EveryDivisorI8) { check_type<int8_t>(2, "i8", "i8"); }

} // namespace
