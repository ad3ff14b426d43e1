#include "support/Keywords.h"

namespace tilegen {

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

} // namespace tilegen
