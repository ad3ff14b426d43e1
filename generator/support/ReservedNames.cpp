#include "support/ReservedNames.h"

#include <algorithm>
#include <cctype>

namespace tilegen {

namespace detail {
const std::vector<const char*>& header_macros();        // ReservedNamesData.cpp
const std::vector<const char*>& c_header_identifiers(); // ReservedNamesData.cpp
} // namespace detail

namespace {

std::set<std::string> words(std::initializer_list<const char*> w) {
  return std::set<std::string>(w.begin(), w.end());
}

// CUDA C++ names device and host code may use unqualified: built-in variables, vector types
// and their make_ functions, the math API (single and double precision, the C99 functions and
// CUDA's own), fp16 math without underscores, atomics, the namespaces the headers open.
std::set<std::string> cuda_api() {
  std::set<std::string> s = words({"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize",
                                   "dim3", "half", "half2", "half2_storage", "uint", "ulong",
                                   "ushort", "std", "nv", "printf", "malloc", "free", "memcpy",
                                   "memset", "assert", "clock", "clock64", "min", "max", "umin",
                                   "umax", "llmin", "llmax", "ullmin", "ullmax", "abs", "labs",
                                   "llabs", "mul24", "umul24", "mulhi", "umulhi", "mul64hi",
                                   "umul64hi", "make_half2", "make_bfloat162"});
  for (const char* base : {"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong",
                           "longlong", "ulonglong", "float", "double"})
    for (int n = 1; n <= 4; ++n) {
      const std::string t = std::string(base) + std::to_string(n);
      s.insert(t);
      s.insert("make_" + t);
    }
  for (const char* t : {"double4", "long4", "ulong4", "longlong4", "ulonglong4"})
    for (const char* a : {"_16a", "_32a"}) {
      s.insert(std::string(t) + a);
      s.insert(std::string("make_") + t + a);
    }
  for (const char* f :
       {"acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil", "copysign",
        "cos", "cosh", "cospi", "cyl_bessel_i0", "cyl_bessel_i1", "erf", "erfc", "erfcinv", "erfcx",
        "erfinv", "exp", "exp10", "exp2", "expm1", "fabs", "fdim", "fdivide", "floor", "fma",
        "fmax", "fmin", "fmod", "frexp", "hypot", "ilogb", "j0", "j1", "jn", "ldexp", "lgamma",
        "llrint", "llround", "log", "log10", "log1p", "log2", "logb", "lrint", "lround", "modf",
        "nan", "nearbyint", "nextafter", "norm", "norm3d", "norm4d", "normcdf", "normcdfinv", "pow",
        "rcbrt", "remainder", "remquo", "rhypot", "rint", "rnorm", "rnorm3d", "rnorm4d", "round",
        "rsqrt", "scalbln", "scalbn", "sin", "sincos", "sincospi", "sinh", "sinpi", "sqrt", "tan",
        "tanh", "tgamma", "trunc", "y0", "y1", "yn"}) {
    s.insert(f);
    s.insert(std::string(f) + "f");
  }
  for (const char* f : {"isfinite", "isinf", "isnan", "signbit"})
    s.insert(f);
  for (const char* f : {"ceil", "cos", "exp", "exp10", "exp2", "floor", "log", "log10", "log2",
                        "rcp", "rint", "rsqrt", "sin", "sqrt", "tanh", "tanh_approx", "trunc"}) {
    s.insert(std::string("h") + f);
    s.insert(std::string("h2") + f);
  }
  for (const char* op : {"Add", "Sub", "Exch", "Min", "Max", "Inc", "Dec", "CAS", "And", "Or",
                         "Xor"})
    for (const char* scope : {"", "_block", "_system"})
      s.insert(std::string("atomic") + op + scope);
  return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool lower_starts_with(std::string_view s, std::string_view p) { // p in lower case
  if (s.size() < p.size())
    return false;
  for (size_t i = 0; i < p.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != p[i])
      return false;
  return true;
}
bool upper_at(std::string_view s, size_t i) { return i < s.size() && s[i] >= 'A' && s[i] <= 'Z'; }
bool lower_at(std::string_view s, size_t i) { return i < s.size() && s[i] >= 'a' && s[i] <= 'z'; }

std::vector<ReservedList> build_lists() {
  std::vector<ReservedList> lists;
  lists.push_back({"The spec language",
                   "a function, cast, dtype or literal of the spec language, or `let`",
                   words({"min", "max", "abs", "exp", "exp2", "log", "log2", "sqrt", "rsqrt",
                          "tanh", "erf", "floor", "ceil", "cdiv", "f32", "f16", "bf16", "f64",
                          "i32", "i64", "i8", "e4m3", "e5m2", "u8", "u16", "u32", "u64", "bool",
                          "true", "false", "inf", "nan", "let"})});
  std::set<std::string> c = c11_keywords();
  c.insert({"alignas", "alignof", "constexpr", "nullptr", "static_assert", "thread_local",
            "typeof", "typeof_unqual"}); // C23
  lists.push_back({"C keywords (C11, C23)", "a C keyword", c});
  std::set<std::string> cxx = cxx_keywords();
  cxx.insert({"and_eq", "bitand", "bitor", "compl", "not_eq", "or_eq", "xor_eq"});
  lists.push_back({"C++ keywords and alternative tokens (C++20): the public header is also "
                   "C++, and CUDA sources are C++",
                   "a C++ keyword (the public header is also C++, CUDA sources are C++)", cxx});
  lists.push_back(
      {"WGSL keywords and reserved words (WGSL specification, \"Keyword Summary\" and "
       "\"Reserved Words\")",
       "a WGSL keyword or reserved word",
       words({"alias", "break", "case", "const", "const_assert", "continue", "continuing",
              "default", "diagnostic", "discard", "else", "enable", "false", "fn", "for", "if",
              "let", "loop", "override", "requires", "return", "struct", "switch", "true", "var",
              "while", "NULL", "Self", "abstract", "active", "alignas", "alignof", "as", "asm",
              "asm_fragment", "async", "attribute", "auto", "await", "become", "cast", "catch",
              "class", "co_await", "co_return", "co_yield", "coherent", "column_major", "common",
              "compile", "compile_fragment", "concept", "const_cast", "consteval", "constexpr",
              "constinit", "crate", "debugger", "decltype", "delete", "demote",
              "demote_to_helper", "do", "dynamic_cast", "enum", "explicit", "export", "extends",
              "extern", "external", "fallthrough", "filter", "final", "finally", "friend", "from",
              "fxgroup", "get", "goto", "groupshared", "highp", "impl", "implements", "import",
              "inline", "instanceof", "interface", "layout", "lowp", "macro", "macro_rules",
              "match", "mediump", "meta", "mod", "module", "move", "mut", "mutable", "namespace",
              "new", "nil", "noexcept", "noinline", "nointerpolation", "non_coherent",
              "noncoherent", "noperspective", "null", "nullptr", "of", "operator", "package",
              "packoffset", "partition", "pass", "patch", "pixelfragment", "precise", "precision",
              "premerge", "priv", "protected", "pub", "public", "readonly", "ref", "regardless",
              "register", "reinterpret_cast", "require", "resource", "restrict", "self", "set",
              "shared", "sizeof", "smooth", "snorm", "static", "static_assert", "static_cast",
              "std", "subroutine", "super", "target", "template", "this", "thread_local", "throw",
              "trait", "try", "type", "typedef", "typeid", "typename", "typeof", "union",
              "unless", "unorm", "unsafe", "unsized", "use", "using", "varying", "virtual",
              "volatile", "wgsl", "where", "with", "writeonly", "yield"})});
  std::set<std::string> macros(detail::header_macros().begin(), detail::header_macros().end());
  macros.insert({"linux", "unix", "i386"}); // GCC's GNU modes on Linux (i386: 32-bit x86)
  // Programs that include the public header have often included <errno.h> or defined NDEBUG:
  // a parameter of that name in the header's prototypes would be replaced.
  macros.insert({"errno", "NDEBUG"});
  lists.push_back({"Macros of the C and CUDA headers generated sources include, GCC's "
                   "predefined macros, and errno and NDEBUG (programs including the public "
                   "header often have them)",
                   "a macro of the C or CUDA headers the generated sources include", macros});
  lists.push_back({"File-scope identifiers of the C headers generated C sources include",
                   "declared by the C headers the generated C sources include",
                   std::set<std::string>(detail::c_header_identifiers().begin(),
                                         detail::c_header_identifiers().end())});
  lists.push_back({"CUDA device API (built-in variables, vector types, math, atomics)",
                   "a name of the CUDA device API", cuda_api()});
  std::set<std::string> wgsl = words(
      {"f16", "f32", "i32", "u32", "bool", "array", "atomic", "ptr", "sampler",
       "sampler_comparison", "function", "private", "workgroup", "uniform", "storage", "handle",
       "read", "write", "read_write", "abs", "acos", "acosh", "all", "any", "arrayLength",
       "asin", "asinh", "atan", "atan2", "atanh", "atomicAdd", "atomicAnd",
       "atomicCompareExchangeWeak", "atomicExchange", "atomicLoad", "atomicMax", "atomicMin",
       "atomicOr", "atomicStore", "atomicSub", "atomicXor", "bitcast", "ceil", "clamp", "cos",
       "cosh", "countLeadingZeros", "countOneBits", "countTrailingZeros", "cross", "degrees",
       "determinant", "distance", "dot", "dot4I8Packed", "dot4U8Packed", "exp", "exp2",
       "extractBits", "faceForward", "firstLeadingBit", "firstTrailingBit", "floor", "fma",
       "fract", "frexp", "insertBits", "inverseSqrt", "ldexp", "length", "log", "log2", "max",
       "min", "mix", "modf", "normalize", "pack2x16float", "pack2x16snorm", "pack2x16unorm",
       "pack4x8snorm", "pack4x8unorm", "pack4xI8", "pack4xI8Clamp", "pack4xU8",
       "pack4xU8Clamp", "pow", "quantizeToF16", "radians", "reflect", "refract", "reverseBits",
       "round", "saturate", "select", "sign", "sin", "sinh", "smoothstep", "sqrt", "step",
       "storageBarrier", "subgroupAdd", "subgroupAll", "subgroupAnd", "subgroupAny",
       "subgroupBallot", "subgroupBroadcast", "subgroupBroadcastFirst", "subgroupElect",
       "subgroupExclusiveAdd", "subgroupExclusiveMul", "subgroupInclusiveAdd",
       "subgroupInclusiveMul", "subgroupMax", "subgroupMin", "subgroupMul", "subgroupOr",
       "subgroupShuffle", "subgroupShuffleDown", "subgroupShuffleUp", "subgroupShuffleXor",
       "subgroupXor", "quadBroadcast", "quadSwapDiagonal", "quadSwapX", "quadSwapY", "tan",
       "tanh", "textureBarrier", "transpose", "trunc", "unpack2x16float", "unpack2x16snorm",
       "unpack2x16unorm", "unpack4x8snorm", "unpack4x8unorm", "unpack4xI8", "unpack4xU8",
       "workgroupBarrier", "workgroupUniformLoad", "local_invocation_id",
       "local_invocation_index", "global_invocation_id", "workgroup_id", "num_workgroups",
       "subgroup_invocation_id", "subgroup_size"});
  for (const char* v : {"vec2", "vec3", "vec4"}) {
    wgsl.insert(v);
    for (const char* t : {"i", "u", "f", "h"})
      wgsl.insert(std::string(v) + t);
  }
  for (int c = 2; c <= 4; ++c)
    for (int r = 2; r <= 4; ++r) {
      const std::string m = "mat" + std::to_string(c) + "x" + std::to_string(r);
      wgsl.insert(m);
      wgsl.insert(m + "f");
      wgsl.insert(m + "h");
    }
  lists.push_back({"WGSL predeclared types, enumerants, built-in functions and built-in values",
                   "a predeclared WGSL name", wgsl});
  // MSL is C++14 with address spaces and <metal_stdlib>: its own keywords and the library
  // names generated MSL uses (emit/MslEmitter.cpp, reserved_words).
  lists.push_back({"Metal Shading Language keywords, attributes and address spaces, and the "
                   "<metal_stdlib> types and functions generated MSL uses",
                   "a Metal Shading Language keyword or a <metal_stdlib> name generated MSL uses",
                   words({"kernel", "vertex", "fragment", "device", "threadgroup",
                          "threadgroup_imageblock", "constant", "thread", "ray_data",
                          "object_data", "visible", "stitchable", "metal", "half", "bfloat",
                          "uchar", "ushort", "uint", "ulong", "size_t", "ptrdiff_t", "float2",
                          "float3", "float4", "half2", "half4", "int2", "int3", "int4", "uint2",
                          "uint3", "uint4", "bool2", "bool4", "atomic_int", "atomic_uint",
                          "atomic_float", "simdgroup_matrix", "simdgroup_float8x8",
                          "simdgroup_half8x8", "simdgroup_bfloat8x8", "mem_flags",
                          "memory_order", "memory_order_relaxed", "INFINITY", "NAN", "MAXFLOAT",
                          "HUGE_VALF", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh",
                          "floor", "ceil", "fabs", "abs", "min", "max", "fma", "select",
                          "as_type", "isnan", "isinf", "threadgroup_barrier",
                          "simd_shuffle_xor", "simd_sum", "simd_max", "simd_min",
                          "simdgroup_multiply_accumulate", "simdgroup_load", "simdgroup_store",
                          "atomic_fetch_add_explicit"})});
  lists.push_back({"Names the generated code declares or uses next to spec names",
                   "a name the generated code declares or uses next to spec names",
                   words({"args", "launch", "out", "main"})});
  lists.push_back({"Members of JavaScript's Object.prototype (the ES module reads arguments as "
                   "properties of an object: an omitted one would read these)",
                   "a member of JavaScript's Object.prototype (the ES module reads each "
                   "argument as a property of its arguments object)",
                   words({"constructor", "hasOwnProperty", "isPrototypeOf",
                          "propertyIsEnumerable", "toLocaleString", "toString", "valueOf"})});
  // A word is listed once, in the first list that has it.
  std::set<std::string> seen;
  for (auto& l : lists) {
    std::set<std::string> own;
    for (const auto& w : l.words)
      if (seen.insert(w).second)
        own.insert(w);
    l.words = std::move(own);
  }
  return lists;
}

} // namespace

const std::set<std::string>& c11_keywords() {
  static const std::set<std::string> words = {
      "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
      "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
      "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
      "typedef", "union", "unsigned", "void", "volatile", "while", "_Alignas", "_Alignof",
      "_Atomic", "_Bool", "_Complex", "_Generic", "_Imaginary", "_Noreturn", "_Static_assert",
      "_Thread_local"};
  return words;
}

const std::set<std::string>& cxx_keywords() {
  static const std::set<std::string> words = {
      "alignas", "alignof", "and", "asm", "bool", "catch", "char16_t", "char32_t", "char8_t",
      "class", "concept", "consteval", "constexpr", "constinit", "const_cast", "co_await",
      "co_return", "co_yield", "decltype", "delete", "dynamic_cast", "explicit", "export",
      "false", "friend", "mutable", "namespace", "new", "noexcept", "not", "nullptr",
      "operator", "or", "private", "protected", "public", "reinterpret_cast", "requires",
      "static_assert", "static_cast", "template", "this", "thread_local", "throw", "true", "try",
      "typeid", "typename", "using", "virtual", "wchar_t", "xor"};
  return words;
}

const std::vector<ReservedList>& reserved_lists() {
  static const std::vector<ReservedList> lists = build_lists();
  return lists;
}

const std::set<std::string>& spec_language_words() { return reserved_lists().front().words; }

const std::vector<ReservedPattern>& reserved_patterns() {
  static const std::vector<ReservedPattern> patterns = {
      {"`tg` followed by anything, in any letter case (`tg_`, `TG_`, `tgv_`, `TgParams`)",
       "in tilegen's namespace (names beginning with 'tg' in any letter case belong to the "
       "generated code and the runtime)",
       [](std::string_view s) { return lower_starts_with(s, "tg"); }},
      {"`tilegen` followed by anything, in any letter case (`TILEGEN_RUNTIME_H`)",
       "in tilegen's namespace (the runtime's macros and header guards begin with TILEGEN)",
       [](std::string_view s) { return lower_starts_with(s, "tilegen"); }},
      {"`omp_`, `OMP_` (OpenMP)", "in OpenMP's namespace (omp_, OMP_)",
       [](std::string_view s) { return starts_with(s, "omp_") || starts_with(s, "OMP_"); }},
      {"`cuda`, `CUDA`, `CU_`, `CU` then a lower-case letter, `cu` then an upper-case letter, "
       "`cuuint` (the CUDA runtime and driver APIs: `cudaStream_t`, `CUDART_INF_F`, "
       "`CUtensorMap`, `cuTensorMapEncodeTiled`)",
       "in the CUDA APIs' namespace (cuda, CUDA, CU_, CUx, cuX, cuuint)",
       [](std::string_view s) {
         return starts_with(s, "cuda") || starts_with(s, "CUDA") || starts_with(s, "CU_") ||
                (starts_with(s, "CU") && lower_at(s, 2)) ||
                (starts_with(s, "cu") && upper_at(s, 2)) || starts_with(s, "cuuint");
       }},
      {"`nv_`, `NV_` (CUDA's `nv_bfloat16`, `NV_IF_TARGET`)",
       "in CUDA's namespace (nv_, NV_)",
       [](std::string_view s) { return starts_with(s, "nv_") || starts_with(s, "NV_"); }},
  };
  return patterns;
}

std::string name_spelling_problem(std::string_view name, bool joined) {
  if (!name.empty() && name.front() == '_')
    return "names must not begin with '_' (C, C++ and WGSL reserve such names for their "
           "compilers and libraries)";
  if (name.find("__") != std::string_view::npos)
    return "names must not contain '__' (reserved in C++ and WGSL, and the separator of the "
           "parts of generated symbol and file names)";
  if (name.size() > kMaxNameLength)
    return "names are at most " + std::to_string(kMaxNameLength) +
           " characters long (they become parts of C symbols and file names); this one has " +
           std::to_string(name.size());
  if (joined && !name.empty() && name.back() == '_')
    return "names of kernels, params, flags and shape classes must not end with '_' (they are "
           "joined with '_' into generated symbol and file names, where a trailing '_' would "
           "make two names read as one)";
  return "";
}

std::string reserved_name_reason(std::string_view name, bool bare) {
  const std::string s(name);
  const auto& lists = reserved_lists();
  const auto& patterns = reserved_patterns();
  // Parts of names: the spec language's words (the first list) and tilegen's families (the
  // first two patterns).
  for (size_t i = 0; i < (bare ? lists.size() : 1); ++i)
    if (lists[i].words.count(s))
      return lists[i].reason;
  for (size_t i = 0; i < (bare ? patterns.size() : 2); ++i)
    if (patterns[i].matches(name))
      return patterns[i].reason;
  return "";
}

bool is_header_macro(const std::string& name) {
  static const std::set<std::string> macros(detail::header_macros().begin(),
                                            detail::header_macros().end());
  return macros.count(name) > 0;
}

std::string reserved_names_markdown() {
  std::string md;
  md += "Spelling: identifiers `[A-Za-z][A-Za-z0-9_]*` of at most " +
        std::to_string(kMaxNameLength) +
        " characters, not beginning with `_` and without `__`; the names of kernels, params, "
        "flags and shape classes do not end with `_` either.\n\n";
  md += "Kernels, type parameters and shape classes appear in generated code only as parts of "
        "longer names: only the spec language's words and the first two families apply to "
        "them. Every other kind of name appears as it is: all of the lists and families "
        "apply.\n\n";
  md += "Families (by spelling):\n\n";
  for (const auto& p : reserved_patterns())
    md += "- " + p.title + "\n";
  for (const auto& l : reserved_lists()) {
    md += "\n**" + l.title + "** (" + std::to_string(l.words.size()) + "):\n";
    std::string line;
    for (const auto& w : l.words) {
      std::string tok = "`" + w + "`";
      if (!line.empty() && line.size() + 1 + tok.size() > 100) {
        md += line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + tok;
    }
    md += line + "\n";
  }
  return md;
}

} // namespace tilegen
