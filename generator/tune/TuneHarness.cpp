#include "tune/TuneHarness.h"

#include "emit/CRuntimeHelpers.h"

#include "dispatch/Naming.h"
#include "ir/IRPrinter.h"
#include "ir/IRVisitor.h"
#include "passes/ScheduleResolver.h"
#include "support/TextEscape.h"

#include <algorithm>
#include <sstream>

namespace tilegen::tune {

using ir::ScalarKind;

double tolerance(ir::DType t) {
  switch (t.kind) {
  case ScalarKind::F32: return 1e-3;
  case ScalarKind::F64: return 1e-9;
  case ScalarKind::F16: return 1e-2;
  case ScalarKind::BF16: return 2e-2;
  case ScalarKind::E4M3: return 0.125;
  case ScalarKind::E5M2: return 0.25;
  default: return 0; // integers and bool: exact
  }
}

namespace {

// The runtime support every harness has: deterministic fill, decoding to double, timing.
const char* kPrelude = R"(#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
)";

// After the helpers of the C variants (emit/CRuntimeHelpers: the 16-bit and FP8 conversions).
const char* kPreludeBody = R"(
/* Element i of tensor `seed`: an integer r in [-255, 255] from a 64-bit LCG. Floats take
 * r / 256 (exact in every float type but fp8, which takes a code of magnitude 1/8 to 2);
 * integers a small value, so that sums do not overflow. */
static uint64_t lcg_next(uint64_t* s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 33;
}
static int lcg_r(uint64_t* s) { return (int)(lcg_next(s) % 511) - 255; }
static uint8_t code_e4m3(uint64_t* s) { uint64_t r = lcg_next(s); return (uint8_t)(((r & 1) << 7) | ((4 + (r >> 1) % 4) << 3) | ((r >> 3) & 7)); }
static uint8_t code_e5m2(uint64_t* s) { uint64_t r = lcg_next(s); return (uint8_t)(((r & 1) << 7) | ((12 + (r >> 1) % 4) << 2) | ((r >> 3) & 3)); }

static void fill_f32(float* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = lcg_r(&s) / 256.0f; }
static void fill_f64(double* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = lcg_r(&s) / 256.0; }
static void fill_f16(uint16_t* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = tg_f32_to_f16(lcg_r(&s) / 256.0f); }
static void fill_bf16(uint16_t* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = tg_f32_to_bf16(lcg_r(&s) / 256.0f); }
static void fill_e4m3(uint8_t* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = code_e4m3(&s); }
static void fill_e5m2(uint8_t* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = code_e5m2(&s); }
static void fill_i8(int8_t* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = (int8_t)(lcg_r(&s) % 8); }
static void fill_i32(int32_t* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = lcg_r(&s) % 16; }
static void fill_i64(int64_t* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = lcg_r(&s) % 16; }
static void fill_bool(uint8_t* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = (uint8_t)(lcg_r(&s) & 1); }
static void fill_u8(uint8_t* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = (uint8_t)(lcg_r(&s) & 255); }
/* OCP MX e8m0 scales (packed e8m0 tensors are bytes): exponents 2^-3 .. 2^4, so that sums
   over long rows stay finite (random bytes reach 2^128 and the NaN code 255). */
static void fill_e8m0(uint8_t* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = (uint8_t)(124 + (lcg_r(&s) & 7)); }
static void fill_u16(uint16_t* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = (uint16_t)(lcg_r(&s) & 255); }
static void fill_u32(uint32_t* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = (uint32_t)(lcg_r(&s) & 255); }
static void fill_u64(uint64_t* p, int64_t n, uint64_t s) { for (int64_t i = 0; i < n; ++i) p[i] = (uint64_t)(lcg_r(&s) & 255); }

static double get_f32(const void* p, int64_t i) { return ((const float*)p)[i]; }
static double get_f64(const void* p, int64_t i) { return ((const double*)p)[i]; }
static double get_f16(const void* p, int64_t i) { return tg_f16_to_f32(((const uint16_t*)p)[i]); }
static double get_bf16(const void* p, int64_t i) { return tg_bf16_to_f32(((const uint16_t*)p)[i]); }
static double get_e4m3(const void* p, int64_t i) { return tg_e4m3_to_f32(((const uint8_t*)p)[i]); }
static double get_e5m2(const void* p, int64_t i) { return tg_e5m2_to_f32(((const uint8_t*)p)[i]); }
static double get_i8(const void* p, int64_t i) { return ((const int8_t*)p)[i]; }
static double get_i32(const void* p, int64_t i) { return ((const int32_t*)p)[i]; }
static double get_i64(const void* p, int64_t i) { return (double)((const int64_t*)p)[i]; }
static double get_bool(const void* p, int64_t i) { return ((const uint8_t*)p)[i]; }
static double get_u8(const void* p, int64_t i) { return ((const uint8_t*)p)[i]; }
static double get_u16(const void* p, int64_t i) { return ((const uint16_t*)p)[i]; }
static double get_u32(const void* p, int64_t i) { return ((const uint32_t*)p)[i]; }
/* exact below 2^53; wrapped u64 results above it compare as doubles */
static double get_u64(const void* p, int64_t i) { return (double)((const uint64_t*)p)[i]; }

/* 0 if `got` matches `want` within tol * (|want| + mean |want|), the mean over the element's
 * row (its innermost `row` elements: an attention row's magnitude depends on how many keys
 * it averages); else prints the first mismatch and returns 1. NaN matches NaN, infinities
 * match themselves. */
static int compare(int shape, const char* name, const void* got, const void* want, int64_t n,
                   int64_t row, double (*get)(const void*, int64_t), double tol) {
  double mean = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (i % row == 0) {
      mean = 0;
      for (int64_t j = i; j < i + row && j < n; ++j) {
        double w = get(want, j);
        if (isfinite(w)) mean += fabs(w);
      }
      mean /= (double)row;
    }
    double g = get(got, i), w = get(want, i);
    int same = (isnan(g) && isnan(w)) || g == w ||
               (isfinite(g) && isfinite(w) && fabs(g - w) <= tol * (fabs(w) + mean));
    if (!same) {
      printf("shape %d mismatch %s at %lld: got %.9g, expected %.9g (tolerance %g x (|expected| + %.3g))\n",
             shape, name, (long long)i, g, w, tol, mean);
      return 1;
    }
  }
  return 0;
}

