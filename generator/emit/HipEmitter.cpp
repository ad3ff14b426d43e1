// HipEmitter: HIP's spellings, the file's two passes and the host code (docs/hip.md).
#include "emit/HipEmitter.h"

#include "support/InternalError.h"
#include "support/TextEscape.h"

#include <algorithm>
#include <sstream>

namespace tilegen::emit {

using namespace ir;

HipEmitter::HipEmitter(const Kernel& k, const Target& t, const VariantInfo& info,
                       passes::LayoutPlan plan)
    : CudaEmitter(k, t, info, std::move(plan)) {
  // Rows of any width go element by element: the shifted chunk copies are cp.async's.
  shift_ok_ = false;
}

// ---- dialect tables ----------------------------------------------------------------------------

// 16- and 8-bit floats are held as their bits in global and shared memory (the same types on
// both HIP platforms and in the host pass, which shares tg_params) and converted by helpers.
std::string HipEmitter::storage_type_name(DType t) const {
  if (t == DType::bf16())
    return "tg_bf16";
  if (t == DType::f16())
    return "tg_f16";
  if (t == DType::e4m3())
    return "tg_e4m3";
  if (t == DType::e5m2())
    return "tg_e5m2";
  return CFamilyPrinter::type_name(t);
}

std::string HipEmitter::inf_literal(DType t) const {
  return t == DType::f64() ? "__builtin_inf()" : "__builtin_inff()";
}
std::string HipEmitter::nan_literal(DType t) const {
  return t == DType::f64() ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")";
}

std::string HipEmitter::print_call(const Call* c, int& prec) {
  // e^x as 2^(x log2 e), as on CUDA: one v_exp_f32 on AMD (docs/hip.md "Math").
  if (c->fn == Intrinsic::Exp && c->type == DType::f32())
    return need("tg_ex2") + "(" + expr(c->args[0], kMul) + " * 1.4426950408889634f)";
  if (c->fn == Intrinsic::Exp2 && c->type == DType::f32())
    return need("tg_ex2") + "(" + expr(c->args[0]) + ")";
  return CudaEmitter::print_call(c, prec);
}

std::string HipEmitter::shfl_xor(const std::string& v, int mask) const {
  return "tg_shfl_xor(" + v + ", " + std::to_string(mask) + ")";
}

std::string HipEmitter::to_float(const std::string& v, DType t) const {
  if (t == DType::bf16())
    return "tg_bf16_to_f32(" + v + ")";
  if (t == DType::f16())
    return "tg_f16_to_f32(" + v + ")";
  if (t == DType::e4m3())
    return "tg_e4m3_to_f32(" + v + ")";
  if (t == DType::e5m2())
    return "tg_e5m2_to_f32(" + v + ")";
  return v;
}

std::string HipEmitter::from_float(const std::string& v, DType t) const {
  if (t == DType::bf16())
    return "tg_f32_to_bf16(" + v + ")";
  if (t == DType::f16())
    return "tg_f32_to_f16(" + v + ")";
  if (t == DType::e4m3())
    return "tg_f32_to_e4m3(" + v + ")";
  if (t == DType::e5m2())
    return "tg_f32_to_e5m2(" + v + ")";
  return v;
}

bool HipEmitter::uses(ScalarKind kind) const {
  for (const auto& t : k_.tensors)
    if (t->dtype.kind == kind)
      return true;
  bool found = false;
  walk(k_.body, [&](const Stmt& s, const For*) {
    if (auto* a = s->as<Alloc>())
      found = found || a->buffer->dtype.kind == kind;
  });
  return found;
}

std::string HipEmitter::fp8_widen_tag(DType t) const {
  return t.kind == ScalarKind::E4M3 ? "0" : "1";
}

// ---- helpers -------------------------------------------------------------------------------------

// Device helpers. Conversions are exact where the value fits and round to nearest even
// otherwise (FP8: saturating, as cvt.rn.satfinite and the C backend), so that every backend
// rounds alike (docs/kernels.md tolerances).
std::string HipEmitter::helpers_source() const {
  auto has = [&](const char* h) { return helpers_.count(h) > 0; };
  std::string s;
  // maybe_unused: the conversions are printed whether or not the kernels call them
  s += "#define TG_DEV [[maybe_unused]] static __device__ __forceinline__\n\n";
  s += "/* A butterfly step across lanes: HIP's __shfl_xor on AMD (ds_bpermute / DPP), the CUDA\n"
       " * intrinsic HIP's NVIDIA headers map it to elsewhere (every lane of the warp takes part). */\n"
       "TG_DEV float tg_shfl_xor(float v, int m) {\n"
       "#if defined(__HIP_PLATFORM_AMD__)\n  return __shfl_xor(v, m);\n#else\n"
       "  return __shfl_xor_sync(0xffffffffu, v, m);\n#endif\n}\n";
  s += "TG_DEV float tg_bf16_to_f32(tg_bf16 h) { return __uint_as_float((unsigned)h << 16); }\n"
       "/* f32 -> bf16 bits, round to nearest even; NaN stays NaN. */\n"
       "TG_DEV tg_bf16 tg_f32_to_bf16(float f) {\n"
       "  unsigned u = __float_as_uint(f);\n"
       "  if ((u & 0x7fffffffu) > 0x7f800000u)\n    return (tg_bf16)((u >> 16) | 0x40u);\n"
       "  u += 0x7fffu + ((u >> 16) & 1u);\n  return (tg_bf16)(u >> 16);\n}\n"
       "#if defined(__HIP_PLATFORM_AMD__)\n"
       "TG_DEV float tg_f16_to_f32(tg_f16 h) { return (float)__builtin_bit_cast(_Float16, h); }\n"
       "TG_DEV tg_f16 tg_f32_to_f16(float f) { return __builtin_bit_cast(tg_f16, (_Float16)f); }\n"
       "#else\n"
       "TG_DEV float tg_f16_to_f32(tg_f16 h) { return __half2float(__ushort_as_half(h)); }\n"
       "TG_DEV tg_f16 tg_f32_to_f16(float f) { return __half_as_ushort(__float2half_rn(f)); }\n"
       "#endif\n";
  if (uses(ScalarKind::E4M3) || uses(ScalarKind::E5M2))
    s += "/* OCP FP8 bits -> f32 (exact); e5m2 is the high byte of an f16. */\n"
         "TG_DEV float tg_e4m3_to_f32(tg_e4m3 b) {\n"
         "  const unsigned e = (b >> 3) & 15u, m = b & 7u;\n"
         "  float v = e != 0 ? __uint_as_float(((e + 120u) << 23) | (m << 20)) : (float)m * 0x1p-9f;\n"
         "  if ((b & 0x7fu) == 0x7fu)\n    v = __builtin_nanf(\"\");\n"
         "  return (b & 0x80u) ? -v : v;\n}\n"
         "TG_DEV float tg_e5m2_to_f32(tg_e5m2 b) { return tg_f16_to_f32((tg_f16)((unsigned)b << 8)); }\n"
         "/* f32 -> FP8 bits with `mb` mantissa bits and bias `bias`: round to nearest even, finite\n"
         " * overflow and infinities saturate to max_code, NaN -> NaN. */\n"
         "TG_DEV unsigned char tg_f32_to_fp8(float f, int mb, int bias, unsigned max_code) {\n"
         "  const unsigned sign = (__float_as_uint(f) >> 24) & 0x80u;\n"
         "  if (f != f)\n    return (unsigned char)(sign | 0x7fu);\n"
         "  const float a = fabsf(f);\n"
         "  if (a > 0x1p100f)\n    return (unsigned char)(sign | max_code);\n"
         "  int x = 0;\n  (void)frexpf(a, &x);\n"
         "  int e = x - 1 < 1 - bias ? 1 - bias : x - 1;\n"
         "  float q = rintf(ldexpf(a, mb - e));\n"
         "  if (q >= (float)(2 << mb)) {\n    q *= 0.5f;\n    ++e;\n  }\n"
         "  unsigned code = q < (float)(1 << mb) ? (unsigned)q\n"
         "                                      : ((unsigned)(e + bias) << mb) | ((unsigned)q - (1u << mb));\n"
         "  code = code > max_code ? max_code : code;\n"
         "  return (unsigned char)(sign | code);\n}\n"
         "TG_DEV tg_e4m3 tg_f32_to_e4m3(float f) { return tg_f32_to_fp8(f, 3, 7, 0x7eu); }\n"
         "TG_DEV tg_e5m2 tg_f32_to_e5m2(float f) { return tg_f32_to_fp8(f, 2, 15, 0x7bu); }\n";
  if (has("tg_widen_fp8x16"))
    s += "/* Sixteen FP8 values (one 16-byte chunk, element 0 in the lowest byte) to sixteen f16\n"
         " * values, exactly (every e4m3 and e5m2 value is an f16 value); I: 0 e4m3, 1 e5m2. */\n"
         "template <int I> TG_DEV void tg_widen_fp8x16(uint4 v, uint4& lo, uint4& hi) {\n"
         "  const unsigned w[4] = {v.x, v.y, v.z, v.w};\n"
         "  unsigned h[8];\n"
         "#pragma unroll\n"
         "  for (int i = 0; i < 16; i += 2) {\n"
         "    unsigned p[2];\n"
         "#pragma unroll\n"
         "    for (int j = 0; j < 2; ++j) {\n"
         "      const unsigned char b = (unsigned char)(w[(i + j) / 4] >> (8 * ((i + j) % 4)));\n"
         "      p[j] = I ? (unsigned)b << 8 : tg_f32_to_f16(tg_e4m3_to_f32(b));\n"
         "    }\n"
         "    h[i / 2] = p[0] | (p[1] << 16);\n"
         "  }\n"
         "  lo = make_uint4(h[0], h[1], h[2], h[3]);\n"
         "  hi = make_uint4(h[4], h[5], h[6], h[7]);\n}\n";
  if (has("tg_ex2"))
    s += "/* 2^x: one v_exp_f32 on AMD (llvm.exp2); exp2f on HIP's NVIDIA platform. */\n"
         "TG_DEV float tg_ex2(float x) {\n#if defined(__HIP_PLATFORM_AMD__)\n"
         "  return __builtin_exp2f(x);\n#else\n  return exp2f(x);\n#endif\n}\n";
  for (const char* ty : {"bf16", "f16", "e4m3", "e5m2"})
    if (has((std::string("tg_round_") + ty).c_str()))
      s += "/* f32 rounded to the nearest " + std::string(ty) + " value, held as f32. */\n"
           "TG_DEV float tg_round_" + ty + "(float f) { return tg_" + ty + "_to_f32(tg_f32_to_" + ty + "(f)); }\n";
  if (has("tg_inb"))
    s += "/* 0 <= i < n, in one unsigned comparison (n >= 0). */\n"
         "TG_DEV bool tg_inb(int64_t i, int64_t n) { return (uint64_t)i < (uint64_t)n; }\n";
  if (has("tg_swizzle"))
    s += "/* LDS XOR swizzle on element offsets: the 16-byte chunk index (bits M..M+B-1) is XORed\n"
         " * with bits M+S..M+S+B-1 (layout/Layout.h). */\n"
         "template <int B, int M, int S> TG_DEV int tg_swizzle(int o) {\n"
         "  return o ^ (((o >> (M + S)) & ((1 << B) - 1)) << M);\n}\n";
  for (const auto& b : builtins_)
    s += b;
  return s + "\n";
}

// ---- the file ------------------------------------------------------------------------------------

std::string HipEmitter::run() {
  plan_deferred_sums();
  plan_memory();
  TG_ASSERT(smem_bytes_ <= t_.gpu.smem_per_block,
            "HIP emitter: " + std::to_string(smem_bytes_) + " bytes of LDS past the target's " +
                std::to_string(t_.gpu.smem_per_block) + " (the resource estimate accepted it)");
  const std::string body = kernel_body();

  // Host-side expressions (grid extents) use the same printer.
  const char* axes[] = {"x", "y", "z"};
  out_.str("");
  indent_ = 1;
  for (size_t i = 0; i < 3; ++i)
    line("const int64_t tg_g" + std::string(axes[i]) + " = " +
         (i < k_.grid.size() ? expr(k_.grid[i].extent) : std::string("1")) + ";");
  const std::string grid_code = out_.str();
  out_.str("");
  std::string host_dims;
  for (size_t i = 0; i < k_.dims.size(); ++i)
    host_dims += "  const int64_t " + name(k_.dims[i].var->name) + " = args->dims[" +
                 std::to_string(i) + "];\n  (void)" + name(k_.dims[i].var->name) + ";\n";
  const std::string helpers = helpers_source();

  std::ostringstream os;
  os << header_comment();
  os << "// HIP: one device pass per arch (hipcc, clang --cuda-device-only, or nvcc for HIP's NVIDIA\n"
        "// platform) builds the kernels; the host pass (a C++ compiler, no HIP header) builds the\n"
        "// variant function, which launches them through tilegen_runtime_hip (docs/hip.md).\n\n";
  os << "#include <stddef.h>\n#include <stdint.h>\n\n";
  os << "#if defined(__HIP_DEVICE_COMPILE__) || defined(__CUDA_ARCH__)\n"
        "#define TG_HIP_DEVICE_PASS 1\n"
        "#include <hip/hip_runtime.h>\n#include <hip/hip_fp16.h>\n"
        "#define TG_HD static __host__ __device__ __forceinline__\n"
        "#else\n#define TG_HD static inline\n#endif\n\n";
  os << "typedef unsigned short tg_bf16; /* bits */\ntypedef unsigned short tg_f16;\n"
        "typedef unsigned char tg_e4m3;\ntypedef unsigned char tg_e5m2;\n\n";
  os << "namespace {\n\n";
  for (const auto& [n, v] : k_.bindings)
    os << "[[maybe_unused]] constexpr int64_t " << name(n) << " = " << v << ";\n";
  os << "\n" << typed_helpers_source();
  os << "\n/* The kernels' one parameter, laid out alike by the host and device compilers. */\n";
  os << "struct tg_params {\n";
  for (const auto& t : k_.tensors)
    os << "  " << (t->access == Access::Read ? "const " : "") << storage_type_name(t->dtype) << "* "
       << name(t->name) << ";\n";
  for (const auto& d : k_.dims)
    if (d.var->kind == VarKind::Dim)
      os << "  int64_t " << name(d.var->name) << ";\n";
  for (const auto& s : k_.scalars)
    os << "  " << type_name(s->type) << " " << name(s->name) << ";\n";
  os << "  int tg_unused;\n";
  os << "  int64_t tg_fold[3]; // a grid over HIP's limits, run by tg_kernel_0 along x: its x and y\n"
        "                      // extents (0: not folded), and the first block of the launch\n";
  os << "};\n\n} // namespace\n\n";

  // ---- device pass
  os << "#if TG_HIP_DEVICE_PASS\n\nnamespace {\n\n" << helpers;
  os << "/* TG_VEC: the widest vector, in bytes, every tensor allows (16 or 0): each pointer is\n"
        " * aligned to it and each row is a whole number of such chunks (checked by tg_setup), so\n"
        " * global tiles move as 16-byte vectors; 0 moves elements one by one. */\n";
  os << "template <int TG_VEC>\nTG_DEV void tg_body(const tg_params& tg_p) {\n" << body << "}\n\n";
  os << "} // namespace\n\n";
  for (const char* v : {"16", "0"})
    os << "extern \"C\" __global__ void __launch_bounds__(" << threads_ << ") tg_kernel_" << v
       << "(const tg_params tg_p) {\n  tg_body<" << v << ">(tg_p);\n}\n";
  os << "\n#else /* host pass */\n\n";
  os << host_source(grid_code, host_dims);
  os << "\n#endif\n";
  return os.str();
}

std::string HipEmitter::host_source(const std::string& grid_code, const std::string& host_dims) {
  std::ostringstream os;
  os << "#include \"tilegen/hip.h\"\n\n";
  os << "#ifndef " << kHipImagesMacro << "\n#error \"" << kHipImagesMacro
     << " must name the header that embeds this file's code objects (cmake/TileGen.cmake)\"\n#endif\n";
  os << "#include " << kHipImagesMacro << " /* static const tg_hip_image tg_hip_images[] */\n\n";
  os << "/* The code objects (one per arch) and the kernels of this file; the runtime loads the\n"
        " * device's image once per device. */\n";
  os << "static const char* const tg_kernel_names[2] = {\"tg_kernel_16\", \"tg_kernel_0\"};\n";
  os << "static tg_hip_module tg_module = {tg_hip_images, sizeof tg_hip_images / sizeof tg_hip_images[0],\n"
        "                                   tg_kernel_names, 2, {}};\n\n";
  os << "static const size_t tg_smem_bytes = " << smem_bytes_ << ";\n\n";
  os << "/* Fills the kernel parameters and the grid; 1 = empty grid, else a tg_status. *tg_nfold > 0: the\n"
        " * grid is over HIP's limits and runs folded, that many blocks (the variant function). */\n";
  os << "static int tg_setup(const tg_variant_args* args, tg_params* tg_p, unsigned grid[3], int* vec, "
        "int64_t* tg_nfold) {\n";
  os << "  *tg_p = tg_params{};\n  *tg_nfold = 0;\n";
  size_t ti = 0, si = 0;
  for (const auto& t : k_.tensors)
    os << "  tg_p->" << name(t->name) << " = (" << (t->access == Access::Read ? "const " : "")
       << storage_type_name(t->dtype) << "*)args->tensors[" << ti++ << "];\n";
  os << host_dims;
  for (const auto& d : k_.dims)
    if (d.var->kind == VarKind::Dim)
      os << "  tg_p->" << name(d.var->name) << " = " << name(d.var->name) << ";\n";
  for (const auto& s : k_.scalars)
    os << "  tg_p->" << name(s->name) << " = (" << type_name(s->type) << ")args->scalars[" << si++
       << "];\n";
  os << grid_code;
  os << "  if (tg_gx <= 0 || tg_gy <= 0 || tg_gz <= 0)\n    return 1;\n";
  // As CUDA's tg_setup (docs/cuda-backend.md "Grids over CUDA's limits"), with HIP's limits: at
  // most 2^31 - 1 blocks in x and 65535 in y and z (HIP's NVIDIA platform: CUDA's), and on AMD
  // a grid of at most 2^32 - 1 work-items per dimension (the dispatch packet's 32-bit
  // grid_size), so x takes at most (2^32 - 1) / threads blocks.
  const std::string max_x = std::to_string(std::min<int64_t>(2147483647, 4294967295LL / threads_));
  os << "  /* HIP launches take " << max_x << " blocks of " << threads_ << " threads in x (2^31 - 1, and\n"
        "   * 2^32 - 1 work-items on AMD) and 65535 in y and z: a grid over that runs folded, its blocks\n"
        "   * numbered along x (tg_kernel_0) */\n";
  os << "  if (tg_gx > " << max_x << " || tg_gy > 65535 || tg_gz > 65535) {\n";
  os << "    if (__builtin_mul_overflow(tg_gx, tg_gy, tg_nfold) || __builtin_mul_overflow(*tg_nfold, tg_gz, tg_nfold))\n"
        "      return TG_ERR_UNSUPPORTED_SHAPE;\n"
        "    tg_p->tg_fold[0] = tg_gx;\n    tg_p->tg_fold[1] = tg_gy;\n"
        "  }\n";
  os << "  grid[0] = *tg_nfold ? 1u : (unsigned)tg_gx;\n  grid[1] = *tg_nfold ? 1u : (unsigned)tg_gy;\n"
        "  grid[2] = *tg_nfold ? 1u : (unsigned)tg_gz;\n";
  os << "  *vec = 0;\n  if (" << tensor_vec_check(16) << ")\n    *vec = 16;\n";
  os << "  return TG_OK;\n}\n\n";
  os << "extern \"C\" int " << info_.function_name
     << "(const tg_launch* launch, const tg_variant_args* args) {\n";
  os << "  tg_params tg_p;\n  unsigned tg_grid[3];\n  int tg_vec = 0;\n  int64_t tg_nfold = 0;\n";
  os << "  const int tg_s = tg_setup(args, &tg_p, tg_grid, &tg_vec, &tg_nfold);\n";
  os << "  if (tg_s == 1)\n    return TG_OK; /* nothing to do */\n";
  os << "  if (tg_s != TG_OK)\n    return tg_s;\n";
  os << "  /* never synchronizes: the launches are queued on the call's stream */\n";
  os << "  if (tg_nfold > 0) { /* a grid over HIP's limits: tg_kernel_0, its blocks along x */\n"
        "    const int64_t tg_max = " << max_x << "; /* blocks a launch */\n"
        "    for (int64_t tg_first = 0; tg_first < tg_nfold; tg_first += tg_max) {\n"
        "      tg_p.tg_fold[2] = tg_first;\n"
        "      tg_grid[0] = (unsigned)(tg_nfold - tg_first < tg_max ? tg_nfold - tg_first : tg_max);\n"
        "      const int tg_e = tg_hip_launch(&tg_module, 1, tg_grid, " << threads_
     << ", tg_smem_bytes, launch ? launch->stream : NULL, &tg_p, sizeof tg_p);\n"
        "      if (tg_e != TG_OK)\n        return tg_e;\n"
        "    }\n    return TG_OK;\n  }\n";
  os << "  return tg_hip_launch(&tg_module, tg_vec == 16 ? 0 : 1, tg_grid, " << threads_
     << ", tg_smem_bytes, launch ? launch->stream : NULL, &tg_p, sizeof tg_p);\n}\n";
  return os.str();
}

// ---- gemm ----------------------------------------------------------------------------------------

void HipEmitter::emit_gemm(const Stmt& s, const Gemm* g) {
  const auto& p = plan_.gemms.at(s.get());
  if (p.kind != passes::GemmPlan::MatrixCore) {
    CudaEmitter::emit_gemm(s, g);
    return;
  }
  before_shared_read();
  if (g->clear) {
    line("#pragma unroll");
    open("for (int tg_r = 0; tg_r < " + std::to_string(frag(g->c.get()).num_regs()) + "; ++tg_r)");
    line(name(g->c->name) + "[tg_r] = 0.0f;");
    close();
  }
  gemm_matrix_core(g, p);
}

std::string emit_hip_variant(const Kernel& k, const Target& target, const VariantInfo& info) {
  TG_ASSERT(target.backend == Backend::HIP, "emit_hip_variant: '" + target.name + "' is not HIP");
  TG_ASSERT(!k.target.empty(), "emit_hip_variant: kernel '" + k.name + "' is not instantiated");
  std::ostringstream err;
  DiagEngine diag(err);
  auto plan = passes::infer_layouts(k, target, diag);
  TG_ASSERT(plan.has_value(), "layout inference failed after instantiation accepted the kernel:\n" +
                                  err.str());
  return HipEmitter(k, target, info, std::move(*plan)).run();
}

} // namespace tilegen::emit
