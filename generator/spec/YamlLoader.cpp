// YamlLoader: pre-checks the raw bytes, then drives yaml-cpp's event parser into a YamlTree.
#include "spec/YamlLoader.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tilegen::spec {

namespace {

std::string hex_byte(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02X", c);
  return buf;
}

// Length of the valid UTF-8 sequence at text[i], or 0 if invalid (overlong forms, surrogates
// and code points above U+10FFFF are invalid too).
size_t utf8_length(const std::string& text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  size_t n;
  unsigned cp;
  if (c < 0x80)
    return 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size())
    return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

// Rejects bytes yaml-cpp should never see. Returns false after reporting.
bool check_bytes(const YamlFile& f, size_t begin, DiagEngine& diag) {
  const std::string& t = f.text();
  for (size_t i = begin; i < t.size();) {
    unsigned char c = static_cast<unsigned char>(t[i]);
    if (c == 0) {
      diag.error(f.loc_at(i), "NUL byte in spec file (is this a binary file?)");
      return false;
    }
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      diag.error(f.loc_at(i), "control character " + hex_byte(c) + " in spec file");
      return false;
    }
    size_t n = utf8_length(t, i);
    if (n == 0) {
      diag.error(f.loc_at(i), "invalid UTF-8 byte " + hex_byte(c) + " in spec file");
      return false;
    }
    i += n;
  }
  return true;
}

// Estimates how deep yaml-cpp will recurse, conservatively (it may over-estimate, never
// under-estimate by much): every '[' or '{' opens a level until its ']' or '}' (quoted or not:
// a bracket inside a string only makes the estimate larger); each distinct block indentation
// level may hold a mapping and a sequence (2 levels); each leading "- " or "? " on a line opens
// one more. Full-line comments are skipped.
bool check_depth(const YamlFile& f, size_t begin, int max_depth, DiagEngine& diag) {
  const std::string& t = f.text();
  std::vector<size_t> indents;
  long flow = 0;
  size_t i = begin;
  while (i < t.size()) {
    size_t indent = 0;
    while (i < t.size() && t[i] == ' ')
      ++i, ++indent;
    size_t line_end = t.find('\n', i);
    if (line_end == std::string::npos)
      line_end = t.size();
    // YAML forbids tabs in block indentation; yaml-cpp's own message for it is obscure.
    if (flow == 0 && i < line_end && t[i] == '\t') {
      size_t k = i;
      while (k < line_end && (t[k] == '\t' || t[k] == ' '))
        ++k;
      if (k < line_end && t[k] != '#' && t[k] != '\r') {
        diag.error(f.loc_at(i), "tab character in indentation (YAML indents with spaces only)");
        return false;
      }
    }
    bool blank = i >= line_end || t[i] == '#' || t[i] == '\r';
    if (!blank) {
      while (!indents.empty() && indents.back() > indent)
        indents.pop_back();
      if (indents.empty() || indents.back() < indent)
        indents.push_back(indent);
      long depth = 2 * static_cast<long>(indents.size()) - 1 + flow;
      for (size_t k = i; k < line_end; ++k) {
        char c = t[k];
        bool indicator = (c == '-' || c == '?') && (k + 1 == line_end || t[k + 1] == ' ');
        if (indicator && (k == i || t[k - 1] == ' ')) {
          ++depth;
        } else if (c == '[' || c == '{') {
          ++flow;
          ++depth;
        } else if (c == ']' || c == '}') {
          flow = flow > 0 ? flow - 1 : 0;
          --depth;
        }
        if (depth > max_depth) {
          diag.error(f.loc_at(k), "nesting too deep: more than " + std::to_string(max_depth) +
                                      " levels of lists and mappings");
          return false;
        }
      }
    }
    i = line_end + 1;
  }
  return true;
}

// Thrown by the tree builder after it reported an error, to stop yaml-cpp.
struct Abort {};

ScalarStyle style_at(const std::string& text, size_t pos) {
  if (pos >= text.size())
    return ScalarStyle::Plain;
  switch (text[pos]) {
  case '\'':
    return ScalarStyle::SingleQuoted;
  case '"':
    return ScalarStyle::DoubleQuoted;
  case '|':
    return ScalarStyle::Literal;
  case '>':
    return ScalarStyle::Folded;
  default:
    return ScalarStyle::Plain;
  }
}

