# Hand edit of a generated non-causal D128 attention variant for sm_90a (an experiment for issue
# #4, bench/RESULTS.md 2026-12-02; written against the sources of 7877002^, not kept in the
# generator): per-warpgroup Q halves and epilogues, the turn ring continued across tiles.
# Usage: python3 overlap.py FILE.cu (in place; then compile and link it into a sweep binary)
import re, sys
p = sys.argv[1]
s = open(p).read()
ws0 = s.index("tg_kernel_ws(const __grid_constant__")
sp0 = s.index("tg_kernel_ws_split(const __grid_constant__")
fb0 = s.index("/* The fallback for tensors TMA cannot describe")
ws, sp, rest_pre, rest = s[ws0:sp0], s[sp0:fb0], s[:ws0], s[fb0:]

def rep(t, a, b, n=1):
    c = t.count(a)
    assert c == n, (a, c)
    return t.replace(a, b)

Q0 = "tg_tma_load_4d(((__nv_bfloat16*)(tg_smem + 0)) + 0, &tg_p.tg_tm_Q_s, &tg_pro[0], (int)(0), (int)(bx * BM), (int)(by), (int)(bz));"
Q1 = "tg_tma_load_4d(((__nv_bfloat16*)(tg_smem + 0)) + 8192, &tg_p.tg_tm_Q_s, &tg_pro[0], (int)((0) + 64), (int)(bx * BM), (int)(by), (int)(bz));"
def qhalf(w, bar):
    return (f"tg_tma_load_4d(((__nv_bfloat16*)(tg_smem + 0)) + {w * 4096}, &tg_p.tg_tm_Q_s, &tg_pro[{bar}], (int)(0), (int)(bx * BM + {64 * w}), (int)(by), (int)(bz));\n"
            f"            tg_tma_load_4d(((__nv_bfloat16*)(tg_smem + 0)) + {8192 + w * 4096}, &tg_p.tg_tm_Q_s, &tg_pro[{bar}], (int)((0) + 64), (int)(bx * BM + {64 * w}), (int)(by), (int)(bz));")
ST0 = "tg_tma_store_4d(&tg_p.tg_tm_store, tg_stage + 0, (int)(0), (int)(bx * BM), (int)(by), (int)(bz));"
ST1 = "tg_tma_store_4d(&tg_p.tg_tm_store, tg_stage + 8192, (int)((0) + 64), (int)(bx * BM), (int)(by), (int)(bz));"

# --- the split kernel: same one barrier, Q and the store in 64-row boxes
sp = rep(sp, Q0, qhalf(0, 0) + "\n            " + qhalf(1, 0), 2)
sp = rep(sp, Q1, "", 2)
sp = rep(sp, ST0, ST0.replace("tg_stage + 0,", "tg_stage + 0,") + "\n        " +
         "tg_tma_store_4d(&tg_p.tg_tm_store, tg_stage + 4096, (int)(0), (int)(bx * BM + 64), (int)(by), (int)(bz));", 1)
sp = rep(sp, ST1, ST1 + "\n        " +
         "tg_tma_store_4d(&tg_p.tg_tm_store, tg_stage + 12288, (int)((0) + 64), (int)(bx * BM + 64), (int)(by), (int)(bz));", 1)

# --- the persistent kernel
# barriers: pro[0]/[1] full/empty of warpgroup 0's Q half, pro[2]/[3] warpgroup 1's
ws = rep(ws, "    tg_mbar_init(&tg_pro[0], 1);\n    tg_mbar_init(&tg_pro[1], 8);\n",
         "    tg_mbar_init(&tg_pro[0], 1);\n    tg_mbar_init(&tg_pro[1], 4);\n    tg_mbar_init(&tg_pro[2], 1);\n    tg_mbar_init(&tg_pro[3], 4);\n")
ws = re.sub(r"\n *// [^\n]*: copy \(TMA, once per tile\)", "", ws)
prod_old = """            if (tg_ti > 0) tg_mbar_wait(&tg_pro[1], (unsigned)((tg_ti - 1) & 1));
            tg_mbar_expect_tx(&tg_pro[0], 32768u);
            """ + Q0 + "\n            " + Q1
prod_new = """            for (int tg_w = 0; tg_w < 2; ++tg_w) {
            if (tg_ti > 0) tg_mbar_wait(&tg_pro[2 * tg_w + 1], (unsigned)((tg_ti - 1) & 1));
            tg_mbar_expect_tx(&tg_pro[2 * tg_w], 16384u);
            tg_tma_load_4d(((__nv_bfloat16*)(tg_smem + 0)) + tg_w * 4096, &tg_p.tg_tm_Q_s, &tg_pro[2 * tg_w], (int)(0), (int)(bx * BM + 64 * tg_w), (int)(by), (int)(bz));
            tg_tma_load_4d(((__nv_bfloat16*)(tg_smem + 0)) + 8192 + tg_w * 4096, &tg_p.tg_tm_Q_s, &tg_pro[2 * tg_w], (int)((0) + 64), (int)(bx * BM + 64 * tg_w), (int)(by), (int)(bz));
            }"""
