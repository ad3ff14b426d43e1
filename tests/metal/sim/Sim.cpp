// The threadgroup simulator's scheduler: fibers (ucontext), barriers, SIMD-group exchanges.
// Sim.h says what it models.
#include "Sim.h"

#include <ucontext.h>

#include <algorithm>
#include <cmath>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tgsim {

namespace {

constexpr size_t kStackBytes = 256 * 1024;

enum class State { Runnable, AtBarrier, AtSimd, Done };

struct Fiber {
  ucontext_t ctx;
  std::unique_ptr<char[]> stack;
  State state = State::Done;
  uint32_t lane = 0, simd = 0;
};

struct SimdGroup {
  uint64_t gen = 0;
  int arrived = 0;
  int n = 0;
  std::vector<float> data[2];
};

struct KernelEntry {
  const void* fn;
  Invoker invoke;
  int n_params;
};

std::map<std::string, KernelEntry>& registry() {
  static std::map<std::string, KernelEntry> r;
  return r;
}

// The running threadgroup.
struct Group {
  ucontext_t main;
  std::vector<Fiber> fibers;
  std::vector<SimdGroup> simds;
  int current = -1;
  std::string error;
  const KernelEntry* kernel = nullptr;
  CallArgs base;
};
Group* g_group = nullptr;

void yield_to_scheduler() {
  Group& g = *g_group;
  Fiber& f = g.fibers[static_cast<size_t>(g.current)];
  swapcontext(&f.ctx, &g.main);
}

void fiber_entry(int lo, int hi) {
  // makecontext passes ints: the fiber index is the only argument (hi unused, 0).
  (void)hi;
  Group& g = *g_group;
  Fiber& f = g.fibers[static_cast<size_t>(lo)];
  CallArgs a = g.base;
  a.lane = f.lane;
  a.simd = f.simd;
  g.kernel->invoke(g.kernel->fn, a);
  f.state = State::Done;
  // returning resumes uc_link (the scheduler)
}

// A fresh context per thread, entering the kernel. Kept out of run(): getcontext returns twice
// as far as the compiler knows, which would pin run()'s loop variables to memory.
__attribute__((noinline)) void start_fibers(Group& g) {
  for (size_t t = 0; t < g.fibers.size(); ++t) {
    Fiber& f = g.fibers[t];
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack.get();
    f.ctx.uc_stack.ss_size = kStackBytes;
    f.ctx.uc_link = &g.main;
    makecontext(&f.ctx, reinterpret_cast<void (*)()>(&fiber_entry), 2, static_cast<int>(t), 0);
    f.state = State::Runnable;
  }
}

} // namespace

int lane() { return static_cast<int>(g_group->fibers[static_cast<size_t>(g_group->current)].lane); }

const float* simd_exchange(const float* mine, int n) {
  Group& g = *g_group;
  Fiber& f = g.fibers[static_cast<size_t>(g.current)];
  SimdGroup& s = g.simds[f.simd];
  const int buf = static_cast<int>(s.gen & 1);
  if (s.arrived > 0 && s.n != n) {
    g.error = "SIMD-group " + std::to_string(f.simd) + ": lanes in different SIMD-group operations";
    s.n = std::max(s.n, n);
  }
  if (s.arrived == 0)
    s.n = n;
  if (s.data[buf].size() < static_cast<size_t>(32 * s.n))
    s.data[buf].resize(static_cast<size_t>(32 * s.n));
  std::memcpy(s.data[buf].data() + f.lane * static_cast<size_t>(n), mine, sizeof(float) * static_cast<size_t>(n));
  if (++s.arrived == 32) {
    s.arrived = 0;
    ++s.gen;
    for (auto& o : g.fibers)
      if (o.simd == f.simd && o.state == State::AtSimd)
        o.state = State::Runnable;
    return s.data[buf].data();
  }
  f.state = State::AtSimd;
  yield_to_scheduler();
  return s.data[buf].data();
}

void barrier() {
  Group& g = *g_group;
  g.fibers[static_cast<size_t>(g.current)].state = State::AtBarrier;
  yield_to_scheduler();
}

