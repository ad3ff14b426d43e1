// ExprParser: a hand-written lexer and a precedence-climbing parser (see ExprParser.h).
#include "spec/ExprParser.h"

#include "support/ReservedNames.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <map>

namespace tilegen::spec {

namespace {

enum class Tok { Int, Float, Ident, Punct, End, Bad };

struct Token {
  Tok kind;
  std::string text;
  size_t begin, end; // byte offsets in the expression string
};

bool is_alpha(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alnum(char c) {
  return is_alpha(c) || is_digit(c);
}

// `5u`, `7u8`, `1U`: C's and Rust's unsigned literals. tilegen writes an unsigned constant as a
// cast of an integer literal (docs/spec.md "Unsigned integers"); say so.
std::string unsigned_suffix_hint(const std::string& bad) {
  size_t d = 0;
  const bool hex = bad.size() > 2 && bad[0] == '0' && (bad[1] == 'x' || bad[1] == 'X');
  if (hex) { // 0xffu: the digits, then the suffix
    d = 2;
    while (d < bad.size() && std::isxdigit(static_cast<unsigned char>(bad[d])))
      ++d;
  }
  while (!hex && d < bad.size() && is_digit(bad[d]))
    ++d;
  if (d == 0 || d == bad.size() || (bad[d] != 'u' && bad[d] != 'U'))
    return {};
  std::string rest = bad.substr(d + 1), type = "u32";
  if (rest == "8" || rest == "16" || rest == "32" || rest == "64")
    type = "u" + rest;
  else if (!rest.empty() && rest != "l" && rest != "L" && rest != "ll" && rest != "LL")
    return {};
  return "; an unsigned constant is written as a cast: " + type + "(" + bad.substr(0, d) + ")";
}

// Two-character operators first, so that "<=" is not lexed as "<" "=".
constexpr const char* kPuncts[] = {"||", "&&", "<<", ">>", "==", "!=", "<=", ">=", "+=",
                                   "(",  ")",  "[",  "]",  ",",  "?",  ":",  "<",  ">",
                                   "+",  "-",  "*",  "/",  "%",  "!",  "=",  "&",  "|",
                                   "^",  "~"};

class Parser {
public:
  Parser(std::string_view text, const LocMapper& loc, DiagEngine& diag)
      : text_(text), source_(std::make_shared<const std::string>(text)), map_(loc), diag_(diag) {}

  bool lex() {
    if (text_.size() > kMaxExprLength) {
      error(0, 1,
            "expression is too long (" + std::to_string(text_.size()) +
                " characters; the limit is " + std::to_string(kMaxExprLength) + ")");
      return false;
    }
    size_t i = 0;
    while (true) {
      while (i < text_.size() &&
             (text_[i] == ' ' || text_[i] == '\t' || text_[i] == '\n' || text_[i] == '\r'))
        ++i;
      if (i >= text_.size())
        break;
      size_t b = i;
      char c = text_[i];
      // A number that runs on into letters, digits or a dot ("0.5f", "5u", "0xffu") is one bad
      // token, reported whole with the cast hint where it applies.
      auto number_ends = [&](size_t begin, size_t& at) {
        if (at >= text_.size() || !(is_alnum(text_[at]) || text_[at] == '.'))
          return true;
        while (at < text_.size() && (is_alnum(text_[at]) || text_[at] == '.'))
          ++at;
        const std::string bad(text_.substr(begin, at - begin));
        error(begin, at - begin, "invalid number '" + bad + "'" + unsigned_suffix_hint(bad));
        return false;
      };
      if (is_alpha(c)) {
        while (i < text_.size() && is_alnum(text_[i]))
          ++i;
        toks_.push_back({Tok::Ident, std::string(text_.substr(b, i - b)), b, i});
      } else if (c == '0' && i + 2 < text_.size() && (text_[i + 1] == 'x' || text_[i + 1] == 'X') &&
                 std::isxdigit(static_cast<unsigned char>(text_[i + 2]))) {
        // hexadecimal integer: 0xff, 0X7FFF (docs/spec.md "Literals")
        i += 2;
        while (i < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[i])))
          ++i;
        if (!number_ends(b, i))
          return false;
        toks_.push_back({Tok::Int, std::string(text_.substr(b, i - b)), b, i});
      } else if (is_digit(c) || (c == '.' && i + 1 < text_.size() && is_digit(text_[i + 1]))) {
        bool is_float = false;
        while (i < text_.size() && is_digit(text_[i]))
          ++i;
        if (i < text_.size() && text_[i] == '.') {
          is_float = true;
          ++i;
          while (i < text_.size() && is_digit(text_[i]))
            ++i;
        }
        if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
          size_t j = i + 1;
          if (j < text_.size() && (text_[j] == '+' || text_[j] == '-'))
            ++j;
          if (j < text_.size() && is_digit(text_[j])) {
            is_float = true;
            i = j;
            while (i < text_.size() && is_digit(text_[i]))
              ++i;
          }
        }
        if (!number_ends(b, i))
          return false;
        toks_.push_back(
            {is_float ? Tok::Float : Tok::Int, std::string(text_.substr(b, i - b)), b, i});
      } else {
        const char* match = nullptr;
        for (const char* p : kPuncts) {
          std::string_view pv(p);
          if (text_.substr(i, pv.size()) == pv) {
            match = p;
            break;
          }
        }
        if (!match) {
          unsigned char uc = static_cast<unsigned char>(c);
          std::string shown = uc >= 0x20 && uc < 0x7f ? std::string(1, c) : "\\x" + hex(uc);
          error(b, 1, "unexpected character '" + shown + "' in expression");
          return false;
        }
        i += std::string_view(match).size();
        toks_.push_back({Tok::Punct, match, b, i});
      }
    }
    toks_.push_back({Tok::End, "", text_.size(), text_.size()});
    return true;
  }

