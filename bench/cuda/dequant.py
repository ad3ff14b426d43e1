"""gemm_w4a16 and gemm_mxfp4 on the GPU (kernels/gemm_w4a16.yaml, kernels/gemm_mxfp4.yaml, issue #34):
verification against a float64 reference at ragged shapes and at the bench shapes, then timings
against the issue's anchors, in one run.

    python3 bench/cuda/dequant.py --dist build-bench-cuda/dist [--quick] [--verify-only] [--out DIR]

Verification (docs/kernels.md): gemm_w4a16 bf16 and f16, groups of 32, 64 and 128 (and 96),
symmetric (ZP 0) and with zero points (a third of them 0, a third 15), ragged M, N, K, odd
element offsets of every pointer; gemm_mxfp4 with ragged shapes and scale blocks of e8m0 0
(2^-127), 254 (2^127, weights <= 1.5) and 255 (NaN: the column must be NaN). Each element must
lie within u_T |ref| + (1 + u_T) gamma_K sum_k |a w| (+ subnormal spacing): A and the weights
(dequantized and rounded to T once, as the kernels do) are exact in f32 and so are their
products, so only the f32 sums and the store round, in any order. Outputs start as NaN.

Timing (bf16, N = K = 8192, weights in several copies called round-robin so that the 32 MB of
4-bit weights do not stay in the H200's L2 between calls): gemm_w4a16 group 128, symmetric, at
M = 1, 16, 128 against torch.matmul in bf16 on the same shape (cuBLAS) and
torch._weight_int4pack_mm (its (q - 8) * scale + zero with zero 0 is ZP 0's weight, so its
result is checked against the same reference); gemm_mxfp4 at M = 1, 16 against torch.matmul.
Issue #34's bars: w4a16 >= 3.5x / 3.3x / 1.5x cuBLAS at M 1 / 16 / 128 and >= 2x int4pack_mm;
mxfp4 >= 3x cuBLAS at M 1 and 16. Exit status 0 only if every verification case passed.
"""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf import graph_check, time_batches  # noqa: E402
from tgapi import TG_OK, Library, describe, make_launch, rerun_note, reruns_differ  # noqa: E402

DT = {"bf16": torch.bfloat16, "f16": torch.float16}
U = {"bf16": 2.0 ** -8, "f16": 2.0 ** -11}
RERUNS = 10  # launches of each verification case after the first, compared bit for bit
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def pack(codes):
    """[R, C] codes 0..15 (C even) -> [R, C/2] uint8, low nibble first (docs/spec.md)."""
    c = codes.to(torch.uint8)
    return (c[:, 0::2] | (c[:, 1::2] << 4)).contiguous()


def at_offset(t, off):
    """A copy of t whose data starts `off` elements into a larger buffer (an odd address)."""
    if off == 0:
        return t.contiguous(), t
    flat = torch.empty(t.numel() + off, dtype=t.dtype, device=t.device)
    view = flat[off:].view(t.shape)
    view.copy_(t)
    return view, flat


def bound_ok(got, ref, absref, types, K):
    """Per-element bound; NaN expected where the reference is NaN. Returns (ok, worst ratio)."""
    u = U[types]
    g = (K + 1) * 2.0 ** -24 / (1 - (K + 1) * 2.0 ** -24)
    tiny = (2.0 ** -134 if types == "bf16" else 2.0 ** -25) + 2 * K * 2.0 ** -149
    got = got.double()
    nan_ref = torch.isnan(ref)
    if not torch.equal(torch.isnan(got) & nan_ref, nan_ref):
        return False, float("inf")
    fin = ~nan_ref
    if not torch.isfinite(got[fin]).all():
        return False, float("inf")
    bound = u * ref[fin].abs() + (1 + u) * g * absref[fin] + tiny
    r = ((got[fin] - ref[fin]).abs() / bound).max().item() if fin.any() else 0.0
    return r <= 1.0, r


