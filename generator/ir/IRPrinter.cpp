#include "ir/IRPrinter.h"

#include "ir/FloatBits.h"
#include "ir/IRVisitor.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace tilegen::ir {

namespace {

// Precedence of the spec expression language, low to high.
enum Prec { kSelect = 1, kOr, kAnd, kBitOr, kBitXor, kBitAnd, kEq, kRel, kShift, kAdd, kMul,
            kUnary, kPrimary };

int binary_prec(BinaryOp op) {
  switch (op) {
  case BinaryOp::Or: return kOr;
  case BinaryOp::And: return kAnd;
  case BinaryOp::BitOr: return kBitOr;
  case BinaryOp::BitXor: return kBitXor;
  case BinaryOp::BitAnd: return kBitAnd;
  case BinaryOp::Shl:
  case BinaryOp::Shr: return kShift;
  case BinaryOp::Eq:
  case BinaryOp::Ne: return kEq;
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge: return kRel;
  case BinaryOp::Add:
  case BinaryOp::Sub: return kAdd;
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Mod: return kMul;
  case BinaryOp::Min:
  case BinaryOp::Max:
  case BinaryOp::CeilDiv: return kPrimary; // printed as calls
  }
  return kPrimary;
}

class ExprPrinter {
public:
  std::string print(const Expr& e, int min_prec = 0) {
    int p = 0;
    std::string s = print_raw(e, p);
    return p < min_prec ? "(" + s + ")" : s;
  }

private:
  std::string print_raw(const Expr& e, int& prec) {
    prec = kPrimary;
    switch (e->kind) {
    case ExprKind::IntImm: {
      auto v = e->as<IntImm>()->value;
      if (e->type.is_unsigned()) // u32(5) reads back as this constant
        return e->type.name() + std::string("(") + std::to_string(static_cast<uint64_t>(v)) + ")";
      if (v < 0)
        prec = kUnary;
      return std::to_string(v);
    }
    case ExprKind::FloatImm: {
      auto f = e->as<FloatImm>();
      if (std::signbit(f->value) && !std::isnan(f->value))
        prec = kUnary;
      return float_literal(f->value, f->type);
    }
    case ExprKind::BoolImm: return e->as<BoolImm>()->value ? "true" : "false";
    case ExprKind::VarRef: return e->as<VarRef>()->var->name;
    case ExprKind::Load: {
      auto l = e->as<Load>();
      std::string s = l->buffer->name + "[";
      for (size_t i = 0; i < l->indices.size(); ++i)
        s += (i ? ", " : "") + print(l->indices[i]);
      return s + "]";
    }
    case ExprKind::Unary: {
      auto u = e->as<Unary>();
      prec = kUnary;
      std::string inner = print(u->a, kUnary);
      // "- -x" and "--x" read badly; a space keeps a nested minus legible.
      return std::string(unary_op_name(u->op)) + (inner[0] == '-' ? " " : "") + inner;
    }
    case ExprKind::Binary: {
      auto b = e->as<Binary>();
      int p = binary_prec(b->op);
      if (p == kPrimary)
        return std::string(binary_op_name(b->op)) + "(" + print(b->a) + ", " + print(b->b) + ")";
      prec = p;
      // Left-associative: the right operand needs strictly higher precedence.
      return print(b->a, p) + " " + binary_op_name(b->op) + " " + print(b->b, p + 1);
    }
    case ExprKind::Select: {
      auto s = e->as<Select>();
      prec = kSelect;
      return print(s->cond, kSelect + 1) + " ? " + print(s->t, kSelect + 1) + " : " +
             print(s->f, kSelect);
    }
    case ExprKind::Call: {
      auto c = e->as<Call>();
      std::string s = std::string(intrinsic_name(c->fn)) +
                      (c->fn == Intrinsic::BitCast ? "<" + std::string(c->type.name()) + ">" : "") + "(";
      for (size_t i = 0; i < c->args.size(); ++i)
        s += (i ? ", " : "") + print(c->args[i]);
      return s + ")";
    }
    case ExprKind::Cast: {
      auto c = e->as<Cast>();
      return std::string(c->type.name()) + "(" + print(c->value) + ")";
    }
    }
    return "?";
  }
};

std::string join_exprs(const std::vector<Expr>& es, const char* sep) {
  std::string s;
  for (size_t i = 0; i < es.size(); ++i)
    s += (i ? sep : "") + to_string(es[i]);
  return s;
}

std::string shape_str(const BufferPtr& b) {
  return std::string(b->dtype.name()) + "[" + join_exprs(b->shape, ", ") + "]";
}

bool is_whole(const Region& r) {
  if (r.buffer->scope == MemScope::Global || r.extents.size() != r.buffer->rank())
    return false;
  for (size_t i = 0; i < r.extents.size(); ++i) {
    auto o = r.offsets[i]->as<IntImm>();
    if (!o || o->value != 0)
      return false;
    if (r.extents[i] != r.buffer->shape[i] && to_string(r.extents[i]) != to_string(r.buffer->shape[i]))
      return false;
  }
  return true;
}

class StmtPrinter {
public:
  StmtPrinter(const PrintOptions& o, std::ostringstream& out) : opts_(o), out_(out) {}

