// The tile IR: a small, typed, symbolic representation of one kernel, independent of YAML and
// of any backend. The front end (spec/Lowering) produces one ir::Kernel per type binding; passes
// (passes/) bind flags, value-set params and tile constants and rewrite what a target lacks;
// emitters (emit/) print it. docs/ir.md gives the semantics of every node.
//
// Conventions (Halide-style):
//  * Nodes are immutable and shared (`Expr`, `Stmt` are shared_ptr<const Node>). A pass that
//    changes something builds new nodes (see IRMutator.h); unchanged subtrees are reused.
//  * Each node kind has a `static make(...)` that checks its operands (types, ranks) and calls
//    internal_error() on misuse: the front end must have reported user errors before.
//  * The kinds are listed once, in the X-macros below, which generate the kind enums.
//  * Vars and Buffers are compared by identity (pointer), never by name.
#pragma once

#include "ir/DType.h"
#include "support/SourceLoc.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilegen::ir {

struct ExprNode;
struct StmtNode;
using Expr = std::shared_ptr<const ExprNode>;
using Stmt = std::shared_ptr<const StmtNode>;

// ---------------------------------------------------------------------------------------------
// Variables

// What a name stands for. The kind decides when its value is known:
//   Dim, Scalar                      -> at run time (arguments of the C API)
//   ValueParam, Flag, TileConst      -> at instantiation (one variant per value)
//   BlockIndex                       -> per block (grid coordinate)
//   LoopVar, ParallelVar, Let        -> inside the block body
enum class VarKind { Dim, ValueParam, Flag, Scalar, TileConst, BlockIndex, LoopVar, ParallelVar, Let };
const char* var_kind_name(VarKind k);

struct Var {
  std::string name;
  VarKind kind;
  DType type; // Dim/ValueParam/TileConst/BlockIndex/LoopVar/ParallelVar: i64; Flag: bool
  SourceLoc loc;
};
using VarPtr = std::shared_ptr<const Var>;
VarPtr make_var(std::string name, VarKind kind, DType type, SourceLoc loc = {});

// ---------------------------------------------------------------------------------------------
// Buffers

enum class MemScope { Global, Shared, Fragment, Local };
enum class Access { Read, Write, ReadWrite };
const char* mem_scope_name(MemScope s); // "global", "shared", "fragment", "local"
const char* access_name(Access a);      // "read", "write", "readwrite"

// Packed and encoded storage types of tensors (docs/spec.md "Packed types"). The front end
// stores such a tensor as bytes (dtype u8): u4/i4/e2m1 hold two elements per byte, low nibble
// first, so the buffer's last dim counts bytes (the declared extent / 2, which must be even);
// e8m0 holds one per byte. Reads and writes are lowered to byte loads, shifts and masks in
// spec/Lowering, so no backend sees these types; `packed` only names the declared type (for
// the dispatch documentation and the tile recommender's byte counts).
enum class Packed { None, U4, I4, E2M1, E8M0 };
const char* packed_name(Packed p); // "u4", "i4", "e2m1", "e8m0" ("" for None)
// Elements per byte of a packed type: 2 for u4/i4/e2m1, 1 otherwise.
inline int packed_per_byte(Packed p) {
  return p == Packed::U4 || p == Packed::I4 || p == Packed::E2M1 ? 2 : 1;
}

// A tensor argument (scope Global, shape over Dim/ValueParam vars) or an on-chip buffer
// declared in the body (scope Shared/Fragment/Local, shape over tile constants and value
// params; constant after instantiation). Row-major, contiguous.
struct Buffer {
  std::string name;
  MemScope scope;
  DType dtype;
  std::vector<Expr> shape;
  Access access = Access::ReadWrite; // meaningful for Global only
  SourceLoc loc;
  Packed packed = Packed::None; // Global only: the declared packed type (dtype is then u8)

  size_t rank() const { return shape.size(); }
};
using BufferPtr = std::shared_ptr<const Buffer>;
BufferPtr make_buffer(std::string name, MemScope scope, DType dtype, std::vector<Expr> shape,
                      Access access = Access::ReadWrite, SourceLoc loc = {});

// ---------------------------------------------------------------------------------------------
// Expressions

