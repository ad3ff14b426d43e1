"""decode_attention on the GPU (kernels/decode_attention.yaml, issue #34): verification against a
float64 reference at ragged shapes (split-KV included), then timings against a device-to-device
copy and torch SDPA with enable_gqa, in one run.

    python3 bench/cuda/decode.py --dist build-bench-cuda/dist [--quick] [--out DIR]

Verification: every type x page size, G = 8 (GQA), MQA (Hkv = 1, G = 8), G = 1 and G = 20 (two
tiles of query heads), sequence lengths 0, 1, 15, 17, 1000 in one call (few tiles: the launch
splits the KV loop, docs/cuda-backend.md "Split loops"), B = 1 at 131072 tokens (64 parts) and a
launch of many tiles (whole), pages dealt out of order from one pool; unused table columns hold
ids out of range and unwritten outputs keep a NaN fill. Each case runs twice: as shipped and with
the split workspace refused (TILEGEN_GPU_SPLIT=0 in a child process), so the split and the whole
loop are both checked (which launches split follows tg_split_parts' rule: the line's tile count
against the device's SMs times the variant's resident blocks).

Timing (bf16, page 16, D 128, Hkv 8, G 8): B 32 at context 8192 and B 1 at context 131072. KV
bytes read per second (2 * B * ctx * Hkv * D * 2 bytes per call) against the measured
device-to-device copy bandwidth (bytes read plus written) and against torch SDPA with
enable_gqa=True on the same, unpaged, K and V ([B, Hkv, ctx, D]). Issue #34's bars: >= 80% of the
copy bandwidth and >= 1.5x SDPA. Exit status 0 only if every verification case passed.
"""
import argparse
import json
import math
import os
import subprocess
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perf import copy_bandwidth, graph_check, time_batches  # noqa: E402
from tgapi import TG_OK, Library, describe, make_launch, rerun_note, reruns_differ  # noqa: E402

RERUNS = 10  # launches of each verification case after the first, compared bit for bit

DT = {"bf16": torch.bfloat16, "f16": torch.float16}
D = 128


def make_case(B, Hkv, G, page, lens, dtype, gen, device="cuda"):
    """Inputs of one call: a shuffled page pool, the block table, q; V and K in [-1, 1)."""
    assert len(lens) == B, f"{len(lens)} lengths for B = {B}"
    pages = [max(0, math.ceil(n / page)) for n in lens]
    MP = max(1, max(pages))
    NP = sum(pages) + 3
    perm = torch.randperm(NP, generator=gen, device="cpu").to(torch.int32)
    table = torch.full((B, MP), 1 << 30, dtype=torch.int32)
    at = 0
    for b, p in enumerate(pages):
        table[b, :p] = perm[at:at + p]
        at += p

    def rnd(*shape, scale=1.0):
        return ((torch.rand(*shape, generator=gen, device="cpu") * 2 - 1) * scale).to(dtype)
    x = {
        "q": rnd(B, Hkv, G, D),
        "K_cache": rnd(NP, Hkv, page, D, scale=0.5),
        "V_cache": rnd(NP, Hkv, page, D),
        "block_table": table,
        "seq_lens": torch.tensor(lens, dtype=torch.int32),
    }
    x = {n: t.to(device) for n, t in x.items()}
    x["o"] = torch.full((B, Hkv, G, D), float("nan"), dtype=dtype, device=device)
    dims = dict(B=B, Hkv=Hkv, G=G, NP=NP, MP=MP, PAGE=page, D=D)
    return x, dims


def reference(x, dims, scale):
    """float64 on the GPU: gathers each sequence's tokens through the table."""
    B, Hkv, G, page = dims["B"], dims["Hkv"], dims["G"], dims["PAGE"]
    q = x["q"].double()
    out = torch.zeros_like(q)
    for b in range(B):
        n = int(x["seq_lens"][b])
        if n == 0:
            continue
        npg = math.ceil(n / page)
        ids = x["block_table"][b, :npg].long()
        k = x["K_cache"][ids].double().permute(1, 0, 2, 3).reshape(Hkv, npg * page, D)[:, :n]
        v = x["V_cache"][ids].double().permute(1, 0, 2, 3).reshape(Hkv, npg * page, D)[:, :n]
        s = torch.einsum("hgd,hnd->hgn", q[b], k) * scale
        out[b] = torch.einsum("hgn,hnd->hgd", torch.softmax(s, dim=-1), v)
    return out


