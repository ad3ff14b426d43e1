// tgb_sanitize: a small-shape driver for compute-sanitizer (memcheck, racecheck): runs every
// type of one kernel of the bench library `tgb` on the GPU at small ragged shapes, with
// 16-byte-aligned tensors (the vectorized kernel) and with tensors one element off (the scalar
// kernel; over 64 KiB of them, the vectorized kernel on realigned copies, docs/cuda-backend.md),
// and compares each result with the library's own CPU variant (launch.device = -1)
// on the same inputs: each is within tol(T, L) of the exact result (docs/kernels.md), so
// they must agree within 2 tol. Small, so the sanitizers' slowdown stays in seconds.
//
//   tgb_sanitize [--shapes N] <kernel|all>   (N: only the first N shapes of each kernel)
//   tgb_sanitize [--shapes N] grid           grids over CUDA's 65535 blocks in y or z (issue #33):
//     attention over 70000 heads of one query row (y), over 70000 batches (z), a causal one over
//     65537 heads of 3 rows, and a GEMM of 65536 x 128 + 77 rows (y for tiles of up to 128 rows),
//     f32 and bf16, each against the CPU variant; the line says which variant ran and the grid
//     its _desc twin describes (a folded grid: all its blocks along x; sm_90a's persistent
//     kernels: one block per SM). TILEGEN_GPU_DISABLE=sm_90a takes the sm_90 (mma.sync) path.
//   exit 0 = all ok, 1 = a mismatch or error, 2 = usage or no CUDA device
#include "tgb.h"
#include "tilegen/cuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

int g_fail = 0;

#define CK(expr)                                                                                 \
  do {                                                                                           \
    cudaError_t e_ = (expr);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(e_)); \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)

enum class Ty { f32, f16, bf16, e4m3, e5m2 };
const char* ty_name(Ty t) {
  const char* names[] = {"f32", "f16", "bf16", "e4m3", "e5m2"};
  return names[int(t)];
}
size_t ty_bytes(Ty t) { return t == Ty::f32 ? 4 : t == Ty::f16 || t == Ty::bf16 ? 2 : 1; }
double ty_u(Ty t) {
  const int bits[] = {24, 11, 8, 4, 3}; // unit roundoff 2^-p
  return std::ldexp(1.0, -bits[int(t)]);
}

float load(Ty t, const unsigned char* p, size_t i) {
  if (t == Ty::f32) {
    float f;
    std::memcpy(&f, p + 4 * i, 4);
    return f;
  }
  if (t == Ty::e4m3 || t == Ty::e5m2)
    return t == Ty::e4m3 ? tg_e4m3_to_float(p[i]) : tg_e5m2_to_float(p[i]);
  uint16_t h;
  std::memcpy(&h, p + 2 * i, 2);
  return t == Ty::f16 ? tg_f16_to_float(h) : tg_bf16_to_float(h);
}
void store(Ty t, unsigned char* p, size_t i, float v) {
  if (t == Ty::f32) {
    std::memcpy(p + 4 * i, &v, 4);
    return;
  }
  if (t == Ty::e4m3 || t == Ty::e5m2) {
    p[i] = t == Ty::e4m3 ? tg_float_to_e4m3(v) : tg_float_to_e5m2(v);
    return;
  }
  uint16_t h = t == Ty::f16 ? tg_float_to_f16(v) : tg_float_to_bf16(v);
  std::memcpy(p + 2 * i, &h, 2);
}

// A call: tensors (last = output), dims, one scalar, one flag; with a non-NULL `q`, the
// _query twin instead (so a CPU fallback is never handed device pointers).
using Call = tg_status (*)(const tg_launch*, void* const*, const int64_t*, float, int,
                           tg_selection* q);

