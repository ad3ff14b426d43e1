// TextEscape: text the generator does not control (spec text: a kernel's summary, the source
// text of an expression; command-line text: spec paths), made safe for each place of generated
// output it is printed in. Every emitter routes such text through one of these functions;
// identifiers and numbers the front end validated are printed as they are.
//
// Two layers. First, visible_text(): one line of visible text, whatever the input: a tab, line
// feed and carriage return become `\t`, `\n`, `\r`; other C0 controls and DEL become `\xNN`;
// C1 controls (U+0080..U+009F, NEL among them), the line and paragraph separators U+2028 and
// U+2029 and the bidirectional controls (U+202A..U+202E, U+2066..U+2069: "Trojan Source")
// become `\uXXXX`; a byte that is not part of valid UTF-8 becomes `\xNN`. Everything else
// (printable ASCII and other valid UTF-8) is kept. So the result holds no line terminator of
// any output language (C, CUDA, WGSL, JavaScript, JSON) and no byte a compiler or parser could
// reject. Then each context function escapes that context's delimiters, so the text can never
// end the comment or literal it is printed in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tilegen {

// One line of visible, valid UTF-8 text (above). Identity on printable ASCII.
std::string visible_text(std::string_view text);

// Runs of whitespace (space, tab, LF, CR, NEL, U+2028, U+2029) as one space, none at either
// end: the spelling of an expression's source text (whitespace is insignificant there) or of a
// kernel's summary (the front end folds it so; docs/spec.md).
std::string fold_whitespace(std::string_view text);

// The first character of `text` that one line of text may not hold even after
// fold_whitespace: a control character other than the whitespace it folds (C0, DEL, C1 but
// NEL) or a bidirectional control (U+202A..U+202E, U+2066..U+2069). Invalid UTF-8 is skipped
// (the spec loader rejects it). The front end's rule for a kernel's summary.
struct ForbiddenChar {
  size_t offset; // byte offset in text
  size_t length; // bytes of its UTF-8 sequence
  uint32_t code_point;
  bool bidi; // a bidirectional control, not a control character
};
std::optional<ForbiddenChar> find_forbidden_char(std::string_view text);

// C and C++ (and CUDA). The body of a /* ... */ comment: `*/` and `/*` are broken apart
// ("* /", "/ *"), a trigraph (`??/` and the other eight, active under -std=c11 / -trigraphs)
// gets a space after its `??`, and a backslash that is the last non-blank character is written
// `\x5c` (a backslash before the end of a line would splice the next line into the comment).
std::string c_block_comment(std::string_view text);
// The text of a // comment, up to the end of its line: trigraphs and a final backslash as above.
std::string c_line_comment(std::string_view text);
// Between the quotes of a C string literal: `"` and `\` escaped, a `?` after a `?` written `\?`
// (no trigraph), bytes outside printable ASCII as three-digit octal escapes.
std::string c_string_body(std::string_view text);

// JavaScript and TypeScript (.js, .d.ts). Inside a /* */ or /** */ comment, or after //: `*/`
// broken apart (visible_text already removed LF, CR, U+2028 and U+2029, JS's line terminators).
std::string js_comment(std::string_view text);
// A double-quoted JavaScript string literal, quotes included (the same text as json_string:
// JSON strings are JavaScript strings).
std::string js_string_literal(std::string_view text);
// Between the backquotes of a template literal: backquote, backslash and `$` escaped (no
// `${...}` substitution can start).
std::string js_template_body(std::string_view text);

// A JSON string, quotes included: `"` and `\` escaped; valid UTF-8 with no control character.
std::string json_string(std::string_view text);

// WGSL. The text of a // comment: visible_text removed every WGSL line break (LF, VT, FF, CR,
// NEL, U+2028, U+2029); `/*` and `*/` are broken apart too, since WGSL block comments nest.
std::string wgsl_line_comment(std::string_view text);

// HTML and SVG (XML): text content or a quoted attribute value of `tilegen explain` pages:
// `&`, `<`, `>`, `"` and `'` as character references, so the text can neither start a tag nor
// end the attribute it is in (visible_text removed every control character XML forbids).
std::string xml_text(std::string_view text);

// A field of a `tilegen outputs --format=cmake` record, which cmake/TileGen.cmake splits at
// spaces into a CMake list. Fields are generated names (files, targets, compile flags), never
// spec text: anything but [A-Za-z0-9_.+=,-] is an internal error, not escaped.
const std::string& cmake_record_field(const std::string& field);

} // namespace tilegen
