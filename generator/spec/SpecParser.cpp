// SpecParser: the top level of a spec (kernel, types, params, ..., schedule, grid); the body's
// ops are parsed in OpParser.cpp.
#include "spec/SpecParser.h"

#include "spec/LowerContext.h"
#include "spec/YamlAccess.h"
#include "support/TextEscape.h"
#include "targets/Target.h"

#include <algorithm>
#include <cstdio>

namespace tilegen::spec {

namespace {

class TopParser {
public:
  TopParser(YamlAccess& in) : in_(in), diag_(in.diag()) {}

  std::optional<Spec> parse(const YNode* root) {
    if (root->kind == YKind::Null) {
      diag_.error(root->loc, "empty spec: expected a mapping with 'kernel', 'summary', "
                             "'tensors', 'grid' and 'body'");
      return std::nullopt;
    }
    if (!in_.expect(root, YKind::Map, "a mapping at the top level of the spec"))
      return std::nullopt;
    Spec s;
    s.loc = root->loc;
    ok_ = in_.check_fields(root,
                           {"kernel", "summary", "types", "params", "flags", "scalars", "tensors",
                            "schedule", "grid", "threads", "body"},
                           {"kernel", "summary", "tensors", "grid", "body"}, "the spec");
    if (const YNode* n = root->get("kernel")) {
      if (in_.expect(n, YKind::Scalar, "the kernel name")) {
        // Kernel names follow the identifier rule of declared names (they become C symbols).
        if (auto name = in_.decl_name(n, "kernel", true, false))
          s.kernel = *name;
        else
          ok_ = false;
      } else {
        ok_ = false;
      }
    }
    if (const YNode* n = root->get("summary")) {
      auto v = in_.string(n, "a one-line summary string");
      ok_ &= v.has_value();
      if (v)
        s.summary = summary(n, *v);
    }
    if (const YNode* n = root->get("types"))
      types(n, s);
    if (const YNode* n = root->get("params"))
      params(n, s);
    if (const YNode* n = root->get("flags"))
      flags(n, s);
    if (const YNode* n = root->get("scalars"))
      scalars(n, s);
    if (const YNode* n = root->get("tensors"))
      tensors(n, s);
    if (const YNode* n = root->get("schedule"))
      schedule(n, s);
    if (const YNode* n = root->get("grid"))
      grid(n, s);
    if (const YNode* n = root->get("threads")) {
      s.threads = in_.expr(n, "the thread count");
      ok_ &= s.threads != nullptr;
    }
    if (const YNode* n = root->get("body")) {
      s.body_loc = n->loc;
      if (in_.expect(n, YKind::Seq, "a list of ops for 'body'"))
        ok_ &= parse_ops(n, in_, s.body, 0);
      else
        ok_ = false;
    }
    if (!ok_)
      return std::nullopt;
    return s;
  }

private:
  // A summary is one line of printable text (docs/spec.md): runs of whitespace and line
  // breaks fold to one space; a control or bidirectional-control character (reachable through
  // escapes of double-quoted YAML, "\e", "\u202e") is an error. Every output escapes the
  // summary again for its own comment syntax (support/TextEscape.h).
  std::string summary(const YNode* n, const std::string& value) {
    if (auto bad = find_forbidden_char(value)) {
      char cp[16];
      std::snprintf(cp, sizeof cp, "U+%04X", static_cast<unsigned>(bad->code_point));
      diag_.error(n->value_loc(bad->offset, bad->length),
                  std::string(bad->bidi ? "bidirectional control" : "control") + " character " +
                      cp + " in the summary: a summary is one line of printable text; remove it" +
                      (bad->bidi ? " (bidi controls make source code read differently from how "
                                   "it compiles)"
                                 : " (line breaks and tabs are folded to spaces)"));
      ok_ = false;
    }
    return fold_whitespace(value);
  }

