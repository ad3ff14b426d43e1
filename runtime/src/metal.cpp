// tilegen_runtime_metal on Apple platforms (tilegen/metal.h): Metal variants' dispatches
// encoded with metal-cpp (https://developer.apple.com/metal/cpp/).
//
// NEVER RUN: no Mac was available when this was written. It is compiled on Linux against a
// stub of the metal-cpp declarations it uses (tests/metal/metal_cpp_stub, the test
// metal.runtime_compiles) and on macOS by CMake; docs/metal.md lists what is unverified.
//
// The program must contain metal-cpp's implementation (NS_PRIVATE_IMPLEMENTATION and
// MTL_PRIVATE_IMPLEMENTATION defined in exactly one of its C++ files): CMake defines them here
// unless TILEGEN_METAL_CPP_IMPLEMENTATION is OFF (an application that has its own).
#include "tilegen/metal.h"

#ifdef TILEGEN_METAL_CPP_IMPLEMENTATION
#define NS_PRIVATE_IMPLEMENTATION
#define MTL_PRIVATE_IMPLEMENTATION
#endif
#include <Foundation/Foundation.hpp>
#include <Metal/Metal.hpp>
#include <dispatch/dispatch.h>

#include <map>
#include <mutex>
#include <string>
#include <tuple>

namespace {

thread_local std::string g_error;

int fail(int status, const std::string& why) {
  g_error = why;
  return status;
}

std::string ns_text(NS::Error* e) {
  if (!e || !e->localizedDescription() || !e->localizedDescription()->utf8String())
    return "(no description)";
  return e->localizedDescription()->utf8String();
}

// One library per (device, embedded metallib) and one pipeline per function, built on first use
// and kept for the life of the process (pipelines are what Metal wants reused).
struct Cache {
  std::mutex mu;
  std::map<std::pair<MTL::Device*, const unsigned char*>, MTL::Library*> libraries;
  std::map<std::tuple<MTL::Device*, const unsigned char*, std::string>, MTL::ComputePipelineState*>
      pipelines;
};
Cache& cache() {
  static Cache* c = new Cache; // never destroyed: dispatches may run during static destruction
  return *c;
}

MTL::ComputePipelineState* pipeline(MTL::Device* dev, const tg_metal_dispatch_desc* d, int* status) {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  auto key = std::make_tuple(dev, d->metallib, std::string(d->function));
  auto it = c.pipelines.find(key);
  if (it != c.pipelines.end())
    return it->second;
  MTL::Library*& lib = c.libraries[{dev, d->metallib}];
  if (!lib) {
    if (!d->metallib || d->metallib_bytes == 0) {
      *status = fail(TG_ERR_DEVICE, "the library was built without its metallib");
      return nullptr;
    }
    dispatch_data_t data = dispatch_data_create(d->metallib, d->metallib_bytes, nullptr,
                                                DISPATCH_DATA_DESTRUCTOR_DEFAULT);
    NS::Error* err = nullptr;
    lib = dev->newLibrary(data, &err);
    dispatch_release(data);
    if (!lib) {
      *status = fail(TG_ERR_DEVICE, "newLibrary failed on the embedded metallib: " + ns_text(err));
      return nullptr;
    }
  }
  NS::String* name = NS::String::string(d->function, NS::UTF8StringEncoding);
  MTL::Function* fn = lib->newFunction(name);
  if (!fn) {
    *status = fail(TG_ERR_DEVICE, std::string("the metallib has no function ") + d->function);
    return nullptr;
  }
  NS::Error* err = nullptr;
  MTL::ComputePipelineState* pso = dev->newComputePipelineState(fn, &err);
  fn->release();
  if (!pso) {
    *status = fail(TG_ERR_DEVICE, std::string("newComputePipelineState(") + d->function +
                                      ") failed: " + ns_text(err));
    return nullptr;
  }
  c.pipelines[key] = pso;
  return pso;
}

} // namespace

extern "C" const char* tg_metal_last_error(void) { return g_error.c_str(); }

extern "C" int tg_metal_device_family(int device, const char** why) {
  static const char* no_device = "no Metal device (MTLCreateSystemDefaultDevice returned nil)";
  static const char* old_os =
      "macOS/iOS older than 14/17: the metallib is Metal 3.1 (bfloat), which it cannot load";
  static const char* old_gpu = "the GPU is below Apple family 7 (M1 / A14), which the variants need";
  static const char* not_zero = "only device 0 (the system default Metal device) exists";
  struct Probe {
    int family = 0;
    const char* why = nullptr;
  };
  static const Probe probe = [] {
    Probe p;
    MTL::Device* dev = MTL::CreateSystemDefaultDevice();
    if (!dev) {
      p.why = no_device;
      return p;
    }
    NS::OperatingSystemVersion v14;
    v14.majorVersion = 14; // macOS 14 / iOS 17 both carry MSL 3.1
    v14.minorVersion = 0;
    v14.patchVersion = 0;
    if (!NS::ProcessInfo::processInfo()->isOperatingSystemAtLeastVersion(v14)) {
      p.why = old_os;
    } else if (dev->supportsFamily(MTL::GPUFamilyApple9)) {
      p.family = 90;
    } else if (dev->supportsFamily(MTL::GPUFamilyApple8)) {
      p.family = 80;
    } else if (dev->supportsFamily(MTL::GPUFamilyApple7)) {
      p.family = 70;
    } else {
      p.why = old_gpu;
    }
    dev->release();
    return p;
  }();
  if (device != 0) {
    if (why)
      *why = not_zero;
    return 0;
  }
  if (why)
    *why = probe.why ? probe.why : "";
  return probe.family;
}

extern "C" int tg_metal_dispatch(const tg_launch* launch, const tg_metal_dispatch_desc* d) {
  g_error.clear();
  if (!d || !d->function)
    return fail(TG_ERR_INVALID_ARGUMENT, "no dispatch description");
  if (!launch || !launch->stream)
    return fail(TG_ERR_INVALID_ARGUMENT,
                "a Metal call needs launch->stream: the MTL::CommandBuffer to encode into");
  auto* cb = static_cast<MTL::CommandBuffer*>(launch->stream);
  MTL::Device* dev = cb->device();
  int status = TG_OK;
  MTL::ComputePipelineState* pso = pipeline(dev, d, &status);
  if (!pso)
    return status;
  if (pso->maxTotalThreadsPerThreadgroup() < d->threads)
    return fail(TG_ERR_DEVICE, std::string(d->function) + " needs " + std::to_string(d->threads) +
                                   " threads per threadgroup; the pipeline allows " +
                                   std::to_string(pso->maxTotalThreadsPerThreadgroup()));
  MTL::ComputeCommandEncoder* enc = cb->computeCommandEncoder();
  if (!enc)
    return fail(TG_ERR_DEVICE, "the command buffer gave no compute command encoder");
  enc->setComputePipelineState(pso);
  for (size_t i = 0; i < d->n_buffers; ++i)
    enc->setBuffer(static_cast<MTL::Buffer*>(d->buffers[i]), 0, i);
  enc->setBytes(d->params, d->params_bytes, d->n_buffers);
  // The kernel always declares its [[threadgroup(0)]] argument: give it at least 16 bytes.
  enc->setThreadgroupMemoryLength(d->threadgroup_bytes < 16 ? 16 : d->threadgroup_bytes, 0);
  enc->dispatchThreadgroups(MTL::Size(d->grid[0], d->grid[1], d->grid[2]),
                            MTL::Size(d->threads, 1, 1));
  enc->endEncoding();
  return TG_OK;
}
