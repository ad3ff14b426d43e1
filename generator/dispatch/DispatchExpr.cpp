// Expressions over a call's dims as C (dispatch code) and in spec spelling (comments): see
// DispatchExpr.h.
#include "dispatch/DispatchExpr.h"

#include "support/InternalError.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tilegen::dispatch {

// ---- expressions over dims (tensor shapes) ------------------------------------------------

namespace {
// The checked int64 helper of tilegen/dispatch.h for an integer operator (Min and Max take no
// `ok`), or null.
const char* c_int_helper(ir::BinaryOp op) {
  switch (op) {
  case ir::BinaryOp::Add: return "tg_add_i64";
  case ir::BinaryOp::Sub: return "tg_sub_i64";
  case ir::BinaryOp::Mul: return "tg_mul_i64";
  case ir::BinaryOp::Div: return "tg_div_i64";
  case ir::BinaryOp::Mod: return "tg_mod_i64";
  case ir::BinaryOp::CeilDiv: return "tg_cdiv_i64";
  case ir::BinaryOp::Min: return "tg_min_i64";
  case ir::BinaryOp::Max: return "tg_max_i64";
  default: return nullptr;
  }
}
// The exact JS helper of the WebGPU module's runtime part (JsModuleEmitter.cpp) for an integer
// operator, or null.
const char* js_int_helper(ir::BinaryOp op) {
  switch (op) {
  case ir::BinaryOp::Add: return "iadd";
  case ir::BinaryOp::Sub: return "isub";
  case ir::BinaryOp::Mul: return "imul";
  case ir::BinaryOp::Div: return "idiv";
  case ir::BinaryOp::Mod: return "imod";
  case ir::BinaryOp::CeilDiv: return "icdiv";
  case ir::BinaryOp::Min: return "Math.min";
  case ir::BinaryOp::Max: return "Math.max";
  default: return nullptr;
  }
}
} // namespace

// Spec spelling, for comments: "M", "cdiv(N, 64)", "M * 2".
std::string spec_expr(const ir::Expr& e) {
  if (auto* i = e->as<ir::IntImm>())
    return std::to_string(i->value);
  if (auto* v = e->as<ir::VarRef>())
    return v->var->name;
  if (auto* c = e->as<ir::Cast>())
    return spec_expr(c->value);
  if (auto* b = e->as<ir::Binary>()) {
    switch (b->op) {
    case ir::BinaryOp::Min:
    case ir::BinaryOp::Max:
    case ir::BinaryOp::CeilDiv:
      return std::string(ir::binary_op_name(b->op)) + "(" + spec_expr(b->a) + ", " +
             spec_expr(b->b) + ")";
    default:
      return "(" + spec_expr(b->a) + " " + ir::binary_op_name(b->op) + " " + spec_expr(b->b) +
             ")";
    }
  }
  return "<expr>";
}

// C with checked arithmetic (tilegen/dispatch.h): overflow clears `ok` instead of wrapping.
std::string c_shape_expr(const ir::Expr& e, const std::string& ok) {
  if (auto* i = e->as<ir::IntImm>())
    return "INT64_C(" + std::to_string(i->value) + ")";
  if (auto* v = e->as<ir::VarRef>()) {
    TG_ASSERT(v->var->kind == ir::VarKind::Dim || v->var->kind == ir::VarKind::ValueParam,
              "tensor shape refers to '" + v->var->name + "', which is not a param");
    return v->var->name;
  }
  if (auto* c = e->as<ir::Cast>()) {
    TG_ASSERT(c->type.is_int(), "non-integer cast in a tensor shape");
    return c_shape_expr(c->value, ok);
  }
  if (auto* b = e->as<ir::Binary>()) {
    std::string a = c_shape_expr(b->a, ok), bb = c_shape_expr(b->b, ok);
    if (auto fn = c_int_helper(b->op))
      return std::string(fn) + "(" + a + ", " + bb +
             (b->op == ir::BinaryOp::Min || b->op == ir::BinaryOp::Max ? ")" : ", &" + ok + ")");
  }
  internal_error("tensor shape expression of kind " + std::string(ir::expr_kind_name(e->kind)) +
                 " cannot be evaluated at dispatch: " + spec_expr(e));
}

