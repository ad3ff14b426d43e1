// Host-side check of an sm_90a GEMM variant's launch code (repitch_host.test): the host part
// of a generated file (tg_setup, tg_run, tg_realigned, the variant function) compiled with a
// C++ compiler against stand-ins for the CUDA runtime and driver, so that what a call does
// with unaligned pointers and rows that are no whole 16-byte chunks runs without a GPU:
//
// - device memory is host memory; cudaMemcpyAsync copies on the host, and the generated
//   kernels of tg_realigned (tg_repitch_kernel: rows into and out of a pitch) run on the host as
//   one thread, so their byte shifts are checked too (memory they should not touch holds
//   garbage);
// - cuTensorMapEncodeTiled keeps pointer, dims and strides inside the map and refuses what the
//   driver refuses (a pointer off 16 bytes, strides that are no multiple of 16, a box wider than
//   256 elements);
// - the "kernels" compute C on the host: the TMA kernels read A and B and write C only through
//   their tensor maps (so a wrong pitch gives a wrong C), the fallback kernels (tg_kernel<4>,
//   tg_kernel<0>) through the dense pointers.
//
// Each case prints which kernels ran, the copies made and the largest error against a
// double-precision reference computed from the original (dense, possibly unaligned) tensors.
// Compiled with -DTG_FP8 for gemm_fp8 (A [M, K], B [N, K] e4m3, two scales), -DTG_GELU for
// gemm_bias_gelu (bf16, C = gelu(A @ B + bias), bias read through its pointer by the kernels),
// else bf16 gemm; with -DTG_THREADS_C for the small_m variants (C stored by the TMA kernel's
// threads, in the vectors tg_setup allows: tg_params::tg_vec).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// ---- CUDA runtime stand-ins --------------------------------------------------------------------
#define __host__
#define __device__
#define __global__
#define __forceinline__ inline
typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1 };
typedef void* cudaStream_t;
struct dim3 {
  unsigned x, y, z;
  dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
enum cudaMemcpyKind { cudaMemcpyDeviceToDevice = 3 };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrL2CacheSize = 38 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaLaunchAttributeID { cudaLaunchAttributeProgrammaticStreamSerialization = 5 };
struct cudaLaunchAttribute {
  cudaLaunchAttributeID id;
  struct {
    int programmaticStreamSerializationAllowed;
  } val;
};
struct cudaLaunchConfig_t {
  dim3 gridDim, blockDim;
  size_t dynamicSmemBytes;
  cudaStream_t stream;
  cudaLaunchAttribute* attrs;
  unsigned numAttrs;
};

struct Log {
  int linear = 0, pitched = 0, bad_copies = 0;
  std::string kernels;
} g_log;

static cudaError_t cudaGetLastError() { return cudaSuccess; }
static cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
static cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int) {
  *v = a == cudaDevAttrMultiProcessorCount ? 132 : 62914560; // an H200
  return cudaSuccess;
}
template <typename K> static cudaError_t cudaFuncSetAttribute(K, cudaFuncAttribute, int) { return cudaSuccess; }
static cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind, cudaStream_t) {
  std::memmove(d, s, n);
  ++g_log.linear;
  return cudaSuccess;
}
// A launch runs the kernel once as one thread of one block: the kernels the generated host
// code defines itself (tg_repitch_kernel) walk their elements in a grid-stride loop.
static const dim3 blockIdx(0, 0, 0), threadIdx(0, 0, 0), gridDim(1, 1, 1), blockDim(1, 1, 1);
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
static uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }
static unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  return (unsigned)((((uint64_t)hi << 32) | lo) >> (shift & 31));
}
// Whether a launch may run: any kernel but tg_repitch_kernel does; that one (counted as a
// pitched copy) only where the workspace side (dst copying in, src copying back) is 16-byte
// aligned rows of at least the row's bytes rounded up to 16.
template <typename P> static auto launch_ok(const P& a, int) -> decltype(a.dp, bool()) {
  ++g_log.pitched; // the generated copy of rows into (or out of) a pitch
  const uintptr_t ws = a.e ? (uintptr_t)a.src : (uintptr_t)a.dst;
  const size_t pitch = a.e ? a.sp : a.dp;
  return ws % 16 == 0 && pitch % 16 == 0 && pitch >= (a.w + 15) / 16 * 16 && (!a.e || a.w % a.e == 0);
}
template <typename P> static bool launch_ok(const P&, long) { return true; }
template <typename K, typename P> static cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t*, K kernel, P p) {
  if (!launch_ok(p, 0)) {
    ++g_log.bad_copies;
    return cudaErrorInvalidValue;
  }
  kernel(p);
  return cudaSuccess;
}

