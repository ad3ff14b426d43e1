// Node constructors with their operand checks, and the small name tables of IR.h.
#include "ir/IR.h"

#include "support/InternalError.h"

#include <cmath>

namespace tilegen::ir {

// ---------------------------------------------------------------------------------------------
// DType

namespace {
struct DTypeInfo {
  ScalarKind kind;
  const char* name;
  int bits;
};
constexpr DTypeInfo kDTypes[] = {
    {ScalarKind::Bool, "bool", 1}, {ScalarKind::I8, "i8", 8},     {ScalarKind::I32, "i32", 32},
    {ScalarKind::I64, "i64", 64},  {ScalarKind::F16, "f16", 16},  {ScalarKind::BF16, "bf16", 16},
    {ScalarKind::F32, "f32", 32},  {ScalarKind::F64, "f64", 64},  {ScalarKind::E4M3, "e4m3", 8},
    {ScalarKind::E5M2, "e5m2", 8}, {ScalarKind::U8, "u8", 8},     {ScalarKind::U16, "u16", 16},
    {ScalarKind::U32, "u32", 32},  {ScalarKind::U64, "u64", 64},
};
const DTypeInfo& info(ScalarKind k) {
  for (const auto& d : kDTypes)
    if (d.kind == k)
      return d;
  internal_error("unknown ScalarKind");
}
} // namespace

std::optional<DType> DType::from_name(std::string_view name) {
  for (const auto& d : kDTypes)
    if (name == d.name)
      return DType(d.kind);
  return std::nullopt;
}
const char* DType::name() const { return info(kind).name; }
int DType::bits() const { return info(kind).bits; }

// ---------------------------------------------------------------------------------------------
// Name tables

const char* var_kind_name(VarKind k) {
  switch (k) {
  case VarKind::Dim: return "dim";
  case VarKind::ValueParam: return "value_param";
  case VarKind::Flag: return "flag";
  case VarKind::Scalar: return "scalar";
  case VarKind::TileConst: return "tile_const";
  case VarKind::BlockIndex: return "block_index";
  case VarKind::LoopVar: return "loop_var";
  case VarKind::ParallelVar: return "parallel_var";
  case VarKind::Let: return "let";
  }
  return "?";
}

const char* mem_scope_name(MemScope s) {
  switch (s) {
  case MemScope::Global: return "global";
  case MemScope::Shared: return "shared";
  case MemScope::Fragment: return "fragment";
  case MemScope::Local: return "local";
  }
  return "?";
}

const char* access_name(Access a) {
  switch (a) {
  case Access::Read: return "read";
  case Access::Write: return "write";
  case Access::ReadWrite: return "readwrite";
  }
  return "?";
}

const char* expr_kind_name(ExprKind k) {
  switch (k) {
#define TG_X(name)                                                                               \
  case ExprKind::name: return #name;
    TILEGEN_EXPR_KINDS(TG_X)
#undef TG_X
  }
  return "?";
}

const char* stmt_kind_name(StmtKind k) {
  switch (k) {
#define TG_X(name)                                                                               \
  case StmtKind::name: return #name;
    TILEGEN_STMT_KINDS(TG_X)
#undef TG_X
  }
  return "?";
}

const char* unary_op_name(UnaryOp op) {
  return op == UnaryOp::Neg ? "-" : op == UnaryOp::Not ? "!" : "~";
}

const char* binary_op_name(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::Mod: return "%";
  case BinaryOp::Min: return "min";
  case BinaryOp::Max: return "max";
  case BinaryOp::CeilDiv: return "cdiv";
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::And: return "&&";
  case BinaryOp::Or: return "||";
  case BinaryOp::BitAnd: return "&";
  case BinaryOp::BitOr: return "|";
  case BinaryOp::BitXor: return "^";
  case BinaryOp::Shl: return "<<";
  case BinaryOp::Shr: return ">>";
  }
  return "?";
}

