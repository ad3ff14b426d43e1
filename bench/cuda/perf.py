"""Timings on the GPU, ours and the anchors in the same run (issue #3, point 10).

Method (/work/.library/device/METHOD.md): random inputs (never zeros); one warm-up batch;
then, per measurement, `rounds` batches of k back-to-back calls between two CUDA events on
one stream, k chosen so a batch lasts ~20 ms; the per-call time of a batch is its elapsed
time / k and the figure is the median over batches. The cases with a bar against an anchor are
timed a second way too, as the anchors in ../shared/anchors were (time_isolated: one call at a
time after an L2 flush, triton.testing.do_bench's method); the bar must hold both ways. Back-to-back calls hide the host cost of
a call (ctypes, torch's dispatcher) behind the previous kernel, for ours and the anchors
alike, where a kernel lasts longer than its call takes to issue: the host time of issuing each
batch is measured too, and bench.py marks a figure "host-bound" where it reaches 0.8 of the GPU
time per call. Where one input set fits in 2x the L2 (60 MB on the H200), calls rotate among enough
sets to exceed it. Every measurement is taken twice, ours and the anchors interleaved
(ours, anchors, ours, anchors), and both figures are kept: their spread is the noise floor.
"""
import json
import math
import os
import statistics
import tempfile
import time

import torch
import torch.nn.functional as F

import catalog
from verify import is_gpu_target

L2_BYTES = 60 * 2 ** 20


def time_batches(fns, rounds=15, target_ms=20.0, host=None):
    """Median per-call ms of fns called round-robin (one fn per input set). `host`, a list:
    gets the median host time per call (ms) of issuing a batch: where it comes near the GPU's,
    the host's issue rate (Python, ctypes or torch's dispatcher, the launch) bounds the figure,
    not the kernels."""
    stream = torch.cuda.current_stream()
    for f in fns:  # warm-up: module load, cuBLAS handles, autotuning caches
        f()
    stream.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(3):
        fns[i % len(fns)]()
    end.record()
    end.synchronize()
    est = max(start.elapsed_time(end) / 3, 1e-3)
    k = int(min(max(target_ms / est, 3), 2000))
    per_call, host_call = [], []
    for _ in range(rounds):
        start.record()
        t0 = time.perf_counter()
        for i in range(k):
            fns[i % len(fns)]()
        host_call.append((time.perf_counter() - t0) * 1e3 / k)
        end.record()
        end.synchronize()
        per_call.append(start.elapsed_time(end) / k)
    if host is not None:
        host.append(statistics.median(host_call))
    return statistics.median(per_call)


FLUSH_BYTES = 256 * 2 ** 20
SLEEP_CYCLES = int(os.environ.get("TGB_SLEEP_CYCLES", 150_000))  # ~90 us at 1.6-1.98 GHz: the flush's time


def graph_check(bind, output, replays=3):
    """One launch captured into a CUDA graph, against the same launch outside one. `bind(stream)`
    returns a call that launches on that stream and returns a status; `output` is the tensor it
    writes. The eager launch runs first (module load, the device's preparation), then the capture
    on torch's capture stream; each replay starts from NaN. Returns (whether every replay's bytes
    equal the eager launch's, eager ms, replay ms): a split launch
    runs split in a capture too (a graph-owned workspace), so the replay time stays the eager
    one, and its fixed join order makes the bytes equal."""
    eager = bind(torch.cuda.current_stream().cuda_stream)
    eager()
    torch.cuda.synchronize()
    want = output.detach().clone().view(torch.uint8)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        bind(torch.cuda.current_stream().cuda_stream)()
    same = True
    for _ in range(replays):
        output.fill_(float("nan"))
        g.replay()
        torch.cuda.synchronize()
        same = same and torch.equal(output.view(torch.uint8), want)
    return same, time_batches([eager]), time_batches([g.replay])


