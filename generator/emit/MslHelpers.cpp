// Helper functions of generated MSL: what <metal_stdlib> lacks (erf, the FP8 formats, the
// IR's floor division) and the IR's min/max semantics. Written with MSL built-ins only
// (as_type, fma, frexp, ldexp, rint); the FP8 conversions follow emit/CRuntimeHelpers.cpp (the
// C backend's) step for step, so both backends round the same way.
#include "emit/MslEmitter.h"

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
      {"tg_inb", {}, R"(// 0 <= i < n, in one unsigned comparison (n >= 0).
inline bool tg_inb(long i, long n) { return ulong(i) < ulong(n); }
)"},
      {"tg_e4m3_to_f32", {}, R"(// e4m3 code -> f32 (exact): bias 7, S.1111.111 is NaN, no infinities.
inline float tg_e4m3_to_f32(uchar b) {
  const uint e = (uint(b) >> 3) & 15u, m = uint(b) & 7u;
  float v = e != 0u ? as_type<float>(((e + 120u) << 23) | (m << 20)) : float(m) * 0.001953125f;
  v = (uint(b) & 0x7fu) == 0x7fu ? NAN : v;
  return (uint(b) & 0x80u) != 0u ? -v : v;
}
)"},
      {"tg_e5m2_to_f32", {}, R"(// e5m2 code -> f32 (exact): the high byte of a half.
inline float tg_e5m2_to_f32(uchar b) { return float(as_type<half>(ushort(ushort(b) << 8))); }
)"},
      {"tg_f32_to_fp8", {}, R"(// f32 -> FP8 code with `mbits` mantissa bits and exponent bias `bias`: round to nearest even,
// finite overflow and infinities saturate to max_code, NaN -> NaN (the C backend's rule).
inline uchar tg_f32_to_fp8(float f, int mbits, int bias, uint max_code) {
  const uint sign = (as_type<uint>(f) >> 24) & 0x80u;
  if (isnan(f))
    return uchar(sign | 0x7fu);
  const float a = fabs(f);
  if (a > 1.2676506e30f) // 2^100
    return uchar(sign | max_code);
  int x = 0;
  (void)frexp(a, x); // a = r 2^x, r in [0.5, 1)
  int e = max(x - 1, 1 - bias); // subnormals share the smallest normal's quantum
  float q = rint(ldexp(a, mbits - e)); // exact scaling, then round to nearest even
  if (q >= float(2 << mbits)) {
    q *= 0.5f;
    ++e;
  }
  uint code = q < float(1 << mbits) ? uint(q) : (uint(e + bias) << mbits) | (uint(q) - (1u << mbits));
  code = min(code, max_code);
  return uchar(sign | code);
}
)"},
      {"tg_f32_to_e4m3", {"tg_f32_to_fp8"}, R"(inline uchar tg_f32_to_e4m3(float f) { return tg_f32_to_fp8(f, 3, 7, 0x7eu); }
)"},
      {"tg_f32_to_e5m2", {"tg_f32_to_fp8"}, R"(inline uchar tg_f32_to_e5m2(float f) { return tg_f32_to_fp8(f, 2, 15, 0x7bu); }
)"},
      {"tg_erf", {}, R"(// erf (MSL has none), branch-free: the C backend's fit (emit/CRuntimeHelpers.cpp, <= 3 ulp
// there with its own exp). |x| < 0.875: x E(x^2), E a degree-5 fit of erf(a) / a in a^2; else
// sign(x) (1 - e^(-x^2) G(1/|x|)), G a degree-9 fit of erfc(a) e^(a^2) in 1/a; |x| clamped to 4.
inline float tg_erf(float x) {
  const float z = x * x;
  float e = fma(-0.000621458516f, z, 0.00503437081f);
  e = fma(e, z, -0.0267929472f);
  e = fma(e, z, 0.112824969f);
  e = fma(e, z, -0.376125544f);
  e = fma(e, z, 1.12837911f);
  const float small = x * e;
  const uint sign = as_type<uint>(x) & 0x80000000u;
  float a = as_type<float>(as_type<uint>(x) ^ sign);
  a = a < 4.0f ? a : 4.0f;
  a = a < 0.875f ? 0.875f : a; // the large form is not used there: keep 1/a in the fit range
  const float t = 1.0f / a;
  float g = fma(0.0105565386f, t, -0.0647067428f);
  g = fma(g, t, 0.153243199f);
  g = fma(g, t, -0.13502188f);
  g = fma(g, t, -0.116545588f);
  g = fma(g, t, 0.43348822f);
  g = fma(g, t, -0.45107761f);
  g = fma(g, t, 0.0378945768f);
  g = fma(g, t, 0.559504807f);
  g = fma(g, t, 0.000248002965f);
  const float big = as_type<float>(as_type<uint>(1.0f - exp(-(a * a)) * g) | sign);
  return (z < 0.765625f || isnan(x)) ? small : big;
}
)"},
  };
  return table;
}

