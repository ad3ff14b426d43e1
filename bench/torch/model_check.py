"""A small model made of tilegen's PyTorch operators (docs/torch.md) against the same model in
eager torch, under torch.compile(fullgraph=True) and under CUDA graph capture/replay, plus the
host cost of one operator call against the equivalent built-in operator, in the same run.

    python3 bench/torch/model_check.py --package-dir BUILD [--device cuda|cpu] [--quick]

BUILD is the folder holding the extension package tgb_torch/ (bench/torch/run_device.sh builds
it). The model: x -> RMSNorm -> GEMM (qkv) -> causal attention -> GEMM (out), bf16 on CUDA
(f32 on the CPU dry run). Prints one line per check and the tables; exit 0 if every check and
the host-cost bar (ours <= 1.2x the built-in, CUDA only) passed, 1 if a check failed, 2 if only
the bar failed."""
import argparse
import math
import statistics
import sys
import time
import traceback

import torch
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--package-dir", required=True)
p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
p.add_argument("--quick", action="store_true", help="smaller shapes and fewer timing rounds")
p.add_argument("--bar", type=float, default=1.2, help="host cost ratio bar (CUDA)")
args = p.parse_args()
sys.path.insert(0, args.package_dir)
import tgb_torch  # noqa: E402  registers torch.ops.tgb

ops = torch.ops.tgb
dev = torch.device(args.device)
cuda = dev.type == "cuda"
dt = torch.bfloat16 if cuda else torch.float32
torch.manual_seed(0)
failed, bar_failed = [], []
rows = []  # (what, value) for the summary table


def check(name, ok, detail=""):
    print(("ok   " if ok else "FAIL ") + name + (f"  [{detail}]" if detail else ""), flush=True)
    if not ok:
        failed.append(name)


def skip(name, why):
    print(f"SKIP {name}: {why}", flush=True)
    rows.append((name, "skipped: " + why))


def rel_err(a, b):
    if a.numel() == 0 or b.numel() == 0:
        return 0.0 if a.shape == b.shape else float("inf")
    return ((a.float() - b.float()).abs().max() / b.float().abs().max().clamp_min(1e-30)).item()


def sync():
    if cuda:
        torch.cuda.synchronize()


print(f"torch {torch.__version__}, device {dev}" +
      (f" ({torch.cuda.get_device_name(dev)}, cuda {torch.version.cuda})" if cuda else "") +
      f", dtype {dt}", flush=True)


def sdpa(q, k, v):
    """Causal attention with scale 1/sqrt(head_dim): torch's fused operator where it exists
    (PyTorch >= 2.0), else the same math in torch ops."""
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    n = s.shape[-1]
    s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return torch.softmax(s.float(), -1).to(q.dtype) @ v


# ---- the model ------------------------------------------------------------------------------
class Block:
    def __init__(self, d_model, heads, head_dim):
        self.h, self.d = heads, head_dim
        s = 1 / math.sqrt(d_model)
        self.w_norm = (1 + 0.1 * torch.randn(d_model)).to(dev, dt)
        self.w_qkv = (torch.randn(d_model, 3 * heads * head_dim) * s).to(dev, dt)
        self.w_out = (torch.randn(heads * head_dim, d_model) / math.sqrt(heads * head_dim)).to(dev, dt)
        self.scale = 1 / math.sqrt(head_dim)

    def split(self, qkv, b, s):  # [b*s, 3*h*d] -> 3 x [b, h, s, d] (views)
        return qkv.view(b, s, 3, self.h, self.d).permute(2, 0, 3, 1, 4)

    def ours(self, x):  # x: [b, s, d_model]
        b, s, m = x.shape
        h = ops.rmsnorm(x.reshape(b * s, m), self.w_norm, 1e-5)
        q, k, v = self.split(ops.gemm(h, self.w_qkv), b, s)
        o = ops.flash_attention_fwd(q, k, v, self.scale, causal=True)  # non-contiguous views in
        return ops.gemm(o.permute(0, 2, 1, 3).reshape(b * s, self.h * self.d), self.w_out).view(b, s, m)

    def eager(self, x, dtype=None):  # torch's own ops; dtype=float32 gives the reference
        w_norm, w_qkv, w_out = (w.to(dtype or dt) for w in (self.w_norm, self.w_qkv, self.w_out))
        x = x.to(dtype or dt)
        b, s, m = x.shape
        xf = x.float()
        h = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5) * w_norm.float()).to(x.dtype)
        q, k, v = self.split(h.reshape(b * s, m) @ w_qkv, b, s)
        o = sdpa(q, k, v)  # scale 1/sqrt(head_dim), as ours
        return (o.permute(0, 2, 1, 3).reshape(b * s, self.h * self.d) @ w_out).view(b, s, m)