bool is_comparison(BinaryOp op) {
  return op == BinaryOp::Eq || op == BinaryOp::Ne || op == BinaryOp::Lt || op == BinaryOp::Le ||
         op == BinaryOp::Gt || op == BinaryOp::Ge;
}
bool is_logical(BinaryOp op) { return op == BinaryOp::And || op == BinaryOp::Or; }
int64_t shift_value(BinaryOp op, int64_t a, int64_t n, int bits) {
  TG_ASSERT(op == BinaryOp::Shl || op == BinaryOp::Shr, "shift_value of a non-shift");
  if (n < 0 || n >= bits)
    return op == BinaryOp::Shl ? 0 : (a < 0 ? -1 : 0);
  if (op == BinaryOp::Shr)
    return a >> n; // arithmetic (C++20; every compiler before)
  uint64_t u = static_cast<uint64_t>(a) << n;
  if (bits < 64) { // wrap to the type's width, sign-extended
    const uint64_t mask = (uint64_t{1} << bits) - 1;
    u &= mask;
    if (u >> (bits - 1))
      u |= ~mask;
  }
  return static_cast<int64_t>(u);
}

int64_t ushift_value(BinaryOp op, int64_t a, int64_t n, int bits) {
  TG_ASSERT(op == BinaryOp::Shl || op == BinaryOp::Shr, "ushift_value of a non-shift");
  const uint64_t u = static_cast<uint64_t>(a), k = static_cast<uint64_t>(n);
  if (k >= static_cast<uint64_t>(bits))
    return 0;
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  return static_cast<int64_t>((op == BinaryOp::Shl ? u << k : u >> k) & mask);
}

int64_t wrap_int(DType t, int64_t v) {
  TG_ASSERT(t.is_int(), std::string("wrap_int to ") + t.name());
  const int bits = t.bits();
  if (bits == 64)
    return v;
  const uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_signed_int() && (u >> (bits - 1)))
    u |= ~mask;
  return static_cast<int64_t>(u);
}

bool is_bitwise(BinaryOp op) {
  return op == BinaryOp::BitAnd || op == BinaryOp::BitOr || op == BinaryOp::BitXor ||
         op == BinaryOp::Shl || op == BinaryOp::Shr;
}

const char* intrinsic_name(Intrinsic fn) {
  switch (fn) {
  case Intrinsic::Abs: return "abs";
  case Intrinsic::Exp: return "exp";
  case Intrinsic::Exp2: return "exp2";
  case Intrinsic::Log: return "log";
  case Intrinsic::Log2: return "log2";
  case Intrinsic::Sqrt: return "sqrt";
  case Intrinsic::Rsqrt: return "rsqrt";
  case Intrinsic::Tanh: return "tanh";
  case Intrinsic::Erf: return "erf";
  case Intrinsic::Floor: return "floor";
  case Intrinsic::Ceil: return "ceil";
  case Intrinsic::BitCast: return "bitcast";
  }
  return "?";
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum: return "sum";
  case ReduceOp::Max: return "max";
  case ReduceOp::Min: return "min";
  }
  return "?";
}

// ---------------------------------------------------------------------------------------------
// Vars and buffers

VarPtr make_var(std::string name, VarKind kind, DType type, SourceLoc loc) {
  TG_ASSERT(!name.empty(), "variable without a name");
  return std::make_shared<const Var>(Var{std::move(name), kind, type, std::move(loc)});
}

const char* packed_name(Packed p) {
  switch (p) {
  case Packed::None: return "";
  case Packed::U4: return "u4";
  case Packed::I4: return "i4";
  case Packed::E2M1: return "e2m1";
  case Packed::E8M0: return "e8m0";
  }
  return "";
}