def w4_inputs(M, N, K, group, zp, types, gen, device="cuda"):
    G = math.ceil(K / group)
    dt = DT[types]
    A = ((torch.rand(M, K, generator=gen) * 2 - 1)).to(dt)
    S = (torch.rand(G, N, generator=gen) * 0.099 + 0.001).to(dt)
    q = torch.randint(0, 16, (K, N), generator=gen)
    z = torch.randint(0, 16, (G, N), generator=gen)
    z.view(-1)[0::3] = 0
    z.view(-1)[1::3] = 15
    x = {"A": A, "Bq": pack(q), "S": S, "Z": pack(z) if zp else None}
    x = {n: (t.to(device) if t is not None else None) for n, t in x.items()}
    # float64 weights, rounded to T once (the kernel's w)
    zz = z.double() if zp else torch.full((G, N), 8.0, dtype=torch.float64)
    w = (q.double() - zz.repeat_interleave(group, 0)[:K]) * S.double().repeat_interleave(group, 0)[:K]
    W = w.to(dt).double().to(device)  # [K, N]
    return x, W, q, dict(M=M, N=N, K=K, GROUP=group, ZP=zp)


def mx_inputs(M, N, K, gen, edges=False, device="cuda"):
    KB = math.ceil(K / 32)
    A = ((torch.rand(M, K, generator=gen) * 2 - 1)).double()
    b = torch.randint(0, 16, (N, K), generator=gen)
    e = torch.randint(122, 133, (N, KB), generator=gen)
    if edges:
        n = torch.arange(N)
        e[n % 4 == 0] = 0
        if KB > 1:
            big = (n % 4 == 1)
            e[big, 1] = 254
            b[big, 32:64] = b[big, 32:64] % 4 | (b[big, 32:64] & 8)   # |w| <= 1.5: finite in bf16
            A[:, 32:64] *= 2.0 ** -120
        if KB > 2:
            e[n % 4 == 2, 2] = 255
    A = A.to(torch.bfloat16)
    table = torch.tensor(E2M1 + [-v for v in E2M1], dtype=torch.float64)
    scale = torch.where(e == 255, torch.tensor(float("nan"), dtype=torch.float64),
                        torch.pow(2.0, (e - 127).double()))
    w = table[b] * scale.repeat_interleave(32, 1)[:, :K]          # [N, K]
    W = w.float().to(torch.bfloat16).double().t().contiguous().to(device)   # via f32, as the kernel
    x = {"A": A.to(device), "B": pack(b).to(device), "E": e.to(torch.uint8).to(device)}
    return x, W, dict(M=M, N=N, K=K)


def run_verify(lib, kernel, types, x, W, dims, off, label, log):
    launch = make_launch(0)
    M, N, K = dims["M"], dims["N"], dims["K"]
    dt = x["A"].dtype
    keep, args = [], {}
    for n, t in x.items():
        if t is None:
            args[n] = None
            continue
        v, buf = at_offset(t, off)
        keep.append(buf)
        args[n] = v.data_ptr()
    C = torch.full((M * N + off,), float("nan"), dtype=dt, device="cuda")
    args["C"] = C[off:].data_ptr()
    args.update(dims)
    qst, sel = lib.query(kernel, types, launch, **args)
    target, inst, reason = describe(sel)
    if qst != TG_OK or not target.startswith("sm_"):
        log(f"FAIL {label}: query status {qst}, target {target}: {reason}")
        return False
    st = lib.call(kernel, types, launch, **args)
    torch.cuda.synchronize()
    if st != TG_OK:
        log(f"FAIL {label} [{target}]: status {lib.status_string(st)}")
        return False
    got = C[off:].view(M, N)
    A64 = x["A"].double()
    ref = A64 @ W
    absref = A64.abs() @ W.abs()
    ok, r = bound_ok(got, ref, absref, types, K)
    # the same launch again: a split-K join merges its parts in a fixed order
    differ = reruns_differ(lambda: lib.call(kernel, types, launch, **args), C[off:], RERUNS)
    ok = ok and differ == 0
    log(f"{'ok  ' if ok else 'FAIL'} {label} [{target} {inst}]: worst error / bound {r:.3g}, "
        f"{rerun_note(differ, RERUNS)}")
    return ok


