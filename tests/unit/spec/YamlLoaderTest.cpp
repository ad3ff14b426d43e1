// YamlLoader: positions of nodes and of characters inside scalars, and the input limits.
#include "spec/YamlLoader.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace tilegen;
using namespace tilegen::spec;

namespace {

struct Loaded {
  std::ostringstream out;
  DiagEngine diag{out};
  std::unique_ptr<YamlFile> file;
  explicit Loaded(const std::string& text, YamlLimits limits = {}) {
    file = load_yaml("f.yaml", text, diag, limits);
  }
  std::string first_line() const { return out.str().substr(0, out.str().find('\n')); }
};

std::string where(const SourceLoc& l) {
  return std::to_string(l.line) + ":" + std::to_string(l.col);
}

} // namespace

TEST(YamlLoader, NodePositionsAreOneBased) {
  Loaded y("kernel: k\ntensors:\n  A: {type: f32, shape: [M, K]}\n");
  ASSERT_TRUE(y.file) << y.out.str();
  const YNode* root = y.file->root.get();
  ASSERT_TRUE(root->is_map());
  EXPECT_EQ(where(root->key_node("kernel")->loc), "1:1");
  EXPECT_EQ(root->key_node("kernel")->loc.length, 6);
  EXPECT_EQ(where(root->get("kernel")->loc), "1:9");
  const YNode* a = root->get("tensors")->get("A");
  EXPECT_EQ(where(a->loc), "3:6");
  const YNode* shape = a->get("shape");
  ASSERT_TRUE(shape->is_seq());
  EXPECT_EQ(where(shape->items[1]->loc), "3:29");
}

TEST(YamlLoader, ScalarValueLocations) {
  Loaded y("a: x + y\n"
           "b: \"x + y\"\n"
           "c: 'it''s + y'\n"
           "d: |\n"
           "  x +\n"
           "  y\n"
           "e: \"p\\tq + r\"\n"
           "f: \"\\u00e9 + \\x41 + z\"\n");
  ASSERT_TRUE(y.file) << y.out.str();
  const YNode* r = y.file->root.get();
  EXPECT_EQ(where(r->get("a")->value_loc(4, 1)), "1:8"); // plain: the mark is the first char
  EXPECT_EQ(where(r->get("b")->value_loc(4, 1)), "2:9"); // double-quoted: +1 for the quote
  EXPECT_EQ(r->get("b")->loc.length, 7);                 // caret covers the quotes
  EXPECT_EQ(r->get("c")->value, "it's + y");
  EXPECT_EQ(where(r->get("c")->value_loc(7, 1)), "3:13"); // after the doubled quote
  EXPECT_EQ(r->get("d")->style, ScalarStyle::Literal);
  EXPECT_EQ(where(r->get("d")->value_loc(0, 1)), "5:3"); // block: matched after the indicator
  EXPECT_EQ(where(r->get("d")->value_loc(4, 1)), "6:3");
  EXPECT_EQ(where(r->get("e")->value_loc(6, 1)), "7:12"); // after an escape sequence
  EXPECT_EQ(r->get("f")->value, "\xC3\xA9 + A + z");
  EXPECT_EQ(where(r->get("f")->value_loc(9, 1)), "8:21"); // after \u and \x escapes
}

TEST(YamlLoader, ByteOrderMarkIsSkipped) {
  Loaded y("\xEF\xBB\xBFkernel: k\nsummary: s\n");
  ASSERT_TRUE(y.file) << y.out.str();
  EXPECT_EQ(where(y.file->root->get("summary")->loc), "2:10");
}

TEST(YamlLoader, EmptyAndCommentOnlyFilesGiveANullRoot) {
  for (const char* text : {"", "# only a comment\n", "---\n", "\n\n"}) {
    Loaded y(text);
    ASSERT_TRUE(y.file) << text;
    EXPECT_TRUE(y.file->root->is_null()) << text;
  }
}

