# Hand edit of a generated attention variant for sm_90a (issue #4 experiment, bench/RESULTS.md
# 2026-12-02; sources of 7877002^): the persistent walk's group of rows (heads) G instead of 8.
# Usage: python3 order.py FILE.cu G
import sys
p, G = sys.argv[1], sys.argv[2]
s = open(p).read()
n = s.count("tg_plane / (8 * tg_gx) * 8;")
assert n >= 2, n
s = s.replace("tg_plane / (8 * tg_gx) * 8;", f"tg_plane / ({G} * tg_gx) * {G};")
s = s.replace("tg_gy - tg_first < 8 ? tg_gy - tg_first : 8;", f"tg_gy - tg_first < {G} ? tg_gy - tg_first : {G};")
s = s.replace("tg_plane % (8 * tg_gx)", f"tg_plane % ({G} * tg_gx)")
assert "(8 * tg_gx)" not in s
open(p, "w").write(s)
print("order", G, p, n)