  bool map_of(const YNode* n, const char* field) {
    bool r = in_.expect(n, YKind::Map, std::string("a mapping for '") + field + "'");
    ok_ &= r;
    return r;
  }

  TypeRef type_ref(const YNode* n, const std::string& what) {
    if (!in_.expect(n, YKind::Scalar, what)) {
      ok_ = false;
      return {};
    }
    return TypeRef{n->value, n->loc};
  }

  void types(const YNode* n, Spec& s) {
    if (!map_of(n, "types"))
      return;
    for (const auto& [k, v] : n->entries) {
      auto name = in_.decl_name(k.get(), "type parameter", false, false);
      if (!name) {
        ok_ = false;
        continue;
      }
      TypeParamDecl d{*name, {}};
      std::vector<const YNode*> items;
      if (v->kind == YKind::Scalar)
        items.push_back(v.get());
      else if (in_.expect(v.get(), YKind::Seq,
                          "a list of dtypes for type parameter '" + name->name + "'"))
        for (const auto& i : v->items)
          items.push_back(i.get());
      else {
        ok_ = false;
        continue;
      }
      if (items.empty()) {
        diag_.error(v->loc, "type parameter '" + name->name + "' has no dtypes");
        ok_ = false;
      }
      for (const YNode* i : items) {
        if (!in_.expect(i, YKind::Scalar, "a dtype")) {
          ok_ = false;
          continue;
        }
        auto t = ir::DType::from_name(i->value);
        if (!t && packed_from_name(i->value)) {
          diag_.error(i->loc, "packed type '" + i->value +
                                  "' cannot bind a type parameter; declare the tensor with it "
                                  "directly (docs/spec.md \"Packed types\")");
          ok_ = false;
          continue;
        }
        if (!t || t->is_bool()) {
          diag_.error(i->loc, "unknown dtype '" + i->value + "'" +
                                  dtype_hint(i->value,
                                             {"f32", "f16", "bf16", "f64", "i8", "i32", "i64", "e4m3", "e5m2"}));
          ok_ = false;
          continue;
        }
        d.choices.emplace_back(*t, i->loc);
      }
      s.types.push_back(std::move(d));
    }
  }

  void params(const YNode* n, Spec& s) {
    if (!map_of(n, "params"))
      return;
    for (const auto& [k, v] : n->entries) {
      auto name = in_.decl_name(k.get(), "param", true);
      if (!name) {
        ok_ = false;
        continue;
      }
      DimDecl d;
      d.name = *name;
      d.loc = v->loc;
      std::string ctx = "param '" + name->name + "'";
      if (v->kind == YKind::Scalar) {
        if (v->value != "dim") {
          diag_.error(v->loc, "expected 'dim', {dim: dynamic, ...} or {values: [...]} for " + ctx +
                                  ", found '" + v->value + "'");
          ok_ = false;
          continue;
        }
      } else if (in_.expect(v.get(), YKind::Map,
                            "'dim', {dim: dynamic, ...} or {values: [...]} for " + ctx)) {
        if (!dim_map(v.get(), d, ctx)) {
          ok_ = false;
          continue;
        }
      } else {
        ok_ = false;
        continue;
      }
      s.params.push_back(std::move(d));
    }
  }