#define TILEGEN_EXPR_KINDS(X)                                                                    \
  X(IntImm)                                                                                      \
  X(FloatImm)                                                                                    \
  X(BoolImm)                                                                                     \
  X(VarRef)                                                                                      \
  X(Load)                                                                                        \
  X(Unary)                                                                                       \
  X(Binary)                                                                                      \
  X(Select)                                                                                      \
  X(Call)                                                                                        \
  X(Cast)

enum class ExprKind {
#define TG_X(name) name,
  TILEGEN_EXPR_KINDS(TG_X)
#undef TG_X
};
const char* expr_kind_name(ExprKind k);

struct ExprNode {
  ExprKind kind;
  DType type;
  SourceLoc loc;

  ExprNode(ExprKind k, DType t, SourceLoc l) : kind(k), type(t), loc(std::move(l)) {}
  virtual ~ExprNode() = default;

  template <class T> const T* as() const {
    return kind == T::static_kind ? static_cast<const T*>(this) : nullptr;
  }
};

// Integer constant of an integer type (i8/i32/i64, u8/u16/u32/u64). The value is in the
// type's range; a u64 at or above 2^63 is held as its bit pattern (a negative int64_t).
// `name` is optional: set when the constant is the value of a tile constant bound at
// instantiation (e.g. "BM"), so that emitters can print the name instead of a bare number.
// Folding drops it; equality of IntImms never looks at it.
struct IntImm : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::IntImm;
  int64_t value;
  std::string name;
  IntImm(DType t, int64_t v, SourceLoc l, std::string n = {})
      : ExprNode(static_kind, t, std::move(l)), value(v), name(std::move(n)) {}
  static Expr make(DType t, int64_t v, SourceLoc loc = {});
  static Expr make_named(DType t, int64_t v, std::string name, SourceLoc loc = {});
};

// Floating constant of a float type; may be +-inf or nan.
struct FloatImm : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::FloatImm;
  double value;
  FloatImm(DType t, double v, SourceLoc l) : ExprNode(static_kind, t, std::move(l)), value(v) {}
  static Expr make(DType t, double v, SourceLoc loc = {});
};

struct BoolImm : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::BoolImm;
  bool value;
  BoolImm(bool v, SourceLoc l) : ExprNode(static_kind, DType::boolean(), std::move(l)), value(v) {}
  static Expr make(bool v, SourceLoc loc = {});
};

// The value of a variable; type = var->type.
struct VarRef : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::VarRef;
  VarPtr var;
  VarRef(VarPtr v, SourceLoc l) : ExprNode(static_kind, v->type, std::move(l)), var(std::move(v)) {}
  static Expr make(VarPtr v, SourceLoc loc = {});
};

// One element of a buffer; indices are i64, one per dim. type = buffer dtype, except that
// after the C legalization a 16-bit float buffer may be held as f32 (see passes/).
// Global loads outside the tensor's bounds yield 0 (the emitter guards them).
struct Load : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Load;
  BufferPtr buffer;
  std::vector<Expr> indices;
  Load(DType t, BufferPtr b, std::vector<Expr> i, SourceLoc l)
      : ExprNode(static_kind, t, std::move(l)), buffer(std::move(b)), indices(std::move(i)) {}
  static Expr make(BufferPtr b, std::vector<Expr> indices, SourceLoc loc = {});
};

// BitNot is integer only (`~a`, two's complement: -a - 1).
enum class UnaryOp { Neg, Not, BitNot };
const char* unary_op_name(UnaryOp op); // "-", "!", "~"

struct Unary : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Unary;
  UnaryOp op;
  Expr a;
  Unary(DType t, UnaryOp o, Expr x, SourceLoc l)
      : ExprNode(static_kind, t, std::move(l)), op(o), a(std::move(x)) {}
  static Expr make(UnaryOp op, Expr a, SourceLoc loc = {});
};

// Operands have equal types (the front end inserts Casts). Comparisons and And/Or give bool.
// Div/Mod on integers: floor division/modulo (operands are non-negative in practice);
// CeilDiv is integer only: cdiv(a, b) = (a + b - 1) / b.
// BitAnd/BitOr/BitXor/Shl/Shr are integer only, on two's complement values of the type's width
// (docs/spec.md "Bitwise operators"): a count n outside [0, width) gives 0 for Shl and the sign
// fill (0 or -1) for Shr, inside it Shl wraps and Shr is arithmetic (floor(a / 2^n)).
enum class BinaryOp { Add, Sub, Mul, Div, Mod, Min, Max, CeilDiv, Eq, Ne, Lt, Le, Gt, Ge, And, Or,
                      BitAnd, BitOr, BitXor, Shl, Shr };