def cases(quick):
    out = []
    for types in ("bf16", "f16"):
        for page in (16, 64):
            out.append((types, 5, 2, 8, page, [0, 1, 15, 17, 1000]))       # GQA, few tiles: split
            out.append((types, 4, 1, 8, page, [1000, 17, 0, 1]))           # MQA
            out.append((types, 3, 4, 1, page, [999, 64, 16]))              # G = 1
            out.append((types, 2, 2, 20, page, [300, 5]))                  # G = 20: two row tiles
            if not quick or page == 16:
                out.append((types, 1, 8, 8, page, [131072]))               # B 1, long: 64 parts
            out.append((types, 64, 8, 8, page, [(37 * i) % 2000 for i in range(64)]))  # many tiles
    return out


def verify(lib, quick, log):
    ok_all = True
    gen = torch.Generator()
    gen.manual_seed(20261205)
    launch = make_launch(0)
    for types, B, Hkv, G, page, lens in cases(quick):
        x, dims = make_case(B, Hkv, G, page, lens, DT[types], gen)
        scale = 1.0 / math.sqrt(D)
        args = {n: t.data_ptr() for n, t in x.items()}
        args.update(dims)
        args["sm_scale"] = scale
        qst, sel = lib.query("decode_attention", types, launch, **args)
        target, inst, reason = describe(sel)
        label = f"decode_attention {types} B{B} Hkv{Hkv} G{G} page{page} lens {lens[:6]}"
        if qst != TG_OK or not target.startswith("sm_"):
            log(f"FAIL {label}: query status {qst}, target {target}: {reason}")
            ok_all = False
            continue
        st = lib.call("decode_attention", types, launch, **args)
        torch.cuda.synchronize()
        if st != TG_OK:
            log(f"FAIL {label} [{target}]: status {lib.status_string(st)}")
            ok_all = False
            continue
        got = x["o"].double()
        # the same launch again: split-KV parts merge in a fixed order (bitwise reproducible)
        differ = reruns_differ(lambda: lib.call("decode_attention", types, launch, **args), x["o"], RERUNS)
        want = reference(x, dims, scale)
        nan = int(torch.isnan(got).sum())
        err = ((got - want).abs().max().item()) if got.numel() else 0.0
        tol = 2e-2 if types == "bf16" else 4e-3
        ok = nan == 0 and err <= tol and differ == 0
        ok_all = ok_all and ok
        tiles = B * Hkv * math.ceil(G / 16)
        log(f"{'ok  ' if ok else 'FAIL'} {label} [{target} {inst}, {tiles} tiles]: max abs err "
            f"{err:.3g} (tol {tol:g}){f', {nan} NaN' if nan else ''}, {rerun_note(differ, RERUNS)}")
    return ok_all


MLA_DL, MLA_DR, MLA_PAGE = 512, 64, 64


def make_mla_case(B, H, lens, dtype, gen, device="cuda"):
    """Inputs of one mla_decode call: a shuffled page pool, the block table, q and the cache in [-1, 1)."""
    assert len(lens) == B, f"{len(lens)} lengths for B = {B}"
    page, D = MLA_PAGE, MLA_DL + MLA_DR
    pages = [max(0, math.ceil(n / page)) for n in lens]
    MP = max(1, max(pages))
    NP = sum(pages) + 3
    perm = torch.randperm(NP, generator=gen, device="cpu").to(torch.int32)
    table = torch.full((B, MP), 1 << 30, dtype=torch.int32)
    at = 0
    for b, p in enumerate(pages):
        table[b, :p] = perm[at:at + p]
        at += p

    def rnd(*shape):
        return (torch.rand(*shape, generator=gen, device="cpu") * 2 - 1).to(dtype)
    x = {"q": rnd(B, H, D), "KV_cache": rnd(NP, page, D), "block_table": table,
         "seq_lens": torch.tensor(lens, dtype=torch.int32)}
    x = {n: t.to(device) for n, t in x.items()}
    x["o"] = torch.full((B, H, MLA_DL), float("nan"), dtype=dtype, device=device)
    dims = dict(B=B, H=H, NP=NP, MP=MP, PAGE=page, DL=MLA_DL, DR=MLA_DR)
    return x, dims


