#include "dispatch/MetalHostEmitter.h"

#include "dispatch/DispatchExpr.h"
#include "dispatch/Naming.h"
#include "support/InternalError.h"
#include "support/TextEscape.h"

#include <sstream>

namespace tilegen::dispatch {

using namespace ir;

std::string metal_host_file_name(const std::string& lib) { return lib + "_metal.c"; }
std::string metallib_symbol(const std::string& lib) { return lib + "_metallib"; }

namespace {

// The C type of an MSL tg_params field (emit::msl_params: long, float, int, uint).
const char* c_field_type(const std::string& msl) {
  if (msl == "long")
    return "int64_t";
  if (msl == "float")
    return "float";
  if (msl == "uint")
    return "uint32_t";
  TG_ASSERT(msl == "int", "Metal host: unexpected parameter type " + msl);
  return "int32_t";
}

void emit_launcher(std::ostream& os, const std::string& lib, const MetalVariant& v) {
  const Kernel& k = *v.kernel;
  const std::string f = v.function_name;
  os << "/* " << f << ": kernel '" << k.name << "' (" << c_block_comment(v.spec_path) << "), "
     << v.layout.threads << " threads and " << v.layout.threadgroup_bytes
     << " B of threadgroup memory per threadgroup; the MSL source is " << v.file_name << ". */\n";
  os << "int " << f << "(const tg_launch* launch, const tg_variant_args* args) {\n";
  // Dims by their spec names (the grid expressions use them).
  for (size_t i = 0; i < k.dims.size(); ++i)
    os << "  const int64_t " << k.dims[i].var->name << " = args->dims[" << i << "];\n";
  for (size_t i = 0; i < k.dims.size(); ++i)
    os << "  (void)" << k.dims[i].var->name << ";\n";
  os << "  int ok = 1;\n";
  static const char* axes[] = {"x", "y", "z"};
  TG_ASSERT(k.grid.size() <= 3, "Metal host: a grid of more than 3 dimensions");
  for (size_t i = 0; i < 3; ++i)
    os << "  const int64_t tg_g" << axes[i] << " = "
       << (i < k.grid.size() ? c_shape_expr(k.grid[i].extent, "ok") : std::string("INT64_C(1)"))
       << ";\n";
  os << "  if (!ok || tg_gx > UINT32_MAX || tg_gy > UINT32_MAX || tg_gz > UINT32_MAX)\n"
     << "    return TG_ERR_SIZE_OVERFLOW;\n";
  os << "  if (tg_gx <= 0 || tg_gy <= 0 || tg_gz <= 0)\n    return TG_OK; /* an empty grid */\n";
  // tg_params, field for field as MslEmitter prints it.
  const auto params = emit::msl_params(k);
  os << "  struct {\n";
  for (const auto& p : params)
    os << "    " << c_field_type(p.type) << " " << p.name << ";\n";
  if (params.empty())
    os << "    int32_t tg_unused;\n";
  os << "  } tg_p;\n  memset(&tg_p, 0, sizeof tg_p);\n";
  for (const auto& p : params) {
    if (p.is_dim)
      os << "  tg_p." << p.name << " = args->dims[" << p.index << "];\n";
    else
      os << "  tg_p." << p.name << " = (" << c_field_type(p.type) << ")args->scalars[" << p.index
         << "];\n";
  }
  os << "  tg_metal_dispatch_desc d;\n  memset(&d, 0, sizeof d);\n";
  os << "  d.function = \"" << f << "\";\n";
  os << "  d.metallib = " << metallib_symbol(lib) << ";\n";
  os << "  d.metallib_bytes = " << metallib_symbol(lib) << "_size;\n";
  os << "  d.buffers = args->tensors;\n  d.n_buffers = " << k.tensors.size() << ";\n";
  os << "  d.params = &tg_p;\n  d.params_bytes = sizeof tg_p;\n";
  os << "  d.threadgroup_bytes = " << v.layout.threadgroup_bytes << ";\n";
  os << "  d.threads = " << v.layout.threads << ";\n";
  os << "  d.grid[0] = (unsigned)tg_gx;\n  d.grid[1] = (unsigned)tg_gy;\n  d.grid[2] = (unsigned)tg_gz;\n";
  os << "  d.gpu_family = " << v.target->metal.gpu_family << ";\n";
  os << "  (void)launch;\n  return tg_metal_dispatch(launch, &d);\n}\n\n";
}

} // namespace

std::string emit_metal_host(const std::string& lib, const std::vector<MetalVariant>& variants) {
  std::ostringstream os;
  os << generated_marker(lib) << "\n";
  os << "/* Host side of the Metal variants of library '" << lib
     << "' (docs/metal.md): one launcher per\n"
     << " * variant with the variant ABI; each packs its kernel's parameters and grid and\n"
     << " * hands them to tg_metal_dispatch (tilegen/metal.h), which encodes them. */\n";
  os << "#include \"tilegen/dispatch.h\"\n#include \"tilegen/metal.h\"\n#include \"tilegen/variant.h\"\n\n"
     << "#include <stdint.h>\n#include <string.h>\n\n";
  os << "/* The library's metallib, embedded by the build (empty where it cannot be built). */\n";
  os << "extern const unsigned char " << metallib_symbol(lib) << "[];\n";
  os << "extern const size_t " << metallib_symbol(lib) << "_size;\n\n";
  for (const auto& v : variants) {
    os << "int " << v.function_name << "(const tg_launch* launch, const tg_variant_args* args);\n";
  }
  os << "\n";
  for (const auto& v : variants)
    emit_launcher(os, lib, v);
  return os.str();
}

} // namespace tilegen::dispatch
