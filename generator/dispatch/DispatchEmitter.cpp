// Prints <lib>.h and <lib>_dispatch.c. Layout of the dispatch file, per kernel x type binding:
//   prototypes of its variants; the instance keys; the variant table; with GPU rows and
//   schedule.classes, the class descriptions and a class function (the first class predicate
//   that holds over the call's dims, else large); a check function that validates every
//   argument (never touching tensor memory) and finds the instance; the public function
//   (check, class, select with a per-instance [x class] cache, call); the _query twin (check,
//   select, explain). Names local to generated functions start with tg_ so that they cannot clash with
//   spec names (the driver rejects spec names starting with tg_).
#include "dispatch/DispatchEmitter.h"
#include "support/Strings.h"

#include "dispatch/DispatchExpr.h"
#include "dispatch/Naming.h"
#include "passes/TileRecommend.h"
#include "support/InternalError.h"
#include "support/TextEscape.h"

#include <algorithm>
#include <sstream>

namespace tilegen::dispatch {

namespace {

std::string upper(std::string s) {
  for (char& c : s)
    if (c >= 'a' && c <= 'z')
      c = static_cast<char>(c - 'a' + 'A');
  return s;
}

// The targets the C library is made of: WGSL variants are not C-callable (the WGSL helper of
// add_tile_kernels turns them into a JavaScript module), so they get no rows here.
std::vector<const Target*> c_library_targets(const Library& lib) {
  std::vector<const Target*> out;
  for (const Target* t : lib.targets)
    if (t->backend != Backend::WGSL)
      out.push_back(t);
  return out;
}

bool has_rows_of(const Library& lib, Backend b) {
  for (const Target* t : c_library_targets(lib)) {
    TG_ASSERT(t->backend == Backend::C || t->backend == Backend::CUDA || t->backend == Backend::HIP ||
                  t->backend == Backend::Metal,
              std::string("dispatch of ") + backend_name(t->backend) +
                  " variants is not implemented (target " + t->name + ")");
    if (t->backend == b)
      return true;
  }
  return false;
}

// CUDA rows (the CUDA runtime, _desc twins).
bool has_gpu_rows(const Library& lib) { return has_rows_of(lib, Backend::CUDA); }
// HIP rows (the HIP runtime layer, docs/hip.md).
bool has_hip_rows(const Library& lib) { return has_rows_of(lib, Backend::HIP); }
// C rows of one CPU architecture (Target::cpu_arch): compiled only under their guard, so the
// tables' sizes come from sizeof (the rows of the architecture being compiled).
bool has_arch_rows(const Library& lib) {
  for (const Target* t : c_library_targets(lib))
    if (!t->cpu_arch.empty())
      return true;
  return false;
}
// The #if/#endif lines around consecutive rows of one CPU architecture: enter(t) before the
// lines of target t, close() after the last.
struct ArchGuard {
  std::string open; // the cpu_arch whose #if is open ("" = none)
  std::string enter(const Target& t) {
    if (t.cpu_arch == open)
      return "";
    std::string out = close();
    if (!t.cpu_arch.empty())
      out += "#if " + cpu_arch_guard(t.cpu_arch) + "\n";
    open = t.cpu_arch;
    return out;
  }
  std::string close() {
    std::string out = open.empty() ? "" : "#endif\n";
    open.clear();
    return out;
  }
};
// Metal rows (docs/metal.md): selected like GPU rows, by the device's Apple GPU family (x 10,
// in the rows' `cc`) from tg_metal_device_family; their variant functions are the launchers of
// <lib>_metal.c, called directly. No shape classes, no _desc twin (that is CUDA's).
bool has_metal_rows(const Library& lib) { return has_rows_of(lib, Backend::Metal); }

// ---- the argument list of one public function ---------------------------------------------

struct Arg {
  std::string decl; // "const float* A"
  std::string name; // "A"
};

std::vector<Arg> public_args(const ir::Kernel& k) {
  std::vector<Arg> args;
  args.push_back({"const tg_launch* launch", "launch"});
  for (const auto& t : k.tensors) {
    std::string cty = c_type_name(t->dtype);
    bool ro = t->access == ir::Access::Read;
    args.push_back({(ro ? "const " : "") + cty + "* " + t->name, t->name});
  }
  for (const auto& d : k.dims)
    args.push_back({"int64_t " + d.var->name, d.var->name});
  for (const auto& s : k.scalars)
    args.push_back({std::string(s->type.is_bool() ? "int" : c_type_name(s->type)) + " " +
                        s->name,
                    s->name});
  for (const auto& f : k.flags)
    args.push_back({"int " + f->name, f->name});
  return args;
}

std::string decl_list(const std::vector<Arg>& args, const std::string& extra, size_t indent) {
  std::vector<std::string> parts;
  for (const auto& a : args)
    parts.push_back(a.decl);
  if (!extra.empty())
    parts.push_back(extra);
  return join(parts, ",\n" + std::string(indent, ' '));
}

std::string name_list(const std::vector<Arg>& args) {
  std::vector<std::string> parts;
  for (const auto& a : args)
    parts.push_back(a.name);
  return join(parts, ", ");
}

// "path:line" of the kernel, for the inside of a C comment.
std::string spec_where(const KernelEntry& e) {
  std::string s = e.spec_path;
  if (e.kernel->loc.line > 0)
    s += ":" + std::to_string(e.kernel->loc.line);
  return c_block_comment(s);
}

// "M, N >= 0; D in {64, 128}; K: multiple of 8, 16 <= K <= 4096"
std::string dim_doc(const ir::Kernel& k) {
  std::vector<std::string> free, constrained;
  for (const auto& d : k.dims) {
    const std::string& n = d.var->name;
    if (!d.values.empty()) {
      std::vector<std::string> vals;
      for (int64_t v : d.values)
        vals.push_back(std::to_string(v));
      constrained.push_back(n + " in {" + join(vals, ", ") + "}");
    } else if (d.multiple_of || d.min || d.max) {
      std::vector<std::string> c;
      if (d.min || d.max)
        c.push_back(std::to_string(d.min.value_or(0)) + " <= " + n +
                    (d.max ? " <= " + std::to_string(*d.max) : ""));
      if (d.multiple_of)
        c.push_back("multiple of " + std::to_string(*d.multiple_of));
      constrained.push_back(n + ": " + join(c, ", "));
    } else {
      free.push_back(n);
    }
  }
  std::vector<std::string> parts;
  if (!free.empty())
    parts.push_back(join(free, ", ") + " >= 0");
  for (auto& c : constrained)
    parts.push_back(c);
  return join(parts, "; ");
}

void emit_doc(std::ostream& os, const std::string& lib, const KernelEntry& e, bool gpu) {
  const ir::Kernel& k = *e.kernel;
  std::string types = k.type_suffix();
  os << "/* " << k.name << (types.empty() ? "" : " (" + types + ")") << ": "
     << c_block_comment(k.summary) << "\n";
  for (const auto& t : k.tensors) {
    std::vector<std::string> dims;
    for (const auto& s : t->shape)
      dims.push_back(spec_expr(s));
    if (ir::packed_per_byte(t->packed) == 2) // the shape counts bytes: say it in elements
      os << " *   " << t->name << ": " << ir::packed_name(t->packed) << " [" << join(dims, ", ")
         << "] bytes, two elements each (low nibble first), " << ir::access_name(t->access)
         << "\n";
    else if (t->packed != ir::Packed::None)
      os << " *   " << t->name << ": " << ir::packed_name(t->packed) << " [" << join(dims, ", ")
         << "] (one byte each), " << ir::access_name(t->access) << "\n";
    else
      os << " *   " << t->name << ": " << t->dtype.name() << " [" << join(dims, ", ") << "], "
         << ir::access_name(t->access) << "\n";
  }
  if (!k.dims.empty())
    os << " *   dims: " << dim_doc(k) << "\n";
  for (const auto& s : k.scalars)
    os << " *   " << s->name << ": " << s->type.name() << " scalar\n";
  for (const auto& f : k.flags)
    os << " *   " << f->name << ": flag, 0 or 1\n";
  os << " * Spec: " << spec_where(e) << ". Returns TG_OK or an error status (tg_status_string);\n"
     << " * a NULL launch means defaults. " << public_function_name(lib, k)
     << "_query reports the variant a call would run.";
  if (gpu)
    os << "\n * " << public_function_name(lib, k)
       << "_desc describes the GPU launch a call would perform, without launching.";
  os << " */\n";
}

// ---- the dispatch file, one kernel x type binding ------------------------------------------

struct Names {
  std::string pub;    // mylib_gemm_f32
  std::string prefix; // gemm_f32: prefix of this entry's file-scope names
  // The shape classes the GPU rows are keyed by (schedule.classes, then "large"): empty for a
  // kernel without classes or a library without GPU rows (one row per instance x target).
  std::vector<std::string> classes;
  // The device probe of a library with GPU rows (tilegen/dispatch.h tg_device_cc_fn):
  // tg_cuda_device_cc, tg_metal_device_family; empty for a CPU-only library.
  std::string probe;
};

// The class whose variant shape class `c` of instance `i` runs on GPU target `t`.
std::string serving_class(const KernelEntry& e, const Names& n, size_t i, const Target& t,
                          size_t c) {
  auto it = e.class_variants.find({i, t.name});
  if (it == e.class_variants.end())
    return passes::kLargeClass;
  TG_ASSERT(it->second.size() == n.classes.size(),
            "class plan of " + t.name + " has " + std::to_string(it->second.size()) +
                " entries for " + std::to_string(n.classes.size()) + " classes");
  return it->second[c];
}

// The variant functions of instance `i` on target `t`, each once: the class names they are
// named after ("large" = the plain name).
std::vector<std::string> variant_classes(const KernelEntry& e, const Names& n, size_t i,
                                         const Target& t) {
  std::vector<std::string> out{passes::kLargeClass};
  if (!t.is_gpu() || n.classes.empty())
    return out;
  out.clear();
  for (size_t c = 0; c < n.classes.size(); ++c) {
    std::string s = serving_class(e, n, i, t, c);
    if (std::find(out.begin(), out.end(), s) == out.end())
      out.push_back(s);
  }
  return out;
}

// "class small_m (M <= 64)", "class large (not M <= 64)": the class of a call, for _query
// (predicates as written, whitespace folded; the caller escapes the result).
std::string class_description(const ir::Kernel& k, size_t c) {
  if (c < k.shape_classes.size())
    return "class " + k.shape_classes[c].first + " (" +
           fold_whitespace(k.shape_classes[c].second.text) + ")";
  std::vector<std::string> preds;
  for (const auto& [name, req] : k.shape_classes)
    preds.push_back(fold_whitespace(req.text));
  return std::string("class large (") + (preds.size() == 1 ? "not " : "none of ") +
         join(preds, ", ") + ")";
}

// The function that computes a call's shape class: the first predicate that holds, else
// "large". Its parameters are every dim and flag (value params hold the instance's value,
// checked before this runs).
void emit_class_function(std::ostream& os, const KernelEntry& e, const Names& n) {
  const ir::Kernel& k = *e.kernel;
  std::vector<std::string> params;
  for (const auto& d : k.dims)
    params.push_back("int64_t " + d.var->name);
  for (const auto& f : k.flags)
    params.push_back("int " + f->name);
  os << "/* Shape class of a call (schedule.classes, " << c_block_comment(e.spec_path)
     << "): the first class whose predicate\n"
     << " * holds, else large; the shape_class of the GPU rows it runs. Overflow in a "
        "predicate's\n * arithmetic means the class does not hold. */\n";
  os << "static int " << n.prefix << "_class(" << (params.empty() ? "void" : join(params, ", "))
     << ") {\n";
  for (const auto& d : k.dims)
    os << "  (void)" << d.var->name << ";\n";
  for (const auto& f : k.flags)
    os << "  (void)" << f->name << ";\n";
  for (size_t c = 0; c < k.shape_classes.size(); ++c) {
    const auto& [name, req] = k.shape_classes[c];
    os << "  { /* " << name << ": "
       << c_block_comment(fold_whitespace(req.text) + " (" + e.spec_path + ":" +
                          std::to_string(req.loc.line) + ")")
       << " */\n";
    os << "    int tg_ok = 1;\n";
    os << "    if (" << c_pred_expr(req.pred, "tg_ok") << " && tg_ok)\n      return " << c
       << ";\n  }\n";
  }
  os << "  return " << k.shape_classes.size() << "; /* large */\n}\n\n";
}

void emit_tables(std::ostream& os, const Library& lib, const KernelEntry& e, const Names& n) {
  const ir::Kernel& k = *e.kernel;
  os << "/* ---- " << n.pub << " (" << spec_where(e) << ") ---- */\n\n";
  std::vector<const Target*> targets = c_library_targets(lib);
  size_t rows = 0;
  ArchGuard guard;
  for (size_t i = 0; i < e.instances.size(); ++i)
    for (const Target* t : targets) {
      rows += t->is_gpu() && !n.classes.empty() ? n.classes.size() : 1;
      os << guard.enter(*t);
      for (const std::string& cls : variant_classes(e, n, i, *t)) {
        std::string fn = variant_function_name(lib.name, k, e.instances[i], *t, cls);
        os << "int " << fn << "(const tg_launch* launch, const tg_variant_args* args);\n";
        if (t->backend == Backend::CUDA)
          os << "int " << fn << "_desc(const tg_launch* launch, const tg_variant_args* args,\n"
             << std::string(fn.size() + 10, ' ') << "tg_gpu_launch_desc* out);\n";
      }
    }
  os << guard.close() << "\n";
  const bool arch_rows = has_arch_rows(lib);

  size_t nkey = e.instances.empty() ? 0 : instance_key(k, e.instances[0]).size();
  std::string P = upper(n.prefix);
  os << "#define " << P << "_N_INSTANCES " << e.instances.size() << "\n";
  os << "#define " << P << "_N_KEYS " << nkey << "\n";
  if (!arch_rows)
    os << "#define " << P << "_N_VARIANTS " << rows << "\n";
  if (!n.classes.empty())
    os << "#define " << P << "_N_CLASSES " << n.classes.size() << "\n";
  os << "static const char* const " << n.prefix << "_instances[" << P << "_N_INSTANCES] = {";
  for (size_t i = 0; i < e.instances.size(); ++i)
    os << (i ? ", " : "") << "\"" << instance_label(e.instances[i]) << "\"";
  os << "};\n";
  if (nkey > 0) {
    std::vector<std::string> key_names;
    for (const auto& f : k.flags)
      key_names.push_back(f->name);
    for (const auto& d : k.dims)
      if (!d.values.empty())
        key_names.push_back(d.var->name);
    os << "/* Specialization key of each instance: (" << join(key_names, ", ") << "). */\n";
    os << "static const int64_t " << n.prefix << "_keys[" << P << "_N_INSTANCES * " << P
       << "_N_KEYS] = {\n";
    for (const auto& inst : e.instances) {
      std::vector<std::string> vals;
      for (int64_t v : instance_key(k, inst))
        vals.push_back(std::to_string(v));
      os << "    " << join(vals, ", ") << ", /* " << instance_label(inst) << " */\n";
    }
    os << "};\n";
  }
  if (!n.classes.empty()) {
    os << "/* The shape classes GPU rows are keyed by (" << n.prefix << "_class), for _query. */\n";
    os << "static const char* const " << n.prefix << "_class_why[" << P << "_N_CLASSES] = {\n";
    for (size_t c = 0; c < n.classes.size(); ++c)
      os << "    \"" << c_string_body(class_description(k, c)) << "\",\n";
    os << "};\n";
  }
  os << "/* instance, instance name, target, symbol, backend, arch, preference, features, fn,\n"
     << " * cc, arch_specific, desc, shape class (GPU rows; classes that chose the same tiles\n"
     << " * share a variant) */\n";
  if (arch_rows)
    os << "/* Rows of one CPU architecture are compiled only there: " << P
       << "_N_VARIANTS counts those present. */\n";
  os << "static const tg_variant_entry " << n.prefix << "_variants["
     << (arch_rows ? "" : P + "_N_VARIANTS") << "] = {\n";
  for (size_t i = 0; i < e.instances.size(); ++i)
    for (const Target* t : targets) {
      size_t n_rows = t->is_gpu() && !n.classes.empty() ? n.classes.size() : 1;
      os << guard.enter(*t);
      for (size_t c = 0; c < n_rows; ++c) {
        std::string cls = t->is_gpu() && !n.classes.empty() ? serving_class(e, n, i, *t, c)
                                                            : passes::kLargeClass;
        std::string fn = variant_function_name(lib.name, k, e.instances[i], *t, cls);
        os << "    {" << i << ", \"" << instance_label(e.instances[i]) << "\", \"" << t->name
           << "\", \"" << fn << "\", ";
        if (t->backend == Backend::HIP)
          os << "TG_BACKEND_HIP, \""
             << (t->hip.offload_arch.empty() ? t->name : t->hip.offload_arch) << "\", "
             << t->preference << ", tg_features_" << t->name << ", " << fn << ", 0, 0, NULL, "
             << c << "},";
        else if (t->is_gpu())
          os << "TG_BACKEND_CUDA, \"" << t->name << "\", " << t->preference << ", tg_features_"
             << t->name << ", " << fn << ", " << t->gpu.cc << ", "
             << (t->gpu.arch_specific ? 1 : 0) << ", " << fn << "_desc, " << c << "},";
        else if (t->backend == Backend::Metal)
          os << "TG_BACKEND_METAL, \"" << t->name << "\", " << t->preference << ", tg_features_"
             << t->name << ", " << fn << ", " << 10 * t->metal.gpu_family << ", 0, NULL, 0},";
        else
          os << "TG_BACKEND_CPU, \"\", " << t->preference << ", tg_features_" << t->name
             << ", " << fn << ", 0, 0, NULL, 0},";
        if (!n.classes.empty() && t->is_gpu())
          os << " /* " << n.classes[c] << " */";
        os << "\n";
      }
    }
  os << guard.close() << "};\n";
  if (arch_rows)
    os << "#define " << P << "_N_VARIANTS (sizeof " << n.prefix << "_variants / sizeof "
       << n.prefix << "_variants[0])\n";
  os << "static tg_select_cache " << n.prefix << "_cache[" << P << "_N_INSTANCES"
     << (n.classes.empty() ? "" : " * " + P + "_N_CLASSES") << "];\n\n";
  if (!n.classes.empty())
    emit_class_function(os, e, n);
}

void emit_check(std::ostream& os, const KernelEntry& e, const Names& n,
                const std::vector<Arg>& args) {
  const ir::Kernel& k = *e.kernel;
  std::string P = upper(n.prefix);
  std::string head = "static tg_status " + n.prefix + "_check(";
  os << "/* Validates the arguments of " << n.pub << " and finds the instance they select.\n"
     << " * Reads no tensor memory. On failure writes why into tg_why (if not NULL). *tg_idle = 1\n"
     << " * when no tensor the kernel writes has an element: the call has nothing to do. */\n";
  os << head << decl_list(args, "int* tg_instance, int* tg_idle, char* tg_why, size_t tg_why_size",
                          head.size())
     << ") {\n";
  os << "  tg_status tg_s;\n";
  os << "  *tg_idle = 1;\n";
  for (const auto& sc : k.scalars) // only a scalar's `require` limits its values
    os << "  (void)" << sc->name << ";\n";
  auto check = [&](const std::string& call) {
    os << "  if ((tg_s = " << call << ") != TG_OK)\n    return tg_s;\n";
  };
  check("tg_check_launch(launch, tg_why, tg_why_size)");
  for (const auto& f : k.flags)
    check("tg_check_flag(\"" + f->name + "\", " + f->name + ", tg_why, tg_why_size)");
  for (const auto& d : k.dims) {
    const std::string& nm = d.var->name;
    if (!d.values.empty()) {
      std::vector<std::string> vals;
      for (int64_t v : d.values)
        vals.push_back("INT64_C(" + std::to_string(v) + ")");
      os << "  {\n    static const int64_t tg_values[" << d.values.size() << "] = {"
         << join(vals, ", ") << "};\n";
      os << "    if ((tg_s = tg_check_value_dim(\"" << nm << "\", " << nm << ", tg_values, "
         << d.values.size() << ", tg_why, tg_why_size)) != TG_OK)\n      return tg_s;\n  }\n";
    } else {
      std::string min = d.min ? "INT64_C(" + std::to_string(*d.min) + ")" : "0";
      std::string max = d.max ? "INT64_C(" + std::to_string(*d.max) + ")" : "TG_NO_MAX";
      std::string mult = d.multiple_of ? "INT64_C(" + std::to_string(*d.multiple_of) + ")" : "1";
      check("tg_check_dim(\"" + nm + "\", " + nm + ", " + min + ", " + max + ", " + mult +
            ", tg_why, tg_why_size)");
    }
  }
  // The scalars' `require` predicates: the kernel bodies may rely on them.
  for (const auto& r : k.scalar_requirements) {
    std::string fmt, vals;
    size_t n = 0;
    for (const ir::Var* v : require_scalars(r.pred)) {
      fmt += v->name + " = %g, ";
      vals += ", " + c_scalar_as_double(*v);
      ++n;
    }
    fmt += "but the kernel requires ";
    std::string where = e.spec_path + (r.loc.line > 0 ? ":" + std::to_string(r.loc.line) : "");
    std::string rule = visible_text(fold_whitespace(r.text) + " (" + where + ")");
    // The whole sentence fits tg_selection.reason (256 bytes) whatever the values (%g prints at
    // most 13 characters), or gcc's -Wformat-truncation (in -Wall) rejects the call at -O2: a
    // long rule or spec path is cut, ending in "...".
    const size_t budget = 255 - std::min<size_t>(255, fmt.size() + n * 11);
    if (rule.size() > budget) {
      size_t cut = budget < 3 ? 0 : budget - 3;
      while (cut > 0 && (static_cast<unsigned char>(rule[cut]) & 0xc0) == 0x80)
        --cut; // not inside a UTF-8 sequence
      rule = rule.substr(0, cut) + "...";
    }
    for (char ch : rule) // a printf format: % doubled
      fmt += ch == '%' ? std::string("%%") : std::string(1, ch);
    os << "  {\n    int tg_ok = 1;\n    if (!" << c_require_expr(r.pred, "tg_ok") << " || !tg_ok) {\n"
       << "      if (tg_why && tg_why_size)\n        snprintf(tg_why, tg_why_size, \""
       << c_string_body(fmt) << "\"" << vals
       << ");\n      return TG_ERR_INVALID_ARGUMENT;\n    }\n  }\n";
  }
  for (const auto& t : k.tensors) {
    os << "  {\n    int tg_ok = 1;\n";
    std::string shape = "NULL";
    if (t->rank() > 0) {
      std::vector<std::string> ext;
      for (const auto& s : t->shape)
        ext.push_back(c_shape_expr(s, "tg_ok"));
      os << "    const int64_t tg_shape[" << t->rank() << "] = {" << join(ext, ", ") << "};\n";
      shape = "tg_shape";
    }
    os << "    if ((tg_s = tg_check_tensor(\"" << t->name << "\", " << t->name << ", " << shape
       << ", " << t->rank() << ", tg_ok, sizeof(" << c_type_name(t->dtype)
       << "), tg_why, tg_why_size)) != TG_OK)\n      return tg_s;\n";
    if (t->access != ir::Access::Read) { // written: does it have an element?
      std::vector<std::string> nonzero;
      for (size_t d = 0; d < t->rank(); ++d)
        nonzero.push_back("tg_shape[" + std::to_string(d) + "] != 0");
      if (nonzero.empty())
        os << "    *tg_idle = 0; /* " << t->name << " is written */\n";
      else
        os << "    if (" << join(nonzero, " && ") << ") /* " << t->name << " is written */\n"
           << "      *tg_idle = 0;\n";
    }
    os << "  }\n";
  }
  size_t nkey = e.instances.empty() ? 0 : instance_key(k, e.instances[0]).size();
  if (nkey == 0) {
    os << "  *tg_instance = 0;\n";
  } else {
    std::vector<std::string> key;
    for (const auto& f : k.flags)
      key.push_back("(int64_t)" + f->name);
    for (const auto& d : k.dims)
      if (!d.values.empty())
        key.push_back(d.var->name);
    os << "  const int64_t tg_key[" << P << "_N_KEYS] = {" << join(key, ", ") << "};\n";
    os << "  *tg_instance = tg_find_instance(" << n.prefix << "_keys, " << P << "_N_INSTANCES, "
       << P << "_N_KEYS, tg_key);\n";
    os << "  if (*tg_instance < 0) { /* every combination of checked values is generated */\n"
       << "    if (tg_why && tg_why_size)\n"
       << "      snprintf(tg_why, tg_why_size, \"internal error: no instance for these flag and "
          "dim values\");\n"
       << "    return TG_ERR_INTERNAL;\n  }\n";
  }
  os << "  return TG_OK;\n}\n\n";
}

void emit_entry_points(std::ostream& os, const KernelEntry& e, const Names& n,
                       const std::vector<Arg>& args, bool gpu, bool hip) {
  const ir::Kernel& k = *e.kernel;
  std::string P = upper(n.prefix);
  std::string call_args = name_list(args);

  // The public function.
  std::string head = "tg_status " + n.pub + "(";
  os << head << decl_list(args, "", head.size()) << ") {\n";
  os << "  int tg_instance = -1, tg_idle = 0;\n";
  os << "  tg_status tg_s = " << n.prefix << "_check(" << call_args
     << ", &tg_instance, &tg_idle, NULL, 0);\n";
  os << "  if (tg_s != TG_OK)\n    return tg_s;\n";
  // Libraries with GPU rows select per device (tg_cuda_device_cc: probed once per device);
  // CPU-only ones never reference the CUDA runtime, so they do not link it.
  std::vector<std::string> class_args; // the dims and flags, for <prefix>_class
  for (const auto& d : k.dims)
    class_args.push_back(d.var->name);
  for (const auto& f : k.flags)
    class_args.push_back(f->name);
  std::string class_line = "  int tg_class = " + n.prefix + "_class(" + join(class_args, ", ") +
                           ");\n";
  // Libraries with HIP rows: tg_select_cached_hip (CUDA rows first, then HIP, then CPU).
  const std::string cc_fn = gpu ? "tg_cuda_device_cc" : "NULL";
  std::string select =
      hip ? (n.classes.empty() ? std::string() : class_line) + "  int tg_v = tg_select_cached_hip(" +
                n.prefix + "_variants, " + P + "_N_VARIANTS, tg_instance, " +
                (n.classes.empty() ? "0, 1" : "tg_class, " + P + "_N_CLASSES") + ", launch, " +
                n.prefix + "_cache, " + cc_fn + ", tg_hip_device_arch);\n"
      : !n.classes.empty()
          ? class_line + "  int tg_v = tg_select_cached_class(" + n.prefix + "_variants, " + P +
                "_N_VARIANTS, tg_instance, tg_class, " + P + "_N_CLASSES, launch, " + n.prefix +
                "_cache, tg_cuda_device_cc);\n"
      : !n.probe.empty() ? "  int tg_v = tg_select_cached_gpu(" + n.prefix + "_variants, " + P +
                  "_N_VARIANTS, tg_instance, launch, " + n.prefix + "_cache, " + n.probe + ");\n"
            : "  int tg_v = tg_select_cached(" + n.prefix + "_variants, " + P +
                  "_N_VARIANTS, tg_instance, launch, " + n.prefix + "_cache);\n";
  os << select;
  os << "  if (tg_v < 0)\n    return TG_ERR_NO_VARIANT;\n";
  // Nothing observable can happen when no written tensor has an element, however large the
  // grid (softmax with M = INT64_MAX, N = 0 would walk cdiv(M, BM) empty blocks).
  os << "  if (tg_idle)\n    return TG_OK; /* no tensor it writes has an element: nothing to do */\n";
  std::ostringstream pack_os; // the packing of tg_args, shared with _desc
  auto array = [&](const std::string& type, const std::string& name, size_t count,
                   const std::vector<std::string>& vals) {
    if (count == 0)
      return std::string("NULL");
    pack_os << "  " << type << " " << name << "[" << count << "] = {" << join(vals, ", ") << "};\n";
    return name;
  };
  std::vector<std::string> tensors, dims, scalars, flags;
  for (const auto& t : k.tensors)
    tensors.push_back("(void*)" + t->name);
  for (const auto& d : k.dims)
    dims.push_back(d.var->name);
  for (const auto& s : k.scalars)
    scalars.push_back(c_scalar_as_double(*s));
  for (const auto& f : k.flags)
    flags.push_back(f->name);
  std::string a_t = array("void* const", "tg_tensors", tensors.size(), tensors);
  std::string a_d = array("const int64_t", "tg_dims", dims.size(), dims);
  std::string a_s = array("const double", "tg_scalars", scalars.size(), scalars);
  std::string a_f = array("const int", "tg_flags", flags.size(), flags);
  pack_os << "  const tg_variant_args tg_args = {" << a_t << ", " << a_d << ", " << a_s << ", " << a_f
     << "};\n";
  std::string pack = pack_os.str();
  os << pack;
  if (gpu)
    os << "  if (" << n.prefix << "_variants[tg_v].backend == TG_BACKEND_CUDA) /* on launch's device */\n"
       << "    return tg_cuda_run(&" << n.prefix << "_variants[tg_v], launch, &tg_args);\n";
  if (hip)
    os << "  if (" << n.prefix << "_variants[tg_v].backend == TG_BACKEND_HIP) /* on launch's device */\n"
       << "    return tg_hip_run(&" << n.prefix << "_variants[tg_v], launch, &tg_args);\n";
  os << "  return (tg_status)" << n.prefix << "_variants[tg_v].fn(launch, &tg_args);\n}\n\n";

  // The query twin.
  head = "tg_status " + n.pub + "_query(";
  os << head << decl_list(args, "tg_selection* out", head.size()) << ") {\n";
  os << "  if (!out)\n    return TG_ERR_INVALID_ARGUMENT;\n";
  os << "  out->variant = \"\";\n  out->target = \"\";\n  out->instance = \"\";\n"
     << "  out->reason[0] = '\\0';\n";
  os << "  int tg_instance = -1, tg_idle = 0;\n";
  os << "  out->status = " << n.prefix << "_check(" << call_args
     << ", &tg_instance, &tg_idle, out->reason, sizeof out->reason);\n";
  os << "  if (out->status != TG_OK)\n    return out->status;\n";
  os << "  out->instance = " << n.prefix << "_instances[tg_instance];\n";
  if (hip)
    os << (n.classes.empty() ? std::string() : class_line) << "  int tg_v = tg_select_variant_hip("
       << n.prefix << "_variants, " << P << "_N_VARIANTS, tg_instance, "
       << (n.classes.empty() ? "0, NULL" : "tg_class, " + n.prefix + "_class_why[tg_class]")
       << ", launch, tg_cpu_has, " << cc_fn << ", tg_hip_device_arch, out->reason, "
          "sizeof out->reason);\n";
  else if (!n.classes.empty())
    os << class_line << "  int tg_v = tg_select_variant_class(" << n.prefix << "_variants, " << P
       << "_N_VARIANTS, tg_instance, tg_class, " << n.prefix
       << "_class_why[tg_class], launch, tg_cpu_has, tg_cuda_device_cc, out->reason, "
          "sizeof out->reason);\n";
  else
    os << "  int tg_v = tg_select_variant" << (n.probe.empty() ? "" : "_gpu") << "(" << n.prefix
       << "_variants, " << P << "_N_VARIANTS, tg_instance, launch, tg_cpu_has, "
       << (n.probe.empty() ? "" : n.probe + ", ") << "out->reason, sizeof out->reason);\n";
  os << "  if (tg_v < 0)\n    return out->status = TG_ERR_NO_VARIANT;\n";
  os << "  out->variant = " << n.prefix << "_variants[tg_v].symbol;\n";
  os << "  out->target = " << n.prefix << "_variants[tg_v].target;\n";
  os << "  if (tg_idle)\n    tg_note_idle(out->reason, sizeof out->reason);\n";
  os << "  return TG_OK;\n}\n\n";

  if (!gpu)
    return;
  // The _desc twin: the same checks and selection, then the launch the GPU variant would
  // perform, described (for benchmarks against a raw cudaLaunchKernel, and CUDA graphs).
  head = "tg_status " + n.pub + "_desc(";
  os << head << decl_list(args, "tg_gpu_launch_desc* out", head.size()) << ") {\n";
  os << "  if (!out)\n    return TG_ERR_INVALID_ARGUMENT;\n";
  os << "  int tg_instance = -1, tg_idle = 0;\n";
  os << "  tg_status tg_s = " << n.prefix << "_check(" << call_args
     << ", &tg_instance, &tg_idle, NULL, 0);\n";
  os << "  if (tg_s != TG_OK)\n    return tg_s;\n";
  os << select;
  os << "  if (tg_v < 0 || " << n.prefix << "_variants[tg_v].backend != TG_BACKEND_CUDA)\n"
     << "    return TG_ERR_NO_VARIANT; /* no GPU here: " << n.pub << "_query says why */\n";
  os << "  if (tg_idle)\n    return TG_ERR_INVALID_ARGUMENT; /* nothing to launch */\n";
  os << pack;
  os << "  return tg_cuda_describe(&" << n.prefix << "_variants[tg_v], launch, &tg_args, out);\n"
     << "}\n\n";
}

} // namespace

std::vector<std::string> shape_class_names(const ir::Kernel& k) {
  std::vector<std::string> out;
  for (const auto& [name, req] : k.shape_classes)
    out.push_back(name);
  out.push_back(passes::kLargeClass);
  return out;
}

std::vector<int64_t> instance_key(const ir::Kernel& k, const passes::Instance& inst) {
  std::vector<int64_t> key;
  auto value = [&](const std::string& name) {
    auto it = inst.values.find(name);
    TG_ASSERT(it != inst.values.end(), "instance '" + inst.name + "' has no value for '" + name +
                                           "'");
    return it->second;
  };
  for (const auto& f : k.flags)
    key.push_back(value(f->name));
  for (const auto& d : k.dims)
    if (!d.values.empty())
      key.push_back(value(d.var->name));
  return key;
}

std::string emit_header(const Library& lib) {
  std::ostringstream os;
  std::string guard = upper(lib.name) + "_H";
  std::vector<std::string> specs, targets;
  for (const auto& e : lib.kernels)
    if (specs.empty() || specs.back() != e.spec_path)
      specs.push_back(e.spec_path);
  for (const Target* t : c_library_targets(lib))
    targets.push_back(t->name);
  bool gpu = has_gpu_rows(lib), hip = has_hip_rows(lib);
  os << generated_marker(lib.name) << "\n";
  os << "/* " << header_file_name(lib.name) << ": C API of the tile-kernel library '" << lib.name
     << "'.\n";
  os << " * Targets: " << join(targets, ", ") << ". Specs:\n";
  for (const auto& s : specs)
    os << " *   " << c_block_comment(s) << "\n";
  os
     << " * Each function validates its arguments, picks the best variant this machine can run\n"
     << " * and runs it. Tensors are row-major and contiguous; tg_f16/tg_bf16 are uint16_t bit\n"
     << " * patterns (tilegen/runtime.h). Thread-safe; nothing calls exit() or abort().";
  if (gpu)
    os << "\n * GPU library: launch->device >= 0 (a NULL or zeroed launch: device 0) runs a GPU\n"
       << " * variant on that device and launch->stream when the device can run one: tensors are\n"
       << " * then device pointers. With no driver, no such device or no variant for its compute\n"
       << " * capability, and with launch->device = -1, the CPU variant runs (host pointers);\n"
       << " * the _query function says which and why (docs/dispatch.md).";
  if (has_metal_rows(lib))
    os << "\n * Metal library: launch->device >= 0 (a NULL or zeroed launch: device 0) runs the\n"
       << " * Metal variant when the system GPU is Apple family 7 or later and the library was built\n"
       << " * with its metallib (macOS): tensors are then MTL::Buffer objects (element 0 at offset\n"
       << " * 0) and launch->stream is the MTL::CommandBuffer the call encodes into; it never\n"
       << " * commits or waits. Otherwise, and with launch->device = -1, the CPU variant runs\n"
       << " * (host pointers); the _query function says which and why (docs/metal.md).";
  if (hip)
    os << "\n * HIP variants: launch->device >= 0 runs one on that HIP device and launch->stream\n"
       << " * (a hipStream_t) when the HIP runtime (loaded at run time) finds the device and a\n"
       << " * variant for its arch; tensors are then device pointers. Otherwise the CPU variant\n"
       << " * runs, and the _query function says why (docs/hip.md).";
  os << " */\n";
  os << "#ifndef " << guard << "\n#define " << guard << "\n\n";
  os << "#include \"tilegen/" << (gpu ? "variant" : "runtime") << ".h\"\n\n#include <stdint.h>\n\n";
  os << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  for (const auto& e : lib.kernels) {
    std::vector<Arg> args = public_args(*e.kernel);
    std::string pub = public_function_name(lib.name, *e.kernel);
    emit_doc(os, lib.name, e, gpu);
    std::string head = "tg_status " + pub + "(";
    os << head << decl_list(args, "", head.size()) << ");\n";
    head = "tg_status " + pub + "_query(";
    os << head << decl_list(args, "tg_selection* out", head.size()) << ");\n";
    if (gpu) {
      head = "tg_status " + pub + "_desc(";
      os << head << decl_list(args, "tg_gpu_launch_desc* out", head.size()) << ");\n";
    }
    os << "\n";
  }
  os << "#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n#endif /* " << guard << " */\n";
  return os.str();
}

std::string emit_dispatch_source(const Library& lib) {
  std::ostringstream os;
  bool gpu = has_gpu_rows(lib), hip = has_hip_rows(lib);
  os << generated_marker(lib.name) << "\n";
  os << "/* " << dispatch_file_name(lib.name) << ": argument checks, variant tables and "
     << "selection for\n * " << header_file_name(lib.name)
     << ". Selection: among the variants of the instance the arguments select, the\n"
     << " * highest-preference one whose runtime features this machine has (docs/dispatch.md);\n"
     << " * the choice is cached per instance" << (gpu || hip ? " and device" : "") << ". */\n";
  os << "#include \"" << header_file_name(lib.name) << "\"\n\n";
  const bool metal = has_metal_rows(lib);
  os << "#include \"tilegen/" << (gpu ? "cuda" : "dispatch") << ".h\"\n";
  if (hip)
    os << "#include \"tilegen/hip.h\"\n";
  if (metal)
    os << "#include \"tilegen/metal.h\"\n";
  os << "\n#include <stddef.h>\n#include <stdio.h>\n\n";
  // A library whose every row is for some CPU architecture (no `c`, no GPU rows) has none
  // elsewhere: say so where its dispatch code is compiled there, not with an empty table.
  std::vector<std::string> guards;
  bool portable = false;
  for (const Target* t : c_library_targets(lib)) {
    if (t->cpu_arch.empty())
      portable = true;
    else if (std::string g = "(" + cpu_arch_guard(t->cpu_arch) + ")";
             std::find(guards.begin(), guards.end(), g) == guards.end())
      guards.push_back(g);
  }
  if (!portable && !guards.empty())
    os << "#if !(" << join(guards, " || ") << ")\n#error \"" << lib.name
       << ": every variant of this library is for another CPU architecture; generate it with "
          "the portable target c too\"\n#endif\n\n";
  os << "/* Runtime features each target's variants need (targets/Targets.cpp). */\n";
  ArchGuard guard;
  for (const Target* t : c_library_targets(lib)) {
    std::vector<std::string> f;
    for (const auto& name : t->runtime_features)
      f.push_back("\"" + name + "\"");
    f.push_back("NULL");
    os << guard.enter(*t) << "static const char* const tg_features_" << t->name << "[] = {"
       << join(f, ", ") << "};\n";
  }
  os << guard.close() << "\n";
  for (const auto& e : lib.kernels) {
    Names n;
    n.pub = public_function_name(lib.name, *e.kernel);
    n.prefix = n.pub.substr(lib.name.size() + 1);
    if ((gpu || hip) && !e.kernel->shape_classes.empty())
      n.classes = shape_class_names(*e.kernel);
    n.probe = gpu ? "tg_cuda_device_cc" : metal ? "tg_metal_device_family" : "";
    std::vector<Arg> args = public_args(*e.kernel);
    emit_tables(os, lib, e, n);
    emit_check(os, e, n, args);
    emit_entry_points(os, e, n, args, gpu, hip);
  }
  return os.str();
}

} // namespace tilegen::dispatch
