/* What tile_walk_check.c and tile_decode_check.c share: the generated kernel's tile decode
 * (decode.inc, extracted from a variant by the .test; it reads tg_p, which the includer
 * defines first) and the bijection test of one decoded tile. */
#include <stdint.h>

static void decode(int64_t tg_tile, int64_t* bx, int64_t* by, int64_t* bz) {
#include "decode.inc"
  *bx = tg_bx, *by = tg_by, *bz = tg_bz;
}

/* Marks tile (bx, by, bz) of a gx x gy x gz grid in `seen`: 0, or 1 outside the grid, 2 seen
 * before. */
static int mark_tile(unsigned char* seen, int64_t gx, int64_t gy, int64_t gz, int64_t bx, int64_t by, int64_t bz) {
  if (bx < 0 || bx >= gx || by < 0 || by >= gy || bz < 0 || bz >= gz)
    return 1;
  return seen[(bz * gy + by) * gx + bx]++ ? 2 : 0;
}
