/* Checks the split tail's shape, tg_split_shape as generated into an sm_90a variant
 * (split_tail_work.test extracts it), over many launch shapes, together with the work the two
 * kernels do with it (docs/hopper.md): tg_kernel_ws runs tiles [0, T - tail) on P persistent
 * blocks (b, b + P, ...), tg_kernel_ws_split block c * parts + p runs iterations
 * [p * n / parts, (p + 1) * n / parts) of tile T - tail + c. Every (tile, iteration) must run
 * exactly once; a split leaves whole waves before it (none when it takes every tile of a launch
 * of at most P / 2), fits the grid and the workspace (tail * tg_split_slots(parts) partial
 * results, at most 2 P, and tail * words(parts) arrival words), and gives every part at least 4 iterations
 * (16 beyond 8 parts; q with tg_split_shape's q > 0). The join's tree (groups of 4 at every level, emit_combine) is checked for
 * every part count: its slots and arrival words are distinct and within the per-tile counts. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "split_shape.inc"

static int fail(const char* what, int64_t T, int64_t n, int64_t P) {
  printf("FAIL %s: T=%lld n=%lld P=%lld\n", what, (long long)T, (long long)n, (long long)P);
  return 1;
}

/* Arrival words per split tile: one per group of 4 units at every level of the join. */
static int64_t words(int64_t parts) {
  int64_t w = 0;
  for (int64_t u = parts; u > 1; u = (u + 3) / 4)
    w += (u + 3) / 4;
  return w;
}

/* The join's tree as emit_combine walks it: at a level of u units (the slots of the lower
 * levels before it, s0 of them), group g meets min(4, u - 4 g) units on word w0 + g; each unit
 * k of the group has slot s0 + 4 g + k (its own, whether or not it arrives last: the last
 * merges in unit order). Every slot distinct and below tg_split_slots(parts); the group's first
 * unit's slot is the one the merger loads. */
static int check_tree(int64_t parts) {
  unsigned char slot[512] = {0}, word[256] = {0};
  int64_t w0 = 0, s0 = 0, used = 0;
  if (tg_split_slots(parts) > 2 * parts)
    return fail("more than 2 slots a part", parts, 0, 0);
  for (int64_t u = parts; u > 1; w0 += (u + 3) / 4, s0 += u, u = (u + 3) / 4)
    for (int64_t g = 0; g < (u + 3) / 4; ++g) {
      const int64_t meet = u - 4 * g < 4 ? u - 4 * g : 4;
      if (meet == 1)
        continue;
      if (w0 + g >= words(parts) || word[w0 + g]++)
        return fail("arrival word reused or out of range", parts, 0, 0);
      for (int64_t k = 0; k < meet; ++k, ++used) {
        const int64_t q = s0 + 4 * g + k;
        if (q < 0 || q >= tg_split_slots(parts) || slot[q]++)
          return fail("slot reused or out of range", parts, 0, 0);
      }
    }
  return used <= tg_split_slots(parts) ? 0 : fail("more units than slots", parts, 0, 0);
}

static int check(int64_t T, int64_t n, int64_t P, int64_t q, long* splits) {
  int64_t tail = -1, parts = -1;
  tg_split_shape(T, n, P, q, &tail, &parts);
  if (tail == 0 && parts != 0)
    return fail("parts without a tail", T, n, P);
  if (tail > 0) {
    ++*splits;
    if (tail != T % P || (T <= P && 2 * T > P) || n < 32)
      return fail("split where it must not be", T, n, P);
    if (parts < 2 || parts > 64 || tail * parts > P || tail * tg_split_slots(parts) > 2 * P ||
        (parts > 8 ? n / parts < 16 : n / parts < 4) || n / parts < q || tail * words(parts) > P)
      return fail("parts out of range", T, n, P);
    if ((T - tail) % P != 0)
      return fail("the persistent kernel's tiles are not whole waves", T, n, P);
  } else if (T % P != 0 && n >= 32 && P / (T % P) >= 2 && n / (q > 4 ? q : 4) >= 2) {
    return fail("no split where one fits", T, n, P);
  }
  unsigned char* seen = calloc((size_t)(T * (n > 0 ? n : 1)), 1);
  for (int64_t b = 0; b < P && b < T; ++b)
    for (int64_t t = b; t < T - tail; t += P)
      for (int64_t k = 0; k < n; ++k)
        if (seen[t * n + k]++)
          return fail("iteration run twice (whole tiles)", T, n, P);
  for (int64_t b = 0; b < tail * parts; ++b) {
    const int64_t t = T - tail + b / parts, p = b % parts;
    for (int64_t k = p * n / parts; k < (p + 1) * n / parts; ++k)
      if (seen[t * n + k]++)
        return fail("iteration run twice (parts)", T, n, P);
  }
  for (int64_t u = 0; u < T * n; ++u)
    if (seen[u] != 1)
      return fail("iteration never run", T, n, P);
  free(seen);
  return 0;
}

static void show(int64_t T, int64_t n, int64_t P, int64_t q) {
  int64_t tail, parts;
  tg_split_shape(T, n, P, q, &tail, &parts);
  printf("%lld tiles x %lld on %lld%s: tail %lld parts %lld\n", (long long)T, (long long)n,
         (long long)P, q ? " (q 32)" : "", (long long)tail, (long long)parts);
}

int main(void) {
  static const int64_t Ps[] = {1, 2, 3, 7, 114, 132, 144};
  static const int64_t ns[] = {0, 1, 2, 8, 31, 32, 33, 63, 64, 128, 256, 1024, 4096};
  static const int64_t qs[] = {0, 32}; /* the default rule; the ping-pong kernels' */
  long cases = 0, splits = 0;
  for (int64_t parts = 2; parts <= 200; ++parts)
    if (check_tree(parts))
      return 1;
  for (size_t qi = 0; qi < sizeof qs / sizeof qs[0]; ++qi)
    for (size_t pi = 0; pi < sizeof Ps / sizeof Ps[0]; ++pi)
      for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ++ni)
        for (int64_t T = 1; T <= 5 * Ps[pi] + 3; T += (Ps[pi] > 16 ? 3 : 1)) {
          if (check(T, ns[ni], Ps[pi], qs[qi], &splits))
            return 1;
          ++cases;
        }
  /* the bench's shapes on 132 SMs: attention B4 H32 S4096 and B1 H32 S16384 (4096 tiles of 32
   * and 128 KV blocks), FP8 8192^3 (4096 tiles of 32 k steps), GEMM 8192^3 (2048 of 128) */
  show(4096, 32, 132, 0);
  show(4096, 128, 132, 0);
  show(2048, 128, 132, 0);
  /* launches of at most half the SMs split every tile: GEMM 128x4096x4096 (16 tiles of 64 k
   * steps), 256x256x65536 (2 of 1024), attention B1 H2 S4096 (64 tiles of 32 KV blocks); not
   * a launch over half the SMs */
  show(16, 64, 132, 0);
  show(2, 1024, 132, 0);
  show(1, 1024, 132, 0);
  show(1, 4096, 132, 0);
  show(64, 32, 132, 0);
  show(100, 64, 132, 0);
  /* the ping-pong kernels' 64x128 decode tiles (q 32): 16x8192x2048 (64 tiles of 32 k steps)
   * whole, 16x4096x4096 (32 of 64) in 2 parts, 16x2048x8192 (16 of 128) in 4 */
  show(64, 32, 132, 32);
  show(32, 64, 132, 32);
  show(16, 128, 132, 32);
  printf("ok: %ld launch shapes, %ld with split tiles\n", cases, splits);
  return 0;
}
