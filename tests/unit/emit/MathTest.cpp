// The f32 math helpers printed into C variants (tg_exp_f32, ...; emit/CRuntimeHelpers.cpp):
// their source is compiled with the system C compiler for each C target the CPU runs
// (c: no FMA; c_avx2, c_avx512: FMA + wide vectors), loaded with dlopen and checked
//   - for accuracy in ulp against the double-precision libm result rounded nowhere (glibc's
//     double functions are within 1 double ulp, far below an f32 ulp), over a strided sweep of
//     every f32 bit pattern plus a dense sweep of the range that matters, through a
//     `#pragma omp simd` loop (the vector code kernels run), and through a scalar call;
//   - on special values (+-0, +-inf, NaN, overflow and underflow edges, subnormals);
//   - for vectorization: the batch loops must be reported vectorized by the compiler.
// TG_MATH_EXHAUSTIVE=1 in the environment sweeps all 2^32 inputs (minutes, not for CI).
#include "emit/CRuntimeHelpers.h"
#include "ir/FloatBits.h"
#include "targets/Target.h"
#include "tilegen/runtime.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using tilegen::find_target;
using tilegen::Target;

struct MathFn {
  const char* name;                  // helper tg_<name>_f32
  std::function<double(double)> ref; // double-precision reference
  double max_ulp;                    // documented bound (docs/c-backend.md "Math functions")
  float dense_lo, dense_hi;          // every f32 in this range is tested
};

const std::vector<MathFn>& math_fns() {
  static const std::vector<MathFn> fns = {
      {"exp", [](double x) { return std::exp(x); }, 1.5, -104.0f, 89.0f},
      {"exp2", [](double x) { return std::exp2(x); }, 1.5, -151.0f, 129.0f},
      {"log", [](double x) { return std::log(x); }, 1.5, 0.0f, 4.0f},
      {"log2", [](double x) { return std::log2(x); }, 2.0, 0.0f, 4.0f},
      {"tanh", [](double x) { return std::tanh(x); }, 2.0, -10.0f, 10.0f},
      {"erf", [](double x) { return std::erf(x); }, 3.0, -4.5f, 4.5f},
  };
  return fns;
}

float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Error of y in units of the f32 ulp at the reference value (2^-149 below FLT_MIN).
double ulp_error(float y, double ref) {
  const float ref_f = (float)ref;
  if (std::isnan(ref))
    return std::isnan(y) ? 0.0 : INFINITY;
  if (std::isinf(ref_f) || std::isinf(y)) // overflow must give the same infinity
    return y == ref_f ? 0.0 : INFINITY;
  int e = 0;
  std::frexp(ref, &e); // ref = m 2^e, |m| in [0.5, 1)
  const double ulp = std::ldexp(1.0, std::max(e - 24, -149));
  return std::fabs((double)y - ref) / ulp;
}

using batch_fn = void (*)(const float*, float*, int64_t);
using scalar_fn = float (*)(float);

struct Compiled {
  void* handle = nullptr;
  std::string vec_log;                  // the compiler's vectorization report
  std::map<std::string, int> loop_line; // helper name -> line of its batch loop
};

// The helpers plus, per function, a scalar wrapper and a `#pragma omp simd` batch loop.
std::string test_source(std::map<std::string, int>& loop_line) {
  std::set<std::string> used;
  for (const auto& f : math_fns())
    used.insert(std::string("tg_") + f.name + "_f32");
  used.insert("tg_exp_row_f32"); // the chunked exp of c_exp_rows targets (emit/CExpRows.cpp)
  std::string src = "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n" +
                    tilegen::emit::c_helper_source(used);
  for (const auto& f : math_fns()) {
    const std::string n = f.name, h = "tg_" + n + "_f32";
    src += "float tm_" + n + "(float x) { return " + h + "(x); }\n";
    src += "void tm_" + n + "_n(const float* restrict x, float* restrict y, int64_t n) {\n";
    src += "#pragma omp simd\n";
    loop_line[n] = (int)std::count(src.begin(), src.end(), '\n') + 1;
    src += "  for (int64_t i = 0; i < n; ++i) y[i] = " + h + "(x[i]);\n}\n";
  }
  src += "void tm_exp_row(float* v, int64_t n) { tg_exp_row_f32(v, n); }\n";
  return src;
}