  bool dim_map(const YNode* v, DimDecl& d, const std::string& ctx) {
    if (const YNode* vals = v->get("values")) {
      for (const auto& [k, x] : v->entries)
        if (k->value == "dim" || k->value == "multiple_of" || k->value == "min" ||
            k->value == "max") {
          // {dim: dynamic, ...} and {values: [...]} are two forms; a value set has no other field
          diag_.error(k->loc, "'" + k->value + "' does not go with 'values' in " + ctx +
                                  ": a value set is written {values: [...]} alone (its values are "
                                  "the only ones the dispatch accepts)");
          return false;
        }
      if (!in_.check_fields(v, {"values"}, {}, ctx))
        return false;
      if (!in_.expect(vals, YKind::Seq, "a list of values for " + ctx))
        return false;
      if (vals->items.empty()) {
        diag_.error(vals->loc, ctx + " has an empty list of values");
        return false;
      }
      d.value_set = true;
      for (const auto& i : vals->items) {
        auto x = in_.integer(i.get(), "a value of " + ctx);
        if (!x)
          return false;
        if (*x < 0) {
          diag_.error(i->loc, "value " + std::to_string(*x) + " of " + ctx + " is negative");
          return false;
        }
        for (const auto& prev : d.values)
          if (prev.value == *x) {
            diag_.error(i->loc, "value " + std::to_string(*x) + " of " + ctx + " is listed twice");
            return false;
          }
        d.values.push_back({*x, i->loc});
      }
      return true;
    }
    if (!in_.check_fields(v, {"dim", "multiple_of", "min", "max"}, {"dim"}, ctx))
      return false;
    const YNode* kind = v->get("dim");
    if (!in_.expect(kind, YKind::Scalar, "'dynamic'"))
      return false;
    if (kind->value != "dynamic") {
      diag_.error(kind->loc, "expected 'dynamic' for 'dim' of " + ctx + ", found '" + kind->value +
                                 "' (use {values: [...]} for specialized dims)");
      return false;
    }
    auto field = [&](const char* f, std::optional<IntField>& out, int64_t lowest) {
      const YNode* x = v->get(f);
      if (!x)
        return true;
      auto val = in_.integer(x, std::string(f) + " of " + ctx);
      if (!val)
        return false;
      if (*val < lowest) {
        diag_.error(x->loc, std::string(f) + " of " + ctx + " must be at least " +
                                std::to_string(lowest) + ", found " + std::to_string(*val));
        return false;
      }
      out = IntField{*val, x->loc};
      return true;
    };
    if (!field("multiple_of", d.multiple_of, 1) || !field("min", d.min, 0) ||
        !field("max", d.max, 0))
      return false;
    if (d.min && d.max && d.min->value > d.max->value) {
      diag_.error(d.max->loc, "max " + std::to_string(d.max->value) + " of " + ctx +
                                  " is less than its min " + std::to_string(d.min->value));
      return false;
    }
    return true;
  }

  void flags(const YNode* n, Spec& s) {
    if (!map_of(n, "flags"))
      return;
    for (const auto& [k, v] : n->entries) {
      auto name = in_.decl_name(k.get(), "flag", true);
      if (!name) {
        ok_ = false;
        continue;
      }
      const YNode* t = v.get();
      if (v->kind == YKind::Map) {
        if (!in_.check_fields(v.get(), {"type"}, {"type"}, "flag '" + name->name + "'")) {
          ok_ = false;
          continue;
        }
        t = v->get("type");
      }
      if (!in_.expect(t, YKind::Scalar, "'bool' or {type: bool} for flag '" + name->name + "'")) {
        ok_ = false;
        continue;
      }
      if (t->value != "bool") {
        diag_.error(t->loc, "flags are bool; found type '" + t->value + "' for flag '" +
                                name->name + "' (use 'scalars' for runtime values)");
        ok_ = false;
        continue;
      }
      s.flags.push_back(*name);
    }
  }

  void scalars(const YNode* n, Spec& s) {
    if (!map_of(n, "scalars"))
      return;
    for (const auto& [k, v] : n->entries) {
      auto name = in_.decl_name(k.get(), "scalar");
      if (!name) {
        ok_ = false;
        continue;
      }
      const YNode* t = v.get();
      if (v->kind == YKind::Map) {
        if (!in_.check_fields(v.get(), {"type", "require"}, {"type"}, "scalar '" + name->name + "'")) {
          ok_ = false;
          continue;
        }
        t = v->get("type");
      }
      ScalarDecl d{*name, type_ref(t, "a dtype for scalar '" + name->name + "'"), std::nullopt};
      if (const YNode* r = v->kind == YKind::Map ? v->get("require") : nullptr) {
        auto e = in_.expr(r, "a predicate over the scalar (e.g. \"" + name->name + " > 0\")");
        if (!e) {
          ok_ = false;
          continue;
        }
        d.require = RequireDecl{e, r->value, e->loc};
      }
      s.scalars.push_back(std::move(d));
    }
  }