def time_isolated(fns, target_ms=100.0):
    """Median ms of single calls, each alone between two events after a 256 MB write that
    flushes the L2 (triton.testing.do_bench's method, which measured ../shared/anchors). The
    flush also keeps the GPU busy while the host enqueues the call, so host overhead stays out.
    Calls do not run back to back: the clocks see a lighter load than in time_batches.
    TGB_ISOLATE=sleep replaces the flush by a GPU busy-wait of about the same length
    (torch.cuda._sleep: no memory traffic, the L2 keeps the previous call's data), to tell a cold
    cache from the gap between calls (a diagnostic; the bars use the flush)."""
    sleep = os.environ.get("TGB_ISOLATE", "flush") == "sleep"
    cache = torch.empty(FLUSH_BYTES if not sleep else 1, dtype=torch.int8, device="cuda")
    for f in fns:
        f()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fns[0]()
    end.record()
    end.synchronize()
    reps = int(min(max(target_ms / max(start.elapsed_time(end), 1e-3), 10), 200))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        if sleep:
            torch.cuda._sleep(SLEEP_CYCLES)
        else:
            cache.zero_()
        starts[i].record()
        fns[i % len(fns)]()
        ends[i].record()
    torch.cuda.synchronize()
    del cache
    return statistics.median(a.elapsed_time(b) for a, b in zip(starts, ends))


def kernel_spans_isolated(entries, reps=30):
    """Median span of the kernels one call launches (first kernel's start to last kernel's end,
    CUPTI timestamps through torch.profiler), for several functions (ours, then the bar's
    anchors), one call at a time after the 256 MB flush, the functions alternating call by call
    in one profiled session so that drift weighs on all alike: the kernels' own time, without
    the launch gap that the events around a call include. Each function's kernels per call and
    the flush's are counted alone first. None for all when the records do not add up."""
    cache = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")

    def kernels(run):
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            run()
            torch.cuda.synchronize()
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            prof.export_chrome_trace(f.name)
            trace = json.load(open(f.name))
        return sorted((e for e in trace.get("traceEvents", []) if e.get("cat") == "kernel"),
                      key=lambda e: e["ts"])

    for fns in entries:
        fns[0]()
    torch.cuda.synchronize()
    flush = len(kernels(lambda: cache.zero_()))
    counts = [len(kernels(fns[0])) for fns in entries]
    order = [j for i in range(reps) for j in interleaved_order(len(entries), i)]

    def calls():
        for n, j in enumerate(order):
            cache.zero_()
            entries[j][n % len(entries[j])]()

    ks = kernels(calls)
    del cache
    if flush < 1 or min(counts) < 1 or len(ks) != sum(flush + counts[j] for j in order):
        return [None] * len(entries)
    spans = [[] for _ in entries]
    at = 0
    for j in order:
        own = ks[at + flush:at + flush + counts[j]]
        at += flush + counts[j]
        spans[j].append((max(e["ts"] + e["dur"] for e in own) - own[0]["ts"]) / 1000.0)
    return [statistics.median(x) for x in spans]


def interleaved_order(n, r):
    """Call r's order of n functions: rotated by r, reversed every other call."""
    order = [(i + r) % n for i in range(n)]
    return order[::-1] if r % 2 else order


class Case:
    """One timed problem: our kernel, its anchors, and how to rate it."""

    def __init__(self, kernel, types, shape, values=None, anchors=(), targets=(), note=""):
        self.kernel = catalog.KERNELS[kernel]
        self.types, self.shape = types, shape
        self.values = values if values is not None else self.kernel.values(shape)
        self.anchors = anchors  # names understood by make_anchor
        self.targets = targets  # (what, bar): "anchor:<name>" or "copy"
        self.note = note

    def label(self):
        return f"{self.kernel.name} {self.types} {self.kernel.label(self.shape, self.values)}"


def hopper_pass():
    """True unless TILEGEN_GPU_DISABLE turns the sm_90a variants off: this run times the
    Hopper path against issue #4's bars; otherwise the sm_80-style path against issue #3's."""
    off = os.environ.get("TILEGEN_GPU_DISABLE", "").split(",")
    return "sm_90a" not in off


