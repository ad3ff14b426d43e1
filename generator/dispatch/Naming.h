// Names shared by the driver, the dispatch generator and CMake (through `tilegen outputs`):
// the files a library consists of and the symbols they define. One place, so that the
// variant table always names the functions the variant files define.
#pragma once

#include "ir/IR.h"
#include "passes/Pipeline.h"
#include "targets/Target.h"

#include <string>

namespace tilegen::dispatch {

// The instance part of variant names: the instance name, or "default" for a kernel without
// types, flags and value params (whose instance name is empty).
std::string instance_label(const passes::Instance& inst);

// <lib>_<kernel>[_<types>]: the public C function of one kernel x type binding.
std::string public_function_name(const std::string& lib, const ir::Kernel& k);

// tgv_<lib>__<kernel>__<inst>__<target>: the function one variant file exports.
std::string variant_function_name(const std::string& lib, const ir::Kernel& k,
                                  const passes::Instance& inst, const Target& t);

// <lib>__<kernel>__<inst>__<target>.c, <lib>.h, <lib>_dispatch.c
std::string variant_file_name(const std::string& lib, const ir::Kernel& k,
                              const passes::Instance& inst, const Target& t);

// The variant of one shape class (schedule.classes) on a GPU target: the names above with
// "__<class>" appended, except for the implicit class "large" (and "", no class), whose
// variant keeps the plain name. tgv_<lib>__<kernel>__<inst>__<target>__<class>,
// <lib>__<kernel>__<inst>__<target>__<class>.cu.
std::string variant_function_name(const std::string& lib, const ir::Kernel& k,
                                  const passes::Instance& inst, const Target& t,
                                  const std::string& shape_class);
std::string variant_file_name(const std::string& lib, const ir::Kernel& k,
                              const passes::Instance& inst, const Target& t,
                              const std::string& shape_class);
std::string header_file_name(const std::string& lib);
std::string dispatch_file_name(const std::string& lib);

// The first line of every generated file. The driver only deletes stale files that start
// with the marker of their library, never a file a user wrote.
std::string generated_marker(const std::string& lib);

// The file-scope prefix of one kernel x type binding in <lib>_dispatch.c: <kernel>[_<types>]
// (its tables <prefix>_variants, <prefix>_keys, ..., macros <PREFIX>_N_VARIANTS, ...).
std::string dispatch_prefix(const ir::Kernel& k);

// The include guard of <lib>.h: <LIB>_H.
std::string header_guard(const std::string& lib);

// One name a library defines in a namespace where two definitions would clash.
struct LibraryName {
  enum class Space { C, JS, File }; // C: symbols and macros of the C sources; File: file names
  Space space;
  std::string name;
  std::string what; // "the public function", "the variant file", ... (for messages)
};

// Every C symbol, macro and static of the dispatch source, ES-module export and file that
// kernel `k` (one type binding, with its instances) adds to library `lib` when generated for
// `targets`: the public function and its _query and _desc twins, the dispatch source's tables
// and macros, and per instance x target x shape class the variant function (and _desc on GPU
// targets) and file. Driver::load puts every kernel's names into one table, so that a
// collision is a located error whatever the naming scheme would allow.
std::vector<LibraryName> library_names(const std::string& lib, const ir::Kernel& k,
                                       const std::vector<passes::Instance>& instances,
                                       const std::vector<const Target*>& targets);

// The tg_/TG_ names the runtime's public headers declare (read from runtime/include/tilegen/
// when tilegen is configured, generator/dispatch/CMakeLists.txt writes the definition): a
// library's public names must not be one of them.
const std::vector<std::string>& runtime_names();

// The names the ES module (<lib>.js) declares at its top level besides each kernel's export and
// VARIANTS_ table (JsModuleEmitter's helpers and constants): a public name must not be one
// (library COPY with kernel DST would define COPY_DST twice). ReservedNamesTest compares this
// list with a generated module.
const std::vector<std::string>& js_module_names();

// True if `name` can be a library name: a C identifier of at most 64 characters beginning with
// a letter, without "__" (which separates the parts of variant names), not ending in '_', not
// "tg" (the runtime's prefix) nor "tgv_..." (variant functions) nor "tilegen..." (the
// runtime's macros), in any letter case, nor a file name Windows reserves (CON, NUL, COM1, ...),
// and whose header guard <LIB>_H is no header's macro.
bool is_valid_library_name(const std::string& name);

// The C type of an element of dtype `t` in the public API (float, tg_bf16, int8_t, ...).
const char* c_type_name(ir::DType t);

} // namespace tilegen::dispatch