  void tensors(const YNode* n, Spec& s) {
    if (!map_of(n, "tensors"))
      return;
    if (n->entries.empty()) {
      diag_.error(n->loc, "a kernel needs at least one tensor");
      ok_ = false;
    }
    for (const auto& [k, v] : n->entries) {
      auto name = in_.decl_name(k.get(), "tensor");
      if (!name) {
        ok_ = false;
        continue;
      }
      std::string ctx = "tensor '" + name->name + "'";
      if (!in_.expect(v.get(), YKind::Map, "a mapping {type, shape, access} for " + ctx) ||
          !in_.check_fields(v.get(), {"type", "shape", "access"}, {"type", "shape"}, ctx)) {
        ok_ = false;
        continue;
      }
      TensorDecl t;
      t.name = *name;
      t.loc = v->loc;
      t.type = type_ref(v->get("type"), "a dtype for " + ctx);
      const YNode* shape = v->get("shape");
      t.shape_loc = shape->loc;
      if (!in_.expect(shape, YKind::Seq, "a list of dimensions for the shape of " + ctx)) {
        ok_ = false;
        continue;
      }
      if (shape->items.empty()) {
        diag_.error(shape->loc, "the shape of " + ctx + " has no dimensions");
        ok_ = false;
      }
      for (const auto& e : shape->items) {
        auto x = in_.expr(e.get(), "a dimension of " + ctx);
        ok_ &= x != nullptr;
        t.shape.push_back(x);
      }
      if (const YNode* a = v->get("access")) {
        if (!in_.expect(a, YKind::Scalar, "read, write or readwrite")) {
          ok_ = false;
        } else if (a->value == "read") {
          t.access = ir::Access::Read;
        } else if (a->value == "write") {
          t.access = ir::Access::Write;
        } else if (a->value == "readwrite") {
          t.access = ir::Access::ReadWrite;
        } else {
          diag_.error(a->loc, "unknown access '" + a->value + "' for " + ctx +
                                  " (expected read, write or readwrite)" +
                                  did_you_mean(a->value, {"read", "write", "readwrite"}));
          ok_ = false;
        }
      }
      s.tensors.push_back(std::move(t));
    }
  }

  void schedule(const YNode* n, Spec& s) {
    if (!map_of(n, "schedule"))
      return;
    for (const auto& [k, v] : n->entries) {
      if (k->value == "require") {
        requires_(v.get(), s);
        continue;
      }
      if (k->value == "targets") {
        ok_ &= targets(v.get(), s.target_overrides, "schedule.targets");
        continue;
      }
      if (k->value == "classes") {
        classes(v.get(), s);
        continue;
      }
      auto name = in_.decl_name(k.get(), "tile constant");
      if (!name) {
        ok_ = false;
        continue;
      }
      auto c = in_.candidates(v.get(), "tile constant '" + name->name + "'");
      if (!c) {
        ok_ = false;
        continue;
      }
      s.tile_consts.push_back({*name, v->loc, std::move(*c), {}, {}});
    }
    // Overrides refer to tile constants declared anywhere in the schedule.
    auto bind = [&](const std::vector<TargetOverrideDecl>& overrides, const std::string& where,
                    const std::string* cls) {
      for (const auto& o : overrides) {
        for (const auto& [cname, vals] : o.consts) {
          const std::string& wanted = cname.name; // clang 14 cannot capture a structured binding
          auto it = std::find_if(s.tile_consts.begin(), s.tile_consts.end(),
                                 [&](const TileConstDecl& t) { return t.name.name == wanted; });
          if (it == s.tile_consts.end()) {
            std::vector<std::string> names;
            for (const auto& t : s.tile_consts)
              names.push_back(t.name.name);
            diag_.error(cname.loc, where + "." + o.target.name +
                                       " overrides unknown tile constant '" + cname.name + "'" +
                                       did_you_mean(cname.name, names));
            ok_ = false;
            continue;
          }
          if (cls)
            it->per_class_target[*cls][o.target.name] = vals;
          else
            it->per_target[o.target.name] = vals;
        }
      }
    };
    bind(s.target_overrides, "schedule.targets", nullptr);
    for (const auto& c : s.classes)
      bind(c.targets, "schedule.classes." + c.name.name + ".targets", &c.name.name);
  }