const char* binary_op_name(BinaryOp op); // "+", "-", ..., "min", "max", "cdiv", "==", ...
bool is_comparison(BinaryOp op);
bool is_logical(BinaryOp op);
bool is_bitwise(BinaryOp op); // & | ^ << >>
// a << n (Shl) or a >> n (Shr) on a `bits`-wide two's complement integer (a in its range): the
// reference the front end, the simplifier and every backend's generated code agree with.
int64_t shift_value(BinaryOp op, int64_t a, int64_t n, int bits);
// The same for an unsigned `bits`-wide integer (a and n its values, a u64 as its bit pattern):
// logical shifts, 0 for every count >= bits (docs/spec.md "Unsigned integers").
int64_t ushift_value(BinaryOp op, int64_t a, int64_t n, int bits);
// v (an integer value, or a u64 bit pattern) converted to the integer type t: wrapped to its
// width, sign-extended for signed types, zero-extended for unsigned ones.
int64_t wrap_int(DType t, int64_t v);

struct Binary : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Binary;
  BinaryOp op;
  Expr a, b;
  Binary(DType t, BinaryOp o, Expr x, Expr y, SourceLoc l)
      : ExprNode(static_kind, t, std::move(l)), op(o), a(std::move(x)), b(std::move(y)) {}
  static Expr make(BinaryOp op, Expr a, Expr b, SourceLoc loc = {});
};

// cond ? t : f; cond is bool, t and f have equal types. Both sides may be evaluated.
struct Select : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Select;
  Expr cond, t, f;
  Select(DType ty, Expr c, Expr x, Expr y, SourceLoc l)
      : ExprNode(static_kind, ty, std::move(l)), cond(std::move(c)), t(std::move(x)),
        f(std::move(y)) {}
  static Expr make(Expr cond, Expr t, Expr f, SourceLoc loc = {});
};

// Math intrinsics on floats (f32/f64); Abs also on ints. BitCast reinterprets the bits of its
// argument as the other type of its width: i32 <-> f32, i64 <-> f64 (bitcast_partner).
enum class Intrinsic { Abs, Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Tanh, Erf, Floor, Ceil, BitCast };
// The type a BitCast of a value of type t gives (i32 <-> f32, i64 <-> f64), or nullopt.
std::optional<DType> bitcast_partner(DType t);
const char* intrinsic_name(Intrinsic fn); // spec spelling: "abs", "exp", ...

struct Call : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Call;
  Intrinsic fn;
  std::vector<Expr> args;
  Call(DType t, Intrinsic f, std::vector<Expr> a, SourceLoc l)
      : ExprNode(static_kind, t, std::move(l)), fn(f), args(std::move(a)) {}
  static Expr make(Intrinsic fn, std::vector<Expr> args, SourceLoc loc = {});
};

// Conversion to `type`: float->int truncates toward zero, float->16-bit float rounds to
// nearest even, anything->bool is `!= 0`.
struct Cast : ExprNode {
  static constexpr ExprKind static_kind = ExprKind::Cast;
  Expr value;
  Cast(DType t, Expr v, SourceLoc l) : ExprNode(static_kind, t, std::move(l)), value(std::move(v)) {}
  static Expr make(DType t, Expr v, SourceLoc loc = {});
};

// Convenience constructors.
Expr make_i64(int64_t v, SourceLoc loc = {});
Expr make_f32(double v, SourceLoc loc = {});
Expr make_zero(DType t); // 0 / 0.0 / false of type t
// Casts both operands to their common type (int < f16/bf16 < f32 < f64, bool only with bool)
// and builds the binary node. Returns nullptr if the types cannot be combined.
Expr make_binary_promoting(BinaryOp op, Expr a, Expr b, SourceLoc loc = {});

// ---------------------------------------------------------------------------------------------
// Statements

#define TILEGEN_STMT_KINDS(X)                                                                    \
  X(Seq)                                                                                         \
  X(Alloc)                                                                                       \
  X(Fill)                                                                                        \
  X(Copy)                                                                                        \
  X(Gemm)                                                                                        \
  X(Reduce)                                                                                      \
  X(Parallel)                                                                                    \
  X(Store)                                                                                       \
  X(LetStmt)                                                                                     \
  X(For)                                                                                         \
  X(IfThenElse)                                                                                  \
  X(AtomicAdd)                                                                                   \
  X(Combine)

