// tgb_host_cost: the host time of one call of a generated dispatch function against a raw
// cudaLaunchKernel of the very kernel it launches (issue #3, point 10: <= 1.2x), in one binary.
//
// The raw launch comes from the dispatch function's `_desc` twin (<lib>_<kernel>_<types>_desc,
// same arguments plus a tg_gpu_launch_desc*: the launch the call would perform, described;
// runtime/include/tilegen/variant.h), filled once before the loop and launched as is. The
// library is linked statically, so the kernel, the dispatch code and this file share one
// cudart: a function registered with one cudart cannot be launched through another.
//
// Method: per case, warm up both paths, then 51 rounds; in each round one batch of 200 calls
// of each path (their order alternating between rounds), timed with a host clock around the
// enqueue loop only, the stream drained between batches. Per-call cost = batch time / 200;
// the figure is the median over rounds. The kernels are tiny, so the GPU keeps up with the
// host and the queue never fills (a full queue would make the host wait and time the GPU).
// Also checked: the raw launch and a CUDA graph capturing the dispatch call give output
// bit-identical to the dispatch call; and, for scale, a raw launch of an empty kernel.
//
//   tgb_host_cost [--json PATH] [--rounds N] [--batch N]
#include "tgb.h"
#include "tilegen/variant.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

__global__ void empty_kernel() {}

#define CK(expr)                                                                                 \
  do {                                                                                           \
    cudaError_t e_ = (expr);                                                                     \
    if (e_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(e_)); \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)

using DispatchFn = tg_status (*)(const tg_launch*, void* const* t);
using QueryFn = tg_status (*)(const tg_launch*, void* const* t, tg_selection*);
using DescFn = tg_status (*)(const tg_launch*, void* const* t, tg_gpu_launch_desc*);

// One measured call: the kernel's tensors (bf16, `elems` each; the last is the output) and
// its dispatch function, _query and _desc twins with the other arguments bound.
struct Case {
  const char* name;
  std::vector<size_t> elems;
  DispatchFn call;
  QueryFn query;
  DescFn desc;
};

constexpr int64_t kRows = 64, kCols = 1024, kGemm = 128;
constexpr float kEps = 1e-5f;

std::vector<Case> cases() {
  return {
      {"softmax_bf16 64x1024", {kRows * kCols, kRows * kCols},
       [](const tg_launch* l, void* const* t) {
         return tgb_softmax_bf16(l, (const tg_bf16*)t[0], (tg_bf16*)t[1], kRows, kCols);
       },
       [](const tg_launch* l, void* const* t, tg_selection* s) {
         return tgb_softmax_bf16_query(l, (const tg_bf16*)t[0], (tg_bf16*)t[1], kRows, kCols,
                                          s);
       },
       [](const tg_launch* l, void* const* t, tg_gpu_launch_desc* d) {
         return tgb_softmax_bf16_desc(l, (const tg_bf16*)t[0], (tg_bf16*)t[1], kRows, kCols, d);
       }},
      {"rmsnorm_bf16 64x1024", {kRows * kCols, kCols, kRows * kCols},
       [](const tg_launch* l, void* const* t) {
         return tgb_rmsnorm_bf16(l, (const tg_bf16*)t[0], (const tg_bf16*)t[1], (tg_bf16*)t[2],
                                    kRows, kCols, kEps);
       },
       [](const tg_launch* l, void* const* t, tg_selection* s) {
         return tgb_rmsnorm_bf16_query(l, (const tg_bf16*)t[0], (const tg_bf16*)t[1],
                                          (tg_bf16*)t[2], kRows, kCols, kEps, s);
       },
       [](const tg_launch* l, void* const* t, tg_gpu_launch_desc* d) {
         return tgb_rmsnorm_bf16_desc(l, (const tg_bf16*)t[0], (const tg_bf16*)t[1],
                                         (tg_bf16*)t[2], kRows, kCols, kEps, d);
       }},
      {"gemm_bf16 128^3", {kGemm * kGemm, kGemm * kGemm, kGemm * kGemm},
       [](const tg_launch* l, void* const* t) {
         return tgb_gemm_bf16(l, (const tg_bf16*)t[0], (const tg_bf16*)t[1], (tg_bf16*)t[2],
                                 kGemm, kGemm, kGemm);
       },
       [](const tg_launch* l, void* const* t, tg_selection* s) {
         return tgb_gemm_bf16_query(l, (const tg_bf16*)t[0], (const tg_bf16*)t[1],
                                       (tg_bf16*)t[2], kGemm, kGemm, kGemm, s);
       },
       [](const tg_launch* l, void* const* t, tg_gpu_launch_desc* d) {
         return tgb_gemm_bf16_desc(l, (const tg_bf16*)t[0], (const tg_bf16*)t[1],
                                      (tg_bf16*)t[2], kGemm, kGemm, kGemm, d);
       }},
  };
}

