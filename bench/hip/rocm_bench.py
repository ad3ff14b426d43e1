#!/usr/bin/env python3
"""The shipped kernels' HIP variants against rocBLAS / hipBLASLt / PyTorch on ROCm, one process.

bench/hip/run_rocm.sh builds libtgh.so (bench/hip/rocm) and runs this on a machine with an AMD
GPU (MI300X: gfx942) and PyTorch built for ROCm. Per case: the generated dispatch picks a
variant (its `_query` must name a HIP target, else the case is reported, not timed), ours is
checked once against the float64 reference of bench/cuda/catalog.py and against the anchor,
then ours and the anchor are timed in the same run, interleaved: batches of back-to-back calls
on torch's current stream between two events (torch.cuda.Event is a hipEvent on ROCm), the
median over rounds, ours first in even rounds and the anchor first in odd ones. Anchors:
torch.matmul (rocBLAS or hipBLASLt, whichever torch picks: TORCH_BLAS_PREFER_HIPBLASLT=1/0),
addmm + gelu, F.scaled_dot_product_attention, torch.softmax, F.rms_norm. Prints one line per
case with both times, the rate and ours / anchor (> 1: ours slower).

  python3 bench/hip/rocm_bench.py --lib DIR [--quick] [--cases gemm,softmax,...]
  python3 bench/hip/rocm_bench.py --check-env   (what this machine can run; exit 0 if all)
"""
import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cuda"))  # tgapi.py, catalog.py


def environment():
    """(torch module or None, list of reasons it cannot time on a ROCm GPU)."""
    why = []
    try:
        import torch
    except ImportError:
        return None, ["no PyTorch (install a ROCm build of PyTorch)"]
    if not getattr(torch.version, "hip", None):
        why.append(f"PyTorch {torch.__version__} is not a ROCm build (torch.version.hip is None)")
    if not torch.cuda.is_available():
        why.append("no GPU visible to PyTorch")
    return torch, why


def cases(quick):
    """(kernel, types, shape, anchor). Shapes: docs/hip.md's roofline table."""
    big = (1024, 1024, 1024) if quick else (4096, 4096, 4096)
    rows = (1024, 4096) if quick else (4096, 16384)
    attn = (1, 8, 1024, 128) if quick else (4, 32, 4096, 128)
    out = []
    for t in ("f16", "bf16"):
        out.append(("gemm", t, big, "matmul"))
        out.append(("gemm_bias_gelu", t, big, "addmm_gelu"))
        out.append(("softmax", t, rows, "softmax"))
        out.append(("rmsnorm", t, rows, "rms_norm"))
        out.append(("flash_attention_fwd", t, attn, "sdpa"))
    out.append(("gemm", "f32", big, "matmul"))
    return out


def anchor(torch, name, kernel, shape, values, x):
    import torch.nn.functional as F
    if name == "matmul":
        return lambda: torch.matmul(x["A"], x["B"])
    if name == "addmm_gelu":
        return lambda: F.gelu(torch.addmm(x["bias"], x["A"], x["B"]))
    if name == "softmax":
        return lambda: torch.softmax(x["X"], dim=-1)
    if name == "rms_norm":
        n = shape[1]
        if hasattr(F, "rms_norm"):
            return lambda: F.rms_norm(x["X"], (n,), x["W"], values["eps"])
        X, W = x["X"], x["W"]
        return lambda: (X.float() * torch.rsqrt(X.float().pow(2).mean(-1, keepdim=True)
                                                 + values["eps"])).to(X.dtype) * W
    if name == "sdpa":
        q, k, v = x["Q"], x["K"], x["V"]
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=bool(values["causal"]),
                                                      scale=values["sm_scale"])
    raise ValueError(name)


