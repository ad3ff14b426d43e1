// FuseParallel: folds an element-producing parallel loop into a later parallel loop of the
// same shape that rewrites every element it produced, so that the value goes from one to the
// other in a register instead of through a shared buffer and a barrier.
//
// Semantics. In a Seq, a parallel loop P1 and a later parallel loop P2 are fused when:
//  1. P1's body is zero or more lets followed by one assignment `X[v0, .., vn] = e` to a
//     shared buffer X at exactly P1's variables in order (X's rank is the loop's), and e and
//     the lets read nothing of X;
//  2. P2 has as many variables as P1 with structurally equal extents, its body is a sequence
//     of lets and stores (no ifs or loops) whose last statement is an assignment to X at
//     exactly P2's variables in order, that is its only store to X, and every read of X in the
//     body is at exactly P2's variables in order;
//  3. P2 stores into no buffer that P1 reads;
//  4. no statement between them mentions X or any buffer P1 reads;
//  5. where P1 reads a tensor, neither P2 nor a statement between them mentions a tensor the
//     kernel may write (tensors may alias in an in-place call).
//  2'. or: P2 satisfies 2 except that it does not store X at all (it reads X, at exactly its
//      variables, and stores elsewhere: a fragment, a tensor), and no statement of the kernel
//      other than P1 and P2 uses X. X is then a temporary between them: its allocation is
//      removed as well.
// Then P1 is removed and P2's body becomes: P1's lets and `let x = e` (P1's variables renamed
// to P2's), then P2's body with every read of X replaced by x. Every point of X that P1 wrote
// is overwritten by P2 before anything else can read it (4 and 2), the point's value is the
// same expression (e is already converted to X's dtype, so the rounding of the store stays),
// and what e reads is unchanged up to P2 (3, 4, 5), so the result is that of the two loops.
//
// Backend-neutral. It fires where a packed tile is unpacked from its byte staging tile into a
// shared buffer that the next parallel loop dequantizes in place (kernels/gemm_w4a16.yaml,
// kernels/gemm_mxfp4.yaml; docs/spec.md "Packed types"): one shared write, one shared read
// and one barrier less per element and step.
#pragma once

#include "ir/IR.h"

namespace tilegen::passes {

// One line per fusion goes to the kernel's notes (the generated file's header comment).
ir::Kernel fuse_parallels(const ir::Kernel& k);

} // namespace tilegen::passes