// A class predicate (schedule.classes) as a C condition over the call's dims, value params
// and flags: integer arithmetic through the checked helpers, which clear `ok` on overflow.
std::string c_pred_expr(const ir::Expr& e, const std::string& ok) {
  if (auto* b = e->as<ir::BoolImm>())
    return b->value ? "1" : "0";
  if (auto* v = e->as<ir::VarRef>(); v && v->var->kind == ir::VarKind::Flag)
    return "(" + v->var->name + " != 0)";
  if (auto* u = e->as<ir::Unary>()) {
    if (u->op == ir::UnaryOp::Not)
      return "!" + c_pred_expr(u->a, ok);
    return "tg_sub_i64(INT64_C(0), " + c_pred_expr(u->a, ok) + ", &" + ok + ")";
  }
  if (auto* b = e->as<ir::Binary>(); b && (ir::is_comparison(b->op) || ir::is_logical(b->op))) {
    std::string a = c_pred_expr(b->a, ok), bb = c_pred_expr(b->b, ok);
    std::string op = b->op == ir::BinaryOp::And  ? "&&"
                     : b->op == ir::BinaryOp::Or ? "||"
                                                 : ir::binary_op_name(b->op);
    return "(" + a + " " + op + " " + bb + ")";
  }
  if (auto* s = e->as<ir::Select>())
    return "(" + c_pred_expr(s->cond, ok) + " ? " + c_pred_expr(s->t, ok) + " : " +
           c_pred_expr(s->f, ok) + ")";
  return c_shape_expr(e, ok);
}

// ---- scalar requirements --------------------------------------------------------------------

