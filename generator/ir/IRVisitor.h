// IRVisitor: a read-only walk over expressions and statements. The default visit_<Kind>
// methods recurse into every child (operands, indices, region offsets/extents, bodies), so a
// pass overrides only the kinds it cares about and calls the base method to keep descending.
// Buffers are reported once per use through visit_buffer_use (shapes are NOT walked there:
// a buffer's shape belongs to its declaration, see visit_Alloc / Kernel::tensors).
#pragma once

#include <set>

#include "ir/IR.h"
#include "ir/Substitute.h"

namespace tilegen::ir {

class IRVisitor {
public:
  virtual ~IRVisitor() = default;

  void visit(const Expr& e);
  void visit(const Stmt& s);
  // Walks tensors' shapes, grid extents, threads, requirements and the body.
  void visit_kernel(const Kernel& k);

protected:
#define TG_X(name) virtual void visit_##name(const name* node);
  TILEGEN_EXPR_KINDS(TG_X)
  TILEGEN_STMT_KINDS(TG_X)
#undef TG_X
  virtual void visit_region(const Region& r);
  virtual void visit_buffer_use(const BufferPtr&) {}
};

// Walks a parallel body (sequences, lets, stores, ifs) in program order and visits each of its
// expressions: let values, store indices and values, if conditions. From each let on, `lets`
// maps its variable to its value with the earlier lets substituted. before_if runs ahead of an
// if's condition.
class ParallelBodyWalker : public IRVisitor {
public:
  VarMap lets;
  void walk(const Stmt& s);

protected:
  virtual void before_if(const IfThenElse*) {}
};

// Whether s (or e) uses buffer b anywhere: an operand, a region, a load or a store.
bool mentions_buffer(const Stmt& s, const Buffer* b);
bool mentions_buffer(const Expr& e, const Buffer* b);
// The variables expression e refers to.
std::set<const Var*> vars_of(const Expr& e);
// Whether s (or e) refers to variable v anywhere (a VarRef in any of its expressions).
bool mentions_var(const Stmt& s, const Var* v);
bool mentions_var(const Expr& e, const Var* v);
// The first store into buffer b in s (program order), or null.
const Store* first_store(const Stmt& s, const Buffer* b);

} // namespace tilegen::ir
