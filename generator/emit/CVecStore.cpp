// Fused stores in AVX2 intrinsics (docs/c-backend.md, "Memory-bound kernels"; #38). A fused
// store (CViews.cpp) computes an elementwise value straight into an output row. Its portable
// form writes each chunk of 256 values into an L1 buffer with a simd loop that gcc vectorizes,
// then converts and streams the buffer (tg_stream_row_<type>): one extra store and load per
// vector, and the 16-bit rounding as gcc's vectorization of a scalar helper. In a bf16 rmsnorm
// that pass took as long as the summing pass.
//
// On targets with Target::c_vec_store, a fused store into a 16-bit output (f16, bf16) whose
// value the dialect below covers is printed as one loop over the row in steps of 16: two
// __m256 halves (columns tg_s and tg_s + 8) computed by nested intrinsic calls, converted and
// stored by tg_v16_put_<type> (streaming when the output is, with the next block's row
// prefetched as the row helpers do). bench/ab_cpu.sh, c_avx2 on a Zen 3 core: bf16 rmsnorm
// 1.18-1.23x, layernorm_bias 1.07-1.14x, softmax 1.07-1.14x; f16 1.03-1.09x; f32 outputs,
// which c_put16's pieces already keep in registers, 0.92-0.99x, so they keep the pieces.
// The dialect, f32 values only:
//  * + - * / min max, unary -, abs, sqrt, rsqrt, and select on f32 comparisons: each the
//    intrinsic with the scalar C's IEEE result (min/max are `a < b ? a : b` in both; no
//    contraction: a * b + c rounds twice, as on the `c` target);
//  * a load whose last index is j + (terms free of j) and whose other indices are free of j
//    (j the innermost parallel variable): 8 consecutive elements of an f32 on-chip buffer or
//    of a view (f32, or f16 / bf16 converted exactly as tg_<t>_to_f32 does);
//  * any f32 subexpression free of j: evaluated once per row by the scalar printer and
//    broadcast (`const __m256 tg_u<n> = _mm256_set1_ps(...)`).
// Anything else (a global tensor read directly, with its bounds guard; exp; integer values that
// depend on j) keeps the portable form. The vector loop runs where the innermost extent is a
// constant multiple of 16 and the row is 32-byte aligned (or the stores are cached); other
// rows take the portable path, and so does a file compiled without AVX2 and F16C (the loop is
// under `#if defined(__AVX2__) && defined(__F16C__)`).
#include "emit/CEmitter.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"
#include "ir/Substitute.h"

namespace tilegen::emit {

using namespace ir;

namespace {

// e = j + (terms free of j): j itself, or a sum or difference with j on one side at unit
// stride and the other side free of j.
bool unit_in(const Expr& e, const Var* j) {
  if (auto r = e->as<VarRef>())
    return r->var.get() == j;
  if (auto b = e->as<Binary>()) {
    if (b->op == BinaryOp::Add)
      return (unit_in(b->a, j) && !mentions_var(b->b, j)) || (unit_in(b->b, j) && !mentions_var(b->a, j));
    if (b->op == BinaryOp::Sub)
      return unit_in(b->a, j) && !mentions_var(b->b, j);
  }
  return false;
}

const char* cmp_predicate(BinaryOp op) {
  switch (op) { // C's comparisons: false on NaN, except != (unordered: true)
  case BinaryOp::Lt: return "_CMP_LT_OQ";
  case BinaryOp::Le: return "_CMP_LE_OQ";
  case BinaryOp::Gt: return "_CMP_GT_OQ";
  case BinaryOp::Ge: return "_CMP_GE_OQ";
  case BinaryOp::Eq: return "_CMP_EQ_OQ";
  case BinaryOp::Ne: return "_CMP_NEQ_UQ";
  default: return nullptr;
  }
}

} // namespace

// The f32 value e at the 8 columns j = col, ..., col + 7, as a __m256 expression; "" where e
// leaves the dialect. Broadcasts of subexpressions free of j are appended to lets (deduplicated).
std::string CEmitter::vec8(const Expr& e, const VarPtr& j, const Expr& col, VecLets& lets) {
  if (e->type != DType::f32())
    return "";
  if (!mentions_var(e, j.get())) {
    const std::string s = "_mm256_set1_ps(" + expr(e, kAssign) + ")";
    for (const auto& [name, text] : lets)
      if (text == s)
        return name;
    lets.emplace_back("tg_u" + std::to_string(++next_read_id_), s);
    return lets.back().first;
  }
  auto call = [](const std::string& fn, const std::vector<std::string>& a) {
    std::string s = fn + "(";
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].empty())
        return std::string();
      s += (i ? ", " : "") + a[i];
    }
    return s + ")";
  };
  auto v = [&](const Expr& x) { return vec8(x, j, col, lets); };
  switch (e->kind) {
  case ExprKind::Load: return vec8_load(e->as<Load>(), j, col);
  case ExprKind::Cast: {
    const Cast* c = e->as<Cast>();
    return c->value->type == DType::f32() ? v(c->value) : "";
  }
  case ExprKind::Unary: {
    const Unary* u = e->as<Unary>();
    return u->op == UnaryOp::Neg ? call("_mm256_xor_ps", {v(u->a), "_mm256_set1_ps(-0.0f)"}) : "";
  }
  case ExprKind::Binary: {
    const Binary* b = e->as<Binary>();
    const char* fn = nullptr;
    switch (b->op) {
    case BinaryOp::Add: fn = "_mm256_add_ps"; break;
    case BinaryOp::Sub: fn = "_mm256_sub_ps"; break;
    case BinaryOp::Mul: fn = "_mm256_mul_ps"; break;
    case BinaryOp::Div: fn = "_mm256_div_ps"; break;
    case BinaryOp::Min: fn = "_mm256_min_ps"; break; // a < b ? a : b, as tg_min_f32
    case BinaryOp::Max: fn = "_mm256_max_ps"; break; // a > b ? a : b, as tg_max_f32
    default: return "";
    }
    return call(fn, {v(b->a), v(b->b)});
  }
  case ExprKind::Call: {
    const Call* c = e->as<Call>();
    if (c->args.size() != 1)
      return "";
    const std::string a = v(c->args[0]);
    switch (c->fn) {
    case Intrinsic::Abs: return call("_mm256_andnot_ps", {"_mm256_set1_ps(-0.0f)", a});
    case Intrinsic::Sqrt: return call("_mm256_sqrt_ps", {a});
    case Intrinsic::Rsqrt: return call("_mm256_div_ps", {"_mm256_set1_ps(1.0f)", call("_mm256_sqrt_ps", {a})});
    default: return "";
    }
  }
  case ExprKind::Select: {
    const Select* s = e->as<Select>();
    const Binary* c = s->cond->as<Binary>();
    const char* pred = c ? cmp_predicate(c->op) : nullptr;
    if (!pred || c->a->type != DType::f32())
      return "";
    return call("_mm256_blendv_ps", {v(s->f), v(s->t), call("_mm256_cmp_ps", {v(c->a), v(c->b), pred})});
  }
  default: return "";
  }
}

