"""Verification of every kernel x type of a dispatch library against float64 references.

Each case runs on fresh random inputs placed inside guarded buffers: 256 elements of guard
bytes on each side (0xFF, NaN in every float type, around outputs; 0xFE around inputs), and
the outputs pre-filled with 0xFF, so an unwritten output element is a NaN and an
out-of-bounds write changes a guard. Inputs
are compared bitwise after the call (a kernel must not write them). Every case runs with
16-byte-aligned tensors (the vectorized kernel), with every tensor one element past that (the
scalar kernel the variant falls back to; docs/cuda-backend.md) and, where a tensor's elements
are narrower than 4 bytes, with every tensor 4 bytes past it (the kernel of 4-byte vectors).
"""
import torch

import catalog
from tgapi import TG_OK, STATUS_NAMES, describe

GUARD = 256  # elements on each side


class Guarded:
    """A tensor of `shape` at element offset GUARD + off inside a byte buffer filled with
    `fill`: 0xFF (NaN in every float type) around and in outputs; 0xFE around inputs (huge
    negative f32/bf16, NaN in f16), so that a kernel that reads past an input and copies what
    it read past an output still changes the output's guard bytes (NaN payloads propagate)."""

    def __init__(self, shape, types, device, off, init=None, fill=0xFF):
        dtype = catalog.DTYPES[types]
        es = catalog.ELEM_BYTES[types]
        self.n = 1
        for s in shape:
            self.n *= s
        self.es, self.lead = es, (GUARD + off) * es
        total = (self.n + 2 * GUARD + off) * es
        self.fill = fill
        self.raw = torch.full((total,), fill, dtype=torch.uint8, device=device)
        typed = self.raw.view(dtype)
        self.t = typed[GUARD + off:GUARD + off + self.n].view(shape)
        if init is not None:
            self.t.copy_(init)
        self.snapshot = self.raw.clone() if init is not None else None

    def ptr(self):
        return self.t.data_ptr()

    def guards_intact(self):
        tail = self.lead + self.n * self.es
        return bool((self.raw[:self.lead] == self.fill).all()) and \
            bool((self.raw[tail:] == self.fill).all())

    def unchanged(self):
        return bool(torch.equal(self.raw, self.snapshot))


def is_gpu_target(target):
    return target.startswith("sm_")


def run_case(api, kernel, types, shape, values, off, device, launch, gen):
    """Runs one call; returns a dict row (see ROW_KEYS)."""
    x = kernel.make_inputs(shape, types, device, gen)
    def elems(name):  # `off` in elements of the tensor's type
        return off if isinstance(off, int) else 4 // catalog.ELEM_BYTES[kernel.tensor_type(name, types)]
    ins = {n: Guarded(x[n].shape, kernel.tensor_type(n, types), device, elems(n), x[n], fill=0xFE)
           for n in x}
    outs = {n: Guarded(kernel.shape_of(e, shape), kernel.tensor_type(n, types), device, elems(n))
            for n, e in kernel.outputs}
    args = {n: g.ptr() for n, g in list(ins.items()) + list(outs.items())}
    args.update(values)
    row = {"kernel": kernel.name, "types": types, "shape": kernel.label(shape, values),
           "ptr": "aligned" if off == 0 else f"+{off} elem" if isinstance(off, int) else "+4 bytes",
           "target": "", "instance": "",
           "reason": "", "err": float("nan"), "tol": float("nan"), "ok": False, "why": ""}
    qst, sel = api.query(kernel.name, types, launch, **args)
    row["target"], row["instance"], row["reason"] = describe(sel)
    if qst != TG_OK:
        row["why"] = f"query: {STATUS_NAMES.get(qst, qst)}: {row['reason']}"
        return row
    on_gpu = device.type == "cuda"
    if on_gpu != is_gpu_target(row["target"]):
        # Never hand device pointers to a CPU variant (or host pointers to a GPU one).
        row["why"] = (f"selected {row['target'] or 'nothing'} for a "
                      f"{'GPU' if on_gpu else 'CPU'} run: {row['reason']}")
        return row
    st = api.call(kernel.name, types, launch, **args)
    if on_gpu:
        torch.cuda.synchronize()
    if st != TG_OK:
        row["why"] = f"call: {api.status_string(st)}"
        return row
    problems = []
    for n, g in outs.items():
        if not g.guards_intact():
            problems.append(f"{n}: guard bytes overwritten")
    for n, g in ins.items():
        if not g.unchanged():
            problems.append(f"{n}: input or its guards modified")
    length = kernel.reduction_length(shape)
    row["tol"] = kernel.tolerance(types, length)
    x64 = {n: t.to(torch.float64) for n, t in x.items()}
    err = 0.0
    if all(g.n for g in outs.values()):
        ref = kernel.reference(x64, shape, values)
        for n, g in outs.items():
            got = g.t.to(torch.float64)
            bad = int((~torch.isfinite(got)).sum())
            if bad:
                problems.append(f"{n}: {bad} non-finite (unwritten?) elements")
            err = max(err, kernel.scaled_err(got, ref[n], x64))
    row["err"] = err
    if err > row["tol"]:
        problems.append(f"error {err:.3g} > tol {row['tol']:.3g}")
    row["why"] = "; ".join(problems)
    row["ok"] = not problems
    return row