double now_us() {
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

template <class F>
double batch_us(F&& f, int batch, cudaStream_t s) {
  CK(cudaStreamSynchronize(s));
  double t0 = now_us();
  for (int i = 0; i < batch; ++i)
    f();
  double t1 = now_us();
  CK(cudaStreamSynchronize(s));
  return (t1 - t0) / batch;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\')
      o += '\\';
    if ((unsigned char)c >= 0x20)
      o += c;
  }
  return o;
}

struct Result {
  std::string name, variant, why, graph_note;
  double dispatch_us = -1, raw_us = -1, desc_us = -1, query_us = -1;
  bool same_output = false, graph_ok = false;
};

std::vector<uint16_t> download(const void* d, size_t n) {
  std::vector<uint16_t> h(n);
  CK(cudaMemcpy(h.data(), d, n * 2, cudaMemcpyDeviceToHost));
  return h;
}

Result run_case(const Case& c, cudaStream_t s, int rounds, int batch, std::mt19937& rng) {
  Result r;
  r.name = c.name;
  std::vector<void*> t(c.elems.size());
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (size_t i = 0; i < t.size(); ++i) {
    CK(cudaMalloc(&t[i], c.elems[i] * 2));
    std::vector<uint16_t> h(c.elems[i]);
    for (auto& x : h) {
      x = tg_float_to_bf16(u(rng));
      if ((x & 0x7FFF) == 0)
        x = 0x3F00; // 0.5: never zero
    }
    CK(cudaMemcpy(t[i], h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  }
  void* out = t.back();
  size_t out_n = c.elems.back();
  tg_launch launch{sizeof(tg_launch), 0, s, 0};
  tg_selection sel{};
  tg_status qs = c.query(&launch, t.data(), &sel);
  r.variant = sel.variant ? sel.variant : "";
  std::string target = sel.target ? sel.target : "";
  if (qs != TG_OK || target.rfind("sm_", 0) != 0) {
    r.why = "query: " + std::string(tg_status_string(qs)) + ", target '" + target +
            "': " + sel.reason;
    return r;
  }
  static tg_gpu_launch_desc desc; // 1 KiB of params: not on the stack of every call
  std::memset(&desc, 0, sizeof desc);
  tg_status ds = c.desc(&launch, t.data(), &desc);
  if (ds != TG_OK) {
    r.why = std::string("_desc returned ") + tg_status_string(ds);
    return r;
  }
  dim3 grid(desc.grid[0], desc.grid[1], desc.grid[2]);
  dim3 block(desc.block[0], desc.block[1], desc.block[2]);
  auto dispatch = [&] {
    if (c.call(&launch, t.data()) != TG_OK) {
      std::fprintf(stderr, "%s: dispatch call failed\n", c.name);
      std::exit(2);
    }
  };
  auto raw = [&] { CK(cudaLaunchKernel(desc.func, grid, block, desc.args, desc.smem_bytes, s)); };

  // Same output three ways (the dispatch call first: it opts in to > 48 KB smem once).
  CK(cudaMemset(out, 0xFF, out_n * 2));
  dispatch();
  CK(cudaStreamSynchronize(s));
  CK(cudaGetLastError());
  auto ref = download(out, out_n);
  CK(cudaMemset(out, 0xFF, out_n * 2));
  raw();
  CK(cudaStreamSynchronize(s));
  r.same_output = download(out, out_n) == ref;
  // Graph capture must not take the measurement down with it: a failure is a result.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec;
  cudaError_t ge = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  tg_status gs = ge == cudaSuccess ? c.call(&launch, t.data()) : TG_OK;
  if (ge == cudaSuccess)
    ge = cudaStreamEndCapture(s, &graph);
  if (ge == cudaSuccess && gs == TG_OK && (ge = cudaGraphInstantiate(&exec, graph, 0)) == cudaSuccess) {
    CK(cudaMemset(out, 0xFF, out_n * 2));
    CK(cudaGraphLaunch(exec, s));
    CK(cudaStreamSynchronize(s));
    r.graph_ok = download(out, out_n) == ref;
    CK(cudaGraphExecDestroy(exec));
  }
  if (gs != TG_OK)
    r.graph_note = std::string("dispatch under capture returned ") + tg_status_string(gs);
  else if (ge != cudaSuccess)
    r.graph_note = std::string("capture: ") + cudaGetErrorString(ge);
  if (graph)
    cudaGraphDestroy(graph);
  (void)cudaGetLastError();

  for (int i = 0; i < 10; ++i) { // warm-up
    batch_us(dispatch, batch, s);
    batch_us(raw, batch, s);
  }
  std::vector<double> d, w, q, dd;
  for (int i = 0; i < rounds; ++i) {
    if (i % 2) {
      w.push_back(batch_us(raw, batch, s));
      d.push_back(batch_us(dispatch, batch, s));
    } else {
      d.push_back(batch_us(dispatch, batch, s));
      w.push_back(batch_us(raw, batch, s));
    }
  }
  for (int i = 0; i < rounds; ++i) {
    double t0 = now_us();
    for (int j = 0; j < batch; ++j)
      c.query(&launch, t.data(), &sel);
    double t1 = now_us();
    for (int j = 0; j < batch; ++j)
      c.desc(&launch, t.data(), &desc);
    double t2 = now_us();
    q.push_back((t1 - t0) / batch);
    dd.push_back((t2 - t1) / batch);
  }
  CK(cudaGetLastError());
  r.dispatch_us = median(d);
  r.raw_us = median(w);
  r.query_us = median(q);
  r.desc_us = median(dd);
  for (void* p : t)
    CK(cudaFree(p));
  return r;
}

} // namespace

int main(int argc, char** argv) {
  const char* json_path = nullptr;
  int rounds = 51, batch = 200;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json") && i + 1 < argc)
      json_path = argv[++i];
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--batch") && i + 1 < argc)
      batch = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--json PATH] [--rounds N] [--batch N]\n", argv[0]);
      return 2;
    }
  }
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    std::printf("tgb_host_cost: no CUDA device (cudaGetDeviceCount: %s, %d devices): nothing "
                "to measure\n", cudaGetErrorString(e), n);
    return 3;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::mt19937 rng(12345);

  auto empty = [&] { CK(cudaLaunchKernel((const void*)empty_kernel, dim3(1), dim3(32), nullptr,
                                         0, s)); };
  for (int i = 0; i < 10; ++i)
    batch_us(empty, batch, s);
  std::vector<double> ev;
  for (int i = 0; i < rounds; ++i)
    ev.push_back(batch_us(empty, batch, s));
  double empty_us = median(ev);

  std::vector<Result> results;
  for (const Case& c : cases())
    results.push_back(run_case(c, s, rounds, batch, rng));

  std::printf("host cost per call on %s (median of %d batches of %d; empty-kernel "
              "cudaLaunchKernel %.2f us)\n\n", prop.name, rounds, batch, empty_us);
  std::printf("| case | variant | dispatch us | raw cudaLaunchKernel us | ratio | _query us | "
              "_desc us | same output | graph |\n|---|---|---|---|---|---|---|---|---|\n");
  int bad = 0;
  for (const Result& r : results) {
    if (!r.why.empty()) {
      std::printf("| %s | %s | - | - | - | - | - | - | FAIL: %s |\n", r.name.c_str(),
                  r.variant.c_str(), r.why.c_str());
      ++bad;
      continue;
    }
    bad += !r.same_output || !r.graph_ok;
    std::printf("| %s | %s | %.2f | %.2f | %.2fx | %.2f | %.2f | %s | %s%s%s |\n", r.name.c_str(),
                r.variant.c_str(), r.dispatch_us, r.raw_us, r.dispatch_us / r.raw_us, r.query_us,
                r.desc_us, r.same_output ? "yes" : "NO", r.graph_ok ? "ok" : "FAIL",
                r.graph_note.empty() ? "" : ": ", r.graph_note.c_str());
  }
  if (json_path) {
    FILE* f = std::fopen(json_path, "w");
    if (!f) {
      std::perror(json_path);
      return 2;
    }
    std::fprintf(f, "{\"device\": \"%s\", \"empty_kernel_us\": %.4f, \"rounds\": %d, "
                    "\"batch\": %d, \"cases\": [\n", json_escape(prop.name).c_str(), empty_us,
                 rounds, batch);
    for (size_t i = 0; i < results.size(); ++i) {
      const Result& r = results[i];
      std::fprintf(f, " {\"name\": \"%s\", \"variant\": \"%s\", \"why\": \"%s\"",
                   json_escape(r.name).c_str(), json_escape(r.variant).c_str(),
                   json_escape(r.why).c_str());
      if (r.why.empty())
        std::fprintf(f, ", \"dispatch_us\": %.4f, \"raw_us\": %.4f, \"ratio\": %.4f, "
                        "\"query_us\": %.4f, \"desc_us\": %.4f, \"same_output\": %s, "
                        "\"graph_ok\": %s, \"graph_note\": \"%s\"", r.dispatch_us, r.raw_us,
                     r.dispatch_us / r.raw_us, r.query_us, r.desc_us,
                     r.same_output ? "true" : "false", r.graph_ok ? "true" : "false",
                     json_escape(r.graph_note).c_str());
      std::fprintf(f, "}%s\n", i + 1 < results.size() ? "," : "");
    }
    std::fprintf(f, "]}\n");
    std::fclose(f);
  }
  CK(cudaStreamDestroy(s));
  return bad ? 1 : 0;
}
