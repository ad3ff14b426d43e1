// IRMutator: rebuilds the parts of the IR a pass changes and shares everything else.
// Each mutate_<Kind> gets the node and the shared pointer it came from (`self`); it returns
// `self` when nothing below changed, so an identity mutation allocates nothing.
//
// Buffers: a buffer whose shape (or, in an override of rewrite_buffer, dtype) changes is
// rebuilt ONCE and remembered in an old -> new map, so every Load, Store, region, Alloc and
// kernel tensor that referred to the old buffer refers to the same new one afterwards (IR
// compares buffers by identity). Vars are never rebuilt; Substitute replaces their uses.
#pragma once

#include "ir/IR.h"

#include <map>
#include <utility>

namespace tilegen::ir {

class IRMutator {
public:
  virtual ~IRMutator() = default;

  Expr mutate(const Expr& e);
  Stmt mutate(const Stmt& s);
  // Tensors first (so the buffer map is filled in declaration order), then grid extents,
  // threads, requirements and the body. Everything else is copied.
  Kernel mutate_kernel(const Kernel& k);
  // The (cached) replacement of a buffer; `b` itself if it does not change.
  BufferPtr mutate_buffer(const BufferPtr& b);

protected:
#define TG_X(name) virtual Expr mutate_##name(const name* node, const Expr& self);
  TILEGEN_EXPR_KINDS(TG_X)
#undef TG_X
#define TG_X(name) virtual Stmt mutate_##name(const name* node, const Stmt& self);
  TILEGEN_STMT_KINDS(TG_X)
#undef TG_X
  virtual Region mutate_region(const Region& r);
  // Builds the replacement of a buffer not seen before. Default: mutate its shape.
  virtual BufferPtr rewrite_buffer(const BufferPtr& b);

  // Helpers for overrides: mutate a list, report whether anything changed.
  std::vector<Expr> mutate_all(const std::vector<Expr>& es, bool& changed);

private:
  // old buffer -> (old, new); the old pointer is kept alive so the key cannot be reused.
  std::map<const Buffer*, std::pair<BufferPtr, BufferPtr>> buffer_map_;
};

} // namespace tilegen::ir