#define CALL_OR_QUERY(fn, ...) (q ? fn##_query(l, __VA_ARGS__, q) : fn(l, __VA_ARGS__))
#define SIG const tg_launch *l, void *const *p, const int64_t *d, float s, int f, tg_selection *q
#define DEFINE_CALLS(T, t)                                                                      \
  tg_status gemm_##t(SIG) {                                                                      \
    (void)s, (void)f;                                                                            \
    return CALL_OR_QUERY(tgb_gemm_##t, (const T*)p[0], (const T*)p[1], (T*)p[2], d[0], d[1],    \
                         d[2]);                                                                  \
  }                                                                                              \
  tg_status gemm_bias_gelu_##t(SIG) {                                                            \
    (void)s, (void)f;                                                                            \
    return CALL_OR_QUERY(tgb_gemm_bias_gelu_##t, (const T*)p[0], (const T*)p[1],                \
                         (const T*)p[2], (T*)p[3], d[0], d[1], d[2]);                            \
  }                                                                                              \
  tg_status softmax_##t(SIG) {                                                                   \
    (void)s, (void)f;                                                                            \
    return CALL_OR_QUERY(tgb_softmax_##t, (const T*)p[0], (T*)p[1], d[0], d[1]);                \
  }                                                                                              \
  tg_status rmsnorm_##t(SIG) {                                                                   \
    (void)f;                                                                                     \
    return CALL_OR_QUERY(tgb_rmsnorm_##t, (const T*)p[0], (const T*)p[1], (T*)p[2], d[0], d[1], \
                         s);                                                                     \
  }                                                                                              \
  tg_status flash_attention_fwd_##t(SIG) {                                                       \
    return CALL_OR_QUERY(tgb_flash_attention_fwd_##t, (const T*)p[0], (const T*)p[1],           \
                         (const T*)p[2], (T*)p[3], d[0], d[1], d[2], d[3], s, f);                \
  }
DEFINE_CALLS(float, f32)
DEFINE_CALLS(tg_f16, f16)
DEFINE_CALLS(tg_bf16, bf16)
#undef DEFINE_CALLS
// The launch a GPU call performs (the _desc twins, which libraries with GPU targets have), for
// the grid cases' report.
using Desc = tg_status (*)(const tg_launch*, void* const*, const int64_t*, float, int,
                           tg_gpu_launch_desc*);
#if TGB_HAS_GPU
#define DEFINE_DESCS(T, t)                                                                       \
  tg_status gemm_desc_##t(const tg_launch* l, void* const* p, const int64_t* d, float, int,      \
                          tg_gpu_launch_desc* o) {                                               \
    return tgb_gemm_##t##_desc(l, (const T*)p[0], (const T*)p[1], (T*)p[2], d[0], d[1], d[2], o); \
  }                                                                                              \
  tg_status flash_attention_fwd_desc_##t(const tg_launch* l, void* const* p, const int64_t* d,   \
                                         float s, int f, tg_gpu_launch_desc* o) {                \
    return tgb_flash_attention_fwd_##t##_desc(l, (const T*)p[0], (const T*)p[1], (const T*)p[2], \
                                              (T*)p[3], d[0], d[1], d[2], d[3], s, f, o);        \
  }
DEFINE_DESCS(float, f32)
DEFINE_DESCS(tg_f16, f16)
DEFINE_DESCS(tg_bf16, bf16)
#undef DEFINE_DESCS
#define DESC(name, t) name##_desc_##t
#else
#define DESC(name, t) nullptr
#endif
// gemm_fp8: FP8 A [M, K] and B [N, K], bf16 C; scale_a = the scalar, scale_b fixed.
#define DEFINE_FP8_CALL(T, t)                                                                    \
  tg_status gemm_fp8_##t(SIG) {                                                                  \
    (void)f;                                                                                     \
    return CALL_OR_QUERY(tgb_gemm_fp8_##t, (const T*)p[0], (const T*)p[1], (tg_bf16*)p[2], d[0], \
                         d[1], d[2], s, 2.5f);                                                   \
  }
DEFINE_FP8_CALL(tg_e4m3, e4m3)
DEFINE_FP8_CALL(tg_e5m2, e5m2)
#undef DEFINE_FP8_CALL

struct Shape {
  std::vector<int64_t> dims;
  int flag;
};

// One kernel x type: its call, the element count of each tensor (last = output), the
// reduction length L of the tolerance, which tensor scales the error (-1: the output; flash
// attention: V), the input range, and the shapes to run.
struct Kernel {
  std::string name;
  Ty ty;
  Call call;
  std::vector<size_t> (*sizes)(const int64_t*);
  int64_t (*length)(const int64_t*);
  int scale_tensor;
  float lo, hi;
  float (*scalar)(const int64_t*);
  std::vector<Shape> shapes;
  int out = -1; // the output's Ty where it differs from the inputs'
  Desc desc = nullptr; // the _desc twin (gemm and attention), for the grid cases
  Ty out_ty() const { return out < 0 ? ty : Ty(out); }
  Ty ty_of(size_t i, size_t nt) const { return i + 1 == nt ? out_ty() : ty; }
};

