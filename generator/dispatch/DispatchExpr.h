// The expression printers of the dispatch generator: tensor shapes and shape-class
// predicates (schedule.classes) as C over the dispatch function's dims, value params and flags,
// with checked int64 arithmetic (tilegen/dispatch.h), and in spec spelling for comments.
#pragma once

#include "ir/IR.h"

#include <string>
#include <vector>

namespace tilegen::dispatch {

// Spec spelling, for comments: "M", "cdiv(N, 64)", "(M * 2)".
std::string spec_expr(const ir::Expr& e);

// An integer expression over dims and value params as C: arithmetic through tg_*_i64, which
// clear the int named `ok` on overflow. Other expression kinds are an internal error.
std::string c_shape_expr(const ir::Expr& e, const std::string& ok);

// A boolean predicate (comparisons, &&, ||, !, flags) over the same, as a C condition.
std::string c_pred_expr(const ir::Expr& e, const std::string& ok);

// A scalar argument's value as a C double: 16- and 8-bit floats through the runtime's
// tg_<type>_to_float.
std::string c_scalar_as_double(const ir::Var& v);

// A scalar's `require` predicate (ir::Kernel::scalar_requirements) over scalars, dims, value
// params and flags. Float arithmetic is in double; integer sub-expressions go through
// c_shape_expr. C: scalars are read from the public function's parameters (16-bit and 8-bit
// floats converted), dims and flags by name. JS (the WebGPU module): dims are `d.NAME`, flags
// `f_NAME`, scalars `s_NAME`.
std::string c_require_expr(const ir::Expr& e, const std::string& ok);
std::string js_require_expr(const ir::Expr& e);
// Every scalar the predicate reads, first use first (for the failure message).
std::vector<const ir::Var*> require_scalars(const ir::Expr& e);

} // namespace tilegen::dispatch