  void requires_(const YNode* v, Spec& s) {
    if (!in_.expect(v, YKind::Seq, "a list of predicate strings for 'require'")) {
      ok_ = false;
      return;
    }
    for (const auto& item : v->items) {
      auto e = in_.expr(item.get(), "a predicate");
      if (!e) {
        ok_ = false;
        continue;
      }
      s.requires_.push_back({e, item->value, e->loc});
    }
  }

  // classes: {name: "predicate over dims" | {when: predicate, shape: {dim: value},
  // targets: {target: {tile constant: candidates}}}, ...};
  // order matters (the first match wins at dispatch). `large`, the implicit rest, may be given
  // a representative shape and its own targets only.
  void classes(const YNode* v, Spec& s) {
    if (!in_.expect(v, YKind::Map, "a mapping {class name: predicate} for 'classes'")) {
      ok_ = false;
      return;
    }
    if (v->entries.empty()) {
      diag_.error(v->loc, "'classes' is empty: declare at least one class, e.g. "
                          "{small_m: \"M <= 64\"}, or leave 'classes' out");
      ok_ = false;
      return;
    }
    for (const auto& [k, p] : v->entries) {
      auto name = in_.decl_name(k.get(), "shape class", true, false);
      if (!name) {
        ok_ = false;
        continue;
      }
      const std::string ctx = "shape class '" + name->name + "'";
      const bool large = name->name == "large";
      const YNode *when = p.get(), *shape = nullptr, *targets_ = nullptr;
      if (p->kind == YKind::Map) {
        if (!in_.check_fields(p.get(), {"when", "shape", "targets"}, {}, ctx)) {
          ok_ = false;
          continue;
        }
        when = p->get("when");
        shape = p->get("shape");
        targets_ = p->get("targets");
      }
      if (large && when) {
        diag_.error(when->loc, "'large' is the implicit shape class of every shape the declared "
                               "classes do not take; it has no predicate, only a representative "
                               "'shape' and its own 'targets' may be given (large: {shape: "
                               "{...}, targets: {...}})");
        ok_ = false;
        continue;
      }
      if (!large && !when) {
        diag_.error(p->loc, ctx + " needs a predicate: \"M <= 64\" or {when: \"M <= 64\", "
                                  "shape: {M: 16}}");
        ok_ = false;
        continue;
      }
      ShapeClassDecl d{*name, nullptr, "", k->loc, {}, {}};
      if (targets_ && !targets(targets_, d.targets, "schedule.classes." + name->name + ".targets")) {
        ok_ = false;
        continue;
      }
      bool gpu_only = true;
      for (const auto& o : d.targets) {
        const Target* t = find_target(o.target.name);
        if (t && !t->is_gpu()) {
          diag_.error(o.target.loc, "target '" + o.target.name + "' takes one configuration per "
                                    "instance and no shape classes (they apply to CUDA and HIP "
                                    "targets); give its candidates in schedule.targets");
          gpu_only = false;
        }
      }
      if (!gpu_only) {
        ok_ = false;
        continue;
      }
      if (when) {
        d.pred = in_.expr(when, "a shape-class predicate");
        if (!d.pred) {
          ok_ = false;
          continue;
        }
        d.text = when->value;
        d.loc = d.pred->loc;
      }
      if (shape) {
        if (!in_.expect(shape, YKind::Map, "a mapping {dim: value} for the shape of " + ctx)) {
          ok_ = false;
          continue;
        }
        for (const auto& [dk, dv] : shape->entries) {
          auto n = in_.integer(dv.get(), "the value of dim '" + dk->value + "' in the shape of " +
                                             ctx);
          if (!n) {
            ok_ = false;
            continue;
          }
          if (*n <= 0) {
            diag_.error(dv->loc, "the value of dim '" + dk->value + "' in the shape of " + ctx +
                                     " must be positive, found " + std::to_string(*n));
            ok_ = false;
            continue;
          }
          d.shape.push_back({Name{dk->value, dk->loc}, IntField{*n, dv->loc}});
        }
      }
      s.classes.push_back(std::move(d));
    }
  }

