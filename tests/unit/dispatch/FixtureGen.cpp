// Writes the fixture library (fixlib.h, fixlib_dispatch.c) and fake variants into argv[1]:
// each fake records its symbol and arguments so that DispatchGeneratedTest can check which
// variant a call reached and with what.
#include "FixtureKernel.h"

#include <fstream>
#include <set>
#include <iostream>

using namespace tilegen;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: dispatch_fixture_gen OUTDIR\n";
    return 2;
  }
  std::string dir = argv[1];
  ir::Kernel k = fixture::make_fixture_kernel();
  dispatch::Library lib = fixture::make_fixture_library(k);
  std::ofstream(dir + "/fixlib.h") << dispatch::emit_header(lib);
  std::ofstream(dir + "/fixlib_dispatch.c") << dispatch::emit_dispatch_source(lib);

  std::ofstream fakes(dir + "/fixlib_fakes.c");
  fakes << "#include \"tilegen/variant.h\"\n#include \"fixlib_fakes.h\"\n\n"
        << "const char* fix_last_variant = \"\";\n"
        << "tg_variant_args fix_last_args;\nconst tg_launch* fix_last_launch;\n"
        << "/* The dispatch function's arrays live on its stack: keep copies. */\n"
        << "static void* tensors[4];\nstatic int64_t dims[3];\nstatic double scalars[3];\n"
        << "static int flags[1];\n\n"
        << "static void record(const char* fn, const tg_launch* launch, const tg_variant_args* a) {\n"
        << "  for (int i = 0; i < 4; ++i) tensors[i] = a->tensors[i];\n"
        << "  for (int i = 0; i < 3; ++i) dims[i] = a->dims[i];\n"
        << "  for (int i = 0; i < 3; ++i) scalars[i] = a->scalars[i];\n"
        << "  flags[0] = a->flags[0];\n"
        << "  fix_last_args.tensors = tensors;\n  fix_last_args.dims = dims;\n"
        << "  fix_last_args.scalars = scalars;\n  fix_last_args.flags = flags;\n"
        << "  fix_last_variant = fn;\n  fix_last_launch = launch;\n}\n\n";
  for (const auto& inst : lib.kernels[0].instances)
    for (const Target* t : lib.targets) {
      std::string fn = dispatch::variant_function_name(lib.name, k, inst, *t);
      fakes << "int " << fn << "(const tg_launch* launch, const tg_variant_args* args) {\n"
            << "  record(\"" << fn << "\", launch, args);\n  return TG_OK;\n}\n";
    }
  // The GPU library: its dispatch file and recording fakes for its CPU variants; the GPU
  // variants are tests/unit/dispatch/GpuFixtureVariants.cu (hand-written, the CUDA ABI).
  dispatch::Library glib = fixture::make_fixture_gpu_library(k);
  std::ofstream(dir + "/gfixlib.h") << dispatch::emit_header(glib);
  std::ofstream(dir + "/gfixlib_dispatch.c") << dispatch::emit_dispatch_source(glib);
  std::ofstream gfakes(dir + "/gfixlib_cpu_fakes.c");
  gfakes << "#include \"tilegen/variant.h\"\n\nconst char* gfix_last_cpu_variant = \"\";\n\n";
  for (const auto& inst : glib.kernels[0].instances)
    for (const Target* t : glib.targets) {
      if (t->is_gpu())
        continue;
      std::string fn = dispatch::variant_function_name(glib.name, k, inst, *t);
      gfakes << "int " << fn << "(const tg_launch* launch, const tg_variant_args* args) {\n"
             << "  (void)launch;\n  (void)args;\n  gfix_last_cpu_variant = \"" << fn
             << "\";\n  return TG_OK;\n}\n";
    }

  // The library with shape classes: fakes for every variant function (GPU ones too, and their
  // _desc twins) that record the symbol, and stand-ins for the CUDA runtime entry points the
  // dispatch file calls, so that class selection runs without a GPU: cfix_device_cc is the
  // compute capability tg_cuda_device_cc reports (0 = no device).
  ir::Kernel ck = fixture::make_fixture_classed_kernel();
  dispatch::Library clib = fixture::make_fixture_class_library(ck);
  std::ofstream(dir + "/cfixlib.h") << dispatch::emit_header(clib);
  std::ofstream(dir + "/cfixlib_dispatch.c") << dispatch::emit_dispatch_source(clib);
  std::ofstream cfakes(dir + "/cfixlib_fakes.c");
  cfakes << "#include \"tilegen/cuda.h\"\n\n"
         << "const char* cfix_last_variant = \"\";\nint cfix_device_cc = 0;\n"
         << "int cfix_device_cc_calls = 0;\n\n"
         << "int tg_cuda_device_cc(int device, const char** why) {\n"
         << "  ++cfix_device_cc_calls;\n"
         << "  if (why) *why = \"no CUDA device: fake\";\n"
         << "  return device == 0 ? cfix_device_cc : 0;\n}\n"
         << "tg_status tg_cuda_run(const tg_variant_entry* e, const tg_launch* launch,\n"
         << "                      const tg_variant_args* args) {\n"
         << "  return (tg_status)e->fn(launch, args);\n}\n"
         << "tg_status tg_cuda_describe(const tg_variant_entry* e, const tg_launch* launch,\n"
         << "                           const tg_variant_args* args, tg_gpu_launch_desc* out) {\n"
         << "  return (tg_status)e->desc(launch, args, out);\n}\n\n";
  std::set<std::string> seen;
  for (size_t i = 0; i < clib.kernels[0].instances.size(); ++i)
    for (const Target* t : clib.targets)
      for (const char* cls : {"large", "small_m"}) {
        if (!t->is_gpu() && std::string(cls) != "large")
          continue;
        std::string fn = dispatch::variant_function_name(clib.name, ck,
                                                         clib.kernels[0].instances[i], *t, cls);
        if (!seen.insert(fn).second)
          continue;
        cfakes << "int " << fn << "(const tg_launch* launch, const tg_variant_args* args) {\n"
               << "  (void)launch;\n  (void)args;\n  cfix_last_variant = \"" << fn
               << "\";\n  return TG_OK;\n}\n";
        if (t->is_gpu())
          cfakes << "int " << fn << "_desc(const tg_launch* launch, const tg_variant_args* args,"
                 << " tg_gpu_launch_desc* out) {\n  (void)launch;\n  (void)args;\n"
                 << "  (void)out;\n  cfix_last_variant = \"" << fn << "_desc\";\n"
                 << "  return TG_OK;\n}\n";
      }

  std::ofstream(dir + "/fixlib_fakes.h")
      << "#include \"tilegen/variant.h\"\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
      << "extern const char* fix_last_variant;\nextern tg_variant_args fix_last_args;\n"
      << "extern const tg_launch* fix_last_launch;\n"
      << "#ifdef __cplusplus\n}\n#endif\n";
  return 0;
}
