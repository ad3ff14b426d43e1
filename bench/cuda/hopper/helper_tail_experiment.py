"""Measurement tool, not part of the generator: rewrites a generated sm_90a GEMM variant
(bf16/f16, one consumer group, no promotion) so that a last wave that is not full is shared
between its owners and the blocks it leaves idle ("helpers"):

  python3 helper_tail_experiment.py IN.cu OUT.cu OLD_PREFIX NEW_PREFIX [ENV]

With T tiles on P blocks, L = T % P > 0 and H = P - L, block b < L owns tile T - L + b of the
last wave and runs only its first n - j iterations; block L + h, once its whole tiles are done,
runs the last j iterations of tiles T - L + h, T - L + h + H, ... on the same ring, leaving
each one's float registers in a workspace slot and setting the slot's ready word. The owner
waits for the word, adds the slot to its registers and runs the epilogue. The helpers read the
k slices nobody else reads (no panel is read twice), and nobody waits on a part not yet
running. TGX_J=j (environment, or the variable ENV names; read once; 0: off) sets j;
TGX_J=-1 picks j so that a helper's tiles (j + 2 iterations each, the store counted as two) take no longer than an owner's
n - j + 2. ENV_PF set (any value): the helper slices are prefetched into the L2
(cp.async.bulk.prefetch.tensor) while the helper runs its last whole tile. Written against the generator at 0997e30."""
import sys

src, dst, old, new = sys.argv[1:5]
env = sys.argv[5] if len(sys.argv) > 5 else "TGX_J"  # several patched libraries in one process
t = open(src).read().replace(old, new)

ws_head = "__global__ void __launch_bounds__(384, 1) tg_kernel_ws("
sp_head = "__global__ void __launch_bounds__(384, 1) tg_kernel_ws_split("
ws0 = t.index(ws_head)
sp0 = t.index(sp_head)
ws = t[ws0:sp0]


def once(text, a, b):
    assert text.count(a) == 1, (a, text.count(a))
    return text.replace(a, b)


# the work items of a block: its whole tiles (owner), then the helper slices
items = """
        const int64_t tgx_L = tg_p.tgx_j > 0 ? tg_p.tgx_tiles - tg_p.tgx_last : 0;
        const int64_t tgx_H = (int64_t)gridDim.x - tgx_L;
        const int64_t tgx_own = (tg_ntiles - (int64_t)blockIdx.x + gridDim.x - 1) / gridDim.x;
        const int64_t tgx_help = tgx_L > 0 && (int64_t)blockIdx.x >= tgx_L
            ? (tgx_L - ((int64_t)blockIdx.x - tgx_L) + tgx_H - 1) / tgx_H : 0;
"""
item = """
        const bool tgx_helper = tgx_w >= tgx_own;
        const int64_t tg_tile = tgx_helper ? tg_p.tgx_last + ((int64_t)blockIdx.x - tgx_L) + (tgx_w - tgx_own) * tgx_H
                                           : (int64_t)blockIdx.x + tgx_w * gridDim.x;
        const bool tgx_owner = tgx_L > 0 && !tgx_helper && tg_tile >= tg_p.tgx_last;
        const int64_t tgx_kb = tgx_helper ? tg_p.tg_nk - tg_p.tgx_j : 0;
        const int64_t tgx_ke = tgx_owner ? tg_p.tg_nk - tg_p.tgx_j : tg_p.tg_nk;
        (void)tgx_owner;
"""
# producer
ws = once(ws, "      for (int64_t tg_tile = blockIdx.x; tg_tile < tg_ntiles; tg_tile += gridDim.x) {\n",
          items.replace("\n        ", "\n      ") +
          "      for (int64_t tgx_w = 0; tgx_w < tgx_own + tgx_help; ++tgx_w) {" + item)
ws = once(ws, "        const int64_t tg_n = tg_cdiv_i64(K, BK);\n", "        const int64_t tg_n = tgx_ke - tgx_kb;\n")
ws = once(ws, "          const int64_t k = 0 + tg_it;\n          // stage",
          "          const int64_t k = 0 + tgx_kb + tg_it;\n          // stage")
# producer: with tgx_pf, the helper slices are prefetched into the L2 while the block runs its
# last whole tile
import re
d0 = ws.index("        const int64_t tg_gx = tg_p.tg_tiles[0]")
d1 = ws.index("        const int64_t tg_n = tgx_ke - tgx_kb;\n")
decode = ws[d0:d1].replace("\n        ", "\n            ").replace("        const", "            const", 1)
loads = [l for l in ws[d1:ws.index("    return;\n  }")].split("\n") if "tg_tma_load_2d(" in l]
pf = [re.sub(r"tg_tma_load_2d\(.*?, (&tg_p\.\w+), &tg_full\[tg_st\], ", r"tgx_prefetch_2d(\1, ", l).strip() for l in loads]
pre = ("        if (tg_p.tgx_pf && tgx_help > 0 && tgx_w == tgx_own - 1) { // helper_tail_experiment: L2 prefetch\n"
       "          for (int64_t tgx_q = 0; tgx_q < tgx_help; ++tgx_q) {\n"
       "            const int64_t tg_tile = tg_p.tgx_last + ((int64_t)blockIdx.x - tgx_L) + tgx_q * tgx_H;\n"
       + decode +
       "            for (int64_t k = tg_p.tg_nk - tg_p.tgx_j; k < tg_p.tg_nk; ++k) {\n"
       + "".join("              " + l + "\n" for l in pf) +
       "            }\n          }\n        }\n")
