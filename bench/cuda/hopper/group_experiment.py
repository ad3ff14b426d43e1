"""Measurement tool, not part of the generator: rewrites a generated sm_90a warp-specialized
variant so that the environment can override the rows of tiles per group of the persistent walk
(tg_walk_rows, docs/hopper.md "Tile order"):

  python3 group_experiment.py IN.cu OUT.cu OLD_PREFIX NEW_PREFIX [ENV]

ENV (default TGX_GROUP) = G > 0 sets the group to G rows for every call (read once per process);
unset: as generated. Used to test whether the walk's sharing of panels across GPCs matters
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
open(dst, "w").write("#include <stdio.h>\n#include <stdlib.h>\n" + t)
