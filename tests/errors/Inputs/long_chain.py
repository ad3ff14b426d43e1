# Writes a spec whose parallel statement is `A[...] = i + 1 + 1 + ... + 1` with N ones.
import sys

n = int(sys.argv[1])
print("""kernel: k
summary: s
params: {M: dim}
tensors: {A: {type: i32, shape: [M], access: write}}
grid: {bx: "cdiv(M, 64)"}
body:
  - parallel: {i: 64}
    body: ["A[bx * 64 + i] = i32(i + %s)"]""" % "+".join(["1"] * n))
