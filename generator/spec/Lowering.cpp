// Lowering: kernel-level declarations and the body's ops (expressions are in LowerExpr.cpp).
#include "spec/Lowering.h"

#include "spec/LowerContext.h"

#include "ir/IRVisitor.h"

namespace tilegen::spec {

using ir::DType;
using ir::Expr;
using ir::Stmt;

namespace {

class KernelLowerer {
public:
  KernelLowerer(const Spec& spec, DiagEngine& diag, const std::map<std::string, DType>& binding)
      : spec_(spec), diag_(diag), lo_(diag, binding) {}

  std::optional<ir::Kernel> run(const std::vector<std::pair<std::string, DType>>& binding) {
    int errors = diag_.error_count();
    ir::Kernel k;
    k.name = spec_.kernel.name;
    k.summary = spec_.summary;
    k.loc = spec_.kernel.loc;
    k.type_binding = binding;
    lo_.scope.push();
    declarations(k);
    if (diag_.error_count() != errors)
      return std::nullopt;
    lo_.scope.push();
    std::vector<Stmt> body = ops(spec_.body);
    lo_.scope.pop();
    if (diag_.error_count() != errors)
      return std::nullopt;
    k.body = ir::Seq::make(std::move(body), spec_.body_loc);
    return k;
  }

private:
  bool declare(SymKind kind, const Name& n, ir::VarPtr var = nullptr, ir::BufferPtr buf = nullptr) {
    return lo_.scope.declare(Symbol{kind, n.name, n.loc, std::move(var), std::move(buf)}, diag_);
  }

  // True if e is certainly even for every value the spec allows: an even literal, a dim
  // declared with an even multiple_of, a value param or tile constant whose values are all even,
  // and sums, differences and products of such (a product with one even factor).
  bool known_even(const Expr& e) const {
    if (auto i = e->as<ir::IntImm>())
      return i->value % 2 == 0;
    if (auto c = e->as<ir::Cast>())
      return c->value->type.is_int() && known_even(c->value);
    if (auto v = e->as<ir::VarRef>()) {
      for (const auto& d : kernel_->dims) {
        if (d.var != v->var)
          continue;
        if (d.var->kind == ir::VarKind::ValueParam) {
          for (int64_t x : d.values)
            if (x % 2 != 0)
              return false;
          return !d.values.empty();
        }
        return d.multiple_of && *d.multiple_of % 2 == 0;
      }
      for (const auto& t : kernel_->tile_consts) {
        if (t.var != v->var)
          continue;
        auto all_even = [](const std::vector<int64_t>& xs) {
          for (int64_t x : xs)
            if (x % 2 != 0)
              return false;
          return true;
        };
        bool even = all_even(t.candidates);
        for (const auto& [target, xs] : t.per_target)
          even &= all_even(xs);
        for (const auto& [cls, per] : t.per_class_target)
          for (const auto& [target, xs] : per)
            even &= all_even(xs);
        return even;
      }
      return false;
    }
    if (auto b = e->as<ir::Binary>()) {
      if (b->op == ir::BinaryOp::Add || b->op == ir::BinaryOp::Sub)
        return known_even(b->a) && known_even(b->b);
      if (b->op == ir::BinaryOp::Mul)
        return known_even(b->a) || known_even(b->b);
    }
    return false;
  }

  // The byte shape of a packed tensor: two u4/i4/e2m1 elements per byte along the last dim,
  // whose extent must be even (so that rows start on a byte); e8m0 keeps its shape.
  bool packed_shape(const TensorDecl& t, ir::Packed p, std::vector<Expr>& shape) {
    if (ir::packed_per_byte(p) == 1)
      return true;
    const char* name = ir::packed_name(p);
    if (shape.empty()) {
      diag_.error(t.type.loc, std::string("a tensor of packed type ") + name +
                                  " needs at least one dim (two elements share a byte along "
                                  "the last one)");
      return false;
    }
    if (!known_even(shape.back())) {
      // The fix depends on what the extent is: a dim, a value param (name its odd values), or
      // an expression the rule cannot show even.
      std::string fix = "make it a product with an even factor, or store the codes as u8 (one per byte)";
      if (auto v = shape.back()->as<ir::VarRef>())
        for (const auto& d : kernel_->dims) {
          if (d.var != v->var)
            continue;
          if (d.var->kind == ir::VarKind::ValueParam) {
            std::string odd;
            for (int64_t x : d.values)
              if (x % 2 != 0)
                odd += (odd.empty() ? "" : ", ") + std::to_string(x);
            fix = "'" + d.var->name + "' takes the odd value(s) " + odd + ": give it even values only";
          } else {
            fix = "declare '" + d.var->name + "' with an even multiple_of ({dim: dynamic, multiple_of: 2}); "
                  "the dispatch then rejects an odd value";
          }
        }
      diag_.error(t.shape.back()->loc,
                  std::string("the last dim of tensor '") + t.name.name + "' (packed type " +
                      name + ", two elements per byte) must be even, and '" +
                      t.shape.back()->text() + "' may be odd; " + fix);
      return false;
    }
    shape.back() = ir::Binary::make(ir::BinaryOp::Div, shape.back(), ir::make_i64(2),
                                    t.shape.back()->loc);
    return true;
  }