TEST(YamlLoader, Rejections) {
  struct Case {
    std::string text;
    std::string first_line;
  };
  const Case cases[] = {
      {"a: [1, 2\n", "f.yaml:2:1: error: invalid YAML: end of sequence flow not found"},
      {"a: 1\na: 2\n", "f.yaml:2:1: error: duplicate key 'a'"},
      {"a: &x 1\nb: *x\n", "f.yaml:1:4: error: YAML anchors ('&x') are not supported in specs (a value "
                           "that starts with '&' is read as one: quote it, e.g. summary: \"&& of ...\")"},
      {"a: !!int 1\n",
       "f.yaml:1:4: error: YAML tags ('tag:yaml.org,2002:int') are not supported in specs (a value that "
       "starts with '!' is read as one: quote it, e.g. if: \"!flag\")"},
      {"a: 1\n---\nb: 2\n",
       "f.yaml:2:1: error: a spec file holds one YAML document; found a second one"},
      {"? [a]\n: 1\n", "f.yaml:1:3: error: mapping keys must be plain names, not a list"},
      {std::string("a: 1\0", 5),
       "f.yaml:1:5: error: NUL byte in spec file (is this a binary file?)"},
      {"a: \xC0\xAF\n", "f.yaml:1:4: error: invalid UTF-8 byte 0xC0 in spec file"},     // overlong
      {"a: \xED\xA0\x80\n", "f.yaml:1:4: error: invalid UTF-8 byte 0xED in spec file"}, // surrogate
      {"a: \x1b[0m\n", "f.yaml:1:4: error: control character 0x1B in spec file"},
      {"a:\n\tb: 1\n", "f.yaml:2:1: error: tab character in indentation (YAML indents with spaces "
                       "only)"},
  };
  for (const auto& c : cases) {
    Loaded y(c.text);
    EXPECT_FALSE(y.file) << c.text;
    EXPECT_EQ(y.first_line(), c.first_line) << c.text;
  }
}

TEST(YamlLoader, ValidUtf8IsAccepted) {
  Loaded y("summary: \"r\xC3\xA9sum\xC3\xA9 \xE2\x86\x92 \xF0\x9F\x98\x80\"\n");
  EXPECT_TRUE(y.file) << y.out.str();
}

TEST(YamlLoader, Limits) {
  YamlLimits small;
  small.max_bytes = 100;
  Loaded big(std::string(101, '#'), small);
  EXPECT_FALSE(big.file);
  EXPECT_EQ(big.first_line(),
            "f.yaml:1:101: error: spec file is too large (101 bytes; the limit is 100); this is "
            "the first byte past it");

  Loaded deep(std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_FALSE(deep.file);
  EXPECT_NE(deep.first_line().find("nesting too deep"), std::string::npos);

  std::string block;
  for (int i = 0; i < 200; ++i)
    block += std::string(i, ' ') + "a:\n";
  Loaded deep_block(block);
  EXPECT_FALSE(deep_block.file);
  EXPECT_NE(deep_block.first_line().find("nesting too deep"), std::string::npos);

  std::string ok;
  for (int i = 0; i < 20; ++i)
    ok += std::string(2 * i, ' ') + "a:\n";
  Loaded shallow(ok + std::string(40, ' ') + "1\n");
  EXPECT_TRUE(shallow.file) << shallow.out.str();

  YamlLimits few;
  few.max_nodes = 10;
  Loaded many("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n", few);
  EXPECT_FALSE(many.file);
  EXPECT_NE(many.first_line().find("too many YAML nodes"), std::string::npos);
}

TEST(YamlLoader, BracketsInsideStringsOnlyMakeTheEstimateLarger) {
  // 40 brackets inside a quoted string plus ordinary nesting stays under the limit.
  Loaded y("a: {b: [\"" + std::string(40, '[') + "\"]}\n");
  EXPECT_TRUE(y.file) << y.out.str();
}
