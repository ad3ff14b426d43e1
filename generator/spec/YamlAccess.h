// YamlAccess: typed reads of YamlTree nodes for SpecParser, each failure a located error
// naming what was expected ("expected a list of dimensions, found a mapping").
#pragma once

#include "spec/ExprAST.h"
#include "spec/SpecAST.h"
#include "spec/YamlTree.h"
#include "support/Diagnostics.h"

#include <initializer_list>
#include <optional>
#include <string>

namespace tilegen::spec {

class YamlAccess {
public:
  explicit YamlAccess(DiagEngine& diag) : diag_(diag) {}

  DiagEngine& diag() { return diag_; }

  // Reports "expected <what>, found <kind>" unless n has kind k.
  bool expect(const YNode* n, YKind k, const std::string& what);

  // Every key of map must be in `allowed` (unknown -> error with did-you-mean); every key of
  // `required` must be present (missing -> error at the mapping). `context` names the
  // mapping in messages ("tensor 'A'").
  bool check_fields(const YNode* map, std::initializer_list<const char*> allowed,
                    std::initializer_list<const char*> required, const std::string& context);

  // An expression: a scalar parsed by ExprParser, located per token.
  SExprPtr expr(const YNode* n, const std::string& what);
  // A statement of a parallel body.
  bool stmt(const YNode* n, SStmt& out);
  // An integer literal (optionally signed); overflow is an error.
  std::optional<int64_t> integer(const YNode* n, const std::string& what);
  // true / false.
  std::optional<bool> boolean(const YNode* n, const std::string& what);
  // A plain string scalar.
  std::optional<std::string> string(const YNode* n, const std::string& what);
  // A declared name (a mapping key): an identifier, spelled by the rules of declared names and
  // not reserved (declared_name_problem). `joined`: a kernel, param, flag or shape class name;
  // `bare`: false for a kernel, type parameter or shape class (parts of generated names only).
  std::optional<Name> decl_name(const YNode* key, const std::string& what, bool joined = false,
                                bool bare = true);
  // A list of positive integers, or {range: [lo, hi], multiple_of: n}, expanded.
  std::optional<std::vector<int64_t>> candidates(const YNode* n, const std::string& what);

private:
  DiagEngine& diag_;
};

// Returns "; did you mean 'x'?" or "".
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);
// The hint for an unknown dtype: another language's spelling of a dtype ("float", "int32_t",
// "half", "bfloat16", "uint8_t", "unsigned", ...) names tilegen's ("; did you mean 'f32'?",
// "; did you mean 'u32'?"); anything else is did_you_mean over `candidates`.
std::string dtype_hint(const std::string& name, const std::vector<std::string>& candidates);

} // namespace tilegen::spec
