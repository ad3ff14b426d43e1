// YamlTree helpers: map lookup and the mapping of scalar value offsets back to the file.
#include "spec/YamlTree.h"

#include <algorithm>

namespace tilegen::spec {

const char* ykind_name(YKind k) {
  switch (k) {
  case YKind::Null: return "null";
  case YKind::Scalar: return "string";
  case YKind::Seq: return "list";
  case YKind::Map: return "mapping";
  }
  return "?";
}

const YNode* YNode::get(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k->kind == YKind::Scalar && k->value == key)
      return v.get();
  return nullptr;
}

const YNode* YNode::key_node(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k->kind == YKind::Scalar && k->value == key)
      return k.get();
  return nullptr;
}

SourceLoc YNode::value_loc(size_t offset, size_t length) const {
  if (!file)
    return loc;
  const std::string& text = file->text();
  size_t start = pos;
  switch (style) {
  case ScalarStyle::Plain: break;
  case ScalarStyle::SingleQuoted:
  case ScalarStyle::DoubleQuoted: start = pos + 1; break;
  case ScalarStyle::Literal:
  case ScalarStyle::Folded: {
    size_t nl = text.find('\n', pos);
    start = nl == std::string::npos ? text.size() : nl + 1;
    break;
  }
  }
  if (start > text.size())
    return loc;
  offset = std::min(offset, value.size());
  // Fast path: the value is spelled verbatim in the file.
  if (text.compare(start, value.size(), value) == 0)
    return file->loc_at(start + offset, std::max<size_t>(length, 1));
  // Match the value's characters in order against the source (skipping indentation, line
  // breaks, escape backslashes, quote doubling). Bounded by the file size.
  size_t p = start;
  for (size_t i = 0; i < offset; ++i) {
    while (p < text.size() && text[p] != value[i])
      ++p;
    if (p >= text.size())
      return loc;
    ++p;
  }
  if (offset < value.size()) {
    while (p < text.size() && text[p] != value[offset])
      ++p;
    if (p >= text.size())
      return loc;
  }
  return file->loc_at(p, std::max<size_t>(length, 1));
}

YamlFile::YamlFile(std::shared_ptr<const std::string> name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n')
      line_starts_.push_back(i + 1);
}

SourceLoc YamlFile::loc_at(size_t pos, size_t length) const {
  pos = std::min(pos, text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), pos);
  size_t line = static_cast<size_t>(it - line_starts_.begin()); // 1-based
  SourceLoc l;
  l.file = name_;
  l.line = static_cast<int>(line);
  l.col = static_cast<int>(pos - line_starts_[line - 1] + 1);
  l.length = static_cast<int>(std::min<size_t>(std::max<size_t>(length, 1), 1 << 20));
  return l;
}

SourceLoc YamlFile::file_loc() const {
  SourceLoc l;
  l.file = name_;
  return l;
}

} // namespace tilegen::spec