  SExprPtr parse_whole() {
    if (toks_.size() == 1) {
      error(0, 1, "empty expression");
      return nullptr;
    }
    SExprPtr e = expr();
    if (!e)
      return nullptr;
    if (peek().kind != Tok::End) {
      error_at(peek(), "unexpected " + describe(peek()) + " after expression");
      return nullptr;
    }
    return e;
  }

  bool stmt(SStmt& out) {
    if (toks_.size() == 1) {
      error(0, 1, "empty statement");
      return false;
    }
    out.loc = map_(0, text_.size());
    if (peek().kind == Tok::Ident && peek().text == "let") {
      next();
      const Token& name = peek();
      if (name.kind != Tok::Ident) {
        error_at(name, "expected a name after 'let', found " + describe(name));
        return false;
      }
      const std::string problem = declared_name_problem(name.text, "let temporary", false);
      if (!problem.empty()) {
        error_at(name, problem);
        return false;
      }
      next();
      out.kind = SStmt::Kind::Let;
      out.let_name = name.text;
      out.let_loc = map_(name.begin, name.end - name.begin);
      if (!expect("=", "after the name of 'let " + name.text + "'"))
        return false;
    } else {
      SExprPtr target = unary();
      if (!target)
        return false;
      const Token& t = peek();
      if (t.kind == Tok::Punct && t.text == "=")
        out.kind = SStmt::Kind::Assign;
      else if (t.kind == Tok::Punct && t.text == "+=")
        out.kind = SStmt::Kind::AddAssign;
      else {
        error_at(t, "expected '=' or '+=' in statement, found " + describe(t));
        return false;
      }
      next();
      if (target->kind != EKind::Name && target->kind != EKind::Index) {
        diag_.error(target->loc, "the left side of '" + t.text +
                                     "' must be an element 'x[i, ...]' of a buffer or tensor");
        return false;
      }
      out.target = target;
    }
    out.value = expr();
    if (!out.value)
      return false;
    if (peek().kind != Tok::End) {
      error_at(peek(), "unexpected " + describe(peek()) + " after statement");
      return false;
    }
    return true;
  }

private:
  static std::string hex(unsigned char c) {
    const char* d = "0123456789ABCDEF";
    return std::string{d[c >> 4], d[c & 15]};
  }

