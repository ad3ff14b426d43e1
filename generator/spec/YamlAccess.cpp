// YamlAccess: typed, located reads of YAML nodes.
#include "spec/YamlAccess.h"

#include "spec/ExprParser.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>

namespace tilegen::spec {

namespace {
// Most candidates a tile constant may expand to (a range with a small step could otherwise
// ask for billions).
constexpr size_t kMaxCandidates = 4096;

std::string found(const YNode* n) {
  if (n->kind == YKind::Scalar)
    return "'" + (n->value.size() > 40 ? n->value.substr(0, 40) + "..." : n->value) + "'";
  return std::string("a ") + ykind_name(n->kind);
}
} // namespace

std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best = closest_name(name, candidates);
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

bool YamlAccess::expect(const YNode* n, YKind k, const std::string& what) {
  if (n->kind == k)
    return true;
  std::string shown = n->kind == YKind::Scalar
                          ? "the string " + found(n)
                          : std::string(n->kind == YKind::Null ? "" : "a ") + ykind_name(n->kind);
  diag_.error(n->loc, "expected " + what + ", found " + shown);
  return false;
}

bool YamlAccess::check_fields(const YNode* map, std::initializer_list<const char*> allowed,
                              std::initializer_list<const char*> required,
                              const std::string& context) {
  bool ok = true;
  std::vector<std::string> names(allowed.begin(), allowed.end());
  for (const auto& [k, v] : map->entries) {
    if (std::find(names.begin(), names.end(), k->value) != names.end())
      continue;
    diag_.error(k->loc,
                "unknown field '" + k->value + "' in " + context + did_you_mean(k->value, names));
    ok = false;
  }
  for (const char* r : required) {
    if (!map->get(r)) {
      diag_.error(map->loc, std::string("missing required field '") + r + "' in " + context);
      ok = false;
    }
  }
  return ok;
}

SExprPtr YamlAccess::expr(const YNode* n, const std::string& what) {
  if (!expect(n, YKind::Scalar, what + " (an expression)"))
    return nullptr;
  LocMapper map = [n](size_t off, size_t len) { return n->value_loc(off, len); };
  return parse_expr(n->value, map, diag_);
}

bool YamlAccess::stmt(const YNode* n, SStmt& out) {
  if (!expect(n, YKind::Scalar,
              "a statement string (\"x[i] = e\", \"x[i] += e\" or "
              "\"let t = e\")"))
    return false;
  LocMapper map = [n](size_t off, size_t len) { return n->value_loc(off, len); };
  return parse_stmt(n->value, map, diag_, out);
}

std::optional<int64_t> YamlAccess::integer(const YNode* n, const std::string& what) {
  if (!expect(n, YKind::Scalar, what + " (an integer)"))
    return std::nullopt;
  const std::string& s = n->value;
  size_t i = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  bool digits = i < s.size();
  for (size_t k = i; k < s.size(); ++k)
    digits = digits && s[k] >= '0' && s[k] <= '9';
  if (!digits) {
    diag_.error(n->loc, "expected " + what + " (an integer), found " + found(n));
    return std::nullopt;
  }
  errno = 0;
  long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE) {
    diag_.error(n->loc, "integer '" + s + "' is too large (the limit is 2^63-1)");
    return std::nullopt;
  }
  return static_cast<int64_t>(v);
}

std::optional<bool> YamlAccess::boolean(const YNode* n, const std::string& what) {
  if (!expect(n, YKind::Scalar, what + " (true or false)"))
    return std::nullopt;
  const std::string& s = n->value;
  if (s == "true" || s == "True" || s == "TRUE")
    return true;
  if (s == "false" || s == "False" || s == "FALSE")
    return false;
  diag_.error(n->loc, "expected " + what + " (true or false), found " + found(n));
  return std::nullopt;
}

std::optional<std::string> YamlAccess::string(const YNode* n, const std::string& what) {
  if (!expect(n, YKind::Scalar, what))
    return std::nullopt;
  return n->value;
}

std::optional<Name> YamlAccess::decl_name(const YNode* key, const std::string& what,
                                          bool joined, bool bare) {
  const std::string problem = declared_name_problem(key->value, what, joined, bare);
  if (!problem.empty()) {
    diag_.error(key->loc, problem);
    return std::nullopt;
  }
  return Name{key->value, key->loc};
}

