// Reserved words of the languages tilegen prints, as data: the C printer renames spec names
// that collide with them, and the CLI rejects spec names that would become parameter names
// in a public header that C and C++ both include.
#pragma once

#include <set>
#include <string>

namespace tilegen {

const std::set<std::string>& c11_keywords();
const std::set<std::string>& cxx_keywords(); // C++20 keywords that are not C11 keywords

} // namespace tilegen
