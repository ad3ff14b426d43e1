/* tilegen_runtime_metal where Metal does not exist (every non-Apple platform): Metal rows of a
 * dispatch table never run, so calls fall back to their CPU variants, and _query says why. */
#include "tilegen/metal.h"

static const char* const tg_no_metal =
    "this build has no Metal runtime: Metal variants need an Apple platform, where the build "
    "compiles their metallib with xcrun (docs/metal.md)";

int tg_metal_device_family(int device, const char** why) {
  (void)device;
  if (why)
    *why = tg_no_metal;
  return 0;
}

int tg_metal_dispatch(const tg_launch* launch, const tg_metal_dispatch_desc* d) {
  (void)launch;
  (void)d;
  return TG_ERR_DEVICE;
}

const char* tg_metal_last_error(void) { return tg_no_metal; }
