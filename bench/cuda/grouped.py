"""grouped_gemm on the GPU (kernels/grouped_gemm.yaml, issue #34): verification at ragged shapes
against float64, then issue #34's bar shapes verified and timed against torch._grouped_mm in
the same run.

    python3 bench/cuda/grouped.py --dist build-bench-cuda/dist [--quick] [--verify-only] [--out DIR]

Verification (bf16): groups of uneven sizes with empty experts (first, middle, last), groups
smaller than a tile, several groups in one tile, N and K that are no multiple of the tiles,
E = 1, every expert empty, and rows past the last offset (they must keep their NaN fill), each
against a float64 reference on the GPU (max abs error over the largest |reference|). The bar
shapes are verified the same way (float64, one expert at a time), and torch._grouped_mm's
error against the same reference is printed beside ours.

Timing: E 8 and 64, K 4096, N 14336, 16384 tokens spread unevenly (a fixed, seeded spread with
empty experts; the sizes are printed), ours and torch._grouped_mm(A, W, offs=offs) interleaved
in batches (perf.time_batches), and each call alone after an L2 flush (perf.time_isolated).
torch gets W as the [E, K, N] tensor we get, or, where it refuses that layout, the same values
column-major (W.transpose(1, 2).contiguous().transpose(1, 2)); the note says which. Issue
#34's bar: >= 1.0x torch._grouped_mm. Exit status 0 only if every verification case passed.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf import time_batches, time_isolated  # noqa: E402
from tgapi import TG_OK, Library, describe, make_launch  # noqa: E402

TOL = 2e-2  # bf16 output (u = 2^-8, 3u) plus f32 sums over K <= 4096 (docs/kernels.md "Tolerances")


def make_case(sizes, M, N, K, gen, device="cuda"):
    """Inputs of one call, drawn on the device (`gen` is a generator there): A in [-1, 1), W in
    [-1, 1) / sqrt(K) (results of about unit size), one expert at a time (E 64 x 4096 x 14336
    is 7.5 GB of bf16); C filled with NaN."""
    E = len(sizes)
    assert sum(sizes) <= M, (sizes, M)
    offs = torch.cumsum(torch.tensor(sizes, dtype=torch.int64), 0).to(torch.int32)

    def rnd(*shape, scale=1.0):
        return ((torch.rand(*shape, generator=gen, device=device) * 2 - 1) * scale).to(torch.bfloat16)
    W = torch.empty(E, K, N, dtype=torch.bfloat16, device=device)
    for e in range(E):
        W[e] = rnd(K, N, scale=K ** -0.5)
    x = {"A": rnd(M, K), "W": W, "offs": offs.to(device)}
    x["C"] = torch.full((M, N), float("nan"), dtype=torch.bfloat16, device=device)
    return x, dict(M=M, N=N, K=K, E=E)


def reference(x, sizes):
    """float64 rows of every expert (one expert's W in float64 at a time); rows past the last
    offset are NaN (not written)."""
    M, N = x["C"].shape
    out = torch.full((M, N), float("nan"), dtype=torch.float64, device=x["A"].device)
    lo = 0
    for e, n in enumerate(sizes):
        if n:
            out[lo:lo + n] = x["A"][lo:lo + n].double() @ x["W"][e].double()
        lo += n
    return out


def error(got, want, end):
    """(max abs err / max |want| over the experts' rows, rows past `end` written or not)."""
    g, w = got[:end].double(), want[:end]
    scale = max(w.abs().max().item(), 1e-30) if end else 1.0
    err = ((g - w).abs().max().item() / scale) if end else 0.0
    if end and torch.isnan(g).any():
        err = float("inf")
    past_written = int((~torch.isnan(got[end:])).sum()) if end < got.shape[0] else 0
    return err, past_written


def torch_grouped(x):
    """(callable, note) for torch._grouped_mm on x's A, W and offs; None if it refuses both layouts."""
    if not hasattr(torch, "_grouped_mm"):
        return None, f"torch {torch.__version__} has no _grouped_mm"
    A, W, offs = x["A"], x["W"], x["offs"]
    notes = []
    for name, Wt in (("W [E, K, N] row-major", W),
                     ("W column-major (transpose(1, 2).contiguous().transpose(1, 2))",
                      W.transpose(1, 2).contiguous().transpose(1, 2))):
        try:
            torch._grouped_mm(A, Wt, offs=offs, out_dtype=torch.bfloat16)
            torch.cuda.synchronize()
            return (lambda: torch._grouped_mm(A, Wt, offs=offs, out_dtype=torch.bfloat16)), name
        except Exception as e:  # a layout torch does not take on this build
            notes.append(f"{name}: {str(e).splitlines()[0][:120]}")
    return None, "; ".join(notes)


def spread(E, M, seed):
    """M tokens over E experts, uneven: lognormal weights, an eighth of the experts (at least
    one) empty; the remainder goes to the largest."""
    g = torch.Generator()
    g.manual_seed(seed)
    w = torch.exp(torch.randn(E, generator=g) * 1.0)
    empty = torch.randperm(E, generator=g)[:max(1, E // 8)]
    w[empty] = 0
    sizes = (w / w.sum() * M).floor().to(torch.int64)
    sizes[int(w.argmax())] += M - int(sizes.sum())
    return [int(s) for s in sizes]


def ragged_cases(quick):
    out = [
        ([0, 130, 3, 0, 150, 0], 300, 200, 100),
        ([5, 0, 7, 64, 1, 0, 60, 20], 157, 96, 40),
        ([129], 129, 33, 17),
        ([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 55, 130, 300),
        ([0, 0, 0], 40, 64, 64),
        ([1000, 0, 1, 127, 128, 129, 255, 0], 1700, 1000, 520),   # boundaries on and off 128 rows
        (spread(16, 2000, 3), 2000, 2048, 1024),
    ]
    if not quick:
        out.append((spread(64, 4096, 4), 4096 + 77, 4104, 4096))
    return out


def run_case(lib, sizes, M, N, K, gen, log, launch, torch_too=False):
    x, dims = make_case(sizes, M, N, K, gen)
    args = {n: t.data_ptr() for n, t in x.items()}
    args.update(dims)
    label = f"grouped_gemm bf16 M{M} N{N} K{K} E{len(sizes)} groups {sizes[:10]}{' ...' if len(sizes) > 10 else ''}"
    qst, sel = lib.query("grouped_gemm", "bf16", launch, **args)
    target, inst, reason = describe(sel)
    if qst != TG_OK or not target.startswith("sm_"):
        log(f"FAIL {label}: query status {qst}, target {target}: {reason}")
        return False, x, None
    st = lib.call("grouped_gemm", "bf16", launch, **args)
    torch.cuda.synchronize()
    if st != TG_OK:
        log(f"FAIL {label} [{target}]: status {lib.status_string(st)}")
        return False, x, None
    end = sum(sizes)
    want = reference(x, sizes)
    err, past = error(x["C"], want, end)
    extra = ""
    if torch_too:
        fn, note = torch_grouped(x)
        if fn is not None:
            terr, _ = error(fn()[:M], want, end)
            extra = f"; torch._grouped_mm {terr:.3g}"
        else:
            extra = f"; torch._grouped_mm: {note}"
    ok = err <= TOL and past == 0
    log(f"{'ok  ' if ok else 'FAIL'} {label} [{target} {inst}]: max err {err:.3g} of max |ref| "
        f"(tol {TOL:g}){f', {past} elements past the last offset written' if past else ''}{extra}")
    return ok, x, dims


def verify(lib, quick, log):
    gen = torch.Generator(device="cuda")
    gen.manual_seed(20261206)
    launch = make_launch(0)
    ok_all = True
    for sizes, M, N, K in ragged_cases(quick):
        ok, _, _ = run_case(lib, sizes, M, N, K, gen, log, launch)
        ok_all = ok_all and ok
    return ok_all


BARS = [(8, 16384, 14336, 4096), (64, 16384, 14336, 4096)]


def time_bar(lib, E, M, N, K, log):
    sizes = spread(E, M, 100 + E)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(E)
    launch = make_launch(0, torch.cuda.current_stream().cuda_stream)
    ok, x, dims = run_case(lib, sizes, M, N, K, gen, log, launch, torch_too=True)
    row = {"case": f"E{E} M{M} N{N} K{K}", "sizes": sizes, "verified": ok}
    if dims is None:
        return row
    args = {n: t.data_ptr() for n, t in x.items()}
    args.update(dims)
    _, sel = lib.query("grouped_gemm", "bf16", launch, **args)
    ours = lib.bind("grouped_gemm", "bf16", launch, **args)
    theirs, note = torch_grouped(x)
    fns = [ours] + ([theirs] if theirs else [])
    ms_b = [time_batches([f]) for f in fns]          # interleaved per call would mix L2 states;
    ms_b2 = [time_batches([f]) for f in reversed(fns)][::-1]  # two rounds, mirrored order
    ms_i = [time_isolated([f]) for f in fns]
    flop = 2.0 * sum(sizes) * N * K
    row.update({"variant": describe(sel)[1], "torch_note": note,
                "ours_ms": min(ms_b[0], ms_b2[0]), "ours_isolated_ms": ms_i[0],
                "tflops": flop / (min(ms_b[0], ms_b2[0]) * 1e-3) / 1e12})
    if theirs:
        row.update({"torch_ms": min(ms_b[1], ms_b2[1]), "torch_isolated_ms": ms_i[1]})
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dist", default="build-bench-cuda/dist")
    ap.add_argument("--out", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--verify-only", action="store_true")
    a = ap.parse_args()
    lib = Library(os.path.join(a.dist, "libtgb.so"), os.path.join(a.dist, "tgb.h"), "tgb")
    if not lib.has("grouped_gemm", "bf16"):
        print("grouped.py: libtgb.so has no grouped_gemm (rebuild with bench/cuda/build.sh)")
        return 2
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}")
    ok = verify(lib, a.quick, print)
    if a.verify_only:
        return 0 if ok else 1
    rows = []
    for E, M, N, K in BARS:
        r = time_bar(lib, E, M, N, K, print)
        ok = ok and r["verified"]
        rows.append(r)
        torch.cuda.empty_cache()
    print("\n| case | ours ms (batches / alone) | TFLOP/s | torch._grouped_mm ms (batches / alone) | vs torch (batches / alone) | variant |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if "ours_ms" not in r:
            print(f"| {r['case']} | not run (see above) | | | | |")
            continue
        t = r.get("torch_ms")
        ratio = (f"{t / r['ours_ms']:.2f}x / {r['torch_isolated_ms'] / r['ours_isolated_ms']:.2f}x"
                 if t else f"- ({r['torch_note']})")
        tcol = f"{t:.3f} / {r['torch_isolated_ms']:.3f}" if t else "-"
        print(f"| {r['case']} | {r['ours_ms']:.3f} / {r['ours_isolated_ms']:.3f} | {r['tflops']:.0f} | "
              f"{tcol} | {ratio} | {r['variant']} |")
    for r in rows:
        print(f"{r['case']} groups: {r['sizes']}; torch given {r.get('torch_note', '-')}")
    print("\nbar (issue #34): >= 1.0x torch._grouped_mm")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "grouped.json"), "w") as f:
            json.dump({"rows": rows, "verified": ok}, f, indent=1)
    print("verification:", "all passed" if ok else "FAILURES above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