ws = rep(ws, prod_old, prod_new)
assert "16384u);" in ws, "producer Q (it == 0) not patched"
# the tg_n == 0 form: the same with 10 spaces of indent
prod_old0 = prod_old.replace("\n            ", "\n          ")
prod_old0 = "          " + prod_old0.lstrip()
ws = rep(ws, prod_old0, prod_new.replace("\n            ", "\n          "))
# consumer: wait for its own Q half
ws = rep(ws, "tg_mbar_wait(&tg_pro[0], (unsigned)(tg_i & 1)); // the producer's TMA box",
         "tg_mbar_wait(&tg_pro[2 * (tg_tid / 128)], (unsigned)(tg_i & 1)); // this warpgroup's Q half")
# the turn ring continues across tiles: warpgroup 1 gives the first turn on the block's first tile only
ws = rep(ws, "      if (tg_tid / 128 == 1) tg_bar_arrive_n(3, 256);\n",
         "      if (tg_tid / 128 == 1 && tg_i == 0) tg_bar_arrive_n(3, 256);\n")
# ... and warpgroup 0 takes warpgroup 1's last turn only after the block's last tile
ws = rep(ws, "      if (tg_tid / 128 == 0) tg_bar_sync_n(3, 256); // warpgroup 1's last turn\n", "")
# Q half released once the last block's first gemm is complete (after wait<1>/<0>, at the K release)
ws = rep(ws, "          if (tg_tid % 32 == 0) tg_mbar_arrive(&tg_empty[tg_st]); // this block's K\n",
         "          if (tg_tid % 32 == 0) tg_mbar_arrive(&tg_empty[tg_st]); // this block's K\n"
         "          if (tg_it == tg_n - 1 && tg_tid % 32 == 0) tg_mbar_arrive(&tg_pro[2 * (tg_tid / 128) + 1]); // this warpgroup's Q half\n")
ws = rep(ws, "      if (tg_tid % 32 == 0) tg_mbar_arrive(&tg_pro[1]); // the prologue buffers: the loop's gemms are done with them\n",
         "      if (tg_n == 0 && tg_tid % 32 == 0) tg_mbar_arrive(&tg_pro[2 * (tg_tid / 128) + 1]);\n")
# per-warpgroup epilogue: own barrier (ids 5, 6), own 64-row stores
ws = rep(ws, "      if (tg_tid == 0) tg_bulk_wait_read<0>(); // the last tile's store has read it\n      tg_bar_consumers(tg_grp);\n",
         "      if (tg_tid % 128 == 0) tg_bulk_wait_read<0>(); // the last tile's store has read it\n      tg_bar_sync_n(5 + tg_tid / 128, 128);\n")
ws = rep(ws, "      tg_fence_proxy_async();\n      tg_bar_consumers(tg_grp);\n      if (tg_tid == 0) {\n",
         "      tg_fence_proxy_async();\n      tg_bar_sync_n(5 + tg_tid / 128, 128);\n      if (tg_tid % 128 == 0) {\n")
ws = rep(ws, "        " + ST0 + "\n        " + ST1 + "\n",
         "        tg_tma_store_4d(&tg_p.tg_tm_store, tg_stage + (tg_tid / 128) * 4096, (int)(0), (int)(bx * BM + 64 * (tg_tid / 128)), (int)(by), (int)(bz));\n"
         "        tg_tma_store_4d(&tg_p.tg_tm_store, tg_stage + 8192 + (tg_tid / 128) * 4096, (int)((0) + 64), (int)(bx * BM + 64 * (tg_tid / 128)), (int)(by), (int)(bz));\n")
ws = rep(ws, "    tg_bar_consumers(tg_grp);\n    ++tg_turn;\n  }\n  if (tg_tid == 0) tg_bulk_wait<0>(); // the last tile's TMA store is done\n",
         "    ++tg_turn;\n  }\n  if (tg_tid / 128 == 0 && tg_i > 0) tg_bar_sync_n(3, 256); // warpgroup 1's last turn\n"
         "  if (tg_tid % 128 == 0) tg_bulk_wait<0>(); // the last tile's TMA store is done\n")
assert "tg_bar_consumers" not in ws, "a consumer barrier left"

# host: Q and O boxes of 64 rows
pre, host = rest.split("/* the epilogue's TMA store into O */", 1) if "/* the epilogue's TMA store into O */" in rest else (None, None)
n_box = rest.count("const cuuint32_t box[4] = {64, 128, 1, 1}")
assert n_box >= 4, n_box
# Q's map is the first encode of tg_tm_Q_s; O's after the marker
def box64(text, member):
    i = text.index(member)
    j = text.rindex("const cuuint32_t box[4] = {64, 128, 1, 1}", 0, i)
    return text[:j] + "const cuuint32_t box[4] = {64, 64, 1, 1}" + text[j + len("const cuuint32_t box[4] = {64, 128, 1, 1}"):]
rest = box64(rest, "&tg_p->tg_tm_Q_s,")
rest = box64(rest, "&tg_p->tg_tm_store,")
open(p, "w").write(rest_pre + ws + sp + rest)
print("patched", p)
