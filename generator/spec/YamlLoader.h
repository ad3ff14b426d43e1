// YamlLoader: spec file text -> YamlTree, with every failure a located diagnostic.
//
// Untrusted input is the normal case here (specs come from users, fuzzers, editors mid-edit),
// so before yaml-cpp sees a byte the text is checked for: size (> 1 MiB), NUL and control
// bytes, invalid UTF-8, and nesting depth (yaml-cpp recurses per level; 100000 '[' would
// overflow the stack). Anchors, aliases and tags are rejected (an alias bomb cannot expand),
// a node budget bounds memory, duplicate keys and non-scalar keys are errors, and a second
// document in the file is an error. Every yaml-cpp exception is caught and located.
#pragma once

#include "spec/YamlTree.h"
#include "support/Diagnostics.h"

#include <memory>
#include <optional>
#include <string>

namespace tilegen::spec {

struct YamlLimits {
  size_t max_bytes = 1 << 20; // 1 MiB
  int max_depth = 64;         // nesting of flow and block collections (estimated, see .cpp)
  size_t max_nodes = 200000;  // YAML nodes in one file
};

// Reads the spec file at `path` for load_yaml: at most limits.max_bytes + 1 bytes, so that a huge
// file, /dev/zero or an endless pipe costs no more than that. Opening a FIFO does not wait for a
// writer (with none, it reads as empty). Returns nullopt after a located error: the file cannot be
// opened or read, is a folder, or is over the limit (reported at the first byte past it).
std::optional<std::string> read_spec_file(const std::string& path, DiagEngine& diag,
                                          const YamlLimits& limits = {});

// Registers `text` with `diag` under `path` and parses it. Returns nullptr after reporting an
// error. An empty document (no content) yields a YamlFile whose root is a Null node.
std::unique_ptr<YamlFile> load_yaml(const std::string& path, std::string text, DiagEngine& diag,
                                    const YamlLimits& limits = {});

} // namespace tilegen::spec