/* The reference's outputs, kept in files between harnesses: 1 if `p` (n bytes) was read from
 * `path`. */
static int cache_read(const char* path, void* p, size_t n) {
  FILE* f = path[0] ? fopen(path, "rb") : NULL;
  if (!f) return 0;
  size_t got = fread(p, 1, n, f);
  int extra = fgetc(f) != EOF;
  fclose(f);
  return got == n && !extra;
}
static void cache_write(const char* path, const void* p, size_t n) {
  FILE* f = path[0] ? fopen(path, "wb") : NULL;
  if (!f) return;
  size_t put = fwrite(p, 1, n, f);
  if (fclose(f) != 0 || put != n) remove(path);
}

/* Whether shape `s` is in the optional comma-separated list argv[4] (none: every shape). */
static int wanted(int s, int argc, char** argv) {
  if (argc < 5) return 1;
  for (const char* p = argv[4]; *p;) {
    char* end;
    long v = strtol(p, &end, 10);
    if (end == p) return 0;
    if (v == s) return 1;
    p = *end == ',' ? end + 1 : end;
  }
  return 0;
}

/* A tensor's host copy; exits with the harness's error line where the shape needs more memory
   than the machine gives (a representative shape of 4096 in every dim can ask for terabytes). */
static void* host_alloc(size_t bytes) {
  void* p = malloc(bytes + 1);
  if (!p) {
    printf("shape -1 error host allocation of %zu bytes failed (give smaller shapes: --shape, or the class's shape: in the spec)\n", bytes);
    exit(1);
  }
  return p;
}

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
)";

const char* kCudaPrelude = R"(#include <cuda_runtime.h>
static void* dev_alloc(size_t bytes) {
  void* p = NULL;
  if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
    printf("shape -1 error cudaMalloc of %zu bytes failed\n", bytes);
    exit(1);
  }
  return p;
}
)";

std::string suffix(ir::DType t) {
  switch (t.kind) {
  case ScalarKind::F32: return "f32";
  case ScalarKind::F64: return "f64";
  case ScalarKind::F16: return "f16";
  case ScalarKind::BF16: return "bf16";
  case ScalarKind::E4M3: return "e4m3";
  case ScalarKind::E5M2: return "e5m2";
  case ScalarKind::I8: return "i8";
  case ScalarKind::I32: return "i32";
  case ScalarKind::I64: return "i64";
  case ScalarKind::Bool: return "bool";
  case ScalarKind::U8: return "u8";
  case ScalarKind::U16: return "u16";
  case ScalarKind::U32: return "u32";
  case ScalarKind::U64: return "u64";
  }
  return "";
}

} // namespace

