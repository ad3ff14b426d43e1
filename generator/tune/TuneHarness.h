// TuneHarness: the C program `tilegen tune` links to a candidate library and the reference
// library (docs/tune.md). For each shape compiled into it, it fills every tensor
// deterministically, calls the reference (the portable `c` target) and the candidate on the
// same inputs, compares every output within the tolerance of its dtype, then times the
// candidate: `warmup` untimed calls, then `runs` timed ones (CUDA: events on a stream).
//
//   harness verify|time RUNS WARMUP
//
// prints one line per shape, which RunHarness parses:
//   shape <i> ok <t1_us> <t2_us> ...          (the times of the timed runs, in order)
//   shape <i> mismatch <tensor> at <flat index>: got <v>, expected <w> (max error e > tol)
//   shape <i> error <what>: <tg_status_string>
// `time` skips the reference and the comparison.
#pragma once

#include "ir/IR.h"
#include "passes/Pipeline.h"

#include <map>
#include <string>
#include <vector>

namespace tilegen::tune {

struct HarnessSpec {
  const ir::Kernel* kernel = nullptr; // type-bound
  passes::Instance instance;
  std::string ref_lib, cand_lib;      // library names (prefix of the public functions)
  bool cuda = false;                  // candidate runs on the GPU
  // Per shape: every runtime dim (kind Dim) of kernel->dims in declaration order.
  std::vector<std::vector<int64_t>> shapes;
  std::map<std::string, std::string> scalars; // scalar name -> C literal
  // Where the reference's outputs are kept between harnesses (one file per shape and output
  // tensor): the first harness of an instance computes them, the others read them, so the
  // slow portable reference runs once per shape, not once per configuration. "" = no cache.
  std::string ref_cache_dir;
  // Tensors whose values tilegen computed (--fill, tune/TuneFill): the harness reads them from
  // ref_cache_dir/fill_file_name(shape, tensor) instead of filling them.
  std::vector<std::string> filled;
};

// The file of a --fill tensor's values at shape `shape` (in HarnessSpec::ref_cache_dir).
std::string fill_file_name(size_t shape, const std::string& tensor);

// The harness source (C11; with `cuda`, C11 over the CUDA runtime API). Element counts are
// computed here, so the program holds only constants. Empty, with `error` set, if a dtype has
// no fill (none today) or an extent does not fold at a shape.
std::string harness_source(const HarnessSpec& h, std::string& error);

// The tensors of `k` whose elements the kernel uses as indices or trip counts (read in a copy's
// start index, a loop's start or extent, or the index of another load or store: a paged
// cache's block table, a sequence-length tensor), each with a phrase saying where it is first
// so used. The harness's own values would index out of bounds there, so tune requires a --fill
// for each (docs/tune.md).
std::vector<std::pair<const ir::Buffer*, std::string>> index_tensors(const ir::Kernel& k);

// The relative tolerance of an output of dtype `t` (docs/tune.md): |got - want| <=
// tol * (|want| + mean |want| over the tensor). 0 for integers (exact).
double tolerance(ir::DType t);

} // namespace tilegen::tune
