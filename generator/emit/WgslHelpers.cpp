// WGSL helper functions, emitted on demand (only those a variant calls, with their
// dependencies). Conversions are bit-exact with the C backend's (round to nearest even,
// overflow to inf, NaN to quiet NaN), so both backends store the same 16-bit values for the
// same f32 value; WGSL's own f32 -> f16 conversion leaves the rounding to the implementation.
#include "emit/WgslEmitter.h"

#include "support/InternalError.h"

#include <vector>

namespace tilegen::emit {

namespace {

struct Helper {
  const char* name;
  std::vector<const char*> deps; // helpers listed earlier in the table
  const char* text;
};

const std::vector<Helper>& helpers() {
  static const std::vector<Helper> table = {
      {"tg_inb", {}, R"(// 0 <= i < n (n >= 0): one unsigned comparison.
fn tg_inb(i: i32, n: i32) -> bool { return u32(i) < u32(n); }
)"},
      {"tg_f32_of_u32", {}, R"(// f32(x) rounded to nearest even for every x (WGSL leaves the direction to the
// implementation above 2^24): two parts f32 holds exactly, joined by one correctly rounded add.
fn tg_f32_of_u32(x: u32) -> f32 { return f32(x >> 16u) * 65536.0f + f32(x & 0xffffu); }
)"},
      {"tg_f32_of_i32", {}, R"(// f32(x) rounded to nearest even for every x: x >> 16 (arithmetic) and the low
// 16 bits are exact in f32, and so is their scaled sum's first term.
fn tg_f32_of_i32(x: i32) -> f32 { return f32(x >> 16u) * 65536.0f + f32(x & 0xffff); }
)"},
      {"tg_cdiv", {}, R"(// ceil(a / b) for b > 0 (WGSL's i32 division truncates toward zero).
fn tg_cdiv(a: i32, b: i32) -> i32 {
  let q = a / b;
  return select(q, q + 1, ((a % b) != 0) && ((a < 0) == (b < 0)));
}
)"},
      {"tg_floordiv", {}, R"(// floor(a / b).
fn tg_floordiv(a: i32, b: i32) -> i32 {
  let q = a / b;
  return select(q, q - 1, ((a % b) != 0) && ((a < 0) != (b < 0)));
}
)"},
      {"tg_floormod", {}, R"(// a - b * floor(a / b): the sign of b.
fn tg_floormod(a: i32, b: i32) -> i32 {
  let r = a % b;
  return select(r, r + b, (r != 0) && ((r < 0) != (b < 0)));
}
)"},
      // Every divisor (divisor_needs_guard; docs/spec.md "Operators and typing"). WGSL's own
      // i32 a / 0 is a and a % 0 is 0 (INT_MIN / -1 is INT_MIN, INT_MIN % -1 is 0): only the
      // zero divisor needs a different answer.
      {"tg_floordiv_any", {"tg_floordiv"}, R"(// floor(a / b) for any b: a / 0 = 0.
fn tg_floordiv_any(a: i32, b: i32) -> i32 { return select(tg_floordiv(a, b), 0, b == 0); }
)"},
      {"tg_floormod_any", {"tg_floormod"}, R"(// a - b * floor(a / b) for any b: a % 0 = a.
fn tg_floormod_any(a: i32, b: i32) -> i32 { return select(tg_floormod(a, b), a, b == 0); }
)"},
      {"tg_cdiv_any", {"tg_cdiv"}, R"(// ceil(a / b) for any b: cdiv(a, 0) = 0.
fn tg_cdiv_any(a: i32, b: i32) -> i32 { return select(tg_cdiv(a, b), 0, b == 0); }
)"},
      // Shifts defined for every count (docs/spec.md "Bitwise operators"); WGSL itself takes the
      // count modulo 32. An i8 is held in an i32: << wraps it back to 8 bits.
      {"tg_shl_i32", {}, R"(// a << n wrapping; 0 for n outside [0, 32).
fn tg_shl_i32(a: i32, n: i32) -> i32 { return select(a << u32(n), 0, n < 0 || n >= 32); }
)"},
      {"tg_shr_i32", {}, R"(// a >> n, arithmetic; the sign fill for n outside [0, 32).
fn tg_shr_i32(a: i32, n: i32) -> i32 { return select(a >> u32(n), select(0, -1, a < 0), n < 0 || n >= 32); }
)"},
      {"tg_shl_u32", {}, R"(// a << n; 0 for n >= 32 (docs/spec.md "Unsigned integers").
fn tg_shl_u32(a: u32, n: u32) -> u32 { return select(a << n, 0u, n >= 32u); }
)"},
      {"tg_shr_u32", {}, R"(// a >> n, logical; 0 for n >= 32.
fn tg_shr_u32(a: u32, n: u32) -> u32 { return select(a >> n, 0u, n >= 32u); }
)"},
      {"tg_div_any_u32", {}, R"(// a / b for any b: a / 0 = 0 (WGSL's own gives a).
fn tg_div_any_u32(a: u32, b: u32) -> u32 { return select(a / b, 0u, b == 0u); }
)"},
      {"tg_mod_any_u32", {}, R"(// a % b for any b: a % 0 = a (WGSL's own gives 0).
fn tg_mod_any_u32(a: u32, b: u32) -> u32 { return select(a % b, a, b == 0u); }
)"},
      {"tg_shl_i8", {}, R"(// a << n wrapping to 8 bits; 0 for n outside [0, 8).
fn tg_shl_i8(a: i32, n: i32) -> i32 { return select(((a << u32(n)) << 24u) >> 24u, 0, n < 0 || n >= 8); }
)"},
      {"tg_shr_i8", {}, R"(// a >> n, arithmetic; the sign fill for n outside [0, 8).
fn tg_shr_i8(a: i32, n: i32) -> i32 { return select(a >> u32(n), select(0, -1, a < 0), n < 0 || n >= 8); }
)"},
      {"tg_f16_value", {}, R"(// The f32 value of f16 bits (exact, subnormals included).
fn tg_f16_value(h: u32) -> f32 {
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0u) { return select(1.0f, -1.0f, (h & 0x8000u) != 0u) * f32(m) * 5.9604644775390625e-8f; }
  if (e == 31u) { return bitcast<f32>(((h & 0x8000u) << 16u) | 0x7f800000u | (m << 13u)); }
  return bitcast<f32>(((h & 0x8000u) << 16u) | ((e + 112u) << 23u) | (m << 13u));
}
)"},
      {"tg_bits_f16", {}, R"(// f32 -> f16 bits, round to nearest even; overflow -> inf, NaN -> quiet NaN.
fn tg_bits_f16(v: f32) -> u32 {
  let x = bitcast<u32>(v);
  let sign = (x >> 16u) & 0x8000u;
  let ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) { return sign | 0x7e00u; }
  if (ax >= 0x477ff000u) { return sign | 0x7c00u; }
  if (ax >= 0x38800000u) {
    let r = ax - 0x38000000u; // exponent rebiased from 127 to 15
    return sign | ((r + 0xfffu + ((r >> 13u) & 1u)) >> 13u);
  }
  let e = ax >> 23u;
  if (e < 102u) { return sign; } // below half the smallest subnormal
  let m = (ax & 0x7fffffu) | 0x800000u;
  let s = 126u - e;
  let q = m >> s;
  let rem = m & ((1u << s) - 1u);
  let half = 1u << (s - 1u);
  return sign | (q + select(0u, 1u, (rem > half) || ((rem == half) && ((q & 1u) == 1u))));
}
)"},
      {"tg_bits_bf16", {}, R"(// f32 -> bf16 bits, round to nearest even; NaN -> quiet NaN.
fn tg_bits_bf16(v: f32) -> u32 {
  let x = bitcast<u32>(v);
  if ((x & 0x7fffffffu) > 0x7f800000u) { return ((x >> 16u) | 0x40u) & 0xffffu; }
  return (x + 0x7fffu + ((x >> 16u) & 1u)) >> 16u;
}
)"},
      {"tg_bits_u8", {}, R"(// The low byte of a u32 (C's conversion to uint8_t).
fn tg_bits_u8(v: u32) -> u32 { return v & 0xffu; }
)"},
      {"tg_bits_u16", {}, R"(// The low half of a u32 (C's conversion to uint16_t).
fn tg_bits_u16(v: u32) -> u32 { return v & 0xffffu; }
)"},
      {"tg_bits_i8", {}, R"(// The low byte of an i32 (C's conversion to int8_t wraps the same way).
fn tg_bits_i8(v: i32) -> u32 { return u32(v) & 0xffu; }
)"},
      // The OCP FP8 formats (ir/DType.h), as the C backend computes them (emit/CRuntimeHelpers.cpp).
      {"tg_e4m3_value", {}, R"(// e4m3 bits (the low byte of b) -> f32, exact: bias 7, S.1111.111 is NaN, no infinities.
fn tg_e4m3_value(b: u32) -> f32 {
  let e = (b >> 3u) & 15u;
  let m = b & 7u;
  var v = select(f32(m) * 0x1p-9f, bitcast<f32>(((e + 120u) << 23u) | (m << 20u)), e != 0u);
  // The NaN depends on m (7 here): a constant NaN is a shader-creation error in WGSL.
  v = select(v, bitcast<f32>(0x7f800000u | (m << 20u)), (b & 0x7fu) == 0x7fu);
  return select(v, -v, (b & 0x80u) != 0u);
}
)"},
      {"tg_fp8_bits", {}, R"(// f32 -> FP8 bits with `mbits` mantissa bits and exponent bias `bias`: round to nearest even,
// finite overflow and infinities saturate to max_code, NaN -> NaN.
fn tg_fp8_bits(v: f32, mbits: u32, bias: i32, max_code: u32) -> u32 {
  let u = bitcast<u32>(v);
  let sign = (u >> 24u) & 0x80u;
  if ((u & 0x7fffffffu) > 0x7f800000u) { return sign | 0x7fu; }
  let a = abs(v);
  if (a > 0x1p100f) { return sign | max_code; }
  var e = max(frexp(a).exp - 1, 1 - bias); // subnormals share the smallest normal's quantum
  var q = round(ldexp(a, i32(mbits) - e)); // WGSL round(): ties to even
  if (q >= f32(2u << mbits)) {
    q = q * 0.5f;
    e = e + 1;
  }
  let code = select((u32(e + bias) << mbits) | (u32(q) - (1u << mbits)), u32(q), q < f32(1u << mbits));
  return sign | min(code, max_code);
}
)"},
      {"tg_bits_e4m3", {"tg_fp8_bits"}, R"(fn tg_bits_e4m3(v: f32) -> u32 { return tg_fp8_bits(v, 3u, 7, 0x7eu); }
)"},
      {"tg_bits_e5m2", {"tg_fp8_bits"}, R"(fn tg_bits_e5m2(v: f32) -> u32 { return tg_fp8_bits(v, 2u, 15, 0x7bu); }
)"},
      {"tg_round_e4m3", {"tg_e4m3_value", "tg_bits_e4m3"}, R"(// v rounded to the nearest e4m3 (saturating), as f32.
fn tg_round_e4m3(v: f32) -> f32 { return tg_e4m3_value(tg_bits_e4m3(v)); }
)"},
      {"tg_round_e5m2", {"tg_f16_value", "tg_bits_e5m2"}, R"(// v rounded to the nearest e5m2 (saturating), as f32.
fn tg_round_e5m2(v: f32) -> f32 { return tg_f16_value(tg_bits_e5m2(v) << 8u); }
)"},
      {"tg_ld_e4m3", {"tg_e4m3_value"}, R"(// Element e of a packed e4m3 tensor, from its word w (byte e % 4).
fn tg_ld_e4m3(w: u32, e: i32) -> f32 { return tg_e4m3_value(extractBits(w, u32(e & 3) * 8u, 8u)); }
)"},
      {"tg_ld_e5m2", {"tg_f16_value"}, R"(// Element e of a packed e5m2 tensor, from its word w (byte e % 4): the high byte of an f16.
fn tg_ld_e5m2(w: u32, e: i32) -> f32 { return tg_f16_value(extractBits(w, u32(e & 3) * 8u, 8u) << 8u); }
)"},
      {"tg_round_f16", {"tg_f16_value", "tg_bits_f16"}, R"(// v rounded to the nearest f16, as f32.
fn tg_round_f16(v: f32) -> f32 { return tg_f16_value(tg_bits_f16(v)); }
)"},
      {"tg_round_bf16", {"tg_bits_bf16"}, R"(// v rounded to the nearest bf16, as f32.
fn tg_round_bf16(v: f32) -> f32 { return bitcast<f32>(tg_bits_bf16(v) << 16u); }
)"},
      {"tg_ld_f16", {"tg_f16_value"}, R"(// Element e of a packed f16 tensor, from its word w (low half = even element).
fn tg_ld_f16(w: u32, e: i32) -> f32 { return tg_f16_value(select(w & 0xffffu, w >> 16u, (e & 1) != 0)); }
)"},
      {"tg_ld_bf16", {}, R"(// Element e of a packed bf16 tensor, from its word w (low half = even element).
fn tg_ld_bf16(w: u32, e: i32) -> f32 { return bitcast<f32>(select(w << 16u, w & 0xffff0000u, (e & 1) != 0)); }
)"},
      {"tg_ld_u8", {}, R"(// Element e of a packed u8 tensor, from its word w (byte e % 4).
fn tg_ld_u8(w: u32, e: i32) -> u32 { return extractBits(w, u32(e & 3) * 8u, 8u); }
)"},
      {"tg_ld_u16", {}, R"(// Element e of a packed u16 tensor, from its word w (low half = even element).
fn tg_ld_u16(w: u32, e: i32) -> u32 { return extractBits(w, u32(e & 1) * 16u, 16u); }
)"},
      {"tg_ld_i8", {}, R"(// Element e of a packed i8 tensor, from its word w (byte e % 4), sign-extended.
fn tg_ld_i8(w: u32, e: i32) -> i32 { return extractBits(bitcast<i32>(w), u32(e & 3) * 8u, 8u); }
)"},
      {"tg_rt", {}, R"(// x as a run-time value: a builtin called on a constant would be evaluated when the
// shader is created, where sqrt(-1.0f) or exp(100.0f) is an error instead of NaN or inf.
fn tg_rt(x: f32) -> f32 { return x; }
)"},
      {"tg_erf", {}, R"(// erf, the C backend's fit (emit/CRuntimeHelpers.cpp): |x| < 0.875: x E(x^2), else
// sign(x) (1 - e^(-x^2) G(1/|x|)), |x| clamped to 4 (erf is 1 in f32 there).
fn tg_erf(x: f32) -> f32 {
  let z = x * x;
  var e = fma(-0x1.45d2cp-11f, z, 0x1.49eebap-8f);
  e = fma(e, z, -0x1.b6f9c4p-6f);
  e = fma(e, z, 0x1.ce218ep-4f);
  e = fma(e, z, -0x1.81270ep-2f);
  e = fma(e, z, 0x1.20dd74p+0f);
  let small = x * e;
  let sign = bitcast<u32>(x) & 0x80000000u;
  var a = bitcast<f32>(bitcast<u32>(x) ^ sign);
  a = select(4.0f, a, a < 4.0f);
  a = select(a, 0.875f, a < 0.875f);
  let t = 1.0f / a;
  var g = fma(0x1.59eaaap-7f, t, -0x1.0909fp-4f);
  g = fma(g, t, 0x1.39d792p-3f);
  g = fma(g, t, -0x1.14865ap-3f);
  g = fma(g, t, -0x1.dd5ee8p-4f);
  g = fma(g, t, 0x1.bbe456p-2f);
  g = fma(g, t, -0x1.cde74ap-2f);
  g = fma(g, t, 0x1.366ebp-5f);
  g = fma(g, t, 0x1.1e776ap-1f);
  g = fma(g, t, 0x1.040ccap-12f);
  let big = bitcast<f32>(bitcast<u32>(1.0f - exp(-(a * a)) * g) | sign);
  return select(big, small, z < 0x1.88p-1f);
}
)"},
  };
  return table;
}

} // namespace

std::string wgsl_helper_source(const std::set<std::string>& used) {
  std::set<std::string> want = used;
  const auto& table = helpers();
  for (auto h = table.rbegin(); h != table.rend(); ++h)
    if (want.count(h->name))
      for (const char* d : h->deps)
        want.insert(d);
  std::string out;
  size_t found = 0;
  for (const auto& h : table)
    if (want.count(h.name)) {
      out += std::string(h.text) + "\n";
      ++found;
    }
  TG_ASSERT(found == want.size(), "WGSL emitter: a helper without a definition was requested");
  return out;
}

} // namespace tilegen::emit