if cuda:
    shapes = [(2, 300, 1024, 8, 128), (4, 512, 1024, 8, 64)] if not args.quick else [(2, 300, 512, 4, 128)]
else:
    shapes = [(1, 37, 128, 2, 64)]


def timed(fn, reps):
    fn()
    sync()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        t.append(time.perf_counter() - t0)
    return statistics.median(t) * 1e3


# no_grad rather than inference_mode: torch.compile and graph capture take both, but inference
# tensors add nothing here and have had rough edges in compiled code.
with torch.no_grad():
    for (b, s, m, h, d) in shapes:
        tag = f"B{b} S{s} d_model {m} heads {h}x{d}"
        blk = Block(m, h, d)
        x = torch.randn(b, s, m, device=dev).to(dt)
        try:
            ref = blk.eager(x, torch.float32)
            eager = blk.eager(x)
            ours = blk.ours(x)
            sync()
            e_ours, e_eager = rel_err(ours, ref), rel_err(eager, ref)
            tol = 2.5 * e_eager + (4e-3 if cuda else 1e-5)
            check(f"model {tag}: ours vs float32 reference", e_ours <= tol,
                  f"rel err ours {e_ours:.2e}, eager {dt} {e_eager:.2e}, bound {tol:.2e}")
            rows.append((f"{tag}: rel err ours / eager {dt}", f"{e_ours:.2e} / {e_eager:.2e}"))
        except Exception as ex:
            traceback.print_exc()
            check(f"model {tag}: eager run", False, f"{type(ex).__name__}: {ex}")
            continue

        # torch.compile(fullgraph=True): the ops must trace (Meta kernels) without graph breaks.
        if not hasattr(torch, "compile"):
            skip(f"torch.compile {tag}", f"PyTorch {torch.__version__} has no torch.compile")
        else:
            try:
                compiled = torch.compile(blk.ours, fullgraph=True)
                got = compiled(x)
                x2 = torch.randn(b, s, m, device=dev).to(dt)
                got2, want2 = compiled(x2), blk.ours(x2)
                sync()
                e1, e2 = rel_err(got, ours), rel_err(got2, want2)
                check(f"torch.compile(fullgraph=True) {tag}", max(e1, e2) <= 1e-2,
                      f"rel err vs eager ours {e1:.2e}, second input {e2:.2e}")
                if cuda:
                    rows.append((f"{tag}: ms eager ours / compiled ours / eager torch",
                                 f"{timed(lambda: blk.ours(x), 20):.3f} / {timed(lambda: compiled(x), 20):.3f} / "
                                 f"{timed(lambda: blk.eager(x), 20):.3f}"))
            except Exception as ex:
                traceback.print_exc()
                check(f"torch.compile(fullgraph=True) {tag}", False, f"{type(ex).__name__}: {str(ex)[:400]}")

        # CUDA graph capture and replay on torch's capture stream.
        if not cuda:
            skip(f"CUDA graph {tag}", "no CUDA device")
            continue
        try:
            static_x = x.clone()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    blk.ours(static_x)
            torch.cuda.current_stream().wait_stream(side)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                static_y = blk.ours(static_x)
            x3 = torch.randn(b, s, m, device=dev).to(dt)
            static_x.copy_(x3)
            g.replay()
            torch.cuda.synchronize()
            want3 = blk.ours(x3)
            e3 = rel_err(static_y, want3)
            e3r = rel_err(static_y, blk.eager(x3, torch.float32))
            check(f"CUDA graph replay {tag}", e3 <= 1e-2, f"rel err vs eager ours {e3:.2e}, vs float32 reference {e3r:.2e}")
            rows.append((f"{tag}: ms graph replay", f"{timed(g.replay, 20):.3f}"))
        except Exception as ex:
            traceback.print_exc()
            check(f"CUDA graph {tag}", False, f"{type(ex).__name__}: {str(ex)[:400]}")


# ---- host cost per call ---------------------------------------------------------------------
def host_us(fn, n, reps):
    """Median host time of one call: n calls timed without synchronizing (fewer than the launch
    queue holds), then a synchronize outside the timing."""
    for _ in range(10):
        fn()
    sync()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t.append((time.perf_counter() - t0) / n * 1e6)
        sync()
    return t


