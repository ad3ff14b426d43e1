#!/usr/bin/env python3
"""Verifies and times a tilegen dispatch library on a GPU (issue #3, points 9 and 10).

  python3 bench/cuda/bench.py --dist build-bench-cuda/dist --out $OUT [--quick] [--no-perf]

1. Verification: every kernel x type in the library's header, at ragged and empty shapes,
   aligned and misaligned pointers, against float64 references (verify.py).
2. Device-to-device copy bandwidth (the softmax/rmsnorm bar is 85% of it).
3. Timings of ours vs cuBLAS / PyTorch / SDPA (flash, cuDNN) in the same run (perf.py).
4. The bars of point 10 as a table, with the host-cost figures of tgb_host_cost if its JSON
   is given (--host-cost).

Without a GPU (or with --device cpu) it runs step 1 on the CPU variants of the same library
(launch.device = -1), which checks the argument marshalling and the references, and says so.
Writes verify.md, perf.md, summary.md and results.json under --out; prints summary.md last.
Exit status: 0 if every verification passed, 1 if any failed, 2 if it could not run.
"""
import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import torch
except ImportError as e:  # the device image has torch; a bare machine may not
    print(f"bench.py: cannot import torch ({e}); nothing to do", file=sys.stderr)
    sys.exit(2)

import catalog  # noqa: E402
import tgapi  # noqa: E402
import verify  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dist", default=os.path.join(HERE, "..", "..", "build-bench-cuda", "dist"),
                   help="folder with lib<lib>.so and <lib>.h (bench/cuda/build.sh makes it)")
    p.add_argument("--lib", default="tgb", help="library name given to add_tile_kernels")
    p.add_argument("--out", default=os.environ.get("OUT", "bench-cuda-out"))
    p.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    p.add_argument("--quick", action="store_true", help="fewer verification shapes")
    p.add_argument("--no-perf", action="store_true", help="verification only")
    p.add_argument("--only", default="", help="comma-separated kernel names")
    p.add_argument("--host-cost", default="", help="JSON written by tgb_host_cost")
    p.add_argument("--seed", type=int, default=0,
                   help="input seed (default: from the clock, so every run draws fresh inputs; "
                        "it is logged, to reproduce a failure)")
    p.add_argument("--profile", action="store_true",
                   help="only run each timed case of ours once in an NVTX push/pop range 'tgb' "
                        "(under ncu --nvtx --nvtx-include 'tgb/')")
    return p.parse_args()


def environment(device):
    env = {"python": platform.python_version(), "torch": torch.__version__,
           "host": platform.node(), "time_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())}
    if device.type == "cuda":
        p = torch.cuda.get_device_properties(device)
        env.update(gpu=p.name, sms=p.multi_processor_count,
                   cc=f"{p.major}.{p.minor}", torch_cuda=torch.version.cuda,
                   cudnn=torch.backends.cudnn.version())
    return env


def fmt_ms(ms):
    return "/".join(f"{m:.4f}" for m in ms) if ms else "-"


def perf_section(api, launch, log, seed, only=()):
    import perf
    torch.backends.cuda.matmul.allow_tf32 = False  # our f32 gemm is true f32: compare alike
    torch.backends.cudnn.allow_tf32 = False
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed + 1)
    copy_gbps, copy_ms = perf.copy_bandwidth()
    copy = max(copy_gbps)
    log(f"copy bandwidth: {copy_gbps} GB/s (read + write bytes)")
    results = []
    for case in perf.default_cases():
        if only and case.kernel.name not in only:
            continue
        try:
            results.append(perf.run_case(api, case, launch, gen, log))
        except Exception as e:
            log(f"perf case {case.label()} raised:\n{traceback.format_exc()}")
            results.append({"case": case.label(), "why": f"{type(e).__name__}: {e}",
                            "ok": False, "anchors": {}, "ms": []})
            try:
                torch.cuda.synchronize()
            except Exception:
                log("CUDA context lost: stopping the timings")
                break
    return {"copy_GBps": copy_gbps, "copy_ms": copy_ms, "copy_best_GBps": copy,
            "cases": results}