class TreeBuilder : public YAML::EventHandler {
public:
  TreeBuilder(YamlFile& f, DiagEngine& diag, const YamlLimits& limits, size_t base)
      : file_(f), diag_(diag), limits_(limits), base_(base) {}

  int documents = 0;

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents > 1)
      fail(mark, "a spec file holds one YAML document; found a second one");
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    check_anchor(mark, anchor);
    add(make(YKind::Null, mark));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    fail(mark, "YAML aliases ('*name') are not supported in specs (a value that starts with '*' "
               "is read as one: quote it, e.g. \"*x\")");
  }
  void OnAnchor(const YAML::Mark& mark, const std::string& name) override {
    fail(mark, "YAML anchors ('&" + name + "') are not supported in specs (a value that starts "
               "with '&' is read as one: quote it, e.g. summary: \"&& of ...\")");
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    check_anchor(mark, anchor);
    check_tag(mark, tag);
    auto n = make(YKind::Scalar, mark);
    n->value = value;
    n->style = style_at(file_.text(), n->pos);
    // Caret width: the scalar as spelled, when it is spelled verbatim on one line.
    size_t quote = n->style == ScalarStyle::SingleQuoted || n->style == ScalarStyle::DoubleQuoted;
    if (n->style != ScalarStyle::Literal && n->style != ScalarStyle::Folded &&
        value.find('\n') == std::string::npos &&
        file_.text().compare(n->pos + quote, value.size(), value) == 0) {
      n->verbatim = true;
      n->loc.length = static_cast<int>(std::max<size_t>(1, value.size() + 2 * quote));
    }
    add(std::move(n));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    check_anchor(mark, anchor);
    check_tag(mark, tag);
    open(make(YKind::Seq, mark));
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    check_anchor(mark, anchor);
    check_tag(mark, tag);
    open(make(YKind::Map, mark));
  }
  void OnMapEnd() override {
    if (!stack_.empty() && stack_.back().key)
      internal_missing_value();
    close();
  }

  std::unique_ptr<YNode> root;

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& msg) {
    diag_.error(loc_of(mark), msg);
    throw Abort{};
  }
  SourceLoc loc_of(const YAML::Mark& mark) const {
    if (mark.is_null() || mark.pos < 0)
      return file_.file_loc();
    return file_.loc_at(base_ + static_cast<size_t>(mark.pos));
  }

private:
  struct Frame {
    YNode* node;
    std::unique_ptr<YNode> key;
    std::set<std::string> keys;
  };

  std::unique_ptr<YNode> make(YKind k, const YAML::Mark& mark) {
    if (++nodes_ > limits_.max_nodes)
      fail(mark, "spec file has too many YAML nodes (more than " +
                     std::to_string(limits_.max_nodes) + ")");
    auto n = std::make_unique<YNode>();
    n->kind = k;
    n->file = &file_;
    n->pos = mark.is_null() || mark.pos < 0 ? 0 : base_ + static_cast<size_t>(mark.pos);
    n->loc = loc_of(mark);
    return n;
  }

  void check_anchor(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (anchor != YAML::NullAnchor)
      fail(mark, "YAML anchors ('&name') are not supported in specs (a value that starts with "
                 "'&' is read as one: quote it)");
  }
  void check_tag(const YAML::Mark& mark, const std::string& tag) {
    if (!tag.empty() && tag != "?" && tag != "!")
      fail(mark, "YAML tags ('" + tag + "') are not supported in specs (a value that starts with "
                 "'!' is read as one: quote it, e.g. if: \"!flag\")");
  }

  void internal_missing_value() {
    // yaml-cpp always delivers key/value pairs; a dangling key means a malformed stream.
    diag_.error(stack_.back().key->loc, "mapping key without a value");
    throw Abort{};
  }

  // Adds n to the innermost open collection (or makes it the root); returns the raw pointer.
  YNode* add(std::unique_ptr<YNode> n) {
    YNode* raw = n.get();
    if (stack_.empty()) {
      root = std::move(n);
      return raw;
    }
    Frame& f = stack_.back();
    if (f.node->kind == YKind::Seq) {
      f.node->items.push_back(std::move(n));
    } else if (!f.key) {
      if (n->kind != YKind::Scalar) {
        diag_.error(n->loc,
                    std::string("mapping keys must be plain names, not a ") + ykind_name(n->kind));
        throw Abort{};
      }
      if (!f.keys.insert(n->value).second) {
        diag_.error(n->loc, "duplicate key '" + n->value + "'");
        if (const YNode* prev = f.node->key_node(n->value))
          diag_.note(prev->loc, "previous definition of '" + n->value + "' is here");
        throw Abort{};
      }
      f.key = std::move(n);
    } else {
      f.node->entries.emplace_back(std::move(f.key), std::move(n));
      f.key.reset();
    }
    return raw;
  }
  void open(std::unique_ptr<YNode> n) {
    YNode* raw = add(std::move(n));
    stack_.push_back(Frame{raw, nullptr, {}});
  }
  void close() {
    if (!stack_.empty())
      stack_.pop_back();
  }

  YamlFile& file_;
  DiagEngine& diag_;
  const YamlLimits& limits_;
  size_t base_; // bytes skipped before the text given to yaml-cpp (a UTF-8 byte order mark)
  size_t nodes_ = 0;
  std::vector<Frame> stack_;
};

