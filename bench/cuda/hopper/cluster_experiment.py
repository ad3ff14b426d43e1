"""Measurement tool, not part of the generator: rewrites a generated sm_90a GEMM variant
(kernels/gemm.yaml bf16 or kernels/gemm_fp8.yaml e4m3, warp-specialized and persistent) into a
thread-block-cluster version, to measure whether clusters with TMA multicast would pay
(docs/hopper.md, "Not done yet"; bench/RESULTS.md, 2026-11-30 and 2026-12-02):

  python3 cluster_experiment.py IN.cu OUT.cu OLD_PREFIX NEW_PREFIX [full|nomc|order|spread]

  full    clusters of 2 blocks along M (__cluster_dims__(2, 1, 1)); the pair takes tiles
          (2 y, x) and (2 y + 1, x) of one L2 group and shares B: block r of the pair issues
          B's boxes r, r + 2, ... with .multicast::cluster to both; every consumer warp releases
          a stage on its own and the peer's empty barrier (mapa + mbarrier.arrive.shared::cluster),
          so a stage is refilled once both blocks are done with it
  nomc    only the cluster launch and the paired tile order (each block loads its own B)
  order   only the paired tile order: no cluster launch (rank = blockIdx.x % 2)
  spread  full, with cluster c at place (c * TGX_STRIDE) mod (clusters) of the pairs' walk

The host part launches 2 x min(pair tiles, cudaOccupancyMaxActiveClusters) blocks (printed
once) and no split tail. OLD_PREFIX/NEW_PREFIX rename the exported functions (tgv_hb__ ->
tgv_hc__) so the result links next to the original into bench/cuda/hopper/gemm_check or
fp8_check. Written against the generator at 929f5fe (the walk's group from the host,
tg_p.tg_group)."""
import re
import sys

src, dst, old, new = sys.argv[1:5]
mode = sys.argv[5] if len(sys.argv) > 5 else 'full'
assert mode in ('full', 'nomc', 'order', 'spread'), mode
# spread: full, and cluster c takes place (c * S) mod (clusters) of the pairs' walk, where S
# is TGX_STRIDE (environment, read once; default 1: as full), so that the pairs which share
# a panel need not be neighbouring clusters (a GPC's: bench/RESULTS.md 2026-12-02 06:05); the
# first call prints each block's SM id
spread = mode == 'spread'
if spread:
    mode = 'full'
cluster = mode != 'order'
t = open(src).read().replace(old, new)


def sub1(text, a, b, count=1):
    """text with a replaced by b, exactly `count` times (0: every time, at least once)"""
    n = text.count(a)
    if n == 0 or (count and n != count):
        sys.exit("cluster_experiment: %r found %d times" % (a, n))
    return text.replace(a, b)


