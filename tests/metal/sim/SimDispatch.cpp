// tg_metal_dispatch (tilegen/metal.h) for tests: instead of encoding the dispatch into a Metal
// command buffer, runs it at once on the threadgroup simulator (Sim.h). Tensors are host
// memory (the simulator's stand-in for MTL::Buffer contents). The launch's command buffer is
// not looked at: tests pass NULL.
#include "Sim.h"

#include "tilegen/metal.h"

#include <cstdio>
#include <string>

namespace {
thread_local std::string g_last_error;
std::string g_prefix;
} // namespace

namespace tgsim {
void set_kernel_prefix(const std::string& prefix) { g_prefix = prefix; }
} // namespace tgsim

extern "C" const char* tg_metal_last_error(void) { return g_last_error.c_str(); }

extern "C" int tg_metal_dispatch(const tg_launch* launch, const tg_metal_dispatch_desc* d) {
  (void)launch;
  g_last_error.clear();
  if (!d || !d->function)
    return TG_ERR_INVALID_ARGUMENT;
  const std::string name = g_prefix + d->function;
  tgsim::Dispatch run;
  run.kernel = name.c_str();
  run.buffers = d->buffers;
  run.n_buffers = d->n_buffers;
  run.params = d->params;
  run.smem_bytes = d->threadgroup_bytes;
  run.threads = static_cast<int>(d->threads);
  for (int i = 0; i < 3; ++i)
    run.grid[i] = d->grid[i];
  g_last_error = tgsim::run(run);
  if (!g_last_error.empty()) {
    std::fprintf(stderr, "tgsim: %s\n", g_last_error.c_str());
    return TG_ERR_DEVICE;
  }
  return TG_OK;
}