enum class StmtKind {
#define TG_X(name) name,
  TILEGEN_STMT_KINDS(TG_X)
#undef TG_X
};
const char* stmt_kind_name(StmtKind k);

struct StmtNode {
  StmtKind kind;
  SourceLoc loc; // the spec op this came from

  StmtNode(StmtKind k, SourceLoc l) : kind(k), loc(std::move(l)) {}
  virtual ~StmtNode() = default;

  template <class T> const T* as() const {
    return kind == T::static_kind ? static_cast<const T*>(this) : nullptr;
  }
};

// A rectangular part of a buffer: `offsets` has one entry per buffer dim; `extents` is the
// tile shape and covers the LAST extents.size() dims (leading dims are single points at their
// offset). For a whole on-chip buffer: offsets all 0, extents = shape.
struct Region {
  BufferPtr buffer;
  std::vector<Expr> offsets;
  std::vector<Expr> extents;

  static Region whole(BufferPtr b);
  size_t tile_rank() const { return extents.size(); }
};

// Statements in order. Allocs and LetStmts in a Seq scope over the rest of that Seq.
struct Seq : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Seq;
  std::vector<Stmt> stmts;
  Seq(std::vector<Stmt> s, SourceLoc l) : StmtNode(static_kind, std::move(l)), stmts(std::move(s)) {}
  static Stmt make(std::vector<Stmt> stmts, SourceLoc loc = {});
};

// Declares an on-chip buffer (Shared/Fragment/Local); contents undefined until written.
struct Alloc : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Alloc;
  BufferPtr buffer;
  Alloc(BufferPtr b, SourceLoc l) : StmtNode(static_kind, std::move(l)), buffer(std::move(b)) {}
  static Stmt make(BufferPtr b, SourceLoc loc = {});
};

// Every element of dst := value (cast to dst's dtype).
struct Fill : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Fill;
  BufferPtr dst;
  Expr value;
  Fill(BufferPtr d, Expr v, SourceLoc l)
      : StmtNode(static_kind, std::move(l)), dst(std::move(d)), value(std::move(v)) {}
  static Stmt make(BufferPtr dst, Expr value, SourceLoc loc = {});
};

// dst region := cast(src region). Equal tile shapes. Out-of-bounds global source elements read
// as `pad` (of src dtype); out-of-bounds global destination elements are not written.
struct Copy : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Copy;
  Region src, dst;
  Expr pad;
  Copy(Region s, Region d, Expr p, SourceLoc l)
      : StmtNode(static_kind, std::move(l)), src(std::move(s)), dst(std::move(d)),
        pad(std::move(p)) {}
  static Stmt make(Region src, Region dst, Expr pad, SourceLoc loc = {});
};

// c[M,N] := (clear ? 0 : c) + op(a) @ op(b), accumulated in c's dtype. a: [M,K] ([K,M] if
// transpose_a); b: [K,N] ([N,K] if transpose_b). All three are on-chip, rank 2. fast_accum: a
// target whose matrix instruction accumulates with fewer bits than c's dtype (FP8 wgmma) may
// keep the partial sums in that accumulator across calls instead of promoting them.
struct Gemm : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Gemm;
  BufferPtr a, b, c;
  bool transpose_a, transpose_b, clear, fast_accum;
  Gemm(BufferPtr a_, BufferPtr b_, BufferPtr c_, bool ta, bool tb, bool cl, SourceLoc l,
       bool fast = false)
      : StmtNode(static_kind, std::move(l)), a(std::move(a_)), b(std::move(b_)), c(std::move(c_)),
        transpose_a(ta), transpose_b(tb), clear(cl), fast_accum(fast) {}
  static Stmt make(BufferPtr a, BufferPtr b, BufferPtr c, bool transpose_a, bool transpose_b,
                   bool clear, SourceLoc loc = {}, bool fast_accum = false);
};

enum class ReduceOp { Sum, Max, Min };
const char* reduce_op_name(ReduceOp op); // "sum", "max", "min"

