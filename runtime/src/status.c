/* Status messages of the runtime. */
#include "tilegen/runtime.h"

const char* tg_status_string(tg_status s) {
  switch (s) {
  case TG_OK: return "ok";
  case TG_ERR_NULL_POINTER: return "a tensor pointer is NULL";
  case TG_ERR_MISALIGNED: return "a tensor pointer is not aligned to its element size";
  case TG_ERR_INVALID_DIM: return "a dimension is negative or violates its declared constraint";
  case TG_ERR_UNSUPPORTED_SHAPE: return "a specialized dimension has a value no variant was built for";
  case TG_ERR_NO_VARIANT: return "no variant of this kernel can run on this machine";
  case TG_ERR_INVALID_ARGUMENT: return "an argument is invalid (flag not 0/1, malformed launch handle)";
  case TG_ERR_SIZE_OVERFLOW: return "a tensor's size in bytes overflows 64 bits";
  case TG_ERR_DEVICE: return "the device runtime reported an error";
  case TG_ERR_INTERNAL: return "internal error in tilegen (please report)";
  case TG_ERR_OUT_OF_MEMORY: return "out of memory for a CPU variant's per-thread tile scratch";
  }
  return "unknown status";
}