// 8 consecutive elements (columns col ... col + 7 of j) of an f32 on-chip buffer or a view, in
// f32; "" for any other load.
std::string CEmitter::vec8_load(const Load* l, const VarPtr& j, const Expr& col) {
  if (bound_loads_.count(l) || l->indices.empty() || l->buffer->dtype != DType::f32())
    return "";
  const std::vector<Expr>& idx = l->indices;
  for (size_t k = 0; k + 1 < idx.size(); ++k)
    if (mentions_var(idx[k], j.get()))
      return "";
  if (!unit_in(idx.back(), j.get()))
    return "";
  const VarMap at_col{{j.get(), col}};
  std::vector<Expr> at;
  for (const Expr& i : idx)
    at.push_back(simplify(substitute(i, at_col)));
  std::string elem;
  DType storage = DType::f32();
  if (auto it = active_views_.find(l->buffer.get()); it != active_views_.end()) {
    Expr lin = at.back();
    for (size_t k = 0; k + 1 < at.size(); ++k)
      lin = Binary::make(BinaryOp::Add, Binary::make(BinaryOp::Mul, at[k], ref(it->second.lds[k])), lin);
    elem = it->second.name + "[" + expr(simplify(lin)) + "]";
    storage = it->second.storage;
  } else if (l->buffer->scope != MemScope::Global) {
    elem = access(l->buffer, at);
  } else {
    return ""; // a guarded global read
  }
  if (storage == DType::f32())
    return "_mm256_loadu_ps(&" + elem + ")";
  if (storage == DType::bf16() || storage == DType::f16())
    return need(std::string("tg_v8_load_") + storage.name()) + "(&" + elem + ")";
  return "";
}

// Before the portable chunks of a fused store (emit_fused_store, inside the loops over the
// outer rows; tg_row, tg_nt and tg_pf declared): the row in vectors of 16 where the value is
// in the dialect, ending with `} else` and `#endif` so that the caller's block that follows is
// the fallback. False (nothing printed) where the target, the extent or the value does not
// qualify.
bool CEmitter::emit_vec_store(const Parallel* p, const Expr& value, const VarMap& at_point,
                              const BufferPtr& y, bool prefetch) {
  // 16-bit outputs only: f32 rows are already kept in registers by c_put16's pieces (the
  // intrinsics measured 0.92-0.99x of them; docs/c-backend.md)
  if (!target_.c_vec_store || !y->dtype.is_16bit_float())
    return false;
  auto n = as_const_int(p->extents.back());
  if (!n || *n <= 0 || *n % 16 != 0)
    return false;
  const VarPtr& j = p->vars.back();
  VarMap outer = at_point;
  outer.erase(j.get());
  const Expr v = simplify(substitute(value, outer));
  VecLets lets;
  const Expr s = ref("tg_s");
  const std::string lo = vec8(v, j, s, lets);
  const std::string hi = lo.empty() ? "" : vec8(v, j, Binary::make(BinaryOp::Add, s, make_i64(8)), lets);
  if (lo.empty() || hi.empty())
    return false;
  line("#if defined(__AVX2__) && defined(__F16C__)");
  open("if (!tg_nt || ((uintptr_t)tg_row & 31u) == 0)");
  line("/* in registers: 16 values a step, two vectors of 8 (docs/c-backend.md) */");
  for (const auto& [name, text] : lets)
    line("const __m256 " + name + " = " + text + ";");
  open("for (int64_t tg_s = 0; tg_s < " + expr(p->extents.back(), kRel + 1) + "; tg_s += 16)");
  line("const __m256 tg_lo = " + lo + ";");
  line("const __m256 tg_hi = " + hi + ";");
  // one prefetch per 64-byte line of the next row (32 16-bit values: every other step)
  line(need("tg_v16_put_" + std::string(y->dtype.name())) + "(tg_row + tg_s, tg_lo, tg_hi, tg_nt, " +
       (prefetch ? "tg_pf && (tg_s & 31) == 0 ? tg_pf + tg_s : NULL" : "NULL") + ");");
  close();
  close("} else");
  line("#endif");
  return true;
}

} // namespace tilegen::emit