def mla_reference(x, dims, scale):
    """float64 on the GPU: keys are whole cache rows, values their first DL dims."""
    B, H, page = dims["B"], dims["H"], dims["PAGE"]
    q = x["q"].double()
    out = torch.zeros(B, H, MLA_DL, dtype=torch.float64, device=q.device)
    for b in range(B):
        n = int(x["seq_lens"][b])
        if n == 0:
            continue
        npg = math.ceil(n / page)
        ids = x["block_table"][b, :npg].long()
        kv = x["KV_cache"][ids].double().reshape(npg * page, -1)[:n]
        s = (q[b] @ kv.t()) * scale
        out[b] = torch.softmax(s, dim=-1) @ kv[:, :MLA_DL]
    return out


def mla_cases(quick):
    out = []
    for types in ("bf16", "f16"):
        out.append((types, 5, 128, [0, 1, 63, 65, 1000]))                  # few tiles: split
        out.append((types, 3, 20, [64, 129, 3]))                            # ragged head tile
        if not quick:
            out.append((types, 1, 128, [65536]))                            # B 1, long
        nb = 16 if quick else 64  # quick: the memcheck run
        out.append((types, nb, 128, [(37 * i) % 2000 for i in range(nb)]))  # many tiles
    return out


def verify_mla(lib, quick, log):
    ok_all = True
    gen = torch.Generator()
    gen.manual_seed(20261206)
    launch = make_launch(0)
    for types, B, H, lens in mla_cases(quick):
        x, dims = make_mla_case(B, H, lens, DT[types], gen)
        scale = 1.0 / math.sqrt(192.0)  # DeepSeek-V3: 1 / sqrt(qk_nope + qk_rope head dims)
        args = {n: t.data_ptr() for n, t in x.items()}
        args.update(dims)
        args["sm_scale"] = scale
        qst, sel = lib.query("mla_decode", types, launch, **args)
        target, inst, reason = describe(sel)
        label = f"mla_decode {types} B{B} H{H} lens {lens[:6]}"
        if qst != TG_OK or not target.startswith("sm_"):
            log(f"FAIL {label}: query status {qst}, target {target}: {reason}")
            ok_all = False
            continue
        st = lib.call("mla_decode", types, launch, **args)
        torch.cuda.synchronize()
        if st != TG_OK:
            log(f"FAIL {label} [{target}]: status {lib.status_string(st)}")
            ok_all = False
            continue
        got = x["o"].double()
        # the same launch again: split-KV parts merge in a fixed order (bitwise reproducible)
        differ = reruns_differ(lambda: lib.call("mla_decode", types, launch, **args), x["o"], RERUNS)
        want = mla_reference(x, dims, scale)
        nan = int(torch.isnan(got).sum())
        err = ((got - want).abs().max().item()) if got.numel() else 0.0
        tol = 2e-2 if types == "bf16" else 4e-3
        ok = nan == 0 and err <= tol and differ == 0
        ok_all = ok_all and ok
        log(f"{'ok  ' if ok else 'FAIL'} {label} [{target} {inst}]: max abs err "
            f"{err:.3g} (tol {tol:g}){f', {nan} NaN' if nan else ''}, {rerun_note(differ, RERUNS)}")
    return ok_all


