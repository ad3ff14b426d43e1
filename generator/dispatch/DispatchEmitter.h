// DispatchEmitter: prints the two files that make a set of variants a library:
//   <lib>.h           the public C API (one function + a _query twin per kernel x type binding)
//   <lib>_dispatch.c  argument validation, the variant table, selection, the call
// It reads the type-bound kernels (symbolic, before instantiation: the checks are about the
// runtime arguments) and their instances; the variants themselves are other files. The C API
// follows docs/internals.md "Variant ABI"; conventions are documented in docs/dispatch.md.
#pragma once

#include "ir/IR.h"
#include "passes/Pipeline.h"
#include "targets/Target.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tilegen::dispatch {

struct KernelEntry {
  const ir::Kernel* kernel = nullptr;      // type-bound, not instantiated
  std::vector<passes::Instance> instances; // passes::enumerate_instances(*kernel)
  std::string spec_path;                   // for comments
  // GPU targets of a kernel with schedule.classes: per (instance index, target name), the
  // class whose variant each class runs, in class order (shape_class_names). Classes that
  // pick the same configuration share one variant (the driver fills this from
  // passes::recommend; docs/dispatch.md). A missing entry: every class runs the instance's
  // plain variant.
  std::map<std::pair<size_t, std::string>, std::vector<std::string>> class_variants;
};

// The shape classes of `k` in dispatch order: schedule.classes as declared, then "large".
std::vector<std::string> shape_class_names(const ir::Kernel& k);

struct Library {
  std::string name;
  std::vector<const Target*> targets; // every instance has one variant per target
  std::vector<KernelEntry> kernels;   // in spec order, then type-binding order
};

// Both outputs are pure functions of `lib` (byte-identical across runs).
std::string emit_header(const Library& lib);
std::string emit_dispatch_source(const Library& lib);

// The specialization key of an instance: flag values (declaration order), then value-param
// values (declaration order). The dispatch code computes the same key from its arguments.
std::vector<int64_t> instance_key(const ir::Kernel& k, const passes::Instance& inst);

} // namespace tilegen::dispatch