ws = ws[:d0] + pre + ws[d0:]
# consumers
ws = once(ws, "  for (int64_t tg_tile = blockIdx.x; tg_tile < tg_ntiles; tg_tile += gridDim.x, ++tg_i) {\n",
          items.replace("\n        ", "\n  ") +
          "  for (int64_t tgx_w = 0; tgx_w < tgx_own + tgx_help; ++tgx_w, ++tg_i) {" + item.replace("\n        ", "\n    "))
ws = once(ws, "      const int64_t tg_n = tg_cdiv_i64(K, BK);\n", "      const int64_t tg_n = tgx_ke - tgx_kb;\n")
ws = once(ws, "          const int64_t k = 0 + tg_it;\n          (void)k;",
          "          const int64_t k = 0 + tgx_kb + tg_it;\n          (void)k;")
join = """    { // helper_tail_experiment: the helper's slice goes to its slot, the owner adds it
      const int64_t tgx_slot = tg_tile - tg_p.tgx_last;
      float* tgx_regs = (float*)(tg_p.tgx_ws + 4096) + tgx_slot * 32768;
      unsigned* tgx_ready = (unsigned*)tg_p.tgx_ws + tgx_slot;
      if (tgx_helper) {
        #pragma unroll
        for (int tg_r = 0; tg_r < 128; ++tg_r) __stcg(tgx_regs + tg_r * 256 + tg_tid, acc[tg_r]);
        tg_bar_consumers(tg_grp);
        if (tg_tid == 0) tg_red_release_u32(tgx_ready, 1u);
        continue;
      }
      if (tgx_owner) {
        if (tg_tid == 0) {
          while (tg_ld_acquire_u32(tgx_ready) == 0u) {
          }
          *tgx_ready = 0u; // for the next launch
        }
        tg_bar_consumers(tg_grp);
        #pragma unroll
        for (int tg_r = 0; tg_r < 128; ++tg_r) acc[tg_r] += __ldcg(tgx_regs + tg_r * 256 + tg_tid);
      }
    }
"""
marker = "    {\n      // epilogue: registers"
i = ws.index(marker)
i = ws.rindex("\n    // ", 0, i) + 1  # before the copy's source comment
ws = ws[:i] + join + ws[i:]
t = t[:ws0] + ws + t[sp0:]
# parameters
t = once(t, "  int64_t tg_group;          // rows of tiles per group of the walk (tg_walk_rows)\n",
         "  int64_t tg_group;          // rows of tiles per group of the walk (tg_walk_rows)\n"
         "  int64_t tgx_tiles, tgx_last, tgx_j, tgx_pf; unsigned char* tgx_ws; // helper_tail_experiment\n")
t = once(t, "/* Programmatic dependent launch", """/* helper_tail_experiment: a TMA box fetched into the L2 only */
TG_DEV void tgx_prefetch_2d(const CUtensorMap* map, int c0, int c1) {
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];\\n" ::"l"(map), "r"(c0), "r"(c1) : "memory");
}
/* Programmatic dependent launch""")
host = """  if (tma) { // helper_tail_experiment (after the split tail's choice: only where none)
      static int tgx_env = -2, tgx_pf = 0;
      if (tgx_env == -2) {
        const char* e = getenv("@ENV@");
        tgx_env = e ? atoi(e) : 0;
        tgx_pf = getenv("@ENV@_PF") != NULL;
        fprintf(stderr, "helper_tail_experiment: @ENV@ %d\\n", tgx_env);
      }
      static unsigned char* tgx_buf = NULL;
      const int64_t T = p.tg_tiles[0] * p.tg_tiles[1] * p.tg_tiles[2], P = (int64_t)grid.x;
      const int64_t L = T % P, n = p.tg_nk;
      p.tgx_tiles = T, p.tgx_last = T - L, p.tgx_j = 0, p.tgx_ws = NULL, p.tgx_pf = tgx_pf;
      if (p.tg_tail == 0 && T > P && L > 0 && n >= 8 && tgx_env != 0) {
        const int64_t per = (L + (P - L) - 1) / (P - L); // a helper's most tiles
        int64_t j = tgx_env;
        if (j < 0) j = (n - per * 2) / (per + 1); // per (j + 2) <= n - j + 2, roughly
        if (j > n - 1) j = n - 1;
        if (!tgx_buf) {
          if (cudaMalloc(&tgx_buf, 4096 + (size_t)P * 131072) != cudaSuccess) abort();
          cudaMemset(tgx_buf, 0, 4096);
        }
        if (j > 0) p.tgx_j = j, p.tgx_ws = tgx_buf;
      }
    }
"""
t = once(t, "  if (!tma) {\n    if (vec >= 4)", host.replace("@ENV@", env) + "  if (!tma) {\n    if (vec >= 4)")
t = "#include <stdio.h>\n#include <stdlib.h>\n" + t
open(dst, "w").write(t)
