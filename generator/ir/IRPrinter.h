// IRPrinter: the readable, deterministic text form of the IR that `tilegen dump` shows and
// golden tests check. Expressions print in the spec's expression syntax (minimal parentheses,
// the spec's precedence), statements one per line with two-space indentation:
//
//   kernel gemm<T=bf16>
//   target c
//   bindings BK=64 BM=128 BN=128 stages=2 threads=128
//   tensor A: bf16[M, K] read
//   grid bx < cdiv(N, 128)
//   {
//     shared A_s: bf16[128, 64]
//     for k in [0, cdiv(K, 64)) pipelined(stages=2) {
//       copy A[by * 128, k * 64 : 128x64] -> A_s pad 0.0
//       gemm acc += A_s @ B_s
//   ...
// docs/ir.md describes every line form.
#pragma once

#include "ir/IR.h"

#include <string>

namespace tilegen::ir {

struct PrintOptions {
  bool show_locs = false; // append "  # file:line" to statements with a known location
};

std::string to_string(const Expr& e);
std::string to_string(const Stmt& s, const PrintOptions& opts = {}, int indent = 0);
std::string to_string(const Region& r);
std::string to_string(const Kernel& k, const PrintOptions& opts = {});
// A float constant as the shortest decimal that reads back to the same value of type t
// ("1.0", "0.125", "1e-05", "inf", "-inf", "nan").
std::string float_literal(double v, DType t);

} // namespace tilegen::ir