std::vector<size_t> mm_sizes(const int64_t* d) {
  return {size_t(d[0] * d[2]), size_t(d[2] * d[1]), size_t(d[0] * d[1])};
}
std::vector<size_t> mmb_sizes(const int64_t* d) {
  return {size_t(d[0] * d[2]), size_t(d[2] * d[1]), size_t(d[1]), size_t(d[0] * d[1])};
}
std::vector<size_t> mmt_sizes(const int64_t* d) { // B transposed: [N, K]
  return {size_t(d[0] * d[2]), size_t(d[1] * d[2]), size_t(d[0] * d[1])};
}
std::vector<size_t> row_sizes(const int64_t* d) { return {size_t(d[0] * d[1]), size_t(d[0] * d[1])}; }
std::vector<size_t> roww_sizes(const int64_t* d) {
  return {size_t(d[0] * d[1]), size_t(d[1]), size_t(d[0] * d[1])};
}
std::vector<size_t> att_sizes(const int64_t* d) {
  size_t n = size_t(d[0] * d[1] * d[2] * d[3]);
  return {n, n, n, n};
}
int64_t len_k(const int64_t* d) { return d[2]; }
int64_t len_n(const int64_t* d) { return d[1]; }
int64_t len_att(const int64_t* d) { return d[2] + d[3]; }
float no_scalar(const int64_t*) { return 0.f; }
float eps_scalar(const int64_t*) { return 1e-5f; }
float att_scale(const int64_t* d) { return 1.f / std::sqrt(float(d[3])); }
float fp8_scale(const int64_t*) { return 0.37f; }

