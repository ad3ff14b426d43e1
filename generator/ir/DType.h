// DType: the scalar element types of the tile IR. Storage types (i8, f16, bf16) may appear in
// tensors and buffers; arithmetic on 16-bit floats is done in f32 (the front end inserts casts).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tilegen::ir {

enum class ScalarKind { Bool, I8, I32, I64, F16, BF16, F32, F64 };

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

  // "bool", "i8", "i32", "i64", "f16", "bf16", "f32", "f64"
  static std::optional<DType> from_name(std::string_view name);
  const char* name() const;

  int bits() const;
  int bytes() const { return bits() <= 8 ? 1 : bits() / 8; }
  bool is_bool() const { return kind == ScalarKind::Bool; }
  bool is_int() const {
    return kind == ScalarKind::I8 || kind == ScalarKind::I32 || kind == ScalarKind::I64;
  }
  bool is_float() const {
    return kind == ScalarKind::F16 || kind == ScalarKind::BF16 || kind == ScalarKind::F32 ||
           kind == ScalarKind::F64;
  }
  bool is_16bit_float() const { return kind == ScalarKind::F16 || kind == ScalarKind::BF16; }

  friend constexpr bool operator==(DType a, DType b) { return a.kind == b.kind; }
  friend constexpr bool operator!=(DType a, DType b) { return a.kind != b.kind; }
};

} // namespace tilegen::ir
