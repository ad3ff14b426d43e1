// The spec AST: a checked, typed-as-far-as-YAML-goes picture of one spec file. SpecParser
// builds it from the YamlTree (unknown/missing fields and YAML types are checked there);
// Lowering resolves names and types per type binding. Every piece keeps its location.
#pragma once

#include "ir/IR.h"
#include "spec/ExprAST.h"
#include "support/SourceLoc.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilegen::spec {

struct Name {
  std::string name;
  SourceLoc loc;
};

// A dtype as written: a dtype name (f32, ...) or a type parameter; resolved by Lowering.
struct TypeRef {
  std::string name;
  SourceLoc loc;
};

struct TypeParamDecl {
  Name name;
  std::vector<std::pair<ir::DType, SourceLoc>> choices;
};

struct IntField {
  int64_t value = 0;
  SourceLoc loc;
};

struct DimDecl {
  Name name;
  SourceLoc loc;                // the declaration's value
  bool value_set = false;       // {values: [...]}
  std::vector<IntField> values; // value_set only
  std::optional<IntField> multiple_of, min, max;
};

struct RequireDecl {
  SExprPtr pred;
  std::string text;
  SourceLoc loc;
};

struct ScalarDecl {
  Name name;
  TypeRef type;
  std::optional<RequireDecl> require; // {type: f32, require: "sm_scale > 0"}: checked at dispatch
};

struct TensorDecl {
  Name name;
  TypeRef type;
  std::vector<SExprPtr> shape;
  SourceLoc shape_loc;
  ir::Access access = ir::Access::Read;
  SourceLoc loc;
};

struct TileConstDecl {
  Name name;
  SourceLoc loc;                   // the candidate list / range
  std::vector<int64_t> candidates; // ranges expanded
  std::map<std::string, std::vector<int64_t>> per_target;
  // schedule.classes.<class>.targets: class -> target -> candidates
  std::map<std::string, std::map<std::string, std::vector<int64_t>>> per_class_target;
};


// schedule.targets, or a shape class's `targets:`: candidates per target.
struct TargetOverrideDecl {
  Name target;
  std::vector<std::pair<Name, std::vector<int64_t>>> consts; // tile const -> candidates
};

// schedule.classes entry: a shape class of the tile recommender (docs/spec.md "Shape
// classes"). The name is not declared in the kernel's namespace.
struct ShapeClassDecl {
  Name name;
  SExprPtr pred;    // null for `large` (it has no predicate)
  std::string text; // as written
  SourceLoc loc;    // the predicate
  std::vector<std::pair<Name, IntField>> shape; // pinned representative dims (`shape:`)
  std::vector<TargetOverrideDecl> targets;      // the class's own candidates (`targets:`)
};

struct GridDecl {
  Name index;
  SExprPtr extent;
};

struct BufferDecl {
  Name name;
  TypeRef type;
  std::vector<SExprPtr> shape;
  SourceLoc loc; // the [dtype, dims...] list
};

enum class OpKind {
  Shared,
  Fragment,
  Local,
  Fill,
  Copy,
  Gemm,
  Reduce,
  Parallel,
  For,
  Pipelined,
  If,
  AtomicAdd
};
const char* op_kind_name(OpKind k); // the YAML key

struct BoolField {
  bool value = false;
  bool present = false;
  SourceLoc loc;
};

struct Op {
  OpKind kind = OpKind::Fill;
  SourceLoc loc; // the op key

  std::vector<BufferDecl> buffers; // shared / fragment / local
  SExprPtr src, dst, value, pad;   // fill (dst, value), copy (src, dst, pad), atomic_add,
                                   // reduce (src, dst)
  SExprPtr a, b, c;                // gemm
  BoolField transpose_a, transpose_b, clear;
  BoolField fast_accum; // gemm only
  ir::ReduceOp reduce_op = ir::ReduceOp::Sum;
  IntField dim;                                 // reduce
  std::vector<std::pair<Name, SExprPtr>> pvars; // parallel
  std::vector<SStmt> stmts;                     // parallel body
  Name var;                                     // for / pipelined
  SExprPtr start, extent, stages;               // for / pipelined
  SExprPtr cond;                                // if
  std::vector<Op> body, then_ops, else_ops;
  bool has_else = false;
  // pipelined `split`: the loop's iterations may run in two parts on two blocks; `carry` names
  // each carried fragment's peer (the other part's values), `combine` merges them
  SourceLoc split_loc; // unknown: no split
  std::vector<std::pair<Name, Name>> carry;
  std::vector<Op> combine;
};

struct Spec {
  Name kernel;
  std::string summary;
  SourceLoc loc; // the document
  std::vector<TypeParamDecl> types;
  std::vector<DimDecl> params;
  std::vector<Name> flags;
  std::vector<ScalarDecl> scalars;
  std::vector<TensorDecl> tensors;
  std::vector<TileConstDecl> tile_consts;
  std::vector<RequireDecl> requires_;
  std::vector<TargetOverrideDecl> target_overrides;
  std::vector<ShapeClassDecl> classes;
  std::vector<GridDecl> grid;
  SourceLoc grid_loc;
  SExprPtr threads; // null: default 128
  std::vector<Op> body;
  SourceLoc body_loc;
};

} // namespace tilegen::spec