// A file over the size limit, reported at its first byte past the limit.
void report_too_large(const YamlFile& file, const std::string& size, const YamlLimits& limits,
                      DiagEngine& diag) {
  diag.error(file.loc_at(limits.max_bytes),
             "spec file is too large (" + size + " bytes; the limit is " +
                 std::to_string(limits.max_bytes) + "); this is the first byte past it");
}

} // namespace

std::optional<std::string> read_spec_file(const std::string& path, DiagEngine& diag,
                                          const YamlLimits& limits) {
  SourceLoc l;
  l.file = std::make_shared<const std::string>(path);
  // O_NONBLOCK: opening a FIFO does not wait for a writer; reads block again below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    diag.error(l, "cannot open spec file: " + std::string(std::strerror(errno)));
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    diag.error(l, S_ISDIR(st.st_mode)
                      ? "this is a folder, not a spec file"
                      : "cannot read spec file: " + std::string(std::strerror(errno)));
    ::close(fd);
    return std::nullopt;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text(limits.max_bytes + 1, '\0');
  size_t got = 0;
  int error = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      error = errno;
    if (n <= 0)
      break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  if (error != 0) {
    diag.error(l, "cannot read spec file: " + std::string(std::strerror(error)));
    return std::nullopt;
  }
  if (got > limits.max_bytes) {
    // The size of a regular file is known; a pipe or device goes on past what was read.
    std::string size = S_ISREG(st.st_mode) && static_cast<size_t>(st.st_size) > limits.max_bytes
                           ? std::to_string(st.st_size)
                           : "more than " + std::to_string(limits.max_bytes);
    YamlFile file(diag.add_source(path, text), text);
    report_too_large(file, size, limits, diag);
    return std::nullopt;
  }
  return text;
}

std::unique_ptr<YamlFile> load_yaml(const std::string& path, std::string text, DiagEngine& diag,
                                    const YamlLimits& limits) {
  auto name = diag.add_source(path, text);
  auto file = std::make_unique<YamlFile>(name, std::move(text));
  const std::string& t = file->text();

  if (t.size() > limits.max_bytes) {
    report_too_large(*file, std::to_string(t.size()), limits, diag);
    return nullptr;
  }
  size_t base = t.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  if (!check_bytes(*file, base, diag) || !check_depth(*file, base, limits.max_depth, diag))
    return nullptr;

  TreeBuilder builder(*file, diag, limits, base);
  try {
    std::istringstream in(t.substr(base));
    YAML::Parser parser(in);
    if (parser.HandleNextDocument(builder))
      parser.HandleNextDocument(builder); // a second document is reported by the builder
  } catch (const Abort&) {
    return nullptr;
  } catch (const YAML::Exception& e) {
    diag.error(builder.loc_of(e.mark), "invalid YAML: " + e.msg);
    return nullptr;
  } catch (const std::bad_alloc&) {
    diag.error(file->file_loc(), "out of memory while reading the spec");
    return nullptr;
  } catch (const std::exception& e) {
    diag.error(file->file_loc(), std::string("invalid YAML: ") + e.what());
    return nullptr;
  }
  file->root = builder.root ? std::move(builder.root) : nullptr;
  if (!file->root) {
    file->root = std::make_unique<YNode>();
    file->root->kind = YKind::Null;
    file->root->file = file.get();
    file->root->loc = file->loc_at(0);
  }
  return file;
}

} // namespace tilegen::spec