def verify_all(api, device, launch, quick, only=None, log=print, seed=20261129, trace=None):
    """Every kernel x type the header has, every verification shape, both pointer offsets."""
    rows = []
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    for kname, types in api.kernels():
        if only and kname not in only:
            continue
        if kname == "decode_attention":
            continue  # paged inputs: verified by bench/cuda/decode.py (run_device.sh runs it)
        if kname == "grouped_gemm":
            continue  # expert offsets: verified by bench/cuda/grouped.py (run_device.sh grouped)
        if kname in ("gemm_w4a16", "gemm_mxfp4"):
            continue  # packed weights: verified by bench/cuda/dequant.py (run_device.sh dequant)
        kernel = catalog.KERNELS.get(kname)
        if kernel is None:
            rows.append({"kernel": kname, "types": types, "shape": "-", "ptr": "-", "target": "",
                         "instance": "", "reason": "", "err": float("nan"),
                         "tol": float("nan"), "ok": False,
                         "why": "no reference in bench/cuda/catalog.py for this kernel"})
            continue
        # pointer offsets: 16-byte aligned (the widest vectors), one element (the scalar
        # kernel, or over 64 KiB of such tensors the widest one on realigned copies,
        # docs/cuda-backend.md) and, where elements are narrower than 4 bytes, 4 bytes (the
        # 4-byte kernel)
        offsets = (0, 1)
        if any(catalog.ELEM_BYTES[kernel.tensor_type(n, types)] < 4
               for n in [n for n, _ in kernel.inputs] + [n for n, _ in kernel.outputs]):
            offsets += ("4B",)
        for shape, values in catalog.verify_cases(kernel, quick):
            for off in offsets:
                if trace:  # to the log file only: after a hang, it names the case
                    trace(f"case {kname} {types} {kernel.label(shape, values)} off={off}")
                try:
                    row = run_case(api, kernel, types, shape, values, off, device, launch, gen)
                except Exception as e:  # keep going: one broken case must not hide the rest
                    row = {"kernel": kname, "types": types,
                           "shape": kernel.label(shape, values), "ptr": str(off),
                           "target": "", "instance": "", "reason": "",
                           "err": float("nan"), "tol": float("nan"), "ok": False,
                           "why": f"exception: {type(e).__name__}: {e}"}
                    if device.type == "cuda":
                        try:
                            torch.cuda.synchronize()
                        except Exception as e2:  # a sticky CUDA error: nothing after it counts
                            row["why"] += f"; CUDA context lost: {e2}"
                            rows.append(row)
                            log(f"FATAL: {row['why']}")
                            return rows
                rows.append(row)
                if not row["ok"]:
                    log(f"FAIL {kname} {types} {row['shape']} {row['ptr']}: {row['why']}")
    return rows


def summarize(rows):
    """One line per kernel x type: cases, failures, worst err/tol, variants chosen."""
    groups = {}
    for r in rows:
        groups.setdefault((r["kernel"], r["types"]), []).append(r)
    out = []
    for (k, t), rs in groups.items():
        worst = max((r["err"] / r["tol"] for r in rs if r["tol"] == r["tol"] and r["tol"] > 0),
                    default=float("nan"))
        fails = [r for r in rs if not r["ok"]]
        targets = sorted({r["target"] for r in rs if r["target"]})
        insts = sorted({r["instance"] for r in rs if r["instance"]})
        out.append({"kernel": k, "types": t, "cases": len(rs), "failed": len(fails),
                    "worst_err_over_tol": worst, "targets": ",".join(targets),
                    "instances": ",".join(insts),
                    "first_failure": (f"{fails[0]['shape']} {fails[0]['ptr']}: {fails[0]['why']}"
                                      if fails else "")})
    return out


def markdown_rows(rows):
    lines = ["| kernel | T | shape | ptr | variant | instance | err | tol | result |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {r['types']} | {r['shape']} | {r['ptr']} | "
                     f"{r['target']} | {r['instance']} | {r['err']:.2e} | {r['tol']:.2e} | "
                     f"{'ok' if r['ok'] else 'FAIL: ' + r['why']} |")
    return "\n".join(lines)


def markdown_summary(summary):
    lines = ["| kernel | T | cases | failed | worst err/tol | variant(s) | first failure |",
             "|---|---|---|---|---|---|---|"]
    for s in summary:
        lines.append(f"| {s['kernel']} | {s['types']} | {s['cases']} | {s['failed']} | "
                     f"{s['worst_err_over_tol']:.3f} | {s['targets']} | "
                     f"{s['first_failure'][:160]} |")
    return "\n".join(lines)
