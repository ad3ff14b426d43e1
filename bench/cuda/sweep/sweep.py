#!/usr/bin/env python3
"""Schedule sweep for the sm_90 target: generates each kernel with one pinned schedule per
candidate (schedule.targets.sm_90), compiles every variant with nvcc here, and writes one
CUDA program that times them all on the device next to cuBLAS (GEMM) and a device-to-device
copy (softmax, rmsnorm) and checks every variant's output against the first one of its kernel
(GEMM: against cuBLAS). Usage (here):  python3 bench/cuda/sweep/sweep.py BUILD_DIR
then on the device:  BUILD_DIR/sweep   (prints a markdown table).
SWEEP_ONLY=gemm,gemm_bias_gelu limits the sweep to those kernels; SWEEP_TARGET=kernel:target
sweeps a kernel on another target (flash_attention_fwd:sm_90a) and SWEEP_CONFIGS=
"kernel:BM=128/BN=64/stages=3/threads=256;..." replaces its list of schedules. TILEGEN picks the
generator binary (two builds compare two generators in two sweep binaries); SWEEP_SPEC_DIR reads
the specs from another folder (a spec experiment against kernels/).
The binary reads SWEEP_ROUNDS=n (time every case n times, round-robin: interleaved A/B),
SWEEP_ATTN=B,H,S (another attention shape: ragged S, more or fewer tiles), SWEEP_FLUSH=1 (one
call at a time, each after a 256 MB memset: bench.py's second figure), SWEEP_CHECK_ONLY=1
(one call per case and the check, no timing: for compute-sanitizer and ncu) and SWEEP_ENERGY=1
(the board's energy per call from NVML's counter around 200 calls, loaded with dlopen)."""
import os, re, subprocess, sys

root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build-sweep"))
tilegen = os.environ.get("TILEGEN", os.path.join(root, "build-lead/generator/tools/tilegen"))
nvcc = os.environ.get("NVCC", "nvcc")
spec_dir = os.environ.get("SWEEP_SPEC_DIR", os.path.join(root, "kernels"))
arch = "-gencode=arch=compute_90,code=sm_90"
arch_a = "-gencode=arch=compute_90a,code=sm_90a"