namespace {
// Global tensors loaded anywhere inside one expression.
class TensorLoads : public ir::IRVisitor {
public:
  std::vector<const ir::Buffer*> found;

protected:
  void visit_Load(const ir::Load* l) override {
    if (l->buffer->scope == ir::MemScope::Global)
      found.push_back(l->buffer.get());
    ir::IRVisitor::visit_Load(l);
  }
};

class IndexTensors : public ir::IRVisitor {
public:
  std::vector<std::pair<const ir::Buffer*, std::string>> found; // first use of each

protected:
  void check(const ir::Expr& e, const char* what) {
    if (!e)
      return;
    TensorLoads t;
    t.visit(e);
    for (const ir::Buffer* b : t.found)
      if (std::none_of(found.begin(), found.end(), [&](const auto& f) { return f.first == b; }))
        found.push_back({b, what});
  }
  void visit_region(const ir::Region& r) override {
    for (const auto& o : r.offsets)
      check(o, "a copy's start index");
    ir::IRVisitor::visit_region(r);
  }
  void visit_For(const ir::For* f) override {
    check(f->start, "a loop's start");
    check(f->extent, "a loop's trip count");
    ir::IRVisitor::visit_For(f);
  }
  void visit_Load(const ir::Load* l) override {
    for (const auto& i : l->indices)
      check(i, "the index of a load");
    ir::IRVisitor::visit_Load(l);
  }
  void visit_Store(const ir::Store* st) override {
    for (const auto& i : st->indices)
      check(i, "the index of a store");
    ir::IRVisitor::visit_Store(st);
  }
};
} // namespace

std::vector<std::pair<const ir::Buffer*, std::string>> index_tensors(const ir::Kernel& k) {
  IndexTensors v;
  v.visit(k.body);
  return v.found;
}

std::string fill_file_name(size_t shape, const std::string& tensor) {
  return "fill_s" + std::to_string(shape) + "_" + tensor + ".bin";
}

