// The row stores of memory-bound kernels (emit/CRuntimeHelpers.cpp: tg_stream_row_f32,
// tg_stream_row_f16, tg_stream_row_bf16, and the pieces of 16 tg_put16_f32, tg_put16_f16), compiled with each C target's flags and loaded with
// dlopen, against the generator's own conversions (ir/FloatBits.cpp, which the element helpers
// tg_f32_to_f16 / tg_f32_to_bf16 match bit for bit): the vector paths (vcvtps2ph with its NaN
// fix-up on c_avx2 and c_avx512) must give the same bits as the scalar rules for every kind of
// value, through streaming (nt = 1) and cached (nt = 0) stores, at every alignment of the
// destination and row lengths that leave heads and tails.
#include "emit/CRuntimeHelpers.h"
#include "ir/FloatBits.h"
#include "targets/Target.h"
#include "tilegen/runtime.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

namespace {

using tilegen::find_target;
using tilegen::Target;

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

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Inputs: every kind of f32 the conversions distinguish, then a strided sweep of all patterns.
std::vector<float> inputs() {
  std::vector<uint32_t> u = {
      0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, // zeros, infinities
      0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, // quiet and signaling NaNs
      0x7fffffffu, 0xffffffffu, 0x7fa12345u, 0xffbfe000u, 0x7fc02000u, 0x7f802000u,
      0x00000001u, 0x807fffffu, 0x00800000u,              // f32 subnormals, smallest normal
      0x33000000u, 0x33000001u, 0xb3800000u, 0x33c00000u, // around half of f16's smallest subnormal
      0x387fc000u, 0x387fe000u, 0x38800000u,              // f16 subnormal/normal boundary
      0x477fe000u, 0x477fefffu, 0x477ff000u, 0x477ff001u, // 65504, up to the overflow midpoint
      0x47800000u, 0xc7800000u, 0x7f7fffffu, 0xff7fffffu, // 65536, f32 max
      0x3f800000u, 0x3f801000u, 0x3f803000u, 0x3f808000u, 0x3f808001u, 0x3f818000u,
      0x3f7f8000u, 0x3f7f8001u, 0x3f7e8000u, 0x3f7fff80u}; // f16 and bf16 ties and near ties
  for (uint64_t b = 0; b <= 0xffffffffu; b += 4093)
    u.push_back(static_cast<uint32_t>(b));
  std::vector<float> f;
  for (uint32_t x : u)
    f.push_back(from_bits(x));
  return f;
}

using row_fn = void (*)(uint16_t*, const float*, int64_t, int);
using row32_fn = void (*)(float*, const float*, int64_t, int);

class StreamRowTest : public ::testing::TestWithParam<std::string> {};

TEST_P(StreamRowTest, MatchesTheScalarConversions) {
  const Target* target = find_target(GetParam());
  ASSERT_TRUE(target);
  if (!cpu_can_run(*target))
    GTEST_SKIP() << "this CPU cannot run " << GetParam();
  const std::string dir = ::testing::TempDir();
  const std::string file = dir + "/tg_stream_row_" + GetParam() + ".c";
  const std::string so = dir + "/tg_stream_row_" + GetParam() + ".so";
  std::ofstream(file) << "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n"
                      << tilegen::emit::c_helper_source(
                             {"tg_stream_row_f32", "tg_stream_row_f16", "tg_stream_row_bf16",
                              "tg_put16_f32", "tg_put16_f16", "tg_stream_fence"})
                      // pf: the source row itself (a prefetch is a hint: the values must not
                      // depend on it)
                      << "void row_f16(uint16_t* d, const float* s, int64_t n, int nt) {\n"
                         "  tg_stream_row_f16(d, s, n, nt, s);\n  tg_stream_fence();\n}\n"
                         "void row_bf16(uint16_t* d, const float* s, int64_t n, int nt) {\n"
                         "  tg_stream_row_bf16(d, s, n, nt, s);\n  tg_stream_fence();\n}\n"
                         "void row_f32(float* d, const float* s, int64_t n, int nt) {\n"
                         "  tg_stream_row_f32(d, s, n, nt, s);\n  tg_stream_fence();\n}\n"
                         // tg_put16_<t>: rows of whole pieces of 16, as a fused store calls it
                         "void put_f16(uint16_t* d, const float* s, int64_t n, int nt) {\n"
                         "  for (int64_t i = 0; i + 16 <= n; i += 16) tg_put16_f16(d + i, s + i, nt, s);\n"
                         "  tg_stream_fence();\n}\n"
                         "void put_f32(float* d, const float* s, int64_t n, int nt) {\n"
                         "  for (int64_t i = 0; i + 16 <= n; i += 16) tg_put16_f32(d + i, s + i, nt, s);\n"
                         "  tg_stream_fence();\n}\n";
  std::string cmd = std::string(TILEGEN_C_COMPILER) +
                    " -O3 -fopenmp -std=c11 -Wall -Wextra -Werror -shared -fPIC";
  for (const auto& f : target->compile_flags)
    cmd += " " + f;
  int rc = 0;
  const std::string log = run(cmd + " " + file + " -o " + so + " -lm 2>&1", rc);
  ASSERT_EQ(rc, 0) << cmd << "\n" << log;
  // Where the target has F16C (c_avx2) or AVX-512F, f16 rows convert with vcvtps2ph (the
  // integer helper took about 15 vector instructions per vector; docs/c-backend.md).
  if (GetParam() != "c") {
    const std::string asm_file = dir + "/tg_stream_row_" + GetParam() + ".s";
    const std::string alog = run(cmd + " -S " + file + " -o " + asm_file + " 2>&1", rc);
    ASSERT_EQ(rc, 0) << alog;
    std::ifstream in(asm_file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("vcvtps2ph"), std::string::npos) << GetParam() << ": no vcvtps2ph in " << asm_file;
  }
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_TRUE(h) << dlerror();
  auto f16 = reinterpret_cast<row_fn>(dlsym(h, "row_f16"));
  auto bf16 = reinterpret_cast<row_fn>(dlsym(h, "row_bf16"));
  auto f32 = reinterpret_cast<row32_fn>(dlsym(h, "row_f32"));
  auto p16 = reinterpret_cast<row_fn>(dlsym(h, "put_f16"));
  auto p32 = reinterpret_cast<row32_fn>(dlsym(h, "put_f32"));
  ASSERT_TRUE(f16 && bf16 && f32 && p16 && p32);

  const std::vector<float> in = inputs();
  const int64_t n = static_cast<int64_t>(in.size());
  // Destinations at every 2-byte offset of a 64-byte line, the source shifted with them; rows
  // shorter than a vector, of whole vectors and 16-byte pieces (the streamed heads and tails of
  // a 16-byte aligned destination), and the whole input (every third offset).
  std::vector<uint16_t> dst(static_cast<size_t>(n) + 128);
  std::vector<float> dst32(static_cast<size_t>(n) + 128);
  int bad = 0;
  // Destinations `off` elements past a 64-byte line, with room before them (guards).
  auto at16 = [&](int64_t off) {
    return dst.data() + 32 + (32 - (reinterpret_cast<uintptr_t>(dst.data()) & 63u) / 2) % 32 + off;
  };
  auto at32 = [&](int64_t off) {
    return dst32.data() + 16 + (16 - (reinterpret_cast<uintptr_t>(dst32.data()) & 63u) / 4) % 16 + off;
  };
  // One call of a 16-bit row function against the scalar conversion, and the guards around it.
  auto check16 = [&](row_fn fn, uint16_t (*conv)(float), const std::string& what, int64_t off,
                     const float* s, int64_t len, int nt) {
    uint16_t* d = at16(off);
    std::fill(dst.begin(), dst.end(), 0xdeadu);
    fn(d, s, len, nt);
    for (int64_t i = 0; i < len; ++i) {
      const uint16_t want = conv(s[i]);
      if (d[i] != want && ++bad <= 8)
        ADD_FAILURE() << GetParam() << " " << what << " nt=" << nt << " offset " << off
                      << " length " << len << ": 0x" << std::hex << bits_of(s[i]) << " -> 0x"
                      << d[i] << ", want 0x" << want;
    }
    EXPECT_EQ(d[len], 0xdeadu) << what << " length " << len << ": written past the row";
    EXPECT_EQ(d[-1], 0xdeadu) << what << " length " << len << ": written before the row";
  };
  auto check32 = [&](row32_fn fn, const std::string& what, int64_t off, const float* s,
                     int64_t len, int nt) {
    float* d32 = at32(off);
    std::fill(dst32.begin(), dst32.end(), -7.0f);
    fn(d32, s, len, nt);
    EXPECT_EQ(std::memcmp(d32, s, static_cast<size_t>(len) * 4), 0)
        << what << " nt=" << nt << " offset " << off << " length " << len;
    EXPECT_EQ(d32[len], -7.0f) << what << " length " << len << ": written past the row";
    EXPECT_EQ(d32[-1], -7.0f) << what << " length " << len << ": written before the row";
  };
  for (int nt = 0; nt <= 1; ++nt) {
    for (int64_t off = 0; off < 32; ++off) {
      const float* s = in.data() + off;
      std::vector<int64_t> lens = {1, 5, 8, 15, 16, 17, 24, 31, 32, 33, 40, 48, 56, 63, 64, 72, 100, 264};
      if (off % 3 == 0)
        lens.push_back(n - off); // not a multiple of the vector: tails
      for (const int64_t len : lens) {
        check16(f16, &tilegen::ir::f32_to_f16_bits, "f16", off, s, len, nt);
        check16(bf16, &tilegen::ir::f32_to_bf16_bits, "bf16", off, s, len, nt);
        check32(f32, "f32", off, s, len, nt);
      }
    }
  }
  // tg_put16_<t>: cached stores at every offset, streaming stores at the multiples of 16 bytes
  // (of 32 and not of 32: its two forms), rows of 1 to 20 pieces.
  for (int nt = 0; nt <= 1; ++nt) {
    for (int64_t off = 0; off < 32; ++off) {
      if (nt && off % 8 != 0)
        continue; // the caller streams only to multiples of 16 bytes
      const float* s = in.data() + 7 * off;
      for (const int64_t len : {16, 32, 48, 320}) {
        check16(p16, &tilegen::ir::f32_to_f16_bits, "put16 f16", off, s, len, nt);
        if (!nt || off % 4 == 0)
          check32(p32, "put16 f32", off, s, len, nt);
      }
    }
  }
  EXPECT_EQ(bad, 0);
  dlclose(h);
}

INSTANTIATE_TEST_SUITE_P(CTargets, StreamRowTest, ::testing::Values("c", "c_avx2", "c_avx512"));

} // namespace