def default_cases():
    fa = {"B": 4, "H": 32, "S": 4096, "D": 128}
    shape_fa = (4, 32, 4096, 128)
    fa_vals = lambda c: dict(fa, sm_scale=1.0 / math.sqrt(128), causal=c)
    if hopper_pass():
        # issue #4, point 8: >= 1.0x cuBLAS / cuDNN on the H200
        gemm_bar = (("anchor:cublas", 1.0),)
        fa_bar = (("anchor:cudnn", 1.0),)
        extra = [
            Case("gemm_fp8", "e4m3", (8192, 8192, 8192), anchors=("scaled_mm", "scaled_mm_fast"),
                 targets=(("anchor:scaled_mm", 1.0),)),
            Case("gemm_fp8", "e4m3", (4096, 4096, 4096), anchors=("scaled_mm", "scaled_mm_fast")),
            Case("gemm_fp8", "e4m3", (16, 8192, 8192), anchors=("scaled_mm",)),  # small_m's tiles
            Case("gemm_fp8", "e4m3", (64, 8192, 8192), anchors=("scaled_mm",)),
            # the same without partial-sum promotion (fast_accum), against its like
            Case("gemm_fp8_fast", "e4m3", (8192, 8192, 8192),
                 anchors=("scaled_mm_fast", "scaled_mm")),
            Case("gemm", "bf16", (8192, 8192, 8192), anchors=("cublas",), targets=gemm_bar),
            Case("gemm", "bf16", (4096, 4096, 512), anchors=("cublas",), targets=gemm_bar),
            Case("flash_attention_fwd", "bf16", (1, 32, 16384, 128),
                 dict(B=1, H=32, S=16384, D=128, sm_scale=1.0 / math.sqrt(128), causal=0),
                 anchors=("flash", "cudnn"), targets=fa_bar),
            # not bars: launches of at most half the SMs' tiles, every tile split in parts
            # (docs/hopper.md, split tail), and rows that are no whole 16 bytes (N = 4300: 4-byte
            # multiples; N = 4301: odd), which take repitched copies (docs/cuda-backend.md)
            Case("gemm", "bf16", (128, 4096, 4096), anchors=("cublas",)),
            Case("gemm", "bf16", (256, 256, 65536), anchors=("cublas",)),
            # decode-like rows (gemm's gemv_narrow, gemv, gemv32, small_m and narrow classes,
            # kernels/gemm.yaml); M = 1 is the GEMV anchor (../shared/anchors: cuBLAS 0.044 ms);
            # 1x4096x14336 (long K over few columns) runs gemv_narrow's 16x32 tiles
            Case("gemm", "bf16", (1, 8192, 8192), anchors=("cublas",)),
            Case("gemm", "bf16", (8, 28672, 4096), anchors=("cublas",)),
            Case("gemm", "bf16", (32, 8192, 8192), anchors=("cublas",)),
            Case("gemm", "bf16", (1, 4096, 14336), anchors=("cublas",)),
            Case("gemm", "bf16", (16, 4096, 4096), anchors=("cublas",)),
            Case("gemm", "bf16", (64, 8192, 8192), anchors=("cublas",)),
            Case("gemm", "bf16", (256, 4096, 4096), anchors=("cublas",)),
            Case("gemm_bias_gelu", "bf16", (16, 8192, 8192), anchors=("torch",)),
            Case("flash_attention_fwd", "bf16", (1, 2, 4096, 128),
                 dict(B=1, H=2, S=4096, D=128, sm_scale=1.0 / math.sqrt(128), causal=0),
                 anchors=("cudnn",)),
            Case("gemm", "bf16", (1000, 4300, 2048), anchors=("cublas",)),
            Case("gemm", "bf16", (1000, 4301, 2048), anchors=("cublas",)),
            # a decode call with a ragged vocabulary (odd N: small_m's ping-pong kernel stores C
            # element by element, B is copied with 16-byte rows)
            Case("gemm", "bf16", (64, 32001, 4096), anchors=("cublas",)),
            Case("gemm_bias_gelu", "bf16", (1000, 4300, 2048), anchors=("torch",)),
        ]
    else:
        # issue #3, point 10: the sm_80-style path
        gemm_bar = (("anchor:cublas", 0.5),)
        fa_bar = (("anchor:flash", 0.9),)
        extra = []
    return extra + [
        Case("gemm", "bf16", (4096, 4096, 4096), anchors=("cublas",), targets=gemm_bar),
        Case("gemm", "f16", (4096, 4096, 4096), anchors=("cublas",)),
        Case("gemm", "f32", (2048, 2048, 2048), anchors=("cublas",),
             note="cuBLAS in true f32 (TF32 off), like ours"),
        Case("gemm_bias_gelu", "bf16", (4096, 4096, 4096), anchors=("torch",)),
        Case("softmax", "bf16", (16384, 8192), anchors=("torch",),
             targets=(("copy", 0.85), ("anchor:torch", 1.0))),
        Case("softmax", "f32", (8192, 8192), anchors=("torch",)),
        Case("rmsnorm", "bf16", (16384, 8192), anchors=("torch",),
             targets=(("copy", 0.85), ("anchor:torch", 1.0))),
        Case("rmsnorm", "f32", (8192, 8192), anchors=("torch",)),
        Case("flash_attention_fwd", "bf16", shape_fa, fa_vals(0), anchors=("flash", "cudnn"),
             targets=fa_bar),
        Case("flash_attention_fwd", "bf16", shape_fa, fa_vals(1), anchors=("flash", "cudnn"),
             targets=fa_bar),
        Case("flash_attention_fwd", "f16", shape_fa, fa_vals(0), anchors=("flash", "cudnn")),
        Case("flash_attention_fwd", "bf16", (8, 16, 2048, 64),
             dict(B=8, H=16, S=2048, D=64, sm_scale=0.125, causal=0), anchors=("flash", "cudnn"),
             targets=fa_bar if hopper_pass() else ()),
    ]


