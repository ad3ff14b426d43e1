// The names a spec may not declare, as data: one policy for every kind of name (kernel,
// params, flags, scalars, tensors, type params, tile constants, block indices, buffers, loop
// and parallel variables, lets, shape classes), whatever the targets, because one spec serves
// every target and its names reach C, C++ (the public header, CUDA), WGSL and the ES module.
//
// A name is refused when
//   - its spelling breaks a rule (name_spelling_problem): a leading '_' or a "__" anywhere
//     (reserved to the implementation by C, C++ and WGSL, and "__" separates the parts of
//     generated symbol and file names), more than kMaxNameLength characters, or a trailing '_'
//     in a name joined with '_' into symbols and file names (kernel, params, flags, shape
//     classes);
//   - it is on one of the reserved lists (reserved_lists): the spec language's own words,
//     C / C++ / WGSL keywords and reserved words, macros and file-scope identifiers of the
//     headers generated sources include, the CUDA device API, WGSL's predeclared names, names
//     the generated code itself declares next to user names, Object.prototype's members;
//   - it matches a reserved family (reserved_patterns): `tg...` in any letter case (tilegen's
//     generated names and runtime), `tilegen...`, OpenMP's omp_, the CUDA APIs' prefixes.
// docs/spec.md "Reserved names" is generated from these tables (reserved_names_markdown);
// tests/unit/spec/ReservedNamesTest.cpp keeps the two equal. The lists of header macros and
// identifiers come from scripts/reserved_names_from_headers.sh (GCC 12, glibc 2.36, CUDA 13).
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tilegen {

// Names are at most this long: they become parts of C symbols and file names.
inline constexpr size_t kMaxNameLength = 64;

struct ReservedList {
  std::string title;  // the heading in docs/spec.md, e.g. "C keywords (C11, C23)"
  std::string reason; // completes "it is ...": "a C keyword"
  std::set<std::string> words;
};

struct ReservedPattern {
  std::string title;  // the doc's description of the family, e.g. "`tg` ... in any letter case"
  std::string reason; // completes "it is ..."
  bool (*matches)(std::string_view name);
};

// The reserved lists, in the order their reasons are reported. A word appears in the first
// list that reserves it only.
const std::vector<ReservedList>& reserved_lists();
const std::vector<ReservedPattern>& reserved_patterns();

// The spec language's own words (functions, casts, dtypes, literals, `let`): the first list.
const std::set<std::string>& spec_language_words();

// Why `name` breaks a spelling rule ("" if it does not). `joined`: the name is joined with '_'
// into generated symbol and file names (kernel, params, flags, shape classes). `name` is an
// identifier ([A-Za-z_][A-Za-z0-9_]*): that is checked first, by the front end.
std::string name_spelling_problem(std::string_view name, bool joined);

// Why `name` is reserved, completing "it is ..." ("" if it is not): the first list or family
// that reserves it. `bare`: the kind of name appears in generated code as an identifier of its
// own (tensors, params, flags, scalars, tile constants, block indices, buffers, loop and
// parallel variables, lets). Kernels, type parameters and shape classes only ever appear as a
// part of generated identifiers and file names (lib_gemm_f32, tgv_..__small_m): for them only
// the spec language's words and tilegen's families (tg, tilegen) are reserved, and
// Driver::load's table checks the names they compose.
std::string reserved_name_reason(std::string_view name, bool bare = true);

// True if `name` is a macro of the headers generated sources include (or predefined by GCC).
bool is_header_macro(const std::string& name);

// The "Reserved names" section of docs/spec.md, between its markers, as generated from the
// tables above.
std::string reserved_names_markdown();

// Keyword lists the printers use to check the names they print.
const std::set<std::string>& c11_keywords();
const std::set<std::string>& cxx_keywords(); // C++20 keywords that are not C11 keywords

} // namespace tilegen