def verify(lib, quick, log):
    gen = torch.Generator()
    gen.manual_seed(20261206)
    ok = True
    w4 = [(1, 4096, 4096, 128, 0, 0), (5, 1000, 777, 128, 1, 1), (16, 4098, 1000, 32, 1, 0),
          (16, 8192, 8192, 128, 0, 0), (33, 130, 300, 64, 0, 1), (128, 8192, 8192, 128, 0, 0),
          (130, 2050, 513, 96, 1, 1)]
    if quick:  # (compute-sanitizer's run) the decode class and one ragged case of the large one
        w4 = w4[:3] + w4[4:5]
    for types in ("bf16", "f16"):
        for M, N, K, group, zp, off in w4:
            x, W, _, dims = w4_inputs(M, N, K, group, zp, types, gen)
            ok &= run_verify(lib, "gemm_w4a16", types, x, W, dims, off,
                             f"gemm_w4a16 {types} {M}x{N}x{K} group {group} zp {zp} offset {off}", log)
    mx = [(1, 4096, 4096, 0, False), (5, 1000, 778, 1, False), (16, 8192, 8192, 0, False),
          (16, 130, 96, 1, True), (33, 200, 130, 0, True), (130, 2050, 514, 1, False)]
    if quick:
        mx = mx[:2] + mx[3:5]
    for M, N, K, off, edges in mx:
        x, W, dims = mx_inputs(M, N, K, gen, edges)
        ok &= run_verify(lib, "gemm_mxfp4", "bf16", x, W, dims, off,
                         f"gemm_mxfp4 bf16 {M}x{N}x{K} offset {off}{' scale edges' if edges else ''}", log)
    return ok


def int4pack_anchor(q_kn, S, group):
    """torch._weight_int4pack_mm's operands for w = (q - 8) * s: the packed weight and the
    [K/group, N, 2] scales and zeros (zero 0). Newer torch packs uint8 [N, K/2] (high nibble
    first), older takes int32 [N, K]."""
    q_nk = q_kn.t().contiguous().to(torch.int32).cuda()
    try:
        w = torch._convert_weight_to_int4pack((q_nk[:, 0::2] << 4 | q_nk[:, 1::2]).to(torch.uint8), 8)
    except Exception:
        w = torch._convert_weight_to_int4pack(q_nk, 8)
    sz = torch.stack([S, torch.zeros_like(S)], dim=-1).contiguous()
    return w, sz


