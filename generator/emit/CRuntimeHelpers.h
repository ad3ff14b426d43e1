// The static helper functions a C variant may call (16-bit float conversions, floor division,
// min/max, bounds checks). Each variant file carries the ones it uses, so it is self-contained.
#pragma once

#include <set>
#include <string>

namespace tilegen::emit {

// Source text of the helpers named in `used` and of the helpers they call, in dependency
// order (deterministic). Unknown names are internal errors.
std::string c_helper_source(const std::set<std::string>& used);

} // namespace tilegen::emit