std::string harness_source(const HarnessSpec& h, std::string& error) {
  const ir::Kernel& k = *h.kernel;
  std::ostringstream os;
  os << "/* tilegen tune harness: kernel " << k.name << ", instance " << h.instance.name
     << " (docs/tune.md) */\n";
  // The 16-bit and FP8 conversions are the C variants' own (exact: r / 256 is representable).
  os << kPrelude
     << emit::c_helper_source({"tg_f32_to_f16", "tg_f32_to_bf16", "tg_f16_to_f32",
                               "tg_bf16_to_f32", "tg_e4m3_to_f32", "tg_e5m2_to_f32"})
     << kPreludeBody;
  if (h.cuda)
    os << kCudaPrelude;
  os << "#include \"" << dispatch::header_file_name(h.ref_lib) << "\"\n#include \""
     << dispatch::header_file_name(h.cand_lib) << "\"\n\n";

  for (const auto& t : k.tensors)
    if (suffix(t->dtype).empty()) {
      error = "tensor '" + t->name + "' has an element type the harness cannot fill";
      return "";
    }
  // Element counts of every tensor at every shape, folded here.
  std::vector<std::vector<int64_t>> counts;
  std::vector<std::vector<int64_t>> inner; // the innermost extent (a row's length)
  for (size_t s = 0; s < h.shapes.size(); ++s) {
    ir::VarMap m = passes::instance_var_map(k, h.instance.values);
    size_t di = 0;
    for (const auto& d : k.dims)
      if (d.var->kind == ir::VarKind::Dim)
        m[d.var.get()] = ir::make_i64(h.shapes[s].at(di++));
    std::vector<int64_t> row, rows;
    for (const auto& t : k.tensors) {
      int64_t n = 1, last = 1;
      for (const auto& e : t->shape) {
        auto v = passes::fold_with(e, m);
        if (!v) {
          error = "the extent " + ir::to_string(e) + " of tensor '" + t->name +
                  "' does not fold at a tuning shape";
          return "";
        }
        n *= *v;
        last = *v;
      }
      row.push_back(n);
      rows.push_back(std::max<int64_t>(last, 1));
    }
    counts.push_back(row);
    inner.push_back(rows);
  }

  const std::string ref_fn = dispatch::public_function_name(h.ref_lib, k);
  const std::string cand_fn = dispatch::public_function_name(h.cand_lib, k);
  // The call's arguments after the tensors: dims, scalars, flags (DispatchEmitter's order).
  auto tail_args = [&](size_t s) {
    std::string a;
    size_t di = 0;
    for (const auto& d : k.dims)
      a += ", (int64_t)" + std::to_string(d.var->kind == ir::VarKind::Dim
                                              ? h.shapes[s][di++]
                                              : h.instance.values.at(d.var->name));
    for (const auto& sc : k.scalars)
      a += ", " + h.scalars.at(sc->name);
    for (const auto& f : k.flags)
      a += ", " + std::to_string(h.instance.values.at(f->name));
    return a;
  };

  os << "int main(int argc, char** argv) {\n"
     << "  if (argc != 4 && argc != 5) { fprintf(stderr, \"usage: %s verify|time RUNS WARMUP [SHAPE,...]\\n\", argv[0]); return 2; }\n"
     << "  int verify = strcmp(argv[1], \"verify\") == 0, runs = atoi(argv[2]), warmup = atoi(argv[3]);\n"
     << "  tg_launch host = {sizeof(tg_launch), -1, NULL, 0};\n"
     << "  (void)verify; (void)host;\n";
  if (h.cuda)
    os << "  cudaStream_t stream; cudaStreamCreate(&stream);\n"
       << "  cudaEvent_t ev0, ev1; cudaEventCreate(&ev0); cudaEventCreate(&ev1);\n"
       << "  tg_launch dev = {sizeof(tg_launch), 0, (void*)stream, 0};\n";
  else
    os << "  tg_launch dev = host;\n";
  os << "  double* times = (double*)malloc(sizeof(double) * (size_t)(runs > 0 ? runs : 1));\n";
  for (size_t s = 0; s < h.shapes.size(); ++s) {
    os << "  if (wanted(" << s << ", argc, argv)) { /* shape " << s << ":";
    size_t di = 0;
    for (const auto& d : k.dims)
      if (d.var->kind == ir::VarKind::Dim)
        os << " " << d.var->name << "=" << h.shapes[s][di++];
    os << " */\n    tg_status st;\n";
    std::string ref_args = "&host", cand_args = "&dev";
    for (size_t ti = 0; ti < k.tensors.size(); ++ti) {
      const auto& t = k.tensors[ti];
      const std::string v = "t_" + t->name; // no clash with the harness's own names
      const std::string n = std::to_string(counts[s][ti]);
      const std::string bytes = n + "ull * " + std::to_string(t->dtype.bytes());
      const std::string cty = dispatch::c_type_name(t->dtype);
      const std::string seed = std::to_string(0x9E3779B97F4A7C15ull * (ti + 1)) + "ull";
      const bool out = t->access != ir::Access::Read;
      os << "    " << cty << "* " << v << " = (" << cty << "*)host_alloc(" << bytes << ");\n";
      if (std::find(h.filled.begin(), h.filled.end(), t->name) != h.filled.end()) {
        // --fill: the values tilegen computed for this shape (tune/TuneFill)
        const std::string path =
            json_string(h.ref_cache_dir + "/" + fill_file_name(s, t->name)); // a C literal too
        os << "    if (!cache_read(" << path << ", " << v << ", " << bytes << ")) { printf(\"shape "
           << s << " error the --fill values of " << t->name
           << " are missing\\n\"); return 1; }\n";
      } else {
        os << "    fill_" << (t->packed == ir::Packed::E8M0 ? "e8m0" : suffix(t->dtype)) << "((void*)"
           << v << ", " << n << ", " << seed << ");\n";
      }
      std::string ref_ptr = v, cand_ptr = v;
      if (out) { // the reference writes its own copy
        os << "    " << cty << "* " << v << "_ref = (" << cty << "*)host_alloc(" << bytes
           << ");\n    memcpy(" << v << "_ref, " << v << ", " << bytes << ");\n";
        ref_ptr = v + "_ref";
      }
      if (h.cuda) {
        os << "    " << cty << "* " << v << "_dev = (" << cty << "*)dev_alloc(" << bytes
           << ");\n    cudaMemcpy(" << v << "_dev, " << v << ", " << bytes
           << ", cudaMemcpyHostToDevice);\n";
        cand_ptr = v + "_dev";
      }
      ref_args += ", " + ref_ptr;
      cand_args += ", " + cand_ptr;
    }
    const std::string tail = tail_args(s);
    auto check = [&](const std::string& what, const std::string& call) {
      os << "    st = " << call << ";\n"
         << "    if (st != TG_OK) { printf(\"shape " << s << " error " << what
         << ": %s\\n\", tg_status_string(st)); fflush(stdout); return 1; }\n";
    };
    os << "    if (verify) {\n";
    // The reference: from the cache if every output of this shape is there.
    {
      std::string all_read = "1", writes;
      for (size_t ti = 0; ti < k.tensors.size(); ++ti) {
        const auto& t = k.tensors[ti];
        if (t->access == ir::Access::Read)
          continue;
        const std::string v = "t_" + t->name;
        const std::string path = json_string( // a C string literal too
            h.ref_cache_dir.empty()
                ? std::string()
                : h.ref_cache_dir + "/ref_s" + std::to_string(s) + "_" + t->name + ".bin");
        const std::string bytes = std::to_string(counts[s][ti]) + "ull * " +
                                  std::to_string(t->dtype.bytes());
        all_read += " && cache_read(" + path + ", " + v + "_ref, " + bytes + ")";
        writes += "      cache_write(" + path + ", " + v + "_ref, " + bytes + ");\n";
      }
      os << "    if (!(" << all_read << ")) {\n";
      os << "  ";
      check("reference call", ref_fn + "(" + ref_args + tail + ")");
      os << writes << "    }\n";
    }
    check("candidate call", cand_fn + "(" + cand_args + tail + ")");
    if (h.cuda)
      os << "    if (cudaStreamSynchronize(stream) != cudaSuccess) { printf(\"shape " << s
         << " error candidate run: %s\\n\", cudaGetErrorString(cudaGetLastError())); return 1; }\n";
    for (size_t ti = 0; ti < k.tensors.size(); ++ti) {
      const auto& t = k.tensors[ti];
      const std::string v = "t_" + t->name; // no clash with the harness's own names
      if (t->access == ir::Access::Read)
        continue;
      const std::string bytes = std::to_string(counts[s][ti]) + "ull * " +
                                std::to_string(t->dtype.bytes());
      if (h.cuda)
        os << "    cudaMemcpy(" << v << ", " << v << "_dev, " << bytes
           << ", cudaMemcpyDeviceToHost);\n";
      os << "    if (compare(" << s << ", \"" << t->name << "\", " << v << ", " << v << "_ref, " << counts[s][ti] << ", " << inner[s][ti] << ", get_" << suffix(t->dtype) << ", "
         << tolerance(t->dtype) << ")) return 1;\n";
    }
    os << "    }\n";
    // Timing: warm-up, then each run alone.
    os << "    for (int r = 0; r < warmup; ++r) {\n";
    check("candidate call", cand_fn + "(" + cand_args + tail + ")");
    os << "    }\n";
    if (h.cuda)
      os << "    cudaStreamSynchronize(stream);\n";
    os << "    for (int r = 0; r < runs; ++r) {\n";
    if (h.cuda) {
      os << "      cudaEventRecord(ev0, stream);\n  ";
      check("candidate call", cand_fn + "(" + cand_args + tail + ")");
      os << "      cudaEventRecord(ev1, stream);\n"
         << "      if (cudaEventSynchronize(ev1) != cudaSuccess) { printf(\"shape " << s
         << " error candidate run: %s\\n\", cudaGetErrorString(cudaGetLastError())); return 1; }\n"
         << "      float ms = 0; cudaEventElapsedTime(&ms, ev0, ev1); times[r] = ms * 1e3;\n";
    } else {
      os << "      double t0 = now_us();\n  ";
      check("candidate call", cand_fn + "(" + cand_args + tail + ")");
      os << "      times[r] = now_us() - t0;\n";
    }
    os << "    }\n    printf(\"shape " << s << " ok\");\n"
       << "    for (int r = 0; r < runs; ++r) printf(\" %.3f\", times[r]);\n"
       << "    printf(\"\\n\");\n    fflush(stdout);\n";
    for (const auto& t : k.tensors) {
      const std::string v = "t_" + t->name;
      os << "    free(" << v << ");\n";
      if (t->access != ir::Access::Read)
        os << "    free(" << v << "_ref);\n";
      if (h.cuda)
        os << "    cudaFree(" << v << "_dev);\n";
    }
    os << "  }\n";
  }
  os << "  free(times);\n  return 0;\n}\n";
  return os.str();
}

} // namespace tilegen::tune