BufferPtr make_buffer(std::string name, MemScope scope, DType dtype, std::vector<Expr> shape,
                      Access access, SourceLoc loc) {
  TG_ASSERT(!name.empty(), "buffer without a name");
  TG_ASSERT(!dtype.is_bool(), "buffer '" + name + "' of bool");
  for (const auto& e : shape)
    TG_ASSERT(e && e->type.is_int(), "buffer '" + name + "' has a non-integer extent");
  return std::make_shared<const Buffer>(
      Buffer{std::move(name), scope, dtype, std::move(shape), access, std::move(loc), Packed::None});
}

// ---------------------------------------------------------------------------------------------
// Expressions

Expr IntImm::make(DType t, int64_t v, SourceLoc loc) {
  TG_ASSERT(t.is_int(), std::string("IntImm of type ") + t.name());
  return std::make_shared<const IntImm>(t, v, std::move(loc));
}

Expr IntImm::make_named(DType t, int64_t v, std::string name, SourceLoc loc) {
  TG_ASSERT(t.is_int(), std::string("IntImm of type ") + t.name());
  return std::make_shared<const IntImm>(t, v, std::move(loc), std::move(name));
}

Expr FloatImm::make(DType t, double v, SourceLoc loc) {
  TG_ASSERT(t.is_float(), std::string("FloatImm of type ") + t.name());
  return std::make_shared<const FloatImm>(t, v, std::move(loc));
}

Expr BoolImm::make(bool v, SourceLoc loc) {
  return std::make_shared<const BoolImm>(v, std::move(loc));
}

Expr VarRef::make(VarPtr v, SourceLoc loc) {
  TG_ASSERT(v != nullptr, "VarRef of null var");
  return std::make_shared<const VarRef>(std::move(v), std::move(loc));
}

Expr Load::make(BufferPtr b, std::vector<Expr> indices, SourceLoc loc) {
  TG_ASSERT(b != nullptr, "Load of null buffer");
  TG_ASSERT(indices.size() == b->rank(), "Load of '" + b->name + "' with " +
                                             std::to_string(indices.size()) + " indices, rank " +
                                             std::to_string(b->rank()));
  for (const auto& i : indices)
    TG_ASSERT(i && i->type.is_int(), "Load of '" + b->name + "' with a non-integer index");
  DType t = b->dtype;
  return std::make_shared<const Load>(t, std::move(b), std::move(indices), std::move(loc));
}

Expr Unary::make(UnaryOp op, Expr a, SourceLoc loc) {
  TG_ASSERT(a != nullptr, "Unary of null");
  if (op == UnaryOp::Not)
    TG_ASSERT(a->type.is_bool(), "'!' of a non-bool");
  else if (op == UnaryOp::BitNot)
    TG_ASSERT(a->type.is_int(), "'~' of a non-integer");
  else
    TG_ASSERT(!a->type.is_bool(), "'-' of a bool");
  DType t = a->type;
  return std::make_shared<const Unary>(t, op, std::move(a), std::move(loc));
}

Expr Binary::make(BinaryOp op, Expr a, Expr b, SourceLoc loc) {
  TG_ASSERT(a && b, "Binary with a null operand");
  TG_ASSERT(a->type == b->type, std::string("Binary '") + binary_op_name(op) + "' of " +
                                    a->type.name() + " and " + b->type.name());
  DType t = a->type;
  if (is_logical(op))
    TG_ASSERT(t.is_bool(), "logical op on non-bool");
  else if (op == BinaryOp::CeilDiv || op == BinaryOp::Mod || is_bitwise(op))
    TG_ASSERT(t.is_int(), std::string(binary_op_name(op)) + " on non-integers");
  else if (!is_comparison(op) || (op != BinaryOp::Eq && op != BinaryOp::Ne))
    TG_ASSERT(!t.is_bool(), std::string("arithmetic '") + binary_op_name(op) + "' on bool");
  if (is_comparison(op))
    t = DType::boolean();
  return std::make_shared<const Binary>(t, op, std::move(a), std::move(b), std::move(loc));
}

