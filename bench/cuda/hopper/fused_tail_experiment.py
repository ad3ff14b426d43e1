"""Measurement tool, not part of the generator: rewrites a generated sm_90a variant with a split
tail (docs/hopper.md, "Split tail") so that the persistent kernel runs the split tiles' parts
itself, after its whole tiles, instead of a second launch (tg_kernel_ws_split):

  python3 fused_tail_experiment.py IN.cu OUT.cu OLD_PREFIX NEW_PREFIX

Block b < tail * parts of tg_kernel_ws, once its whole tiles are done, runs part b % parts of
split tile b / parts: its producer goes on issuing the part's stages on the same ring (no
pipeline fill, no launch), its consumers run the split kernel's loop and join. The host
launches tg_kernel_ws alone, with at least tail * parts blocks. TGX_PARTS=N (environment, read
once) overrides the parts per split tile (at most SMs / tail). Written against the generator at
929f5fe (bench/RESULTS.md, 2026-12-02)."""
import sys

src, dst, old, new = sys.argv[1:5]
t = open(src).read().replace(old, new)


def cut(text, a, b, start=0):
    i = text.index(a, start)
    return i, text.index(b, i)


ws_head = "__global__ void __launch_bounds__(384, 1) tg_kernel_ws("
sp_head = "__global__ void __launch_bounds__(384, 1) tg_kernel_ws_split("
ws0 = t.index(ws_head)
sp0 = t.index(sp_head)
sp1 = t.index("\n}\n", sp0) + 3
ws = t[ws0:sp0]
sp = t[sp0:sp1]
# the split kernel's producer loop (one part) and consumer block
p0, p1 = cut(sp, "      for (int64_t tg_ti = 0; tg_ti < 1; ++tg_ti) {", "    }\n    return;\n  }")
prod = sp[p0:p1]
c0, c1 = cut(sp, "  do {\n", "  } while (0); // `continue` leaves it\n")
cons = sp[c0:c1] + "  } while (0); // `continue` leaves it\n"
for part in (prod, cons):
    assert "tg_ntiles - tg_p.tg_tail + tg_slot" in part
prod = prod.replace("tg_ntiles - tg_p.tg_tail + tg_slot", "tg_ntiles + tg_slot")
cons = cons.replace("tg_ntiles - tg_p.tg_tail + tg_slot", "tg_ntiles + tg_slot")
guard = "if ((int64_t)blockIdx.x < tg_p.tg_tail * tg_p.tg_parts) "
# producer: after its whole tiles, the part's stages on the same ring
i = ws.index("    }\n    return;\n  }")
ws = ws[:i] + "      " + guard + "{ // the split part (fused_tail_experiment)\n" + prod + "      }\n" + ws[i:]
# consumers: after their whole tiles, the part, its join and (the last part) the epilogue
end = "  if (tg_tid == 0) tg_bulk_wait<0>(); // the last tile's TMA store is done\n}"
i = ws.index(end)
ws = ws[:i] + "  " + guard + "{ // the split part (fused_tail_experiment)\n" + cons + "  }\n" + ws[i:]
a = "  (void)tg_order;\n"
assert ws.count(a) == 1
ws = ws.replace(a, a + "  unsigned* tg_split_arrival = (unsigned*)(tg_full + 7); // per group: the part's arrival number\n")
t = t[:ws0] + ws + t[sp0:]
# host: one launch; the parts' count may be overridden
n = t.count("&tg_tail, &tg_parts);\n")
assert n >= 1
t = t.replace("&tg_tail, &tg_parts);\n", """&tg_tail, &tg_parts);
    {
      static int tgx_parts = -1;
      if (tgx_parts < 0) {
        const char* e = getenv("TGX_PARTS");
        tgx_parts = e ? atoi(e) : 0;
        fprintf(stderr, "fused_tail_experiment: parts %d\\n", tgx_parts);
      }
      if (tg_tail > 0 && tgx_parts > 1 && tg_tail * tgx_parts <= (int64_t)tg_sms) tg_parts = tgx_parts;
    }
""")
a = "  } else if (p.tg_tail < p.tg_tiles[0] * p.tg_tiles[1] * p.tg_tiles[2]) /* tiles left whole */\n"
assert t.count(a) >= 1
t = t.replace(a, "  } else {\n    if (grid.x < (unsigned)(p.tg_tail * p.tg_parts)) grid.x = (unsigned)(p.tg_tail * p.tg_parts);\n")
t = t.replace("  if (tma && p.tg_tail > 0 && tg_e == cudaSuccess) /* the split tiles' parts, after the whole tiles if any */\n",
              "  }\n  if (false) /* fused: no split kernel */\n")
t = "#include <stdio.h>\n#include <stdlib.h>\n" + t
open(dst, "w").write(t)
