// f16 views read through F16C (docs/c-backend.md, "Memory-bound kernels"; #38). A view of an
// f16 input in an f32 tile (emit/CViews.cpp) is a `const uint16_t*` into X; converting each
// read with tg_f16_to_f32 costs about 12 vector instructions per 16 values, because gcc 12
// vectorizes the scalar helper as integer arithmetic and never emits vcvtph2ps for a single
// element (not even for a `_Float16` cast: that loop stays scalar). On targets with
// Target::c_f16_rows the loops that read the view convert what they read first, with
// tg_load_row_f16 (vcvtph2ps, exact like tg_f16_to_f32), into a small f32 buffer tg_xr<n> in
// L1, and read the buffer:
//  * chunks: loops already strip-mined into chunks of a row (CExpRows' argument loop, a fused
//    store's tg_chunk loop) convert the chunk's columns [tg_c, tg_c + len) of the row;
//  * pieces: on targets with Target::c_put16, a fused store's pieces of 16 (CViews) and a
//    4-strip sum's pieces (COps emit_sum_pieces) convert their 16 columns; inlined with the
//    piece's loop, gcc keeps the buffer in registers;
//  * whole rows: any other simd loop (reductions, plain parallels) converts the tile's row
//    before the loop, so the loop itself (its strips and order of summation) is unchanged.
// The values read are the copy's, so results are bit-identical to it. A load the scope cannot
// serve (its row moves inside the loop, a column not of the chunk, more than two rows in one
// loop) converts on read as before: correct, slower.
#include "emit/CEmitter.h"

#include "ir/IRVisitor.h"
#include "ir/Simplify.h"

namespace tilegen::emit {

using namespace ir;

namespace {
constexpr int64_t kMaxRowFloats = 4096; // a whole-row buffer: at most 16 KiB of stack
constexpr size_t kMaxRows = 2;          // buffers per loop
} // namespace

bool CEmitter::begin_f16_rows(std::set<std::string> inner, const std::string& off,
                              const std::string& col, const std::string& k, int64_t len) {
  if (!target_.c_f16_rows || f16_rows_.active || !f16_views_live())
    return false; // a scope only where an f16 view is live (else nothing changes)
  f16_rows_ = F16Rows{};
  f16_rows_.active = true;
  f16_rows_.pos = static_cast<size_t>(out_.tellp());
  f16_rows_.indent = indent_;
  f16_rows_.off = off;
  f16_rows_.col = col;
  f16_rows_.k = k;
  f16_rows_.len = len;
  f16_rows_.inner = std::move(inner);
  return true;
}

bool CEmitter::f16_views_live() const {
  for (const auto& [b, v] : active_views_)
    if (v.storage == DType::f16())
      return true;
  return false;
}

void CEmitter::end_f16_rows() {
  F16Rows done = std::move(f16_rows_);
  f16_rows_ = F16Rows{};
  if (done.text.empty())
    return;
  need("tg_load_row_f16");
  const std::string pad(static_cast<size_t>(done.indent) * 2, ' ');
  std::string ins;
  for (const auto& t : done.text)
    ins += pad + t + "\n";
  std::string s = out_.str();
  s.insert(done.pos, ins);
  out_.str(s);
  out_.seekp(0, std::ios::end);
}

std::string CEmitter::f16_row_read(const ActiveView& v, const BufferPtr& b, const std::vector<Expr>& idx) {
  F16Rows& fr = f16_rows_;
  if (!fr.active || v.storage != DType::f16() || idx.empty())
    return "";
  Expr lead = make_i64(0);
  for (size_t k = 0; k + 1 < idx.size(); ++k)
    lead = Binary::make(BinaryOp::Add, lead, Binary::make(BinaryOp::Mul, idx[k], ref(v.lds[k])));
  lead = simplify(lead);
  for (const Var* x : vars_of(lead))
    if (fr.inner.count(name(x->name)))
      return ""; // the row moves inside the loop
  const Expr& col = idx.back();
  std::string at; // the index into the buffer
  int64_t len = 0;
  Expr first = lead;
  if (fr.off.empty()) {
    auto n = as_const_int(b->shape.back());
    if (!n || *n > kMaxRowFloats)
      return "";
    len = *n;
    at = expr(col, kAssign);
  } else {
    len = fr.len;
    if (auto r = col->as<VarRef>(); r && !fr.col.empty() && name(r->var->name) == fr.col) {
      at = fr.k;
    } else if (auto a = col->as<Binary>(); a && a->op == BinaryOp::Add && a->a->as<VarRef>() &&
                                           name(a->a->as<VarRef>()->var->name) == fr.off) {
      at = expr(a->b, kAssign);
    } else {
      return "";
    }
    first = simplify(Binary::make(BinaryOp::Add, lead, ref(fr.off)));
  }
  const std::string key = v.name + "[" + expr(first, kAssign) + "]";
  for (const auto& [k, buf] : fr.rows)
    if (k == key)
      return buf + "[" + at + "]";
  if (fr.rows.size() >= kMaxRows)
    return "";
  const std::string buf = "tg_xr" + std::to_string(++next_read_id_);
  fr.rows.emplace_back(key, buf);
  const std::string n = std::to_string(len);
  fr.text.push_back("_Alignas(64) float " + buf + "[" + n + "];");
  fr.text.push_back("tg_load_row_f16(" + buf + ", &" + key + ", " + n + "); /* " +
                    (fr.off.empty() ? "the row" : "the chunk") + " of f16 view " + v.name +
                    " in f32 (vcvtph2ps) */");
  return buf + "[" + at + "]";
}

} // namespace tilegen::emit