def time_mla(lib, B, ctx, H=128, types="bf16"):
    """One mla_decode launch timed; verified against the float64 reference on its first 4 sequences."""
    gen = torch.Generator()
    gen.manual_seed(11)
    x, dims = make_mla_case(B, H, [ctx] * B, DT[types], gen)
    scale = 1.0 / math.sqrt(192.0)
    args = {n: t.data_ptr() for n, t in x.items()}
    args.update(dims)
    args["sm_scale"] = scale
    launch = make_launch(0, torch.cuda.current_stream().cuda_stream)
    _, sel = lib.query("mla_decode", types, launch, **args)
    ours = lib.bind("mla_decode", types, launch, **args)
    ms = time_batches([ours])
    torch.cuda.synchronize()
    sub = dict(x, q=x["q"][:4], block_table=x["block_table"][:4], seq_lens=x["seq_lens"][:4])
    err = (x["o"][:4].double() - mla_reference(sub, dict(dims, B=4), scale)).abs().max().item()
    tol = 2e-2 if types == "bf16" else 4e-3
    kv_bytes = B * ctx * (MLA_DL + MLA_DR) * x["KV_cache"].element_size()
    target, inst, _ = describe(sel)
    return {"case": f"mla B{B} H{H} ctx{ctx} page{MLA_PAGE} {types}", "variant": f"{target} {inst}",
            "ms": ms, "kv_gbps": kv_bytes / (ms * 1e-3) / 1e9, "err": err, "tol": tol,
            "verified": err <= tol}


