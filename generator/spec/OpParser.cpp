// OpParser: the body's op list. Each item is a mapping with exactly one op key, plus `body`
// (parallel, for, pipelined) or `then`/`else` (if).
#include "spec/SpecParser.h"
#include "spec/YamlAccess.h"

#include <algorithm>

namespace tilegen::spec {

namespace {

struct OpInfo {
  const char* key;
  OpKind kind;
  const char* extra[2]; // sibling keys the op takes (body, then/else)
};
constexpr OpInfo kOps[] = {
    {"shared", OpKind::Shared, {}},       {"fragment", OpKind::Fragment, {}},
    {"local", OpKind::Local, {}},         {"fill", OpKind::Fill, {}},
    {"copy", OpKind::Copy, {}},           {"gemm", OpKind::Gemm, {}},
    {"reduce", OpKind::Reduce, {}},       {"parallel", OpKind::Parallel, {"body"}},
    {"for", OpKind::For, {"body"}},       {"pipelined", OpKind::Pipelined, {"body"}},
    {"if", OpKind::If, {"then", "else"}}, {"atomic_add", OpKind::AtomicAdd, {}},
};

// Nested bodies deeper than this are rejected (Lowering recurses per level).
constexpr int kMaxBodyDepth = 32;

class OpParser {
public:
  OpParser(YamlAccess& in) : in_(in), diag_(in.diag()) {}

  bool op(const YNode* item, Op& out, int depth) {
    if (!in_.expect(item, YKind::Map, "an op (a mapping such as {copy: {src: ..., dst: ...}})"))
      return false;
    const OpInfo* info = nullptr;
    const YNode* key = nullptr;
    for (const auto& [k, v] : item->entries) {
      const OpInfo* found = nullptr;
      for (const auto& o : kOps)
        if (k->value == o.key)
          found = &o;
      if (!found)
        continue;
      if (info) {
        diag_.error(k->loc, "one list item holds one op; found '" + std::string(found->key) +
                                "' after '" + info->key + "' (start a new item with '- ')");
        return false;
      }
      info = found;
      key = k.get();
    }
    if (!info) {
      std::vector<std::string> names;
      for (const auto& o : kOps)
        names.push_back(o.key);
      if (item->entries.empty()) {
        diag_.error(item->loc, "empty op");
        return false;
      }
      const YNode* k = item->entries.front().first.get();
      diag_.error(k->loc, "unknown op '" + k->value + "'" + did_you_mean(k->value, names));
      return false;
    }
    bool ok = true;
    for (const auto& [k, v] : item->entries) {
      if (k.get() == key)
        continue;
      const std::string& field = k->value; // clang 14 cannot capture a structured binding
      bool allowed = std::any_of(std::begin(info->extra), std::end(info->extra),
                                 [&](const char* e) { return e && field == e; });
      if (!allowed) {
        std::vector<std::string> names;
        for (const char* e : info->extra)
          if (e)
            names.push_back(e);
        diag_.error(k->loc, "unexpected field '" + k->value + "' next to '" + info->key + "'" +
                                did_you_mean(k->value, names));
        ok = false;
      }
    }
    if (!ok)
      return false;
    out.kind = info->kind;
    out.loc = key->loc;
    const YNode* v = item->get(info->key);
    switch (info->kind) {
    case OpKind::Shared:
    case OpKind::Fragment:
    case OpKind::Local:
      return buffers(v, out);
    case OpKind::Fill:
      return fill(v, out);
    case OpKind::Copy:
      return copy(v, out);
    case OpKind::Gemm:
      return gemm(v, out);
    case OpKind::Reduce:
      return reduce(v, out);
    case OpKind::AtomicAdd:
      return atomic_add(v, out);
    case OpKind::Parallel:
      return parallel(item, v, out);
    case OpKind::For:
    case OpKind::Pipelined:
      return loop(item, v, out, depth);
    case OpKind::If:
      return if_(item, v, out, depth);
    }
    return false;
  }

private:
  bool fields(const YNode* v, const std::string& op, std::initializer_list<const char*> allowed,
              std::initializer_list<const char*> required) {
    return in_.expect(v, YKind::Map, "a mapping of fields for '" + op + "'") &&
           in_.check_fields(v, allowed, required, "'" + op + "'");
  }
  bool expr_field(const YNode* v, const char* f, SExprPtr& out, const std::string& what) {
    const YNode* n = v->get(f);
    if (!n)
      return true;
    out = in_.expr(n, what);
    return out != nullptr;
  }
  bool bool_field(const YNode* v, const char* f, BoolField& out) {
    const YNode* n = v->get(f);
    if (!n)
      return true;
    auto b = in_.boolean(n, std::string("'") + f + "'");
    if (!b)
      return false;
    out = {*b, true, n->loc};
    return true;
  }