  const Token& peek() const { return toks_[pos_]; }
  const Token& next() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size())
      ++pos_;
    return t;
  }
  bool is_punct(const char* p) const { return peek().kind == Tok::Punct && peek().text == p; }

  std::string describe(const Token& t) const {
    if (t.kind == Tok::End)
      return "end of expression";
    return "'" + t.text + "'";
  }

  void error(size_t off, size_t len, const std::string& msg) { diag_.error(map_(off, len), msg); }
  void error_at(const Token& t, const std::string& msg) {
    error(t.begin, std::max<size_t>(1, t.end - t.begin), msg);
  }

  bool expect(const char* p, const std::string& context) {
    if (is_punct(p)) {
      next();
      return true;
    }
    error_at(peek(),
             std::string("expected '") + p + "' " + context + ", found " + describe(peek()));
    return false;
  }

  // Builds a node spanning tokens [first, last].
  std::shared_ptr<SExpr> node(EKind k, size_t begin, size_t end, const Token& op) {
    auto n = std::make_shared<SExpr>();
    n->kind = k;
    n->loc = map_(begin, std::max<size_t>(1, end - begin));
    n->op_loc = map_(op.begin, std::max<size_t>(1, op.end - op.begin));
    n->source = source_;
    n->text_begin = begin;
    n->text_size = end - begin;
    return n;
  }
  size_t begin_of(const SExprPtr& e) const { return begins_.at(e.get()); }
  size_t end_of(const SExprPtr& e) const { return ends_.at(e.get()); }
  // Depth counts nesting (brackets, calls, unary operators, ?:), not the length of a chain of
  // binary operators: `a + b + ... + z` is one level, whatever its number of terms (the
  // expression's length bounds those).
  SExprPtr finish(std::shared_ptr<SExpr> n, size_t begin, size_t end) {
    begins_[n.get()] = begin;
    ends_[n.get()] = end;
    return n;
  }

  struct DepthGuard {
    Parser& p;
    explicit DepthGuard(Parser& parser) : p(parser) { ++p.depth_; }
    ~DepthGuard() { --p.depth_; }
  };
  bool too_deep() {
    if (depth_ <= kMaxExprDepth)
      return false;
    if (!depth_reported_)
      error_at(peek(), "expression is nested too deeply (more than " +
                           std::to_string(kMaxExprDepth) + " levels)");
    depth_reported_ = true;
    return true;
  }

  SExprPtr expr() {
    DepthGuard g(*this);
    if (too_deep())
      return nullptr;
    SExprPtr c = binary(1);
    if (!c || !is_punct("?"))
      return c;
    const Token& q = next();
    SExprPtr t = expr();
    if (!t)
      return nullptr;
    if (!expect(":", "in conditional expression"))
      return nullptr;
    SExprPtr f = expr();
    if (!f)
      return nullptr;
    auto n = node(EKind::Ternary, begin_of(c), end_of(f), q);
    n->args = {c, t, f};
    return finish(n, begin_of(c), end_of(f));
  }

  static int precedence(const Token& t) {
    if (t.kind != Tok::Punct)
      return 0;
    const std::string& s = t.text;
    if (s == "||")
      return 1;
    if (s == "&&")
      return 2;
    if (s == "|") // C's levels: | below ^ below & below equality; shifts between + and <
      return 3;
    if (s == "^")
      return 4;
    if (s == "&")
      return 5;
    if (s == "==" || s == "!=")
      return 6;
    if (s == "<" || s == "<=" || s == ">" || s == ">=")
      return 7;
    if (s == "<<" || s == ">>")
      return 8;
    if (s == "+" || s == "-")
      return 9;
    if (s == "*" || s == "/" || s == "%")
      return 10;
    return 0;
  }
  static constexpr int kTightest = 10;

  // Left-associative binary operators of precedence >= min_prec (iterative per level).
  SExprPtr binary(int min_prec) {
    SExprPtr lhs = min_prec > kTightest ? unary() : binary(min_prec + 1);
    if (!lhs || min_prec > kTightest)
      return lhs;
    while (precedence(peek()) == min_prec) {
      Token op = next();
      SExprPtr rhs = binary(min_prec + 1);
      if (!rhs)
        return nullptr;
      auto n = node(EKind::Binary, begin_of(lhs), end_of(rhs), op);
      n->op = op.text;
      n->args = {lhs, rhs};
      lhs = finish(n, begin_of(lhs), end_of(rhs));
      if (!lhs)
        return nullptr;
    }
    return lhs;
  }

  SExprPtr unary() {
    DepthGuard g(*this);
    if (too_deep())
      return nullptr;
    if (is_punct("-") || is_punct("!") || is_punct("~")) {
      Token op = next();
      SExprPtr a = unary();
      if (!a)
        return nullptr;
      auto n = node(EKind::Unary, op.begin, end_of(a), op);
      n->op = op.text;
      n->args = {a};
      return finish(n, op.begin, end_of(a));
    }
    return primary();
  }

  // Comma-separated expressions up to `close`; the opening token was consumed.
  bool list(std::vector<SExprPtr>& out, const char* close, const Token& open, size_t& end) {
    if (is_punct(close)) {
      error_at(peek(), std::string("expected an expression before '") + close + "'");
      return false;
    }
    while (true) {
      SExprPtr e = expr();
      if (!e)
        return false;
      out.push_back(e);
      if (is_punct(",")) {
        next();
        continue;
      }
      if (is_punct(close)) {
        end = next().end;
        return true;
      }
      error_at(peek(), std::string("expected ',' or '") + close + "', found " + describe(peek()));
      diag_.note(map_(open.begin, 1), std::string("to match this '") + open.text + "'");
      return false;
    }
  }

  // bitcast<T>(x): a Call named "bitcast" with the type name in `op` and op_loc at the type.
  SExprPtr bitcast(const Token& name) {
    next(); // '<'
    const Token ty = peek();
    if (ty.kind != Tok::Ident) {
      error_at(ty, "expected a type after 'bitcast<', found " + describe(ty));
      return nullptr;
    }
    next();
    if (!expect(">", "after 'bitcast<" + ty.text + "'"))
      return nullptr;
    if (!is_punct("(")) {
      error_at(peek(), "expected '(' after 'bitcast<" + ty.text + ">', found " + describe(peek()));
      return nullptr;
    }
    Token open = next();
    std::vector<SExprPtr> args;
    size_t end = open.end;
    if (!list(args, ")", open, end))
      return nullptr;
    auto n = node(EKind::Call, name.begin, end, ty);
    n->name = name.text;
    n->op = ty.text;
    n->args = std::move(args);
    return finish(n, name.begin, end);
  }

  SExprPtr primary() {
    const Token& t = peek();
    switch (t.kind) {
    case Tok::Int: {
      next();
      errno = 0;
      char* endp = nullptr;
      const bool hex = t.text.size() > 2 && (t.text[1] == 'x' || t.text[1] == 'X');
      unsigned long long v = std::strtoull(t.text.c_str() + (hex ? 2 : 0), &endp, hex ? 16 : 10);
      if (errno == ERANGE ||
          v > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max())) {
        error_at(t, "integer literal '" + t.text + "' is too large (the limit is 2^63-1)");
        return nullptr;
      }
      auto n = node(EKind::Int, t.begin, t.end, t);
      n->ival = static_cast<int64_t>(v);
      return finish(n, t.begin, t.end);
    }
    case Tok::Float: {
      next();
      errno = 0;
      double v = std::strtod(t.text.c_str(), nullptr);
      if (errno == ERANGE && (v > 1.0 || v < -1.0)) {
        error_at(t, "float literal '" + t.text + "' is out of range");
        return nullptr;
      }
      auto n = node(EKind::Float, t.begin, t.end, t);
      n->fval = v;
      return finish(n, t.begin, t.end);
    }
    case Tok::Ident: {
      Token name = next();
      if (name.text == "true" || name.text == "false") {
        auto n = node(EKind::Bool, name.begin, name.end, name);
        n->bval = name.text == "true";
        return finish(n, name.begin, name.end);
      }
      if (name.text == "inf" || name.text == "nan") {
        auto n = node(EKind::Float, name.begin, name.end, name);
        n->fval = name.text == "inf" ? std::numeric_limits<double>::infinity()
                                     : std::numeric_limits<double>::quiet_NaN();
        return finish(n, name.begin, name.end);
      }
      if (name.text == "bitcast" && is_punct("<")) // bitcast<T>(x); "bitcast" is reserved
        return bitcast(name);
      if (is_punct("(") || is_punct("[")) {
        Token open = next();
        bool call = open.text == "(";
        std::vector<SExprPtr> args;
        size_t end = open.end;
        if (!list(args, call ? ")" : "]", open, end))
          return nullptr;
        auto n = node(call ? EKind::Call : EKind::Index, name.begin, end, name);
        n->name = name.text;
        n->args = std::move(args);
        return finish(n, name.begin, end);
      }
      auto n = node(EKind::Name, name.begin, name.end, name);
      n->name = name.text;
      return finish(n, name.begin, name.end);
    }
    case Tok::Punct:
      if (t.text == "(") {
        Token open = next();
        SExprPtr e = expr();
        if (!e)
          return nullptr;
        if (!is_punct(")")) {
          error_at(peek(), "expected ')', found " + describe(peek()));
          diag_.note(map_(open.begin, 1), "to match this '('");
          return nullptr;
        }
        // The parentheses belong to the enclosing expression's source range.
        begins_[e.get()] = open.begin;
        ends_[e.get()] = next().end;
        return e;
      }
      break;
    default:
      break;
    }
    if (t.kind == Tok::Punct && t.text == ">" && t.begin >= 2 && text_.substr(t.begin - 2, 2) == ">>") {
      // Java's and JavaScript's unsigned shift
      error(t.begin - 2, 3,
            "'>>>' is not an operator; '>>' is the logical shift of an unsigned value (zeros come "
            "in: u32(x) >> n) and the arithmetic shift of a signed one");
      return nullptr;
    }
    error_at(t, "expected an expression, found " + describe(t));
    return nullptr;
  }

  std::string_view text_;
  std::shared_ptr<const std::string> source_; // text_, shared by every node's text()
  const LocMapper& map_;
  DiagEngine& diag_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool depth_reported_ = false;
  std::map<const SExpr*, size_t> begins_, ends_;
};

} // namespace

