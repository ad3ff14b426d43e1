/* Checks the persistent kernels' tile walk as generated into an sm_90a GEMM variant
 * (tile_walk.test extracts tg_walk_rows and the kernel's index decode): over many grids and
 * every group height the host may pass, tile t -> (bx, by, bz) must be a bijection onto the
 * grid; tg_walk_rows must never choose 0 rows, must choose the square group without an L2 figure
 * or a whole row of tiles per block, and a band that it chooses must stay chosen with more L2 or
 * fewer iterations. Prints the choices for the shapes of issue #4's GEMM bars and a few more
 * on an H200 (132 SMs, 50 and 60 MB of L2 as bounds). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "walk_rows.inc"

static struct {
  int64_t tg_tiles[3];
  int64_t tg_group;
} tg_p;

#include "tile_decode.h"

/* Every tile of a gx x gy x gz grid walked in groups of `rows`: each (bx, by, bz) once. */
static int check_bijection(int64_t gx, int64_t gy, int64_t gz, int64_t rows) {
  const int64_t n = gx * gy * gz;
  unsigned char* seen = calloc((size_t)n, 1);
  tg_p.tg_tiles[0] = gx, tg_p.tg_tiles[1] = gy, tg_p.tg_tiles[2] = gz, tg_p.tg_group = rows;
  int bad = 0;
  for (int64_t t = 0; t < n && !bad; ++t) {
    int64_t bx, by, bz;
    decode(t, &bx, &by, &bz);
    bad = mark_tile(seen, gx, gy, gz, bx, by, bz);
  }
  free(seen);
  if (bad)
    printf("FAIL %s: grid %lldx%lldx%lld rows %lld\n", bad == 1 ? "tile outside the grid" : "tile twice",
           (long long)gx, (long long)gy, (long long)gz, (long long)rows);
  return bad != 0;
}

int main(void) {
  int failures = 0;
  int64_t checked = 0;
  const int64_t square = tg_walk_rows(1, 1, 1, 0); /* no L2 figure: the square group */
  /* Grids, including ragged ones and more rows than a group holds. */
  for (int64_t gx = 1; gx <= 40; gx += (gx < 12 ? 1 : 7))
    for (int64_t gy = 1; gy <= 70; gy += (gy < 10 ? 1 : 9))
      for (int64_t gz = 1; gz <= 3; gz += 2) {
        for (int64_t rows = 1; rows <= 20; ++rows, ++checked)
          failures += check_bijection(gx, gy, gz, rows);
        failures += check_bijection(gx, gy, gz, square);
        ++checked;
      }
  /* The choice: never 0 rows; the square group without an L2 figure or a whole row per block;
   * a band that fits in some L2 fits in a larger one, and in the same L2 over fewer iterations. */
  const int64_t l2s[] = {0, 1 << 20, 50 << 20, 60 << 20, (int64_t)1 << 40};
  const size_t nl2 = sizeof l2s / sizeof l2s[0];
  for (int64_t gx = 1; gx <= 300; gx += 13)
    for (int64_t blocks = 1; blocks <= 264; blocks += 29)
      for (int64_t nk = 0; nk <= 4096; nk = nk ? nk * 2 : 1)
        for (size_t i = 0; i < nl2; ++i) {
          const int64_t r = tg_walk_rows(gx, nk, blocks, l2s[i]), band = blocks / gx;
          const int banded = r == band && band != square;
          int bad = r < 1 || ((l2s[i] == 0 || band < 1) && r != square);
          if (banded && i + 1 < nl2 && tg_walk_rows(gx, nk, blocks, l2s[i + 1]) != band)
            bad = 1;
          if (banded && nk > 0 && tg_walk_rows(gx, nk / 2, blocks, l2s[i]) != band)
            bad = 1;
          if (bad) {
            printf("FAIL choice %lld: gx %lld nk %lld blocks %lld l2 %lld\n", (long long)r, (long long)gx,
                   (long long)nk, (long long)blocks, (long long)l2s[i]);
            ++failures;
          }
        }
  /* issue #4's bar shapes on an H200 (128x256 tiles, BK 64: gx = N / 256, nk = K / 64) */
  const int64_t shapes[][3] = {{4096, 4096, 512}, {4096, 4096, 4096}, {8192, 8192, 1024},
                               {8192, 8192, 8192}, {4096, 4096, 16384}, {2048, 8192, 256}};
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
    for (int64_t mb = 50; mb <= 60; mb += 10)
      printf("%lldx%lldx%lld, %lld MB L2: %lld rows\n", (long long)shapes[i][0], (long long)shapes[i][1],
             (long long)shapes[i][2], (long long)mb,
             (long long)tg_walk_rows(shapes[i][1] / 256, shapes[i][2] / 64, 132, mb << 20));
  if (failures)
    return 1;
  printf("ok: %lld grids walked, square group %lld\n", (long long)checked, (long long)square);
  return 0;
}