uint16_t f32_to_f16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  if (u > 0x7f800000u)
    return static_cast<uint16_t>(sign | 0x7e00u);
  if (u >= ((127u + 16u) << 23))
    return static_cast<uint16_t>(sign | 0x7c00u);
  if (u < (113u << 23)) { // below 2^-14: a multiple of 2^-24, rounded by a float addition
    float a;
    std::memcpy(&a, &u, 4);
    float r = a + 0.5f;
    uint32_t rb;
    std::memcpy(&rb, &r, 4);
    return static_cast<uint16_t>(sign | (rb - 0x3f000000u));
  }
  return static_cast<uint16_t>(sign | ((u + ((uint32_t)(15 - 127) << 23) + 0xfffu + ((u >> 13) & 1u)) >> 13));
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = (uint32_t(h) & 0x8000u) << 16, e = (h >> 10) & 31u, m = h & 0x3ffu;
  float v;
  if (e == 0)
    v = std::ldexp(static_cast<float>(m), -24);
  else if (e == 31)
    v = m ? NAN : INFINITY;
  else {
    uint32_t b = ((e + 112u) << 23) | (m << 13);
    std::memcpy(&v, &b, 4);
  }
  uint32_t u;
  std::memcpy(&u, &v, 4);
  u |= sign;
  std::memcpy(&v, &u, 4);
  return v;
}

void register_kernel(const char* name, const void* fn, Invoker invoke, int n_params) {
  registry()[name] = {fn, invoke, n_params};
}

bool has_kernel(const char* name) { return registry().count(name) != 0; }

std::string run(const Dispatch& d) {
  auto it = registry().find(d.kernel ? d.kernel : "");
  if (it == registry().end())
    return std::string("no kernel named '") + (d.kernel ? d.kernel : "") + "' was compiled into the simulator";
  if (static_cast<size_t>(it->second.n_params) != d.n_buffers + 5)
    return "kernel '" + std::string(d.kernel) + "' takes " + std::to_string(it->second.n_params - 5) +
           " buffers, the dispatch binds " + std::to_string(d.n_buffers);
  if (d.threads <= 0 || d.threads % 32 != 0)
    return "threads per threadgroup must be a positive multiple of 32, got " + std::to_string(d.threads);
  Group g;
  g.kernel = &it->second;
  const size_t T = static_cast<size_t>(d.threads);
  g.fibers.resize(T);
  g.simds.resize(T / 32);
  for (size_t t = 0; t < T; ++t) {
    g.fibers[t].stack.reset(new char[kStackBytes]);
    g.fibers[t].lane = static_cast<uint32_t>(t % 32);
    g.fibers[t].simd = static_cast<uint32_t>(t / 32);
  }
  std::vector<unsigned char> smem(d.smem_bytes + 16);
  Group* saved = g_group;
  g_group = &g;
  for (uint32_t z = 0; z < d.grid[2] && g.error.empty(); ++z)
    for (uint32_t y = 0; y < d.grid[1] && g.error.empty(); ++y)
      for (uint32_t x = 0; x < d.grid[0] && g.error.empty(); ++x) {
        std::memset(smem.data(), 0xFF, smem.size());
        g.base = CallArgs{};
        g.base.buffers = d.buffers;
        g.base.params = d.params;
        g.base.smem = smem.data();
        g.base.block[0] = x;
        g.base.block[1] = y;
        g.base.block[2] = z;
        for (auto& s : g.simds) {
          s.arrived = 0;
          s.gen = 0;
        }
        start_fibers(g);
        while (g.error.empty()) {
          bool ran = false;
          for (size_t t = 0; t < T; ++t)
            if (g.fibers[t].state == State::Runnable) {
              g.current = static_cast<int>(t);
              swapcontext(&g.main, &g.fibers[t].ctx);
              ran = true;
            }
          if (ran)
            continue;
          size_t done = 0, at_barrier = 0, at_simd = 0;
          for (const auto& f : g.fibers) {
            done += f.state == State::Done;
            at_barrier += f.state == State::AtBarrier;
            at_simd += f.state == State::AtSimd;
          }
          if (done == T)
            break;
          if (at_barrier == T) {
            for (auto& f : g.fibers)
              f.state = State::Runnable;
            continue;
          }
          g.error = "threadgroup (" + std::to_string(x) + ", " + std::to_string(y) + ", " +
                    std::to_string(z) + ") of '" + d.kernel + "' is stuck: " + std::to_string(done) +
                    " threads finished, " + std::to_string(at_barrier) + " wait at a barrier, " +
                    std::to_string(at_simd) +
                    " wait in a SIMD-group operation (a barrier or SIMD-group function that not "
                    "every thread reaches)";
        }
      }
  g_group = saved;
  return g.error;
}

} // namespace tgsim
