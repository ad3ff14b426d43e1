// The C-backend side of the WGSL numeric test: runs one public function of the `tgwref`
// library (every shipped kernel, target c) on tensors the JavaScript test wrote to files.
//   tgw_ref_runner <function> <dir>
// <dir>/args.txt: "dims <int>..." / "scalars <num>..." / "flags <0|1>..." lines (spec order);
// <dir>/t<i>.bin: tensor i (spec order) as raw little-endian elements; written tensors are
// overwritten with the result. Exit 0 on TG_OK, else 1 with the status on stderr.
#include "tgwref.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Call = std::function<tg_status(void** t, const int64_t* d, const double* s, const int* f)>;

// One entry per kernel x type: tensors in spec order, dims, scalars, flags.
template <class T> std::map<std::string, Call> entries(const std::string& ty,
    tg_status (*gemm)(const tg_launch*, const T*, const T*, T*, int64_t, int64_t, int64_t),
    tg_status (*softmax)(const tg_launch*, const T*, T*, int64_t, int64_t),
    tg_status (*rmsnorm)(const tg_launch*, const T*, const T*, T*, int64_t, int64_t, float),
    tg_status (*gbg)(const tg_launch*, const T*, const T*, const T*, T*, int64_t, int64_t, int64_t),
    tg_status (*fa)(const tg_launch*, const T*, const T*, const T*, T*, int64_t, int64_t, int64_t,
                    int64_t, float, int)) {
  auto p = [](void* x) { return static_cast<T*>(x); };
  return {
      {"gemm_" + ty, [=](void** t, const int64_t* d, const double*, const int*) {
         return gemm(nullptr, p(t[0]), p(t[1]), p(t[2]), d[0], d[1], d[2]);
       }},
      {"softmax_" + ty, [=](void** t, const int64_t* d, const double*, const int*) {
         return softmax(nullptr, p(t[0]), p(t[1]), d[0], d[1]);
       }},
      {"rmsnorm_" + ty, [=](void** t, const int64_t* d, const double* s, const int*) {
         return rmsnorm(nullptr, p(t[0]), p(t[1]), p(t[2]), d[0], d[1], static_cast<float>(s[0]));
       }},
      {"gemm_bias_gelu_" + ty, [=](void** t, const int64_t* d, const double*, const int*) {
         return gbg(nullptr, p(t[0]), p(t[1]), p(t[2]), p(t[3]), d[0], d[1], d[2]);
       }},
      {"flash_attention_fwd_" + ty, [=](void** t, const int64_t* d, const double* s, const int* f) {
         return fa(nullptr, p(t[0]), p(t[1]), p(t[2]), p(t[3]), d[0], d[1], d[2], d[3],
                   static_cast<float>(s[0]), f[0]);
       }},
  };
}

// gemm_fp8 per FP8 type (A, B of that type; C bf16; scalars scale_a, scale_b).
template <class T> std::map<std::string, Call> fp8_entries(const std::string& ty,
    tg_status (*gemm_fp8)(const tg_launch*, const T*, const T*, tg_bf16*, int64_t, int64_t,
                          int64_t, float, float)) {
  return {{"gemm_fp8_" + ty, [=](void** t, const int64_t* d, const double* s, const int*) {
             return gemm_fp8(nullptr, static_cast<const T*>(t[0]), static_cast<const T*>(t[1]),
                             static_cast<tg_bf16*>(t[2]), d[0], d[1], d[2],
                             static_cast<float>(s[0]), static_cast<float>(s[1]));
           }}};
}

// fp8_convert (tests/wgsl/fp8_convert.yaml) per FP8 type: X f32, D T, Y T, Z f32.
template <class T> std::map<std::string, Call> convert_entries(const std::string& ty,
    tg_status (*convert)(const tg_launch*, const float*, const T*, T*, float*, int64_t)) {
  return {{"fp8_convert_" + ty, [=](void** t, const int64_t* d, const double*, const int*) {
             return convert(nullptr, static_cast<const float*>(t[0]), static_cast<const T*>(t[1]),
                            static_cast<T*>(t[2]), static_cast<float*>(t[3]), d[0]);
           }}};
}

bool read_file(const std::string& path, std::vector<unsigned char>& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  out.assign(std::istreambuf_iterator<char>(in), {});
  out.resize(out.size() + 64); // a non-null pointer even for an empty tensor
  return true;
}

} // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: tgw_ref_runner <function> <dir>\n");
    return 2;
  }
  std::map<std::string, Call> table;
  for (auto& m : {entries<float>("f32", tgwref_gemm_f32, tgwref_softmax_f32, tgwref_rmsnorm_f32,
                                 tgwref_gemm_bias_gelu_f32, tgwref_flash_attention_fwd_f32),
                  entries<tg_f16>("f16", tgwref_gemm_f16, tgwref_softmax_f16, tgwref_rmsnorm_f16,
                                  tgwref_gemm_bias_gelu_f16, tgwref_flash_attention_fwd_f16),
                  entries<tg_bf16>("bf16", tgwref_gemm_bf16, tgwref_softmax_bf16,
                                   tgwref_rmsnorm_bf16, tgwref_gemm_bias_gelu_bf16,
                                   tgwref_flash_attention_fwd_bf16)})
    table.insert(m.begin(), m.end());
  for (auto& m : {fp8_entries<tg_e4m3>("e4m3", tgwref_gemm_fp8_e4m3),
                  fp8_entries<tg_e5m2>("e5m2", tgwref_gemm_fp8_e5m2),
                  convert_entries<tg_e4m3>("e4m3", tgwref_fp8_convert_e4m3),
                  convert_entries<tg_e5m2>("e5m2", tgwref_fp8_convert_e5m2)})
    table.insert(m.begin(), m.end());
  auto it = table.find(argv[1]);
  if (it == table.end()) {
    std::fprintf(stderr, "tgw_ref_runner: unknown function %s\n", argv[1]);
    return 2;
  }
  const std::string dir = argv[2];
  std::ifstream args(dir + "/args.txt");
  std::vector<int64_t> dims;
  std::vector<double> scalars;
  std::vector<int> flags;
  for (std::string line; std::getline(args, line);) {
    std::istringstream ls(line);
    std::string kind;
    ls >> kind;
    if (kind == "dims")
      for (int64_t v; ls >> v;)
        dims.push_back(v);
    else if (kind == "scalars")
      for (double v; ls >> v;)
        scalars.push_back(v);
    else if (kind == "flags")
      for (int v; ls >> v;)
        flags.push_back(v);
  }
  dims.resize(8);
  scalars.resize(8);
  flags.resize(8);
  std::vector<std::vector<unsigned char>> tensors;
  for (int i = 0;; ++i) {
    std::vector<unsigned char> t;
    if (!read_file(dir + "/t" + std::to_string(i) + ".bin", t))
      break;
    tensors.push_back(std::move(t));
  }
  std::vector<void*> ptrs;
  for (auto& t : tensors)
    ptrs.push_back(t.data());
  ptrs.resize(8, nullptr);
  const tg_status st = it->second(ptrs.data(), dims.data(), scalars.data(), flags.data());
  if (st != TG_OK) {
    std::fprintf(stderr, "tgw_ref_runner: %s returned status %d\n", argv[1], static_cast<int>(st));
    return 1;
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::ofstream out(dir + "/t" + std::to_string(i) + ".bin", std::ios::binary);
    out.write(reinterpret_cast<const char*>(tensors[i].data()),
              static_cast<std::streamsize>(tensors[i].size() - 64));
  }
  return 0;
}