std::string run(const std::string& cmd, int& rc) {
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (p && fgets(buf, sizeof buf, p))
    out += buf;
  rc = p ? pclose(p) : -1;
  return out;
}

Compiled compile(const std::string& target_name) {
  Compiled c;
  const Target& target = *find_target(target_name);
  const std::string src = test_source(c.loop_line);
  const std::string dir = ::testing::TempDir();
  const std::string file = dir + "/tg_math_" + target_name + ".c";
  const std::string so = dir + "/tg_math_" + target_name + ".so";
  std::ofstream(file) << src;
  const std::string cc = TILEGEN_C_COMPILER;
  std::string cmd = cc + " -O3 -fopenmp -std=c11 -Wall -Wextra -Werror -shared -fPIC";
  for (const auto& f : target.compile_flags)
    cmd += " " + f;
  // Vectorization remarks: gcc and clang spell the option differently.
  int rc = 0;
  const bool clang = run(cc + " --version 2>&1", rc).find("clang") != std::string::npos;
  cmd += clang ? " -Rpass=loop-vectorize" : " -fopt-info-vec-optimized";
  cmd += " " + file + " -o " + so + " -lm 2>&1";
  c.vec_log = run(cmd, rc);
  EXPECT_EQ(rc, 0) << cmd << "\n" << c.vec_log;
  if (rc == 0) {
    c.handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    EXPECT_TRUE(c.handle) << dlerror();
  }
  return c;
}

bool cpu_can_run(const Target& t) {
  for (const auto& f : t.runtime_features)
    if (!tg_cpu_has(f.c_str()))
      return false;
  return true;
}

class MathTest : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    const Target* t = find_target(GetParam());
    ASSERT_TRUE(t);
    if (!cpu_can_run(*t))
      GTEST_SKIP() << "this CPU cannot run " << GetParam();
    compiled_ = compile(GetParam());
    ASSERT_TRUE(compiled_.handle);
  }
  void TearDown() override {
    if (compiled_.handle)
      dlclose(compiled_.handle);
  }
  template <class F> F sym(const std::string& n) {
    void* p = dlsym(compiled_.handle, n.c_str());
    EXPECT_TRUE(p) << n;
    return reinterpret_cast<F>(p);
  }
  Compiled compiled_;
};

// tg_exp_row_f32 (16 at a time with vscalefps where AVX-512 is on) gives tg_exp_f32's bits:
// every 61st f32 bit pattern (70 million inputs: both signs, subnormals, infinities, NaNs),
// in rows whose length leaves a scalar tail.
TEST_P(MathTest, ExpRowMatchesScalarBits) {
  auto row = sym<void (*)(float*, int64_t)>("tm_exp_row");
  auto one = sym<scalar_fn>("tm_exp");
  ASSERT_TRUE(row && one);
  std::vector<float> x, v;
  uint64_t mismatches = 0;
  uint32_t first_bad = 0;
  for (uint64_t u = 0; u <= 0xffffffffull;) {
    x.clear();
    for (int i = 0; i < 4093 && u <= 0xffffffffull; ++i, u += 61)
      x.push_back(bits_f32((uint32_t)u));
    v = x;
    row(v.data(), (int64_t)v.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = one(x[i]);
      const bool same = std::isnan(want) ? std::isnan(v[i]) : f32_bits(want) == f32_bits(v[i]);
      if (!same && mismatches++ == 0)
        first_bad = f32_bits(x[i]);
    }
  }
  EXPECT_EQ(mismatches, 0u) << "first at input bits 0x" << std::hex << first_bad;
}

TEST_P(MathTest, BatchLoopsVectorize) {
  if (GetParam() == "c")
    GTEST_SKIP() << "plain c: SSE2 only, the vectorizer may choose not to";
  for (const auto& f : math_fns()) {
    const std::string where =
        "tg_math_" + GetParam() + ".c:" + std::to_string(compiled_.loop_line[f.name]) + ":";
    const size_t at = compiled_.vec_log.find(where);
    EXPECT_NE(at, std::string::npos)
        << f.name << ": loop at " << where << " not reported vectorized:\n"
        << compiled_.vec_log;
  }
}

