// tilegen_runtime_metal (tilegen/metal.h) for tests: tg_metal_dispatch, instead of encoding the
// dispatch into a Metal command buffer, runs it at once on the threadgroup simulator (Sim.h);
// tg_metal_device_family reports a simulated Apple GPU (family 7 unless a test sets another), so
// that generated dispatch code selects Metal rows. Tensors are host memory (the simulator's
// stand-in for MTL::Buffer contents). The launch's command buffer is not looked at.
#include "Sim.h"

#include "tilegen/metal.h"

#include <cstdio>
#include <string>

namespace {
thread_local std::string g_last_error;
std::string g_prefix;
int g_family = 70;
} // namespace

namespace tgsim {
void set_kernel_prefix(const std::string& prefix) { g_prefix = prefix; }
void set_device_family(int family_x10) { g_family = family_x10; }
} // namespace tgsim

extern "C" int tg_metal_device_family(int device, const char** why) {
  if (why)
    *why = device != 0 ? "only device 0 (the simulated GPU) exists"
                       : g_family > 0 ? "" : "the simulated GPU is below Apple family 7";
  return device == 0 ? g_family : 0;
}

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