def time_interleaved(torch, fns, rounds=11, target_ms=20.0):
    """Median ms per call of each function: batches of back-to-back calls between two events."""
    stream = torch.cuda.current_stream()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    reps = []
    for f in fns:  # calls per batch: about target_ms of work
        f()
        torch.cuda.synchronize()
        start.record(stream)
        for _ in range(3):
            f()
        end.record(stream)
        end.synchronize()
        per = max(start.elapsed_time(end) / 3, 1e-3)
        reps.append(max(3, min(2000, int(target_ms / per))))
    times = [[] for _ in fns]
    for r in range(rounds):
        order = list(range(len(fns))) if r % 2 == 0 else list(reversed(range(len(fns))))
        for i in order:
            start.record(stream)
            for _ in range(reps[i]):
                fns[i]()
            end.record(stream)
            end.synchronize()
            times[i].append(start.elapsed_time(end) / reps[i])
    return [statistics.median(t) for t in times]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", help="directory holding libtgh.so and tgh.h")
    ap.add_argument("--quick", action="store_true", help="small shapes (a smoke run)")
    ap.add_argument("--cases", default="", help="comma-separated kernel names to keep")
    ap.add_argument("--check-env", action="store_true")
    args = ap.parse_args()
    torch, why = environment()
    if args.check_env:
        for w in why:
            print(f"rocm_bench: cannot time here: {w}")
        return 1 if why else 0
    if why:
        for w in why:
            print(f"rocm_bench: {w}")
        return 2
    import catalog
    import tgapi
    api = tgapi.Library(os.path.join(args.lib, "libtgh.so"), os.path.join(args.lib, "tgh.h"), "tgh")
    props = torch.cuda.get_device_properties(0)
    print(f"device: {props.name} ({getattr(props, 'gcnArchName', '?')}), torch {torch.__version__}, "
          f"HIP {torch.version.hip}")
    keep = set(filter(None, args.cases.split(",")))
    gen = torch.Generator(device="cuda").manual_seed(1)
    launch = tgapi.make_launch(0, torch.cuda.current_stream().cuda_stream)
    fmt = "{:<22} {:<5} {:<18} {:<10} {:>10} {:>10} {:>8} {:>14}  {}"
    print(fmt.format("kernel", "type", "shape", "variant", "ours ms", "anchor ms", "ratio",
                     "rate (ours)", "anchor / notes"))
    failed = 0
    for kname, types, shape, aname in cases(args.quick):
        if keep and kname not in keep:
            continue
        k = catalog.KERNELS[kname]
        if not api.has(kname, types):
            print(fmt.format(kname, types, "x".join(map(str, shape)), "-", "-", "-", "-", "-",
                             "not in the library"))
            continue
        values = k.values(shape) if kname != "flash_attention_fwd" else k.values(shape, 0)
        x = k.make_inputs(shape, types, "cuda", gen)
        out = {n: torch.full(k.shape_of(e, shape), float("nan"),
                             dtype=catalog.DTYPES[k.tensor_type(n, types)], device="cuda")
               for n, e in k.outputs}
        call_args = dict({n: t.data_ptr() for n, t in list(x.items()) + list(out.items())}, **values)
        qst, sel = api.query(kname, types, launch, **call_args)
        target, _, reason = tgapi.describe(sel)
        label = "x".join(map(str, shape))
        if qst != 0 or not target.startswith(("gfx", "hip")):
            print(fmt.format(kname, types, label, target or "-", "-", "-", "-", "-",
                             f"no HIP variant runs: {reason}"))
            failed += 1
            continue
        ours = api.bind(kname, types, launch, **call_args)
        ref_fn = anchor(torch, aname, k, shape, values, x)
        ours()
        got = ref_fn()
        torch.cuda.synchronize()
        x64 = {n: t.to(torch.float64) for n, t in x.items()}
        ref = k.reference(x64, shape, values)
        name = next(iter(ref))
        err = k.scaled_err(out[name].to(torch.float64), ref[name], x64)
        tol = k.tolerance(types, k.reduction_length(shape))
        aerr = k.scaled_err(got.to(torch.float64), ref[name], x64)
        t_ours, t_anchor = time_interleaved(torch, [ours, ref_fn])
        f = k.flops(shape, values)
        if f and kname not in ("softmax", "rmsnorm"):
            rate = f"{f / (t_ours * 1e-3) / 1e12:.1f} TFLOP/s"
        else:
            rate = f"{k.bytes_moved(shape, types) / (t_ours * 1e-3) / 1e9:.0f} GB/s"
        ok = err <= tol
        failed += 0 if ok else 1
        print(fmt.format(kname, types, label, target, f"{t_ours:.4f}", f"{t_anchor:.4f}",
                         f"{t_ours / t_anchor:.2f}", rate,
                         f"{aname}; err/tol {err / tol:.2f} (anchor {aerr / tol:.2f})"
                         + ("" if ok else " WRONG")))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
