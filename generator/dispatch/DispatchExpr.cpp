// Expressions over a call's dims as C (dispatch code) and in spec spelling (comments): see
// DispatchExpr.h.
#include "dispatch/DispatchExpr.h"

#include "support/InternalError.h"

namespace tilegen::dispatch {

// ---- expressions over dims (tensor shapes) ------------------------------------------------

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
    switch (b->op) {
    case ir::BinaryOp::Add: return "tg_add_i64(" + a + ", " + bb + ", &" + ok + ")";
    case ir::BinaryOp::Sub: return "tg_sub_i64(" + a + ", " + bb + ", &" + ok + ")";
    case ir::BinaryOp::Mul: return "tg_mul_i64(" + a + ", " + bb + ", &" + ok + ")";
    case ir::BinaryOp::Div: return "tg_div_i64(" + a + ", " + bb + ", &" + ok + ")";
    case ir::BinaryOp::Mod: return "tg_mod_i64(" + a + ", " + bb + ", &" + ok + ")";
    case ir::BinaryOp::CeilDiv: return "tg_cdiv_i64(" + a + ", " + bb + ", &" + ok + ")";
    case ir::BinaryOp::Min: return "tg_min_i64(" + a + ", " + bb + ")";
    case ir::BinaryOp::Max: return "tg_max_i64(" + a + ", " + bb + ")";
    default: break;
    }
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

// `text` inside a C string literal / a C comment.
std::string c_string_body(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}
std::string c_comment_body(std::string text) {
  for (size_t i; (i = text.find("*/")) != std::string::npos;)
    text.replace(i, 2, "* /");
  return text;
}

} // namespace tilegen::dispatch