def perf_markdown(perf_res):
    import perf
    cases = {c.label(): c for c in perf.default_cases()}
    copy = perf_res["copy_best_GBps"]
    lines = [f"Device-to-device copy: {' / '.join(f'{g:.0f}' for g in perf_res['copy_GBps'])} "
             f"GB/s (read + write bytes, two runs; the bars use the higher, {copy:.0f}).", "",
             "| case | variant | err/tol | ours ms (2 runs) | ours | anchor | anchor ms | "
             "anchor | anchor/ours | isolated (ours, anchor ms: ratio; kernels alone) | note |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in perf_res["cases"]:
        case = cases.get(r["case"])
        if not r.get("ms"):
            lines.append(f"| {r['case']} | {r.get('target', '')} | - | - | - | - | - | - | - | - | "
                         f"FAIL: {r['why']} |")
            continue
        ours = perf.median_ms(r["ms"])
        val, unit = perf.rate(case, ours)
        et = f"{r['err'] / r['tol']:.3f}" if r.get("tol") else "-"
        extra = f"{val / copy:.2f} of copy" if unit == "GB/s" else ""
        note = "; ".join(x for x in (("FAIL: " + r["why"]) if r["why"] else "", extra,
                                     host_bound("ours", r), case.note) if x)
        anchors = r["anchors"] or {"-": {"how": "", "ms": []}}
        for a, e in anchors.items():
            if e["ms"]:
                am = perf.median_ms(e["ms"])
                av, au = perf.rate(case, am)
                acol = f"{a} ({e['how']})" if e["how"] else a
                if e.get("err") is not None and r.get("tol"):
                    acol += f", err/tol {e['err'] / r['tol']:.3f}"
                iso = []
                if e.get("iso_ms") and r.get("iso_ms"):
                    oi, ai = perf.median_ms(r["iso_ms"]), perf.median_ms(e["iso_ms"])
                    iso.append(f"{fmt_ms(r['iso_ms'])}, {fmt_ms(e['iso_ms'])}: **{ai / oi:.2f}x**")
                if r.get("kernel_ms") and e.get("kernel_ms"):  # the kernels alone (perf.kernel_spans_isolated)
                    iso.append(f"kernels {r['kernel_ms']:.4f}, {e['kernel_ms']:.4f}: {e['kernel_ms'] / r['kernel_ms']:.3f}x")
                iso = "; ".join(iso) or "-"
                anote = "; ".join(x for x in (note, host_bound(a, e)) if x)
                lines.append(f"| {r['case']} | {r['target']} {r['instance']} | {et} | "
                             f"{fmt_ms(r['ms'])} | {val:.1f} {unit} | {acol} | {fmt_ms(e['ms'])} | "
                             f"{av:.1f} {au} | **{am / ours:.2f}x** | {iso} | {anote} |")
            else:
                lines.append(f"| {r['case']} | {r['target']} {r['instance']} | {et} | "
                             f"{fmt_ms(r['ms'])} | {val:.1f} {unit} | {a} | - | - | - | - | "
                             f"{'; '.join(x for x in (note, 'anchor n/a: ' + e['how']) if x)} |")
    return "\n".join(lines)


def host_bound(who, e):
    """A note where the back-to-back figure of `who` (a case result or an anchor entry) was
    bound by the host's issue rate (perf.host_bound), with its host and GPU times per call."""
    import perf
    if not perf.host_bound(e):
        return ""
    h, g = statistics.median(e["host_ms"]), statistics.median(e["ms"])
    return f"{who}: host-bound ({h * 1e3:.1f} us/call to issue, {g * 1e3:.1f} us/call on the GPU)"


def targets_markdown(perf_res, host_cost):
    """The bars of issue #3 point 10: measured ratio, bar, PASS/MISS."""
    import perf
    cases = {c.label(): c for c in perf.default_cases()}
    rows = ["| target | measured | bar | result |", "|---|---|---|---|"]
    for r in (perf_res or {}).get("cases", []):
        case = cases.get(r["case"])
        if case is None or not case.targets:
            continue
        for what, bar in case.targets:
            if not r.get("ms"):
                rows.append(f"| {r['case']} vs {what} | not measured: {r.get('why', '')} | "
                            f"{bar} | MISS |")
                continue
            ours = perf.median_ms(r["ms"])
            if what == "copy":
                val, _ = perf.rate(case, ours)
                got = val / perf_res["copy_best_GBps"]
                desc = f"{got:.2f} of copy ({val:.0f} GB/s)"
            else:
                a = what.split(":", 1)[1]
                ams = r["anchors"].get(a, {}).get("ms", [])
                if not ams:
                    rows.append(f"| {r['case']} vs {a} | anchor not measured | >= {bar}x | "
                                f"MISS |")
                    continue
                got = perf.median_ms(ams) / ours
                desc = f"{got:.2f}x {a}"
                iso = r["anchors"].get(a, {}).get("iso_ms", [])
                if iso and r.get("iso_ms"):
                    # isolated calls (the anchors' own method): the bar must hold this way too
                    got_iso = perf.median_ms(iso) / perf.median_ms(r["iso_ms"])
                    desc += f"; isolated {got_iso:.2f}x"
                    got = min(got, got_iso)
            ok = got >= bar and r.get("ok")
            rows.append(f"| {r['case']} vs {what} | {desc} | >= {bar} | "
                        f"{'PASS' if ok else 'MISS'}{'' if r.get('ok') else ' (not verified)'} |")
    if host_cost:
        for c in host_cost.get("cases", []):
            if c.get("ratio") is None:
                rows.append(f"| host cost {c.get('name')} | not measured: {c.get('why', '')} | "
                            f"<= 1.2x raw | MISS |")
                continue
            rows.append(f"| host cost {c['name']} ({c.get('variant', '')}) | "
                        f"{c['dispatch_us']:.2f} us vs raw {c['raw_us']:.2f} us = "
                        f"{c['ratio']:.2f}x | <= 1.2x | "
                        f"{'PASS' if c['ratio'] <= 1.2 and c.get('same_output') else 'MISS'} |")
    else:
        rows.append("| host cost | no --host-cost JSON given | <= 1.2x raw | - |")
    return "\n".join(rows)


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    log_path = os.path.join(args.out, "bench.log")
    logf = open(log_path, "a")

    def log(msg):
        print(msg, flush=True)
        trace(msg)

    def trace(msg):
        logf.write(msg + "\n")
        logf.flush()

    cuda_ok = torch.cuda.is_available()
    if args.device == "cuda" and not cuda_ok:
        log("bench.py: --device cuda but torch sees no CUDA device "
            f"(torch {torch.__version__}, cuda {torch.version.cuda}); stopping")
        return 2
    use_gpu = cuda_ok and args.device != "cpu"
    device = torch.device("cuda:0" if use_gpu else "cpu")
    if not use_gpu:
        log("NO GPU: running the CPU self-test only (CPU variants, launch.device = -1): "
            "verification of marshalling and references; no timings.")
    so = os.path.join(args.dist, f"lib{args.lib}.so")
    header = os.path.join(args.dist, f"{args.lib}.h")
    try:
        api = tgapi.Library(so, header, args.lib)
    except Exception as e:
        log(f"bench.py: cannot load the library ({so}, {header}): {e}")
        return 2
    env = environment(device)
    env["library"] = os.path.abspath(so)
    log("environment: " + json.dumps(env))

    stream = None
    if use_gpu:
        stream = torch.cuda.Stream()  # a real stream: the launch handle must carry it
        torch.cuda.set_stream(stream)
        launch = tgapi.make_launch(0, stream.cuda_stream)
    else:
        launch = tgapi.make_launch(-1)
    only = {k for k in args.only.split(",") if k}
    if args.profile:
        if not use_gpu:
            log("bench.py: --profile needs a GPU")
            return 2
        import perf
        perf.profile(api, launch, only, log)
        return 0

    t0 = time.time()
    seed = args.seed or int(time.time())
    env["seed"] = seed
    log(f"seed: {seed}")
    rows = verify.verify_all(api, device, launch, args.quick or not use_gpu, only, log, seed,
                             trace)
    summary = verify.summarize(rows)
    n_fail = sum(s["failed"] for s in summary)
    log(f"verification: {len(rows)} cases, {n_fail} failed, {time.time() - t0:.1f} s")
    with open(os.path.join(args.out, "verify.md"), "w") as f:
        f.write(verify.markdown_rows(rows) + "\n")
    head = [f"# tilegen CUDA bench ({env.get('gpu', 'CPU self-test')}, {env['time_utc']} UTC)",
            "", "## Verification (every kernel x type; full rows in verify.md)", "",
            verify.markdown_summary(summary), ""]
    with open(os.path.join(args.out, "summary.md"), "w") as f:  # rewritten at the end
        f.write("\n".join(head + ["(timings not finished)", ""]))

    perf_res, perf_md = None, ""
    if use_gpu and not args.no_perf:
        t0 = time.time()
        try:
            perf_res = perf_section(api, launch, log, seed, only)
            perf_md = perf_markdown(perf_res)
        except Exception:  # the raw numbers still go to results.json
            log(f"perf section failed:\n{traceback.format_exc()}")
        log(f"timings: {time.time() - t0:.1f} s")
        with open(os.path.join(args.out, "perf.md"), "w") as f:
            f.write(perf_md + "\n")
    host_cost = None
    if args.host_cost:
        try:
            with open(args.host_cost) as f:
                host_cost = json.load(f)
        except Exception as e:
            log(f"cannot read host-cost JSON {args.host_cost}: {e}")

    out = list(head)
    if perf_md:
        out += ["## Timings (median per call; ratio > 1 means ours is faster)", "", perf_md, ""]
    if use_gpu:
        try:
            targets = targets_markdown(perf_res, host_cost)
        except Exception:
            targets = "(table failed: see bench.log)"
            log(f"targets table failed:\n{traceback.format_exc()}")
        import perf as perf_mod  # imported lazily: it needs a GPU build of torch
        which = ("issue #4, point 8: the Hopper (sm_90a) path" if perf_mod.hopper_pass()
                 else "issue #3, point 10: the sm_80-style path (TILEGEN_GPU_DISABLE=sm_90a)")
        out += [f"## Targets ({which})", "", targets, ""]
    text = "\n".join(out)
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"env": env, "verify": rows, "verify_summary": summary, "perf": perf_res,
                   "host_cost": host_cost}, f, indent=1, default=str)
    print(text)
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main())