std::vector<Kernel> kernels() {
  // The first shape of each list is the one --shapes 1 keeps (racecheck): several blocks, a
  // pipelined loop of several steps and ragged tails in every dim.
  // 1000x4352x2048 and the last shape of att leave an H200's last wave at most half full of
  // tiles with 32 k steps or more: sm_90a runs those tiles in parts that join (docs/hopper.md,
  // split tail); 100x2048x8192 splits every tile of its launch. 1000x4300x2048 has rows of
  // 4-byte multiples, not 16: tg_kernel<4>, no TMA.
  const std::vector<Shape> mm = {{{129, 65, 257}, 0}, {{7, 7, 7}, 0}, {{1, 200, 33}, 0},
                                 {{1000, 4352, 2048}, 0}, {{100, 2048, 8192}, 0},
                                 {{1000, 4300, 2048}, 0}};
  const std::vector<Shape> rows = {{{5, 2049}, 0}, {{3, 1000}, 0}, {{33, 7}, 0}};
  const std::vector<Shape> att = {{{1, 2, 129, 64}, 1}, {{1, 2, 129, 64}, 0},
                                  {{1, 1, 77, 128}, 0}, {{1, 1, 77, 128}, 1},
                                  {{1, 5, 4000, 128}, 0}};
  std::vector<Kernel> ks;
#define ADD_TYPE(t)                                                                              \
  ks.push_back({"gemm", Ty::t, gemm_##t, mm_sizes, len_k, -1, -1, 1, no_scalar, mm, -1,         \
                DESC(gemm, t)});                                                                 \
  ks.push_back({"gemm_bias_gelu", Ty::t, gemm_bias_gelu_##t, mmb_sizes, len_k, -1, -1, 1,       \
                no_scalar, mm});                                                                 \
  ks.push_back({"softmax", Ty::t, softmax_##t, row_sizes, len_n, -1, -4, 4, no_scalar, rows});   \
  ks.push_back({"rmsnorm", Ty::t, rmsnorm_##t, roww_sizes, len_n, -1, -1, 1, eps_scalar, rows}); \
  ks.push_back({"flash_attention_fwd", Ty::t, flash_attention_fwd_##t, att_sizes, len_att, 2,   \
                -1, 1, att_scale, att, -1, DESC(flash_attention_fwd, t)});
  ADD_TYPE(f32)
  ADD_TYPE(f16)
  ADD_TYPE(bf16)
#undef ADD_TYPE
  ks.push_back({"gemm_fp8", Ty::e4m3, gemm_fp8_e4m3, mmt_sizes, len_k, -1, -1, 1, fp8_scale, mm,
                int(Ty::bf16)});
  ks.push_back({"gemm_fp8", Ty::e5m2, gemm_fp8_e5m2, mmt_sizes, len_k, -1, -1, 1, fp8_scale, mm,
                int(Ty::bf16)});
  return ks;
}

// Runs one shape at element offset `off` on the GPU and on the CPU variant; prints a line.
// `report`: also say which variant ran and the grid of its launch (the grid cases).
void run(const Kernel& k, const Shape& sh, int off, std::mt19937& rng, bool report = false) {
  const int64_t* d = sh.dims.data();
  std::vector<size_t> n = k.sizes(d);
  const size_t nt = n.size();
  auto es = [&](size_t i) { return ty_bytes(k.ty_of(i, nt)); };
  std::vector<std::vector<unsigned char>> host(nt);
  struct DevBufs { // freed on every path: memcheck --leak-check must see no leak
    std::vector<void*> v;
    ~DevBufs() {
      for (void* p : v)
        cudaFree(p);
    }
  } bufs;
  bufs.v.assign(nt, nullptr);
  std::vector<void*>& dev = bufs.v;
  std::vector<void*> dptr(nt), hptr(nt);
  std::uniform_real_distribution<float> u(k.lo, k.hi);
  for (size_t i = 0; i < nt; ++i) {
    host[i].assign((n[i] + off) * es(i), 0xFF);
    if (i + 1 < nt)
      for (size_t j = 0; j < n[i]; ++j) {
        float v = u(rng);
        store(k.ty, host[i].data() + off * es(i), j, v == 0.f ? 0.5f : v);
        if (load(k.ty, host[i].data() + off * es(i), j) == 0.f) // rounded to 0 (FP8)
          store(k.ty, host[i].data() + off * es(i), j, 0.5f);
      }
    CK(cudaMalloc(&dev[i], host[i].size() + 16));
    CK(cudaMemcpy(dev[i], host[i].data(), host[i].size(), cudaMemcpyHostToDevice));
    dptr[i] = (unsigned char*)dev[i] + off * es(i);
    hptr[i] = host[i].data() + off * es(i);
  }
  tg_launch gpu{sizeof(tg_launch), 0, nullptr, 0}, cpu{sizeof(tg_launch), -1, nullptr, 0};
  std::string what = k.name + " " + ty_name(k.ty);
  for (int64_t x : sh.dims)
    what += " " + std::to_string(x);
  what += sh.flag ? " causal" : "";
  what += off ? " +1elem" : " aligned";
  tg_selection sel{};
  tg_status qs = k.call(&gpu, dptr.data(), d, k.scalar(d), sh.flag, &sel);
  if (qs != TG_OK || std::strncmp(sel.target ? sel.target : "", "sm_", 3) != 0) {
    std::printf("FAIL %s: query %s, target '%s': %s\n", what.c_str(), tg_status_string(qs),
                sel.target ? sel.target : "", sel.reason);
    ++g_fail;
    return;
  }
  if (report) {
    tg_gpu_launch_desc desc;
    tg_status ds = k.desc ? k.desc(&gpu, dptr.data(), d, k.scalar(d), sh.flag, &desc) : TG_ERR_NO_VARIANT;
    if (ds == TG_OK)
      std::printf("     %s runs %s, grid %u x %u x %u\n", what.c_str(), sel.variant, desc.grid[0],
                  desc.grid[1], desc.grid[2]);
    else
      std::printf("     %s runs %s (_desc: %s)\n", what.c_str(), sel.variant, tg_status_string(ds));
  } else if (off == 0 && sh.dims == k.shapes.front().dims && sh.flag == k.shapes.front().flag) {
    std::printf("     %s runs %s (%s)\n", (k.name + " " + ty_name(k.ty)).c_str(), sel.variant,
                sel.reason);
  }
  tg_status gs = k.call(&gpu, dptr.data(), d, k.scalar(d), sh.flag, nullptr);
  cudaError_t ce = cudaDeviceSynchronize();
  if (gs != TG_OK || ce != cudaSuccess) {
    std::printf("FAIL %s: gpu call %s, %s\n", what.c_str(), tg_status_string(gs),
                cudaGetErrorString(ce));
    ++g_fail;
    std::exit(1); // a CUDA error is sticky: nothing after it can be trusted
  }
  std::vector<unsigned char> got(host.back().size());
  CK(cudaMemcpy(got.data(), dev.back(), got.size(), cudaMemcpyDeviceToHost));
  tg_status cs = k.call(&cpu, hptr.data(), d, k.scalar(d), sh.flag, nullptr);
  if (cs != TG_OK) {
    std::printf("FAIL %s: cpu call %s\n", what.c_str(), tg_status_string(cs));
    ++g_fail;
    return;
  }
  const Ty ot = k.out_ty();
  const unsigned char* g = got.data() + off * es(nt - 1);
  const unsigned char* c = host.back().data() + off * es(nt - 1);
  double scale = 0, err = 0;
  size_t sn = k.scale_tensor < 0 ? n.back() : n[k.scale_tensor];
  const unsigned char* sp = k.scale_tensor < 0 ? c : host[k.scale_tensor].data() + off * es(k.scale_tensor);
  const Ty st = k.scale_tensor < 0 ? ot : k.ty;
  for (size_t j = 0; j < sn; ++j)
    scale = std::max(scale, (double)std::fabs(load(st, sp, j)));
  size_t nonfinite = 0;
  for (size_t j = 0; j < n.back(); ++j) {
    double a = load(ot, g, j), b = load(ot, c, j);
    if (!std::isfinite(a))
      ++nonfinite;
    err = std::max(err, std::fabs(a - b));
  }
  err /= scale > 0 ? scale : 1;
  // FP8 inputs are exact values: the error is the f32 accumulation's and the output's rounding.
  double tol = 2 * (3 * ty_u(ot) + 4 * std::ldexp(1.0, -24) * std::sqrt((double)k.length(d)));
  bool ok = nonfinite == 0 && err <= tol;
  std::printf("%s %s: variant-vs-cpu err %.3g (tol %.3g)%s\n", ok ? "ok  " : "FAIL", what.c_str(),
              err, tol, nonfinite ? ", non-finite outputs" : "");
  g_fail += !ok;
}

} // namespace

int main(int argc, char** argv) {
  std::string which;
  size_t max_shapes = SIZE_MAX;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--shapes") && i + 1 < argc)
      max_shapes = (size_t)std::atoi(argv[++i]);
    else if (which.empty() && argv[i][0] != '-')
      which = argv[i];
    else
      which = "?";
  }
  if (which.empty() || which == "?") {
    std::fprintf(stderr, "usage: %s [--shapes N] "
                 "<gemm|gemm_bias_gelu|gemm_fp8|softmax|rmsnorm|flash_attention_fwd|all|grid>\n", argv[0]);
    return 2;
  }
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    std::printf("tgb_sanitize: no CUDA device (%s): nothing to check\n", cudaGetErrorString(e));
    return 2;
  }
  std::mt19937 rng(7);
  int ran = 0;
  if (which == "grid") {
    // y or z over 65535 blocks: the heads or batches of attention (one row each), the row
    // tiles of a GEMM (65537 of 128 rows). The cheap ones first (--shapes).
    const std::vector<std::pair<std::string, Shape>> grid = {
        {"flash_attention_fwd", {{1, 70000, 1, 64}, 0}},
        {"flash_attention_fwd", {{70000, 1, 1, 64}, 0}},
        {"flash_attention_fwd", {{1, 65537, 3, 128}, 1}},
        {"gemm", {{65536 * 128 + 77, 8, 16}, 0}},
    };
    for (const Kernel& k : kernels()) {
      if (k.ty != Ty::f32 && k.ty != Ty::bf16)
        continue;
      for (size_t si = 0; si < grid.size() && si < max_shapes; ++si)
        if (grid[si].first == k.name)
          for (int off : {0, 1}) {
            if (off && k.name == "gemm") // 128 MB inputs: the aligned call says enough
              continue;
            run(k, grid[si].second, off, rng, true);
            ++ran;
          }
    }
  }
  for (const Kernel& k : kernels()) {
    if (which != "all" && which != k.name)
      continue;
    for (size_t si = 0; si < k.shapes.size() && si < max_shapes; ++si)
      for (int off : {0, 1}) {
        const Shape& sh = k.shapes[si];
        run(k, sh, off, rng);
        ++ran;
      }
  }
  if (!ran) {
    std::fprintf(stderr, "tgb_sanitize: unknown kernel '%s'\n", which.c_str());
    return 2;
  }
  // the runtime keeps split workspaces until exit: hand them back so that --leak-check sees
  // the library's own allocations only
  tg_cuda_free_split_workspaces();
  std::printf("%d passed, %d failed\n", ran - g_fail, g_fail);
  return g_fail ? 1 : 0;
}