def pair(name, ours, builtin, builtin_name, judged=True):
    with torch.no_grad():
        try:
            a, b = ours(), builtin()
            sync()
            e = rel_err(a, b)
        except Exception as ex:
            check(f"host cost {name}: both run", False, f"{type(ex).__name__}: {ex}")
            return
        n, reps = (300, 7 if args.quick else 21) if cuda else (50, 5)
        to, tb = [], []
        for _ in range(3):  # interleaved rounds against drift
            to += host_us(ours, n, reps)
            tb += host_us(builtin, n, reps)
    mo, mb = statistics.median(to), statistics.median(tb)
    ratio = mo / mb
    ok = ratio <= args.bar or not judged
    verdict = ("ok" if ok else "OVER BAR") if cuda and judged else \
        "(not judged)" if cuda else "(CPU: compute included, no bar)"
    if cuda and not ok:
        bar_failed.append(name)
    host_rows.append((name, builtin_name, mo, mb, ratio, verdict, e))


host_rows = []
with torch.no_grad():
    if cuda:
        A, B = torch.randn(64, 64, device=dev, dtype=dt), torch.randn(64, 64, device=dev, dtype=dt)
        X, W = torch.randn(64, 1024, device=dev, dtype=dt), torch.randn(1024, device=dev, dtype=dt)
        q, k, v = (torch.randn(1, 4, 128, 64, device=dev, dtype=dt) for _ in range(3))
    else:
        A, B = torch.randn(16, 16), torch.randn(16, 16)
        X, W = torch.randn(4, 256), torch.randn(256)
        q, k, v = (torch.randn(1, 1, 16, 64) for _ in range(3))
gemm_tag = "gemm %dx%dx%d" % (A.shape[0], B.shape[1], A.shape[1])
soft_tag = "%dx%d" % tuple(X.shape)
att_tag = "x".join(map(str, q.shape))
gemm_d, soft_d, rms_d, att_d = ops.gemm.default, ops.softmax.default, ops.rmsnorm.default, ops.flash_attention_fwd.default
pair(gemm_tag, lambda: gemm_d(A, B), lambda: torch.mm(A, B), "torch.mm")
A0 = A[:0]  # no rows: nothing to launch, so this row is the binding's own cost (dispatcher, checks, C API checks)
pair("gemm 0x%dx%d (empty: no launch)" % (B.shape[1], A.shape[1]), lambda: gemm_d(A0, B), lambda: torch.mm(A0, B), "torch.mm",
     judged=False)
pair(gemm_tag + " (packet call)", lambda: ops.gemm(A, B), lambda: torch.mm(A, B), "torch.mm", judged=False)
pair("softmax " + soft_tag, lambda: soft_d(X), lambda: torch.softmax(X, -1), "torch.softmax")
if hasattr(F, "rms_norm"):
    pair("rmsnorm " + soft_tag, lambda: rms_d(X, W, 1e-5), lambda: F.rms_norm(X, (X.shape[-1],), W, 1e-5), "F.rms_norm")
else:
    skip("host cost rmsnorm", "no F.rms_norm in this PyTorch")
pair("attention %s causal" % att_tag, lambda: att_d(q, k, v, 1 / math.sqrt(q.shape[-1]), True),
     lambda: sdpa(q, k, v), "F.scaled_dot_product_attention" if hasattr(F, "scaled_dot_product_attention") else "torch math")

print()
print("| what | value |")
print("|---|---|")
for r in rows:
    print(f"| {r[0]} | {r[1]} |")
print()
print(f"host cost per call ({'CUDA, bar <= %.2fx' % args.bar if cuda else 'CPU dry run'}; median of interleaved rounds)")
print("| op | built-in | ours us | built-in us | ratio | verdict | rel diff |")
print("|---|---|---|---|---|---|---|")
for (name, bn, mo, mb, ratio, verdict, e) in host_rows:
    print(f"| {name} | {bn} | {mo:.2f} | {mb:.2f} | {ratio:.2f}x | {verdict} | {e:.1e} |")
print()
if failed:
    print("FAILED checks: " + ", ".join(failed))
if bar_failed:
    print("over the host-cost bar: " + ", ".join(bar_failed))
print("model_check: " + ("FAIL" if failed else "checks passed") + (", bar missed" if bar_failed else ""))
sys.exit(1 if failed else 2 if bar_failed else 0)
