"""Measurement tool, not part of the generator: rewrites a generated sm_90a warp-specialized
variant so that the environment can override the rows of tiles per group of the persistent walk
(tg_walk_rows, docs/hopper.md "Tile order"):

  python3 group_experiment.py IN.cu OUT.cu OLD_PREFIX NEW_PREFIX [ENV]

ENV (default TGX_GROUP) = G > 0 sets the group to G rows for every call (read once per process);
unset: as generated. ENV_PERM = r permutes the blocks' places within groups of 16 (below).
Used to test whether the walk's sharing of panels across GPCs matters
(blocks are dispatched to SMs in TPC pairs, consecutive pairs on other GPCs: bench/RESULTS.md
2026-12-02 06:25). Written against the generator at 0997e30."""
import sys

src, dst, old, new = sys.argv[1:5]
env = sys.argv[5] if len(sys.argv) > 5 else "TGX_GROUP"
t = open(src).read().replace(old, new)
a = "    p.tg_group = tg_walk_rows(p.tg_tiles[0], p.tg_nk, (int64_t)grid.x, (int64_t)tg_l2);\n"
assert t.count(a) >= 1
t = t.replace(a, a + """    { // group_experiment
      static int tgx_g = -1;
      if (tgx_g < 0) {
        const char* e = getenv("@ENV@");
        tgx_g = e ? atoi(e) : 0;
        fprintf(stderr, "group_experiment: @ENV@ %d\\n", tgx_g);
      }
      if (tgx_g > 0) p.tg_group = tgx_g;
    }
""".replace("@ENV@", env))
# ENV_PERM = r > 0: block b takes walk place 16 (b / 16) + (b % 16 + r (b / 16)) % 16 within
# each whole group of 16 blocks (the rest keep b): the blocks 16 places apart (which share an A
# panel in groups of 16 rows) move r places within their group of 16, and so to other GPCs
ws0 = t.index("__global__ void __launch_bounds__(384, 1) tg_kernel_ws(")
sp0 = t.index("__global__ void __launch_bounds__(384, 1) tg_kernel_ws_split(")
ws = t[ws0:sp0]
a = "for (int64_t tg_tile = blockIdx.x; tg_tile < tg_ntiles;"
assert ws.count(a) == 2
ws = ws.replace(a, "for (int64_t tg_tile = tgx_v; tg_tile < tg_ntiles;")
a = "  __syncthreads();\n"
assert ws.count(a) == 1
ws = ws.replace(a, a + """  int64_t tgx_v = blockIdx.x; // group_experiment: the block's place in the walk
  if (tg_p.tgx_perm > 0 && (int64_t)blockIdx.x < (int64_t)gridDim.x / 16 * 16)
    tgx_v = blockIdx.x / 16 * 16 + (blockIdx.x % 16 + tg_p.tgx_perm * (blockIdx.x / 16)) % 16;
""")
t = t[:ws0] + ws + t[sp0:]
a = "  int64_t tg_group;          // rows of tiles per group of the walk (tg_walk_rows)\n"
assert t.count(a) == 1
t = t.replace(a, a + "  int64_t tgx_perm; // group_experiment\n")
a = "      if (tgx_g > 0) p.tg_group = tgx_g;\n"
t = t.replace(a, a + """      static int tgx_r = -1;
      if (tgx_r < 0) {
        const char* e = getenv("@ENV@_PERM");
        tgx_r = e ? atoi(e) : 0;
      }
      p.tgx_perm = tgx_r;
""".replace("@ENV@", env))
open(dst, "w").write("#include <stdio.h>\n#include <stdlib.h>\n" + t)