// dst := (clear ? identity : dst) (+)= reduce over `dim` of src. dst's shape is src's shape
// without `dim`. Identity: 0 for sum, -inf for max, +inf for min.
struct Reduce : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Reduce;
  ReduceOp op;
  BufferPtr src, dst;
  int dim;
  bool clear;
  Reduce(ReduceOp o, BufferPtr s, BufferPtr d, int dm, bool cl, SourceLoc l)
      : StmtNode(static_kind, std::move(l)), op(o), src(std::move(s)), dst(std::move(d)), dim(dm),
        clear(cl) {}
  static Stmt make(ReduceOp op, BufferPtr src, BufferPtr dst, int dim, bool clear,
                   SourceLoc loc = {});
};

// For every point of vars (each in [0, extent)), run body. The body holds only Store, LetStmt,
// IfThenElse and Seq. Points are independent: a point may only read elements that no other
// point writes (the front end checks the simple cases).
struct Parallel : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Parallel;
  std::vector<VarPtr> vars;
  std::vector<Expr> extents;
  Stmt body;
  Parallel(std::vector<VarPtr> v, std::vector<Expr> e, Stmt b, SourceLoc l)
      : StmtNode(static_kind, std::move(l)), vars(std::move(v)), extents(std::move(e)),
        body(std::move(b)) {}
  static Stmt make(std::vector<VarPtr> vars, std::vector<Expr> extents, Stmt body,
                   SourceLoc loc = {});
};

enum class StoreOp { Assign, Add };

// buffer[indices] := value (or += value), value cast to the buffer's dtype. Global stores out
// of bounds are dropped.
struct Store : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Store;
  BufferPtr buffer;
  std::vector<Expr> indices;
  Expr value;
  StoreOp op;
  Store(BufferPtr b, std::vector<Expr> i, Expr v, StoreOp o, SourceLoc l)
      : StmtNode(static_kind, std::move(l)), buffer(std::move(b)), indices(std::move(i)),
        value(std::move(v)), op(o) {}
  static Stmt make(BufferPtr b, std::vector<Expr> indices, Expr value, StoreOp op,
                   SourceLoc loc = {});
};

// Binds var (kind Let) to value for the rest of the enclosing Seq.
struct LetStmt : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::LetStmt;
  VarPtr var;
  Expr value;
  LetStmt(VarPtr v, Expr x, SourceLoc l)
      : StmtNode(static_kind, std::move(l)), var(std::move(v)), value(std::move(x)) {}
  static Stmt make(VarPtr var, Expr value, SourceLoc loc = {});
};

// for var in [start, start + extent): body. `stages` is null for a serial loop; for a
// pipelined loop it is the requested depth (i64, >= 1): copies into shared buffers inside the
// body may be issued up to stages-1 iterations ahead on targets with async copies.
struct For : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::For;
  VarPtr var;
  Expr start, extent;
  Expr stages;
  Stmt body;
  For(VarPtr v, Expr s, Expr e, Expr st, Stmt b, SourceLoc l)
      : StmtNode(static_kind, std::move(l)), var(std::move(v)), start(std::move(s)),
        extent(std::move(e)), stages(std::move(st)), body(std::move(b)) {}
  static Stmt make(VarPtr var, Expr start, Expr extent, Expr stages, Stmt body,
                   SourceLoc loc = {});
  bool pipelined() const { return stages != nullptr; }
};

// if (cond) then_case else else_case; else_case may be null.
struct IfThenElse : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::IfThenElse;
  Expr cond;
  Stmt then_case, else_case;
  IfThenElse(Expr c, Stmt t, Stmt e, SourceLoc l)
      : StmtNode(static_kind, std::move(l)), cond(std::move(c)), then_case(std::move(t)),
        else_case(std::move(e)) {}
  static Stmt make(Expr cond, Stmt then_case, Stmt else_case, SourceLoc loc = {});
};

// Like Copy into a Global dst, but each element is added atomically (dst dtype f32 or i32 in
// v1). Out-of-bounds elements are skipped.
struct AtomicAdd : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::AtomicAdd;
  Region src, dst;
  AtomicAdd(Region s, Region d, SourceLoc l)
      : StmtNode(static_kind, std::move(l)), src(std::move(s)), dst(std::move(d)) {}
  static Stmt make(Region src, Region dst, SourceLoc loc = {});
};

