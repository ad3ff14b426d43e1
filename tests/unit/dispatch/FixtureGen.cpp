// Writes the fixture library (fixlib.h, fixlib_dispatch.c) and fake variants into argv[1]:
// each fake records its symbol and arguments so that DispatchGeneratedTest can check which
// variant a call reached and with what.
#include "FixtureKernel.h"

#include <fstream>
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

  std::ofstream(dir + "/fixlib_fakes.h")
      << "#include \"tilegen/variant.h\"\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
      << "extern const char* fix_last_variant;\nextern tg_variant_args fix_last_args;\n"
      << "extern const tg_launch* fix_last_launch;\n"
      << "#ifdef __cplusplus\n}\n#endif\n";
  return 0;
}
