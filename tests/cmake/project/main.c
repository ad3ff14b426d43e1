/* 2x2 @ 2x2 through the generated library; exit 0 iff the result is right. */
#include "noop.h"

#include <stdio.h>

int main(void) {
  float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, c[4];
  const float want[4] = {19, 22, 43, 50};
  tg_status s = noop_gemm_f32(NULL, a, b, c, 2, 2, 2);
  if (s != TG_OK) {
    printf("noop_gemm_f32: %s\n", tg_status_string(s));
    return 1;
  }
  for (int i = 0; i < 4; ++i)
    if (c[i] != want[i]) {
      printf("c[%d] = %g, expected %g\n", i, (double)c[i], (double)want[i]);
      return 1;
    }
  printf("ok\n");
  return 0;
}