Expr Select::make(Expr cond, Expr t, Expr f, SourceLoc loc) {
  TG_ASSERT(cond && t && f, "Select with a null operand");
  TG_ASSERT(cond->type.is_bool(), "Select condition is not bool");
  TG_ASSERT(t->type == f->type, "Select arms of different types");
  DType ty = t->type;
  return std::make_shared<const Select>(ty, std::move(cond), std::move(t), std::move(f),
                                        std::move(loc));
}

std::optional<DType> bitcast_partner(DType t) {
  switch (t.kind) {
  case ScalarKind::I32: return DType::f32();
  case ScalarKind::F32: return DType::i32();
  case ScalarKind::I64: return DType::f64();
  case ScalarKind::F64: return DType::i64();
  default: return std::nullopt; // unsigned: the front end goes through the signed partner

  }
}

Expr Call::make(Intrinsic fn, std::vector<Expr> args, SourceLoc loc) {
  TG_ASSERT(args.size() == 1 && args[0], std::string("intrinsic ") + intrinsic_name(fn) +
                                             " takes one argument");
  DType t = args[0]->type;
  if (fn == Intrinsic::BitCast) {
    auto to = bitcast_partner(t);
    TG_ASSERT(to.has_value(), std::string("bitcast of ") + t.name());
    return std::make_shared<const Call>(*to, fn, std::move(args), std::move(loc));
  }
  if (fn == Intrinsic::Abs)
    TG_ASSERT(!t.is_bool(), "abs of bool");
  else
    TG_ASSERT(t == DType::f32() || t == DType::f64(),
              std::string(intrinsic_name(fn)) + " of " + t.name() + " (needs f32 or f64)");
  return std::make_shared<const Call>(t, fn, std::move(args), std::move(loc));
}

Expr Cast::make(DType t, Expr v, SourceLoc loc) {
  TG_ASSERT(v != nullptr, "Cast of null");
  return std::make_shared<const Cast>(t, std::move(v), std::move(loc));
}

Expr make_i64(int64_t v, SourceLoc loc) { return IntImm::make(DType::i64(), v, std::move(loc)); }
Expr make_f32(double v, SourceLoc loc) { return FloatImm::make(DType::f32(), v, std::move(loc)); }

Expr make_zero(DType t) {
  if (t.is_bool())
    return BoolImm::make(false);
  if (t.is_int())
    return IntImm::make(t, 0);
  return FloatImm::make(t, 0.0);
}

namespace {
int promotion_rank(DType t) {
  switch (t.kind) {
  case ScalarKind::Bool: return 0;
  case ScalarKind::I8: return 1;
  case ScalarKind::I32: return 2;
  case ScalarKind::I64: return 3;
  case ScalarKind::U8:
  case ScalarKind::U16:
  case ScalarKind::U32: return 2; // passes combine unsigned only with its own kind
  case ScalarKind::U64: return 3;
  case ScalarKind::F16: return 4;
  case ScalarKind::BF16: return 4;
  case ScalarKind::E4M3: return 4;
  case ScalarKind::E5M2: return 4;
  case ScalarKind::F32: return 5;
  case ScalarKind::F64: return 6;
  }
  return 0;
}
} // namespace

Expr make_binary_promoting(BinaryOp op, Expr a, Expr b, SourceLoc loc) {
  if (!a || !b)
    return nullptr;
  DType ta = a->type, tb = b->type;
  if (ta.is_bool() != tb.is_bool())
    return nullptr;
  DType t = promotion_rank(ta) >= promotion_rank(tb) ? ta : tb;
  // The narrow floats share a rank but have no common narrow type; their arithmetic happens in
  // f32 anyway.
  if (t.is_narrow_float())
    t = DType::f32();
  if (a->type != t)
    a = Cast::make(t, a, a->loc);
  if (b->type != t)
    b = Cast::make(t, b, b->loc);
  return Binary::make(op, std::move(a), std::move(b), std::move(loc));
}

