"""GPU run of the odd layouts (tests/lit/cuda/Inputs/odd/*.yaml, issue #33): the loop layouts,
replicated fragments, partial parallel loops, warp counts that are no power of two, GEMM tiles
48 and 24 columns wide, shared-to-shared copies and fills of local buffers. The lit tests only
read and compile that code; here each kernel runs through the dispatch library (libtgb_odd.so,
bench/cuda/CMakeLists.txt) on the GPU and on its C variant (launch device -1), on ragged shapes,
with 16-byte-aligned and misaligned (+1 element) tensors, against a float64 reference written
from the spec's text below. Unwritten output elements keep a NaN fill, so a missing store fails.

    python3 bench/cuda/odd.py --dist build-bench-cuda/dist [--out DIR]

Prints one line per case and a summary; exit status 0 only if every case passed.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tgapi import TG_OK, Library, describe, make_launch  # noqa: E402


def ref_gemm(x, shape):
    a, b = x["A"].double(), x["B"].double()
    return {"C": a @ b}


def ref_partial(x, shape):
    y = x["X"].double().clone()
    idx = torch.arange(shape["M"], device=y.device)
    y[(idx % 256) < 128] = 0.0
    return {"Y": y}


def ref_row_vector(x, shape):
    return {"Y": x["Y"].double() + 2.0 * x["X"].double()[:, None]}


def ref_double(x, shape):
    return {"Y": 2.0 * x["X"].double()}


def ref_shared_copies(x, shape):
    return {"Y": x["X"].double() + 0.25}


def ref_colmax(x, shape):
    """Per 128-row block: the column maxima of A @ B, rows past M counting as 0 (the copy's pad)."""
    c = x["A"].double() @ x["B"].double()
    mb = shape["MB"]
    pad = torch.zeros((mb * 128 - c.shape[0], c.shape[1]), dtype=c.dtype, device=c.device)
    return {"Y": torch.cat([c, pad]).view(mb, 128, -1).amax(dim=1)}


def ref_small_fragment(x, shape):
    xs = x["X"].double()
    return {"Y": x["Y"].double() + xs / xs.sum(dim=1, keepdim=True)}


def ref_paged(x, shape):
    """Page table[b, p] of the cache, or zeros where the id is outside [0, NP) (the copy's pad)."""
    cache, table = x["cache"].double(), x["table"].long()
    ok = (table >= 0) & (table < shape["NP"])
    pages = cache[table.clamp(0, shape["NP"] - 1)]
    return {"dst_pages": pages * ok[:, :, None, None]}


def page_ids(shape, gen, dims):
    """Page ids for the block table: mostly valid, some -1 and some past the last page."""
    return torch.randint(-1, dims["NP"] + 2, shape, generator=gen, dtype=torch.int64)


# kernel: (types, [shapes], {tensor: (dtype, shape(dims), role)}, reference, tolerance)
# role: "in" (random input), "io" (random, read and written), "out" (NaN-filled), or a function
# (shape, generator, dims) -> values of an input.
CASES = {
    "gemm_bn48_bn24": ("f16", [dict(M=200, N=150, K=100, BN=48), dict(M=200, N=150, K=100, BN=24),
                               dict(M=64, N=48, K=32, BN=48), dict(M=1, N=7, K=5, BN=24)],
                       {"A": (torch.float16, lambda d: [d["M"], d["K"]], "in"),
                        "B": (torch.float16, lambda d: [d["K"], d["N"]], "in"),
                        "C": (torch.float16, lambda d: [d["M"], d["N"]], "out")}, ref_gemm, 2e-2),
    "gemm_colmax": ("", [dict(M=300, N=70, K=100, MB=3), dict(M=128, N=32, K=64, MB=1),
                         dict(M=1, N=5, K=3, MB=1)],
                    {"A": (torch.float32, lambda d: [d["M"], d["K"]], "in"),
                     "B": (torch.float32, lambda d: [d["K"], d["N"]], "in"),
                     "Y": (torch.float32, lambda d: [d["MB"], d["N"]], "out")}, ref_colmax, 1e-5),
    "parallel_partial": ("", [dict(M=600), dict(M=256), dict(M=100)],
                         {"X": (torch.float32, lambda d: [d["M"]], "in"),
                          "Y": (torch.float32, lambda d: [d["M"]], "out")}, ref_partial, 0.0),
    "parallel_row_vector": ("", [dict(M=37, N=100), dict(M=8, N=64)],
                            {"X": (torch.float32, lambda d: [d["M"]], "in"),
                             "Y": (torch.float32, lambda d: [d["M"], d["N"]], "io")},
                            ref_row_vector, 1e-6),
    "parallel_shared_only": ("", [dict(M=37, N=100), dict(M=16, N=64)],
                             {"X": (torch.float32, lambda d: [d["M"], d["N"]], "in"),
                              "Y": (torch.float32, lambda d: [d["M"], d["N"]], "out")},
                             ref_double, 0.0),
    "shared_copies": ("", [dict(M=37), dict(M=16)],
                      {"X": (torch.bfloat16, lambda d: [d["M"], 64], "in"),
                       "Y": (torch.bfloat16, lambda d: [d["M"], 64], "out")},
                      ref_shared_copies, 1e-2),
    "small_fragment": ("", [dict(M=7), dict(M=2), dict(M=1001)],
                       {"X": (torch.float32, lambda d: [d["M"], 3], "in"),
                        "Y": (torch.float32, lambda d: [d["M"], 3], "io")},
                       ref_small_fragment, 1e-5),
    # indirect tiles (docs/spec.md): 5 pages per sequence (no multiple of 4) keep 16-byte copies
    "paged_copy": ("f32", [dict(B=3, P=5, NP=7, D=64), dict(B=1, P=1, NP=1, D=64), dict(B=2, P=33, NP=40, D=64)],
                   {"cache": (torch.float32, lambda d: [d["NP"], 16, d["D"]], "in"),
                    "table": (torch.int32, lambda d: [d["B"], d["P"]], page_ids),
                    "dst_pages": (torch.float32, lambda d: [d["B"], d["P"], 16, d["D"]], "out")},
                   ref_paged, 0.0),
    "warps12": ("", [dict(M=400, N=32), dict(M=192, N=32), dict(M=5, N=32)],
                {"X": (torch.float32, lambda d: [d["M"], d["N"]], "in"),
                 "Y": (torch.float32, lambda d: [d["M"], d["N"]], "out")}, ref_double, 0.0),
}


def make(dtype, shape, role, device, off, gen, dims):
    """A tensor of `shape` starting `off` elements into a buffer (misaligned for off > 0)."""
    n = 1
    for s in shape:
        n *= s
    if callable(role):
        buf = torch.zeros((n + off + 8,), dtype=dtype, device=device)
        t = buf[off:off + n].view(shape)
        t.copy_(role(shape, gen, dims).to(dtype))
        return t
    buf = torch.full((n + off + 8,), float("nan"), dtype=dtype, device=device)
    t = buf[off:off + n].view(shape)
    if role != "out":
        # positive values away from 0: small_fragment divides by row sums
        t.copy_((torch.rand(shape, generator=gen, dtype=torch.float64) + 0.5).to(dtype))
    return t


def run(lib, kernel, spec, dims, device, off, gen):
    types, _, tensors, ref, tol = spec
    x = {n: make(dt, shp(dims), role, device, off, gen, dims) for n, (dt, shp, role) in tensors.items()}
    before = {n: t.clone() for n, t in x.items()}
    args = {n: t.data_ptr() for n, t in x.items()}
    args.update(dims)
    launch = make_launch(0 if device == "cuda" else -1)
    qst, sel = lib.query(kernel, types, launch, **args)
    target, inst, reason = describe(sel)
    label = f"{kernel} {types or '-'} {dims} {'aligned' if off == 0 else f'+{off} elem'} on {device}"
    if qst != TG_OK:
        return False, f"{label}: query status {qst}: {reason}"
    if (device == "cuda") != target.startswith("sm_"):
        return False, f"{label}: dispatch chose {target} ({reason})"
    st = lib.call(kernel, types, launch, **args)
    if device == "cuda":
        torch.cuda.synchronize()
    if st != TG_OK:
        return False, f"{label} [{target}]: status {lib.status_string(st)}"
    want = ref({n: before[n] for n in before}, dims)
    worst = 0.0
    for n, w in want.items():
        got = x[n].double()
        if torch.isnan(got).any():
            return False, f"{label} [{target}]: {n} has {int(torch.isnan(got).sum())} unwritten (NaN) elements"
        err = ((got - w).abs() / (1.0 + w.abs())).max().item() if got.numel() else 0.0
        worst = max(worst, err)
    for n, (_, _, role) in tensors.items():
        if role != "out" and role != "io" and not torch.equal(x[n], before[n]):
            return False, f"{label} [{target}]: input {n} was written"
    ok = worst <= tol
    return ok, f"{label} [{target} {inst}]: max rel err {worst:.3g} (tol {tol:g})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dist", default="build-bench-cuda/dist")
    ap.add_argument("--devices", default="cuda,cpu")
    args = ap.parse_args()
    lib = Library(os.path.join(args.dist, "libtgb_odd.so"), os.path.join(args.dist, "tgb_odd.h"),
                  "tgb_odd")
    devices = [d for d in args.devices.split(",") if d != "cuda" or torch.cuda.is_available()]
    if "cuda" not in devices:
        print("odd.py: no CUDA device: the GPU cases are not run (only the C variants)")
    gen = torch.Generator().manual_seed(33)
    passed = failed = 0
    for kernel, spec in CASES.items():
        for dims in spec[1]:
            for device in devices:
                for off in (0, 1):
                    ok, line = run(lib, kernel, spec, dims, device, off, gen)
                    print(("ok   " if ok else "FAIL ") + line, flush=True)
                    passed += ok
                    failed += not ok
    print(f"odd.py: {passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
