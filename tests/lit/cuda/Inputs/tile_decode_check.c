/* Checks a persistent kernel's tile decode taken from a generated sm_90a attention variant
 * (attention_walk.test extracts it into decode.inc): over many grids, tile t -> (bx, by, bz)
 * must be a bijection onto the grid. With HEAVIEST_FIRST (the causal decode), bx must not rise
 * from one tile to the next inside a row, nor inside the last plane's last group of rows, which
 * must come last; without it (the non-causal decode), tiles run row by row, bx rising. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static struct {
  int64_t tg_tiles[3];
} tg_p;

#include "tile_decode.h"

static int check(int64_t gx, int64_t gy, int64_t gz) {
  const int64_t n = gx * gy * gz;
  unsigned char* seen = calloc((size_t)n, 1);
  tg_p.tg_tiles[0] = gx, tg_p.tg_tiles[1] = gy, tg_p.tg_tiles[2] = gz;
  int bad = 0;
#ifdef HEAVIEST_FIRST
  const int64_t group = (gy < 8 ? gy : 8) * gx; /* the causal decode's last group, in tiles */
#endif
  int64_t pbx = 0, pby = 0, pbz = 0;
  for (int64_t t = 0; t < n && !bad; ++t) {
    int64_t bx, by, bz;
    decode(t, &bx, &by, &bz);
    bad = mark_tile(seen, gx, gy, gz, bx, by, bz);
    if (!bad && t > 0) {
#ifdef HEAVIEST_FIRST
      const int in_group = t >= n - group, prev_in_group = t - 1 >= n - group;
      if (in_group && prev_in_group && bx > pbx)
        bad = 3; /* the last group goes heaviest first */
      if (!in_group && pby == by && pbz == bz && bx > pbx)
        bad = 3; /* a row goes heaviest first */
      if (in_group && bz != gz - 1)
        bad = 4;
#else
      if (pby == by && pbz == bz && bx != pbx + 1)
        bad = 3; /* row by row */
#endif
    }
    pbx = bx, pby = by, pbz = bz;
  }
  free(seen);
  if (bad)
    printf("FAIL %d: grid %lldx%lldx%lld\n", bad, (long long)gx, (long long)gy, (long long)gz);
  return bad != 0;
}

int main(void) {
  int failures = 0;
  int64_t checked = 0;
  for (int64_t gx = 1; gx <= 40; gx += (gx < 12 ? 1 : 7))
    for (int64_t gy = 1; gy <= 70; gy += (gy < 12 ? 1 : 9))
      for (int64_t gz = 1; gz <= 4; ++gz, ++checked)
        failures += check(gx, gy, gz);
  if (failures)
    return 1;
  printf("ok: %lld grids walked\n", (long long)checked);
  return 0;
}