helpers = r'''
TG_DEV unsigned tg_cluster_rank() { unsigned r; asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r)); return r; }
TG_DEV void tg_cluster_sync() { asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory"); }
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
t = sub1(t, "/* setmaxnreg: the warpgroup", helpers + "/* setmaxnreg: the warpgroup")
head = "__global__ void __launch_bounds__(384, 1) tg_kernel_ws("
ws_start = t.index(head)
ws_end = t.index("__global__ void __launch_bounds__(384, 1) tg_kernel_ws_split(")
k = t[ws_start:ws_end]
if cluster:
    k = sub1(k, head, "__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1) tg_kernel_ws(")
rank = "tg_cluster_rank()" if cluster else "(unsigned)(blockIdx.x % 2)"
k = sub1(k, "const int64_t tg_ntiles = tg_p.tg_tiles[0] * tg_p.tg_tiles[1] * tg_p.tg_tiles[2] - tg_p.tg_tail;",
         "const int64_t tg_ntiles = tg_p.tg_tiles[0] * ((tg_p.tg_tiles[1] + 1) / 2) * tg_p.tg_tiles[2]; // pairs\n"
         "  const unsigned tg_rank = %s;" % rank)
# the walk over pairs of tiles along y: half the rows, half the group
k = sub1(k, "tg_gy = tg_p.tg_tiles[1];", "tg_gy = (tg_p.tg_tiles[1] + 1) / 2;", 2)
k = sub1(k, "const int64_t tg_gr = tg_p.tg_group;", "const int64_t tg_gr = (tg_p.tg_group + 1) / 2;", 2)
k = sub1(k, "const int64_t by = tg_by;", "const int64_t by = 2 * tg_by + tg_rank;", 2)
place = "(int64_t)(blockIdx.x / 2) * tg_p.tgx_stride % (int64_t)(gridDim.x / 2)" if spread else "blockIdx.x / 2"
k = sub1(k, "for (int64_t tg_tile = blockIdx.x; tg_tile < tg_ntiles; tg_tile += gridDim.x",
         "for (int64_t tg_tile = %s; tg_tile < tg_ntiles; tg_tile += gridDim.x / 2" % place, 2)
if spread:
    k = sub1(k, "  __syncthreads();\n", "  __syncthreads();\n"
             "  if (tg_p.tgx_where && threadIdx.x == 0) { unsigned sm; asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(sm)); tg_p.tgx_where[blockIdx.x] = (int)sm; }\n")

if cluster:
    # the peer's barriers are initialized before anyone arrives on them or multicasts
    k = sub1(k, "  __syncthreads();\n", "  __syncthreads();\n  tg_cluster_sync();\n")
    # nobody leaves while the peer may still arrive on its barriers or write its stages
    k = sub1(k, "  if (tg_tid == 0) tg_bulk_wait<0>(); // the last tile's TMA store is done\n}",
             "  if (tg_tid == 0) tg_bulk_wait<0>(); // the last tile's TMA store is done\n  tg_cluster_sync();\n}")
if mode == 'full':
    k, n = re.subn(r"tg_mbar_init\(&tg_empty\[tg_s\], (\d+)\);",
                   lambda m: "tg_mbar_init(&tg_empty[tg_s], %d);" % (2 * int(m.group(1))), k)
    assert n == 1
    k, n = re.subn(r"tg_mbar_arrive\(&tg_empty\[([^\]]*)\]\);",
                   r"{ tg_mbar_arrive(&tg_empty[\1]); tg_mbar_arrive_peer(&tg_empty[\1], tg_rank ^ 1); }", k)
    assert n >= 1
    out, box = [], 0
    for ln in k.split("\n"):
        if "tg_tma_load_2d(" in ln and "&tg_p.tg_tm_B_s" in ln:
            ln = ln.replace("tg_tma_load_2d(", "tg_tma_load_2d_mc(").replace(");", ", (unsigned short)3);")
            ln = "          if (%d %% 2 == (int)tg_rank) %s" % (box, ln.strip())
            box += 1
        out.append(ln)
    assert box >= 2, box
    k = "\n".join(out)
t = t[:ws_start] + k + t[ws_end:]
# host: no split tail; grid = 2 x min(pair tiles, max active clusters)
t = sub1(t, "if (tma && tg_sms <= TG_CUDA_SPLIT_CUTS) {", "if (false) {", 0)
grid_old = """    const uint64_t tg_n = (uint64_t)grid.x * grid.y * grid.z;
    grid = dim3((unsigned)(tg_n < (uint64_t)tg_sms ? tg_n : (uint64_t)tg_sms), 1, 1);"""
grid_new = """    const uint64_t tg_n = (uint64_t)grid.x * ((grid.y + 1) / 2) * grid.z;
    static int tg_maxc = 0;
    if (!tg_maxc) {
      tg_maxc = tg_sms / 2;
      if (%d) {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(2 * (unsigned)tg_maxc, 1, 1); cfg.blockDim = dim3(384, 1, 1); cfg.dynamicSmemBytes = tg_smem_bytes;
        if (cudaOccupancyMaxActiveClusters(&tg_maxc, (void*)tg_kernel_ws, &cfg) != cudaSuccess || tg_maxc < 1) { (void)cudaGetLastError(); tg_maxc = 1; }
      }
      fprintf(stderr, "cluster_experiment: %%d pairs of blocks resident\\n", tg_maxc);
    }
    grid = dim3(2 * (unsigned)(tg_n < (uint64_t)tg_maxc ? tg_n : (uint64_t)tg_maxc), 1, 1);""" % (1 if cluster else 0)
t = sub1(t, grid_old, grid_new, 0)
if spread:
    t = sub1(t, "  int64_t tg_group;          // rows of tiles per group of the walk (tg_walk_rows)\n",
             "  int64_t tg_group;          // rows of tiles per group of the walk (tg_walk_rows)\n"
             "  int64_t tgx_stride; int* tgx_where; // cluster_experiment spread\n")
    host = r"""    { // cluster_experiment spread: the walk's stride over clusters; the blocks' SM ids once
      static int tgx_s = 0;
      static int* tgx_w = NULL;
      if (!tgx_s) {
        const char* e = getenv("TGX_STRIDE");
        tgx_s = e && atoi(e) > 0 ? atoi(e) : 1;
        if (cudaMalloc(&tgx_w, 4096) != cudaSuccess) abort();
        cudaMemset(tgx_w, 0xFF, 4096);
      }
      int64_t a = tgx_s, b = grid.x / 2;
      while (b) { const int64_t r = a % b; a = b; b = r; }
      p.tgx_stride = a == 1 ? tgx_s : 1; /* a permutation of the places only where coprime */
      p.tgx_where = tgx_w;
    }
"""
    t = sub1(t, "  cudaStream_t stream = launch ? (cudaStream_t)launch->stream : (cudaStream_t)0;\n",
             host + "  cudaStream_t stream = launch ? (cudaStream_t)launch->stream : (cudaStream_t)0;\n", 0)
    t = sub1(t, "  /* the last error is read (and cleared) whatever tg_e says: a later call must not see it */\n",
             r"""  { // cluster_experiment spread: where the first call's blocks ran
    static int tgx_done = 0;
    if (!tgx_done && tma && tg_e == cudaSuccess && cudaStreamSynchronize(stream) == cudaSuccess) {
      int h[1024];
      if (grid.x <= 1024 && cudaMemcpy(h, p.tgx_where, grid.x * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess) {
        fprintf(stderr, "cluster_experiment: stride %lld; blockIdx -> smid:", (long long)p.tgx_stride);
        for (unsigned i = 0; i < grid.x; ++i) fprintf(stderr, " %d", h[i]);
        fprintf(stderr, "\n");
      }
      tgx_done = 1;
    }
  }
  /* the last error is read (and cleared) whatever tg_e says: a later call must not see it */
""", 1)
if "#include <cstdio>" not in t and "#include <stdio.h>" not in t:
    t = "#include <stdio.h>\n" + t
open(dst, "w").write(t)
