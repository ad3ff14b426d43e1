// Driver::check_library_names: one table of every name a library defines (dispatch/Naming's
// library_names, for every kernel and every target), so that no two kernels of a library,
// whatever their specs, produce the same symbol or file, and no file name is too long for a
// file system. The spelling rules of spec names (support/ReservedNames.h) make the generated
// names injective by construction where "__" separates their parts; this table is the check
// that holds where a scheme alone does not: the public names <lib>_<kernel>_<types> (kernel
// `a` with types f32 and kernel `a_f32` without types), the _query and _desc twins, the
// dispatch source's tables and macros (upper case: kernels `a` and `A`), shape classes whose
// names end like a _desc twin, file names that differ only in letter case.
#include "tools/Driver.h"

#include "dispatch/JsModuleEmitter.h"
#include "dispatch/Naming.h"
#include "support/ReservedNames.h"

#include <cctype>
#include <map>
#include <set>

namespace tilegen::tools {

namespace {

// File systems of macOS and Windows ignore letter case: "a.c" and "A.c" are one file there.
std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The longest file name POSIX file systems take (NAME_MAX on Linux and macOS).
constexpr size_t kMaxFileName = 255;

struct Definition {
  const ir::Kernel* kernel; // nullptr: the library itself
  std::string name;         // as spelled (the key of a file may be lower-cased)
  std::string what;
};

// Type bindings of one spec's kernel are separate ir::Kernels of one name and location.
bool same_kernel(const ir::Kernel* a, const ir::Kernel* b) {
  return a == b || (a && b && a->name == b->name && a->loc.str() == b->loc.str());
}

std::string space_key(dispatch::LibraryName::Space s, const std::string& name) {
  switch (s) {
  case dispatch::LibraryName::Space::C: return "c " + name;
  case dispatch::LibraryName::Space::JS: return "js " + name;
  case dispatch::LibraryName::Space::File: return "file " + lower(name);
  }
  return name;
}

} // namespace

void Driver::check_library_names(const std::vector<LoadedSpec>& loaded, const std::string& lib) {
  using Space = dispatch::LibraryName::Space;
  // Without --lib (check, dump, kernels) the names are checked with a stand-in library name;
  // collisions do not depend on it, file name lengths are then measured without it.
  const std::string lib_name = lib.empty() ? "lib" : lib;
  std::vector<const Target*> targets;
  for (const auto& t : all_targets())
    targets.push_back(&t);

  std::map<std::string, Definition> table;
  std::set<std::pair<std::string, std::string>> reported; // one error per pair of kernels
  auto define = [&](Space space, const std::string& name, const std::string& what,
                    const ir::Kernel* k) {
    auto [it, fresh] = table.emplace(space_key(space, name), Definition{k, name, what});
    if (fresh || !k)
      return;
    const Definition& first = it->second;
    const std::string other = first.kernel ? first.kernel->name : std::string();
    if (!reported.insert({k->name + "@" + k->loc.str(), other}).second)
      return;
    const bool same = same_kernel(first.kernel, k);
    const std::string fix = same ? "rename the kernel or its shape classes"
                            : first.kernel ? "rename one of the kernels"
                                           : "rename the kernel or the library";
    if (first.name != name) { // file names equal but for letter case
      diag_.error(k->loc, "kernel '" + k->name + "' would write '" + name + "' (" + what + ")" +
                              (same ? " and '" : ", and " + (first.kernel ? "kernel '" + other + "'"
                                                                          : std::string("the library")) +
                                                     " '") +
                              first.name + "' (" + first.what +
                              "): file names that differ only in letter case are one file on "
                              "macOS and Windows; " + fix);
    } else if (same) {
      diag_.error(k->loc, "kernel '" + k->name + "' would define '" + name + "' twice, as " +
                              first.what + " and as " + what + ": " + fix);
    } else if (!first.kernel) {
      diag_.error(k->loc, "kernel '" + k->name + "' would define '" + name + "' (" + what +
                              "), which is already " + first.what + " (library '" + lib_name +
                              "'): " + fix);
    } else {
      diag_.error(k->loc, "kernel '" + k->name + "' would define '" + name + "' (" + what +
                              "), which kernel '" + other + "' defines too (" + first.what +
                              "): the names of one library must be unique; " + fix);
    }
    if (first.kernel && !same)
      diag_.note(first.kernel->loc, "kernel '" + other + "' is declared here");
  };

  // The library's own files and the header's include guard.
  define(Space::File, dispatch::header_file_name(lib_name), "the library's header", nullptr);
  define(Space::File, dispatch::dispatch_file_name(lib_name), "the library's dispatch source",
         nullptr);
  define(Space::File, dispatch::js_module_file_name(lib_name), "the library's ES module",
         nullptr);
  define(Space::File, dispatch::js_types_file_name(lib_name), "the ES module's types",
         nullptr);
  define(Space::File, dispatch::wgsl_manifest_file_name(lib_name), "the library's WGSL manifest",
         nullptr);
  if (!lib.empty())
    define(Space::C, dispatch::header_guard(lib), "the include guard of the library's header",
           nullptr);
  for (const std::string& n : dispatch::runtime_names())
    define(Space::C, n, "a name the tilegen runtime's headers declare", nullptr);
  // Public names are <lib>_<kernel>...: a library fputc with a kernel unlocked would declare
  // stdio.h's fputc_unlocked again in the dispatch source.
  for (const auto& list : reserved_lists())
    for (const std::string& w : list.words)
      define(Space::C, w, "a reserved name (" + list.reason + ")", nullptr);
  for (const std::string& n : dispatch::js_module_names())
    define(Space::JS, n, "a name the ES module declares", nullptr);

  // One instance per kernel stands for all: within a kernel, instance names differ only in the
  // digits of flag and value-param values and contain no "__", and the "__"-separated parts of
  // a variant name split one way, so two variants collide only through their kernel, target or
  // shape class, which the first instance shows. (A table of every instance would hold instances
  // x targets x classes names: millions for large value sets.) File-name length, which does
  // depend on the instance, is checked for the longest instance name.
  for (const auto& s : loaded)
    for (const auto& lk : s.kernels) {
      if (lk.instances.empty())
        continue;
      for (const auto& n : dispatch::library_names(lib_name, lk.kernel, {lk.instances.front()},
                                                   targets))
        define(n.space, n.name, n.what, &lk.kernel);
      const passes::Instance* longest = &lk.instances.front();
      for (const auto& inst : lk.instances)
        if (dispatch::instance_label(inst).size() > dispatch::instance_label(*longest).size())
          longest = &inst;
      for (const auto& n : dispatch::library_names(lib_name, lk.kernel, {*longest}, targets)) {
        const size_t length = n.name.size() - (lib.empty() ? lib_name.size() : 0);
        if (n.space != Space::File || length <= kMaxFileName)
          continue;
        diag_.error(lk.kernel.loc,
                    "kernel '" + lk.kernel.name + "' would write the variant file '" +
                        n.name.substr(0, 60) + "...', " + std::to_string(length) + " bytes long" +
                        (lib.empty() ? " without the library name" : "") +
                        ": file names have at most " + std::to_string(kMaxFileName) +
                        " bytes; shorten the names of the kernel, its flags, value params and "
                        "shape classes (they make up the instance and variant names)");
        break;
      }
    }

  // Tensors, params, scalars and flags are parameters of the dispatch source's functions and
  // of the header's prototypes: a file-scope name of those sources would be shadowed there (a
  // table the function reads) or replaced (a macro).
  for (const auto& s : loaded)
    for (const auto& lk : s.kernels) {
      const ir::Kernel& k = lk.kernel;
      auto check = [&](const std::string& name, const SourceLoc& loc, const char* what) {
        auto it = table.find(space_key(Space::C, name));
        if (it == table.end())
          return;
        const Definition& d = it->second;
        diag_.error(loc, "'" + name + "' cannot name a " + what + " in library '" + lib_name +
                             "': it is " + d.what +
                             (d.kernel ? " of kernel '" + d.kernel->name + "'" : "") +
                             ", and a " + what +
                             " is a parameter of the library's C functions; rename it");
        if (d.kernel && !same_kernel(d.kernel, &k))
          diag_.note(d.kernel->loc, "kernel '" + d.kernel->name + "' is declared here");
      };
      for (const auto& t : k.tensors)
        check(t->name, t->loc, "tensor");
      for (const auto& d : k.dims)
        check(d.var->name, d.var->loc, "param");
      for (const auto& v : k.scalars)
        check(v->name, v->loc, "scalar");
      for (const auto& v : k.flags)
        check(v->name, v->loc, "flag");
    }
}

} // namespace tilegen::tools
