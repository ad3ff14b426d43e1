// Small string helpers shared by the emitters and the driver.
#pragma once

#include <string>
#include <vector>

namespace tilegen {

// parts[0] + sep + parts[1] + ... ("" for no parts).
inline std::string join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i)
      s += sep;
    s += parts[i];
  }
  return s;
}

} // namespace tilegen