  void print(const Stmt& s, int indent) {
    const std::string pad(indent * 2, ' ');
    switch (s->kind) {
    case StmtKind::Seq:
      for (const auto& c : s->as<Seq>()->stmts)
        print(c, indent);
      return;
    case StmtKind::Alloc: {
      auto b = s->as<Alloc>()->buffer;
      line(pad + mem_scope_name(b->scope) + " " + b->name + ": " + shape_str(b), s);
      return;
    }
    case StmtKind::Fill: {
      auto f = s->as<Fill>();
      line(pad + "fill " + f->dst->name + " = " + to_string(f->value), s);
      return;
    }
    case StmtKind::Copy: {
      auto c = s->as<Copy>();
      std::string t = pad + "copy " + to_string(c->src) + " -> " + to_string(c->dst);
      if (c->src.buffer->scope == MemScope::Global)
        t += " pad " + to_string(c->pad);
      line(t, s);
      return;
    }
    case StmtKind::Gemm: {
      auto g = s->as<Gemm>();
      line(pad + "gemm " + g->c->name + (g->clear ? " = " : " += ") + g->a->name +
               (g->transpose_a ? "^T" : "") + " @ " + g->b->name + (g->transpose_b ? "^T" : "") +
               (g->fast_accum ? " (fast_accum)" : ""),
           s);
      return;
    }
    case StmtKind::Reduce: {
      auto r = s->as<Reduce>();
      line(pad + "reduce " + reduce_op_name(r->op) + " " + r->src->name + " dim=" +
               std::to_string(r->dim) + " -> " + r->dst->name + (r->clear ? "" : " (accumulate)"),
           s);
      return;
    }
    case StmtKind::Parallel: {
      auto p = s->as<Parallel>();
      std::string t = pad + "parallel ";
      for (size_t i = 0; i < p->vars.size(); ++i)
        t += (i ? ", " : "") + p->vars[i]->name + " in [0, " + to_string(p->extents[i]) + ")";
      line(t + " {", s);
      print(p->body, indent + 1);
      out_ << pad << "}\n";
      return;
    }
    case StmtKind::Store: {
      auto st = s->as<Store>();
      line(pad + st->buffer->name + "[" + join_exprs(st->indices, ", ") + "]" +
               (st->op == StoreOp::Add ? " += " : " = ") + to_string(st->value),
           s);
      return;
    }
    case StmtKind::LetStmt: {
      auto l = s->as<LetStmt>();
      line(pad + "let " + l->var->name + ": " + l->var->type.name() + " = " +
               to_string(l->value),
           s);
      return;
    }
    case StmtKind::For: {
      auto f = s->as<For>();
      std::string range;
      auto st = f->start->as<IntImm>();
      if (st && st->value == 0)
        range = "[0, " + to_string(f->extent) + ")";
      else
        range = "[" + to_string(f->start) + ", " + to_string(f->start) + " + " +
                ExprPrinter().print(f->extent, kMul) + ")";
      std::string t = pad + "for " + f->var->name + " in " + range;
      if (f->pipelined())
        t += " pipelined(stages=" + to_string(f->stages) + ")";
      line(t + " {", s);
      print(f->body, indent + 1);
      out_ << pad << "}\n";
      return;
    }
    case StmtKind::IfThenElse: {
      auto i = s->as<IfThenElse>();
      line(pad + "if " + to_string(i->cond) + " {", s);
      print(i->then_case, indent + 1);
      if (i->else_case) {
        out_ << pad << "} else {\n";
        print(i->else_case, indent + 1);
      }
      out_ << pad << "}\n";
      return;
    }
    case StmtKind::AtomicAdd: {
      auto a = s->as<AtomicAdd>();
      line(pad + "atomic_add " + to_string(a->src) + " -> " + to_string(a->dst), s);
      return;
    }
    case StmtKind::Combine: {
      auto c = s->as<Combine>();
      std::string t = pad + "combine split parts (";
      for (size_t i = 0; i < c->carry.size(); ++i)
        t += (i ? ", " : "") + c->carry[i].state->name + " <- " + c->carry[i].peer->name;
      line(t + ") {", s);
      print(c->body, indent + 1);
      out_ << pad << "}\n";
      return;
    }
    }
  }

private:
  void line(const std::string& text, const Stmt& s) {
    out_ << text;
    if (opts_.show_locs && s->loc.known())
      out_ << "  # " << s->loc.str();
    out_ << "\n";
  }