// Typed helpers: tg_<op>_<type>, the IR's integer and min/max semantics.
std::string typed_helper(const std::string& name) {
  auto us = name.rfind('_');
  TG_ASSERT(us != std::string::npos && name.rfind("tg_", 0) == 0, "unknown MSL helper " + name);
  const std::string op = name.substr(3, us - 3), suffix = name.substr(us + 1);
  std::string T;
  if (suffix == "f32")
    T = "float";
  else if (suffix == "i64")
    T = "long";
  else if (suffix == "i32" || suffix == "i8")
    T = "int";
  else if (suffix == "u32" || suffix == "u64") {
    std::string text = unsigned_helper_text("inline ", name, op, suffix == "u32" ? "uint" : "ulong",
                                            suffix == "u32" ? 32 : 64);
    TG_ASSERT(!text.empty(), "unknown MSL helper " + name);
    return "// docs/spec.md \"Unsigned integers\"\n" + text;
  }
  TG_ASSERT(!T.empty(), "unknown MSL helper type in " + name);
  const std::string sig = "inline " + T + " " + name;
  if (op == "min")
    return "// min(a, b) = a < b ? a : b (a NaN b gives b), as on the C backend.\n" + sig + "(" + T +
           " a, " + T + " b) { return a < b ? a : b; }\n";
  if (op == "max")
    return "// max(a, b) = a > b ? a : b (a NaN b gives b), as on the C backend.\n" + sig + "(" + T +
           " a, " + T + " b) { return a > b ? a : b; }\n";
  if (op == "abs")
    return sig + "(" + T + " a) { return a < 0 ? -a : a; }\n";
  if (op == "shl" || op == "shr") // docs/spec.md "Bitwise operators"; i8 is held in an int
    return shift_helper_text("inline ", name, op == "shl" ? ir::BinaryOp::Shl : ir::BinaryOp::Shr,
                             T, suffix == "i64" ? "ulong" : "uint", suffix == "i8" ? "char" : "",
                             suffix == "i8" ? 8 : suffix == "i32" ? 32 : 64);
  if (op == "cdiv")
    return "// ceil(a / b) for b > 0.\n" + sig + "(" + T + " a, " + T + " b) {\n  const " + T +
           " q = a / b;\n  return q + ((a % b != 0 && (a < 0) == (b < 0)) ? 1 : 0);\n}\n";
  if (op == "floordiv")
    return "// floor(a / b) (C++'s / truncates toward zero).\n" + sig + "(" + T + " a, " + T +
           " b) {\n  const " + T + " q = a / b;\n  return q - ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0);\n}\n";
  if (op == "floormod")
    return "// a - b * floor(a / b): the sign of b.\n" + sig + "(" + T + " a, " + T + " b) {\n  const " +
           T + " r = a % b;\n  return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;\n}\n";
  // Every divisor (CFamilyPrinter's divisor_needs_guard; docs/spec.md "Operators and typing"), as
  // on the C and CUDA backends: a / 0 = 0, a % 0 = a, cdiv(a, 0) = 0, INT_MIN / -1 wraps.
  const std::string neg = "(" + T + ")(0u - (u" + T + ")a)"; // -a, wrapping at INT_MIN
  if (op == "floordiv_any" || op == "cdiv_any")
    return std::string("// ") + (op == "cdiv_any" ? "ceil" : "floor") +
           "(a / b) for any b: 0 for b = 0; INT_MIN / -1 wraps to INT_MIN.\n" + sig + "(" + T +
           " a, " + T + " b) {\n  if (b == 0)\n    return 0;\n  if (b == -1)\n    return " + neg +
           ";\n  const " + T + " q = a / b;\n  return q " +
           (op == "cdiv_any" ? "+ ((a % b != 0 && (a < 0) == (b < 0)) ? 1 : 0)"
                             : "- ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0)") +
           ";\n}\n";
  if (op == "floormod_any")
    return "// a - b * floor(a / b) for any b: a % 0 = a; a % -1 = 0.\n" + sig + "(" + T + " a, " +
           T + " b) {\n  if (b == 0)\n    return a;\n  if (b == -1)\n    return 0;\n  const " + T +
           " r = a % b;\n  return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;\n}\n";
  internal_error("unknown MSL helper " + name);
}

} // namespace

std::string msl_helper_source(const std::set<std::string>& used) {
  std::set<std::string> want = used;
  const auto& table = fixed_helpers();
  for (auto h = table.rbegin(); h != table.rend(); ++h)
    if (want.count(h->name))
      for (const char* d : h->deps)
        want.insert(d);
  std::string out;
  std::set<std::string> done;
  for (const auto& h : table)
    if (want.count(h.name)) {
      out += std::string(h.text) + "\n";
      done.insert(h.name);
    }
  for (const auto& n : want) // sorted: deterministic
    if (!done.count(n))
      out += typed_helper(n) + "\n";
  return out;
}

} // namespace tilegen::emit