  bool buffers(const YNode* v, Op& out) {
    std::string op = op_kind_name(out.kind);
    if (!in_.expect(v, YKind::Map, "a mapping {name: [dtype, dims...]} for '" + op + "'"))
      return false;
    if (v->entries.empty()) {
      diag_.error(v->loc, "'" + op + "' declares no buffers");
      return false;
    }
    bool ok = true;
    for (const auto& [k, d] : v->entries) {
      auto name = in_.decl_name(k.get(), "buffer");
      if (!name) {
        ok = false;
        continue;
      }
      std::string ctx = op + " buffer '" + name->name + "'";
      if (!in_.expect(d.get(), YKind::Seq, "[dtype, dims...] for " + ctx)) {
        ok = false;
        continue;
      }
      if (d->items.size() < 2) {
        diag_.error(d->loc, ctx + " needs a dtype and at least one dimension, e.g. [f32, BM]");
        ok = false;
        continue;
      }
      BufferDecl b;
      b.name = *name;
      b.loc = d->loc;
      const YNode* t = d->items[0].get();
      if (!in_.expect(t, YKind::Scalar, "a dtype for " + ctx)) {
        ok = false;
        continue;
      }
      b.type = {t->value, t->loc};
      for (size_t i = 1; i < d->items.size(); ++i) {
        auto e = in_.expr(d->items[i].get(), "a dimension of " + ctx);
        ok &= e != nullptr;
        b.shape.push_back(e);
      }
      out.buffers.push_back(std::move(b));
    }
    return ok;
  }

  bool fill(const YNode* v, Op& out) {
    return fields(v, "fill", {"dst", "value"}, {"dst", "value"}) &&
           expr_field(v, "dst", out.dst, "the buffer to fill") &&
           expr_field(v, "value", out.value, "the fill value");
  }
  bool copy(const YNode* v, Op& out) {
    return fields(v, "copy", {"src", "dst", "pad"}, {"src", "dst"}) &&
           expr_field(v, "src", out.src, "the copy source") &&
           expr_field(v, "dst", out.dst, "the copy destination") &&
           expr_field(v, "pad", out.pad, "the pad value");
  }
  bool atomic_add(const YNode* v, Op& out) {
    return fields(v, "atomic_add", {"src", "dst"}, {"src", "dst"}) &&
           expr_field(v, "src", out.src, "the atomic_add source") &&
           expr_field(v, "dst", out.dst, "the atomic_add destination");
  }
  bool gemm(const YNode* v, Op& out) {
    return fields(v, "gemm", {"a", "b", "c", "transpose_a", "transpose_b", "clear", "fast_accum"},
                  {"a", "b", "c"}) &&
           expr_field(v, "a", out.a, "gemm operand 'a'") &&
           expr_field(v, "b", out.b, "gemm operand 'b'") &&
           expr_field(v, "c", out.c, "gemm operand 'c'") &&
           bool_field(v, "transpose_a", out.transpose_a) &&
           bool_field(v, "transpose_b", out.transpose_b) && bool_field(v, "clear", out.clear) &&
           bool_field(v, "fast_accum", out.fast_accum);
  }
  bool reduce(const YNode* v, Op& out) {
    if (!fields(v, "reduce", {"op", "src", "dst", "dim", "clear"}, {"op", "src", "dst", "dim"}))
      return false;
    const YNode* o = v->get("op");
    if (!in_.expect(o, YKind::Scalar, "sum, max or min"))
      return false;
    if (o->value == "sum")
      out.reduce_op = ir::ReduceOp::Sum;
    else if (o->value == "max")
      out.reduce_op = ir::ReduceOp::Max;
    else if (o->value == "min")
      out.reduce_op = ir::ReduceOp::Min;
    else {
      diag_.error(o->loc, "unknown reduction '" + o->value + "' (expected sum, max or min)" +
                              did_you_mean(o->value, {"sum", "max", "min"}));
      return false;
    }
    auto dim = in_.integer(v->get("dim"), "the reduced dimension");
    if (!dim)
      return false;
    out.dim = {*dim, v->get("dim")->loc};
    out.clear = {true, false, {}};
    return expr_field(v, "src", out.src, "the reduce source") &&
           expr_field(v, "dst", out.dst, "the reduce destination") &&
           bool_field(v, "clear", out.clear);
  }

