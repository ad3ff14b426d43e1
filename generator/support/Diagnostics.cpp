// DiagEngine: clang-style diagnostics with the source line and a caret range.
//
// Everything printed depends only on the messages, the locations and the registered source
// text, so two runs over the same input print the same bytes (no addresses, no timing).
#include "support/Diagnostics.h"

#include "support/InternalError.h"

#include <algorithm>
#include <cctype>
#include <ostream>

namespace tilegen {

namespace {

const char* severity_name(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "?";
}

// Source lines longer than this are shown as a window around the column, so that a 1 MiB
// one-line file does not flood the terminal.
constexpr size_t kMaxShownLine = 160;

// Bytes that would garble a terminal (control characters, DEL) are shown as '?'. Tabs stay:
// the caret line copies them so that the caret lines up under any tab width.
char printable(unsigned char c) {
  if (c == '\t')
    return '\t';
  if (c < 0x20 || c == 0x7f)
    return '?';
  return static_cast<char>(c);
}

bool is_utf8_continuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

// Length of the well-formed UTF-8 sequence at s[i] (1 for ASCII), or 0 if it is malformed.
size_t utf8_sequence_length(const std::string& s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80                   ? 1
             : (c >= 0xC2 && c <= 0xDF) ? 2
             : (c >= 0xE0 && c <= 0xEF) ? 3
             : (c >= 0xF0 && c <= 0xF4) ? 4
                                        : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  for (size_t k = 1; k < n; ++k)
    if (!is_utf8_continuation(static_cast<unsigned char>(s[i + k])))
      return 0;
  return n;
}

// Returns line `line` (1-based) of `text` without its end-of-line, or nullopt.
bool find_line(const std::string& text, int line, std::string& out) {
  if (line <= 0)
    return false;
  size_t start = 0;
  for (int l = 1; l < line; ++l) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos)
      return false;
    start = nl + 1;
  }
  size_t end = text.find('\n', start);
  if (end == std::string::npos)
    end = text.size();
  if (end > start && text[end - 1] == '\r')
    --end;
  out = text.substr(start, end - start);
  return true;
}

// "file:line:col" of a location: with the message, what makes an error the same error.
std::string loc_key(const SourceLoc& loc) {
  return (loc.file ? *loc.file : std::string()) + ":" + std::to_string(loc.line) + ":" +
         std::to_string(loc.col);
}

} // namespace

DiagEngine::DiagEngine(std::ostream& out) : out_(out) {}

std::shared_ptr<const std::string> DiagEngine::add_source(const std::string& path,
                                                          std::string text) {
  sources_[path] = std::move(text);
  return std::make_shared<const std::string>(path);
}

void DiagEngine::error(const SourceLoc& loc, const std::string& message) {
  emit(Severity::Error, loc, message);
}
void DiagEngine::warning(const SourceLoc& loc, const std::string& message) {
  emit(Severity::Warning, loc, message);
}
void DiagEngine::note(const SourceLoc& loc, const std::string& message) {
  emit(Severity::Note, loc, message);
}

void DiagEngine::begin_target_group(std::vector<std::string> names) {
  TG_ASSERT(!grouping_, "begin_target_group inside a group");
  grouping_ = true;
  group_names_ = std::move(names);
}

namespace {

// Every `from` in s replaced by `to`.
std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

} // namespace

