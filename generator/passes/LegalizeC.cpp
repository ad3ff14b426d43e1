#include "passes/LegalizeC.h"

#include "ir/IRMutator.h"
#include "support/InternalError.h"

namespace tilegen::passes {

using namespace ir;

namespace {

bool is_narrow_on_chip(const BufferPtr& b) {
  return b->scope != MemScope::Global && b->dtype.is_narrow_float();
}

// Whether every value of `from` is exactly representable in the narrow float type `to` (i8 and
// both FP8 formats fit f16 and bf16).
bool exact_in(DType from, DType to) {
  return from == to || (to.is_16bit_float() && (from == DType::i8() || from.is_fp8()));
}

Expr as_f32(const Expr& v) { return v->type == DType::f32() ? v : Cast::make(DType::f32(), v, v->loc); }

// f32(t16(v)): the value rounded through the 16-bit type, as f32.
Expr round_through(const Expr& v, DType t16) {
  if (auto c = v->as<Cast>(); c && c->type == t16)
    return Cast::make(DType::f32(), v, v->loc);
  return Cast::make(DType::f32(), Cast::make(t16, as_f32(v), v->loc), v->loc);
}

class LegalizerC : public IRMutator {
protected:
  BufferPtr rewrite_buffer(const BufferPtr& b) override {
    BufferPtr nb = IRMutator::rewrite_buffer(b);
    if (!is_narrow_on_chip(b))
      return nb;
    return make_buffer(nb->name, nb->scope, DType::f32(), nb->shape, nb->access, nb->loc);
  }

  // A 16-bit value next to an f32 one (a legalized load) is widened, which is exact.
  std::pair<Expr, Expr> unify(Expr a, Expr b) {
    if (a->type != b->type) {
      if (a->type.is_narrow_float() && b->type == DType::f32())
        a = as_f32(a);
      else if (b->type.is_narrow_float() && a->type == DType::f32())
        b = as_f32(b);
    }
    return {a, b};
  }

  Expr mutate_Binary(const Binary* n, const Expr& self) override {
    Expr a = mutate(n->a), b = mutate(n->b);
    if (a == n->a && b == n->b)
      return self;
    auto [x, y] = unify(a, b);
    return Binary::make(n->op, x, y, n->loc);
  }

  Expr mutate_Select(const Select* n, const Expr& self) override {
    Expr c = mutate(n->cond), t = mutate(n->t), f = mutate(n->f);
    if (c == n->cond && t == n->t && f == n->f)
      return self;
    auto [x, y] = unify(t, f);
    return Select::make(c, x, y, n->loc);
  }

  Stmt mutate_Store(const Store* n, const Stmt& self) override {
    if (!is_narrow_on_chip(n->buffer))
      return IRMutator::mutate_Store(n, self);
    bool changed = false;
    auto idx = mutate_all(n->indices, changed);
    BufferPtr b = mutate_buffer(n->buffer);
    Expr v = mutate(n->value);
    if (n->op == StoreOp::Add) {
      // Add in f32 and round once: the addend's own cast to the 16-bit type is dropped.
      if (auto c = v->as<Cast>(); c && c->type == n->buffer->dtype && c->value->type == DType::f32())
        v = c->value;
      v = Binary::make(BinaryOp::Add, Load::make(b, idx, n->loc), as_f32(v), n->loc);
    }
    return Store::make(b, std::move(idx), round_through(v, n->buffer->dtype), StoreOp::Assign,
                       n->loc);
  }

  Stmt mutate_Fill(const Fill* n, const Stmt& self) override {
    if (!is_narrow_on_chip(n->dst))
      return IRMutator::mutate_Fill(n, self);
    return Fill::make(mutate_buffer(n->dst), round_through(mutate(n->value), n->dst->dtype), n->loc);
  }

  Stmt mutate_Copy(const Copy* n, const Stmt& self) override {
    const BufferPtr& dst_old = n->dst.buffer;
    if (!is_narrow_on_chip(dst_old) || exact_in(n->src.buffer->dtype, dst_old->dtype))
      return IRMutator::mutate_Copy(n, self);
    // A rounding copy: parallel over the tile, one rounding store per element.
    Region src = mutate_region(n->src), dst = mutate_region(n->dst);
    Expr pad = mutate(n->pad);
    const size_t r = src.tile_rank();
    std::vector<VarPtr> vars;
    std::vector<Expr> point;
    for (size_t i = 0; i < r; ++i) {
      vars.push_back(make_var("tg_i" + std::to_string(i), VarKind::ParallelVar, DType::i64(), n->loc));
      point.push_back(VarRef::make(vars.back(), n->loc));
    }
    auto index = [&](const Region& reg) {
      std::vector<Expr> idx = reg.offsets;
      const size_t lead = reg.buffer->rank() - r;
      for (size_t i = 0; i < r; ++i)
        idx[lead + i] = Binary::make(BinaryOp::Add, reg.offsets[lead + i], point[i], n->loc);
      return idx;
    };
    auto src_idx = index(src);
    Expr value = Load::make(src.buffer, src_idx, n->loc);
    if (src.buffer->scope == MemScope::Global) {
      // 0 <= i0 < n0 && 0 <= i1 < n1 ..., as one left-leaning conjunction.
      Expr inb;
      auto conj = [&](Expr c) { inb = inb ? Binary::make(BinaryOp::And, inb, c, n->loc) : c; };
      for (size_t d = 0; d < src_idx.size(); ++d) {
        conj(Binary::make(BinaryOp::Ge, src_idx[d], make_i64(0), n->loc));
        conj(Binary::make(BinaryOp::Lt, src_idx[d], src.buffer->shape[d], n->loc));
      }
      Expr p = pad->type == value->type ? pad : Cast::make(value->type, pad, n->loc);
      value = Select::make(inb, value, p, n->loc);
    }
    Stmt store = Store::make(dst.buffer, index(dst), round_through(value, dst_old->dtype),
                             StoreOp::Assign, n->loc);
    return Parallel::make(std::move(vars), src.extents, store, n->loc);
  }

  // Appends a rounding pass over a legalized accumulator written by gemm/reduce.
  Stmt round_after(Stmt op, const BufferPtr& old, const SourceLoc& loc) {
    BufferPtr b = mutate_buffer(old);
    std::vector<VarPtr> vars;
    std::vector<Expr> idx;
    for (size_t i = 0; i < b->rank(); ++i) {
      vars.push_back(make_var("tg_i" + std::to_string(i), VarKind::ParallelVar, DType::i64(), loc));
      idx.push_back(VarRef::make(vars.back(), loc));
    }
    Stmt st = Store::make(b, idx, round_through(Load::make(b, idx, loc), old->dtype),
                          StoreOp::Assign, loc);
    return Seq::make({std::move(op), Parallel::make(std::move(vars), b->shape, st, loc)}, loc);
  }

  Stmt mutate_Gemm(const Gemm* n, const Stmt& self) override {
    Stmt s = IRMutator::mutate_Gemm(n, self);
    return is_narrow_on_chip(n->c) ? round_after(s, n->c, n->loc) : s;
  }

  Stmt mutate_Reduce(const Reduce* n, const Stmt& self) override {
    Stmt s = IRMutator::mutate_Reduce(n, self);
    return is_narrow_on_chip(n->dst) ? round_after(s, n->dst, n->loc) : s;
  }
};

} // namespace

Kernel legalize_c(const Kernel& k) { return LegalizerC().mutate_kernel(k); }

} // namespace tilegen::passes