namespace {

enum class Dialect { C, Js };

std::string float_literal(double v, Dialect d) {
  if (std::isinf(v))
    return std::string(v < 0 ? "-" : "") + (d == Dialect::C ? "__builtin_inf()" : "Infinity");
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

std::string require_expr(const ir::Expr& e, Dialect d, const std::string& ok) {
  const bool c = d == Dialect::C;
  if (auto* b = e->as<ir::BoolImm>())
    return c ? (b->value ? "1" : "0") : (b->value ? "true" : "false");
  if (auto* f = e->as<ir::FloatImm>())
    return float_literal(f->value, d);
  if (auto* i = e->as<ir::IntImm>())
    return c ? "INT64_C(" + std::to_string(i->value) + ")" : std::to_string(i->value);
  if (auto* v = e->as<ir::VarRef>()) {
    const ir::Var& x = *v->var;
    switch (x.kind) {
    case ir::VarKind::Flag: return c ? "(" + x.name + " != 0)" : "(f_" + x.name + " !== 0)";
    case ir::VarKind::Scalar:
      if (!c)
        return "s_" + x.name;
      return x.type.is_int() ? "(int64_t)" + x.name : c_scalar_as_double(x);
    case ir::VarKind::Dim:
    case ir::VarKind::ValueParam: return c ? x.name : "d." + x.name;
    default: internal_error("scalar requirement refers to '" + x.name + "'");
    }
  }
  if (auto* k = e->as<ir::Cast>()) {
    std::string v = require_expr(k->value, d, ok);
    if (k->type.is_float())
      return c ? "(double)(" + v + ")" : v;
    if (k->type.is_int() && k->value->type.is_float()) // C: NaN and out of range clear ok
      return c ? "tg_double_to_i64(" + v + ", &" + ok + ")" : "exact(Math.trunc(" + v + "))";
    if (k->type.is_int() && k->value->type.is_bool())
      return "(" + v + " ? 1 : 0)";
    return v;
  }
  if (auto* u = e->as<ir::Unary>()) {
    if (u->op == ir::UnaryOp::Neg && u->type.is_int()) // checked: -INT64_MIN overflows
      return c ? "tg_sub_i64(INT64_C(0), " + require_expr(u->a, d, ok) + ", &" + ok + ")"
               : "isub(0, " + require_expr(u->a, d, ok) + ")";
    return std::string(u->op == ir::UnaryOp::Not ? "!" : "-") + "(" + require_expr(u->a, d, ok) + ")";
  }
  if (auto* s = e->as<ir::Select>())
    return "(" + require_expr(s->cond, d, ok) + " ? " + require_expr(s->t, d, ok) + " : " +
           require_expr(s->f, d, ok) + ")";
  if (auto* b = e->as<ir::Binary>()) {
    std::string x = require_expr(b->a, d, ok), y = require_expr(b->b, d, ok);
    // Integer arithmetic (dims, integer scalars): checked in C, exact in JS; division defined
    // for every divisor (tilegen/dispatch.h, docs/spec.md "Operators and typing").
    if (b->type.is_int()) {
      if (c) {
        if (auto fn = c_int_helper(b->op))
          return std::string(fn) + "(" + x + ", " + y +
                 (b->op == ir::BinaryOp::Min || b->op == ir::BinaryOp::Max ? ")" : ", &" + ok + ")");
      } else if (auto fn = js_int_helper(b->op)) {
        return std::string(fn) + "(" + x + ", " + y + ")";
      }
    }
    switch (b->op) {
    case ir::BinaryOp::Min: return c ? "(" + x + " < " + y + " ? " + x + " : " + y + ")" : "Math.min(" + x + ", " + y + ")";
    case ir::BinaryOp::Max: return c ? "(" + x + " > " + y + " ? " + x + " : " + y + ")" : "Math.max(" + x + ", " + y + ")";
    case ir::BinaryOp::And: return "(" + x + " && " + y + ")";
    case ir::BinaryOp::Or: return "(" + x + " || " + y + ")";
    case ir::BinaryOp::Eq: return "(" + x + (c ? " == " : " === ") + y + ")";
    case ir::BinaryOp::Ne: return "(" + x + (c ? " != " : " !== ") + y + ")";
    case ir::BinaryOp::Mod: return c ? "__builtin_fmod(" + x + ", " + y + ")" : "(" + x + " % " + y + ")";
    default: return "(" + x + " " + ir::binary_op_name(b->op) + " " + y + ")";
    }
  }
  internal_error("scalar requirement of kind " + std::string(ir::expr_kind_name(e->kind)));
}

void collect_scalars(const ir::Expr& e, std::vector<const ir::Var*>& out) {
  if (auto* v = e->as<ir::VarRef>()) {
    if (v->var->kind == ir::VarKind::Scalar &&
        std::find(out.begin(), out.end(), v->var.get()) == out.end())
      out.push_back(v->var.get());
  } else if (auto* k = e->as<ir::Cast>()) {
    collect_scalars(k->value, out);
  } else if (auto* u = e->as<ir::Unary>()) {
    collect_scalars(u->a, out);
  } else if (auto* b = e->as<ir::Binary>()) {
    collect_scalars(b->a, out);
    collect_scalars(b->b, out);
  } else if (auto* s = e->as<ir::Select>()) {
    collect_scalars(s->cond, out);
    collect_scalars(s->t, out);
    collect_scalars(s->f, out);
  }
}

} // namespace

std::string c_scalar_as_double(const ir::Var& v) {
  if (v.type.is_narrow_float()) // tg_f16_to_float, tg_e4m3_to_float, ...
    return "(double)tg_" + std::string(v.type.name()) + "_to_float(" + v.name + ")";
  return "(double)" + v.name;
}

std::string c_require_expr(const ir::Expr& e, const std::string& ok) {
  return require_expr(e, Dialect::C, ok);
}
std::string js_require_expr(const ir::Expr& e) { return require_expr(e, Dialect::Js, ""); }
std::vector<const ir::Var*> require_scalars(const ir::Expr& e) {
  std::vector<const ir::Var*> out;
  collect_scalars(e, out);
  return out;
}

} // namespace tilegen::dispatch
