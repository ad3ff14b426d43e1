// A hand-built type-bound kernel that exercises every dispatch feature: constrained and
// specialized dims, a flag, scalars (f32, f16, i32), tensors of several dtypes and access
// modes with computed shapes. Used by the string tests and by the generated-library test.
#pragma once

#include "dispatch/DispatchEmitter.h"
#include "dispatch/Naming.h"
#include "targets/Target.h"

#include <memory>

namespace tilegen::fixture {

inline ir::Kernel make_fixture_kernel() {
  using namespace ir;
  auto file = std::make_shared<const std::string>("fixture.yaml");
  Kernel k;
  k.name = "mix";
  k.summary = "a kernel made by hand for dispatch tests";
  k.loc = SourceLoc{file, 2, 1, 1};
  k.type_binding = {{"T", DType::f32()}};
  auto M = make_var("M", VarKind::Dim, DType::i64());
  auto N = make_var("N", VarKind::Dim, DType::i64());
  auto D = make_var("D", VarKind::ValueParam, DType::i64());
  DimParam dm{M, std::nullopt, std::nullopt, std::nullopt, {}};
  DimParam dn{N, 8, 8, 4096, {}};
  DimParam dd{D, std::nullopt, std::nullopt, std::nullopt, {64, 128}};
  k.dims = {dm, dn, dd};
  k.flags = {make_var("causal", VarKind::Flag, DType::boolean())};
  k.scalars = {make_var("scale", VarKind::Scalar, DType::f32()),
               make_var("bias", VarKind::Scalar, DType::f16()),
               make_var("count", VarKind::Scalar, DType::i32())};
  Expr m = VarRef::make(M), n = VarRef::make(N), d = VarRef::make(D);
  k.tensors = {
      make_buffer("X", MemScope::Global, DType::f32(), {m, n}, Access::Read),
      make_buffer("W", MemScope::Global, DType::bf16(), {d}, Access::Read),
      make_buffer("Y", MemScope::Global, DType::f32(), {m, Binary::make(BinaryOp::Mul, n, make_i64(2))},
                  Access::Write),
      make_buffer("Z", MemScope::Global, DType::i8(),
                  {Binary::make(BinaryOp::CeilDiv, n, make_i64(3))}, Access::ReadWrite),
  };
  return k;
}

// Instances in enumerate_instances order: flags first, then value params, values ascending.
inline std::vector<passes::Instance> fixture_instances() {
  std::vector<passes::Instance> out;
  for (int64_t c : {0, 1})
    for (int64_t dv : {64, 128})
      out.push_back({"f32_causal" + std::to_string(c) + "_D" + std::to_string(dv),
                     {{"causal", c}, {"D", dv}}});
  return out;
}

inline dispatch::Library make_fixture_library(const ir::Kernel& k) {
  dispatch::Library lib;
  lib.name = "fixlib";
  for (const char* t : {"c", "c_avx2", "c_avx512"})
    lib.targets.push_back(find_target(t));
  lib.kernels.push_back({&k, fixture_instances(), "fixture.yaml", {}});
  return lib;
}

// The same kernel in a library with GPU rows (CUDA sm_80 and sm_90, then the C fallbacks).
inline dispatch::Library make_fixture_gpu_library(const ir::Kernel& k) {
  dispatch::Library lib;
  lib.name = "gfixlib";
  for (const char* t : {"sm_80", "sm_90", "c", "c_avx2"})
    lib.targets.push_back(find_target(t));
  lib.kernels.push_back({&k, fixture_instances(), "fixture.yaml", {}});
  return lib;
}

// The fixture kernel with shape classes (schedule.classes): small_m "M <= 64", then narrow
// "N * D <= 1024" (checked arithmetic in the generated predicate), then the implicit large.
inline ir::Kernel make_fixture_classed_kernel() {
  using namespace ir;
  Kernel k = make_fixture_kernel();
  auto file = std::make_shared<const std::string>("fixture.yaml");
  Expr m = VarRef::make(k.dims[0].var), n = VarRef::make(k.dims[1].var),
       d = VarRef::make(k.dims[2].var);
  k.shape_classes = {
      {"small_m", Requirement{Binary::make(BinaryOp::Le, m, make_i64(64)), "M <= 64",
                              SourceLoc{file, 7, 3, 1}}},
      {"narrow", Requirement{Binary::make(BinaryOp::Le, Binary::make(BinaryOp::Mul, n, d),
                                          make_i64(1024)),
                             "N * D <= 1024", SourceLoc{file, 8, 3, 1}}},
  };
  return k;
}

// The classed kernel in a library with GPU rows (sm_80, sm_90, c), with the class plan the
// driver would make: on sm_90 every instance has a small_m variant and narrow shares large's;
// on sm_80 every class runs the plain variant (all three chose the same tiles).
inline dispatch::Library make_fixture_class_library(const ir::Kernel& k) {
  dispatch::Library lib;
  lib.name = "cfixlib";
  for (const char* t : {"sm_80", "sm_90", "c"})
    lib.targets.push_back(find_target(t));
  lib.kernels.push_back({&k, fixture_instances(), "fixture.yaml", {}});
  for (size_t i = 0; i < lib.kernels[0].instances.size(); ++i) {
    lib.kernels[0].class_variants[{i, "sm_90"}] = {"small_m", "large", "large"};
    lib.kernels[0].class_variants[{i, "sm_80"}] = {"large", "large", "large"};
  }
  return lib;
}

} // namespace tilegen::fixture
