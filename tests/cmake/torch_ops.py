"""The PyTorch operators of tgt (tests/cmake/torch_ops.sh builds them from the shipped kernels,
TARGETS c TORCH): every operator x dtype on ragged shapes against torch's float64 math, the
.out overloads, non-contiguous inputs, the error messages (dtype, rank, shape, device, value
sets, scalar requirements, outputs), the Meta kernels (device='meta' and FakeTensorMode) and,
where PyTorch has it, torch.compile(fullgraph=True). Prints one line per check; SKIP lines say
what this PyTorch cannot run. Exit 0 if every check passed."""
import math
import re
import sys

import torch

import tgt_torch

ops = torch.ops.tgt
torch.manual_seed(0)
failures = []
checks = 0


def check(name, cond, detail=""):
    global checks
    checks += 1
    print(("ok   " if cond else "FAIL ") + name + (f": {detail}" if detail and not cond else ""))
    if not cond:
        failures.append(name)


def skip(name, why):
    print(f"SKIP {name}: {why}")


def raises(name, fn, exc, pattern):
    try:
        fn()
    except exc as e:
        msg = str(e).splitlines()[0] if str(e) else ""
        check(name, re.search(pattern, str(e)) is not None, f"message {msg!r} !~ {pattern!r}")
        return
    except Exception as e:  # the wrong kind
        check(name, False, f"raised {type(e).__name__}: {str(e).splitlines()[0]}")
        return
    check(name, False, "did not raise")


def close(name, got, ref, dtype):
    tol = {torch.float32: (2e-5, 2e-5), torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1.6e-2)}[dtype]
    ok = got.dtype == dtype and got.shape == ref.shape
    err = (got.double() - ref).abs().max().item() if got.numel() and ok else 0.0
    ok = ok and torch.allclose(got.double(), ref, rtol=tol[0], atol=tol[1])
    check(name, ok, f"dtype {got.dtype}, shape {tuple(got.shape)} vs {tuple(ref.shape)}, max err {err:.3g}")


DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def rnd(*shape, dtype):
    return torch.randn(*shape, dtype=torch.float32).to(dtype)


# ---- registration ---------------------------------------------------------------------------
expected_schemas = {
    "gemm": "tgt::gemm(Tensor A, Tensor B) -> Tensor",
    "gemm_bias_gelu": "tgt::gemm_bias_gelu(Tensor A, Tensor B, Tensor bias) -> Tensor",
    "rmsnorm": "tgt::rmsnorm(Tensor X, Tensor W, float eps) -> Tensor",
    "softmax": "tgt::softmax(Tensor X) -> Tensor",
    "flash_attention_fwd": "tgt::flash_attention_fwd(Tensor Q, Tensor K, Tensor V, float sm_scale, bool causal=False) -> Tensor",
    "gemm_fp8": "tgt::gemm_fp8(Tensor A, Tensor B, float scale_a, float scale_b) -> Tensor",
}
for name, schema in expected_schemas.items():
    op = getattr(ops, name)
    check(f"schema {name}", str(op.default._schema) == schema, str(op.default._schema))
    check(f"schema {name}.out", "Tensor(a!)" in str(op.out._schema), str(op.out._schema))
check("package exposes ops", tgt_torch.ops is ops or str(tgt_torch.ops) == str(ops))


