#include "tune/TuningDb.h"

#include "ir/IRPrinter.h"
#include "spec/YamlLoader.h"
#include "support/TextEscape.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace tilegen::tune {

using spec::YKind;
using spec::YNode;

std::string TuningKey::str() const { return kernel + "/" + instance + "/" + target + "/" + cls; }

const TuningEntry* TuningDb::find(const TuningKey& key) const {
  for (const auto& e : entries)
    if (e.key == key)
      return &e;
  return nullptr;
}

namespace {

// A reader over the loaded tree: every check is a located error.
class Reader {
public:
  explicit Reader(DiagEngine& diag) : diag_(diag) {}

  const YNode* field(const YNode& map, const char* name, YKind kind, const char* what) {
    const YNode* v = map.get(name);
    if (!v) {
      diag_.error(map.loc, std::string("missing \"") + name + "\" (" + what + ")");
      return nullptr;
    }
    if (v->kind != kind || (kind == YKind::Scalar && !is_string(*v))) {
      diag_.error(v->loc, std::string("\"") + name + "\" must be " + what);
      return nullptr;
    }
    return v;
  }
  // A JSON string: quoted (a plain YAML scalar is a number, true/false or null in JSON).
  static bool is_string(const YNode& n) {
    return n.kind == YKind::Scalar && n.style != spec::ScalarStyle::Plain;
  }
  std::optional<int64_t> integer(const YNode& n, const std::string& what) {
    if (n.kind == YKind::Scalar && n.style == spec::ScalarStyle::Plain && !n.value.empty()) {
      size_t used = 0;
      try {
        long long v = std::stoll(n.value, &used, 10);
        if (used == n.value.size())
          return v;
      } catch (...) {
      }
    }
    diag_.error(n.loc, what + " must be an integer");
    return std::nullopt;
  }
  DiagEngine& diag_;
};

bool is_hash(const std::string& s) {
  const std::string prefix = "fnv1a64:";
  if (s.size() != prefix.size() + 16 || s.compare(0, prefix.size(), prefix) != 0)
    return false;
  return std::all_of(s.begin() + prefix.size(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::optional<TuningEntry> read_entry(const YNode& n, Reader& r) {
  if (!n.is_map()) {
    r.diag_.error(n.loc, "a tuning database entry must be an object");
    return std::nullopt;
  }
  static const std::set<std::string> known = {"kernel", "instance", "target",  "class",
                                              "spec_hash", "config", "shapes"};
  for (const auto& [k, v] : n.entries)
    if (!known.count(k->value)) {
      r.diag_.error(k->loc, "unknown field \"" + k->value +
                                "\" in a tuning database entry (fields: kernel, instance, "
                                "target, class, spec_hash, config, shapes)");
      return std::nullopt;
    }
  TuningEntry e;
  e.loc = n.loc;
  const char* str = "a string";
  const YNode* kernel = r.field(n, "kernel", YKind::Scalar, str);
  const YNode* inst = r.field(n, "instance", YKind::Scalar, str);
  const YNode* target = r.field(n, "target", YKind::Scalar, str);
  const YNode* cls = r.field(n, "class", YKind::Scalar, str);
  const YNode* hash = r.field(n, "spec_hash", YKind::Scalar, "a string \"fnv1a64:<16 hex digits>\"");
  const YNode* config = r.field(n, "config", YKind::Map, "an object of tile constant values");
  if (!kernel || !inst || !target || !cls || !hash || !config)
    return std::nullopt;
  if (!is_hash(hash->value)) {
    r.diag_.error(hash->loc, "\"spec_hash\" must be \"fnv1a64:\" and 16 lowercase hex digits "
                             "(got \"" + hash->value + "\")");
    return std::nullopt;
  }
  e.key = {kernel->value, inst->value, target->value, cls->value};
  e.spec_hash = hash->value;
  for (const auto& [k, v] : config->entries) {
    auto x = r.integer(*v, "config value \"" + k->value + "\"");
    if (!x)
      return std::nullopt;
    e.config.emplace_back(k->value, *x);
  }
  if (const YNode* shapes = n.get("shapes")) {
    if (!shapes->is_seq()) {
      r.diag_.error(shapes->loc, "\"shapes\" must be a list of strings");
      return std::nullopt;
    }
    for (const auto& s : shapes->items) {
      if (!Reader::is_string(*s)) {
        r.diag_.error(s->loc, "\"shapes\" must be a list of strings");
        return std::nullopt;
      }
      e.shapes.push_back(s->value);
    }
  }
  return e;
}

} // namespace

std::optional<TuningDb> read_tuning_db(const std::string& path, DiagEngine& diag) {
  auto text = spec::read_spec_file(path, diag);
  if (!text)
    return std::nullopt;
  auto file = spec::load_yaml(path, std::move(*text), diag); // JSON is YAML's flow syntax
  if (!file)
    return std::nullopt;
  const YNode& root = *file->root;
  Reader r(diag);
  if (!root.is_map()) {
    diag.error(root.is_null() ? file->file_loc() : root.loc,
               std::string("a tuning database is a JSON object with \"format\": \"") + kDbFormat +
                   "\" (docs/tune.md)");
    return std::nullopt;
  }
  const YNode* format = root.get("format");
  if (!format || !Reader::is_string(*format) || format->value != kDbFormat) {
    diag.error(format ? format->loc : root.loc,
               std::string("not a tilegen tuning database: \"format\" must be \"") + kDbFormat +
                   "\"" + (format ? " (got '" + format->value + "')" : " (missing)"));
    return std::nullopt;
  }
  const YNode* version = root.get("version");
  if (!version) {
    diag.error(root.loc, "missing \"version\" (this tilegen reads version " +
                             std::to_string(kDbVersion) + ")");
    return std::nullopt;
  }
  auto v = r.integer(*version, "\"version\"");
  if (!v)
    return std::nullopt;
  if (*v != kDbVersion) {
    diag.error(version->loc, "tuning database version " + std::to_string(*v) +
                                 " is not supported: this tilegen reads version " +
                                 std::to_string(kDbVersion) +
                                 "; re-run `tilegen tune` with this tilegen to rewrite it");
    return std::nullopt;
  }
  for (const auto& [k, val] : root.entries)
    if (k->value != "format" && k->value != "version" && k->value != "entries") {
      diag.error(k->loc, "unknown field \"" + k->value +
                             "\" in a tuning database (fields: format, version, entries)");
      return std::nullopt;
    }
  TuningDb db;
  const YNode* entries = root.get("entries");
  if (!entries)
    return db;
  if (!entries->is_seq()) {
    diag.error(entries->loc, "\"entries\" must be a list");
    return std::nullopt;
  }
  std::map<TuningKey, SourceLoc> seen;
  for (const auto& item : entries->items) {
    auto e = read_entry(*item, r);
    if (!e)
      return std::nullopt;
    auto [it, fresh] = seen.emplace(e->key, e->loc);
    if (!fresh) {
      diag.error(e->loc, "second entry for " + e->key.str() + " in the tuning database");
      diag.note(it->second, "the first one is here");
      return std::nullopt;
    }
    db.entries.push_back(std::move(*e));
  }
  return db;
}

std::string write_tuning_db(const TuningDb& db) {
  std::vector<const TuningEntry*> sorted;
  for (const auto& e : db.entries)
    sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(),
            [](const TuningEntry* a, const TuningEntry* b) { return a->key < b->key; });
  std::string s = "{\n  \"format\": \"" + std::string(kDbFormat) + "\",\n  \"version\": " +
                  std::to_string(kDbVersion) + ",\n  \"entries\": [";
  for (size_t i = 0; i < sorted.size(); ++i) {
    const TuningEntry& e = *sorted[i];
    s += i ? ",\n" : "\n";
    s += "    {\n";
    s += "      \"kernel\": " + json_string(e.key.kernel) + ",\n";
    s += "      \"instance\": " + json_string(e.key.instance) + ",\n";
    s += "      \"target\": " + json_string(e.key.target) + ",\n";
    s += "      \"class\": " + json_string(e.key.cls) + ",\n";
    s += "      \"spec_hash\": " + json_string(e.spec_hash) + ",\n";
    s += "      \"config\": {";
    for (size_t c = 0; c < e.config.size(); ++c)
      s += (c ? ", " : "") + json_string(e.config[c].first) + ": " +
           std::to_string(e.config[c].second);
    s += "},\n      \"shapes\": [";
    for (size_t c = 0; c < e.shapes.size(); ++c)
      s += (c ? ", " : "") + json_string(e.shapes[c]);
    s += "]\n    }";
  }
  s += sorted.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return s;
}

TuningDb merge_tuning_db(const TuningDb& db, const std::vector<TuningEntry>& tuned) {
  TuningDb out;
  for (const auto& e : db.entries)
    if (std::none_of(tuned.begin(), tuned.end(),
                     [&](const TuningEntry& t) { return t.key == e.key; }))
      out.entries.push_back(e);
  for (const auto& t : tuned)
    out.entries.push_back(t);
  return out;
}

std::string spec_hash(const ir::Kernel& k) {
  ir::PrintOptions opts; // no locations: moving a line does not change the hash
  std::string text = ir::to_string(k, opts);
  for (const auto& [name, req] : k.shape_classes)
    text += "class " + name + ": " + ir::to_string(req.pred) + "\n";
  for (const auto& [name, dims] : k.class_shapes) {
    text += "class_shape " + name + ":";
    for (const auto& [d, v] : dims)
      text += " " + d + "=" + std::to_string(v);
    text += "\n";
  }
  for (const auto& r : k.scalar_requirements)
    text += "scalar_require " + ir::to_string(r.pred) + "\n";
  uint64_t h = 1469598103934665603ull; // FNV-1a, 64 bit
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "fnv1a64:%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::optional<std::vector<int64_t>> config_values(const TuningEntry& e, const ir::Kernel& k,
                                                  std::string& why_not) {
  std::vector<int64_t> values;
  for (const auto& entry : e.config) {
    const std::string& name = entry.first; // (clang 14 cannot capture a structured binding)
    if (std::none_of(k.tile_consts.begin(), k.tile_consts.end(),
                     [&](const ir::TileConst& tc) { return tc.var->name == name; })) {
      why_not = "its config names '" + name + "', which is not a tile constant of the kernel";
      return std::nullopt;
    }
  }
  for (const auto& tc : k.tile_consts) {
    auto it = std::find_if(e.config.begin(), e.config.end(),
                           [&](const auto& p) { return p.first == tc.var->name; });
    if (it == e.config.end()) {
      why_not = "its config has no value for tile constant '" + tc.var->name + "'";
      return std::nullopt;
    }
    values.push_back(it->second);
  }
  return values;
}

} // namespace tilegen::tune