// ---- driver stand-ins (cuda.h) -----------------------------------------------------------------
typedef uint64_t cuuint64_t;
typedef uint32_t cuuint32_t;
typedef int CUresult;
enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1 };
enum CUtensorMapDataType { CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0, CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9 };
enum CUtensorMapInterleave { CU_TENSOR_MAP_INTERLEAVE_NONE = 0 };
enum CUtensorMapSwizzle { CU_TENSOR_MAP_SWIZZLE_NONE = 0, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_128B };
enum CUtensorMapL2promotion { CU_TENSOR_MAP_L2_PROMOTION_NONE = 0, CU_TENSOR_MAP_L2_PROMOTION_L2_64B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B };
enum CUtensorMapFloatOOBfill { CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0 };
// What the stand-in encoder keeps in the 128-byte opaque map.
struct MapView {
  char* ptr;
  uint32_t rank;
  cuuint64_t dims[5], strides[4];
};
struct alignas(64) CUtensorMap {
  unsigned char opaque[128];
};
static_assert(sizeof(MapView) <= sizeof(CUtensorMap), "map view");
static CUresult fake_encode(CUtensorMap* out, CUtensorMapDataType, cuuint32_t rank, void* ptr, const cuuint64_t* dims,
                            const cuuint64_t* strides, const cuuint32_t* box, const cuuint32_t*, CUtensorMapInterleave,
                            CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) {
  // cuTensorMapEncodeTiled's rules for these maps: 16-byte aligned address, strides multiples
  // of 16 below 2^40, dims >= 1, boxes of 1..256
  if ((uintptr_t)ptr % 16 != 0)
    return CUDA_ERROR_INVALID_VALUE;
  for (uint32_t i = 0; i + 1 < rank; ++i)
    if (strides[i] % 16 != 0 || strides[i] >= (1ull << 40))
      return CUDA_ERROR_INVALID_VALUE;
  for (uint32_t i = 0; i < rank; ++i)
    if (dims[i] == 0 || box[i] == 0 || box[i] > 256)
      return CUDA_ERROR_INVALID_VALUE;
  MapView v{};
  v.ptr = (char*)ptr;
  v.rank = rank;
  std::memcpy(v.dims, dims, rank * sizeof(cuuint64_t));
  std::memcpy(v.strides, strides, (rank - 1) * sizeof(cuuint64_t));
  std::memset(out, 0, sizeof *out);
  std::memcpy(out, &v, sizeof v);
  return CUDA_SUCCESS;
}

// ---- runtime stand-ins (tilegen/variant.h) -----------------------------------------------------
#include "tilegen/variant.h"
static std::vector<void*> g_blocks;
static void* host_alloc(size_t n) {
  void* p = std::aligned_alloc(256, (n + 255) / 256 * 256 + 256);
  std::memset(p, 0xA5, (n + 255) / 256 * 256 + 256); // garbage, as fresh device memory
  g_blocks.push_back(p);
  return p;
}
extern "C" void* tg_cuda_driver_entry(const char* s) {
  return std::strcmp(s, "cuTensorMapEncodeTiled") == 0 ? (void*)&fake_encode : nullptr;
}
extern "C" int tg_cuda_stream_slot(void*) { return 0; }
extern "C" void* tg_cuda_split_workspace(int, void*, size_t bytes) {
  void* p = host_alloc(bytes);
  std::memset(p, 0, bytes);
  return p;
}
extern "C" void* tg_cuda_split_acquire(void*, size_t bytes, int* graph_owned) {
  *graph_owned = 0;
  return tg_cuda_split_workspace(0, nullptr, bytes);
}
extern "C" void tg_cuda_split_release(void*, void*) {}
static int g_held = 0;
extern "C" void* tg_cuda_realign_workspace(void*, size_t bytes, int* slot) {
  *slot = 0;
  ++g_held;
  return host_alloc(bytes);
}
extern "C" void tg_cuda_realign_release(int) { --g_held; }
extern "C" int tg_cuda_pdl(void) { return 0; }