def make_anchor(name, case, x, out):
    """A zero-argument callable computing the same function with PyTorch (or None + why)."""
    k, v = case.kernel.name, case.values
    if k == "gemm" and name == "cublas":
        return lambda: torch.mm(x["A"], x["B"], out=out["C"]), ""
    if k in ("gemm_fp8", "gemm_fp8_fast") and name in ("scaled_mm", "scaled_mm_fast"):
        # cuBLASLt FP8 through torch: B must be column-major, i.e. our [N, K] transposed.
        # use_fast_accum=True accumulates in the wgmma accumulator throughout, as ours does;
        # the default (False) periodically promotes partial sums to a separate f32 sum.
        sa = torch.tensor(v["scale_a"], dtype=torch.float32, device="cuda")
        sb = torch.tensor(v["scale_b"], dtype=torch.float32, device="cuda")
        A, Bt = x["A"], x["B"].t()
        fast = name == "scaled_mm_fast"
        return (lambda: torch._scaled_mm(A, Bt, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                         use_fast_accum=fast),
                "torch._scaled_mm (per-tensor scales, bf16 out" +
                (", use_fast_accum=True)" if fast else ")"))
    if k == "gemm_bias_gelu" and name == "torch":
        return lambda: F.gelu(torch.addmm(x["bias"], x["A"], x["B"])), "addmm + gelu (2 kernels)"
    if k == "softmax" and name == "torch":
        return lambda: torch.softmax(x["X"], dim=-1), ""
    if k == "rmsnorm" and name == "torch":
        n = case.shape[1]
        if hasattr(F, "rms_norm"):
            return lambda: F.rms_norm(x["X"], (n,), x["W"], v["eps"]), "F.rms_norm"
        X, W = x["X"], x["W"]
        return (lambda: (X.float() * torch.rsqrt(X.float().pow(2).mean(-1, keepdim=True)
                                                  + v["eps"])).to(X.dtype) * W,
                "manual formula (no F.rms_norm in this torch)")
    if k == "flash_attention_fwd" and name in ("flash", "cudnn"):
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backend = {"flash": SDPBackend.FLASH_ATTENTION,
                   "cudnn": SDPBackend.CUDNN_ATTENTION}[name]
        q, kk, vv = x["Q"], x["K"], x["V"]

        def run():
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(q, kk, vv, is_causal=bool(v["causal"]),
                                                      scale=v["sm_scale"])
        return run, f"torch SDPA {name}"
    return None, f"no anchor '{name}' for {k}"


