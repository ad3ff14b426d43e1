// Helper bodies are plain C11 that gcc/clang vectorize (no branches that block if-conversion).
// The 16-bit conversions match ir/FloatBits.cpp bit for bit, so constants folded by the
// generator agree with values computed at run time.
#include "emit/CRuntimeHelpers.h"

#include "support/InternalError.h"

#include <vector>

namespace tilegen::emit {

namespace {

struct Helper {
  const char* name;
  std::vector<const char*> deps;
  const char* text;
};

// Fixed helpers, in the order they are printed (dependencies first).
const std::vector<Helper>& fixed_helpers() {
  static const std::vector<Helper> table = {
      {"tg_inb", {}, R"(/* 0 <= i < n, in one unsigned comparison (n >= 0). */
static inline int tg_inb(int64_t i, int64_t n) { return (uint64_t)i < (uint64_t)n; }
)"},
      {"tg_span_inb", {}, R"(/* [o, o + len) lies inside [0, n). */
static inline int tg_span_inb(int64_t o, int64_t len, int64_t n) {
  return o >= 0 && len <= n && o <= n - len;
}
)"},
      {"tg_bf16_to_f32", {}, R"(/* bf16 bits -> f32 (exact). */
static inline float tg_bf16_to_f32(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
)"},
      {"tg_f32_to_bf16", {}, R"(/* f32 -> bf16 bits, round to nearest even; NaN stays a (quiet) NaN. */
static inline uint16_t tg_f32_to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  const uint32_t nan = (u & 0x7fffffffu) > 0x7f800000u;
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return (uint16_t)(nan ? ((u >> 16) | 0x40u) : rounded);
}
)"},
      {"tg_round_bf16", {"tg_bf16_to_f32", "tg_f32_to_bf16"}, R"(/* f32 rounded to the nearest bf16 value, held as f32. */
static inline float tg_round_bf16(float f) { return tg_bf16_to_f32(tg_f32_to_bf16(f)); }
)"},
      {"tg_f16_to_f32", {}, R"(/* f16 bits -> f32 (exact). */
static inline float tg_f16_to_f32(uint16_t h) {
#if defined(__FLT16_MAX__) && defined(__F16C__)
  _Float16 x;
  memcpy(&x, &h, sizeof h);
  return (float)x;
#else
  const uint32_t shifted_exp = 0x7c00u << 13;
  uint32_t o = ((uint32_t)h & 0x7fffu) << 13;
  const uint32_t e = shifted_exp & o;
  o += (127u - 15u) << 23;
  if (e == shifted_exp) {
    o += (128u - 16u) << 23; /* Inf / NaN */
  } else if (e == 0) {       /* zero / subnormal: renormalize with a float subtraction */
    const uint32_t magic_bits = 113u << 23;
    float fo, magic;
    o += 1u << 23;
    memcpy(&fo, &o, sizeof fo);
    memcpy(&magic, &magic_bits, sizeof magic);
    fo -= magic;
    memcpy(&o, &fo, sizeof o);
  }
  o |= ((uint32_t)h & 0x8000u) << 16;
  float r;
  memcpy(&r, &o, sizeof r);
  return r;
#endif
}
)"},
      {"tg_f32_to_f16", {}, R"(/* f32 -> f16 bits, round to nearest even; overflow -> inf, NaN -> quiet NaN. */
static inline uint16_t tg_f32_to_f16(float f) {
#if defined(__FLT16_MAX__) && defined(__F16C__)
  _Float16 x = (_Float16)f;
  uint16_t h;
  memcpy(&h, &x, sizeof h);
  return h;
#else
  const uint32_t f32_infty = 255u << 23, f16_max = (127u + 16u) << 23;
  const uint32_t denorm_magic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  const uint32_t sign = u & 0x80000000u;
  uint16_t o;
  u ^= sign;
  if (u >= f16_max) {
    o = u > f32_infty ? 0x7e00u : 0x7c00u;
  } else if (u < (113u << 23)) { /* subnormal or zero: round with a float addition */
    float fu, magic;
    uint32_t r;
    memcpy(&fu, &u, sizeof fu);
    memcpy(&magic, &denorm_magic, sizeof magic);
    fu += magic;
    memcpy(&r, &fu, sizeof r);
    o = (uint16_t)(r - denorm_magic);
  } else {
    const uint32_t mant_odd = (u >> 13) & 1u;
    u += ((uint32_t)(15 - 127) << 23) + 0xfffu;
    u += mant_odd;
    o = (uint16_t)(u >> 13);
  }
  return (uint16_t)(o | (sign >> 16));
#endif
}
)"},
      {"tg_round_f16", {"tg_f16_to_f32", "tg_f32_to_f16"}, R"(/* f32 rounded to the nearest f16 value, held as f32. */
static inline float tg_round_f16(float f) { return tg_f16_to_f32(tg_f32_to_f16(f)); }
)"},
  };
  return table;
}

const char* c_type_of_suffix(const std::string& t) {
  if (t == "f32") return "float";
  if (t == "f64") return "double";
  if (t == "i8") return "int8_t";
  if (t == "i32") return "int32_t";
  if (t == "i64") return "int64_t";
  return nullptr;
}

// Typed helpers: tg_<op>_<type>.
std::string typed_helper(const std::string& name) {
  auto us = name.rfind('_');
  TG_ASSERT(us != std::string::npos && name.rfind("tg_", 0) == 0, "unknown C helper " + name);
  const std::string op = name.substr(3, us - 3), suffix = name.substr(us + 1);
  const char* ty = c_type_of_suffix(suffix);
  TG_ASSERT(ty != nullptr, "unknown C helper type in " + name);
  const std::string T = ty;
  const std::string sig = "static inline " + T + " " + name;
  if (op == "min")
    return "/* min(a, b) = a < b ? a : b (a NaN b gives b). */\n" + sig + "(" + T + " a, " + T +
           " b) { return a < b ? a : b; }\n";
  if (op == "max")
    return "/* max(a, b) = a > b ? a : b (a NaN b gives b). */\n" + sig + "(" + T + " a, " + T +
           " b) { return a > b ? a : b; }\n";
  if (op == "fma") {
    if (T == "float" || T == "double") {
      const std::string f = T == "float" ? "fmaf" : "fma";
      return "/* a * b + c, fused where the target has FMA (one rounding), else two roundings. */\n" +
             sig + "(" + T + " a, " + T + " b, " + T + " c) {\n#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)\n  return " +
             f + "(a, b, c);\n#else\n  return a * b + c;\n#endif\n}\n";
    }
    return sig + "(" + T + " a, " + T + " b, " + T + " c) { return a * b + c; }\n";
  }
  if (op == "abs")
    return sig + "(" + T + " a) { return a < 0 ? -a : a; }\n";
  if (op == "cdiv")
    return "/* ceil(a / b) for b > 0, without the overflow of (a + b - 1) / b. */\n" + sig + "(" +
           T + " a, " + T + " b) {\n  " + T + " q = a / b;\n  return q + ((a % b != 0) & ((a < 0) == (b < 0)));\n}\n";
  if (op == "floordiv")
    return "/* floor(a / b) (C's / truncates toward zero). */\n" + sig + "(" + T + " a, " + T +
           " b) {\n  " + T + " q = a / b;\n  return q - ((a % b != 0) & ((a < 0) != (b < 0)));\n}\n";
  if (op == "floormod")
    return "/* a - b * floor(a / b): the sign of b. */\n" + sig + "(" + T + " a, " + T +
           " b) {\n  " + T + " r = a % b;\n  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n}\n";
  internal_error("unknown C helper " + name);
}

} // namespace

std::string c_helper_source(const std::set<std::string>& used) {
  std::set<std::string> want = used;
  // Close over dependencies (the table lists them; typed helpers have none).
  for (const auto& h : fixed_helpers())
    if (want.count(h.name))
      for (const char* d : h.deps)
        want.insert(d);
  std::string out;
  std::set<std::string> done;
  for (const auto& h : fixed_helpers())
    if (want.count(h.name)) {
      out += std::string(h.text) + "\n";
      done.insert(h.name);
    }
  for (const auto& name : want) // sorted: deterministic
    if (!done.count(name))
      out += typed_helper(name) + "\n";
  return out;
}

} // namespace tilegen::emit
