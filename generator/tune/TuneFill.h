// TuneFill: `tilegen tune --fill TENSOR=EXPR` (docs/tune.md). The harness fills every tensor
// with pseudo-random values of its own; a tensor whose elements are indices (a paged cache's
// block table, sequence lengths, a grouped GEMM's group ends) needs values the kernel may
// follow, which only the user knows. EXPR gives them: an integer expression in the spec's
// syntax over the kernel's runtime dims and value params (bound to the tuned shape) and the
// element's own index, i0 for the first axis, i1 for the second, ... . It is evaluated here,
// with the spec's integer semantics (floor division, defined results for a zero divisor and
// every shift count, a located error where a value overflows 64 bits or does not fit the
// tensor's type), once per tuned shape, and the harness reads the values from a file: nothing
// of the text reaches generated code.
#pragma once

#include "ir/IR.h"
#include "passes/Pipeline.h"
#include "spec/ExprAST.h"
#include "support/Diagnostics.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tilegen::tune {

struct Fill {
  std::string tensor;
  spec::SExprPtr expr;
  SourceLoc loc; // the option's text (registered with the DiagEngine, so errors show it)
};

// The most elements one --fill may produce per shape (the values are computed by tilegen).
constexpr int64_t kMaxFillElements = int64_t(1) << 26;

// The tensor a fill gives values to (nullptr if `k` has none of that name).
const ir::Buffer* filled_tensor(const Fill& f, const ir::Kernel& k);

// Parses the value of the `ordinal`-th --fill ("NAME=EXPR"); nullopt after a located error.
std::optional<Fill> parse_fill(const std::string& arg, int ordinal, DiagEngine& diag);

// Checks a fill against a type-bound kernel: the tensor exists, has an integer element type,
// and every name of EXPR is a runtime dim, a value param or an index i0.. of the tensor's
// rank, every call min, max, abs or cdiv. false after a located error.
bool check_fill(const Fill& f, const ir::Kernel& k, DiagEngine& diag);

// The tensor's values at one shape (`dims`: every runtime dim and value param by name), in
// row-major order; false after a located error (overflow, a value outside the tensor's type,
// more than kMaxFillElements elements).
bool eval_fill(const Fill& f, const ir::Kernel& k, const std::map<std::string, int64_t>& dims,
               std::vector<int64_t>& out, DiagEngine& diag);

// The values as the tensor's element type would hold them in memory (little-endian), for the
// harness to read.
std::string fill_bytes(const std::vector<int64_t>& values, ir::DType t);

} // namespace tilegen::tune
