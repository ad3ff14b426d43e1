"""Measurement tool, not part of the generator: rewrites a generated sm_90a GEMM variant
(kernels/gemm.yaml bf16: one consumer group of two warpgroups, TMA-store epilogue) so that each
consumer warpgroup stores its own 64 rows of the tile behind its own named barrier, with its own
bulk groups, and nothing else holds the two warpgroups together between tiles: the one that
finishes its stores first starts the next tile's wgmmas while the other still stores (the ring's
stages are released per warp, so the two may drift apart by up to the ring's depth).

  python3 wg_epilogue_experiment.py IN.cu OUT.cu OLD_PREFIX NEW_PREFIX

The store tensor map's box becomes 64 rows (the split kernel stores its tiles as two boxes).
Written against the generator at 929f5fe (bench/RESULTS.md, 2026-12-02)."""
import re
import sys

src, dst, old, new = sys.argv[1:5]
t = open(src).read().replace(old, new)


def sub(text, a, b, count):
    n = text.count(a)
    if n != count:
        sys.exit("wg_epilogue_experiment: %r found %d times, expected %d" % (a, n, count))
    return text.replace(a, b)


t = sub(t, "/* setmaxnreg: the warpgroup",
        "TG_DEV void tg_bar_wg(int wg) { asm volatile(\"bar.sync %0, 128;\\n\" ::\"r\"(2 + wg) : \"memory\"); }\n"
        "/* setmaxnreg: the warpgroup", 1)
ws0 = t.index("__global__ void __launch_bounds__(384, 1) tg_kernel_ws(")
sp0 = t.index("__global__ void __launch_bounds__(384, 1) tg_kernel_ws_split(")
sp1 = t.index("\n}\n", sp0)
ws, sp = t[ws0:sp0], t[sp0:sp1]
ws = sub(ws, "      if (tg_tid == 0) tg_bulk_wait_read<0>(); // the last tile's store has read it\n      tg_bar_consumers(tg_grp);",
         "      if (tg_tid % 128 == 0) tg_bulk_wait_read<0>(); // this warpgroup's last store has read its rows\n      tg_bar_wg(tg_tid / 128);", 1)
ws = sub(ws, "      tg_fence_proxy_async();\n      tg_bar_consumers(tg_grp);\n      if (tg_tid == 0) {",
         "      tg_fence_proxy_async();\n      tg_bar_wg(tg_tid / 128);\n      if (tg_tid % 128 == 0) { // this warpgroup's 64 rows", 1)
store = re.compile(r"tg_tma_store_2d\(&tg_p\.tg_tm_store, tg_stage \+ (\d+), \(int\)\((.*?)\), \(int\)\(by \* BM\)\);")
ws, n = store.subn(lambda m: "tg_tma_store_2d(&tg_p.tg_tm_store, tg_stage + %s + (tg_tid / 128) * 4096, (int)(%s), (int)(by * BM) + (tg_tid / 128) * 64);"
                   % (m.group(1), m.group(2)), ws)
assert n >= 1, n
ws = sub(ws, "  if (tg_tid == 0) tg_bulk_wait<0>(); // the last tile's TMA store is done",
         "  if (tg_tid % 128 == 0) tg_bulk_wait<0>(); // the last tile's TMA stores are done", 1)
sp, n = store.subn(lambda m: "tg_tma_store_2d(&tg_p.tg_tm_store, tg_stage + %s, (int)(%s), (int)(by * BM)); "
                   "tg_tma_store_2d(&tg_p.tg_tm_store, tg_stage + %s + 4096, (int)(%s), (int)(by * BM) + 64);"
                   % (m.group(1), m.group(2), m.group(1), m.group(2)), sp)
assert n >= 1, n
t = t[:ws0] + ws + sp + t[sp1:]
box = re.compile(r"const cuuint32_t box\[2\] = \{64, 128\}(, estr\[2\] = \{1, 1\};(?:(?!cuuint32_t box).)*?&tg_p->tg_tm_store)", re.S)
t, n = box.subn(r"const cuuint32_t box[2] = {64, 64}\1", t)
assert n >= 1, n
open(dst, "w").write(t)
