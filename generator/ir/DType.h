// DType: the scalar element types of the tile IR. Storage types (i8, f16, bf16, e4m3, e5m2) may
// appear in tensors and buffers; arithmetic on the narrow floats (16- and 8-bit) is done in f32
// (the front end inserts casts).
//
// The unsigned integers u8, u16, u32, u64 wrap modulo 2^n. u8 and u16 are storage types like the
// narrow floats: their values are computed as u32 (the front end inserts casts), so only u32
// and u64 arithmetic reaches the backends.
//
// The 8-bit floats are the OCP FP8 formats that PTX, torch and the OCP MX spec call e4m3 and
// e5m2: e4m3 (bias 7) has no infinity, NaN is S.1111.111, largest finite 448; e5m2 (bias 15)
// is IEEE-like with infinities, largest finite 57344. Conversion to either rounds to nearest
// even and saturates finite overflow (and infinities) to the largest finite value, as PTX's
// cvt.rn.satfinite does; NaN stays NaN.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tilegen::ir {

enum class ScalarKind { Bool, I8, I32, I64, F16, BF16, F32, F64, E4M3, E5M2, U8, U16, U32, U64 };

struct DType {
  ScalarKind kind = ScalarKind::F32;

  constexpr DType() = default;
  constexpr explicit DType(ScalarKind k) : kind(k) {}

  static constexpr DType boolean() { return DType(ScalarKind::Bool); }
  static constexpr DType i8() { return DType(ScalarKind::I8); }
  static constexpr DType i32() { return DType(ScalarKind::I32); }
  static constexpr DType i64() { return DType(ScalarKind::I64); }
  static constexpr DType f16() { return DType(ScalarKind::F16); }
  static constexpr DType bf16() { return DType(ScalarKind::BF16); }
  static constexpr DType f32() { return DType(ScalarKind::F32); }
  static constexpr DType f64() { return DType(ScalarKind::F64); }
  static constexpr DType e4m3() { return DType(ScalarKind::E4M3); }
  static constexpr DType e5m2() { return DType(ScalarKind::E5M2); }
  static constexpr DType u8() { return DType(ScalarKind::U8); }
  static constexpr DType u16() { return DType(ScalarKind::U16); }
  static constexpr DType u32() { return DType(ScalarKind::U32); }
  static constexpr DType u64() { return DType(ScalarKind::U64); }

  // "bool", "i8", "i32", "i64", "f16", "bf16", "f32", "f64", "e4m3", "e5m2", "u8", "u16", "u32",
  // "u64"
  static std::optional<DType> from_name(std::string_view name);
  const char* name() const;

  int bits() const;
  int bytes() const { return bits() <= 8 ? 1 : bits() / 8; }
  bool is_bool() const { return kind == ScalarKind::Bool; }
  // Signed or unsigned.
  bool is_int() const { return is_signed_int() || is_unsigned(); }
  bool is_signed_int() const {
    return kind == ScalarKind::I8 || kind == ScalarKind::I32 || kind == ScalarKind::I64;
  }
  bool is_unsigned() const {
    return kind == ScalarKind::U8 || kind == ScalarKind::U16 || kind == ScalarKind::U32 ||
           kind == ScalarKind::U64;
  }
  // An unsigned type that is only stored: values are held and computed as u32 (8 and 16 bits).
  bool is_narrow_unsigned() const { return kind == ScalarKind::U8 || kind == ScalarKind::U16; }
  bool is_float() const {
    return kind == ScalarKind::F16 || kind == ScalarKind::BF16 || kind == ScalarKind::F32 ||
           kind == ScalarKind::F64 || is_fp8();
  }
  bool is_16bit_float() const { return kind == ScalarKind::F16 || kind == ScalarKind::BF16; }
  bool is_fp8() const { return kind == ScalarKind::E4M3 || kind == ScalarKind::E5M2; }
  // A float type that is only stored: values are held and computed as f32 (16- and 8-bit).
  bool is_narrow_float() const { return is_16bit_float() || is_fp8(); }

  friend constexpr bool operator==(DType a, DType b) { return a.kind == b.kind; }
  friend constexpr bool operator!=(DType a, DType b) { return a.kind != b.kind; }
};

} // namespace tilegen::ir