void DiagEngine::end_target_group() {
  TG_ASSERT(grouping_, "end_target_group without a group");
  grouping_ = false;
  std::vector<Diagnostic> held = std::move(held_);
  held_.clear();
  held_errors_ = 0;
  // Records: an error or warning with the notes after it (a note first stands alone).
  struct Record {
    std::vector<Diagnostic> parts; // the head's message without its target; notes with \x01
    std::vector<std::string> targets;
    bool inline_name = false; // the head names its target inside (the hole), not as a prefix
  };
  const std::string hole = "'\x01'"; // where the target's quoted name was in a note
  std::vector<Record> records;
  std::map<std::string, size_t> by_key; // a target-prefixed error's copies, merged
  for (size_t i = 0; i < held.size();) {
    size_t end = i + 1;
    while (end < held.size() && held[end].severity == Severity::Note)
      ++end;
    Record r;
    r.parts.assign(held.begin() + static_cast<std::ptrdiff_t>(i),
                   held.begin() + static_cast<std::ptrdiff_t>(end));
    i = end;
    std::string target;
    bool inline_name = false; // the target is named inside the message ("... of target 'x'")
    if (r.parts[0].severity == Severity::Error) {
      for (const auto& name : group_names_)
        if (r.parts[0].message.compare(0, name.size() + 2, name + ": ") == 0)
          target = name;
      if (target.empty()) {
        size_t named = 0;
        for (const auto& name : group_names_)
          if (r.parts[0].message.find("'" + name + "'") != std::string::npos) {
            target = name;
            ++named;
          }
        if (named != 1)
          target.clear(); // none, or several targets named: printed as it is
        inline_name = !target.empty();
      }
    }
    if (target.empty()) {
      records.push_back(std::move(r));
      continue;
    }
    r.inline_name = inline_name;
    if (inline_name)
      r.parts[0].message = replace_all(r.parts[0].message, "'" + target + "'", hole);
    else
      r.parts[0].message.erase(0, target.size() + 2);
    std::string key = std::string(inline_name ? "\x03" : "") + r.parts[0].message;
    for (size_t p = 1; p < r.parts.size(); ++p) {
      r.parts[p].message = replace_all(r.parts[p].message, "'" + target + "'", hole);
      key += "\x02" + loc_key(r.parts[p].loc) + r.parts[p].message;
    }
    key = loc_key(r.parts[0].loc) + "\x02" + key;
    auto [it, fresh] = by_key.emplace(key, records.size());
    if (fresh) {
      r.targets.push_back(target);
      records.push_back(std::move(r));
    } else if (std::find(records[it->second].targets.begin(), records[it->second].targets.end(),
                         target) == records[it->second].targets.end()) {
      records[it->second].targets.push_back(target);
    }
  }
  for (const Record& r : records) {
    if (r.targets.empty()) {
      for (const Diagnostic& d : r.parts)
        emit(d.severity, d.loc, d.message);
      continue;
    }
    std::string names, quoted;
    for (size_t t = 0; t < r.targets.size(); ++t) {
      names += (t ? ", " : "") + r.targets[t];
      quoted += (t ? ", '" : "'") + r.targets[t] + "'";
    }
    auto fill = [&](std::string m) {
      if (r.targets.size() > 1) // "target 'x'" becomes "targets 'x', 'y'"
        m = replace_all(m, "target " + hole, "targets " + quoted);
      return replace_all(m, hole, quoted);
    };
    if (r.inline_name)
      emit(r.parts[0].severity, r.parts[0].loc, fill(r.parts[0].message));
    else
      emit(r.parts[0].severity, r.parts[0].loc, names + ": " + r.parts[0].message);
    for (size_t p = 1; p < r.parts.size(); ++p)
      emit(Severity::Note, r.parts[p].loc, fill(r.parts[p].message));
  }
}

