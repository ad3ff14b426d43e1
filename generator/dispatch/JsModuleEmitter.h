// The host glue of a library's WGSL variants (docs/wgsl.md):
//   <lib>.js        an ES module: one async function per kernel x type binding that checks its
//                   arguments, picks the best variant the device can run, creates its pipeline
//                   once per device, binds the buffers and dispatches; the WGSL is embedded.
//   <lib>.d.ts      its TypeScript declarations;
//   <lib>.wgsl.json a manifest of the raw .wgsl files (bindings, workgroup size, features,
//                   grid and shape expressions) for hosts of their own (wgpu, Dawn C++).
// All three are pure functions of their input (deterministic).
#pragma once

#include "emit/WgslEmitter.h"
#include "ir/IR.h"
#include "passes/Pipeline.h"
#include "targets/Target.h"

#include <string>
#include <vector>

namespace tilegen::dispatch {

struct WgslVariantInfo {
  passes::Instance instance;
  const Target* target = nullptr;
  std::string file;        // <lib>__<kernel>__<inst>__<target>.wgsl
  std::string entry_point; // tgv_<lib>__<kernel>__<inst>__<target>
  std::string source;      // the WGSL text (as written to `file`)
  emit::WgslLayout layout;
  std::vector<ir::Expr> grid; // workgroups per dimension (x first), over dims
};

struct WgslKernelInfo {
  const ir::Kernel* kernel = nullptr; // type-bound, not instantiated (public signature)
  std::string spec_path;
  std::vector<WgslVariantInfo> variants;
};

struct WgslLibrary {
  std::string name;
  std::vector<WgslKernelInfo> kernels;
};

std::string js_module_file_name(const std::string& lib);   // <lib>.js
std::string js_types_file_name(const std::string& lib);    // <lib>.d.ts
std::string wgsl_manifest_file_name(const std::string& lib); // <lib>.wgsl.json

std::string emit_js_module(const WgslLibrary& lib);
std::string emit_js_types(const WgslLibrary& lib);
std::string emit_wgsl_manifest(const WgslLibrary& lib);

// An integer IR expression over dims as JavaScript (dims read from `dims_object.<name>`).
std::string js_expr(const ir::Expr& e, const std::string& dims_object);

} // namespace tilegen::dispatch
