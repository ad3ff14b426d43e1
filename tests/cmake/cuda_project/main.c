/* Calls a library built with CUDA and C targets through its C API, with host pointers.
 * Without a usable GPU the default launch (device 0) must run the CPU variant, and the query
 * must say why; prints the query's choice and reason, exits 0 if the result is right.
 * With a GPU, the default launch would pick a GPU variant, which needs device pointers: the
 * CPU part then runs with launch.device = -1, and the program exits 77 (a skip) after it. */
#include "cudak.h"

#include <stdio.h>
#include <string.h>

int main(void) {
  enum { M = 5, N = 300 }; /* ragged against every tile */
  static float x[M * N], y[M * N];
  float s[M];
  for (int i = 0; i < M; ++i) {
    s[i] = (float)(i + 1);
    for (int j = 0; j < N; ++j)
      x[i * N + j] = (float)j;
  }
  tg_selection sel;
  tg_status st = cudak_scale_rows_f32_query(NULL, x, s, y, M, N, &sel);
  printf("default launch -> %s (%s)\n", sel.target, sel.reason);
  if (st != TG_OK) {
    printf("query: %s\n", tg_status_string(st));
    return 1;
  }
  int gpu = strncmp(sel.target, "sm_", 3) == 0;
  tg_launch cpu = {0};
  cpu.device = -1;
  st = cudak_scale_rows_f32(gpu ? &cpu : NULL, x, s, y, M, N);
  if (st != TG_OK) {
    printf("call: %s\n", tg_status_string(st));
    return 1;
  }
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      if (y[i * N + j] != (float)j * s[i]) {
        printf("y[%d, %d] = %g, expected %g\n", i, j, (double)y[i * N + j], (double)j * s[i]);
        return 1;
      }
  tg_gpu_launch_desc d;
  st = cudak_scale_rows_f32_desc(NULL, x, s, y, M, N, &d);
  printf("desc: %s\n", tg_status_string(st));
  if (gpu) {
    printf("a GPU is present: the CPU path was checked with device -1\n");
    return 77;
  }
  if (st != TG_ERR_NO_VARIANT) /* nothing to describe without a GPU */
    return 1;
  printf("ok\n");
  return 0;
}