// The join of a pipelined loop whose iterations may run in parts on several blocks (the `split`
// of a `pipelined` op; docs/ir.md). It follows that loop in the loop's Seq. `carry` pairs each
// fragment the loop carries (`state`) with a `peer` fragment of the same dtype and shape, declared
// here and read only in `body`: in the block that finishes a split tile last, `body` runs once per
// other part, the peers holding the values that part left in the state fragments, and merges
// them into the state.
// Everywhere else (a whole tile, every target that does not split loops) it does nothing: the
// spec promises that the parts, merged in any order, give what one run gives (up to rounding).
struct Combine : StmtNode {
  static constexpr StmtKind static_kind = StmtKind::Combine;
  struct Carry {
    BufferPtr state, peer;
  };
  std::vector<Carry> carry;
  Stmt body;
  Combine(std::vector<Carry> c, Stmt b, SourceLoc l)
      : StmtNode(static_kind, std::move(l)), carry(std::move(c)), body(std::move(b)) {}
  static Stmt make(std::vector<Carry> carry, Stmt body, SourceLoc loc = {});
};

// ---------------------------------------------------------------------------------------------
// Kernel

struct DimParam {
  VarPtr var;                         // kind Dim (runtime) or ValueParam (specialized)
  std::optional<int64_t> multiple_of; // checked at dispatch
  std::optional<int64_t> min, max;    // checked at dispatch
  std::vector<int64_t> values;        // non-empty iff kind == ValueParam
};

struct TileConst {
  VarPtr var;                                          // kind TileConst, i64
  std::vector<int64_t> candidates;                     // declared set (ranges expanded)
  std::map<std::string, std::vector<int64_t>> per_target; // schedule.targets overrides
  // schedule.classes.<class>.targets overrides: class -> target -> candidates
  std::map<std::string, std::map<std::string, std::vector<int64_t>>> per_class_target;
  SourceLoc loc;
};

struct Requirement {
  Expr pred; // bool, over TileConst / ValueParam / Flag vars
  std::string text; // as written, for messages only (never emitted as code)
  SourceLoc loc;
};

struct GridDim {
  VarPtr index; // kind BlockIndex
  Expr extent;  // i64, over Dim / ValueParam / TileConst vars
};

struct Kernel {
  std::string name;
  std::string summary;
  SourceLoc loc;
  std::vector<std::pair<std::string, DType>> type_binding; // e.g. {{"T", bf16}}

  std::vector<DimParam> dims;      // `params`, declaration order
  std::vector<VarPtr> flags;       // kind Flag
  std::vector<VarPtr> scalars;     // kind Scalar
  std::vector<BufferPtr> tensors;  // scope Global, declaration order
  std::vector<TileConst> tile_consts;
  std::vector<Requirement> requirements;
  // `scalars: {x: {type: f32, require: "x > 0"}}`: predicates over scalars, dims and flags that
  // the dispatch function checks on every call (TG_ERR_INVALID_ARGUMENT when one fails). The
  // body may rely on them (kernels/flash_attention_fwd.yaml folds its scale into the exponent
  // because sm_scale > 0). Declaration order.
  std::vector<Requirement> scalar_requirements;
  std::vector<GridDim> grid;       // x first
  Expr threads;                    // i64
  Stmt body;

  // Filled by passes/Instantiate: the values chosen for flags (0/1), value params and tile
  // constants, by name, and the target the variant is for. Empty before instantiation.
  std::map<std::string, int64_t> bindings;
  std::string target;
  // Filled by passes/Instantiate: one line per fact worth a comment in generated code, e.g.
  // "BM=128 BN=128 BK=64: footprint 196608 B of 262144 B budget".
  std::vector<std::string> notes;
  // schedule.classes (docs/spec.md "Shape classes"), in order: class name -> predicate over
  // dims and value params (Requirement::pred, text, loc). Dispatch takes the first class whose
  // predicate holds; shapes no class takes form the implicit class "large". Passes keep it
  // unchanged (it is evaluated at dispatch, with the call's dims).
  std::vector<std::pair<std::string, Requirement>> shape_classes;
  // schedule.classes `shape:` entries: class name ("large" too) -> runtime dims pinned for the
  // tile recommender's representative shape (passes/TileRecommend), declaration order.
  std::map<std::string, std::vector<std::pair<std::string, int64_t>>> class_shapes;

  // "f32", "bf16", "f16_i8": the type-binding part of public function names.
  std::string type_suffix() const;
};

} // namespace tilegen::ir
