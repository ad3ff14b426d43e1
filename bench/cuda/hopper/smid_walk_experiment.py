"""Measurement tool, not part of the generator: rewrites a generated sm_90a warp-specialized
variant so that a persistent block takes its place in the tile walk from the SM it runs on
instead of its blockIdx.x:

  python3 smid_walk_experiment.py IN.cu OUT.cu OLD_PREFIX NEW_PREFIX [ENV]

With ENV (default TGX_SMID) set to 1, block b walks the tiles of the rank of its %smid among
the SMs the grid runs on, so blocks on neighbouring SM ids (which share a GPC, and so a side of
the L2) take neighbouring tiles of the walk, which share panels; unset or 0: blockIdx.x as
generated. The rank table comes from a probe launch (one block per SM: the kernel's own shared
memory), once per process; the probe's blockIdx -> smid list goes to stderr. Only where the
grid has one block per SM (gridDim.x == SMs). Written against the generator at 0997e30."""
import sys

src, dst, old, new = sys.argv[1:5]
env = sys.argv[5] if len(sys.argv) > 5 else "TGX_SMID"
t = open(src).read().replace(old, new)

ws_head = "__global__ void __launch_bounds__(384, 1) tg_kernel_ws("
sp_head = "__global__ void __launch_bounds__(384, 1) tg_kernel_ws_split("
ws0, sp0 = t.index(ws_head), t.index(sp_head)
ws = t[ws0:sp0]


def once(text, a, b, n=1):
    assert text.count(a) == n, (a, text.count(a))
    return text.replace(a, b)


ws = once(ws, "for (int64_t tg_tile = blockIdx.x; tg_tile < tg_ntiles;", "for (int64_t tg_tile = tgx_v; tg_tile < tg_ntiles;", 2)
ws = once(ws, "  __syncthreads();\n",
          "  __syncthreads();\n"
          "  unsigned tgx_sm;\n  asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(tgx_sm));\n"
          "  const int64_t tgx_v = tg_p.tgx_rank ? (int64_t)tg_p.tgx_rank[tgx_sm] : (int64_t)blockIdx.x; // smid_walk_experiment\n")
t = t[:ws0] + ws + t[sp0:]
t = once(t, "  int64_t tg_group;          // rows of tiles per group of the walk (tg_walk_rows)\n",
         "  int64_t tg_group;          // rows of tiles per group of the walk (tg_walk_rows)\n"
         "  const int* tgx_rank; // smid_walk_experiment: walk place by %smid (NULL: blockIdx.x)\n")
probe = """
/* smid_walk_experiment: each block of a one-block-per-SM launch writes its %smid */
static __global__ void tgx_probe(int* out) {
  extern __shared__ unsigned char tgx_s[];
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (threadIdx.x == 0) out[blockIdx.x] = (int)sm + 0 * tgx_s[0];
}
"""
t = once(t, "static int tg_run(const tg_launch* launch, const tg_variant_args* args, const int64_t* tg_pitch) {\n",
         probe + "static int tg_run(const tg_launch* launch, const tg_variant_args* args, const int64_t* tg_pitch) {\n")
host = """  if (tma) { // smid_walk_experiment
    static int tgx_mode = -1;
    static int* tgx_table = NULL;
    p.tgx_rank = NULL;
    if (tgx_mode < 0) {
      const char* e = getenv("@ENV@");
      tgx_mode = e ? atoi(e) : 0;
      if (tgx_mode) {
        int* d = NULL;
        int h[1024], r[1024];
        cudaFuncSetAttribute(tgx_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)tg_smem_bytes);
        if (tg_sms > 1024 || cudaMalloc(&d, 1024 * sizeof(int)) != cudaSuccess) abort();
        tgx_probe<<<tg_sms, 32, tg_smem_bytes>>>(d);
        if (cudaMemcpy(h, d, tg_sms * sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess) abort();
        for (int i = 0; i < 1024; ++i) r[i] = 0;
        int seen[1024] = {0}, ok = 1;
        for (int i = 0; i < tg_sms; ++i) { if (h[i] < 0 || h[i] >= 1024 || seen[h[i]]++) ok = 0; }
        int rank = 0;
        for (int s = 0; s < 1024; ++s) if (seen[s]) r[s] = rank++;
        fprintf(stderr, "@ENV@: %s; blockIdx -> smid:", ok ? "one block per SM" : "NOT one block per SM, off");
        for (int i = 0; i < tg_sms; ++i) fprintf(stderr, " %d", h[i]);
        fprintf(stderr, "\\n");
        if (ok && cudaMemcpy(d, r, 1024 * sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess) tgx_table = d;
      }
    }
    if (tgx_table && grid.x == (unsigned)tg_sms) p.tgx_rank = tgx_table;
  }
"""
t = once(t, "  if (!tma) {\n    if (vec >= 4)", host.replace("@ENV@", env) + "  if (!tma) {\n    if (vec >= 4)")
t = "#include <stdio.h>\n#include <stdlib.h>\n" + t
open(dst, "w").write(t)
