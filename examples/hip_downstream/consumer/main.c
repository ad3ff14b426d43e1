/* hipscale_demo: asks the installed library which variant a default launch (device 0) of
 * scale_rows runs and why (_query), then runs it on host buffers where that is the CPU (a
 * machine without ROCm or without an AMD GPU: the C fallback), and always once on the CPU
 * (launch.device = -1), checking every result. Where _query picks a HIP variant (an MI200,
 * MI300 or RX 7900 with ROCm), a real program passes device buffers (hipMalloc); this demo
 * keeps to host memory and says so. Exit 0 iff every result is right. */
#include "hipscale.h"

#include <stdio.h>
#include <string.h>

enum { M = 5, N = 300 }; /* ragged against every tile */
static float x[M * N], y[M * N], s[M];

static int check(const char* what) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      if (y[i * N + j] != (float)j * s[i]) {
        printf("FAIL %s: y[%d, %d] = %g, expected %g\n", what, i, j, (double)y[i * N + j],
               (double)j * s[i]);
        return 1;
      }
  printf("%s: ok\n", what);
  return 0;
}

int main(void) {
  for (int i = 0; i < M; ++i) {
    s[i] = (float)(i + 1);
    for (int j = 0; j < N; ++j)
      x[i * N + j] = (float)j;
  }
  tg_selection sel;
  tg_status st = hipscale_scale_rows_f32_query(NULL, x, s, y, M, N, &sel);
  if (st != TG_OK)
    return printf("FAIL query: %s\n", tg_status_string(st)), 1;
  printf("default launch -> %s [%s] (%s)\n", sel.variant, sel.target, sel.reason);
  int bad = 0;
  if (strcmp(sel.target, "c") == 0 || strncmp(sel.target, "c_", 2) == 0) {
    st = hipscale_scale_rows_f32(NULL, x, s, y, M, N);
    bad |= st != TG_OK ? printf("FAIL default launch: %s\n", tg_status_string(st)) : check("default launch (CPU fallback)");
  } else {
    printf("a HIP variant runs here: pass it device buffers (this demo keeps to host memory)\n");
  }
  memset(y, 0, sizeof y);
  tg_launch cpu = {0};
  cpu.device = -1;
  st = hipscale_scale_rows_f32(&cpu, x, s, y, M, N);
  bad |= st != TG_OK ? printf("FAIL device -1: %s\n", tg_status_string(st)) : check("device -1");
  return bad ? 1 : 0;
}