  // schedule.targets, or a shape class's `targets:` (`where` names it in messages): a mapping
  // target -> {tile constant: candidates}. False after reporting an error.
  bool targets(const YNode* v, std::vector<TargetOverrideDecl>& out, const std::string& where) {
    if (!in_.expect(v, YKind::Map, "a mapping target -> {tile constant: candidates}"))
      return false;
    bool ok = true;
    for (const auto& [k, m] : v->entries) {
      if (!is_known_target_name(k->value)) {
        diag_.error(k->loc, "unknown target '" + k->value + "' in " + where +
                                did_you_mean(k->value, known_target_names()));
        ok = false;
        continue;
      }
      TargetOverrideDecl o{{k->value, k->loc}, {}};
      if (!in_.expect(m.get(), YKind::Map,
                      "a mapping {tile constant: candidates} for target '" + k->value + "'")) {
        ok = false;
        continue;
      }
      for (const auto& [ck, cv] : m->entries) {
        auto c = in_.candidates(cv.get(),
                                "tile constant '" + ck->value + "' on target '" + k->value + "'");
        if (!c) {
          ok = false;
          continue;
        }
        o.consts.push_back({Name{ck->value, ck->loc}, std::move(*c)});
      }
      out.push_back(std::move(o));
    }
    return ok;
  }

  void grid(const YNode* n, Spec& s) {
    s.grid_loc = n->loc;
    if (!in_.expect(n, YKind::Map, "an ordered mapping {block index: extent} for 'grid'")) {
      ok_ = false;
      return;
    }
    if (n->entries.empty() || n->entries.size() > 3) {
      diag_.error(n->loc,
                  "a grid has 1 to 3 dimensions, found " + std::to_string(n->entries.size()));
      ok_ = false;
      return;
    }
    for (const auto& [k, v] : n->entries) {
      auto name = in_.decl_name(k.get(), "block index");
      auto e = in_.expr(v.get(), "a grid extent");
      if (!name || !e) {
        ok_ = false;
        continue;
      }
      s.grid.push_back({*name, e});
    }
  }

  YamlAccess& in_;
  DiagEngine& diag_;
  bool ok_ = true;
};

} // namespace

bool is_known_target_name(const std::string& name) {
  if (find_target(name))
    return true;
  const auto& planned = planned_target_names();
  return std::find(planned.begin(), planned.end(), name) != planned.end();
}

std::vector<std::string> known_target_names() {
  std::vector<std::string> out;
  for (const auto& t : all_targets())
    out.push_back(t.name);
  for (const auto& t : planned_target_names())
    out.push_back(t);
  return out;
}

std::optional<Spec> parse_spec(const YamlFile& file, DiagEngine& diag) {
  YamlAccess in(diag);
  TopParser p(in);
  return p.parse(file.root.get());
}

} // namespace tilegen::spec