// ---------------------------------------------------------------------------------------------
// Statements

Region Region::whole(BufferPtr b) {
  Region r;
  r.offsets.assign(b->rank(), make_i64(0));
  r.extents = b->shape;
  r.buffer = std::move(b);
  return r;
}

namespace {
void check_region(const Region& r, const char* what) {
  TG_ASSERT(r.buffer != nullptr, std::string(what) + " region without a buffer");
  TG_ASSERT(r.offsets.size() == r.buffer->rank(),
            std::string(what) + " region of '" + r.buffer->name + "' has wrong offset count");
  TG_ASSERT(r.extents.size() >= 1 && r.extents.size() <= r.buffer->rank(),
            std::string(what) + " region of '" + r.buffer->name + "' has wrong tile rank");
  for (const auto& e : r.offsets)
    TG_ASSERT(e && e->type.is_int(), std::string(what) + " region offset is not an integer");
  for (const auto& e : r.extents)
    TG_ASSERT(e && e->type.is_int(), std::string(what) + " region extent is not an integer");
}
} // namespace

Stmt Seq::make(std::vector<Stmt> stmts, SourceLoc loc) {
  for (const auto& s : stmts)
    TG_ASSERT(s != nullptr, "Seq with a null statement");
  return std::make_shared<const Seq>(std::move(stmts), std::move(loc));
}

Stmt Alloc::make(BufferPtr b, SourceLoc loc) {
  TG_ASSERT(b && b->scope != MemScope::Global, "Alloc of a global buffer");
  return std::make_shared<const Alloc>(std::move(b), std::move(loc));
}

Stmt Fill::make(BufferPtr dst, Expr value, SourceLoc loc) {
  TG_ASSERT(dst && value, "Fill with null operand");
  TG_ASSERT(dst->scope != MemScope::Global, "Fill of a global tensor");
  return std::make_shared<const Fill>(std::move(dst), std::move(value), std::move(loc));
}

Stmt Copy::make(Region src, Region dst, Expr pad, SourceLoc loc) {
  check_region(src, "copy source");
  check_region(dst, "copy destination");
  TG_ASSERT(src.tile_rank() == dst.tile_rank(), "copy between tiles of different rank");
  TG_ASSERT(pad != nullptr, "copy without a pad value");
  return std::make_shared<const Copy>(std::move(src), std::move(dst), std::move(pad),
                                      std::move(loc));
}

Stmt Gemm::make(BufferPtr a, BufferPtr b, BufferPtr c, bool ta, bool tb, bool clear,
                SourceLoc loc, bool fast_accum) {
  TG_ASSERT(a && b && c, "Gemm with null operand");
  TG_ASSERT(a->rank() == 2 && b->rank() == 2 && c->rank() == 2, "Gemm operands must be rank 2");
  TG_ASSERT(a->scope != MemScope::Global && b->scope != MemScope::Global &&
                c->scope != MemScope::Global,
            "Gemm operands must be on-chip");
  return std::make_shared<const Gemm>(std::move(a), std::move(b), std::move(c), ta, tb, clear,
                                      std::move(loc), fast_accum);
}

Stmt Reduce::make(ReduceOp op, BufferPtr src, BufferPtr dst, int dim, bool clear,
                  SourceLoc loc) {
  TG_ASSERT(src && dst, "Reduce with null operand");
  TG_ASSERT(dim >= 0 && static_cast<size_t>(dim) < src->rank(), "Reduce dim out of range");
  TG_ASSERT(dst->rank() + 1 == src->rank(), "Reduce dst rank must be src rank - 1");
  return std::make_shared<const Reduce>(op, std::move(src), std::move(dst), dim, clear,
                                        std::move(loc));
}