// ---- element types -----------------------------------------------------------------------------
struct __nv_bfloat16 {
  uint16_t x;
};
struct __nv_fp8_e4m3 {
  uint8_t x;
};
static float value_of(__nv_bfloat16 v) {
  uint32_t u = (uint32_t)v.x << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
static __nv_bfloat16 bf16_of(float f) { // round to nearest even (finite values)
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return __nv_bfloat16{(uint16_t)(u >> 16)};
}
static float value_of(__nv_fp8_e4m3 v) {
  const int s = v.x >> 7, e = (v.x >> 3) & 15, m = v.x & 7;
  const float f = e ? std::ldexp(1.0f + m / 8.0f, e - 7) : std::ldexp(m / 8.0f, -6);
  return s ? -f : f;
}

// ---- the generated definitions and stand-in kernels --------------------------------------------
namespace {
#include "defs.inc" // TG_HD helpers, tile constants, struct tg_params

#ifdef TG_FP8
typedef __nv_fp8_e4m3 In;
#else
typedef __nv_bfloat16 In;
#endif

// A rank-2 map: element (r, c) is column c of row r (dims[0] columns, dims[1] rows).
struct Map2 {
  MapView v;
  explicit Map2(const CUtensorMap& m) { std::memcpy(&v, &m, sizeof v); }
  template <typename T> T* at(int64_t r, int64_t c) const {
    if (v.rank != 2 || r < 0 || c < 0 || (cuuint64_t)r >= v.dims[1] || (cuuint64_t)c >= v.dims[0]) {
      std::printf("map access out of bounds\n");
      std::exit(1);
    }
    return (T*)(v.ptr + r * v.strides[0]) + c;
  }
};

double scale(const tg_params& p) {
#ifdef TG_FP8
  return (double)p.scale_a * (double)p.scale_b;
#else
  (void)p;
  return 1.0;
#endif
}

// The epilogue: gemm_bias_gelu adds bias[n] (through the kernel's pointer, which may be a
// padded copy) and applies the exact GELU.
double epilogue(const tg_params& p, double s, int64_t n) {
#ifdef TG_GELU
  const double y = s + value_of(p.bias[n]);
  return 0.5 * y * (1.0 + std::erf(y / std::sqrt(2.0)));
#else
  (void)n;
  return s * scale(p);
#endif
}

// The TMA kernels: A and B through their maps only; C through its map, or (-DTG_THREADS_C: the
// ping-pong kernels of the small_m variants, whose threads store C from registers) densely at
// its pointer, in vectors of tg_vec bytes, which must be aligned (pointer and rows).
#ifdef TG_THREADS_C
struct ThreadsC {
  const tg_params& p;
  explicit ThreadsC(const tg_params& q) : p(q) {
    g_log.kernels += " (C vec " + std::to_string(p.tg_vec) + ")";
    const int w = p.tg_vec;
    if (w != 0 && w != 4 && w != 8 && w != 16) {
      std::printf("tg_vec %d\n", w);
      std::exit(1);
    }
    if (w && ((uintptr_t)p.C % w != 0 || p.N * 2 % w != 0)) {
      std::printf("tg_vec %d: C's pointer or rows allow no such vectors\n", w);
      std::exit(1);
    }
  }
  template <typename T> T* at(int64_t r, int64_t c) const { return (T*)p.C + r * p.N + c; }
};
#endif
void tma_gemm(const tg_params& p) {
#ifdef TG_THREADS_C
  const Map2 a(p.tg_tm_A_s), b(p.tg_tm_B_s);
  const ThreadsC c(p);
#else
  const Map2 a(p.tg_tm_A_s), b(p.tg_tm_B_s), c(p.tg_tm_out);
#endif
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t n = 0; n < p.N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < p.K; ++k)
#ifdef TG_FP8
        s += (double)value_of(*a.at<In>(m, k)) * value_of(*b.at<In>(n, k));
#else
        s += (double)value_of(*a.at<In>(m, k)) * value_of(*b.at<In>(k, n));
#endif
      *c.at<__nv_bfloat16>(m, n) = bf16_of((float)epilogue(p, s, n));
    }
}
void tg_kernel_ws(tg_params p) {
  g_log.kernels += " ws";
  tma_gemm(p);
}
void tg_kernel_ws_split(tg_params p) {
  g_log.kernels += " ws_split";
  tma_gemm(p);
}
// The fallback kernels: dense tensors at their own pointers.
template <int V> void tg_kernel(tg_params p) {
  g_log.kernels += " tg_kernel<" + std::to_string(V) + ">";
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t n = 0; n < p.N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < p.K; ++k)
#ifdef TG_FP8
        s += (double)value_of(p.A[m * p.K + k]) * value_of(p.B[n * p.K + k]);
