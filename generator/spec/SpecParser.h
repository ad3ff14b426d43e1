// SpecParser: YamlTree -> spec::Spec. Checks the document's structure: required and unknown
// fields (with "did you mean"), YAML node types, literal integers, expression syntax, the
// schedule's candidate sets and target names. Name resolution and typing are Lowering's.
#pragma once

#include "spec/SpecAST.h"
#include "spec/YamlTree.h"
#include "support/Diagnostics.h"

#include <optional>

namespace tilegen::spec {

std::optional<Spec> parse_spec(const YamlFile& file, DiagEngine& diag);

// Parses one body list (ops); used by parse_spec and recursively for nested bodies.
class YamlAccess;
bool parse_ops(const YNode* list, YamlAccess& in, std::vector<Op>& out, int depth);

// Target names accepted in schedule.targets: those of targets/Target.h plus the names
// reserved for backends that are planned but not emitted yet.
bool is_known_target_name(const std::string& name);
std::vector<std::string> known_target_names();

} // namespace tilegen::spec
