#!/usr/bin/env python3
"""Self-test of the bench harness without a GPU, against the C variants of a library built by
`TGB_TARGETS=c bash bench/cuda/build.sh` (or any build: it forces launch.device = -1).

1. Every kernel x type verifies (quick shapes, aligned and misaligned pointers).
2. The checks can fail: calls with a wrong argument must be caught, each by the check meant
   for it: a dim one too large (writes past the output: guard bytes), one too small (rows
   never written: NaN poison), swapped dims in the marshalling (wrong result: error > tol),
   and a perturbed reference (tolerance).
Prints 'N passed, M failed'; exit 1 on any failure.

  python3 bench/cuda/selftest_cpu.py [--dist build-bench-cuda/dist]
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import catalog  # noqa: E402
import tgapi  # noqa: E402
import verify  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dist", default=os.path.join(HERE, "..", "..", "build-bench-cuda", "dist"))
    args = p.parse_args()
    api = tgapi.Library(os.path.join(args.dist, "libtgb.so"),
                        os.path.join(args.dist, "tgb.h"), "tgb")
    launch = tgapi.make_launch(-1)
    cpu = torch.device("cpu")
    passed = failed = 0

    def check(name, ok, detail=""):
        nonlocal passed, failed
        print(f"{'ok  ' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}")
        passed += ok
        failed += not ok

    # 1. everything verifies
    rows = verify.verify_all(api, cpu, launch, quick=True)
    bad = [r for r in rows if not r["ok"]]
    check(f"verify_all: {len(rows)} cases", not bad and len(rows) > 100,
          bad[0]["why"] if bad else "")
    kinds = {(r["kernel"], r["types"]) for r in rows}
    check("every kernel x type of the header was run", len(kinds) == 15, str(sorted(kinds)))

    gen = torch.Generator()
    gen.manual_seed(5)
    soft, gemm = catalog.KERNELS["softmax"], catalog.KERNELS["gemm"]

    def run_mutated(kernel, types, shape, mutate_call=None, mutate_ref=None):
        real_call, real_ref = api.call, kernel.reference
        if mutate_call:
            api.call = lambda k, t, l, **v: real_call(k, t, l, **mutate_call(dict(v)))
        if mutate_ref:
            kernel.reference = lambda x, s, v: mutate_ref(real_ref(x, s, v))
        try:
            return verify.run_case(api, kernel, types, shape, kernel.values(shape), 0, cpu,
                                   launch, gen)
        finally:
            api.call, kernel.reference = real_call, real_ref

    # 2a. M + 1 rows: the kernel writes one row past Y -> guards
    r = run_mutated(soft, "f32", (7, 33), lambda v: dict(v, M=v["M"] + 1))
    check("one row too many is caught by the guards", not r["ok"] and "guard" in r["why"],
          r["why"])
    # 2b. M - 1 rows: the last row of Y keeps its NaN poison
    r = run_mutated(soft, "bf16", (7, 33), lambda v: dict(v, M=v["M"] - 1))
    check("an unwritten row is caught by the NaN poison",
          not r["ok"] and "non-finite" in r["why"], r["why"])
    # 2c. M and N swapped (a marshalling bug): same output size, wrong numbers
    r = run_mutated(gemm, "f32", (9, 7, 9), lambda v: dict(v, M=v["N"], N=v["M"]))
    check("swapped M and N are caught", not r["ok"], r["why"])
    # 2d. a reference off by 2 tol: the tolerance check fires
    tol = catalog.tolerance("f16", 33)
    r = run_mutated(soft, "f16", (5, 33),
                    mutate_ref=lambda ref: {n: t + 3 * tol * t.abs().max() for n, t in ref.items()})
    check("a result 3 tol off is caught by the tolerance",
          not r["ok"] and "error" in r["why"], r["why"])
    # 2e. the same case unmutated passes (the mutations, not the case, failed above)
    r = run_mutated(soft, "f16", (5, 33))
    check("the unmutated case passes", r["ok"], r["why"])
    # 3. marshalling refuses names the header does not have
    try:
        api.call("softmax", "f32", launch, X=0, Y=0, M=0, N=0, bogus=1)
        check("an unknown argument name is refused", False)
    except tgapi.CallError as e:
        check("an unknown argument name is refused", True, str(e)[:80])
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
