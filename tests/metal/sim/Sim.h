// The MSL threadgroup simulator (docs/metal.md "Verification"): runs generated Metal kernels,
// compiled as C++ against tests/metal/sim/metal_stdlib, on the CPU with the semantics of one
// threadgroup at a time:
//  * each thread of the threadgroup is a fiber (ucontext) with its own stack; fibers run one at
//    a time, in thread order, each until it blocks;
//  * threadgroup_barrier blocks a thread until every thread of the threadgroup has reached a
//    barrier (a thread that finishes while others wait is an error: a barrier in divergent
//    control flow);
//  * a SIMD-group operation blocks a lane until all 32 lanes of its SIMD-group have deposited
//    their values (lanes in different operations are an error);
//  * threadgroup memory is one buffer per threadgroup, filled with 0xFF bytes (NaN in every
//    float type) before the threadgroup starts, so a read before the write that a missing
//    barrier lets through sees NaN or another thread's stale tile.
// Threadgroups of the grid run one after another.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace tgsim {

// ---- used by metal_stdlib (the kernel side) ---------------------------------------------------
int lane();                                          // of the running thread
const float* simd_exchange(const float* mine, int n); // every lane's n values, lane-major
void barrier();
uint16_t f32_to_f16(float f); // round to nearest even, overflow to inf
float f16_to_f32(uint16_t h);

// ---- launching ----------------------------------------------------------------------------------
// The arguments of one dispatch, in the order generated kernels declare them: buffers, the
// tg_params struct, threadgroup memory, then the builtins.
struct CallArgs {
  void* const* buffers = nullptr;
  const void* params = nullptr;
  unsigned char* smem = nullptr;
  uint32_t block[3] = {0, 0, 0};
  uint32_t lane = 0, simd = 0;
};
using Invoker = void (*)(const void* fn, const CallArgs& a);

struct Dispatch {
  const char* kernel = nullptr;   // the kernel function's name
  void* const* buffers = nullptr; // one per tensor
  size_t n_buffers = 0;
  const void* params = nullptr;
  size_t smem_bytes = 0;
  int threads = 0;
  uint32_t grid[3] = {1, 1, 1};
};
// Runs every threadgroup of the grid; returns "" or what went wrong (unknown kernel, a
// deadlock, a barrier not reached by every thread).
std::string run(const Dispatch& d);

// Kernel registry: the generated functions, by name.
void register_kernel(const char* name, const void* fn, Invoker invoke, int n_params);
bool has_kernel(const char* name);
// tg_metal_dispatch (SimDispatch.cpp) runs the kernel registered as prefix + function name:
// "" for the generated sources, "<mutation>/" for a deliberately broken copy.
void set_kernel_prefix(const std::string& prefix);
// What tg_metal_device_family (SimDispatch.cpp) reports for device 0: the Apple GPU family x 10
// (70 by default; 0 = no usable GPU, so dispatch falls back to the CPU).
void set_device_family(int family_x10);

template <class T> struct ArgOf;

template <class... P> struct Call {
  static constexpr size_t n = sizeof...(P);
  template <size_t I, class T> static T arg(const CallArgs& a) {
    if constexpr (I + 5 < n) {
      return reinterpret_cast<T>(a.buffers[I]);
    } else if constexpr (I + 5 == n) {
      return *reinterpret_cast<const std::remove_reference_t<T>*>(a.params);
    } else if constexpr (I + 4 == n) {
      return reinterpret_cast<T>(a.smem);
    } else if constexpr (I + 3 == n) {
      return T{a.block[0], a.block[1], a.block[2]};
    } else if constexpr (I + 2 == n) {
      return static_cast<T>(a.lane);
    } else {
      return static_cast<T>(a.simd);
    }
  }
  template <size_t... I> static void call(void (*fn)(P...), const CallArgs& a, std::index_sequence<I...>) {
    fn(arg<I, P>(a)...);
  }
  static void invoke(const void* fn, const CallArgs& a) {
    call(reinterpret_cast<void (*)(P...)>(const_cast<void*>(fn)), a, std::index_sequence_for<P...>{});
  }
};

template <class... P> void register_fn(const char* name, void (*fn)(P...)) {
  static_assert(sizeof...(P) >= 5, "a generated kernel has buffers, tg_params, tg_smem and 3 builtins");
  register_kernel(name, reinterpret_cast<const void*>(fn), &Call<P...>::invoke, static_cast<int>(sizeof...(P)));
}

struct Registrar {
  template <class F> Registrar(const char* name, F fn) { register_fn(name, fn); }
};

} // namespace tgsim

// In a translation unit that includes a generated .metal file inside `namespace ns { ... }`:
// registers ns::fn under `name`.
#define TG_SIM_KERNEL(name, ns, fn) static tgsim::Registrar tg_sim_reg_##ns(name, &ns::fn)