def copy_bandwidth(nbytes=2 ** 30):
    """Device-to-device copy, GB/s counting bytes read plus bytes written."""
    src = torch.randint(0, 255, (nbytes,), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = [time_batches([lambda: dst.copy_(src)]) for _ in range(2)]
    del src, dst
    return [2 * nbytes / (t * 1e-3) / 1e9 for t in ms], ms


def rate(case, ms):
    """(value, unit) for one per-call time."""
    f = case.kernel.flops(case.shape, case.values)
    if f and case.kernel.name != "softmax" and case.kernel.name != "rmsnorm":
        return f / (ms * 1e-3) / 1e12, "TFLOP/s"
    return case.kernel.bytes_moved(case.shape, case.types) / (ms * 1e-3) / 1e9, "GB/s"


def run_case(api, case, launch, gen, log=print):
    """Verifies ours once at the timed shape, then times ours and the anchors twice."""
    log(f"timing {case.label()} ...")
    kernel, types, shape, values = case.kernel, case.types, case.shape, case.values
    res = {"case": case.label(), "note": case.note, "anchors": {}, "ok": False, "why": ""}
    one = kernel.make_inputs(shape, types, "cuda", gen)
    set_bytes = sum(t.numel() * t.element_size() for t in one.values())
    n_sets = max(1, math.ceil(2 * L2_BYTES / max(set_bytes, 1)))
    sets = [one] + [kernel.make_inputs(shape, types, "cuda", gen) for _ in range(n_sets - 1)]
    outs = [{n: torch.full(kernel.shape_of(e, shape), float("nan"),
                           dtype=catalog.DTYPES[kernel.tensor_type(n, types)], device="cuda")
             for n, e in kernel.outputs} for _ in sets]
    args = [dict({n: t.data_ptr() for n, t in list(s.items()) + list(o.items())}, **values)
            for s, o in zip(sets, outs)]
    qst, sel = api.query(kernel.name, types, launch, **args[0])
    res["target"] = (sel.target or b"").decode()
    res["instance"] = (sel.instance or b"").decode()
    res["reason"] = sel.reason.decode(errors="replace")
    if qst != 0 or not is_gpu_target(res["target"]):
        res["why"] = f"query: status {qst}, target '{res['target']}': {res['reason']}"
        return res
    ours = [api.bind(kernel.name, types, launch, **a) for a in args]
    ours[0]()
    torch.cuda.synchronize()
    # verify the timed shape once (float64 reference on the GPU)
    x64 = {n: t.to(torch.float64) for n, t in one.items()}
    ref = kernel.reference(x64, shape, values)
    errs = []
    for n in ref:
        got = outs[0][n].to(torch.float64)
        if not bool(torch.isfinite(got).all()):
            res["why"] = f"{n}: non-finite elements at the timed shape"
            return res
        errs.append(kernel.scaled_err(got, ref[n], x64))
    res["err"] = max(errs)
    res["tol"] = kernel.tolerance(types, kernel.reduction_length(shape))
    if res["err"] > res["tol"]:
        res["why"] = f"error {res['err']:.3g} > tol {res['tol']:.3g} at the timed shape"
    anchors = {}  # name -> ([callable per input set] or None, how)
    for a in case.anchors:
        try:
            fns, how = [], ""
            for s, o in zip(sets, outs):
                fn, how = make_anchor(a, case, s, o)
                if fn is None:
                    fns = None
                    break
                fns.append(fn)
            a_err = None
            if fns:
                got = fns[0]()
                torch.cuda.synchronize()
                # the anchor's own error against the same float64 reference, same scale
                if torch.is_tensor(got) and len(ref) == 1:
                    (rn, rv), = ref.items()
                    if tuple(got.shape) == tuple(rv.shape):
                        a_err = kernel.scaled_err(got.to(torch.float64), rv, x64)
            anchors[a] = (fns, how)
            if a_err is not None:
                res["anchors"].setdefault(a, {"how": how, "ms": []})["err"] = a_err
        except Exception as e:
            anchors[a] = (None, f"{type(e).__name__}: {e}")
    del x64, ref
    # Two rounds in mirrored order (ours, anchors; then the anchors reversed, ours): whatever
    # drifts during a case (clocks, temperature after the previous case) weighs on both sides
    # alike. Seen before this order (2026-11-30, three runs): the first one-call-at-a-time run
    # of ours, which came right after the back-to-back phase, was 3-8% slower than its second.
    ours_ms = []
    for r in range(2):
        for a in mirrored(list(anchors), r):
            if a is None:
                ours_ms.append(time_batches(ours, host=res.setdefault("host_ms", [])))
                continue
            fn, how = anchors[a]
            entry = res["anchors"].setdefault(a, {"how": how, "ms": []})
            if fn is not None:
                try:
                    entry["ms"].append(time_batches(fn, host=entry.setdefault("host_ms", [])))
                except Exception as e:
                    entry["how"] = f"{type(e).__name__}: {e}"
    res["ms"] = ours_ms
    # The bars' anchors again the way ../shared/anchors measured them (time_isolated), ours
    # interleaved with them: both methods' ratios are reported, a bar passes on both.
    bar_anchors = [w.split(":", 1)[1] for w, _ in case.targets if w.startswith("anchor:")]
    if bar_anchors:
        res["iso_ms"] = []
        # A discarded round first: the first one-call-at-a-time timing after the back-to-back
        # phase (ours, in every run of 2026-11-30) ran 5-10% slower than the later ones
        # (bench/RESULTS.md): the GPU settling after a second of full load.
        for a in [None] + bar_anchors:
            fn = ours if a is None else anchors.get(a, (None, ""))[0]
            if fn is not None:
                time_isolated(fn, target_ms=50.0)
        for r in range(2): # mirrored, as above
            for a in mirrored(bar_anchors, r):
                if a is None:
                    res["iso_ms"].append(time_isolated(ours))
                    continue
                fn = anchors.get(a, (None, ""))[0]
                if fn is not None:
                    res["anchors"][a].setdefault("iso_ms", []).append(time_isolated(fn))
    # The kernels alone (kernel_spans_isolated): what the events' figures include besides
    # them is each launch's gap after the flush, which differs between callers. For the bars,
    # and where a back-to-back figure was bound by the host's issue rate (host_bound: the
    # kernels' ratio is then the comparable one).
    spanned = bar_anchors or ([a for a in anchors] if host_bound(res) or any(
        host_bound(e) for e in res["anchors"].values()) else [])
    if spanned:
        try:
            timed = [a for a in spanned if anchors.get(a, (None, ""))[0] is not None]
            spans = kernel_spans_isolated([ours] + [anchors[a][0] for a in timed])
            res["kernel_ms"] = spans[0]
            for a, sp in zip(timed, spans[1:]):
                res["anchors"][a]["kernel_ms"] = sp
        except Exception as e:  # a diagnostic: the ratios do not depend on it
            log(f"kernel spans of {case.label()}: {type(e).__name__}: {e}")
    res["ok"] = not res["why"]
    log(f"timed {case.label()}: ours {ours_ms} ms; " +
        ", ".join(f"{a} {e['ms']}" for a, e in res["anchors"].items()))
    del sets, outs, one
    torch.cuda.empty_cache()
    return res


def host_bound(e):
    """Whether a back-to-back figure (a case result or an anchor entry of run_case) was bound by
    the host's issue rate: its host time per call at least 0.8 of its GPU time per call."""
    if not e.get("host_ms") or not e.get("ms"):
        return False
    return statistics.median(e["host_ms"]) >= 0.8 * statistics.median(e["ms"])


def mirrored(anchors, r):
    """Round r's order of a case's timings: None (ours) then the anchors in round 0, the
    anchors reversed then None in round 1."""
    return [None] + anchors if r == 0 else anchors[::-1] + [None]


def median_ms(ms):
    return statistics.median(ms) if ms else float("nan")


def profile(api, launch, only=(), log=print):
    """One call of ours per timed case inside an NVTX range 'tgb' (ncu --nvtx-include tgb/),
    after a warm-up call outside it, so ncu profiles our kernels and nothing else."""
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)
    for case in default_cases():
        if only and case.kernel.name not in only:
            continue
        k = case.kernel
        x = k.make_inputs(case.shape, case.types, "cuda", gen)
        o = {n: torch.empty(k.shape_of(e, case.shape),
                            dtype=catalog.DTYPES[k.tensor_type(n, case.types)],
                            device="cuda") for n, e in k.outputs}
        args = dict({n: t.data_ptr() for n, t in list(x.items()) + list(o.items())},
                    **case.values)
        qst, sel = api.query(k.name, case.types, launch, **args)
        if qst != 0 or not is_gpu_target((sel.target or b"").decode()):
            log(f"profile: {case.label()}: no GPU variant ({sel.reason.decode()})")
            continue
        call = api.bind(k.name, case.types, launch, **args)
        call()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("tgb")  # one name: "/" nests in ncu filters
        call()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()
        log(f"profile: ran {case.label()} ({sel.variant.decode()})")
        del x, o
        torch.cuda.empty_cache()
