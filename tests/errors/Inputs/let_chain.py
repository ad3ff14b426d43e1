# Writes a spec whose parallel body is a chain of N lets, each reading the previous one twice.
import sys

n = int(sys.argv[1])
lets = ["let t0 = x[i]"] + ["let t%d = t%d * t%d + 1.0" % (k, k - 1, k - 1) for k in range(1, n)]
print("""kernel: letchain
summary: s
params: {M: dim}
tensors:
  X: {type: f32, shape: [M]}
  Y: {type: f32, shape: [M], access: write}
schedule:
  BM: [64]
grid: {bx: "cdiv(M, BM)"}
body:
  - fragment: {x: [f32, BM]}
  - copy: {src: "X[bx * BM]", dst: x}
  - parallel: {i: BM}
    body:
%s
      - "x[i] = t%d > 0.0 ? t%d : 0.0"
  - copy: {src: x, dst: "Y[bx * BM]"}""" % ("\n".join('      - "%s"' % l for l in lets), n - 1, n - 1))