// Max ulp error over the inputs, through the batch loop and through the scalar call.
struct Sweep {
  double max_ulp = 0;
  float worst_x = 0;
  uint64_t count = 0;
};
void check_inputs(batch_fn batch, scalar_fn scalar, const MathFn& f, const std::vector<float>& x,
                  Sweep& s) {
  std::vector<float> y(x.size());
  batch(x.data(), y.data(), (int64_t)x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = f.ref((double)x[i]);
    double err = ulp_error(y[i], ref);
    if (i % 61 == 0) // scalar path on a subset (same source, other code)
      err = std::max(err, ulp_error(scalar(x[i]), ref));
    if (!(err <= s.max_ulp)) {
      s.max_ulp = err;
      s.worst_x = x[i];
    }
  }
  s.count += x.size();
}

TEST_P(MathTest, AccuracyWithinBound) {
  const bool exhaustive = std::getenv("TG_MATH_EXHAUSTIVE") != nullptr;
  for (const auto& f : math_fns()) {
    auto batch = sym<batch_fn>(std::string("tm_") + f.name + "_n");
    auto scalar = sym<scalar_fn>(std::string("tm_") + f.name);
    ASSERT_TRUE(batch && scalar);
    Sweep s;
    std::vector<float> x;
    auto flush = [&] {
      check_inputs(batch, scalar, f, x, s);
      x.clear();
    };
    // Every bit pattern with a stride (NaNs included), then every f32 of the dense range
    // with a smaller stride (all of them when exhaustive).
    const uint64_t stride = exhaustive ? 1 : 8191;
    for (uint64_t u = 0; u < (1ull << 32); u += stride) {
      x.push_back(bits_f32((uint32_t)u));
      if (x.size() == (1u << 20))
        flush();
    }
    flush();
    if (!exhaustive) {
      for (float v = f.dense_lo; v <= f.dense_hi; v = bits_f32(f32_bits(v) + (v < 0 ? -71 : 71))) {
        x.push_back(v);
        if (x.size() == (1u << 20))
          flush();
        if (v == 0.0f) // from -0 / +0 upwards: step through the subnormals too
          v = bits_f32(1);
      }
      flush();
    }
    std::printf("[ %s ] %-5s max error %.3f ulp at x = %a (%llu inputs)\n", GetParam().c_str(),
                f.name, s.max_ulp, (double)s.worst_x, (unsigned long long)s.count);
    EXPECT_LE(s.max_ulp, f.max_ulp) << f.name << " at x = " << s.worst_x;
  }
}