  void declarations(ir::Kernel& k) {
    kernel_ = &k;
    for (const auto& t : spec_.types)
      declare(SymKind::TypeParam, t.name);
    for (const auto& d : spec_.params) {
      ir::DimParam p;
      auto kind = d.value_set ? ir::VarKind::ValueParam : ir::VarKind::Dim;
      p.var = ir::make_var(d.name.name, kind, DType::i64(), d.name.loc);
      if (d.multiple_of)
        p.multiple_of = d.multiple_of->value;
      if (d.min)
        p.min = d.min->value;
      if (d.max)
        p.max = d.max->value;
      for (const auto& v : d.values)
        p.values.push_back(v.value);
      if (declare(d.value_set ? SymKind::ValueParam : SymKind::Dim, d.name, p.var))
        k.dims.push_back(std::move(p));
    }
    for (const auto& f : spec_.flags) {
      auto v = ir::make_var(f.name, ir::VarKind::Flag, DType::boolean(), f.loc);
      if (declare(SymKind::Flag, f, v))
        k.flags.push_back(v);
    }
    for (const auto& s : spec_.scalars) {
      auto t = lo_.dtype(s.type, "scalar '" + s.name.name + "'");
      if (t == ir::DType::u64()) { // tg_variant_args carries scalars as doubles
        diag_.error(s.type.loc, "scalar '" + s.name.name + "' cannot be u64: scalars reach the "
                                "kernel as doubles, exact up to 2^53 only; use a u32 scalar, or a "
                                "one-element u64 tensor (docs/spec.md \"Unsigned integers\")");
        t.reset();
      }
      if (!t) {
        declare(SymKind::Scalar, s.name);
        continue;
      }
      auto v = ir::make_var(s.name.name, ir::VarKind::Scalar, *t, s.name.loc);
      if (declare(SymKind::Scalar, s.name, v))
        k.scalars.push_back(v);
    }
    for (const auto& tc : spec_.tile_consts) {
      ir::TileConst c;
      c.var = ir::make_var(tc.name.name, ir::VarKind::TileConst, DType::i64(), tc.name.loc);
      c.candidates = tc.candidates;
      c.per_target = tc.per_target;
      c.per_class_target = tc.per_class_target;
      c.loc = tc.loc;
      if (declare(SymKind::TileConst, tc.name, c.var))
        k.tile_consts.push_back(std::move(c));
    }
    // Tensors after tile constants so that "tile constant in a tensor shape" gets its own
    // message rather than "unknown name".
    for (const auto& t : spec_.tensors) {
      // A packed type (u4, i4, e2m1, e8m0) is held as bytes (docs/spec.md "Packed types").
      const auto packed = packed_from_name(t.type.name);
      auto dt = packed ? std::optional<DType>(DType::u8())
                       : lo_.dtype(t.type, "tensor '" + t.name.name + "'");
      std::vector<Expr> shape;
      bool ok = dt.has_value();
      for (const auto& e : t.shape) {
        Expr x = lo_.index_expr(*e, Where::TensorShape, "a tensor dimension");
        ok &= x != nullptr;
        shape.push_back(x);
      }
      if (!ok) {
        declare(SymKind::Tensor, t.name);
        continue;
      }
      if (packed && !packed_shape(t, *packed, shape)) {
        declare(SymKind::Tensor, t.name);
        continue;
      }
      auto b = ir::make_buffer(t.name.name, ir::MemScope::Global, *dt, std::move(shape), t.access,
                               t.name.loc);
      if (packed) {
        auto pb = std::make_shared<ir::Buffer>(*b);
        pb->packed = *packed;
        b = pb;
      }
      if (declare(SymKind::Tensor, t.name, nullptr, b))
        k.tensors.push_back(b);
    }
    // After the tensors: a require naming one gets "is a tensor", not "unknown name".
    for (const auto& s : spec_.scalars) {
      if (!s.require)
        continue;
      Expr p = lo_.expr(*s.require->pred, Where::ScalarRequire);
      if (!p)
        continue;
      if (!p->type.is_bool()) {
        diag_.error(s.require->loc, "the 'require' of scalar '" + s.name.name +
                                        "' must be bool, found " + p->type.name());
        continue;
      }
      // The dispatch evaluates it in C and JavaScript: comparisons, logic, arithmetic, min,
      // max and selects only.
      struct Calls : ir::IRVisitor {
        const ir::Call* first = nullptr;
        void visit_Call(const ir::Call* c) override {
          if (!first)
            first = c;
        }
      } calls;
      calls.visit(p);
      if (calls.first) {
        diag_.error(calls.first->loc.known() ? calls.first->loc : s.require->loc,
                    "the 'require' of scalar '" + s.name.name +
                        "' may use comparisons, &&, ||, !, arithmetic, min, max and ?: only, "
                        "not function calls");
        continue;
      }
      k.scalar_requirements.push_back({p, s.require->text, s.require->loc});
    }
    for (const auto& r : spec_.requires_) {
      Expr p = lo_.expr(*r.pred, Where::Require);
      if (!p)
        continue;
      if (!p->type.is_bool()) {
        diag_.error(r.loc,
                    std::string("a 'require' predicate must be bool, found ") + p->type.name());
        continue;
      }
      k.requirements.push_back({p, r.text, r.loc});
    }
    for (const auto& c : spec_.classes) {
      if (c.pred) {
        Expr p = lo_.expr(*c.pred, Where::ShapeClass);
        if (!p)
          continue;
        if (!p->type.is_bool()) {
          diag_.error(c.loc, "the predicate of shape class '" + c.name.name +
                                 "' must be bool, found " + p->type.name());
          continue;
        }
        k.shape_classes.push_back({c.name.name, ir::Requirement{p, c.text, c.loc}});
      }
      class_shape(c, k);
    }
    for (const auto& g : spec_.grid) {
      Expr e = lo_.index_expr(*g.extent, Where::Grid, "a grid extent");
      auto v = ir::make_var(g.index.name, ir::VarKind::BlockIndex, DType::i64(), g.index.loc);
      if (declare(SymKind::BlockIndex, g.index, v) && e)
        k.grid.push_back({v, e});
    }
    if (spec_.threads) {
      k.threads = lo_.index_expr(*spec_.threads, Where::Threads, "the thread count");
      if (auto n = Lowerer::const_int(k.threads); n && *n <= 0)
        diag_.error(spec_.threads->loc,
                    "the thread count must be positive, found " + std::to_string(*n));
    } else {
      k.threads = ir::make_i64(128);
    }
  }

