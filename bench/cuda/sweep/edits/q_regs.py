# Hand edit of a generated non-causal or causal D128 attention variant for sm_90a (an experiment
# for issue #4, bench/RESULTS.md 2026-12-02; written against the sources of 0997e30, not in the
# generator): the persistent kernel loads each tile's Q into registers once (ldmatrix from the
# swizzled Q tile, in the wgmma A-fragment layout) and issues QK^T with A from registers, so that
# the 32 KB Q tile is not read from shared memory again for every KV block. The split kernel
# keeps Q in shared memory. Causal variants: every QK^T of the persistent kernel.
# Usage: python3 q_regs.py FILE.cu (in place; then compile and link it into a sweep binary)
import re, sys
p = sys.argv[1]
s = open(p).read()


def once(t, a, b):
    assert t.count(a) == 1, (a, t.count(a))
    return t.replace(a, b)


# helpers: the A-from-registers form without B transposed, and ldmatrix x4
rs_tb = s.index("TG_DEV void tg_wgmma_m64n128k16_bf16_rs_tb(")
end = s.index("\n}\n", rs_tb) + 3
rs = s[rs_tb:end].replace("_rs_tb(", "_rs(").replace("p, 1, 1, 1;", "p, 1, 1, 0;")
assert rs != s[rs_tb:end]
ldsm = ("TG_DEV void tg_ldsm_x4(uint32_t (&r)[4], unsigned addr) {\n"
        "  asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\\n\"\n"
        "               : \"=r\"(r[0]), \"=r\"(r[1]), \"=r\"(r[2]), \"=r\"(r[3]) : \"r\"(addr) : \"memory\");\n}\n")
s = s[:end] + rs + ldsm + s[end:]

ws0 = s.index("tg_kernel_ws(const __grid_constant__")
sp0 = s.index("\n__global__", ws0)  # the next kernel (the split kernel, or the fallback)
ws = s[ws0:sp0]
wait = "    tg_mbar_wait(&tg_pro[0], (unsigned)(tg_i & 1)); // the producer's TMA box\n"
ws = once(ws, wait, wait + """    uint32_t tg_qa[8][4]; // q_regs.py: Q as the first gemm's A registers (mma A layout per warp)
    {
      const int tg_w = (tg_tid % 128) / 32, tg_l = tg_tid % 32;
      const int tg_row = (tg_tid / 128) * 64 + tg_w * 16 + tg_l % 16;
      const unsigned tg_q0 = (unsigned)__cvta_generic_to_shared(tg_smem) + (unsigned)tg_row * 128u;
      #pragma unroll
      for (int tg_k = 0; tg_k < 8; ++tg_k)
        tg_ldsm_x4(tg_qa[tg_k], tg_q0 + (unsigned)(tg_k / 4) * 16384u + (unsigned)((((tg_k % 4) * 2 + tg_l / 16) ^ (tg_row % 8)) * 16));
    }
""")
ks = {0: 0, 2: 1, 4: 2, 6: 3, 1024: 4, 1026: 5, 1028: 6, 1030: 7}
n = 0


def repl(m):
    global n
    n += 1
    return "tg_wgmma_m64n128k16_bf16_rs(s, tg_qa[%d], tg_db + %s, %s);" % (ks[int(m.group(1))], m.group(2), m.group(3))


ws = re.sub(r"tg_wgmma_m64n128k16_bf16_ss\(s, tg_da \+ (\d+), tg_db \+ (\d+), ([^;]*)\);", repl, ws)
assert n >= 8 and n % 8 == 0, n
s = s[:ws0] + ws + s[sp0:]
open(p, "w").write(s)
print("patched", p)
