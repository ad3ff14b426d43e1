// The FP8 conversions outside the generator, against the independent model of the formats
// (tests/unit/ir/Fp8Reference.h), with the same inputs as the FloatBits test:
//   - the C helpers printed into variants (emit/CRuntimeHelpers.cpp: tg_e4m3_to_f32,
//     tg_e5m2_to_f32, tg_f32_to_e4m3, tg_f32_to_e5m2, tg_round_e4m3, tg_round_e5m2), compiled
//     with the system C compiler and each C target's flags (the kernels' loads decode inside
//     `#pragma omp simd` loops, so the batch functions are such loops), loaded with dlopen;
//   - the runtime's public conversions (tg_e4m3_to_float, tg_float_to_e4m3, ...; launch.c).
#include "emit/CRuntimeHelpers.h"
#include "ir/Fp8Reference.h"
#include "targets/Target.h"
#include "tilegen/runtime.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace {

using tilegen::find_target;
using tilegen::Target;

const fp8ref::Format kFormats[] = {fp8ref::kE4M3, fp8ref::kE5M2};

std::string run(const std::string& cmd, int& rc) {
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (p && fgets(buf, sizeof buf, p))
    out += buf;
  rc = p ? pclose(p) : -1;
  return out;
}

bool cpu_can_run(const Target& t) {
  for (const auto& f : t.runtime_features)
    if (!tg_cpu_has(f.c_str()))
      return false;
  return true;
}

// Batch functions over the helpers: decode, encode, round, per format.
std::string test_source() {
  std::string src = "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n" +
                    tilegen::emit::c_helper_source({"tg_e4m3_to_f32", "tg_e5m2_to_f32",
                                                    "tg_f32_to_e4m3", "tg_f32_to_e5m2",
                                                    "tg_round_e4m3", "tg_round_e5m2"});
  for (const std::string t : {"e4m3", "e5m2"}) {
    src += "void dec_" + t + "(const uint8_t* restrict b, float* restrict f, int64_t n) {\n"
           "#pragma omp simd\n  for (int64_t i = 0; i < n; ++i) f[i] = tg_" + t + "_to_f32(b[i]);\n}\n";
    src += "void enc_" + t + "(const float* restrict f, uint8_t* restrict b, int64_t n) {\n"
           "#pragma omp simd\n  for (int64_t i = 0; i < n; ++i) b[i] = tg_f32_to_" + t + "(f[i]);\n}\n";
    src += "void rnd_" + t + "(const float* restrict x, float* restrict y, int64_t n) {\n"
           "#pragma omp simd\n  for (int64_t i = 0; i < n; ++i) y[i] = tg_round_" + t + "(x[i]);\n}\n";
  }
  return src;
}

using dec_fn = void (*)(const uint8_t*, float*, int64_t);
using enc_fn = void (*)(const float*, uint8_t*, int64_t);
using rnd_fn = void (*)(const float*, float*, int64_t);

// One implementation of the three conversions of one format, as batch calls.
struct Impl {
  std::function<void(const uint8_t*, float*, int64_t)> dec;
  std::function<void(const float*, uint8_t*, int64_t)> enc;
  std::function<void(const float*, float*, int64_t)> rnd; // empty: not provided
};

// Every code decoded; every finite code encoded back; the encoder and the rounding on the
// reference inputs. Returns the number of mismatches (each of the first few reported).
int check_impl(const fp8ref::Format& fmt, const Impl& impl, const std::string& what) {
  int bad = 0;
  auto report = [&](const std::string& msg) {
    if (++bad <= 10)
      ADD_FAILURE() << what << " " << fmt.name << ": " << msg;
  };
  std::vector<uint8_t> codes(256);
  for (int c = 0; c < 256; ++c)
    codes[c] = static_cast<uint8_t>(c);
  std::vector<float> vals(256);
  impl.dec(codes.data(), vals.data(), 256);
  char buf[160];
  for (int c = 0; c < 256; ++c) {
    const double want = fp8ref::decode(fmt, codes[c]);
    const bool ok = std::isnan(want) ? std::isnan(vals[c])
                                     : fp8ref::f32_bits(vals[c]) ==
                                           fp8ref::f32_bits(static_cast<float>(want));
    if (!ok) {
      std::snprintf(buf, sizeof buf, "decode(0x%02x) = %a, want %a", c, vals[c], want);
      report(buf);
    }
  }
  std::vector<uint8_t> back(256);
  impl.enc(vals.data(), back.data(), 256);
  for (int c = 0; c < 256; ++c) {
    const uint8_t code = codes[c];
    const uint8_t want = fp8ref::is_nan_code(fmt, code) ? 0
                         : std::isinf(fp8ref::decode(fmt, code))
                             ? static_cast<uint8_t>((code & 0x80) | fp8ref::max_finite_code(fmt))
                             : code;
    const bool ok = fp8ref::is_nan_code(fmt, code) ? fp8ref::is_nan_code(fmt, back[c])
                                                   : back[c] == want;
    if (!ok) {
      std::snprintf(buf, sizeof buf, "encode(decode(0x%02x)) = 0x%02x, want 0x%02x", c, back[c],
                    want);
      report(buf);
    }
  }
  const std::vector<float> xs = fp8ref::encoder_inputs(fmt);
  std::vector<uint8_t> enc(xs.size());
  impl.enc(xs.data(), enc.data(), static_cast<int64_t>(xs.size()));
  std::vector<float> rnd(xs.size());
  if (impl.rnd)
    impl.rnd(xs.data(), rnd.data(), static_cast<int64_t>(xs.size()));
  for (size_t i = 0; i < xs.size(); ++i) {
    const uint8_t want = fp8ref::encode(fmt, xs[i]);
    const bool ok = std::isnan(xs[i]) ? fp8ref::is_nan_code(fmt, enc[i]) : enc[i] == want;
    if (!ok) {
      std::snprintf(buf, sizeof buf, "encode(%a) = 0x%02x, want 0x%02x", xs[i], enc[i], want);
      report(buf);
    }
    if (impl.rnd) {
      const double rw = fp8ref::decode(fmt, want);
      const bool rok = std::isnan(xs[i]) ? std::isnan(rnd[i])
                                         : fp8ref::f32_bits(rnd[i]) ==
                                               fp8ref::f32_bits(static_cast<float>(rw));
      if (!rok) {
        std::snprintf(buf, sizeof buf, "round(%a) = %a, want %a", xs[i], rnd[i], rw);
        report(buf);
      }
    }
  }
  return bad;
}