Stmt Parallel::make(std::vector<VarPtr> vars, std::vector<Expr> extents, Stmt body,
                    SourceLoc loc) {
  TG_ASSERT(!vars.empty() && vars.size() == extents.size(), "Parallel vars/extents mismatch");
  for (const auto& v : vars)
    TG_ASSERT(v && v->kind == VarKind::ParallelVar, "Parallel over a non-parallel var");
  TG_ASSERT(body != nullptr, "Parallel without body");
  return std::make_shared<const Parallel>(std::move(vars), std::move(extents), std::move(body),
                                          std::move(loc));
}

Stmt Store::make(BufferPtr b, std::vector<Expr> indices, Expr value, StoreOp op, SourceLoc loc) {
  TG_ASSERT(b && value, "Store with null operand");
  TG_ASSERT(indices.size() == b->rank(), "Store to '" + b->name + "' with wrong index count");
  for (const auto& i : indices)
    TG_ASSERT(i && i->type.is_int(), "Store with a non-integer index");
  return std::make_shared<const Store>(std::move(b), std::move(indices), std::move(value), op,
                                       std::move(loc));
}

Stmt LetStmt::make(VarPtr var, Expr value, SourceLoc loc) {
  TG_ASSERT(var && value, "LetStmt with null operand");
  TG_ASSERT(var->kind == VarKind::Let, "LetStmt binds a non-let var");
  return std::make_shared<const LetStmt>(std::move(var), std::move(value), std::move(loc));
}

Stmt For::make(VarPtr var, Expr start, Expr extent, Expr stages, Stmt body, SourceLoc loc) {
  TG_ASSERT(var && var->kind == VarKind::LoopVar, "For over a non-loop var");
  TG_ASSERT(start && start->type.is_int() && extent && extent->type.is_int(),
            "For bounds must be integers");
  TG_ASSERT(!stages || stages->type.is_int(), "For stages must be an integer");
  TG_ASSERT(body != nullptr, "For without body");
  return std::make_shared<const For>(std::move(var), std::move(start), std::move(extent),
                                     std::move(stages), std::move(body), std::move(loc));
}

Stmt IfThenElse::make(Expr cond, Stmt then_case, Stmt else_case, SourceLoc loc) {
  TG_ASSERT(cond && cond->type.is_bool(), "If condition must be bool");
  TG_ASSERT(then_case != nullptr, "If without then");
  return std::make_shared<const IfThenElse>(std::move(cond), std::move(then_case),
                                            std::move(else_case), std::move(loc));
}

Stmt AtomicAdd::make(Region src, Region dst, SourceLoc loc) {
  check_region(src, "atomic_add source");
  check_region(dst, "atomic_add destination");
  TG_ASSERT(dst.buffer->scope == MemScope::Global, "atomic_add into a non-global buffer");
  TG_ASSERT(src.tile_rank() == dst.tile_rank(), "atomic_add between tiles of different rank");
  return std::make_shared<const AtomicAdd>(std::move(src), std::move(dst), std::move(loc));
}

Stmt Combine::make(std::vector<Carry> carry, Stmt body, SourceLoc loc) {
  TG_ASSERT(!carry.empty(), "Combine without carried fragments");
  for (const auto& c : carry) {
    TG_ASSERT(c.state && c.peer && c.state->scope == MemScope::Fragment &&
                  c.peer->scope == MemScope::Fragment,
              "Combine carries a non-fragment");
    TG_ASSERT(c.state->dtype == c.peer->dtype && c.state->rank() == c.peer->rank(),
              "Combine pairs fragments of different dtype or rank");
  }
  TG_ASSERT(body != nullptr, "Combine without body");
  return std::make_shared<const Combine>(std::move(carry), std::move(body), std::move(loc));
}

// ---------------------------------------------------------------------------------------------

std::string Kernel::type_suffix() const {
  std::string s;
  for (const auto& [name, t] : type_binding) {
    if (!s.empty())
      s += "_";
    s += t.name();
  }
  return s;
}

} // namespace tilegen::ir