  bool body(const YNode* item, const char* field, const std::string& op, std::vector<Op>& out,
            int depth, bool required) {
    const YNode* b = item->get(field);
    if (!b) {
      if (required)
        diag_.error(item->loc, "missing '" + std::string(field) + "' for '" + op + "'");
      return !required;
    }
    if (!in_.expect(b, YKind::Seq, std::string("a list of ops for '") + field + "'"))
      return false;
    return parse_ops(b, in_, out, depth + 1);
  }

  bool parallel(const YNode* item, const YNode* v, Op& out) {
    if (!in_.expect(v, YKind::Map, "a mapping {var: extent, ...} for 'parallel'"))
      return false;
    if (misplaced_body(v, "parallel", "`- parallel: {i: BM, j: BN}` then `  body: [\"...\"]`"))
      return false;
    if (v->entries.empty() || v->entries.size() > 4) {
      diag_.error(v->loc, "'parallel' takes 1 to 4 index variables, found " +
                              std::to_string(v->entries.size()));
      return false;
    }
    bool ok = true;
    for (const auto& [k, e] : v->entries) {
      auto name = in_.decl_name(k.get(), "parallel index");
      auto ext = in_.expr(e.get(), "the extent of a parallel index");
      if (!name || !ext) {
        ok = false;
        continue;
      }
      out.pvars.push_back({*name, ext});
    }
    const YNode* b = item->get("body");
    if (!b) {
      diag_.error(item->loc, "missing 'body' for 'parallel'");
      return false;
    }
    if (!in_.expect(b, YKind::Seq, "a list of statement strings for the 'parallel' body"))
      return false;
    for (const auto& s : b->items) {
      SStmt st;
      if (in_.stmt(s.get(), st))
        out.stmts.push_back(std::move(st));
      else
        ok = false;
    }
    return ok;
  }

  // `body` written inside an op's mapping (`- for: {var: k, extent: N, body: [...]}`, or
  // nested under `parallel:`): it is a key of the list item, next to the op's key.
  bool misplaced_body(const YNode* v, const std::string& op, const std::string& example) {
    if (v->kind != YKind::Map)
      return false;
    const YNode* b = nullptr;
    for (const auto& [k, x] : v->entries)
      if (k->value == "body")
        b = k.get();
    if (!b)
      return false;
    diag_.error(b->loc, "'body' of '" + op + "' is written inside its mapping; it belongs to the "
                        "list item, next to '" + op + ":' and at the same indentation: " + example);
    return true;
  }