class Fp8CHelperTest : public ::testing::TestWithParam<std::string> {};

TEST_P(Fp8CHelperTest, MatchTheReference) {
  const Target* target = find_target(GetParam());
  ASSERT_TRUE(target);
  if (!cpu_can_run(*target))
    GTEST_SKIP() << "this CPU cannot run " << GetParam();
  const std::string dir = ::testing::TempDir();
  const std::string file = dir + "/tg_fp8_" + GetParam() + ".c";
  const std::string so = dir + "/tg_fp8_" + GetParam() + ".so";
  std::ofstream(file) << test_source();
  std::string cmd = std::string(TILEGEN_C_COMPILER) +
                    " -O3 -fopenmp -std=c11 -Wall -Wextra -Werror -shared -fPIC";
  for (const auto& f : target->compile_flags)
    cmd += " " + f;
  int rc = 0;
  const std::string log = run(cmd + " " + file + " -o " + so + " -lm 2>&1", rc);
  ASSERT_EQ(rc, 0) << cmd << "\n" << log;
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(h) << dlerror();
  for (const auto& fmt : kFormats) {
    const std::string t = fmt.name;
    auto dec = reinterpret_cast<dec_fn>(dlsym(h, ("dec_" + t).c_str()));
    auto enc = reinterpret_cast<enc_fn>(dlsym(h, ("enc_" + t).c_str()));
    auto rnd = reinterpret_cast<rnd_fn>(dlsym(h, ("rnd_" + t).c_str()));
    ASSERT_TRUE(dec && enc && rnd);
    EXPECT_EQ(check_impl(fmt, Impl{dec, enc, rnd}, "C helpers (" + GetParam() + ")"), 0);
  }
  dlclose(h);
}

INSTANTIATE_TEST_SUITE_P(CTargets, Fp8CHelperTest, ::testing::Values("c", "c_avx2", "c_avx512"));

// Each FP8 helper alone carries its dependencies.
TEST(Fp8CHelperSource, EachHelperCompilesAlone) {
  for (const std::string h : {"tg_e4m3_to_f32", "tg_e5m2_to_f32", "tg_f32_to_e4m3",
                              "tg_f32_to_e5m2", "tg_round_e4m3", "tg_round_e5m2"}) {
    const bool from_f32 = h.rfind("tg_f32_to_", 0) == 0;
    const std::string file = ::testing::TempDir() + "/tg_fp8_alone_" + h + ".c";
    std::ofstream(file) << "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n"
                        << tilegen::emit::c_helper_source({h})
                        << (from_f32 ? "uint8_t f(float x)" : h.find("round") != std::string::npos
                                                                  ? "float f(float x)"
                                                                  : "float f(uint8_t x)")
                        << " { return " << h << "(x); }\n";
    int rc = 0;
    const std::string log =
        run(std::string(TILEGEN_C_COMPILER) + " -std=c11 -Wall -Wextra -Werror -fsyntax-only " +
                file + " 2>&1",
            rc);
    EXPECT_EQ(rc, 0) << h << ":\n" << log;
  }
}

// The runtime's conversions (what callers use to prepare FP8 tensors).
TEST(Fp8Runtime, ConversionsMatchTheReference) {
  const Impl e4m3{[](const uint8_t* b, float* f, int64_t n) {
                    for (int64_t i = 0; i < n; ++i)
                      f[i] = tg_e4m3_to_float(b[i]);
                  },
                  [](const float* f, uint8_t* b, int64_t n) {
                    for (int64_t i = 0; i < n; ++i)
                      b[i] = tg_float_to_e4m3(f[i]);
                  },
                  {}};
  const Impl e5m2{[](const uint8_t* b, float* f, int64_t n) {
                    for (int64_t i = 0; i < n; ++i)
                      f[i] = tg_e5m2_to_float(b[i]);
                  },
                  [](const float* f, uint8_t* b, int64_t n) {
                    for (int64_t i = 0; i < n; ++i)
                      b[i] = tg_float_to_e5m2(f[i]);
                  },
                  {}};
  EXPECT_EQ(check_impl(fp8ref::kE4M3, e4m3, "runtime"), 0);
  EXPECT_EQ(check_impl(fp8ref::kE5M2, e5m2, "runtime"), 0);
}

} // namespace
