// Escaping of text the generator does not control, per output context: see TextEscape.h.
#include "support/TextEscape.h"

#include "support/InternalError.h"

#include <cstdint>
#include <cstdio>

namespace tilegen {

namespace {

// The code point of the UTF-8 sequence at s[i] and its length; length 0 if s[i] does not start
// a valid sequence (a stray continuation byte, a truncated sequence, an overlong form, a
// surrogate, a value past U+10FFFF).
uint32_t decode_utf8(std::string_view s, size_t i, size_t& len) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  len = 0;
  if (c < 0x80) {
    len = 1;
    return c;
  }
  size_t n;
  uint32_t cp, min;
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2, cp = c & 0x1f, min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3, cp = c & 0x0f, min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4, cp = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size())
    return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80)
      return 0;
    cp = (cp << 6) | (b(i + k) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return 0;
  len = n;
  return cp;
}

std::string hex_escape(const char* format, unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// The third characters of the nine trigraphs ??= ??/ ??' ??( ??) ??! ??< ??> ??-.
bool is_trigraph_char(char c) {
  return std::string_view("=/'()!<>-").find(c) != std::string_view::npos;
}

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The C and C++ comment rules of c_block_comment / c_line_comment, on visible text.
std::string c_comment(std::string_view text, bool block) {
  std::string v = visible_text(text), out;
  for (char c : v) {
    if (block && !out.empty() &&
        ((out.back() == '*' && c == '/') || (out.back() == '/' && c == '*')))
      out += ' ';
    if (is_trigraph_char(c) && ends_with(out, "??"))
      out += ' ';
    out += c;
  }
  size_t last = out.find_last_not_of(" \t");
  if (last != std::string::npos && out[last] == '\\')
    out.replace(last, 1, "\\x5c");
  return out;
}

} // namespace

std::string visible_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t len;
    uint32_t cp = decode_utf8(text, i, len);
    if (len == 0) { // not UTF-8: the byte, in hex
      out += hex_escape("\\x%02x", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (cp == '\t')
      out += "\\t";
    else if (cp == '\n')
      out += "\\n";
    else if (cp == '\r')
      out += "\\r";
    else if (cp < 0x20 || cp == 0x7f)
      out += hex_escape("\\x%02x", cp);
    else if ((cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
             (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
      out += hex_escape("\\u%04x", cp);
    else
      out.append(text.substr(i, len));
    i += len;
  }
  return out;
}

std::string fold_whitespace(std::string_view text) {
  std::string out;
  bool space = false;
  for (size_t i = 0; i < text.size();) {
    size_t len;
    uint32_t cp = decode_utf8(text, i, len);
    if (len == 0)
      len = 1, cp = 0; // not UTF-8: kept as it is (visible_text shows it)
    bool ws = cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == 0x85 || cp == 0x2028 ||
              cp == 0x2029;
    if (ws) {
      space = !out.empty();
    } else {
      if (space)
        out += ' ';
      space = false;
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::optional<ForbiddenChar> find_forbidden_char(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t len;
    uint32_t cp = decode_utf8(text, i, len);
    if (len == 0) {
      ++i;
      continue;
    }
    bool folded = cp == '\t' || cp == '\n' || cp == '\r' || cp == 0x85;
    bool control = (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) && !folded;
    bool bidi = (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
    if (control || bidi)
      return ForbiddenChar{i, len, cp, bidi};
    i += len;
  }
  return std::nullopt;
}

std::string c_block_comment(std::string_view text) {
  return c_comment(text, true);
}
std::string c_line_comment(std::string_view text) {
  return c_comment(text, false);
}

std::string c_string_body(std::string_view text) {
  std::string out;
  char prev = 0;
  for (char c : visible_text(text)) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\' || (c == '?' && prev == '?'))
      out += '\\', out += c;
    else if (u < 0x20 || u >= 0x7f) // UTF-8 bytes of visible text: octal, never more digits
      out += hex_escape("\\%03o", u);
    else
      out += c;
    prev = c;
  }
  return out;
}

std::string js_comment(std::string_view text) {
  std::string out;
  for (char c : visible_text(text)) {
    if (c == '/' && !out.empty() && out.back() == '*')
      out += ' ';
    out += c;
  }
  return out;
}

std::string js_string_literal(std::string_view text) {
  return json_string(text);
}

std::string js_template_body(std::string_view text) {
  std::string out;
  for (char c : visible_text(text)) {
    if (c == '`' || c == '\\' || c == '$')
      out += '\\';
    out += c;
  }
  return out;
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : visible_text(text)) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string wgsl_line_comment(std::string_view text) {
  std::string out;
  for (char c : visible_text(text)) {
    if (!out.empty() && ((out.back() == '*' && c == '/') || (out.back() == '/' && c == '*')))
      out += ' ';
    out += c;
  }
  return out;
}

std::string xml_text(std::string_view text) {
  std::string out;
  for (char c : visible_text(text)) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

const std::string& cmake_record_field(const std::string& field) {
  bool ok = !field.empty();
  for (char c : field)
    ok &= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '.' || c == '+' || c == '=' || c == ',' || c == '-';
  TG_ASSERT(ok, "'" + visible_text(field) +
                    "' cannot be a field of a cmake record (generated names only)");
  return field;
}

} // namespace tilegen