def time_case(lib, B, ctx, Hkv=8, G=8, page=16, types="bf16", graph=False):
    gen = torch.Generator()
    gen.manual_seed(7)
    dtype = DT[types]
    x, dims = make_case(B, Hkv, G, page, [ctx] * B, dtype, gen)
    scale = 1.0 / math.sqrt(D)
    args = {n: t.data_ptr() for n, t in x.items()}
    args.update(dims)
    args["sm_scale"] = scale
    launch = make_launch(0, torch.cuda.current_stream().cuda_stream)
    _, sel = lib.query("decode_attention", types, launch, **args)
    ours = lib.bind("decode_attention", types, launch, **args)
    ms = time_batches([ours])
    kv_bytes = 2 * B * ctx * Hkv * D * x["K_cache"].element_size()
    # SDPA on unpaged K and V: the same tokens, contiguous per sequence and head
    k = torch.randn(B, Hkv, ctx, D, dtype=dtype, device="cuda")
    v = torch.randn(B, Hkv, ctx, D, dtype=dtype, device="cuda")
    q = x["q"].reshape(B, Hkv * G, 1, D)
    try:
        sdpa = time_batches([lambda: F.scaled_dot_product_attention(q, k, v, scale=scale, enable_gqa=True)])
        sdpa_note = ""
    except Exception as e:  # an older torch without enable_gqa
        sdpa, sdpa_note = float("nan"), f"SDPA failed: {e}"
    row = {"case": f"B{B} Hkv{Hkv} G{G} D{D} ctx{ctx} page{page} {types}",
           "variant": describe(sel)[1], "ms": ms, "kv_gbps": kv_bytes / (ms * 1e-3) / 1e9,
           "sdpa_ms": sdpa, "sdpa_note": sdpa_note}
    if graph:  # the same call captured into a CUDA graph: split there too, the same bytes
        row["graph_same"], row["graph_eager_ms"], row["graph_ms"] = graph_check(
            lambda st: lib.bind("decode_attention", types, make_launch(0, st), **args), x["o"])
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dist", default="build-bench-cuda/dist")
    ap.add_argument("--out", default=None)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--verify-only", action="store_true")
    ap.add_argument("--only", choices=("gqa", "mla"), default=None)
    ap.add_argument("--mla-time-json", action="store_true",
                    help="only time mla_decode at B 64, ctx 8192 and print one JSON line (child)")
    a = ap.parse_args()
    lib = Library(os.path.join(a.dist, "libtgb.so"), os.path.join(a.dist, "tgb.h"), "tgb")
    if a.mla_time_json:
        print("MLAJSON " + json.dumps(time_mla(lib, 64, 8192)))
        return 0
    gqa, mla = a.only != "mla", a.only != "gqa"
    for kernel, wanted in (("decode_attention", gqa), ("mla_decode", mla)):
        if wanted and not lib.has(kernel, "bf16"):
            print(f"decode.py: libtgb.so has no {kernel} (rebuild with bench/cuda/build.sh)")
            return 2
    ok = True
    if gqa:
        ok = verify(lib, a.quick, print) and ok
    if mla:
        ok = verify_mla(lib, a.quick, print) and ok
    if a.verify_only:
        return 0 if ok else 1
    # the same cases with the split refused (the whole loop on every tile), in a child process:
    # TILEGEN_GPU_SPLIT is read once per process
    env = dict(os.environ, TILEGEN_GPU_SPLIT="0")
    print("== with TILEGEN_GPU_SPLIT=0 (every tile whole)")
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--dist", a.dist, "--verify-only"]
                       + (["--quick"] if a.quick else []) + (["--only", a.only] if a.only else []),
                       env=env)
    ok = ok and r.returncode == 0
    copy, _ = copy_bandwidth()
    copy_gbps = max(copy)
    rows = [time_case(lib, 32, 8192), time_case(lib, 1, 131072, graph=True)] if gqa else []
    mla_rows = [time_mla(lib, 64, 8192)] if mla else []
    if mla:
        # the sm_90 variant (another tile: 16 heads per block) in a child process, where the
        # library was built with sm_90a (TILEGEN_GPU_DISABLE is read once per process)
        env = dict(os.environ, TILEGEN_GPU_DISABLE="sm_90a")
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--dist", a.dist,
                            "--mla-time-json"], env=env, capture_output=True, text=True)
        line = [x for x in r.stdout.splitlines() if x.startswith("MLAJSON ")]
        if r.returncode == 0 and line:
            row = json.loads(line[0][len("MLAJSON "):])
            row["case"] += " (TILEGEN_GPU_DISABLE=sm_90a)"
            if row["variant"] != mla_rows[0]["variant"]:
                mla_rows.append(row)
        else:
            print(f"mla_decode with TILEGEN_GPU_DISABLE=sm_90a failed: {r.stdout[-2000:]}{r.stderr[-2000:]}")
            ok = False
    ok = ok and all(r_["verified"] for r_ in mla_rows)
    print(f"\ndevice-to-device copy: {copy_gbps:.0f} GB/s (read + written)\n")
    if rows:
        print("| case | ours ms | KV GB/s | % of copy | SDPA (enable_gqa) ms | vs SDPA | variant |")
        print("|---|---|---|---|---|---|---|")
    for r_ in rows:
        print(f"| {r_['case']} | {r_['ms']:.4f} | {r_['kv_gbps']:.0f} | {100 * r_['kv_gbps'] / copy_gbps:.0f}% | "
              f"{r_['sdpa_ms']:.4f} | {r_['sdpa_ms'] / r_['ms']:.2f}x | {r_['variant']} {r_['sdpa_note']} |")
    for r_ in rows:
        if "graph_ms" in r_:
            print(f"\n{r_['case']} in a CUDA graph: replays {'bitwise equal to' if r_['graph_same'] else 'DIFFER from'}"
                  f" the eager launch; eager {r_['graph_eager_ms']:.4f} ms, graph replay {r_['graph_ms']:.4f} ms")
            ok = ok and r_["graph_same"]
    if rows:
        print("\nbars (issue #34): >= 80% of copy, >= 1.5x SDPA")
    if mla_rows:
        print("\n| case | ours ms | cache GB/s | % of copy | max abs err (tol) | variant |")
        print("|---|---|---|---|---|---|")
    for r_ in mla_rows:
        print(f"| {r_['case']} | {r_['ms']:.4f} | {r_['kv_gbps']:.0f} | {100 * r_['kv_gbps'] / copy_gbps:.0f}% | "
              f"{r_['err']:.3g} ({r_['tol']:g}){'' if r_['verified'] else ' FAIL'} | {r_['variant']} |")
    if mla_rows:
        print("\nbars (issue #34, mla): >= 80% of copy")
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "decode.json"), "w") as f:
            json.dump({"copy_gbps": copy_gbps, "rows": rows, "mla_rows": mla_rows, "verified": ok}, f, indent=1)
    print("verification:", "all passed" if ok else "FAILURES above")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