SExprPtr parse_expr(std::string_view text, const LocMapper& loc, DiagEngine& diag) {
  Parser p(text, loc, diag);
  if (!p.lex())
    return nullptr;
  return p.parse_whole();
}

bool parse_stmt(std::string_view text, const LocMapper& loc, DiagEngine& diag, SStmt& out) {
  Parser p(text, loc, diag);
  if (!p.lex())
    return false;
  return p.stmt(out);
}

bool is_identifier(std::string_view s) {
  if (s.empty() || !is_alpha(s[0]))
    return false;
  for (char c : s)
    if (!is_alnum(c))
      return false;
  return true;
}

bool is_reserved_name(std::string_view s) { return spec_language_words().count(std::string(s)) > 0; }

std::string declared_name_problem(std::string_view s, const std::string& what, bool joined,
                                  bool bare) {
  // A name of hundreds of characters is shown by its start.
  const std::string shown = s.size() > 40 ? std::string(s.substr(0, 40)) + "..." : std::string(s);
  if (!is_identifier(s))
    return "invalid " + what + " name '" + shown +
           "': names are letters, digits and '_', not starting with a digit";
  const std::string spelling = name_spelling_problem(s, joined);
  if (!spelling.empty())
    return "invalid " + what + " name '" + shown + "': " + spelling;
  const std::string reason = reserved_name_reason(s, bare);
  if (!reason.empty())
    return "'" + shown + "' is a reserved name and cannot name a " + what + ": it is " + reason +
           " (docs/spec.md, \"Reserved names\", lists them all)";
  return "";
}

} // namespace tilegen::spec
