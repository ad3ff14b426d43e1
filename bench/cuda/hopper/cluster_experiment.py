"""Measurement tool, not part of the generator: rewrites a generated sm_90a GEMM variant
(kernels/gemm.yaml bf16 or kernels/gemm_fp8.yaml e4m3, warp-specialized and persistent) into a
thread-block-cluster version, to measure whether clusters with TMA multicast would pay
(docs/hopper.md, "Thread-block clusters"; bench/RESULTS.md, 2026-11-30):

  python3 cluster_experiment.py IN.cu OUT.cu OLD_PREFIX NEW_PREFIX [full|nomc|couple]

  full    clusters of 2 blocks along M (__cluster_dims__(2, 1, 1)); the pair takes tiles
          (2 y, x) and (2 y + 1, x) of one L2 group and shares B: each block issues every other
          B panel with .multicast::cluster to both; every consumer warp releases a stage on its
          own and the peer's empty barrier (mapa + mbarrier.arrive.shared::cluster), so a stage
          is refilled once both blocks are done with it
  couple  the same barriers, no multicast (each block loads its own B)
  nomc    only the cluster launch and the paired tile order
The host part launches 2 x min(cluster tiles, cudaOccupancyMaxActiveClusters) blocks and no
split tail. OLD_PREFIX/NEW_PREFIX rename the exported functions (tgv_hb__ -> tgv_hc__) so the
result links next to the original into bench/cuda/hopper/gemm_check or fp8_check."""
import re, sys
src, dst, old, new = sys.argv[1:5]
mode = sys.argv[5] if len(sys.argv) > 5 else 'full'
t = open(src).read()
t = t.replace(old, new)
helpers = r'''
TG_DEV unsigned tg_cluster_rank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r)); return r; }
TG_DEV void tg_cluster_sync() { asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory"); }
TG_DEV void tg_mbar_arrive_peer(uint64_t* b, unsigned peer) {
  unsigned a = (unsigned)__cvta_generic_to_shared(b), r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(peer));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" :: "r"(r) : "memory");
}
TG_DEV void tg_tma_load_2d_mc(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1, unsigned short mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n"
               ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(map), "r"((unsigned)__cvta_generic_to_shared(bar)), "r"(c0), "r"(c1), "h"(mask) : "memory");
}
'''
t = t.replace("/* setmaxnreg: the warpgroup", helpers + "/* setmaxnreg: the warpgroup", 1)
ws_start = t.index("__global__ void __launch_bounds__(384, 1) tg_kernel_ws(")
ws_end = t.index("__global__ void __launch_bounds__(384, 1) tg_kernel_ws_split(")
k = t[ws_start:ws_end]
k = k.replace("__global__ void __launch_bounds__(384, 1) tg_kernel_ws(", "__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1) tg_kernel_ws(")
k = k.replace("const int64_t tg_ntiles = tg_p.tg_tiles[0] * tg_p.tg_tiles[1] * tg_p.tg_tiles[2] - tg_p.tg_tail;",
  "const int64_t tg_ntiles = tg_p.tg_tiles[0] * ((tg_p.tg_tiles[1] + 1) / 2) * tg_p.tg_tiles[2];\n  const unsigned tg_rank = tg_cluster_rank();")