std::optional<std::vector<int64_t>> YamlAccess::candidates(const YNode* n,
                                                           const std::string& what) {
  std::vector<int64_t> out;
  if (n->kind == YKind::Seq) {
    if (n->items.empty()) {
      diag_.error(n->loc, what + " has no candidates");
      return std::nullopt;
    }
    for (const auto& item : n->items) {
      auto v = integer(item.get(), "a candidate of " + what);
      if (!v)
        return std::nullopt;
      if (*v <= 0) {
        diag_.error(item->loc,
                    "candidate " + std::to_string(*v) + " of " + what + " is not positive");
        return std::nullopt;
      }
      if (std::find(out.begin(), out.end(), *v) != out.end()) {
        diag_.error(item->loc,
                    "candidate " + std::to_string(*v) + " of " + what + " is listed twice");
        return std::nullopt;
      }
      out.push_back(*v);
    }
    return out;
  }
  if (n->kind == YKind::Map) {
    if (!check_fields(n, {"range", "multiple_of"}, {"range"}, what))
      return std::nullopt;
    const YNode* r = n->get("range");
    if (!expect(r, YKind::Seq, "a range [lo, hi]"))
      return std::nullopt;
    if (r->items.size() != 2) {
      diag_.error(r->loc,
                  "a range has two entries [lo, hi], found " + std::to_string(r->items.size()));
      return std::nullopt;
    }
    auto lo = integer(r->items[0].get(), "the low end of the range");
    auto hi = integer(r->items[1].get(), "the high end of the range");
    if (!lo || !hi)
      return std::nullopt;
    int64_t step = 1;
    if (const YNode* m = n->get("multiple_of")) {
      auto s = integer(m, "multiple_of");
      if (!s)
        return std::nullopt;
      if (*s <= 0) {
        diag_.error(m->loc, "multiple_of must be positive, found " + std::to_string(*s));
        return std::nullopt;
      }
      step = *s;
    }
    if (*lo <= 0) {
      diag_.error(r->items[0]->loc, "range of " + what + " must start at a positive value, found " +
                                        std::to_string(*lo));
      return std::nullopt;
    }
    if (*lo > *hi) {
      diag_.error(r->loc, "empty range for " + what + ": low end " + std::to_string(*lo) +
                              " is greater than high end " + std::to_string(*hi));
      return std::nullopt;
    }
    int64_t rem = *lo % step, first = *lo;
    bool overflow = rem != 0 && __builtin_add_overflow(*lo, step - rem, &first);
    if (overflow || first > *hi) {
      diag_.error(n->loc, "range [" + std::to_string(*lo) + ", " + std::to_string(*hi) + "] of " +
                              what + " holds no multiple of " + std::to_string(step));
      return std::nullopt;
    }
    if ((*hi - first) / step + 1 > static_cast<int64_t>(kMaxCandidates)) {
      diag_.error(n->loc, "range of " + what + " expands to more than " +
                              std::to_string(kMaxCandidates) + " candidates");
      return std::nullopt;
    }
    for (int64_t v = first; v <= *hi; v += step) {
      out.push_back(v);
      if (*hi - v < step)
        break;
    }
    return out;
  }
  expect(n, YKind::Seq, "a list of candidates or {range: [lo, hi], multiple_of: n} for " + what);
  return std::nullopt;
}

std::string dtype_hint(const std::string& name, const std::vector<std::string>& candidates) {
  static const std::vector<std::pair<std::vector<std::string>, const char*>> aliases = {
      {{"float", "float32", "fp32", "single"}, "f32"},
      {{"double", "float64", "fp64"}, "f64"},
      {{"half", "float16", "fp16", "__half"}, "f16"},
      {{"bfloat16", "bfloat", "__nv_bfloat16", "__bf16"}, "bf16"},
      {{"int", "int32", "int32_t"}, "i32"},
      {{"long", "int64", "int64_t", "long long"}, "i64"},
      {{"char", "int8", "int8_t", "schar", "signed char"}, "i8"},
      {{"float8_e4m3fn", "fp8_e4m3", "e4m3fn", "float8_e4m3"}, "e4m3"},
      {{"float8_e5m2", "fp8_e5m2"}, "e5m2"},
      {{"int4", "int4_t", "sint4", "s4"}, "i4"},
      {{"uint4", "uint4_t", "quint4x2", "nibble"}, "u4"},
      {{"fp4", "float4", "float4_e2m1", "float4_e2m1fn", "float4_e2m1fn_x2", "e2m1fn", "mxfp4",
        "fp4_e2m1", "nvfp4"},
       "e2m1"},
      {{"float8_e8m0fnu", "e8m0fnu", "fp8_e8m0", "ue8m0", "mx_scale"}, "e8m0"},
  };
  std::string lower;
  for (char c : name)
    lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  for (const auto& [spellings, dtype] : aliases)
    for (const auto& s : spellings)
      if (lower == s)
        return std::string("; did you mean '") + dtype + "'?";
  // Unsigned spellings of C, C++, torch and numpy; the width is the name's, 32 when unnamed.
  const std::pair<std::vector<const char*>, const char*> unsigned_aliases[] = {
      {{"uint8", "uint8_t", "uchar", "unsigned char", "byte", "ubyte"}, "u8"},
      {{"uint16", "uint16_t", "ushort", "unsigned short"}, "u16"},
      {{"uint32", "uint32_t", "uint", "unsigned", "unsigned int"}, "u32"},
      {{"uint64", "uint64_t", "ulong", "unsigned long", "unsigned long long", "size_t"}, "u64"},
  };
  for (const auto& [spellings, dtype] : unsigned_aliases)
    for (const char* s : spellings)
      if (lower == s)
        return std::string("; did you mean '") + dtype + "'?";
  // A 4-bit format defined by a lookup table has no dtype: its codes are u4.
  if (lower == "nf4" || lower == "fp4_nf4" || lower == "af4")
    return "; " + name + " (a lookup-table format) has no dtype: store its codes as u4 and map "
           "them with a table tensor or '?:' (docs/spec.md \"Packed types\")";
  return did_you_mean(name, candidates);
}

} // namespace tilegen::spec