#else
        s += (double)value_of(p.A[m * p.K + k]) * value_of(p.B[k * p.N + n]);
#endif
      p.C[m * p.N + n] = bf16_of((float)epilogue(p, s, n));
    }
}
} // namespace

#include "host.inc" // tg_setup ... the variant function

// ---- cases -------------------------------------------------------------------------------------
namespace {
In input(uint64_t i) { // small exact values
#ifdef TG_FP8
  static const uint8_t codes[] = {0x30, 0x38, 0xb8, 0x40, 0xc0, 0x34, 0x00, 0x3c}; // +-0.5 .. 2
  return In{codes[(i * 2654435761u >> 7) % 8]};
#else
  return bf16_of((float)((int)((i * 2654435761u >> 9) % 9) - 4) * 0.25f);
#endif
}

// M x N x K with every tensor `off` bytes past a 256-byte boundary.
void run(int64_t M, int64_t N, int64_t K, int off) {
#ifdef TG_FP8
  const size_t nb = (size_t)(N * K);
#else
  const size_t nb = (size_t)(K * N);
#endif
  const size_t na = (size_t)(M * K), nc = (size_t)(M * N);
  char* a = (char*)host_alloc(na * sizeof(In) + 64) + off;
  char* b = (char*)host_alloc(nb * sizeof(In) + 64) + off;
  char* c = (char*)host_alloc(nc * 2 + 64) + off;
  char* bias = (char*)host_alloc((size_t)N * 2 + 64) + off;
  for (int64_t i = 0; i < N; ++i)
    ((__nv_bfloat16*)bias)[i] = bf16_of((float)(i % 7) * 0.125f - 0.375f);
  In* A = (In*)a;
  In* B = (In*)b;
  __nv_bfloat16* C = (__nv_bfloat16*)c;
  for (size_t i = 0; i < na; ++i)
    A[i] = input(i);
  for (size_t i = 0; i < nb; ++i)
    B[i] = input(i + 7919);
  for (size_t i = 0; i < nc; ++i)
    C[i] = bf16_of(12345.0f); // every element must be overwritten
#ifdef TG_GELU
  void* tensors[4] = {a, b, bias, c};
#else
  void* tensors[3] = {a, b, c};
  (void)bias;
#endif
  const int64_t dims[3] = {M, N, K};
  const double scalars[2] = {0.5, 2.0};
  tg_variant_args args{tensors, dims, scalars, nullptr};
  tg_launch launch{sizeof(tg_launch), 0, nullptr, 0};
  g_log = Log{};
  const int st = TG_FN(&launch, &args);
  double worst = 0;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (int64_t k = 0; k < K; ++k)
#ifdef TG_FP8
        s += (double)value_of(A[m * K + k]) * value_of(B[n * K + k]);
      s *= 0.5 * 2.0;
#else
        s += (double)value_of(A[m * K + k]) * value_of(B[k * N + n]);
#endif
#ifdef TG_GELU
      s += value_of(((const __nv_bfloat16*)bias)[n]);
      s = 0.5 * s * (1.0 + std::erf(s / std::sqrt(2.0)));
#endif
      const double e = std::fabs(value_of(C[m * N + n]) - s) / (1.0 + std::fabs(s));
      worst = e > worst ? e : worst;
    }
  std::printf("%lldx%lldx%lld +%d: status %d, kernels%s, copies %d linear %d pitched%s, workspace %s, %s\n",
              (long long)M, (long long)N, (long long)K, off, st, g_log.kernels.empty() ? " none" : g_log.kernels.c_str(),
              g_log.linear, g_log.pitched, g_log.bad_copies ? " (refused copies)" : "", g_held ? "held" : "released",
              worst <= 1.0 / 128 ? "ok" : "WRONG");
}
} // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    long long M, N, K;
    int off = 0;
    if (std::sscanf(argv[i], "%lldx%lldx%lld+%d", &M, &N, &K, &off) < 3)
      return 2;
    run(M, N, K, off);
  }
  for (void* p : g_blocks)
    std::free(p);
  return 0;
}