if mode != "nomc": k = re.sub(r"tg_mbar_init\(&tg_empty\[tg_s\], (\d+)\);", lambda m: "tg_mbar_init(&tg_empty[tg_s], %d);" % (2*int(m.group(1))), k)
k = k.replace("  __syncthreads();\n  // producer", "  __syncthreads();\n  tg_cluster_sync();\n  // producer", 1)
k = k.replace("for (int64_t tg_tile = blockIdx.x; tg_tile < tg_ntiles; tg_tile += gridDim.x", "for (int64_t tg_tile = blockIdx.x / 2; tg_tile < tg_ntiles; tg_tile += gridDim.x / 2")
k = k.replace("const int64_t tg_gx = tg_p.tg_tiles[0], tg_gy = tg_p.tg_tiles[1];", "const int64_t tg_gx = tg_p.tg_tiles[0], tg_gy = (tg_p.tg_tiles[1] + 1) / 2;")
R = int(re.search(r"\((\d+) \* tg_gx\)", k).group(1)); R2 = (R + 1) // 2
k = k.replace("(%d * tg_gx) * %d;" % (R, R), "(%d * tg_gx) * %d;" % (R2, R2)).replace("(%d * tg_gx)" % R, "(%d * tg_gx)" % R2).replace("< %d ? tg_gy - tg_first : %d" % (R, R), "< %d ? tg_gy - tg_first : %d" % (R2, R2))
k = k.replace("const int64_t by = tg_by;", "const int64_t by = 2 * tg_by + tg_rank;")
# B boxes: multicast, rank r issues every other panel
lines = k.split("\n"); out = []; bi = 0
for ln in lines:
    if mode == "full" and "tg_tma_load_2d(" in ln and "tg_tm_B_s" in ln:
        ln2 = ln.replace("tg_tma_load_2d(", "tg_tma_load_2d_mc(").replace(");", ", (unsigned short)3);")
        out.append("          if (%d %% 2 == (int)tg_rank) %s" % (bi, ln2.strip())); bi += 1
    else:
        out.append(ln)
k = "\n".join(out)
if mode != "nomc": k = re.sub(r"if \((.*?)tg_tid % 32 == 0\) tg_mbar_arrive\(&tg_empty\[(.*?)\]\);",
           r"if (\1tg_tid % 32 == 0) { tg_mbar_arrive(&tg_empty[\2]); tg_mbar_arrive_peer(&tg_empty[\2], tg_rank ^ 1); }", k)
k = k.replace("  if (tg_tid == 0) tg_bulk_wait<0>(); // the last tile's TMA store is done\n}",
              "  if (tg_tid == 0) tg_bulk_wait<0>(); // the last tile's TMA store is done\n  tg_cluster_sync();\n}")
t = t[:ws_start] + k + t[ws_end:]
# host: no split; grid = 2 * min(cluster tiles, max active clusters)
t = t.replace("if (tma && tg_sms <= TG_CUDA_SPLIT_CUTS) {", "if (false) {")
t = t.replace("""    const uint64_t tg_n = (uint64_t)grid.x * grid.y * grid.z;
    grid = dim3((unsigned)(tg_n < (uint64_t)tg_sms ? tg_n : (uint64_t)tg_sms), 1, 1);""",
"""    const uint64_t tg_n = (uint64_t)grid.x * ((grid.y + 1) / 2) * grid.z;
    static int tg_maxc = 0;
    if (!tg_maxc) {
      cudaLaunchConfig_t cfg = {};
      cudaLaunchAttribute at[1];
      at[0].id = cudaLaunchAttributeClusterDimension;
      at[0].val.clusterDim.x = 2; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
      cfg.gridDim = dim3(2 * 66, 1, 1); cfg.blockDim = dim3(384, 1, 1); cfg.dynamicSmemBytes = tg_smem_bytes;
      cfg.attrs = at; cfg.numAttrs = 0;
      if (cudaOccupancyMaxActiveClusters(&tg_maxc, (void*)tg_kernel_ws, &cfg) != cudaSuccess || tg_maxc < 1) { (void)cudaGetLastError(); tg_maxc = 1; }
      fprintf(stderr, "max active 2-clusters: %d\\n", tg_maxc);
    }
    grid = dim3(2 * (unsigned)(tg_n < (uint64_t)tg_maxc ? tg_n : (uint64_t)tg_maxc), 1, 1);""")
t = t.replace("#include <stdint.h>", "#include <stdint.h>\n#include <stdio.h>", 1)
open(dst, "w").write(t)