// Edges of each function: the result must be the f32 rounding of the double reference where
// that is 0, +-1, +-inf or an exact power of two (bit for bit, sign of zero included), NaN
// where the reference is NaN, and within the bound elsewhere.
TEST_P(MathTest, SpecialValues) {
  const float inf = INFINITY, nan = NAN, tiny = bits_f32(1), fmin = FLT_MIN;
  const std::map<std::string, std::vector<float>> cases = {
      {"exp", {0.0f,     -0.0f,  inf,        -inf,      nan,     -nan,       88.72283f, 88.72284f,
               88.7229f, 1e30f,  -87.33655f, -87.3366f, -100.0f, -103.2789f, -103.9f,   -103.98f,
               -104.0f,  -1e30f, tiny,       -tiny,     1e-8f,   1.0f}},
      {"exp2",
       {0.0f, -0.0f, 127.0f, 127.99999f, 128.0f, -126.0f, -126.5f, -140.0f, -149.0f, -149.5f,
        -150.5f, -151.0f, -inf, inf, nan, 1e30f, -1e30f, tiny}},
      {"log",
       {1.0f, 0.0f, -0.0f, -1.0f, -tiny, -inf, inf, nan, tiny, fmin, 0x1.fffffep-127f, FLT_MAX,
        0.70710677f, 0.7071068f, 1.4142135f, 1.4142137f, 2.0f, 0.5f}},
      {"log2",
       {1.0f, 8.0f, 0.125f, tiny, fmin, 0.0f, -0.0f, -2.0f, inf, -inf, nan, FLT_MAX, 0x1p-140f,
        0.70710677f, 1.4142137f}},
      {"tanh",
       {0.0f, -0.0f, inf, -inf, 20.0f, -20.0f, 9.0f, nan, 1e-30f, tiny, -tiny, 0.625f, 0.62499994f,
        -0.625f, 1e30f}},
      {"erf",
       {0.0f, -0.0f, inf, -inf, 10.0f, -10.0f, 3.9f, 4.0f, 4.1f, nan, tiny, -tiny * 8, 0.875f,
        0.87499994f, -0.875f, 1e-30f, 1e30f}},
  };
  for (const auto& f : math_fns()) {
    auto scalar = sym<scalar_fn>(std::string("tm_") + f.name);
    auto batch = sym<batch_fn>(std::string("tm_") + f.name + "_n");
    ASSERT_TRUE(scalar && batch);
    for (float x : cases.at(f.name)) {
      const double ref = f.ref((double)x);
      const float want = (float)ref;
      std::vector<float> xs(37, x), ys(37); // 37: full vectors and a remainder
      batch(xs.data(), ys.data(), (int64_t)xs.size());
      for (float y : {scalar(x), ys[0], ys[36]}) {
        if (std::isnan(want))
          EXPECT_TRUE(std::isnan(y)) << f.name << "(" << x << ") = " << y;
        else if (want == 0.0f || std::isinf(want) || std::fabs(want) == 1.0f || x == 0.0f ||
                 std::ldexp(1.0, std::ilogb(ref)) == ref)
          EXPECT_EQ(f32_bits(y), f32_bits(want))
              << f.name << "(" << std::hexfloat << x << ") = " << y << ", want " << want;
        else
          EXPECT_LE(ulp_error(y, ref), f.max_ulp)
              << f.name << "(" << std::hexfloat << x << ") = " << y << ", want " << want;
      }
    }
  }
}

// Each helper alone carries its dependencies (transitively: erf -> exp -> scale2 -> bits).
TEST(MathHelperSource, EachHelperCompilesAlone) {
  for (const auto& f : math_fns()) {
    const std::string h = std::string("tg_") + f.name + "_f32";
    const std::string file = ::testing::TempDir() + "/tg_math_alone_" + f.name + ".c";
    std::ofstream(file) << "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n"
                        << tilegen::emit::c_helper_source({h}) << "float f(float x) { return " << h
                        << "(x); }\n";
    int rc = 0;
    const std::string log =
        run(std::string(TILEGEN_C_COMPILER) + " -std=c11 -Wall -Wextra -Werror -fsyntax-only " +
                file + " 2>&1",
            rc);
    EXPECT_EQ(rc, 0) << h << ":\n" << log;
  }
}

