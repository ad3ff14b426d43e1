/* Checks the split tail's work assignment, tg_split_work as generated into an sm_90a variant
 * (split_tail_work.test extracts it), over many launch shapes: every (tile, iteration) is run
 * exactly once; a tile runs whole or in two parts, a head [0, c) and a tail [c, n) that name the
 * same cut, one cut per split tile, in 1..P-1; with a split, every block gets the same work
 * within one iteration; without one (or with split = false), tiles b, b + P, ... run whole. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define TG_HD static inline
#include "split_work.inc"

static int fail(const char* what, int64_t T, int64_t n, int64_t P) {
  printf("FAIL %s: T=%lld n=%lld P=%lld\n", what, (long long)T, (long long)n, (long long)P);
  return 1;
}

static int check(int64_t T, int64_t n, int64_t P, bool split) {
  unsigned char* seen = calloc((size_t)(T * n), 1);
  int64_t* cut_tile = malloc((size_t)(P + 1) * sizeof(int64_t));
  int* parts = calloc((size_t)T, sizeof(int));
  int64_t min_work = INT64_MAX, max_work = 0;
  const bool splits = split && T > P && T % P != 0 && n >= 2;
  for (int64_t c = 0; c <= P; ++c)
    cut_tile[c] = -1;
  for (int64_t b = 0; b < P; ++b) {
    int64_t work = 0, tile, kb, ke, cut;
    for (int64_t i = 0; tg_split_work(T, n, P, b, split, i, &tile, &kb, &ke, &cut); ++i) {
      if (i > T + 3 || tile < 0 || tile >= T || kb < 0 || ke > n || (kb >= ke && n > 0))
        return fail("item out of range", T, n, P);
      if (!splits && (tile != b + i * P || kb != 0 || ke != n || cut != -1))
        return fail("unsplit launch: not tiles b, b + P, ... whole", T, n, P);
      for (int64_t k = kb; k < ke; ++k) {
        if (seen[tile * n + k]++)
          return fail("iteration run twice", T, n, P);
      }
      const bool whole = kb == 0 && ke == n;
      if (whole != (cut < 0))
        return fail("a whole tile with a cut, or a part without one", T, n, P);
      if (!whole) {
        if (cut < 1 || cut >= P || (kb > 0 && ke < n))
          return fail("bad cut or a middle part", T, n, P);
        if (cut_tile[cut] >= 0 && cut_tile[cut] != tile)
          return fail("one cut, two tiles", T, n, P);
        cut_tile[cut] = tile;
        if (++parts[tile] > 2)
          return fail("a tile in more than two parts", T, n, P);
      }
      work += ke - kb;
    }
    if (work < min_work)
      min_work = work;
    if (work > max_work)
      max_work = work;
  }
  for (int64_t u = 0; u < T * n; ++u)
    if (seen[u] != 1)
      return fail("iteration never run", T, n, P);
  for (int64_t t = 0; t < T; ++t)
    if (parts[t] == 1)
      return fail("a tile with one part", T, n, P);
  if (splits && max_work - min_work > 1)
    return fail("blocks' work differs by more than one iteration", T, n, P);
  free(seen);
  free(cut_tile);
  free(parts);
  return 0;
}

int main(void) {
  static const int64_t Ps[] = {1, 2, 3, 7, 114, 132};
  static const int64_t ns[] = {0, 1, 2, 3, 8, 32, 64};
  long cases = 0, split_cases = 0;
  for (size_t pi = 0; pi < sizeof Ps / sizeof Ps[0]; ++pi)
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ++ni)
      for (int64_t T = Ps[pi]; T <= 5 * Ps[pi] + 3; T += (Ps[pi] > 16 ? 5 : 1))
        for (int s = 0; s < 2; ++s) {
          if (check(T, ns[ni], Ps[pi], s))
            return 1;
          ++cases;
          split_cases += s && T > Ps[pi] && T % Ps[pi] != 0 && ns[ni] >= 2;
        }
  /* the bench's shapes: 4096 attention tiles of 32 or 128 KV blocks, 512 GEMM tiles of 64 */
  if (check(4096, 32, 132, true) || check(4096, 128, 132, true) || check(512, 64, 132, true) ||
      check(2048, 128, 132, true))
    return 1;
  printf("ok: %ld launch shapes, %ld with split tiles\n", cases + 4, split_cases + 4);
  return 0;
}
