/* Calls a library built with CUDA and C targets through its C API.
 * Always: launch.device = -1 runs the CPU variant on host pointers, checked.
 * Without a usable GPU: the default launch (device 0) must run the CPU variant too, _query
 * must say why, and _desc has nothing to describe ("fallback: ok").
 * With a GPU: the default launch runs the GPU variant on device pointers, and the launch _desc
 * describes gives the same result ("gpu: <target> ok").
 * Exit 0 if every result is right. */
#include "cudak.h"

#include <cuda_runtime_api.h>
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

static int run_on_gpu(const char* target) {
  float *dx = NULL, *ds = NULL, *dy = NULL;
  if (cudaMalloc((void**)&dx, sizeof x) != cudaSuccess ||
      cudaMalloc((void**)&ds, sizeof s) != cudaSuccess ||
      cudaMalloc((void**)&dy, sizeof y) != cudaSuccess)
    return printf("cudaMalloc failed\n"), 1;
  cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
  cudaMemcpy(ds, s, sizeof s, cudaMemcpyHostToDevice);
  cudaMemset(dy, 0, sizeof y);
  tg_status st = cudak_scale_rows_f32(NULL, dx, ds, dy, M, N);
  if (st != TG_OK || cudaDeviceSynchronize() != cudaSuccess)
    return printf("gpu call: %s\n", tg_status_string(st)), 1;
  cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost);
  if (check("gpu"))
    return 1;
  tg_gpu_launch_desc d;
  cudaMemset(dy, 0, sizeof y);
  st = cudak_scale_rows_f32_desc(NULL, dx, ds, dy, M, N, &d);
  if (st != TG_OK)
    return printf("desc: %s\n", tg_status_string(st)), 1;
  dim3 grid = {d.grid[0], d.grid[1], d.grid[2]}, block = {d.block[0], d.block[1], d.block[2]};
  if (cudaLaunchKernel(d.func, grid, block, d.args, d.smem_bytes, NULL) != cudaSuccess ||
      cudaDeviceSynchronize() != cudaSuccess)
    return printf("raw launch of the _desc failed\n"), 1;
  cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost);
  if (check("gpu (_desc)"))
    return 1;
  cudaFree(dx);
  cudaFree(ds);
  cudaFree(dy);
  printf("gpu: %s ok\n", target);
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
  tg_status st = cudak_scale_rows_f32(&cpu, x, s, y, M, N);
  if (st != TG_OK || check("device -1"))
    return printf("device -1: %s\n", tg_status_string(st)), 1;

  tg_selection sel;
  st = cudak_scale_rows_f32_query(NULL, x, s, y, M, N, &sel);
  printf("default launch -> %s (%s)\n", sel.target, sel.reason);
  if (st != TG_OK)
    return printf("query: %s\n", tg_status_string(st)), 1;
  if (strncmp(sel.target, "sm_", 3) == 0)
    return run_on_gpu(sel.target);

  memset(y, 0, sizeof y);
  st = cudak_scale_rows_f32(NULL, x, s, y, M, N);
  if (st != TG_OK || check("fallback"))
    return printf("fallback call: %s\n", tg_status_string(st)), 1;
  tg_gpu_launch_desc d;
  st = cudak_scale_rows_f32_desc(NULL, x, s, y, M, N, &d);
  if (st != TG_ERR_NO_VARIANT) /* nothing to describe without a GPU */
    return printf("desc without a GPU: %s\n", tg_status_string(st)), 1;
  printf("fallback: ok\n");
  return 0;
}
