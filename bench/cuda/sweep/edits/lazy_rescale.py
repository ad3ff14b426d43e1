# Hand edit of a generated sm_90a attention variant (an experiment for issue #4, bench/RESULTS.md
# 2026-12-02; written against the sources of 0997e30, not in the generator): the running row
# maximum moves only when a block raises it by more than TH (log2 units, so P stays below 2^TH),
# and the accumulator's rescale by alpha is skipped where every row of the warp has alpha == 1
# (x * 1 == x exactly, so the skip changes no bit). The results stay exact up to rounding: m, l
# and acc always refer to the same maximum.
# Usage: python3 lazy_rescale.py FILE.cu [TH] (in place; default TH 8)
import re, sys
p = sys.argv[1]
th = float(sys.argv[2]) if len(sys.argv) > 2 else 8.0
s = open(p).read()

mx = "const float m_new = tg_max_f32(m[tg_r_i], m_blk[tg_r_i] * (sm_scale * 1.442695f));"
n = s.count(mx)
assert n >= 2, n
s = s.replace(mx, "const float m_up = tg_max_f32(m[tg_r_i], m_blk[tg_r_i] * (sm_scale * 1.442695f));\n"
              f"              const float m_new = m_up - m[tg_r_i] > {th:.1f}f ? m_up : m[tg_r_i]; // lazy_rescale.py")
pat = re.compile(r"acc\[\(tg_r_i\) \* (\d+) \+ tg_r_j\] = acc\[\(tg_r_i\) \* \1 \+ tg_r_j\] \* alpha\[tg_r_i\];")
hits = [m.start() for m in pat.finditer(s)]
assert len(hits) >= 2, len(hits)
for h in reversed(hits):
    c = s.rindex(": parallel\n", 0, h)
    c = s.index("\n", c) + 1  # the line after the op's source comment: its block's "{"
    ind = s[c:s.index("{", c)]
    s = s[:c] + ind + "if (__any_sync(0xffffffffu, alpha[0] != 1.0f || alpha[1] != 1.0f)) // lazy_rescale.py\n" + s[c:]
open(p, "w").write(s)
print("patched", p, n, "maxima,", len(hits), "rescales")
