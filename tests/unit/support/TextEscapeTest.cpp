// support/TextEscape: each context function keeps any text inside its comment or literal.
// Examples pin the spelling; random strings built from the characters that matter (comment
// and literal delimiters, trigraph parts, backslashes, line terminators of every output
// language, invalid UTF-8) check the property that nothing leaves, and literals decode back.
#include "support/TextEscape.h"
#include "support/InternalError.h"

#include <gtest/gtest.h>

#include <random>

namespace tilegen {
namespace {

const std::string kLS = "\xe2\x80\xa8", kPS = "\xe2\x80\xa9", kNEL = "\xc2\x85",
                  kRLO = "\xe2\x80\xae";

// Strings of pieces that can end or corrupt some output context.
std::string random_text(std::mt19937& rng) {
  static const std::vector<std::string> pieces = {
      "*",  "/",  "?",      "??",   "\\",   "\"",       "'",        "`",
      "$",  "{",  "}",      "%",    "=",    "-",        "(",        " ",
      "\t", "\n", "\r",     "\x0b", "\x0c", "\x1b",     "\x7f",     std::string(1, '\0'),
      kLS,  kPS,  kNEL,     kRLO,   "\xff", "\xe2\x80", "\xc3\xa9", "\xe2\x89\xa4",
      "a",  "x",  "#error", "*/",   "/*",   "//"};
  std::uniform_int_distribution<size_t> len(0, 24), pick(0, pieces.size() - 1);
  std::string s;
  for (size_t i = len(rng); i > 0; --i)
    s += pieces[pick(rng)];
  return s;
}

bool has_line_break(const std::string& s) {
  return s.find_first_of("\n\r\x0b\x0c") != std::string::npos || s.find(kLS) != std::string::npos ||
         s.find(kPS) != std::string::npos || s.find(kNEL) != std::string::npos;
}

bool valid_utf8_printable(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80                 ? 1
               : c >= 0xc2 && c <= 0xdf ? 2
               : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4
                                        : 0;
    if (n == 0 || i + n > s.size() || (n == 1 && (c < 0x20 || c == 0x7f)))
      return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80)
        return false;
    i += n;
  }
  return true;
}

bool has_trigraph(const std::string& s) {
  for (size_t i = 0; i + 2 < s.size(); ++i)
    if (s[i] == '?' && s[i + 1] == '?' &&
        std::string("=/'()!<>-").find(s[i + 2]) != std::string::npos)
      return true;
  return false;
}

// The last non-blank character of a C comment must not be a backslash (line splicing).
bool ends_in_backslash(const std::string& s) {
  size_t last = s.find_last_not_of(" \t");
  return last != std::string::npos && s[last] == '\\';
}

