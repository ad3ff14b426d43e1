// String-level checks of the dispatch generator on a hand-built kernel.
#include "FixtureKernel.h"

#include <gtest/gtest.h>

using namespace tilegen;

namespace {

bool contains(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

TEST(Naming, Functions) {
  ir::Kernel k = fixture::make_fixture_kernel();
  auto inst = fixture::fixture_instances()[3];
  EXPECT_EQ(dispatch::public_function_name("lib", k), "lib_mix_f32");
  EXPECT_EQ(dispatch::variant_function_name("lib", k, inst, *find_target("c_avx2")),
            "tgv_lib__mix__f32_causal1_D128__c_avx2");
  EXPECT_EQ(dispatch::variant_file_name("lib", k, inst, *find_target("c")),
            "lib__mix__f32_causal1_D128__c.c");
  k.type_binding.clear();
  EXPECT_EQ(dispatch::public_function_name("lib", k), "lib_mix");
  EXPECT_EQ(dispatch::instance_label({"", {}}), "default");
}

TEST(Naming, ShapeClassVariants) {
  ir::Kernel k = fixture::make_fixture_kernel();
  auto inst = fixture::fixture_instances()[3];
  const Target& sm90 = *find_target("sm_90");
  EXPECT_EQ(dispatch::variant_function_name("lib", k, inst, sm90, "small_m"),
            "tgv_lib__mix__f32_causal1_D128__sm_90__small_m");
  EXPECT_EQ(dispatch::variant_file_name("lib", k, inst, sm90, "small_m"),
            "lib__mix__f32_causal1_D128__sm_90__small_m.cu");
  // The implicit class keeps the plain names (and so do C targets, which have only it).
  EXPECT_EQ(dispatch::variant_function_name("lib", k, inst, sm90, "large"),
            dispatch::variant_function_name("lib", k, inst, sm90));
  EXPECT_EQ(dispatch::variant_file_name("lib", k, inst, sm90, "large"),
            "lib__mix__f32_causal1_D128__sm_90.cu");
  EXPECT_EQ(dispatch::variant_file_name("lib", k, inst, *find_target("c"), ""),
            "lib__mix__f32_causal1_D128__c.c");
}

TEST(Naming, LibraryNames) {
  EXPECT_TRUE(dispatch::is_valid_library_name("mykernels"));
  EXPECT_TRUE(dispatch::is_valid_library_name("tg_bench"));
  EXPECT_FALSE(dispatch::is_valid_library_name("_x9"));         // C reserves file-scope _names
  EXPECT_FALSE(dispatch::is_valid_library_name("tilegen_runtime")); // TILEGEN_RUNTIME_H
  EXPECT_FALSE(dispatch::is_valid_library_name("TGV_x"));
  EXPECT_FALSE(dispatch::is_valid_library_name("Con"));  // CON.h: a device name on Windows
  EXPECT_FALSE(dispatch::is_valid_library_name("lpt1"));
  EXPECT_TRUE(dispatch::is_valid_library_name("lpt10"));
  EXPECT_FALSE(dispatch::is_valid_library_name(""));
  EXPECT_FALSE(dispatch::is_valid_library_name("9lives"));
  EXPECT_FALSE(dispatch::is_valid_library_name("my-kernels"));
  EXPECT_FALSE(dispatch::is_valid_library_name("a__b"));
  EXPECT_FALSE(dispatch::is_valid_library_name("ab_"));
  EXPECT_FALSE(dispatch::is_valid_library_name("tg"));
  EXPECT_FALSE(dispatch::is_valid_library_name("tgv_x"));
}

TEST(DispatchEmitter, InstanceKeyOrder) {
  ir::Kernel k = fixture::make_fixture_kernel();
  auto insts = fixture::fixture_instances();
  EXPECT_EQ(dispatch::instance_key(k, insts[0]), (std::vector<int64_t>{0, 64}));
  EXPECT_EQ(dispatch::instance_key(k, insts[3]), (std::vector<int64_t>{1, 128}));
}

TEST(DispatchEmitter, HeaderDeclaresTypedApi) {
  ir::Kernel k = fixture::make_fixture_kernel();
  std::string h = dispatch::emit_header(fixture::make_fixture_library(k));
  EXPECT_EQ(h.rfind(dispatch::generated_marker("fixlib"), 0), 0u);
  EXPECT_TRUE(contains(h, "#ifndef FIXLIB_H"));
  EXPECT_TRUE(contains(h, "extern \"C\" {"));
  EXPECT_TRUE(contains(h, "#include \"tilegen/runtime.h\""));
  EXPECT_TRUE(contains(h, "tg_status fixlib_mix_f32(const tg_launch* launch,\n"
                          "                         const float* X,\n"
                          "                         const tg_bf16* W,\n"
                          "                         float* Y,\n"
                          "                         int8_t* Z,\n"
                          "                         int64_t M,\n"
                          "                         int64_t N,\n"
                          "                         int64_t D,\n"
                          "                         float scale,\n"
                          "                         tg_f16 bias,\n"
                          "                         int32_t count,\n"
                          "                         int causal);"))
      << h;
  EXPECT_TRUE(contains(h, "int causal,\n                               tg_selection* out);"));
  // Doc comment: summary, shapes, constraints, origin.
  EXPECT_TRUE(contains(h, "/* mix (f32): a kernel made by hand for dispatch tests"));
  EXPECT_TRUE(contains(h, " *   Y: f32 [M, (N * 2)], write"));
  EXPECT_TRUE(contains(h, " *   Z: i8 [cdiv(N, 3)], readwrite"));
  EXPECT_TRUE(contains(h, " *   dims: M >= 0; N: 8 <= N <= 4096, multiple of 8; D in {64, 128}"))
      << h;
  EXPECT_TRUE(contains(h, "Spec: fixture.yaml:2."));
}

TEST(DispatchEmitter, SourceHasTableAndChecks) {
  ir::Kernel k = fixture::make_fixture_kernel();
  std::string c = dispatch::emit_dispatch_source(fixture::make_fixture_library(k));
  EXPECT_TRUE(contains(c, "static const char* const tg_features_c_avx2[] = {\"avx2\", \"fma\", "
                          "\"f16c\", NULL};"));
  // c_avx2/c_avx512 rows compile on x86 only: the count is the table's size there.
  EXPECT_TRUE(contains(c, "#define MIX_F32_N_VARIANTS (sizeof mix_f32_variants / sizeof "
                          "mix_f32_variants[0])"))
      << c;
  EXPECT_TRUE(contains(c, "    {3, \"f32_causal1_D128\", \"c_avx512\", "
                          "\"tgv_fixlib__mix__f32_causal1_D128__c_avx512\", TG_BACKEND_CPU, \"\", "
                          "20, tg_features_c_avx512, tgv_fixlib__mix__f32_causal1_D128__c_avx512, 0, 0, NULL, 0},"))
      << c;
  EXPECT_TRUE(contains(c, "tg_check_dim(\"N\", N, INT64_C(8), INT64_C(4096), INT64_C(8), "));
  EXPECT_TRUE(contains(c, "tg_mul_i64(N, INT64_C(2), &tg_ok)"));
  EXPECT_TRUE(contains(c, "tg_cdiv_i64(N, INT64_C(3), &tg_ok)"));
  EXPECT_TRUE(contains(c, "(double)tg_f16_to_float(bias)"));
  EXPECT_FALSE(contains(c, "exit(")) << "dispatch code must never exit";
  EXPECT_FALSE(contains(c, "abort("));
  // A CPU-only library never references the CUDA runtime (it must not need to link it).
  EXPECT_FALSE(contains(c, "cuda")) << c;
  EXPECT_FALSE(contains(c, "_desc"));
  EXPECT_TRUE(contains(c, "int tg_v = tg_select_cached(mix_f32_variants, MIX_F32_N_VARIANTS, "
                          "tg_instance, launch, mix_f32_cache);"));
}

TEST(DispatchEmitter, GpuRows) {
  ir::Kernel k = fixture::make_fixture_kernel();
  std::string c = dispatch::emit_dispatch_source(fixture::make_fixture_gpu_library(k));
  EXPECT_TRUE(contains(c, "#include \"tilegen/cuda.h\""));
  EXPECT_TRUE(contains(c, "#define MIX_F32_N_VARIANTS (sizeof mix_f32_variants / sizeof "
                          "mix_f32_variants[0])"));
  // Both functions of a CUDA variant are declared; a C variant has no _desc.
  EXPECT_TRUE(contains(c, "int tgv_gfixlib__mix__f32_causal0_D64__sm_80(const tg_launch* launch, "
                          "const tg_variant_args* args);\n"
                          "int tgv_gfixlib__mix__f32_causal0_D64__sm_80_desc(const tg_launch* "
                          "launch, const tg_variant_args* args,\n"))
      << c;
  EXPECT_FALSE(contains(c, "__c_desc"));
  // GPU rows carry backend, arch, preference, cc, arch_specific and the _desc twin.
  EXPECT_TRUE(contains(c, "    {1, \"f32_causal0_D128\", \"sm_90\", "
                          "\"tgv_gfixlib__mix__f32_causal0_D128__sm_90\", TG_BACKEND_CUDA, "
                          "\"sm_90\", 110, tg_features_sm_90, "
                          "tgv_gfixlib__mix__f32_causal0_D128__sm_90, 90, 0, "
                          "tgv_gfixlib__mix__f32_causal0_D128__sm_90_desc, 0},"))
      << c;
  EXPECT_TRUE(contains(c, "TG_BACKEND_CPU, \"\", 10, tg_features_c_avx2, "
                          "tgv_gfixlib__mix__f32_causal0_D128__c_avx2, 0, 0, NULL, 0},"));
  // Selection per device through the CUDA runtime; a CUDA row runs on launch's device.
  EXPECT_TRUE(contains(c, "tg_select_cached_gpu(mix_f32_variants, MIX_F32_N_VARIANTS, "
                          "tg_instance, launch, mix_f32_cache, tg_cuda_device_cc);"));
  EXPECT_TRUE(contains(c, "return tg_cuda_run(&mix_f32_variants[tg_v], launch, &tg_args);"));
  EXPECT_TRUE(contains(c, "tg_select_variant_gpu(mix_f32_variants, MIX_F32_N_VARIANTS, "
                          "tg_instance, launch, tg_cpu_has, tg_cuda_device_cc, out->reason, "
                          "sizeof out->reason);"));
  EXPECT_TRUE(contains(c, "tg_status gfixlib_mix_f32_desc(const tg_launch* launch,"));
  EXPECT_TRUE(contains(c, "return tg_cuda_describe(&mix_f32_variants[tg_v], launch, &tg_args, "
                          "out);"));

  std::string h = dispatch::emit_header(fixture::make_fixture_gpu_library(k));
  EXPECT_TRUE(contains(h, "#include \"tilegen/variant.h\"")); // tg_gpu_launch_desc
  EXPECT_TRUE(contains(h, " * Targets: sm_80, sm_90, c, c_avx2."));
  EXPECT_TRUE(contains(h, "int causal,\n                               tg_gpu_launch_desc* out);"))
      << h;
  EXPECT_TRUE(contains(h, "launch->device = -1, the CPU variant runs (host pointers)"));
}

TEST(DispatchEmitter, ShapeClassRows) {
  ir::Kernel k = fixture::make_fixture_classed_kernel();
  std::string c = dispatch::emit_dispatch_source(fixture::make_fixture_class_library(k));
  EXPECT_EQ(dispatch::shape_class_names(k),
            (std::vector<std::string>{"small_m", "narrow", "large"}));
  // 4 instances x (sm_80 and sm_90 with 3 classes each + c).
  EXPECT_TRUE(contains(c, "#define MIX_F32_N_VARIANTS 28"));
  EXPECT_TRUE(contains(c, "#define MIX_F32_N_CLASSES 3"));
  // Rows keyed by (target, class); narrow and large share the plain sm_90 variant.
  EXPECT_TRUE(contains(c, "tgv_cfixlib__mix__f32_causal0_D64__sm_90__small_m_desc, 0}, /* small_m */"))
      << c;
  EXPECT_TRUE(contains(c, "\"tgv_cfixlib__mix__f32_causal0_D64__sm_90\", TG_BACKEND_CUDA, \"sm_90\", "
                          "110, tg_features_sm_90, tgv_cfixlib__mix__f32_causal0_D64__sm_90, 90, 0, "
                          "tgv_cfixlib__mix__f32_causal0_D64__sm_90_desc, 1}, /* narrow */"));
  EXPECT_TRUE(contains(c, "tgv_cfixlib__mix__f32_causal0_D64__sm_90_desc, 2}, /* large */"));
  // Each variant function is declared once; sm_80 has no class variants.
  EXPECT_EQ(c.find("int tgv_cfixlib__mix__f32_causal0_D64__sm_90(const"),
            c.rfind("int tgv_cfixlib__mix__f32_causal0_D64__sm_90(const"));
  EXPECT_FALSE(contains(c, "sm_80__small_m"));
  EXPECT_FALSE(contains(c, "c__small_m"));
  // The class test: predicates in order over the call's dims, checked arithmetic, then large.
  EXPECT_TRUE(contains(c, "static int mix_f32_class(int64_t M, int64_t N, int64_t D, int causal) {"))
      << c;
  EXPECT_TRUE(contains(c, "  { /* small_m: M <= 64 (fixture.yaml:7) */\n    int tg_ok = 1;\n"
                          "    if ((M <= INT64_C(64)) && tg_ok)\n      return 0;\n  }\n"));
  EXPECT_TRUE(contains(c, "if ((tg_mul_i64(N, D, &tg_ok) <= INT64_C(1024)) && tg_ok)\n      return 1;"));
  EXPECT_TRUE(contains(c, "  return 2; /* large */\n}"));
  // Cache per (instance, class); selection and _query by class.
  EXPECT_TRUE(contains(c, "static tg_select_cache mix_f32_cache[MIX_F32_N_INSTANCES * MIX_F32_N_CLASSES];"));
  EXPECT_TRUE(contains(c, "  int tg_class = mix_f32_class(M, N, D, causal);\n"
                          "  int tg_v = tg_select_cached_class(mix_f32_variants, MIX_F32_N_VARIANTS, "
                          "tg_instance, tg_class, MIX_F32_N_CLASSES, launch, mix_f32_cache, "
                          "tg_cuda_device_cc);"));
  EXPECT_TRUE(contains(c, "tg_select_variant_class(mix_f32_variants, MIX_F32_N_VARIANTS, tg_instance, "
                          "tg_class, mix_f32_class_why[tg_class], launch, tg_cpu_has, "
                          "tg_cuda_device_cc, out->reason, sizeof out->reason);"));
  EXPECT_TRUE(contains(c, "    \"class small_m (M <= 64)\",\n    \"class narrow (N * D <= 1024)\",\n"
                          "    \"class large (none of M <= 64, N * D <= 1024)\",\n"));
}

TEST(DispatchEmitter, ShapeClassesDoNotChangeCpuLibraries) {
  // C targets have one configuration per instance: a CPU-only library of a kernel with classes
  // is byte-identical to the one without.
  ir::Kernel plain = fixture::make_fixture_kernel();
  ir::Kernel classed = fixture::make_fixture_classed_kernel();
  EXPECT_EQ(dispatch::emit_dispatch_source(fixture::make_fixture_library(classed)),
            dispatch::emit_dispatch_source(fixture::make_fixture_library(plain)));
  EXPECT_EQ(dispatch::emit_header(fixture::make_fixture_library(classed)),
            dispatch::emit_header(fixture::make_fixture_library(plain)));
}

TEST(DispatchEmitter, WgslTargetsAreNotPartOfTheCLibrary) {
  // The WGSL rows of the target table (filled by the WGSL backend); a fake row if none yet.
  Target wgsl;
  wgsl.name = "wgsl_fake";
  wgsl.backend = Backend::WGSL;
  for (const auto& t : all_targets())
    if (t.backend == Backend::WGSL)
      wgsl = t;
  ir::Kernel k = fixture::make_fixture_kernel();
  dispatch::Library lib = fixture::make_fixture_library(k);
  std::string plain_c = dispatch::emit_dispatch_source(lib);
  std::string plain_h = dispatch::emit_header(lib);
  lib.targets.push_back(&wgsl);
  EXPECT_EQ(dispatch::emit_dispatch_source(lib), plain_c);
  EXPECT_EQ(dispatch::emit_header(lib), plain_h);
}

// C rows of one CPU architecture (Target::cpu_arch) are compiled only there, so a library of
// x86 and Arm targets builds on both: features, prototypes and rows under #if, the row count
// from sizeof; the portable row unguarded.
TEST(DispatchEmitter, CpuArchitectureRowsAreGuarded) {
  ir::Kernel k = fixture::make_fixture_kernel();
  dispatch::Library lib;
  lib.name = "alib";
  for (const char* t : {"c", "c_avx2", "c_neon", "c_sve"})
    lib.targets.push_back(find_target(t));
  lib.kernels.push_back({&k, fixture::fixture_instances(), "fixture.yaml", {}});
  std::string c = dispatch::emit_dispatch_source(lib);
  EXPECT_TRUE(contains(c, "static const char* const tg_features_c[] = {NULL};\n#if "
                          "defined(__x86_64__) || defined(__i386__)\nstatic const char* const "
                          "tg_features_c_avx2[] = {\"avx2\", \"fma\", \"f16c\", NULL};\n#endif\n"
                          "#if defined(__aarch64__)\nstatic const char* const tg_features_c_neon[] = "
                          "{\"asimd\", \"fphp\", \"asimdhp\", NULL};\nstatic const char* const "
                          "tg_features_c_sve[] = {\"asimd\", \"fphp\", \"asimdhp\", \"sve\", "
                          "NULL};\n#endif\n\n"))
      << c;
  EXPECT_TRUE(contains(c, "int tgv_alib__mix__f32_causal0_D64__c(const tg_launch* launch, const "
                          "tg_variant_args* args);\n#if defined(__x86_64__) || defined(__i386__)\n"
                          "int tgv_alib__mix__f32_causal0_D64__c_avx2(const tg_launch* launch, "
                          "const tg_variant_args* args);\n#endif\n#if defined(__aarch64__)\nint "
                          "tgv_alib__mix__f32_causal0_D64__c_neon("));
  EXPECT_TRUE(contains(c, "static const tg_variant_entry mix_f32_variants[] = {\n"));
  EXPECT_TRUE(contains(c, "#if defined(__aarch64__)\n    {0, \"f32_causal0_D64\", \"c_neon\", "
                          "\"tgv_alib__mix__f32_causal0_D64__c_neon\", TG_BACKEND_CPU, \"\", 10, "
                          "tg_features_c_neon, tgv_alib__mix__f32_causal0_D64__c_neon, 0, 0, NULL, "
                          "0},\n    {0, \"f32_causal0_D64\", \"c_sve\", "
                          "\"tgv_alib__mix__f32_causal0_D64__c_sve\", TG_BACKEND_CPU, \"\", 20, "
                          "tg_features_c_sve, tgv_alib__mix__f32_causal0_D64__c_sve, 0, 0, NULL, "
                          "0},\n#endif\n    {1, \"f32_causal0_D128\", \"c\", "))
      << c;
  EXPECT_TRUE(contains(c, "};\n#define MIX_F32_N_VARIANTS (sizeof mix_f32_variants / sizeof "
                          "mix_f32_variants[0])\n"));
  EXPECT_FALSE(contains(c, "#error")) << "the portable c row runs anywhere";

  // Without `c`, no row is left on a third architecture: the dispatch source says so there.
  lib.targets = {find_target("c_avx2"), find_target("c_neon")};
  c = dispatch::emit_dispatch_source(lib);
  EXPECT_TRUE(contains(c, "#if !((defined(__x86_64__) || defined(__i386__)) || "
                          "(defined(__aarch64__)))\n#error \"alib: every variant of this library "
                          "is for another CPU architecture; generate it with the portable target "
                          "c too\"\n#endif\n"))
      << c;
}

TEST(DispatchEmitter, Deterministic) {
  ir::Kernel k1 = fixture::make_fixture_kernel();
  ir::Kernel k2 = fixture::make_fixture_kernel(); // fresh nodes at other addresses
  EXPECT_EQ(dispatch::emit_dispatch_source(fixture::make_fixture_library(k1)),
            dispatch::emit_dispatch_source(fixture::make_fixture_library(k2)));
  EXPECT_EQ(dispatch::emit_header(fixture::make_fixture_library(k1)),
            dispatch::emit_header(fixture::make_fixture_library(k2)));
}

} // namespace