SWEEP = {
    "gemm": ("bf16", [
        dict(BM=128, BN=128, BK=64, stages=3, threads=128),
        dict(BM=128, BN=128, BK=32, stages=4, threads=128),
        dict(BM=128, BN=128, BK=32, stages=4, threads=256),
        dict(BM=128, BN=256, BK=32, stages=3, threads=256),
        dict(BM=256, BN=128, BK=32, stages=3, threads=256),
        dict(BM=128, BN=128, BK=64, stages=3, threads=256),
    ]),
    # the erf epilogue next to 64x64 warp tiles of f32 accumulators (4 warps) spilled; 8 warps
    # measured 0.30x torch (bench/RESULTS.md)
    "gemm_bias_gelu": ("bf16", [
        dict(BM=128, BN=128, BK=32, stages=4, threads=256),
        dict(BM=128, BN=128, BK=32, stages=4, threads=128),
        dict(BM=128, BN=64, BK=32, stages=4, threads=128),
        dict(BM=64, BN=128, BK=32, stages=4, threads=128),
        dict(BM=128, BN=256, BK=32, stages=3, threads=256),
        dict(BM=256, BN=128, BK=32, stages=3, threads=256),
        dict(BM=128, BN=128, BK=64, stages=3, threads=256),
    ]),
    # sm_90a (TARGET below): FP8 wgmma tiles; ratios come from bench.py (torch._scaled_mm)
    "gemm_fp8": ("e4m3", [
        dict(BM=128, BN=128, BK=128, stages=3, threads=256),
        dict(BM=128, BN=128, BK=128, stages=4, threads=256),
        dict(BM=128, BN=256, BK=128, stages=3, threads=256),
        dict(BM=128, BN=256, BK=128, stages=4, threads=256),
        dict(BM=128, BN=256, BK=64, stages=6, threads=256),
        dict(BM=64, BN=256, BK=128, stages=4, threads=128),
    ]),
    "flash_attention_fwd": ("bf16_causal0_D128", [
        dict(BM=128, BN=32, stages=2, threads=128),  # shipped for sm_90 (32 rows per warp)
        dict(BM=128, BN=64, stages=2, threads=128),
        dict(BM=64, BN=32, stages=2, threads=128),
        dict(BM=64, BN=32, stages=1, threads=128),
        dict(BM=64, BN=64, stages=2, threads=128),
        dict(BM=128, BN=64, stages=2, threads=256),
        dict(BM=128, BN=32, stages=2, threads=256),
        dict(BM=128, BN=128, stages=2, threads=256),
        dict(BM=64, BN=64, stages=1, threads=128),
        dict(BM=128, BN=64, stages=1, threads=256),
        # 32 query rows per warp (K/V fragments feed two m16 tiles: half the ldmatrix per mma)
        # (BM 128 BN 64 at 128 threads: ~296 registers estimated, rejected before nvcc)
        dict(BM=128, BN=32, stages=2, threads=128),
        dict(BM=128, BN=32, stages=1, threads=128),
    ]),
    # single-trip rows (BN 8192 holds a row of N <= 8192; X is read once): threads per row
    "softmax": ("bf16", [
        dict(BM=1, BN=8192, threads=256),
        dict(BM=1, BN=8192, threads=128),
        dict(BM=1, BN=8192, threads=512),
        dict(BM=1, BN=8192, threads=1024),
        dict(BM=1, BN=2048, threads=256),
    ]),
    "rmsnorm": ("bf16", [
        dict(BM=1, BN=8192, threads=256),
        dict(BM=1, BN=8192, threads=128),
        dict(BM=1, BN=8192, threads=512),
        dict(BM=1, BN=2048, threads=256),
    ]),
}

TARGET = {"gemm_fp8": "sm_90a"}  # the rest: sm_90
# SWEEP_TARGET=kernel:target,... overrides (e.g. flash_attention_fwd:sm_90a with SWEEP_CONFIGS)
for kv in filter(None, os.environ.get("SWEEP_TARGET", "").split(",")):
    k, t = kv.split(":")
    TARGET[k] = t
# SWEEP_CONFIGS=kernel:BM=128/BN=128/stages=2/threads=256;... replaces a kernel's list
# SWEEP_INST=kernel:instance picks another instance (flash_attention_fwd:bf16_causal0_D64 times
# the D64 bar's shape, B8 H16 S2048)
for kv in filter(None, os.environ.get("SWEEP_INST", "").split(",")):
    k, i = kv.split(":")
    SWEEP[k] = (i, SWEEP[k][1])
for entry in filter(None, os.environ.get("SWEEP_CONFIGS", "").split(";")):
    k, cfg = entry.split(":")
    inst, cfgs = SWEEP[k]
    if not any(c.get("_env") for c in cfgs):
        cfgs = []
    cfgs.append(dict([kv.split("=") for kv in cfg.split("/")] + [("_env", 1)]))
    SWEEP[k] = (inst, cfgs)