  bool loop(const YNode* item, const YNode* v, Op& out, int depth) {
    bool pipelined = out.kind == OpKind::Pipelined;
    std::string op = pipelined ? "pipelined" : "for";
    if (misplaced_body(v, op, "`- " + op + ": {var: k, extent: N}` then `  body: [...]`"))
      return false;
    bool ok = pipelined
                  ? fields(v, op, {"var", "extent", "stages", "split"}, {"var", "extent", "stages"})
                  : fields(v, op, {"var", "extent", "start"}, {"var", "extent"});
    if (!ok)
      return false;
    const YNode* var = v->get("var");
    if (!in_.expect(var, YKind::Scalar, "a loop variable name"))
      return false;
    auto name = in_.decl_name(var, "loop variable");
    if (!name)
      return false;
    out.var = *name;
    return expr_field(v, "extent", out.extent, "the loop extent") &&
           expr_field(v, "start", out.start, "the loop start") &&
           expr_field(v, "stages", out.stages, "the pipeline depth") &&
           split(v->get("split"), out, depth) && body(item, "body", op, out.body, depth, true);
  }

  // split: {carry: {state: peer, ...}, combine: [ops]}
  bool split(const YNode* v, Op& out, int depth) {
    if (!v)
      return true;
    if (!fields(v, "split", {"carry", "combine"}, {"carry", "combine"}))
      return false;
    out.split_loc = v->loc;
    const YNode* carry = v->get("carry");
    if (!in_.expect(carry, YKind::Map,
                    "a mapping {fragment: peer, ...}: each fragment the loop carries, and the name "
                    "its other part's values take in 'combine'"))
      return false;
    if (carry->entries.empty()) {
      diag_.error(carry->loc, "'carry' names no fragment");
      return false;
    }
    bool ok = true;
    for (const auto& [k, p] : carry->entries) {
      auto state = in_.decl_name(k.get(), "carried fragment");
      std::optional<Name> peer;
      if (in_.expect(p.get(), YKind::Scalar, "the peer's name (a new name)"))
        peer = in_.decl_name(p.get(), "peer fragment");
      if (state && peer)
        out.carry.emplace_back(*state, *peer);
      else
        ok = false;
    }
    const YNode* c = v->get("combine");
    if (!in_.expect(c, YKind::Seq, "a list of ops for 'combine'"))
      return false;
    return parse_ops(c, in_, out.combine, depth + 1) && ok;
  }

  bool if_(const YNode* item, const YNode* v, Op& out, int depth) {
    if (v->kind == YKind::Map) {
      bool branches = v->get("then") || v->get("else") || v->get("body");
      diag_.error(v->loc, std::string("'if' takes its condition as an expression string") +
                              (branches ? "; 'then' and 'else' belong to the list item, next to "
                                          "'if:' and at the same indentation"
                                        : "") +
                              ": `- if: \"N > 0\"` then `  then: [...]`");
      return false;
    }
    out.cond = in_.expr(v, "the condition of 'if'");
    if (!out.cond)
      return false;
    out.has_else = item->get("else") != nullptr;
    return body(item, "then", "if", out.then_ops, depth, true) &&
           body(item, "else", "if", out.else_ops, depth, false);
  }

  YamlAccess& in_;
  DiagEngine& diag_;
};

} // namespace

const char* op_kind_name(OpKind k) {
  for (const auto& o : kOps)
    if (o.kind == k)
      return o.key;
  return "?";
}

bool parse_ops(const YNode* list, YamlAccess& in, std::vector<Op>& out, int depth) {
  if (depth > kMaxBodyDepth) {
    in.diag().error(list->loc, "ops nested too deeply (more than " + std::to_string(kMaxBodyDepth) +
                                   " levels of bodies)");
    return false;
  }
  OpParser p(in);
  bool ok = true;
  for (const auto& item : list->items) {
    Op o;
    if (p.op(item.get(), o, depth))
      out.push_back(std::move(o));
    else
      ok = false;
  }
  return ok;
}

} // namespace tilegen::spec