def timing(lib, log):
    gen = torch.Generator()
    gen.manual_seed(7)
    N = K = 8192
    sets = 4
    stream = torch.cuda.current_stream().cuda_stream
    launch = make_launch(0, stream)
    rows = []
    for M in (1, 16, 128):
        xs = [w4_inputs(M, N, K, 128, 0, "bf16", gen) for _ in range(sets)]
        outs = [torch.empty(M, N, dtype=torch.bfloat16, device="cuda") for _ in range(sets)]
        fns = []
        for (x, _, _, dims), C in zip(xs, outs):
            args = {n: (t.data_ptr() if t is not None else None) for n, t in x.items()}
            args.update(dims, C=C.data_ptr())
            fns.append(lib.bind("gemm_w4a16", "bf16", launch, **args))
        _, sel = lib.query("gemm_w4a16", "bf16", launch, **args)
        ours = time_batches(fns)
        graph = None
        if M == 1:  # the split-K class captured into a CUDA graph: split there too, the same bytes
            graph = graph_check(lambda st, a=args: lib.bind("gemm_w4a16", "bf16", make_launch(0, st), **a),
                                outs[-1])
        A = xs[0][0]["A"]
        Wb = [xs[i][1].to(torch.bfloat16) for i in range(2)]   # [K, N] bf16 (cuBLAS)
        mm = time_batches([lambda i=i: torch.matmul(A, Wb[i]) for i in range(2)])
        del Wb
        note = ""
        try:
            packs = [int4pack_anchor(xs[i][2], xs[i][0]["S"], 128) for i in range(sets)]
            i4 = time_batches([lambda p=p: torch._weight_int4pack_mm(A, p[0], 128, p[1]) for p in packs])
            got = torch._weight_int4pack_mm(A, packs[0][0], 128, packs[0][1])
            ref = A.double() @ xs[0][1]
            ok_, r = bound_ok(got, ref, A.double().abs() @ xs[0][1].abs(), "bf16", K)
            note = f"int4pack_mm error / bound {r:.3g}"
        except Exception as e:  # noqa: BLE001 (an anchor that torch lacks is reported, not fatal)
            i4, note = float("nan"), f"int4pack_mm failed: {str(e).splitlines()[0][:80]}"
        rows.append({"case": f"gemm_w4a16 bf16 M{M} N{N} K{K} g128", "variant": describe(sel)[1],
                     "ms": ours, "cublas_ms": mm, "int4_ms": i4, "note": note,
                     "bar_cublas": {1: 3.5, 16: 3.3, 128: 1.5}[M], "bar_int4": 2.0, "graph": graph})
        torch.cuda.empty_cache()
    for M in (1, 16, 128):  # M 128: the large class (no bar; its tiles' speed against cuBLAS)
        xs = [mx_inputs(M, N, K, gen) for _ in range(sets)]
        outs = [torch.empty(M, N, dtype=torch.bfloat16, device="cuda") for _ in range(sets)]
        fns = []
        for (x, _, dims), C in zip(xs, outs):
            args = {n: t.data_ptr() for n, t in x.items()}
            args.update(dims, C=C.data_ptr())
            fns.append(lib.bind("gemm_mxfp4", "bf16", launch, **args))
        _, sel = lib.query("gemm_mxfp4", "bf16", launch, **args)
        ours = time_batches(fns)
        A = xs[0][0]["A"]
        Wb = [xs[i][1].t().contiguous().to(torch.bfloat16) for i in range(2)]   # [N, K]: F.linear
        mm = time_batches([lambda i=i: F.linear(A, Wb[i]) for i in range(2)])
        del Wb
        rows.append({"case": f"gemm_mxfp4 bf16 M{M} N{N} K{K}", "variant": describe(sel)[1],
                     "ms": ours, "cublas_ms": mm, "int4_ms": float("nan"), "note": "",
                     "bar_cublas": 3.0 if M <= 16 else None, "bar_int4": None})
        torch.cuda.empty_cache()
    log("\n| case | ours ms | cuBLAS bf16 ms | vs cuBLAS (bar) | int4pack_mm ms | vs int4pack (bar) | variant | note |")
    log("|---|---|---|---|---|---|---|---|")
    for r in rows:
        vi = f"{r['int4_ms'] / r['ms']:.2f}x (>= {r['bar_int4']:g}x)" if r["bar_int4"] else "-"
        bar = f"(>= {r['bar_cublas']:g}x)" if r["bar_cublas"] else "(no bar)"
        log(f"| {r['case']} | {r['ms']:.4f} | {r['cublas_ms']:.4f} | {r['cublas_ms'] / r['ms']:.2f}x "
            f"{bar} | {r['int4_ms']:.4f} | {vi} | {r['variant']} | {r['note']} |")
    for r in rows:
        if r.get("graph"):
            same, eager_ms, graph_ms = r["graph"]
            log(f"\n{r['case']} in a CUDA graph: replays {'bitwise equal to' if same else 'DIFFER from'} the eager "
                f"launch; eager {eager_ms:.4f} ms, graph replay {graph_ms:.4f} ms")
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dist", default="build-bench-cuda/dist")
    ap.add_argument("--out", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--verify-only", action="store_true")
    a = ap.parse_args()
    lib = Library(os.path.join(a.dist, "libtgb.so"), os.path.join(a.dist, "tgb.h"), "tgb")
    if not (lib.has("gemm_w4a16", "bf16") and lib.has("gemm_mxfp4", "bf16")):
        print("dequant.py: libtgb.so has no gemm_w4a16 / gemm_mxfp4 (rebuild with bench/cuda/build.sh)")
        return 2
    ok = verify(lib, a.quick, print)
    if a.verify_only:
        print("verification:", "all passed" if ok else "FAILURES above")
        return 0 if ok else 1
    rows = timing(lib, print)
    ok = ok and all(r["graph"][0] for r in rows if r.get("graph"))
    print("\nbars (issue #34): w4a16 >= 3.5x / 3.3x / 1.5x cuBLAS at M 1 / 16 / 128, >= 2x int4pack_mm; "
          "mxfp4 >= 3x cuBLAS at M 1, 16")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "dequant.json"), "w") as f:
            json.dump({"rows": rows, "verified": ok}, f, indent=1)
    print("verification:", "all passed" if ok else "FAILURES above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