# ---- references (float64 over the rounded inputs) -------------------------------------------
def gelu(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def attention(q, k, v, scale, causal):
    s = (q @ k.transpose(-1, -2)) * scale
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(s, -1) @ v


for dt in DTYPES:
    n = str(dt).replace("torch.", "")
    for (M, N, K) in [(37, 53, 71), (1, 130, 64), (0, 9, 5)]:
        A, B = rnd(M, K, dtype=dt), rnd(K, N, dtype=dt)
        close(f"gemm {n} {M}x{N}x{K}", ops.gemm(A, B), A.double() @ B.double(), dt)
        bias = rnd(N, dtype=dt)
        close(f"gemm_bias_gelu {n} {M}x{N}x{K}", ops.gemm_bias_gelu(A, B, bias),
              gelu(A.double() @ B.double() + bias.double()), dt)
    for (M, N) in [(5, 37), (3, 1000), (17, 3000)]:
        X, W = rnd(M, N, dtype=dt), rnd(N, dtype=dt)
        ref = X.double() * torch.rsqrt((X.double() ** 2).mean(-1, keepdim=True) + 1e-5) * W.double()
        close(f"rmsnorm {n} {M}x{N}", ops.rmsnorm(X, W, 1e-5), ref, dt)
        close(f"softmax {n} {M}x{N}", ops.softmax(X), torch.softmax(X.double(), -1), dt)
    for (Bt, H, S, D) in [(2, 3, 37, 64), (1, 2, 70, 128)]:
        Q, Kt, V = (rnd(Bt, H, S, D, dtype=dt) for _ in range(3))
        for causal in (False, True):
            ref = attention(Q.double(), Kt.double(), V.double(), 1 / math.sqrt(D), causal)
            close(f"flash_attention_fwd {n} {Bt}x{H}x{S}x{D} causal={causal}",
                  ops.flash_attention_fwd(Q, Kt, V, 1 / math.sqrt(D), causal=causal), ref, dt)

if hasattr(torch, "float8_e4m3fn"):
    A, B = rnd(33, 40, dtype=torch.float32), rnd(24, 40, dtype=torch.float32)
    A8, B8 = A.to(torch.float8_e4m3fn), B.to(torch.float8_e4m3fn)
    ref = (A8.double() @ B8.double().t()) * 0.5 * 2.0
    close("gemm_fp8 e4m3 33x24x40", ops.gemm_fp8(A8, B8, 0.5, 2.0), ref, torch.bfloat16)
else:
    skip("gemm_fp8 values", f"PyTorch {torch.__version__} has no float8 dtypes")
    raises("gemm_fp8 says why it cannot run", lambda: ops.gemm_fp8(rnd(4, 4, dtype=torch.float32), rnd(4, 4, dtype=torch.float32), 1.0, 1.0),
           NotImplementedError, r"tgt\.gemm_fp8: no type binding can run with this PyTorch \(the bindings e4m3, e5m2 need PyTorch >= 2\.1 for float8 dtypes\)")

# ---- .out, non-contiguous inputs, empty outputs ----------------------------------------------
A, B = rnd(19, 33, dtype=torch.float32), rnd(33, 21, dtype=torch.float32)
C = torch.empty(19, 21)
r = ops.gemm.out(A, B, C=C)
check(".out returns its output", r.data_ptr() == C.data_ptr())
close("gemm.out values", C, A.double() @ B.double(), torch.float32)
Bt = rnd(21, 33, dtype=torch.float32).t()  # a transposed view: strides (1, 33)
check("non-contiguous input is a view", not Bt.is_contiguous())
close("gemm with a non-contiguous B (made contiguous)", ops.gemm(A, Bt), A.double() @ Bt.double(), torch.float32)
Xs = rnd(8, 64, dtype=torch.float32)[:, ::2]
close("softmax with a strided X", ops.softmax(Xs), torch.softmax(Xs.double(), -1), torch.float32)
check("softmax of 0 rows", ops.softmax(torch.empty(0, 7)).shape == (0, 7))

# ---- errors ---------------------------------------------------------------------------------
f32 = lambda *s: rnd(*s, dtype=torch.float32)
raises("dtype of a later input", lambda: ops.gemm(f32(3, 4), f32(4, 5).half()), TypeError,
       r"^tgt\.gemm: B has dtype torch\.float16, expected torch\.float32 \(given A of torch\.float32\)")
raises("dtype no binding takes", lambda: ops.gemm(f32(3, 4).int(), f32(4, 5).int()), TypeError,
       r"^tgt\.gemm: A has dtype torch\.int32, expected one of torch\.float32, torch\.float16, torch\.bfloat16$")
raises("rank", lambda: ops.gemm(f32(3), f32(4, 5)), ValueError,
       r"^tgt\.gemm: A must have 2 dimensions \[M, K\], got shape \[3\]$")
raises("shape", lambda: ops.gemm(f32(3, 4), f32(5, 6)), ValueError,
       r"^tgt\.gemm: B has shape \[5, 6\], expected \[K, N\] = \[4, 6\] \(M = A\.shape\[0\], N = B\.shape\[1\], K = A\.shape\[1\]\)$")
raises("bias shape", lambda: ops.gemm_bias_gelu(f32(3, 4), f32(4, 6), f32(5)), ValueError,
       r"^tgt\.gemm_bias_gelu: bias has shape \[5\], expected \[N\] = \[6\]")
raises("device", lambda: ops.gemm(f32(3, 4), torch.empty(4, 5, device="meta")), RuntimeError,
       r"tgt\.gemm: B is on meta, expected cpu like A")
raises("value set", lambda: ops.flash_attention_fwd(f32(1, 1, 4, 96), f32(1, 1, 4, 96), f32(1, 1, 4, 96), 0.1),
       ValueError, r"^tgt\.flash_attention_fwd: no variant for D=96: built for D in \{64, 128\}")
raises("scalar require", lambda: ops.rmsnorm(f32(2, 8), f32(8), -1.0), ValueError,
       r"^tgt\.rmsnorm: eps = -1, but the kernel requires eps >= 0 && eps < inf")
raises("out dtype", lambda: ops.gemm.out(f32(3, 4), f32(4, 5), C=torch.empty(3, 5, dtype=torch.float64)),
       TypeError, r"^tgt\.gemm: C has dtype torch\.float64, expected torch\.float32$")
raises("out shape", lambda: ops.gemm.out(f32(3, 4), f32(4, 5), C=torch.empty(3, 6)), ValueError,
       r"^tgt\.gemm: C has shape \[3, 6\], expected \[M, N\] = \[3, 5\]")
raises("out non-contiguous", lambda: ops.gemm.out(f32(3, 4), f32(4, 5), C=torch.empty(5, 3).t()), ValueError,
       r"^tgt\.gemm: C \(an output\) must be contiguous")
X = f32(4, 4)
raises("out overlapping an input", lambda: ops.softmax.out(X, Y=X), RuntimeError, r"memory location")

# ---- Meta kernels: shapes and dtypes without running -----------------------------------------
for dt in DTYPES:
    A, B = torch.empty(7, 9, dtype=dt, device="meta"), torch.empty(9, 11, dtype=dt, device="meta")
    C = ops.gemm(A, B)
    check(f"meta gemm {dt}", C.device.type == "meta" and C.shape == (7, 11) and C.dtype == dt)
Q = torch.empty(2, 4, 33, 128, dtype=torch.bfloat16, device="meta")
O = ops.flash_attention_fwd(Q, Q, Q, 0.1, causal=True)
check("meta flash_attention_fwd", O.shape == Q.shape and O.dtype == torch.bfloat16 and O.device.type == "meta")
raises("meta checks shapes too", lambda: ops.gemm(torch.empty(3, 4, device="meta"), torch.empty(5, 6, device="meta")),
       ValueError, r"B has shape \[5, 6\], expected \[K, N\] = \[4, 6\]")
C = torch.empty(7, 11, device="meta")
check("meta gemm.out", ops.gemm.out(torch.empty(7, 9, device="meta"), torch.empty(9, 11, device="meta"), C=C) is C)
try:
    from torch._subclasses.fake_tensor import FakeTensorMode
except ImportError:
    FakeTensorMode = None
if FakeTensorMode is None:
    skip("FakeTensorMode", "not in this PyTorch")
else:
    try:
        with FakeTensorMode() as mode:
            A = mode.from_tensor(torch.empty(5, 6)) if hasattr(mode, "from_tensor") else torch.empty(5, 6)
            B = mode.from_tensor(torch.empty(6, 3)) if hasattr(mode, "from_tensor") else torch.empty(6, 3)
            C = ops.gemm(A, B)
            check("FakeTensorMode gemm", tuple(C.shape) == (5, 3) and C.dtype == torch.float32, f"{C.shape} {C.dtype}")
    except Exception as e:
        check("FakeTensorMode gemm", False, f"{type(e).__name__}: {e}")

# ---- forms the shipped kernels lack (torch_project/odd_axpy.yaml, odd_widen.yaml) -------------
import odd_torch  # noqa: E402

odd = torch.ops.odd
check("schema odd_axpy", str(odd.odd_axpy.default._schema) ==
      "odd::odd_axpy(Tensor X, Tensor P, Tensor Z, int E, float a, int k) -> (Tensor, Tensor, Tensor)",
      str(odd.odd_axpy.default._schema))
check("schema odd_axpy.out", str(odd.odd_axpy.out._schema) ==
      "odd::odd_axpy.out(Tensor X, Tensor P, int E, float a, int k, *, Tensor(a!) Z, Tensor(b!) Y, Tensor(c!) Q) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
      str(odd.odd_axpy.out._schema))
for dt in (torch.float32, torch.bfloat16):
    M, N = 13, 300
    X, Z, P = rnd(M, N, dtype=dt), rnd(M, N, dtype=dt), rnd(2 * M, N, dtype=torch.float32)
    Z0 = Z.clone()
    Zn, Y, Q = odd.odd_axpy(X, P, Z, 7, 0.5, 3)
    close(f"odd_axpy {dt} readwrite result", Zn, Z0.double() + 0.5 * X.double() + P[1::2].double(), dt)
    check(f"odd_axpy {dt} leaves its input Z alone", torch.equal(Z, Z0))
    close(f"odd_axpy {dt} int scalar", Y, X.double() * 3, dt)
    check(f"odd_axpy {dt} explicit dim E", Q.shape == (7,) and Q.dtype == torch.float32)
    Y2, Q2 = torch.empty_like(Y), torch.empty(7)
    r = odd.odd_axpy.out(X, P, 7, 0.5, 3, Z=Z, Y=Y2, Q=Q2)
    close(f"odd_axpy.out {dt} updates Z in place", Z, Zn.double(), dt)
    check(f"odd_axpy.out {dt} returns its outputs", r[0] is Z and r[1] is Y2 and r[2] is Q2)
raises("compound input shape", lambda: odd.odd_axpy(f32(2, 5), f32(3, 5), f32(2, 5), 1, 1.0, 1), ValueError,
       r"^odd\.odd_axpy: P has shape \[3, 5\], expected \[\(M \* 2\), N\] = \[4, 5\] \(M = X\.shape\[0\], N = X\.shape\[1\], E given\)$")
raises("int scalar range", lambda: odd.odd_axpy(f32(2, 5), f32(4, 5), f32(2, 5), 1, 1.0, 2 ** 40), ValueError,
       r"^odd\.odd_axpy: k = 1099511627776 does not fit its C type")
raises("negative explicit dim", lambda: odd.odd_axpy(f32(2, 5), f32(4, 5), f32(2, 5), -1, 1.0, 1), ValueError,
       r"^odd\.odd_axpy: E = -1 must be >= 0$")
Zm, Ym, Qm = odd.odd_axpy(*(torch.empty(s, device="meta") for s in [(3, 4), (6, 4), (3, 4)]), 5, 1.0, 2)
check("meta odd_axpy", Zm.shape == (3, 4) and Ym.shape == (3, 4) and Qm.shape == (5,) and Qm.device.type == "meta")
check("split bindings are operators", hasattr(odd, "odd_widen_f32_f32") and hasattr(odd, "odd_widen_f32_f64"))
x = rnd(300, dtype=torch.float32)
for name, dt in (("odd_widen_f32_f32", torch.float32), ("odd_widen_f32_f64", torch.float64)):
    y = getattr(odd, name)(x)
    check(f"{name} output dtype and values", y.dtype == dt and torch.equal(y.double(), x.double()))

# ---- torch.compile ---------------------------------------------------------------------------
if not hasattr(torch, "compile"):
    skip("torch.compile(fullgraph=True)", f"PyTorch {torch.__version__} has no torch.compile")
else:
    def block(x, w, wq):
        h = ops.rmsnorm(x, w, 1e-5)
        return ops.softmax(ops.gemm(h, wq))

    x, w, wq = f32(9, 64), f32(64), f32(64, 40)
    ref = block(x, w, wq)
    try:
        got = torch.compile(block, fullgraph=True)(x, w, wq)
        check("torch.compile(fullgraph=True) equals eager", torch.allclose(got, ref, rtol=1e-5, atol=1e-6))
    except Exception as e:
        check("torch.compile(fullgraph=True)", False, f"{type(e).__name__}: {str(e)[:300]}")

print(f"{checks - len(failures)} of {checks} checks passed" + (f"; failed: {', '.join(failures)}" if failures else ""))
sys.exit(1 if failures else 0)