void DiagEngine::emit(Severity s, const SourceLoc& loc, const std::string& message) {
  if (grouping_) {
    held_.push_back({s, loc, message});
    if (s == Severity::Error)
      ++held_errors_;
    return;
  }
  if (s == Severity::Error) {
    // The same error at the same place again (an instantiation error repeats for every target
    // and instance that reaches it): shown once, with its notes; its repeats are not counted.
    if (!shown_.insert(loc_key(loc) + ":" + message).second) {
      suppress_notes_ = true;
      return;
    }
    ++errors_;
    if (errors_ > limit_) {
      if (errors_ == limit_ + 1)
        out_ << "error: too many errors (" << limit_ << "); further errors are not shown\n";
      suppress_notes_ = true;
      return;
    }
    suppress_notes_ = false;
  } else if (s == Severity::Note && suppress_notes_) {
    return;
  }
  all_.push_back({s, loc, message});

  if (loc.file && loc.line > 0)
    out_ << *loc.file << ":" << loc.line << ":" << std::max(loc.col, 1) << ": ";
  else if (loc.file)
    out_ << *loc.file << ": ";
  out_ << severity_name(s) << ": " << message << "\n";

  if (!loc.file || loc.line <= 0)
    return;
  auto it = sources_.find(*loc.file);
  std::string line;
  if (it == sources_.end() || !find_line(it->second, loc.line, line))
    return;

  // Column and range in bytes, clamped to the line.
  size_t col0 = static_cast<size_t>(std::max(loc.col, 1) - 1);
  if (col0 > line.size())
    col0 = line.size();
  size_t len = static_cast<size_t>(std::max(loc.length, 1));
  size_t end = std::min(line.size(), col0 + len);

  // Window long lines around the caret.
  size_t win_begin = 0, win_end = line.size();
  std::string prefix, suffix;
  if (line.size() > kMaxShownLine) {
    win_begin = col0 > kMaxShownLine / 2 ? col0 - kMaxShownLine / 2 : 0;
    while (win_begin > 0 && is_utf8_continuation(static_cast<unsigned char>(line[win_begin])))
      --win_begin;
    win_end = std::min(line.size(), win_begin + kMaxShownLine);
    while (win_end < line.size() && is_utf8_continuation(static_cast<unsigned char>(line[win_end])))
      ++win_end;
    if (win_begin > 0)
      prefix = "...";
    if (win_end < line.size())
      suffix = "...";
  }
  end = std::min(end, win_end);

  if (line.empty())
    return; // nothing to point at (an empty file, a location at end of file)
  std::string shown = prefix, caret(prefix.size(), ' ');
  for (size_t i = win_begin; i < win_end; ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    size_t n = utf8_sequence_length(line, i);
    if (n > 1) {
      // A valid multi-byte character: shown as is, one caret column.
      shown.append(line, i, n);
    } else if (n == 1) {
      shown += printable(c);
    } else {
      shown += '?'; // invalid UTF-8 would garble the terminal
    }
    if (i < col0)
      caret += c == '\t' ? '\t' : ' ';
    else if (i == col0)
      caret += '^';
    else if (i < end)
      caret += '~';
    if (n > 1)
      i += n - 1;
  }
  if (col0 >= win_end)
    caret += '^';
  shown += suffix;
  out_ << shown << "\n" << caret << "\n";
}

// Edit distance with adjacent transpositions (optimal string alignment: f23 -> f32 is one
// edit), with an early exit once every entry of a row exceeds `limit`.
static size_t edit_distance(const std::string& a, const std::string& b, size_t limit) {
  auto same = [](char x, char y) {
    // Case-only differences (A_S vs A_s) are the most likely typo: they cost nothing.
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  };
  std::vector<size_t> prev2(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    size_t row_min = cur[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t subst = prev[j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      row_min = std::min(row_min, cur[j]);
    }
    if (row_min > limit)
      return limit + 1;
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  if (name.empty() || name.size() > 256)
    return "";
  // "Close" means at most a third of the name's characters changed (at least one edit allowed),
  // so `acc` suggests `acc0` but `x` does not suggest `y`... unless names are that short.
  size_t limit = std::max<size_t>(1, name.size() / 3);
  std::string best;
  size_t best_d = limit + 1;
  for (const auto& c : candidates) {
    if (c == name || c.empty() || c.size() > 256)
      continue;
    size_t d = edit_distance(name, c, limit);
    // A one-letter name differing in its only letter is not a plausible typo.
    if (d >= name.size() && d >= c.size())
      continue;
    if (d < best_d || (d == best_d && c < best)) {
      best = c;
      best_d = d;
    }
  }
  return best_d <= limit ? best : "";
}

} // namespace tilegen