  const PrintOptions& opts_;
  std::ostringstream& out_;
};

} // namespace

std::string float_literal(double v, DType t) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  v = round_to_float_type(v, t); // the value the type holds (make_f32 does not round)
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    double back = std::strtod(buf, nullptr);
    if (round_to_float_type(back, t) == v)
      break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

std::string to_string(const Expr& e) { return e ? ExprPrinter().print(e) : "<null>"; }

std::string to_string(const Region& r) {
  if (is_whole(r))
    return r.buffer->name;
  std::string s = r.buffer->name + "[" + join_exprs(r.offsets, ", ") + " : ";
  for (size_t i = 0; i < r.extents.size(); ++i)
    s += (i ? "x" : "") + ExprPrinter().print(r.extents[i], kPrimary);
  return s + "]";
}

std::string to_string(const Stmt& s, const PrintOptions& opts, int indent) {
  std::ostringstream out;
  if (s)
    StmtPrinter(opts, out).print(s, indent);
  return out.str();
}

std::string to_string(const Kernel& k, const PrintOptions& opts) {
  std::ostringstream out;
  out << "kernel " << k.name;
  if (!k.type_binding.empty()) {
    out << "<";
    for (size_t i = 0; i < k.type_binding.size(); ++i)
      out << (i ? ", " : "") << k.type_binding[i].first << "=" << k.type_binding[i].second.name();
    out << ">";
  }
  out << "\n";
  if (!k.target.empty())
    out << "target " << k.target << "\n";
  if (!k.bindings.empty()) {
    out << "bindings";
    for (const auto& [name, v] : k.bindings)
      out << " " << name << "=" << v;
    out << "\n";
  }
  for (const auto& n : k.notes)
    out << "note " << n << "\n";
  for (const auto& d : k.dims) {
    out << "param " << d.var->name << ": ";
    if (d.var->kind == VarKind::ValueParam) {
      out << "values {";
      for (size_t i = 0; i < d.values.size(); ++i)
        out << (i ? ", " : "") << d.values[i];
      out << "}";
    } else {
      out << "dim";
    }
    if (d.multiple_of)
      out << " multiple_of " << *d.multiple_of;
    if (d.min)
      out << " min " << *d.min;
    if (d.max)
      out << " max " << *d.max;
    out << "\n";
  }
  for (const auto& f : k.flags)
    out << "flag " << f->name << "\n";
  for (const auto& s : k.scalars)
    out << "scalar " << s->name << ": " << s->type.name() << "\n";
  for (const auto& t : k.tensors)
    out << "tensor " << t->name << ": " << shape_str(t) << " " << access_name(t->access) << "\n";
  for (const auto& tc : k.tile_consts) {
    out << "tile_const " << tc.var->name << ": {";
    for (size_t i = 0; i < tc.candidates.size(); ++i)
      out << (i ? ", " : "") << tc.candidates[i];
    out << "}";
    auto list = [&](const std::vector<int64_t>& vals) {
      out << "{";
      for (size_t i = 0; i < vals.size(); ++i)
        out << (i ? ", " : "") << vals[i];
      out << "}";
    };
    for (const auto& [target, vals] : tc.per_target) {
      out << " " << target << ": ";
      list(vals);
    }
    for (const auto& [cls, targets] : tc.per_class_target)
      for (const auto& [target, vals] : targets) {
        out << " " << cls << "." << target << ": ";
        list(vals);
      }
    out << "\n";
  }
  for (const auto& r : k.requirements)
    out << "require " << to_string(r.pred) << "\n";
  for (const auto& g : k.grid)
    out << "grid " << g.index->name << " < " << to_string(g.extent) << "\n";
  if (k.threads)
    out << "threads " << to_string(k.threads) << "\n";
  out << "{\n" << to_string(k.body, opts, 1) << "}\n";
  return out.str();
}

} // namespace tilegen::ir
