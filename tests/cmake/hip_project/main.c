/* Calls a library built with HIP and C targets through its C API on a machine without an AMD
 * GPU: launch.device = -1 runs the CPU variant; the default launch (device 0) falls back to it
 * too, and _query says why (no HIP runtime, or no HIP device). Prints the query's line.
 * Exit 0 if every result is right. */
#include "hipk.h"

#include <stdio.h>
#include <string.h>

enum { M = 5, N = 300 }; /* ragged against every tile */
static float x[M * N], y[M * N], s[M];

static int check(const char* what) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      if (y[i * N + j] != (float)j * s[i]) {
        printf("%s: y[%d, %d] = %g, expected %g\n", what, i, j, (double)y[i * N + j],
               (double)j * s[i]);
        return 1;
      }
  return 0;
}

int main(void) {
  for (int i = 0; i < M; ++i) {
    s[i] = (float)(i + 1);
    for (int j = 0; j < N; ++j)
      x[i * N + j] = (float)j;
  }
  tg_launch cpu = {0};
  cpu.device = -1;
  tg_status st = hipk_scale_rows_f32(&cpu, x, s, y, M, N);
  if (st != TG_OK || check("device -1"))
    return printf("device -1: %s\n", tg_status_string(st)), 1;
  tg_selection sel;
  st = hipk_scale_rows_f32_query(NULL, x, s, y, M, N, &sel);
  printf("default launch -> %s (%s)\n", sel.target, sel.reason);
  if (st != TG_OK)
    return printf("query: %s\n", tg_status_string(st)), 1;
  if (strcmp(sel.target, "c") != 0 && strncmp(sel.target, "c_", 2) != 0)
    return printf("a HIP variant was selected on a machine without an AMD GPU\n"), 1;
  memset(y, 0, sizeof y);
  st = hipk_scale_rows_f32(NULL, x, s, y, M, N);
  if (st != TG_OK || check("fallback"))
    return printf("fallback: %s\n", tg_status_string(st)), 1;
  printf("fallback: ok\n");
  return 0;
}
