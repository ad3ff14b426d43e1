// YamlTree: the front end's own YAML document model. yaml-cpp's event parser builds it (see
// YamlLoader), so every node keeps its position, duplicate keys are still visible, and no two
// nodes are ever shared (anchors/aliases are rejected): walking it is linear in the file size.
#pragma once

#include "support/SourceLoc.h"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tilegen::spec {

enum class YKind { Null, Scalar, Seq, Map };
enum class ScalarStyle { Plain, SingleQuoted, DoubleQuoted, Literal, Folded };

const char* ykind_name(YKind k); // "null", "string", "list", "mapping"

class YamlFile;

struct YNode {
  YKind kind = YKind::Null;
  SourceLoc loc;  // first character of the node; for scalars length = source width (approx.)
  size_t pos = 0; // byte offset of loc in the file text
  const YamlFile* file = nullptr;

  // Scalar
  std::string value;
  ScalarStyle style = ScalarStyle::Plain;
  bool verbatim = false; // value is spelled byte for byte in the file at its content start

  // Seq
  std::vector<std::unique_ptr<YNode>> items;
  // Map, in document order (duplicates are rejected by the loader)
  std::vector<std::pair<std::unique_ptr<YNode>, std::unique_ptr<YNode>>> entries;

  bool is_scalar() const { return kind == YKind::Scalar; }
  bool is_map() const { return kind == YKind::Map; }
  bool is_seq() const { return kind == YKind::Seq; }
  bool is_null() const { return kind == YKind::Null; }

  // Map lookup by key text; nullptr if absent.
  const YNode* get(std::string_view key) const;
  // The key node of `key` (for locating "unknown field" errors); nullptr if absent.
  const YNode* key_node(std::string_view key) const;

  // Location of characters [offset, offset+length) of a scalar's value in the file. Exact for
  // plain scalars and for quoted scalars without escapes on one line; for escapes, multi-line
  // and block scalars the value's characters are matched in order against the source text
  // after the node's start, which lands on the right character in all but contrived cases; if
  // the match fails the scalar's start is returned.
  SourceLoc value_loc(size_t offset, size_t length) const;

private:
  size_t content_start() const;
  // File offset of each value byte (built on first use for non-verbatim scalars, so that
  // locating every token of a long expression stays linear); empty if matching failed.
  mutable std::vector<size_t> offsets_;
  mutable bool offsets_built_ = false;
};

// One loaded spec file: its text, line table and root node.
class YamlFile {
public:
  YamlFile(std::shared_ptr<const std::string> name, std::string text);

  const std::shared_ptr<const std::string>& name() const { return name_; }
  const std::string& text() const { return text_; }
  // 0-based byte offset -> 1-based line:col (col in bytes).
  SourceLoc loc_at(size_t pos, size_t length = 1) const;
  SourceLoc file_loc() const; // the file itself, no line

  std::unique_ptr<YNode> root;

private:
  std::shared_ptr<const std::string> name_;
  std::string text_;
  std::vector<size_t> line_starts_;
};

} // namespace tilegen::spec