def pinned_spec(kernel, cfg):
    text = open(os.path.join(spec_dir, kernel + ".yaml")).read()
    target = TARGET.get(kernel, "sm_90")
    text = re.sub(r"\n    " + target + r": \{[^\n]*", "", text)  # the spec's own entry
    cfg = {k: v for k, v in cfg.items() if k != "_env"}
    if re.search(r"\n  WR: ", text) and "WR" not in cfg:  # attention: rows per warp follow BM, threads
        cfg["WR"] = 32 * int(cfg["BM"]) // int(cfg["threads"])
    entry = f"    {target}: {{" + ", ".join(f"{k}: [{v}]" for k, v in cfg.items()) + "}\n"
    text = re.sub(r"(\n  targets:\n)", lambda m: m.group(1) + entry, text, count=1)
    text = text.replace("  stages: [1, 2]\n", "  stages: [1, 2, 3, 4]\n")  # attention's deeper pipelines
    text = text.replace("  BN: [32, 64, 128]\n", "  BN: [32, 64, 128, 256]\n")
    m = re.search(r"_D(\d+)$", SWEEP[kernel][0])
    if m:  # the instance's head dim only: the other may not fit the pinned schedule
        text = text.replace("D: {values: [64, 128]}", "D: {values: [" + m.group(1) + "]}")
    return text.replace("  T: [f32, f16, bf16]", "  T: [bf16]")  # the sweep times bf16 only

def main():
    os.makedirs(build, exist_ok=True)
    cases, objs = [], []
    only = [k for k in os.environ.get("SWEEP_ONLY", "").split(",") if k]
    for ki, (kernel, (inst, cfgs)) in enumerate(SWEEP.items()):
        if only and kernel not in only:
            continue
        for i, cfg in enumerate(cfgs):
            lib = f"sw{ki}_{i}"  # one library per kernel x schedule
            d = os.path.join(build, lib)
            os.makedirs(d, exist_ok=True)
            spec = os.path.join(d, kernel + ".yaml")
            open(spec, "w").write(pinned_spec(kernel, cfg))
            target = TARGET.get(kernel, "sm_90")
            subprocess.run([tilegen, "generate", "--lib", lib, "--targets", target, "--out", d, spec], check=True)
            cu = os.path.join(d, f"{lib}__{kernel}__{inst}__{target}.cu")
            obj = cu + ".o"
            objs.append((cu, obj))
            cases.append((kernel, " ".join(f"{k}={v}" for k, v in cfg.items() if k != "_env") + " " + target + " " + inst, f"tgv_{lib}__{kernel}__{inst}__{target}"))
    procs = []
    for cu, obj in objs:
        if not os.path.exists(obj) or os.path.getmtime(obj) < os.path.getmtime(cu):
            a = arch_a if "__sm_90a." in cu else arch
            procs.append(subprocess.Popen([nvcc, "-std=c++17", "-O3", a, "-Xptxas", "-warn-spills", "-I", os.path.join(root, "runtime/include"), "-c", cu, "-o", obj]))
        if len(procs) >= 2:
            assert procs.pop(0).wait() == 0
    for p in procs:
        assert p.wait() == 0
    with open(os.path.join(build, "cases.inc"), "w") as f:
        for k, c, fn in cases:
            f.write(f'extern "C" int {fn}(const tg_launch*, const tg_variant_args*);\n')
        f.write("static const Case kCases[] = {\n")
        for k, c, fn in cases:
            f.write(f'  {{"{k}", "{c}", {fn}}},\n')
        f.write("};\n")
    # the sm_90a variants encode tensor maps through the runtime's driver-entry lookup
    rt = os.path.join(build, "rt_cuda.o")
    subprocess.run(["gcc", "-std=c11", "-O2", "-c", "-I", os.path.join(root, "runtime/include"),
                    "-I", os.path.join(os.path.dirname(subprocess.check_output(["which", nvcc], text=True).strip()), "..", "include"),
                    os.path.join(root, "runtime/src/cuda.c"), "-o", rt], check=True)
    subprocess.run([nvcc, "-std=c++17", "-O2", arch, arch_a, "-I", build, "-I", os.path.join(root, "runtime/include"),
                    os.path.join(os.path.dirname(__file__), "sweep_main.cu")] + [o for _, o in objs] +
                   [rt, "-lcublas", "-ldl", "-o", os.path.join(build, "sweep")], check=True)
    print("built", os.path.join(build, "sweep"), len(cases), "cases")

main()