// The inside of a C string literal back to its bytes (the escapes c_string_body writes).
std::string decode_c_string(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    ++i;
    if (s[i] >= '0' && s[i] <= '7') {
      out += static_cast<char>(std::stoi(s.substr(i, 3), nullptr, 8));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

TEST(TextEscape, VisibleTextShowsWhatCannotBePrinted) {
  EXPECT_EQ(visible_text("plain text: M <= 64"), "plain text: M <= 64");
  EXPECT_EQ(visible_text("a\tb\nc\rd"), "a\\tb\\nc\\rd");
  EXPECT_EQ(visible_text(std::string("\x1b[31m\x7f") + std::string(1, '\0')),
            "\\x1b[31m\\x7f\\x00");
  EXPECT_EQ(visible_text(kNEL + kLS + kPS + kRLO), "\\u0085\\u2028\\u2029\\u202e");
  EXPECT_EQ(visible_text("\xff\xe2\x80 ok"), "\\xff\\xe2\\x80 ok");
  EXPECT_EQ(visible_text("\xc0\xaf"), "\\xc0\\xaf");          // overlong '/'
  EXPECT_EQ(visible_text("\xed\xa0\x80"), "\\xed\\xa0\\x80"); // a surrogate
  EXPECT_EQ(visible_text("\xc3\xa9 \xe2\x89\xa4 \xf0\x9f\x99\x82"),
            "\xc3\xa9 \xe2\x89\xa4 \xf0\x9f\x99\x82");
}

TEST(TextEscape, FoldWhitespace) {
  EXPECT_EQ(fold_whitespace("  a \n\t b\r\n" + kLS + "c" + kNEL + kPS + " "), "a b c");
  EXPECT_EQ(fold_whitespace("M <=\n  64"), "M <= 64");
  EXPECT_EQ(fold_whitespace(""), "");
  EXPECT_EQ(fold_whitespace("\xff  x"), "\xff x");
}

TEST(TextEscape, ForbiddenCharacters) {
  EXPECT_FALSE(find_forbidden_char("tabs\tand\nbreaks\r" + kNEL + kLS + kPS + " fold"));
  auto esc = find_forbidden_char("ab\x1b");
  ASSERT_TRUE(esc);
  EXPECT_EQ(esc->offset, 2u);
  EXPECT_EQ(esc->code_point, 0x1bu);
  EXPECT_FALSE(esc->bidi);
  auto c1 = find_forbidden_char("x\xc2\x9b");
  ASSERT_TRUE(c1);
  EXPECT_EQ(c1->length, 2u);
  EXPECT_EQ(c1->code_point, 0x9bu);
  auto bidi = find_forbidden_char("a" + kRLO);
  ASSERT_TRUE(bidi);
  EXPECT_TRUE(bidi->bidi);
  EXPECT_EQ(bidi->code_point, 0x202eu);
  EXPECT_FALSE(find_forbidden_char("caf\xc3\xa9 \xe2\x89\xa4"));
}

TEST(TextEscape, Examples) {
  EXPECT_EQ(c_block_comment("*/ f(); /*"), "* / f(); / *");
  EXPECT_EQ(c_block_comment("a */* b"), "a * / * b");
  EXPECT_EQ(c_block_comment("what?\?/"), "what?? /");
  EXPECT_EQ(c_block_comment("C:\\dir\\ "), "C:\\dir\\x5c ");
  EXPECT_EQ(c_line_comment("*/ ok ?\?= x\\"), "*/ ok ?? = x\\x5c");
  EXPECT_EQ(c_string_body("say \"hi\" \\ ?\?/ \xc3\xa9\n"),
            "say \\\"hi\\\" \\\\ ?\\?/ \\303\\251\\\\n");
  EXPECT_EQ(js_comment("*/ evil() /*"), "* / evil() /*");
  EXPECT_EQ(js_string_literal("a\"b\\" + kLS), "\"a\\\"b\\\\\\\\u2028\"");
  EXPECT_EQ(js_template_body("` ${x} \\"), "\\` \\${x} \\\\");
  EXPECT_EQ(json_string("\x1b\"" + std::string("\xff")), "\"\\\\x1b\\\"\\\\xff\"");
  EXPECT_EQ(wgsl_line_comment("a\nb */ /* c" + kLS), "a\\nb * / / * c\\u2028");
  EXPECT_EQ(xml_text("<script>a && b</script> \"x\" 'y'\n"),
            "&lt;script&gt;a &amp;&amp; b&lt;/script&gt; &quot;x&quot; &#39;y&#39;\\n");
  EXPECT_EQ(cmake_record_field("lib__k__f32__c.c"), "lib__k__f32__c.c");
  EXPECT_THROW(cmake_record_field("a b.c"), InternalError);
  EXPECT_THROW(cmake_record_field("a;b"), InternalError);
  EXPECT_THROW(cmake_record_field(""), InternalError);
}

TEST(TextEscape, NothingLeavesItsContext) {
  std::mt19937 rng(20240533);
  for (int i = 0; i < 20000; ++i) {
    const std::string t = random_text(rng);
    SCOPED_TRACE(visible_text(t));
    const std::string v = visible_text(t);
    EXPECT_TRUE(valid_utf8_printable(v));
    EXPECT_EQ(visible_text(v), v);

    const std::string cb = c_block_comment(t);
    EXPECT_EQ(cb.find("*/"), std::string::npos);
    EXPECT_EQ(cb.find("/*"), std::string::npos);
    EXPECT_FALSE(has_trigraph(cb) || ends_in_backslash(cb) || has_line_break(cb));

    const std::string cl = c_line_comment(t);
    EXPECT_FALSE(has_trigraph(cl) || ends_in_backslash(cl) || has_line_break(cl));

    const std::string cs = c_string_body(t);
    EXPECT_FALSE(has_trigraph(cs));
    for (char c : cs)
      EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << int(static_cast<unsigned char>(c));
    for (size_t k = 0; k < cs.size(); ++k)
      if (cs[k] == '"')
        EXPECT_TRUE(k > 0 && cs[k - 1] == '\\');
    EXPECT_EQ(decode_c_string(cs), v);

    const std::string js = js_comment(t);
    EXPECT_EQ(js.find("*/"), std::string::npos);
    EXPECT_FALSE(has_line_break(js));

    const std::string tpl = js_template_body(t);
    for (size_t k = 0; k < tpl.size(); ++k) // every ` and $ escaped: a backslash run of odd length
      if (tpl[k] == '`' || tpl[k] == '$') {
        size_t b = 0;
        while (b < k && tpl[k - 1 - b] == '\\')
          ++b;
        EXPECT_EQ(b % 2, 1u);
      }

    const std::string json = json_string(t);
    EXPECT_TRUE(valid_utf8_printable(json));
    ASSERT_GE(json.size(), 2u);
    EXPECT_EQ(json.front(), '"');
    EXPECT_EQ(json.back(), '"');
    EXPECT_EQ(js_string_literal(t), json);
    std::string body = json.substr(1, json.size() - 2), back;
    for (size_t k = 0; k < body.size(); ++k) {
      if (body[k] == '\\') {
        ASSERT_LT(k + 1, body.size());
        ASSERT_TRUE(body[k + 1] == '"' || body[k + 1] == '\\');
        ++k;
      } else {
        ASSERT_NE(body[k], '"');
      }
      back += body[k];
    }
    EXPECT_EQ(back, v);

    const std::string w = wgsl_line_comment(t);
    EXPECT_EQ(w.find("*/"), std::string::npos);
    EXPECT_EQ(w.find("/*"), std::string::npos);
    EXPECT_FALSE(has_line_break(w));

    // XML/HTML text and attribute values (tilegen explain): no markup character survives, and
    // undoing the five references gives the visible text back.
    const std::string x = xml_text(t);
    EXPECT_TRUE(valid_utf8_printable(x));
    EXPECT_EQ(x.find_first_of("<>\"'"), std::string::npos);
    std::string undone;
    for (size_t k = 0; k < x.size(); ++k) {
      if (x[k] != '&') {
        undone += x[k];
        continue;
      }
      size_t end = x.find(';', k);
      ASSERT_NE(end, std::string::npos);
      std::string ref = x.substr(k, end + 1 - k);
      const char* plain = ref == "&amp;" ? "&" : ref == "&lt;" ? "<" : ref == "&gt;" ? ">"
                          : ref == "&quot;" ? "\"" : ref == "&#39;" ? "'" : nullptr;
      ASSERT_NE(plain, nullptr) << ref;
      undone += plain;
      k = end;
    }
    EXPECT_EQ(undone, v);
  }
}

} // namespace
} // namespace tilegen