  // A class's pinned representative dims: runtime dims only, within their declared limits.
  void class_shape(const ShapeClassDecl& c, ir::Kernel& k) {
    const std::string ctx = "the shape of shape class '" + c.name.name + "'";
    for (const auto& [dim, v] : c.shape) {
      const ir::DimParam* d = nullptr;
      for (const auto& p : k.dims)
        if (p.var->name == dim.name)
          d = &p;
      if (!d || d->var->kind != ir::VarKind::Dim) {
        const Symbol* sym = lo_.scope.lookup(dim.name);
        diag_.error(dim.loc, ctx + " may pin runtime dims only; '" + dim.name + "' is " +
                                 (sym ? std::string("a ") + sym_kind_name(sym->kind)
                                      : std::string("not declared")));
        continue;
      }
      std::string why;
      if (d->min && v.value < *d->min)
        why = "at least " + std::to_string(*d->min);
      else if (d->max && v.value > *d->max)
        why = "at most " + std::to_string(*d->max);
      else if (d->multiple_of && v.value % *d->multiple_of != 0)
        why = "a multiple of " + std::to_string(*d->multiple_of);
      if (!why.empty()) {
        diag_.error(v.loc, ctx + " gives " + dim.name + " = " + std::to_string(v.value) +
                               ", but " + dim.name + " must be " + why);
        continue;
      }
      k.class_shapes[c.name.name].emplace_back(dim.name, v.value);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Ops

  std::vector<Stmt> ops(const std::vector<Op>& list) {
    std::vector<Stmt> out;
    for (const auto& o : list) {
      int errors = diag_.error_count();
      op(o, out);
      (void)errors; // keep going: later ops report their own errors
    }
    return out;
  }

  std::vector<Stmt> nested(const std::vector<Op>& list) {
    lo_.scope.push();
    std::vector<Stmt> s = ops(list);
    lo_.scope.pop();
    return s;
  }

  void op(const Op& o, std::vector<Stmt>& out) {
    switch (o.kind) {
    case OpKind::Shared:
      return alloc(o, ir::MemScope::Shared, out);
    case OpKind::Fragment:
      return alloc(o, ir::MemScope::Fragment, out);
    case OpKind::Local:
      return alloc(o, ir::MemScope::Local, out);
    case OpKind::Fill:
      return push(out, fill(o));
    case OpKind::Copy: {
      Stmt c = copy(o, false);
      if (c && staged_read_ == c.get()) { // its Alloc scopes over the rest of this body
        for (const auto& x : c->as<ir::Seq>()->stmts)
          push(out, x);
        return;
      }
      return push(out, c);
    }
    case OpKind::AtomicAdd:
      return push(out, copy(o, true));
    case OpKind::Gemm:
      return push(out, gemm(o));
    case OpKind::Reduce:
      return push(out, reduce(o));
    case OpKind::Parallel:
      return push(out, parallel(o));
    case OpKind::For:
      return push(out, loop(o));
    case OpKind::Pipelined: {
      Stmt l = loop(o);
      push(out, l);
      if (o.split_loc.known() && l)
        push(out, combine(o));
      return;
    }
    case OpKind::If:
      return push(out, if_(o));
    }
  }
  static void push(std::vector<Stmt>& out, Stmt s) {
    if (s)
      out.push_back(std::move(s));
  }

  void alloc(const Op& o, ir::MemScope scope, std::vector<Stmt>& out) {
    for (const auto& b : o.buffers) {
      std::string what = std::string(ir::mem_scope_name(scope)) + " buffer '" + b.name.name + "'";
      auto dt = lo_.dtype(b.type, what);
      std::vector<Expr> shape;
      bool ok = dt.has_value();
      for (const auto& e : b.shape) {
        Expr x = lo_.index_expr(*e, Where::BufferShape, "a buffer dimension");
        if (x) {
          if (auto n = Lowerer::const_int(x); n && *n <= 0) {
            diag_.error(e->loc,
                        "dimension of " + what + " must be positive, found " + std::to_string(*n));
            x = nullptr;
          }
        }
        ok &= x != nullptr;
        shape.push_back(x);
      }
      if (!ok) {
        declare(SymKind::Buffer, b.name);
        continue;
      }
      auto buf = ir::make_buffer(b.name.name, scope, *dt, std::move(shape), ir::Access::ReadWrite,
                                 b.name.loc);
      if (declare(SymKind::Buffer, b.name, nullptr, buf))
        out.push_back(ir::Alloc::make(buf, b.name.loc));
    }
  }

  // An on-chip buffer named by a plain name (fill dst, gemm operands, reduce operands).
  ir::BufferPtr onchip(const SExprPtr& e, const std::string& role) {
    if (!e)
      return nullptr;
    if (e->kind != EKind::Name) {
      diag_.error(e->loc, role + " must be the name of an on-chip buffer, found '" + e->text() + "'");
      return nullptr;
    }
    const Symbol* s = lo_.buffer_symbol(*e, role);
    if (!s)
      return nullptr;
    if (s->kind == SymKind::Tensor) {
      diag_.error(e->op_loc, role + " must be an on-chip buffer (shared, fragment or local); '" +
                                 e->name + "' is a tensor");
      return nullptr;
    }
    return s->buf;
  }

  Stmt fill(const Op& o) {
    if (o.dst && o.dst->kind == EKind::Name)
      if (const Symbol* s = lo_.scope.lookup(o.dst->name);
          s && s->kind == SymKind::Tensor && s->buf && s->buf->access == ir::Access::Read) {
        diag_.error(o.dst->op_loc, "cannot fill tensor '" + s->name + "' (declared access: read)");
        return nullptr;
      }
    ir::BufferPtr dst = onchip(o.dst, "the destination of 'fill'");
    if (!dst)
      return nullptr;
    Expr v = lo_.expr(*o.value, Where::Body);
    if (!v)
      return nullptr;
    v = lo_.store_value(v, dst->dtype, *o.value, "'" + dst->name + "'");
    if (!v)
      return nullptr;
    return ir::Fill::make(dst, v, o.loc);
  }

  // One side of a copy: a whole buffer (plain name) or a tensor/buffer with start indices.
  struct Side {
    const Symbol* sym = nullptr;
    bool whole = false;
    std::vector<Expr> offsets;
    const SExpr* e = nullptr;
  };
  bool side(const SExprPtr& e, const std::string& role, bool write, Side& out) {
    out.e = e.get();
    if (e->kind != EKind::Name && e->kind != EKind::Index) {
      diag_.error(e->loc, role + " must be a buffer name or 'X[i, ...]', found '" + e->text() + "'");
      return false;
    }
    const Symbol* s = lo_.buffer_symbol(*e, role);
    if (!s)
      return false;
    out.sym = s;
    const ir::Buffer& b = *s->buf;
    if (b.scope == ir::MemScope::Global) {
      if (write && b.access == ir::Access::Read) {
        diag_.error(e->op_loc, "cannot write to tensor '" + b.name + "' (declared access: read)");
        diag_.note(b.loc, "'" + b.name + "' is declared here; use access: write or readwrite");
        return false;
      }
      if (!write && b.access == ir::Access::Write) {
        diag_.error(e->op_loc, "cannot read tensor '" + b.name + "' (declared access: write)");
        diag_.note(b.loc, "'" + b.name + "' is declared here; use access: readwrite to read it");
        return false;
      }
    }
    if (e->kind == EKind::Name) {
      if (b.scope == ir::MemScope::Global) {
        std::string example;
        for (size_t i = 0; i < b.rank(); ++i)
          example += (i ? ", i" : "i") + std::to_string(i);
        diag_.error(e->op_loc, role + ": tensor '" + b.name + "' needs start indices, e.g. " +
                                   b.name + "[" + example + "]");
        return false;
      }
      out.whole = true;
      return true;
    }
    if (e->args.size() != b.rank()) {
      diag_.error(e->loc, "'" + b.name + "' has rank " + std::to_string(b.rank()) + " but " +
                              count_of(e->args.size(), "start index", "start indices") + " given");
      return false;
    }
    for (const auto& a : e->args) {
      Expr x = lo_.index_expr(*a, Where::Body, "a start index");
      if (!x)
        return false;
      out.offsets.push_back(x);
    }
    return true;
  }

  // Region of a side given the tile shape.
  bool region(const Side& s, const std::vector<Expr>& tile, ir::Region& r) {
    const ir::BufferPtr& b = s.sym->buf;
    if (s.whole) {
      r = ir::Region::whole(b);
      return true;
    }
    if (tile.size() > b->rank()) {
      diag_.error(s.e->loc, "a tile of rank " + std::to_string(tile.size()) + " does not fit '" +
                                b->name + "' of rank " + std::to_string(b->rank()));
      return false;
    }
    r.buffer = b;
    r.offsets = s.offsets;
    r.extents = tile;
    return true;
  }

  bool same_shape(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (Lowerer::provably_different(a[i], b[i]))
        return false;
    return true;
  }

  Stmt copy(const Op& o, bool atomic) {
    std::string op = atomic ? "atomic_add" : "copy";
    Side src, dst;
    bool ok = side(o.src, "the source of '" + op + "'", false, src);
    ok = side(o.dst, "the destination of '" + op + "'", true, dst) && ok;
    if (!ok)
      return nullptr;
    if (!src.whole && !dst.whole) {
      diag_.error(o.loc, "one side of '" + op +
                             "' must be a whole buffer (its shape is the tile "
                             "shape); both '" +
                             o.src->text() + "' and '" + o.dst->text() + "' have indices");
      return nullptr;
    }
    const ir::Packed sp = src.sym->buf->packed, dp = dst.sym->buf->packed;
    if (atomic && dp != ir::Packed::None) {
      diag_.error(o.dst->op_loc, std::string("atomic_add into a tensor of packed type ") +
                                     ir::packed_name(dp) + " is not supported (f32 or i32 only)");
      return nullptr;
    }
    if (sp != ir::Packed::None && dp != ir::Packed::None) {
      diag_.error(o.loc, std::string("copy from packed tensor '") + src.sym->name + "' (" +
                             ir::packed_name(sp) + ") into packed tensor '" + dst.sym->name +
                             "' (" + ir::packed_name(dp) + "): copy through an on-chip buffer");
      return nullptr;
    }
    if (atomic) {
      if (dst.sym->buf->scope != ir::MemScope::Global) {
        diag_.error(o.dst->loc, "the destination of 'atomic_add' must be a tensor region");
        return nullptr;
      }
      DType t = dst.sym->buf->dtype;
      if (t != DType::f32() && t != DType::i32()) {
        diag_.error(o.dst->op_loc, std::string("atomic_add into a tensor of dtype ") + t.name() +
                                       " is not supported (f32 or i32 only)");
        return nullptr;
      }
    }
    if (src.whole && dst.whole) {
      const auto& a = src.sym->buf->shape;
      const auto& b = dst.sym->buf->shape;
      if (!same_shape(a, b)) {
        diag_.error(o.loc, "'" + op + "' between tiles of different shapes: '" + src.sym->name +
                               "' is " + Lowerer::show_shape(a) + ", '" + dst.sym->name + "' is " +
                               Lowerer::show_shape(b));
        return nullptr;
      }
    }
    const std::vector<Expr>& tile = src.whole ? src.sym->buf->shape : dst.sym->buf->shape;
    ir::Region rs, rd;
    if (!region(src, tile, rs) || !region(dst, tile, rd))
      return nullptr;
    if (atomic)
      return ir::AtomicAdd::make(rs, rd, o.loc);
    if (sp != ir::Packed::None || dp != ir::Packed::None)
      return packed_copy(o, src, dst, rs, rd);
    DType st = src.sym->buf->dtype;
    Expr pad;
    if (o.pad) {
      pad = lo_.expr(*o.pad, Where::Pad);
      if (!pad)
        return nullptr;
      pad = lo_.store_value(pad, st, *o.pad, "the pad of '" + src.sym->name + "'");
      if (!pad)
        return nullptr;
    } else {
      pad = ir::make_zero(st);
    }
    if (st.is_int() != dst.sym->buf->dtype.is_int() && st.is_float()) {
      diag_.error(o.loc, std::string("copying ") + st.name() + " '" + src.sym->name + "' into " +
                             dst.sym->buf->dtype.name() + " '" + dst.sym->name +
                             "' needs an explicit conversion (copy converts between float "
                             "types only)");
      return nullptr;
    }
    return ir::Copy::make(rs, rd, pad, o.loc);
  }

  // A copy with a packed side, as a parallel loop over the tile (docs/spec.md "Packed types").
  // Reading a packed tensor, each point converts one element (packed_read) into the on-chip
  // destination; out-of-range points take the pad. Writing one, each point writes one whole
  // byte, the codes of two neighbouring elements of the tile, so no two points (threads)
  // share a byte: the tile's last extent and its offset along the last dim must be even.
  Stmt packed_copy(const Op& o, const Side& src, const Side& dst, const ir::Region& rs,
                   const ir::Region& rd) {
    const bool reading = src.sym->buf->packed != ir::Packed::None;
    const ir::Region& packed = reading ? rs : rd;
    const ir::Region& onchip = reading ? rd : rs;
    const ir::BufferPtr& pb = packed.buffer;
    const ir::Packed p = pb->packed;
    const char* pname = ir::packed_name(p);
    const DType vt = packed_value_type(p);
    const ir::BufferPtr& ob = onchip.buffer;
    if (ob->scope == ir::MemScope::Global) {
      diag_.error(o.loc, std::string("copy between tensor '") + pb->name + "' of packed type " +
                             pname + " and tensor '" + ob->name +
                             "': copy through an on-chip buffer");
      return nullptr;
    }
    if (reading && vt.is_float() && ob->dtype.is_int()) {
      diag_.error(o.loc, std::string("copying ") + pname + " '" + pb->name + "' into " +
                             ob->dtype.name() + " '" + ob->name +
                             "' needs an explicit conversion (" + pname +
                             " is read as f32; copy into a float buffer)");
      return nullptr;
    }
    if (!reading && (vt.is_float() != ob->dtype.is_float())) {
      diag_.error(o.loc, std::string("copying ") + ob->dtype.name() + " '" + ob->name +
                             "' into tensor '" + pb->name + "' of packed type " + pname +
                             " needs " + (vt.is_float() ? "a float" : "an integer") +
                             " source buffer (" + pname + " codes " +
                             (vt.is_float() ? "f32 values" : "the low 4 bits of integers") + ")");
      return nullptr;
    }
    const bool pairs = ir::packed_per_byte(p) == 2;
    if (!reading && pairs) {
      Expr off = packed.offsets.back(), ext = packed.extents.back();
      if (!known_even(ext) || !known_even(off)) {
        const bool bad_ext = !known_even(ext);
        diag_.error(bad_ext ? o.loc : dst.e->args.back()->loc,
                    std::string("a copy into tensor '") + pb->name + "' of packed type " + pname +
                        " writes whole bytes (two elements each), so its tile must start at an "
                        "even element and have an even last extent; " +
                        (bad_ext ? "the tile's last extent '" + Lowerer::show(ext) + "'"
                                 : "the offset '" + dst.e->args.back()->text() + "'") +
                        " may be odd (an even literal, a dim with an even multiple_of, or a "
                        "tile constant or value param whose values are all even, times anything, "
                        "is even)");
        return nullptr;
      }
    }
    const int id = packed_copies_++;
    // A read into shared memory of whole bytes (pairs at an even offset, of an even extent):
    // the tile's bytes are copied as they are into a u8 staging tile, an ordinary copy (which
    // GPU backends vectorize and pipeline: cp.async stages), and a parallel loop unpacks each
    // element from there (docs/spec.md "Packed types"). Fragments and local buffers are
    // distributed over threads differently on each backend: they keep the element-wise loop.
    if (reading && ob->scope == ir::MemScope::Shared &&
        (!pairs || (known_even(packed.offsets.back()) && known_even(packed.extents.back()))))
      return packed_staged_read(o, packed, onchip, id);
    // A fragment's neighbouring elements may live in different threads (GPU layouts), so a
    // write from one is staged through a shared tile of the same shape (a plain copy), whose
    // pairs every point can read.
    if (!reading && pairs && ob->scope == ir::MemScope::Fragment) {
      auto staged = ir::make_buffer("tg_pk" + std::to_string(id) + "_s", ir::MemScope::Shared,
                                    ob->dtype, ob->shape, ir::Access::ReadWrite, o.loc);
      ir::Region whole = ir::Region::whole(staged);
      Stmt write = packed_copy_from(o, whole, packed, id);
      if (!write)
        return nullptr;
      return ir::Seq::make({ir::Alloc::make(staged, o.loc),
                            ir::Copy::make(rs, whole, ir::make_zero(ob->dtype), o.loc), write},
                           o.loc);
    }
    return packed_loop(o, packed, onchip, reading, id);
  }

  // e / 2 for an e that known_even proves even, halving an even factor or literal where one
  // is visible (k * BK / 2 becomes k * (BK / 2), affine in k once BK is fixed).
  Expr halve(const Expr& e) const {
    if (auto i = e->as<ir::IntImm>())
      return ir::IntImm::make(i->type, i->value / 2, e->loc);
    if (auto b = e->as<ir::Binary>()) {
      if ((b->op == ir::BinaryOp::Add || b->op == ir::BinaryOp::Sub) && known_even(b->a) &&
          known_even(b->b))
        return ir::Binary::make(b->op, halve(b->a), halve(b->b), e->loc);
      if (b->op == ir::BinaryOp::Mul && known_even(b->a))
        return ir::Binary::make(b->op, halve(b->a), b->b, e->loc);
      if (b->op == ir::BinaryOp::Mul && known_even(b->b))
        return ir::Binary::make(b->op, b->a, halve(b->b), e->loc);
    }
    return ir::Binary::make(ir::BinaryOp::Div, e, ir::make_i64(2), e->loc);
  }

  // A packed read into shared memory through a u8 staging tile (see packed_copy): the Alloc
  // of tg_pk<id>_raw (the tile's byte shape), the Copy of the tile's bytes into it (out-of-range
  // bytes read 0, as the element-wise loads do) and the unpacking parallel loop, whose points
  // read their byte from the staging tile and take the pad where their element is outside the
  // tensor. copy() hands the three to the enclosing body one by one (staged_read_), so the
  // Copy is a top-level statement of a pipelined loop's body: a producer.
  Stmt packed_staged_read(const Op& o, const ir::Region& packed, const ir::Region& onchip,
                          int id) {
    const bool pairs = ir::packed_per_byte(packed.buffer->packed) == 2;
    ir::Region bytes = packed;
    if (pairs) {
      bytes.offsets.back() = halve(packed.offsets.back());
      bytes.extents.back() = halve(packed.extents.back());
    }
    auto raw = ir::make_buffer("tg_pk" + std::to_string(id) + "_raw", ir::MemScope::Shared,
                               DType::u8(), bytes.extents, ir::Access::ReadWrite, o.loc);
    Stmt unpack = packed_loop(o, packed, onchip, true, id, raw);
    if (!unpack)
      return nullptr;
    Stmt seq = ir::Seq::make({ir::Alloc::make(raw, o.loc),
                              ir::Copy::make(bytes, ir::Region::whole(raw),
                                             ir::make_zero(DType::u8()), o.loc),
                              unpack},
                             o.loc);
    staged_read_ = seq.get();
    return seq;
  }

  // A packed write from on-chip region `onchip` into packed region `packed` (checked above).
  Stmt packed_copy_from(const Op& o, const ir::Region& onchip, const ir::Region& packed, int id) {
    return packed_loop(o, packed, onchip, false, id);
  }

  // The parallel loop of a packed copy (see packed_copy). A read with a staging tile `raw`
  // (packed_staged_read) decodes the bytes staged there instead of loading the tensor's.
  Stmt packed_loop(const Op& o, const ir::Region& packed, const ir::Region& onchip, bool reading,
                   int id, const ir::BufferPtr& raw = nullptr) {
    const ir::BufferPtr& pb = packed.buffer;
    const ir::Packed p = pb->packed;
    const DType vt = packed_value_type(p);
    const ir::BufferPtr& ob = onchip.buffer;
    const size_t rank = pb->rank(), tr = packed.tile_rank(), lead = rank - tr;
    const bool pairs = ir::packed_per_byte(p) == 2;
    std::vector<ir::VarPtr> vars;
    std::vector<Expr> extents = packed.extents;
    for (size_t d = 0; d < tr; ++d)
      vars.push_back(ir::make_var("tg_pk" + std::to_string(id) + "_" + std::to_string(d),
                                  ir::VarKind::ParallelVar, DType::i64(), o.loc));
    auto var = [&](size_t d) { return ir::VarRef::make(vars[d], o.loc); };
    // Element indices of the packed side for tile point (v0, ..., v_{tr-1}), with the last
    // tile coordinate `last`.
    auto packed_idx = [&](Expr last) {
      std::vector<Expr> idx;
      for (size_t d = 0; d < rank; ++d) {
        Expr v = d < lead ? nullptr : (d + 1 == rank ? last : var(d - lead));
        idx.push_back(v ? ir::Binary::make(ir::BinaryOp::Add, packed.offsets[d], v)
                        : packed.offsets[d]);
      }
      return idx;
    };
    auto onchip_idx = [&](Expr last) {
      std::vector<Expr> idx;
      const size_t orank = ob->rank(), olead = orank - tr;
      for (size_t d = 0; d < orank; ++d) {
        Expr v = d < olead ? nullptr : (d + 1 == orank ? last : var(d - olead));
        idx.push_back(v ? ir::Binary::make(ir::BinaryOp::Add, onchip.offsets[d], v)
                        : onchip.offsets[d]);
      }
      return idx;
    };
    Stmt body;
    // A read's pad, and whether the element of the packed tensor at element indices idx lies
    // inside it (byte bounds; the last dim holds whole pairs, so an element is inside iff its
    // byte is). Points outside read as 0 and take the pad.
    Expr pad;
    if (reading && o.pad) {
      pad = lo_.expr(*o.pad, Where::Pad);
      if (!pad)
        return nullptr;
      pad = lo_.store_value(pad, vt, *o.pad, "the pad of '" + pb->name + "'");
      if (!pad)
        return nullptr;
    }
    auto inside = [&](const std::vector<Expr>& idx) {
      Expr in;
      for (size_t d = 0; d < rank; ++d) {
        Expr i = idx[d], n = pb->shape[d];
        if (d + 1 == rank && pairs)
          i = ir::Binary::make(ir::BinaryOp::Shr, i, ir::make_i64(1));
        Expr c = ir::Binary::make(ir::BinaryOp::And,
                                  ir::Binary::make(ir::BinaryOp::Ge, i, ir::make_i64(0)),
                                  ir::Binary::make(ir::BinaryOp::Lt, i, n));
        in = in ? ir::Binary::make(ir::BinaryOp::And, in, c) : c;
      }
      return in;
    };
    if (reading && raw) {
      // Point (.., j) decodes its element from byte j >> 1 (pairs, the tile starting on a
      // byte) or j (e8m0) of the staging tile's row. (One point per byte, writing two
      // elements, is what parallel's independence rule forbids.)
      std::vector<Expr> bi;
      for (size_t d = 0; d < tr; ++d)
        bi.push_back(d + 1 < tr || !pairs
                         ? var(d)
                         : ir::Binary::make(ir::BinaryOp::Shr, var(d), ir::make_i64(1)));
      Expr byte = ir::Cast::make(DType::u32(), ir::Load::make(raw, std::move(bi), o.loc), o.loc);
      Expr v = packed_value(p, pairs ? packed_nibble(byte, var(tr - 1)) : byte);
      if (pad)
        v = ir::Select::make(inside(packed_idx(var(tr - 1))), v, pad);
      body = ir::Store::make(ob, onchip_idx(var(tr - 1)), Lowerer::convert(ob->dtype, v),
                             ir::StoreOp::Assign, o.loc);
    } else if (reading) {
      std::vector<Expr> idx = packed_idx(var(tr - 1));
      // The element's value in a let: the store (and the pad's select) use it once.
      auto value = ir::make_var("tg_pk" + std::to_string(id) + "_v", ir::VarKind::Let, vt, o.loc);
      Stmt let = ir::LetStmt::make(value, packed_read(pb, idx, o.loc), o.loc);
      Expr v = ir::VarRef::make(value, o.loc);
      if (pad)
        v = ir::Select::make(inside(idx), v, pad);
      body = ir::Seq::make({let, ir::Store::make(ob, onchip_idx(var(tr - 1)),
                                                 Lowerer::convert(ob->dtype, v),
                                                 ir::StoreOp::Assign, o.loc)},
                           o.loc);
    } else if (pairs) {
      // Point (.., b) writes byte b of the tile: elements 2b (low nibble) and 2b + 1 (high).
      extents.back() = ir::Binary::make(ir::BinaryOp::Div, extents.back(), ir::make_i64(2));
      Expr two_b = ir::Binary::make(ir::BinaryOp::Mul, var(tr - 1), ir::make_i64(2));
      Expr two_b1 = ir::Binary::make(ir::BinaryOp::Add, two_b, ir::make_i64(1));
      // The two elements' values in lets (the e2m1 code compares one several times).
      std::vector<Stmt> lets;
      auto code = [&](Expr last, const char* which) {
        auto x = ir::make_var("tg_pk" + std::to_string(id) + which, ir::VarKind::Let, vt, o.loc);
        lets.push_back(ir::LetStmt::make(
            x, Lowerer::convert(vt, ir::Load::make(ob, onchip_idx(last), o.loc)), o.loc));
        return packed_code(p, ir::VarRef::make(x, o.loc));
      };
      Expr lo = code(two_b, "_lo"), hi = code(two_b1, "_hi");
      Expr byte = ir::Binary::make(ir::BinaryOp::BitOr, lo,
                                   ir::Binary::make(ir::BinaryOp::Shl, hi,
                                                    ir::IntImm::make(DType::u32(), 4)));
      std::vector<Expr> idx = packed_idx(nullptr);
      idx.back() = ir::Binary::make(
          ir::BinaryOp::Add,
          ir::Binary::make(ir::BinaryOp::Div, packed.offsets.back(), ir::make_i64(2)), var(tr - 1));
      lets.push_back(ir::Store::make(pb, std::move(idx), Lowerer::convert(DType::u8(), byte),
                                     ir::StoreOp::Assign, o.loc));
      body = ir::Seq::make(std::move(lets), o.loc);
    } else { // e8m0: one code per byte
      Expr v = ir::Load::make(ob, onchip_idx(var(tr - 1)), o.loc);
      Expr c = packed_code(p, Lowerer::convert(vt, v));
      body = ir::Store::make(pb, packed_idx(var(tr - 1)), Lowerer::convert(DType::u8(), c),
                             ir::StoreOp::Assign, o.loc);
    }
    return ir::Parallel::make(vars, extents, body->as<ir::Seq>() ? body : ir::Seq::make({body}, o.loc),
                              o.loc);
  }

  Stmt gemm(const Op& o) {
    ir::BufferPtr a = onchip(o.a, "gemm operand 'a'");
    ir::BufferPtr b = onchip(o.b, "gemm operand 'b'");
    ir::BufferPtr c = onchip(o.c, "gemm operand 'c'");
    if (!a || !b || !c)
      return nullptr;
    struct {
      const ir::BufferPtr& buf;
      const char* role;
      const SExprPtr& e;
    } operands[] = {{a, "a", o.a}, {b, "b", o.b}, {c, "c", o.c}};
    for (const auto& x : operands) {
      if (x.buf->rank() != 2) {
        diag_.error(x.e->op_loc, std::string("gemm operand '") + x.role + "' must have rank 2; '" +
                                     x.buf->name + "' is " + Lowerer::show_shape(x.buf->shape));
        return nullptr;
      }
      if (!x.buf->dtype.is_float()) {
        diag_.error(x.e->op_loc, std::string("gemm operands must be float; operand ") + x.role +
                                     " ('" + x.buf->name + "') is " + x.buf->dtype.name());
        return nullptr;
      }
    }
    bool ta = o.transpose_a.value, tb = o.transpose_b.value;
    Expr am = a->shape[ta ? 1 : 0], ak = a->shape[ta ? 0 : 1];
    Expr bk = b->shape[tb ? 1 : 0], bn = b->shape[tb ? 0 : 1];
    auto mismatch = [&](const char* dim, const char* x, Expr ex, const char* y, Expr ey) {
      diag_.error(o.loc, std::string("gemm shape mismatch: ") + dim + " is " + Lowerer::show(ex) +
                             " in '" + x + "' but " + Lowerer::show(ey) + " in '" + y + "' (a: '" +
                             a->name + "' " + Lowerer::show_shape(a->shape) +
                             (ta ? " transposed" : "") + ", b: '" + b->name + "' " +
                             Lowerer::show_shape(b->shape) + (tb ? " transposed" : "") + ", c: '" +
                             c->name + "' " + Lowerer::show_shape(c->shape) + ")");
    };
    if (Lowerer::provably_different(ak, bk)) {
      mismatch("K", "a", ak, "b", bk);
      return nullptr;
    }
    if (Lowerer::provably_different(am, c->shape[0])) {
      mismatch("M", "a", am, "c", c->shape[0]);
      return nullptr;
    }
    if (Lowerer::provably_different(bn, c->shape[1])) {
      mismatch("N", "b", bn, "c", c->shape[1]);
      return nullptr;
    }
    return ir::Gemm::make(a, b, c, ta, tb, o.clear.value, o.loc, o.fast_accum.value);
  }

  Stmt reduce(const Op& o) {
    ir::BufferPtr src = onchip(o.src, "the source of 'reduce'");
    ir::BufferPtr dst = onchip(o.dst, "the destination of 'reduce'");
    if (!src || !dst)
      return nullptr;
    if (o.dim.value < 0 || o.dim.value >= static_cast<int64_t>(src->rank())) {
      diag_.error(o.dim.loc, "reduce dim " + std::to_string(o.dim.value) +
                                 " is out of range for '" + src->name + "' of rank " +
                                 std::to_string(src->rank()) + " (dims are 0-based)");
      return nullptr;
    }
    if (src->rank() < 2) {
      diag_.error(o.src->op_loc, "cannot reduce '" + src->name + "' of rank " +
                                     std::to_string(src->rank()) +
                                     ": the result would have no dimensions (use a rank-2 "
                                     "source such as [1, N])");
      return nullptr;
    }
    std::vector<Expr> want = src->shape;
    want.erase(want.begin() + o.dim.value);
    if (!same_shape(want, dst->shape)) {
      diag_.error(o.dst->op_loc, "reduce destination '" + dst->name + "' has shape " +
                                     Lowerer::show_shape(dst->shape) + "; expected " +
                                     Lowerer::show_shape(want) + " ('" + src->name +
                                     "' without dim " + std::to_string(o.dim.value) + ")");
      return nullptr;
    }
    if (!src->dtype.is_float() && !src->dtype.is_int())
      return nullptr;
    for (const ir::BufferPtr& b : {src, dst})
      if (b->dtype.is_int()) { // the GPU reductions combine in f32, exact only to 2^24
        diag_.error(o.loc, "reduce of " + std::string(b->dtype.name()) + " buffer '" + b->name +
                               "' is not supported: reductions of integers are not implemented "
                               "(the GPU targets combine in f32, exact only up to 2^24); copy the "
                               "values into an f32 buffer first, e.g. a parallel with "
                               "x[i, j] = f32(u[i, j]) (docs/spec.md \"reduce\")");
        return nullptr;
      }
    return ir::Reduce::make(o.reduce_op, src, dst, static_cast<int>(o.dim.value), o.clear.value,
                            o.loc);
  }

  Stmt parallel(const Op& o) {
    std::vector<ir::VarPtr> vars;
    std::vector<Expr> extents;
    bool ok = true;
    for (const auto& [n, e] : o.pvars) {
      Expr x = lo_.index_expr(*e, Where::Extent, "a parallel extent");
      if (auto n = Lowerer::const_int(x); n && *n <= 0) {
        diag_.error(e->loc, "a parallel extent must be positive, found " + std::to_string(*n));
        x = nullptr;
      }
      ok &= x != nullptr;
      extents.push_back(x);
    }
    lo_.scope.push();
    for (const auto& [n, e] : o.pvars) {
      auto v = ir::make_var(n.name, ir::VarKind::ParallelVar, DType::i64(), n.loc);
      ok &= declare(SymKind::ParallelVar, n, v);
      vars.push_back(v);
    }
    std::vector<Stmt> body;
    lo_.lets_ahead.clear();
    for (const auto& s : o.stmts)
      if (s.kind == SStmt::Kind::Let)
        lo_.lets_ahead.emplace(s.let_name, s.let_loc);
    for (const auto& s : o.stmts) {
      if (s.kind == SStmt::Kind::Let) // from here on this let (the nearest of its name) is behind
        lo_.lets_ahead.erase(lo_.lets_ahead.lower_bound(s.let_name));
      Stmt st = stmt(s);
      ok &= st != nullptr;
      if (st)
        body.push_back(st);
    }
    lo_.lets_ahead.clear();
    lo_.scope.pop();
    if (!ok)
      return nullptr;
    return ir::Parallel::make(vars, extents, ir::Seq::make(std::move(body), o.loc), o.loc);
  }

  Stmt stmt(const SStmt& s) {
    if (s.kind == SStmt::Kind::Let) {
      Expr v = lo_.expr(*s.value, Where::Body);
      if (!v) {
        declare(SymKind::Let, Name{s.let_name, s.let_loc}); // poisoned: no cascade
        return nullptr;
      }
      const uint64_t size = expanded_size(v);
      if (size > kMaxLetExpansion) {
        diag_.error(s.value->loc,
                    "let '" + s.let_name + "' stands for an expression of more than " +
                        std::to_string(kMaxLetExpansion) +
                        " terms once the lets it reads are written out (each let that reads "
                        "an earlier one twice doubles it); the compiler analyses conditions and "
                        "indices through lets: keep such a value in a fragment or local buffer");
        declare(SymKind::Let, Name{s.let_name, s.let_loc}); // poisoned: no cascade
        return nullptr;
      }
      auto var = ir::make_var(s.let_name, ir::VarKind::Let, v->type, s.let_loc);
      if (!declare(SymKind::Let, Name{s.let_name, s.let_loc}, var))
        return nullptr;
      let_size_[var.get()] = size;
      return ir::LetStmt::make(var, v, s.loc);
    }
    const SExpr& t = *s.target;
    const Symbol* sym = lo_.scope.lookup(t.name);
    if (sym && sym->poisoned())
      return nullptr;
    if (!sym) {
      Expr dummy = lo_.expr(t, Where::Body); // reports unknown name / out of scope
      (void)dummy;
      return nullptr;
    }
    if (sym->kind != SymKind::Tensor && sym->kind != SymKind::Buffer) {
      diag_.error(t.op_loc,
                  "cannot assign to " + std::string(sym_kind_name(sym->kind)) + " '" + t.name +
                      "'" + (sym->kind == SymKind::Let ? " (let temporaries are immutable)" : ""));
      diag_.note(sym->loc, "'" + t.name + "' is declared here");
      return nullptr;
    }
    const ir::BufferPtr& b = sym->buf;
    if (b->scope == ir::MemScope::Global && b->access == ir::Access::Read) {
      diag_.error(t.op_loc, "cannot write to tensor '" + b->name + "' (declared access: read)");
      diag_.note(b->loc, "'" + b->name + "' is declared here; use access: write or readwrite");
      return nullptr;
    }
    size_t n = t.kind == EKind::Index ? t.args.size() : 0;
    if (n != b->rank()) {
      diag_.error(t.loc, "'" + b->name + "' has rank " + std::to_string(b->rank()) + " but " +
                             count_of(n, "index", "indices") + " given");
      return nullptr;
    }
    std::vector<Expr> idx;
    for (const auto& a : t.args) {
      Expr x = lo_.index_expr(*a, Where::Body, "an index");
      if (!x)
        return nullptr;
      idx.push_back(x);
    }
    if (b->packed != ir::Packed::None) {
      diag_.error(t.op_loc, std::string("cannot assign to an element of tensor '") + b->name +
                                "' of packed type " + ir::packed_name(b->packed) +
                                ": two elements share a byte, which one thread must write whole; "
                                "write a tile with 'copy' (from an on-chip buffer whose last "
                                "extent is even, at an even offset)");
      diag_.note(b->loc, "'" + b->name + "' is declared here");
      return nullptr;
    }
    Expr v = lo_.expr(*s.value, Where::Body);
    if (!v)
      return nullptr;
    v = lo_.store_value(v, b->dtype, *s.value, "'" + b->name + "'");
    if (!v)
      return nullptr;
    auto op = s.kind == SStmt::Kind::AddAssign ? ir::StoreOp::Add : ir::StoreOp::Assign;
    return ir::Store::make(b, std::move(idx), v, op, s.loc);
  }

  Stmt loop(const Op& o) {
    Expr start =
        o.start ? lo_.index_expr(*o.start, Where::Body, "the loop start") : ir::make_i64(0);
    Expr extent = lo_.index_expr(*o.extent, Where::Body, "the loop extent");
    Expr stages;
    if (o.kind == OpKind::Pipelined) {
      stages = lo_.index_expr(*o.stages, Where::Threads, "the pipeline depth");
      if (auto n = Lowerer::const_int(stages); n && *n < 1) {
        diag_.error(o.stages->loc,
                    "the pipeline depth must be at least 1, found " + std::to_string(*n));
        stages = nullptr;
      }
      if (!stages)
        return nullptr;
    }
    if (!start || !extent)
      return nullptr;
    lo_.scope.push();
    auto v = ir::make_var(o.var.name, ir::VarKind::LoopVar, DType::i64(), o.var.loc);
    bool ok = declare(SymKind::LoopVar, o.var, v);
    ++depth_;
    std::vector<Stmt> body = ops(o.body);
    --depth_;
    lo_.scope.pop();
    if (!ok)
      return nullptr;
    return ir::For::make(v, start, extent, stages, ir::Seq::make(std::move(body), o.loc), o.loc);
  }

  // The join of a split pipelined loop (ir::Combine): each carried fragment gets a read-only peer
  // of its dtype and shape, visible in `combine` only.
  Stmt combine(const Op& o) {
    if (depth_ > 0) {
      diag_.error(o.split_loc, "'split' applies to a pipelined loop at the top of the body (this "
                               "one is nested in another op)");
      return nullptr;
    }
    bool ok = true;
    std::vector<ir::Combine::Carry> carry;
    for (const auto& [state, peer] : o.carry) {
      const Symbol* s = lo_.scope.lookup(state.name);
      if (s && s->poisoned()) {
        ok = false;
        continue;
      }
      if (!s || s->kind != SymKind::Buffer || s->buf->scope != ir::MemScope::Fragment) {
        diag_.error(state.loc, "'carry' names the fragments the loop carries; '" + state.name +
                                   "' is " +
                                   (!s ? std::string("not declared before the loop")
                                       : s->kind == SymKind::Buffer
                                             ? std::string("a ") + ir::mem_scope_name(s->buf->scope) + " buffer"
                                             : std::string("a ") + sym_kind_name(s->kind)));
        if (s)
          diag_.note(s->loc, "'" + state.name + "' is declared here");
        ok = false;
        continue;
      }
      for (const auto& c : carry)
        if (c.state == s->buf) {
          diag_.error(state.loc, "'" + state.name + "' is carried twice");
          ok = false;
        }
      carry.push_back({s->buf, ir::make_buffer(peer.name, ir::MemScope::Fragment, s->buf->dtype,
                                               s->buf->shape, ir::Access::ReadWrite, peer.loc)});
    }
    for (const auto& c : o.combine)
      if (c.kind != OpKind::Parallel) {
        diag_.error(c.loc, std::string("'combine' holds 'parallel' ops only; found '") +
                               op_kind_name(c.kind) + "'");
        ok = false;
      }
    if (!ok)
      return nullptr;
    lo_.scope.push();
    for (size_t i = 0; i < carry.size(); ++i)
      ok &= declare(SymKind::Buffer, o.carry[i].second, nullptr, carry[i].peer);
    std::vector<Stmt> body = ops(o.combine);
    lo_.scope.pop();
    if (!ok)
      return nullptr;
    Stmt b = ir::Seq::make(std::move(body), o.split_loc);
    for (const auto& c : carry)
      if (auto* st = ir::first_store(b, c.peer.get())) {
        diag_.error(st->loc, "'" + c.peer->name + "' holds the other part's values of '" +
                                 c.state->name + "': it is read only; write '" + c.state->name +
                                 "' instead");
        ok = false;
      }
    if (!ok)
      return nullptr;
    return ir::Combine::make(std::move(carry), std::move(b), o.split_loc);
  }

  Stmt if_(const Op& o) {
    Expr c = lo_.expr(*o.cond, Where::Uniform);
    if (c && !c->type.is_bool()) {
      diag_.error(o.cond->loc,
                  std::string("the condition of 'if' must be bool, found ") + c->type.name());
      c = nullptr;
    }
    ++depth_;
    std::vector<Stmt> t = nested(o.then_ops);
    std::vector<Stmt> e = nested(o.else_ops);
    --depth_;
    if (!c)
      return nullptr;
    Stmt els = o.has_else ? ir::Seq::make(std::move(e), o.loc) : nullptr;
    return ir::IfThenElse::make(c, ir::Seq::make(std::move(t), o.loc), els, o.loc);
  }

  // The number of IR nodes of e with every let it reads replaced by its value (saturating):
  // passes that look through lets (VersionByRange, RangeAnalysis) walk that tree.
  uint64_t expanded_size(const Expr& e) const {
    class Count : public ir::IRVisitor {
    public:
      const std::map<const ir::Var*, uint64_t>* lets = nullptr;
      uint64_t n = 0;

    protected:
      void add(uint64_t k) { n = n + k < n ? UINT64_MAX : n + k; }
      void visit_VarRef(const ir::VarRef* r) override {
        auto it = lets->find(r->var.get());
        add(it == lets->end() ? 1 : it->second);
      }
      void visit_IntImm(const ir::IntImm*) override { add(1); }
      void visit_FloatImm(const ir::FloatImm*) override { add(1); }
      void visit_BoolImm(const ir::BoolImm*) override { add(1); }
      void visit_Unary(const ir::Unary* u) override { add(1), IRVisitor::visit_Unary(u); }
      void visit_Binary(const ir::Binary* b) override { add(1), IRVisitor::visit_Binary(b); }
      void visit_Select(const ir::Select* x) override { add(1), IRVisitor::visit_Select(x); }
      void visit_Call(const ir::Call* c) override { add(1), IRVisitor::visit_Call(c); }
      void visit_Cast(const ir::Cast* c) override { add(1), IRVisitor::visit_Cast(c); }
      void visit_Load(const ir::Load* l) override { add(1), IRVisitor::visit_Load(l); }
    } count;
    count.lets = &let_size_;
    count.visit(e);
    return count.n;
  }
  static constexpr uint64_t kMaxLetExpansion = 1 << 16;

  const Spec& spec_;
  DiagEngine& diag_;
  Lowerer lo_;
  const ir::Kernel* kernel_ = nullptr; // the kernel being lowered (known_even)
  const ir::StmtNode* staged_read_ = nullptr; // the last packed_staged_read's Seq (op())
  int packed_copies_ = 0;              // numbers the loop variables of packed copies
  int depth_ = 0; // loops and ifs around the op being lowered
  std::map<const ir::Var*, uint64_t> let_size_;
};

} // namespace

std::optional<std::vector<ir::Kernel>> lower_spec(const Spec& spec, DiagEngine& diag) {
  // Type bindings: the Cartesian product of `types`, first parameter slowest.
  std::vector<std::vector<std::pair<std::string, DType>>> bindings = {{}};
  for (const auto& tp : spec.types) {
    std::vector<std::vector<std::pair<std::string, DType>>> next;
    for (const auto& b : bindings)
      for (const auto& [t, loc] : tp.choices) {
        auto nb = b;
        nb.emplace_back(tp.name.name, t);
        next.push_back(std::move(nb));
      }
    bindings = std::move(next);
    if (bindings.size() > 256) {
      diag.error(tp.name.loc, "too many type bindings (more than 256)");
      return std::nullopt;
    }
  }
  // Instances: bindings x flag values x value-set values. Each is a variant per target, with
  // its own schedule resolution; the cap keeps a typo (`values: [1, 2, ..., 300]` twice) from
  // turning into hours of generation and thousands of files.
  uint64_t instances = bindings.size();
  std::string factors = std::to_string(bindings.size()) + " type binding" +
                        (bindings.size() == 1 ? "" : "s");
  auto times = [&](uint64_t n, const std::string& what) {
    instances = instances > kMaxInstances ? instances : instances * n;
    factors += " x " + std::to_string(n) + " (" + what + ")";
  };
  for (const auto& f : spec.flags)
    times(2, "flag " + f.name);
  for (const auto& d : spec.params)
    if (d.value_set)
      times(d.values.size(), "values of " + d.name.name);
  if (instances > kMaxInstances) {
    diag.error(spec.kernel.loc, "kernel '" + spec.kernel.name + "' has more than " +
                                    std::to_string(kMaxInstances) + " instances (" + factors +
                                    "); each is one variant per target: split the kernel, or "
                                    "make a value-set param a runtime dim");
    return std::nullopt;
  }
  std::vector<ir::Kernel> out;
  for (size_t i = 0; i < bindings.size(); ++i) {
    std::map<std::string, DType> m(bindings[i].begin(), bindings[i].end());
    KernelLowerer kl(spec, diag, m);
    auto k = kl.run(bindings[i]);
    if (!k) {
      if (i > 0 && !spec.types.empty()) {
        std::string b;
        for (const auto& [n, t] : bindings[i])
          b += (b.empty() ? "" : ", ") + n + " = " + t.name();
        diag.note(spec.types.front().name.loc, "in the instantiation with " + b);
      }
      return std::nullopt;
    }
    out.push_back(std::move(*k));
  }
  return out;
}

} // namespace tilegen::spec
