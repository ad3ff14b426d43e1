// YamlTree helpers: map lookup and the mapping of scalar value offsets back to the file.
#include "spec/YamlTree.h"

#include <algorithm>
#include <cctype>

namespace tilegen::spec {

const char* ykind_name(YKind k) {
  switch (k) {
  case YKind::Null:
    return "null";
  case YKind::Scalar:
    return "string";
  case YKind::Seq:
    return "list";
  case YKind::Map:
    return "mapping";
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

size_t YNode::content_start() const {
  const std::string& text = file->text();
  switch (style) {
  case ScalarStyle::Plain:
    return pos;
  case ScalarStyle::SingleQuoted:
  case ScalarStyle::DoubleQuoted:
    return pos + 1;
  case ScalarStyle::Literal:
  case ScalarStyle::Folded: {
    size_t nl = text.find('\n', pos);
    return nl == std::string::npos ? text.size() : nl + 1;
  }
  }
  return pos;
}

SourceLoc YNode::value_loc(size_t offset, size_t length) const {
  if (!file)
    return loc;
  const std::string& text = file->text();
  size_t start = content_start();
  if (start > text.size())
    return loc;
  offset = std::min(offset, value.size());
  length = std::max<size_t>(length, 1);
  if (verbatim)
    return file->loc_at(start + offset, length);
  if (!offsets_built_) {
    offsets_built_ = true;
    // Match the value's bytes in order against the source (skipping indentation, line breaks
    // and quote doubling; decoding the escapes of double-quoted scalars).
    bool dq = style == ScalarStyle::DoubleQuoted;
    size_t p = start;
    std::vector<size_t> table;
    table.reserve(value.size() + 1);
    while (table.size() < value.size()) {
      char want = value[table.size()];
      while (p < text.size() && text[p] != want && !(dq && text[p] == '\\'))
        ++p;
      if (p >= text.size())
        return loc; // table stays empty: every lookup falls back to the scalar's start
      if (dq && text[p] == '\\') {
        size_t src = 2, out = 1;
        char e = p + 1 < text.size() ? text[p + 1] : ' ';
        auto code_point_bytes = [&](size_t digits) -> size_t {
          unsigned long cp = 0;
          for (size_t k = 0; k < digits && p + 2 + k < text.size(); ++k) {
            char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[p + 2 + k])));
            cp = cp * 16 + static_cast<unsigned long>(c >= 'a' ? c - 'a' + 10 : c - '0');
          }
          return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        };
        if (e == 'x')
          src = 4, out = code_point_bytes(2);
        else if (e == 'u')
          src = 6, out = code_point_bytes(4);
        else if (e == 'U')
          src = 10, out = code_point_bytes(8);
        else if (e == 'N' || e == '_')
          out = 2;
        else if (e == 'L' || e == 'P')
          out = 3;
        else if (e == '\n' || e == '\r')
          out = 0; // escaped line break: produces nothing
        for (size_t k = 0; k < out && table.size() < value.size(); ++k)
          table.push_back(p);
        p += src;
      } else {
        table.push_back(p++);
      }
    }
    table.push_back(p); // one past the end: where a missing token would be
    offsets_ = std::move(table);
  }
  if (offsets_.empty())
    return loc;
  return file->loc_at(offsets_[offset], length);
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
