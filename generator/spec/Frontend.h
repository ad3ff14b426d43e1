// The front end's entry point: YAML spec file -> checked ir::Kernels. Everything YAML stays
// behind this header (nothing after it includes yaml-cpp).
#pragma once

#include "ir/IR.h"
#include "support/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace tilegen::spec {

// Parses, validates and lowers one spec file. On success returns one ir::Kernel per type
// binding (Cartesian product of `types`, declaration order; a spec without `types` gives one).
// On any user error reports it through `diag` (file:line:col, source line, caret) and returns
// nullopt. Never throws for bad input; never crashes or hangs on any byte sequence.
std::optional<std::vector<ir::Kernel>> load_kernels(const std::string& path, DiagEngine& diag);

// Same, with the text given (for tests and stdin); `path` is used in messages only.
std::optional<std::vector<ir::Kernel>> load_kernels_from_text(const std::string& path,
                                                              std::string text, DiagEngine& diag);

} // namespace tilegen::spec
