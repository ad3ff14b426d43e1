/* A library with targets c and wgsl keeps its C API: softmax of one row of two equal values. */
#include "tgw_mixed.h"

#include <math.h>

int main(void) {
  const float x[2] = {1.0f, 1.0f};
  float y[2] = {0.0f, 0.0f};
  if (tgw_mixed_softmax_f32(NULL, x, y, 1, 2) != TG_OK)
    return 1;
  return fabsf(y[0] - 0.5f) < 1e-6f && fabsf(y[1] - 0.5f) < 1e-6f ? 0 : 1;
}