// The 16-bit float conversions used by loads and stores, per target (plain c: the branch-free
// bit manipulation; c_avx2/c_avx512: F16C through _Float16): bit for bit what the generator
// folds constants with (ir/FloatBits.cpp), NaN for NaN; and their loops vectorize.
TEST_P(MathTest, HalfConversionsMatchTheGenerator) {
  const Target& target = *find_target(GetParam());
  const std::string dir = ::testing::TempDir();
  const std::string file = dir + "/tg_conv_" + GetParam() + ".c";
  const std::string so = dir + "/tg_conv_" + GetParam() + ".so";
  std::string src = "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n" +
                    tilegen::emit::c_helper_source({"tg_f16_to_f32", "tg_f32_to_f16",
                                                    "tg_bf16_to_f32", "tg_f32_to_bf16"});
  std::map<std::string, int> line;
  for (const std::string t : {"f16", "bf16"}) {
    src += "void to_f32_" + t + "(const uint16_t* restrict h, float* restrict f, int64_t n) {\n"
           "#pragma omp simd\n";
    line["to_f32_" + t] = (int)std::count(src.begin(), src.end(), '\n') + 1;
    src += "  for (int64_t i = 0; i < n; ++i) f[i] = tg_" + t + "_to_f32(h[i]);\n}\n";
    src += "void from_f32_" + t + "(const float* restrict f, uint16_t* restrict h, int64_t n) {\n"
           "#pragma omp simd\n";
    line["from_f32_" + t] = (int)std::count(src.begin(), src.end(), '\n') + 1;
    src += "  for (int64_t i = 0; i < n; ++i) h[i] = tg_f32_to_" + t + "(f[i]);\n}\n";
  }
  std::ofstream(file) << src;
  const std::string cc = TILEGEN_C_COMPILER;
  int rc = 0;
  const bool clang = run(cc + " --version 2>&1", rc).find("clang") != std::string::npos;
  std::string cmd = cc + " -O3 -fopenmp -std=c11 -Wall -Wextra -Werror -shared -fPIC";
  for (const auto& f : target.compile_flags)
    cmd += " " + f;
  cmd += clang ? " -Rpass=loop-vectorize" : " -fopt-info-vec-optimized";
  const std::string log = run(cmd + " " + file + " -o " + so + " 2>&1", rc);
  ASSERT_EQ(rc, 0) << cmd << "\n" << log;
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(h) << dlerror();
  if (GetParam() != "c") // SSE2 only: the vectorizer may decline
    for (const auto& [fn, l] : line)
      EXPECT_NE(log.find("tg_conv_" + GetParam() + ".c:" + std::to_string(l) + ":"), std::string::npos)
          << fn << " not vectorized:\n" << log;
  using to_fn = void (*)(const uint16_t*, float*, int64_t);
  using from_fn = void (*)(const float*, uint16_t*, int64_t);
  for (const bool bf : {false, true}) {
    const std::string t = bf ? "bf16" : "f16";
    auto to = reinterpret_cast<to_fn>(dlsym(h, ("to_f32_" + t).c_str()));
    auto from = reinterpret_cast<from_fn>(dlsym(h, ("from_f32_" + t).c_str()));
    ASSERT_TRUE(to && from);
    // Every 16-bit pattern to f32.
    std::vector<uint16_t> hs(65536);
    std::vector<float> fs(65536);
    for (uint32_t i = 0; i < 65536; ++i)
      hs[i] = (uint16_t)i;
    to(hs.data(), fs.data(), 65536);
    int bad = 0;
    for (uint32_t i = 0; i < 65536 && bad < 5; ++i) {
      const float want = bf ? tilegen::ir::bf16_bits_to_f32(hs[i]) : tilegen::ir::f16_bits_to_f32(hs[i]);
      const bool ok = std::isnan(want) ? std::isnan(fs[i]) : f32_bits(fs[i]) == f32_bits(want);
      bad += !ok;
      EXPECT_TRUE(ok) << t << " 0x" << std::hex << i << " -> " << fs[i] << ", want " << want;
    }
    // f32 to 16 bits: a strided sweep of all f32 patterns plus every 16-bit value and the
    // midpoints next to it (ties round to even), both signs.
    std::vector<float> xs;
    for (uint64_t u = 0; u < (1ull << 32); u += 65521)
      xs.push_back(bits_f32((uint32_t)u));
    for (uint32_t i = 0; i < 65536; ++i) {
      const uint32_t b = f32_bits(fs[i]);
      for (int d = -2; d <= 2; ++d)
        xs.push_back(bits_f32(b + (uint32_t)(d * (bf ? 0x8000 : 0x1000))));
    }
    std::vector<uint16_t> ys(xs.size());
    from(xs.data(), ys.data(), (int64_t)xs.size());
    bad = 0;
    for (size_t i = 0; i < xs.size() && bad < 5; ++i) {
      const uint16_t want = bf ? tilegen::ir::f32_to_bf16_bits(xs[i]) : tilegen::ir::f32_to_f16_bits(xs[i]);
      const uint16_t exp_mask = bf ? 0x7f80 : 0x7c00, man_mask = bf ? 0x7f : 0x3ff;
      const bool want_nan = (want & exp_mask) == exp_mask && (want & man_mask);
      const bool got_nan = (ys[i] & exp_mask) == exp_mask && (ys[i] & man_mask);
      const bool ok = want_nan ? got_nan : ys[i] == want;
      bad += !ok;
      EXPECT_TRUE(ok) << t << " " << std::hexfloat << xs[i] << " -> 0x" << std::hex << ys[i]
                      << ", want 0x" << want;
    }
  }
  dlclose(h);
}

INSTANTIATE_TEST_SUITE_P(Targets, MathTest, ::testing::Values("c", "c_avx2", "c_avx512"),
                         [](const auto& info) { return info.param; });

} // namespace
