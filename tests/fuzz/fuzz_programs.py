#!/usr/bin/env python3
"""Grammar-based fuzzing of tilegen: random VALID tile programs (specgen.py) through the
(sanitized) tilegen's front end, `check` and `generate` for every target, the generated C compiled
with gcc (and a sample of the CUDA with nvcc, the WGSL validated by Tint where the Dawn package
is installed). See tests/fuzz/README.md for what counts as a finding and what is reported.

  fuzz_programs.py --tilegen BUILD/generator/tools/tilegen --seed 1 --count 40
  fuzz_programs.py --tilegen ... --duration 1800 --jobs 2 --out fuzz-out

Exit status: 0 if no new finding (known open findings, tests/fuzz/known_findings.txt, are
counted and listed but do not fail the run), 1 if any, 2 on a usage or set-up error.
"""
import argparse
import concurrent.futures as cf
import copy
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import findings as fnd  # noqa: E402
import specgen  # noqa: E402

SRC_ROOT = os.path.dirname(os.path.dirname(HERE))
LIB = "fz"
# The CPU family of this machine, in `tilegen outputs`' cpu_arch words (x86, aarch64).
HOST_ARCH = {"x86_64": "x86", "amd64": "x86", "i686": "x86", "aarch64": "aarch64",
             "arm64": "aarch64"}.get(platform.machine().lower(), platform.machine().lower())
CUDA_ARCH = {"sm_80": "80", "sm_86": "86", "sm_89": "89", "sm_90": "90", "sm_90a": "90a"}


class Run:
    """One finished command. `elapsed` is its CPU time (user + sys): the time limit is about
    tilegen's work, and on a loaded machine wall time says more about the neighbours."""

    def __init__(self, rc, out, err, elapsed, wall, timed_out):
        self.rc, self.out, self.err, self.timed_out = rc, out, err, timed_out
        self.elapsed, self.wall = elapsed, wall


def _cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


CPU_USED = [0.0]  # this process's children's CPU time so far (the programs' cost, for the report)


def run(cmd, cwd=None, timeout=60, env=None):
    """Runs cmd (a worker process runs one command at a time, so the children's CPU time
    between before and after is this command's)."""
    t0, c0 = time.monotonic(), _cpu()
    try:
        return _run(cmd, cwd, timeout, env, t0, c0)
    finally:
        CPU_USED[0] += _cpu() - c0


def _run(cmd, cwd, timeout, env, t0, c0):
    try:
        p = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=timeout, env=env)
        return Run(p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace"),
                   _cpu() - c0, time.monotonic() - t0, False)
    except subprocess.TimeoutExpired as e:
        return Run(None, (e.stdout or b"").decode("utf-8", "replace"),
                   (e.stderr or b"").decode("utf-8", "replace"), _cpu() - c0, time.monotonic() - t0, True)


class Finding:
    def __init__(self, cls, sig, step, targets, detail, command):
        self.cls, self.sig, self.step, self.targets = cls, sig, step, list(targets)
        self.detail, self.command = detail, command
        self.seed = None
        self.tree = None

    def key(self):
        return (self.cls, self.sig)

    def as_dict(self):
        return {"class": self.cls, "signature": self.sig, "step": self.step, "targets": self.targets,
                "detail": self.detail, "command": self.command, "seed": self.seed}


class Context:
    """What every worker needs: tools, limits, options (picklable)."""

    def __init__(self, a):
        self.tilegen = os.path.abspath(a.tilegen)
        self.timing_tilegen = os.path.abspath(a.timing_tilegen) if a.timing_tilegen else None
        self.time_limit = a.time_limit
        self.slowdown = a.slowdown
        self.hard_timeout = a.hard_timeout
        self.cc = a.cc
        self.cxx = a.cxx
        self.cflags = a.cflags.split()
        self.include = a.runtime_include
        self.nvcc = a.nvcc
        self.nvcc_every = a.nvcc_every
        self.wgsl_npm = a.wgsl_npm
        self.targets = a.targets
        # Cross compilers for the C variants of other CPU families (c_neon, c_sve on x86):
        # where one is installed it compiles them (without linking); otherwise they are only
        # generated (the dispatch source compiles them out).
        self.cross_cc = {arch: cc for arch, cc in (("aarch64", "aarch64-linux-gnu-gcc"),
                                                   ("x86", "x86_64-linux-gnu-gcc"))
                         if arch != HOST_ARCH and shutil.which(cc)}

    def tg(self, args, cwd, binary=None):
        return run([binary or self.tilegen] + args, cwd=cwd, timeout=self.hard_timeout)


def list_targets(tilegen):
    p = run([tilegen, "targets"])
    if p.rc != 0:
        raise SystemExit(f"fuzz_programs: `{tilegen} targets` failed: {p.err}")
    names = []
    for line in p.out.splitlines()[1:]:
        if line and not line[0].isspace():
            names.append(line.split()[0])
    return names


# ---- one program ------------------------------------------------------------------------------

class Examiner:
    """Runs one spec through every step; collects statistics and findings."""

    def __init__(self, ctx, work, spec_text, targets, steps=None, index=0):
        self.ctx, self.work, self.text = ctx, work, spec_text
        self.targets = targets
        self.steps = steps  # None: all steps; else a set of step names to run (minimization)
        self.index = index
        self.findings = []
        self.stats = {"front_end": None, "accepted": [], "times": {}}
        self.spec = os.path.join(work, "spec.yaml")
        with open(self.spec, "w", encoding="utf-8") as f:
            f.write(spec_text)

    def want(self, step):
        return self.steps is None or step in self.steps

    def add(self, cls, sig, step, targets, detail, command):
        self.findings.append(Finding(cls, sig, step, targets, detail, command))

    def tilegen(self, step, args, targets):
        """Runs tilegen; records a finding if it did not answer 0 or 1 (or too slowly)."""
        r = self.ctx.tg(args + ["spec.yaml"], self.work)
        cmd = "tilegen " + " ".join(args) + " spec.yaml"
        c = fnd.classify_run(r.rc, r.out, r.err, r.timed_out)
        if c:
            self.add(c[0], c[1], step, targets, (r.err + r.out)[-4000:], cmd)
        elif step in ("check", "generate") and r.elapsed > self.ctx.time_limit:
            self.timing(step, args, targets, r.elapsed, cmd)
        return r

    def timing(self, step, args, targets, elapsed, cmd):
        """A run over the time limit under the sanitizers: measured again with the release build
        if there is one (the limit is the release build's), else against limit x slowdown."""
        ctx = self.ctx
        if ctx.timing_tilegen:
            best = min(ctx.tg(args + ["spec.yaml"], self.work, ctx.timing_tilegen).elapsed for _ in range(2))
            if best > ctx.time_limit:
                self.add("slow", f"{step} over {ctx.time_limit} s", step, targets,
                         f"{best:.2f} s CPU with the release build ({elapsed:.2f} s sanitized)", cmd)
        elif elapsed > ctx.time_limit * ctx.slowdown:
            self.add("slow", f"{step} over {ctx.time_limit} s", step, targets,
                     f"{elapsed:.2f} s CPU sanitized (limit {ctx.time_limit} s x slowdown {ctx.slowdown})", cmd)

    def rejected_targets(self, err):
        """The targets named by check's errors, or None if an error names none (or some were
        not shown): then only a check per target tells which targets accept the spec."""
        named = set()
        for line in err.splitlines():
            if "error: too many errors" in line:
                return None
            if ": error: " not in line:
                continue
            hit = {m for m in re.findall(r"target '([A-Za-z0-9_]+)'", line) if m in self.targets}
            if not hit:
                return None
            named |= hit
        return named

    def examine(self):
        t = self.targets
        # One check for every target; most programs pass. Errors that name their target
        # (schedules, GPU and WebGPU limits) say which targets accept the spec; otherwise the
        # front end alone, then a check per target.
        r = self.tilegen("check", ["check", "--targets", ",".join(t)], t)
        self.stats["times"]["check"] = r.elapsed
        self.stats["front_end"] = True
        if r.rc == 0:
            accepted = list(t)
        else:
            # after an error that names no target, or a finding (exit 70 on one target hides
            # what the others do), a check per target
            rejected = self.rejected_targets(r.err) if r.rc == 1 else None
            if rejected is not None:
                accepted = [x for x in t if x not in rejected]
            else:
                fe = self.tilegen("kernels", ["kernels", "--lib", LIB], [])
                if fe.rc != 0:
                    self.stats["front_end"] = False
                    return self
                accepted = [x for x in t if self.tilegen("check", ["check", "--targets", x], [x]).rc == 0]
        self.stats["accepted"] = accepted
        if not accepted or not self.want("generate"):
            return self
        # Metal rows cannot share a dispatch table with CUDA or HIP rows (a command-line error,
        # docs/metal.md): the metal target goes into a library of its own with the C targets.
        if "metal" in accepted and any(x.startswith(("sm_", "gfx")) or x == "hip" for x in accepted):
            alone = ["metal"] + [x for x in accepted if x == "c" or x.startswith("c_")]
            rm = self.tilegen("generate", ["generate", "--lib", LIB, "--targets", ",".join(alone),
                                           "--out", "gm"], alone)
            if rm.rc == 1:
                self.generate_rejects(alone, rm)
            accepted = [x for x in accepted if x != "metal"]
        g1 = os.path.join(self.work, "g1")
        gen_args = ["generate", "--lib", LIB, "--targets", ",".join(accepted), "--out", "g1"]
        r = self.tilegen("generate", gen_args, accepted)
        self.stats["times"]["generate"] = r.elapsed
        if r.rc == 1:
            self.generate_rejects(accepted, r)
            return self
        if r.rc != 0:
            return self
        if self.want("determinism"):
            self.determinism(accepted, g1)
        listing = self.outputs(accepted, g1)
        if listing is None:
            return self
        if self.want("compile-c"):
            self.compile_c(g1, listing)
        if self.want("compile-cuda") and self.ctx.nvcc and (
                self.steps is not None or (self.ctx.nvcc_every and self.index % self.ctx.nvcc_every == 0)):
            self.compile_cuda(g1, listing)
        if self.want("wgsl") and self.ctx.wgsl_npm and any(k == "wgsl" for k, _, _ in listing):
            self.validate_wgsl(g1)
        return self

    def generate_rejects(self, accepted, r):
        """check accepted every target in `accepted`, generate rejected them together: find the
        targets generate rejects alone (the finding is per target)."""
        bad = []
        for tgt in accepted:
            out = os.path.join(self.work, "g_" + tgt)
            rr = self.ctx.tg(["generate", "--lib", LIB, "--targets", tgt, "--out", out, "spec.yaml"], self.work)
            if rr.rc == 1 and self.ctx.tg(["check", "--targets", tgt, "spec.yaml"], self.work).rc == 0:
                bad.append((tgt, rr))
        if not bad:  # only together (a library-wide rule)
            bad = [(",".join(accepted), r)]
        for tgt, rr in bad:
            self.add("generate-rejects", fnd.first_error(rr.err), "generate", tgt.split(","),
                     rr.err[-4000:],
                     f"tilegen check --targets {tgt} spec.yaml  # exit 0\n"
                     f"tilegen generate --lib {LIB} --targets {tgt} --out out spec.yaml  # exit 1")

    def determinism(self, accepted, g1):
        g2 = os.path.join(self.work, "g2")
        r = self.ctx.tg(["generate", "--lib", LIB, "--targets", ",".join(accepted), "--out", "g2", "spec.yaml"],
                        self.work)
        if r.rc != 0:
            self.add("nondeterministic", f"second generate exited {r.rc}", "determinism", accepted,
                     r.err[-2000:], "tilegen generate (twice)")
            return
        a, b = sorted(os.listdir(g1)), sorted(os.listdir(g2))
        if a != b:
            self.add("nondeterministic", "different file names", "determinism", accepted,
                     f"only first: {sorted(set(a) - set(b))[:5]}, only second: {sorted(set(b) - set(a))[:5]}",
                     "tilegen generate (twice)")
            return
        for name in a:
            with open(os.path.join(g1, name), "rb") as f1, open(os.path.join(g2, name), "rb") as f2:
                if f1.read() != f2.read():
                    kind = name.rsplit(".", 1)[-1]
                    self.add("nondeterministic", f"different contents of a .{kind} file", "determinism",
                             accepted, name, "tilegen generate (twice), cmp")
                    return

    def outputs(self, accepted, g1):
        """`outputs --format=cmake` against what generate wrote; returns [(kind, target, file)]."""
        r = self.tilegen("outputs", ["outputs", "--lib", LIB, "--targets", ",".join(accepted),
                                     "--format=cmake"], accepted)
        if r.rc != 0:
            if not r.timed_out and r.rc == 1:
                self.add("outputs-mismatch", "outputs rejects a spec generate accepts: " + fnd.first_error(r.err),
                         "outputs", accepted, r.err[-2000:], "tilegen outputs --format=cmake")
            return None
        listing, flags, gcc_flags, cpu_arch = [], {}, {}, {}
        for line in r.out.splitlines():
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "flags":
                flags[parts[1]] = parts[2:]
            elif parts[0] == "gcc_flags":
                gcc_flags[parts[1]] = parts[2:]
            elif parts[0] == "cpu_arch":
                cpu_arch[parts[1]] = parts[2]
            elif parts[0] == "variant":
                listing.append(("variant", parts[1], parts[2]))
            elif parts[0] in ("header", "source", "wgsl", "wgsl_host", "metal", "metal_host"):
                # (metal: the .metal kernels; metal_host: <lib>_metal.c, which needs Metal's
                # runtime and is not compiled here; metal_flags lines are not files)
                listing.append((parts[0], None, parts[1]))
        self.flags = flags
        self.gcc_flags = gcc_flags
        self.cpu_arch = cpu_arch
        listed = {f for _, _, f in listing}
        written = set(os.listdir(g1))
        if listed != written and self.want("outputs"):
            miss, extra = sorted(written - listed), sorted(listed - written)
            what = "unlisted files written" if miss else "listed files not written"
            self.add("outputs-mismatch", what, "outputs", accepted,
                     f"written, not listed: {miss[:5]}; listed, not written: {extra[:5]}",
                     "tilegen outputs --format=cmake vs generate")
        return listing

    def cc(self, args, kind, accepted, what):
        r = run(args, cwd=self.work, timeout=300)
        if r.rc != 0:
            err = r.err + r.out
            sig = f"{kind}: " + (fnd.first_error(err) if "error" in err else f"exit {r.rc}")
            self.add("compile-c" if kind != "nvcc" else "compile-cuda", sig,
                     "compile-c" if kind != "nvcc" else "compile-cuda", accepted,
                     err[-3000:], " ".join(args) + f"   # {what}")
            return False
        return True

    def compile_c(self, g1, listing):
        ctx = self.ctx
        inc = ["-I", ctx.include, "-I", "g1"]
        base = [ctx.cc, "-std=c11", "-c", "-Wall", "-Werror=implicit-function-declaration", "-fPIC",
                "-fopenmp"] + ctx.cflags + inc
        objs = []
        header = next((f for k, _, f in listing if k == "header"), None)
        if header:
            with open(os.path.join(self.work, "use_header.c"), "w") as f:
                f.write(f'#include "{header}"\n#include "{header}"\nint tg_fuzz_use_header;\n')
            with open(os.path.join(self.work, "use_header.cpp"), "w") as f:
                f.write(f'#include "{header}"\nint tg_fuzz_use_header_cxx;\n')
            self.cc(base + ["use_header.c", "-o", "use_header.o"], "gcc header", [], header)
            self.cc([ctx.cxx, "-std=c++17", "-c", "-Wall", "-fPIC"] + inc + ["use_header.cpp", "-o", "use_header_cxx.o"],
                    "g++ header", [], header)
        host_c = 0
        for kind, tgt, name in listing:
            if kind == "source" or (kind == "variant" and name.endswith(".c")):
                flags = self.flags.get(tgt, []) if tgt else []
                arch = self.cpu_arch.get(tgt) if tgt else None
                obj = name + ".o"
                if arch and arch != HOST_ARCH:
                    # another CPU's variant (c_neon, c_sve on x86; the dispatch source compiles
                    # it out): its cross compiler, when there is one, compiles it on its own
                    cross = ctx.cross_cc.get(arch)
                    if cross:
                        self.cc([cross] + base[1:] + flags + self.gcc_flags.get(tgt, []) +
                                [os.path.join("g1", name), "-o", obj], f"{arch} gcc variant", [tgt], name)
                    continue
                host_c += 1
                if self.cc(base + flags + self.gcc_flags.get(tgt, []) + [os.path.join("g1", name), "-o", obj],
                           "gcc " + ("dispatch" if kind == "source" else "variant"),
                           [tgt] if tgt else [], name):
                    objs.append(obj)
        if objs and len(objs) == host_c:
            self.cc([ctx.cc, "-shared", "-fopenmp", "-o", "libfz.so"] + objs, "link", [],
                    "the C variants and the dispatch code as one library")

    def compile_cuda(self, g1, listing):
        """nvcc on one .cu variant per CUDA target family (sm_80 path, sm_90a), the first
        in the listing's order."""
        picked = {}
        for kind, tgt, name in listing:
            if kind == "variant" and name.endswith(".cu") and tgt in CUDA_ARCH:
                fam = "sm_90a" if tgt == "sm_90a" else "sm_80"
                picked.setdefault(fam, (tgt, name))
        for fam, (tgt, name) in sorted(picked.items()):
            arch = CUDA_ARCH[tgt]
            self.cc([self.ctx.nvcc, "-std=c++17", f"-gencode=arch=compute_{arch},code=sm_{arch}",
                     "-I", self.ctx.include, "-c", os.path.join("g1", name), "-o", name + ".o"],
                    "nvcc", [tgt], name)

    def validate_wgsl(self, g1):
        vdir = os.path.join(self.work, "wgsl-validate")
        os.makedirs(vdir, exist_ok=True)
        os.symlink(os.path.join(self.ctx.wgsl_npm, "node_modules"), os.path.join(vdir, "node_modules"))
        for f in ("wgsl_validate.mjs",):
            shutil.copy(os.path.join(HERE, f), vdir)
        r = run(["node", os.path.join(vdir, "wgsl_validate.mjs"), g1, f"{LIB}.wgsl.json"], timeout=60)
        if r.timed_out or r.rc is None or r.rc < 0 or r.rc >= 128:
            # Dawn itself hung or aborted (seen: a std::system_error abort, a wait that never
            # returned): the validator failed, not tilegen's WGSL. Said, not counted.
            print(f"  note: WGSL validation of program {self.index} did not finish (node exit "
                  f"{r.rc}{', timed out' if r.timed_out else ''}): not validated", flush=True)
            return
        if r.rc not in (0, 77):
            first = next((l for l in r.out.splitlines() if l.startswith("  ")), r.out[:200])
            self.add("wgsl-invalid", fnd.normalize(first.split(": ", 1)[-1]), "wgsl",
                     [], r.out[-3000:] + r.err[-1000:], "node tests/fuzz/wgsl_validate.mjs g1")


def examine_program(ctx, seed, index, keep_dir=None, tree=None, targets=None, steps=None):
    """Runs one program (from its seed, or the given tree); returns (stats, findings)."""
    if tree is None:
        tree = specgen.Generator(seed).program()
    text = specgen.render(tree, seed)
    work = tempfile.mkdtemp(prefix=f"tgfz{seed}-", dir=keep_dir)
    cpu0 = CPU_USED[0]
    try:
        ex = Examiner(ctx, work, text, targets or ctx.targets, steps, index).examine()
        ex.stats["cpu"] = CPU_USED[0] - cpu0
        for f in ex.findings:
            f.seed = seed
            f.tree = tree
        return ex.stats, ex.findings, text
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ---- minimization -----------------------------------------------------------------------------

def _paths(tree, path=()):
    """Every (container path, key) in the tree, deepest last."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield path, k
            yield from _paths(v, path + (k,))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield path, i
            yield from _paths(v, path + (i,))


def _get(tree, path):
    for p in path:
        tree = tree[p]
    return tree


def reductions(tree):
    """Candidate smaller trees, biggest cuts first."""
    cands = list(_paths(tree))
    # 1. whole list items and mapping entries, from the top of the tree down, last first
    for path, key in sorted(cands, key=lambda c: len(c[0])):
        parent = _get(tree, path)
        if isinstance(parent, list) and len(parent) > 1:
            t = copy.deepcopy(tree)
            del _get(t, path)[key]
            yield t
        elif isinstance(parent, dict) and key not in ("kernel", "summary", "tensors", "grid", "body"):
            t = copy.deepcopy(tree)
            del _get(t, path)[key]
            yield t
    # 2. an op with a nested body replaced by its body's ops (loops, ifs)
    for path, key in cands:
        parent = _get(tree, path)
        if isinstance(parent, list) and isinstance(parent[key], dict):
            item = parent[key]
            for field in ("body", "then", "else"):
                if isinstance(item.get(field), list) and any(op in item for op in ("for", "pipelined", "if")):
                    t = copy.deepcopy(tree)
                    lst = _get(t, path)
                    lst[key:key + 1] = copy.deepcopy(item[field])
                    yield t
    # 3. candidate ranges to one value
    for path, key in cands:
        parent = _get(tree, path)
        v = parent[key] if isinstance(parent, (dict, list)) else None
        if isinstance(v, dict) and "range" in v:
            t = copy.deepcopy(tree)
            _get(t, path)[key] = [v["range"][0]]
            yield t


def minimize(ctx, finding, budget_runs, budget_s):
    """The smallest tree (greedy, to a fixed point) that still gives the same finding."""
    tree = finding.tree
    steps = {finding.step, "generate"} if finding.step not in ("kernels", "check") else {finding.step}
    if finding.step == "generate":
        steps = {"generate"}
    targets = finding.targets or ctx.targets
    t0, runs = time.monotonic(), 0

    def same(t, tg=None):
        nonlocal runs
        runs += 1
        _, fs, _ = examine_program(ctx, finding.seed, 0, tree=t, targets=tg or targets, steps=steps)
        return any(f.key() == finding.key() for f in fs)

    # one target if one is enough
    if len(targets) > 1:
        for t in targets:
            if same(tree, [t]):
                targets = [t]
                break

    progress = True
    while progress and runs < budget_runs and time.monotonic() - t0 < budget_s:
        progress = False
        for cand in reductions(tree):
            if runs >= budget_runs or time.monotonic() - t0 >= budget_s:
                break
            if same(cand):
                tree = cand
                progress = True
                break
    return tree, targets, runs


def repro_command(step, targets, spec):
    t = ",".join(targets)
    tg = f"--targets {t} " if t else ""
    if step == "kernels":
        return f"tilegen kernels {spec}"
    if step == "check":
        return f"tilegen check {tg}{spec}"
    if step == "outputs":
        return f"tilegen outputs --lib {LIB} {tg}--format=cmake {spec}   # vs generate's files"
    gen = f"tilegen generate --lib {LIB} {tg}--out out {spec}"
    if step == "generate":
        return gen
    if step == "determinism":
        return f"{gen} && tilegen generate --lib {LIB} {tg}--out out2 {spec} && diff -r out out2"
    if step == "compile-c":
        return f"{gen}, then gcc -std=c11 -c -Wall -Werror=implicit-function-declaration -fopenmp -I runtime/include -I out out/*.c"
    if step == "compile-cuda":
        return f"{gen}, then nvcc -std=c++17 -arch=sm_XX -I runtime/include -c out/*.cu"
    if step == "wgsl":
        return f"{gen}, then node tests/fuzz/wgsl_validate.mjs out {LIB}.wgsl.json"
    return gen


# ---- the run ----------------------------------------------------------------------------------

_CTX = None


def _init(ctx):
    global _CTX
    _CTX = ctx


def _task(seed, index):
    return examine_program(_CTX, seed, index)


def _minimize_task(finding, budget_runs, budget_s):
    return minimize(_CTX, finding, budget_runs, budget_s)


def save_finding(outdir, f, tree, targets, hits, known):
    os.makedirs(outdir, exist_ok=True)
    fid = fnd.finding_id(f.cls, f.sig)
    f.command = repro_command(f.step, targets, fid + ".yaml")
    header = (f"fuzz finding {fid} ({f.cls}); specgen seed {f.seed}\n"
              f"signature: {f.sig}\n"
              f"reproduce: {f.command}")
    text = specgen.yamlout.dump(tree, header=header) if hasattr(specgen, "yamlout") else ""
    with open(os.path.join(outdir, fid + ".yaml"), "w", encoding="utf-8") as out:
        out.write(text)
    with open(os.path.join(outdir, fid + ".txt"), "w", encoding="utf-8") as out:
        out.write(f"class: {f.cls}\nsignature: {f.sig}\nknown: {known or 'no'}\nhits: {hits}\n"
                  f"seed: {f.seed}\ntargets: {','.join(targets)}\ncommand: {f.command}\n\n"
                  f"message (last lines of the first hit):\n{f.detail}\n")
    return fid


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tilegen", required=True, help="the tilegen under test (a TILEGEN_SANITIZE build)")
    ap.add_argument("--timing-tilegen", help="a release tilegen: runs over --time-limit are timed again with it")
    ap.add_argument("--seed", type=int, default=1, help="base seed: program i has seed SEED*1000003+i")
    ap.add_argument("--count", type=int, help="number of programs")
    ap.add_argument("--duration", type=float, help="seconds to run (instead of --count)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--out", default="fuzz-out", help="folder for findings and summary.json")
    ap.add_argument("--known", default=os.path.join(HERE, "known_findings.txt"))
    ap.add_argument("--targets", help="comma-separated (default: every target of `tilegen targets`)")
    ap.add_argument("--time-limit", type=float, default=2.0)
    ap.add_argument("--slowdown", type=float, default=20.0,
                    help="sanitized-build slowdown allowed without --timing-tilegen")
    ap.add_argument("--hard-timeout", type=float, default=120.0)
    ap.add_argument("--cc", default=os.environ.get("TG_FUZZ_CC", "gcc"))
    ap.add_argument("--cxx", default=os.environ.get("TG_FUZZ_CXX", "g++"))
    ap.add_argument("--cflags", default="-O0")
    ap.add_argument("--runtime-include", default=os.path.join(SRC_ROOT, "runtime", "include"))
    ap.add_argument("--nvcc", default=None, help="nvcc for the CUDA sample (default: from PATH or CUDACXX)")
    ap.add_argument("--no-nvcc", action="store_true")
    ap.add_argument("--nvcc-every", type=int, default=10, help="compile .cu variants of every Nth program")
    ap.add_argument("--wgsl-npm", help="folder with node_modules/webgpu (tests/wgsl's npm ci) for Tint validation")
    ap.add_argument("--minimize-runs", type=int, default=300)
    ap.add_argument("--minimize-seconds", type=float, default=300)
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--minimize-known", action="store_true",
                    help="minimize known findings too (to refresh tests/fuzz/findings)")
    ap.add_argument("--seeds", help="comma-separated program seeds to run (e.g. the first hits of "
                                    "a summary.json), instead of --count/--duration")
    ap.add_argument("--print-program", type=int, metavar="SEED", help="print program SEED and exit")
    a = ap.parse_args(argv)

    if a.print_program is not None:
        sys.stdout.write(specgen.generate(a.print_program))
        return 0
    explicit = [int(x) for x in a.seeds.split(",")] if a.seeds else None
    if explicit:
        a.count = len(explicit)
    if not a.count and not a.duration:
        ap.error("give --count, --duration or --seeds")
    if not os.access(a.tilegen, os.X_OK):
        print(f"fuzz_programs: no tilegen at {a.tilegen}", file=sys.stderr)
        return 2
    if not a.no_nvcc and not a.nvcc:
        cand = os.environ.get("CUDACXX") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        a.nvcc = cand if os.path.exists(cand) else None
    if a.no_nvcc:
        a.nvcc = None
    if a.wgsl_npm and not (os.path.isdir(os.path.join(a.wgsl_npm, "node_modules", "webgpu")) and shutil.which("node")):
        print(f"fuzz_programs: no node or no {a.wgsl_npm}/node_modules/webgpu: WGSL validation skipped")
        a.wgsl_npm = None
    all_targets = list_targets(a.tilegen)
    a.targets = a.targets.split(",") if a.targets else all_targets
    ctx = Context(a)
    known = fnd.KnownList(a.known)
    os.makedirs(a.out, exist_ok=True)
    print(f"fuzz_programs: tilegen {a.tilegen}; targets {','.join(a.targets)}; seed {a.seed}; "
          f"{'%d programs' % a.count if a.count else '%g s' % a.duration}; {a.jobs} jobs; "
          f"nvcc: {'every %dth program' % a.nvcc_every if a.nvcc else 'not found, skipped'}; "
          f"WGSL validation: {'Dawn/Tint in ' + a.wgsl_npm if a.wgsl_npm else 'skipped (no --wgsl-npm)'}",
          flush=True)

    t0 = time.monotonic()
    stats = {"programs": 0, "front_end_rejected": 0, "accepted_all": 0, "accepted_some": 0,
             "accepted_none": 0, "per_target": {t: 0 for t in a.targets}, "check_s": 0.0, "generate_s": 0.0,
             "generated": 0, "cpu_s": 0.0}
    seen = {}  # (cls, sig) -> {"finding", "hits", "known"}
    pool = cf.ProcessPoolExecutor(max_workers=a.jobs, initializer=_init, initargs=(ctx,))
    pending = {}
    next_index = 0

    def more():
        if a.count:
            return next_index < a.count
        return time.monotonic() - t0 < a.duration

    def submit():
        nonlocal next_index
        seed = explicit[next_index] if explicit else a.seed * 1000003 + next_index
        pending[pool.submit(_task, seed, next_index)] = seed
        next_index += 1

    while more() and len(pending) < a.jobs * 2:
        submit()
    last_report = time.monotonic()
    while pending:
        done, _ = cf.wait(list(pending), return_when=cf.FIRST_COMPLETED)
        for fut in done:
            seed = pending.pop(fut)
            st, fs, _ = fut.result()
            stats["programs"] += 1
            stats["cpu_s"] += st.get("cpu", 0)
            if st["front_end"] is False:
                stats["front_end_rejected"] += 1
            else:
                acc = st["accepted"]
                for t in acc:
                    stats["per_target"][t] += 1
                if len(acc) == len(a.targets):
                    stats["accepted_all"] += 1
                elif acc:
                    stats["accepted_some"] += 1
                else:
                    stats["accepted_none"] += 1
                stats["check_s"] += st["times"].get("check", 0)
                if "generate" in st["times"]:
                    stats["generate_s"] += st["times"]["generate"]
                    stats["generated"] += 1
            for f in fs:
                entry = seen.get(f.key())
                if entry:
                    entry["hits"] += 1
                    continue
                k = known.match(f.cls, f.sig)
                seen[f.key()] = {"finding": f, "hits": 1, "known": k}
                print(f"  [{'known: ' + k if k else 'NEW'}] {f.cls}: {f.sig}  (seed {seed}, targets "
                      f"{','.join(f.targets) or '-'})", flush=True)
            if more():
                submit()
        if time.monotonic() - last_report > 60:
            last_report = time.monotonic()
            el = last_report - t0
            print(f"  ... {stats['programs']} programs in {el:.0f} s ({stats['programs'] / el:.2f}/s), "
                  f"{len(seen)} distinct findings", flush=True)
    elapsed = time.monotonic() - t0

    # minimize and save the new findings (known ones are in tests/fuzz/findings already)
    fdir = os.path.join(a.out, "findings")
    futs = {}
    for key, e in seen.items():
        if (e["known"] and not a.minimize_known) or a.no_minimize or e["finding"].cls in ("slow", "hang"):
            continue
        futs[pool.submit(_minimize_task, e["finding"], a.minimize_runs, a.minimize_seconds)] = key
    minimized = {}
    for fut in cf.as_completed(futs):
        minimized[futs[fut]] = fut.result()
    pool.shutdown()
    saved = []
    for key, e in sorted(seen.items(), key=lambda kv: kv[0]):
        f = e["finding"]
        tree, targets, runs = minimized.get(key, (f.tree, f.targets, 0))
        saved.append((save_finding(fdir, f, tree, targets, e["hits"], e["known"]), f, e, runs))

    n = stats["programs"]
    fe = n - stats["front_end_rejected"]
    pairs = sum(stats["per_target"].values())
    summary = {
        "seed": a.seed, "programs": n, "seconds": round(elapsed, 1),
        "programs_per_second": round(n / elapsed, 3) if elapsed else 0,
        "cpu_seconds_per_program": round(stats["cpu_s"] / n, 2) if n else 0,
        "front_end_accepted": fe, "accepted_every_target": stats["accepted_all"],
        "accepted_some_targets": stats["accepted_some"], "accepted_no_target": stats["accepted_none"],
        "acceptance_rate_all_targets": round(stats["accepted_all"] / n, 3) if n else 0,
        "acceptance_rate_target_pairs": round(pairs / (n * len(a.targets)), 3) if n else 0,
        "per_target": stats["per_target"],
        "mean_check_s": round(stats["check_s"] / fe, 3) if fe else 0,
        "mean_generate_s": round(stats["generate_s"] / stats["generated"], 3) if stats["generated"] else 0,
        "findings": [{"id": fid, "class": f.cls, "signature": f.sig, "hits": e["hits"],
                      "known": e["known"], "seed": f.seed, "targets": f.targets, "minimize_runs": runs}
                     for fid, f, e, runs in saved],
    }
    with open(os.path.join(a.out, "summary.json"), "w") as out:
        json.dump(summary, out, indent=2)
    by_class = {}
    for fid, f, e, _ in saved:
        c = by_class.setdefault(f.cls, [0, 0, 0])
        c[0] += e["hits"]
        c[1] += 1
        c[2] += 0 if e["known"] else 1
    print(f"\nfuzz_programs: {n} programs in {elapsed:.0f} s ({summary['programs_per_second']}/s; "
          f"{summary['cpu_seconds_per_program']} s of CPU per program: tilegen, gcc, nvcc); "
          f"front end accepted {fe}; every target accepted {stats['accepted_all']} "
          f"({100 * summary['acceptance_rate_all_targets']:.1f}%), some {stats['accepted_some']}, "
          f"none {stats['accepted_none']}; (program, target) pairs accepted "
          f"{100 * summary['acceptance_rate_target_pairs']:.1f}%")
    print("  per target: " + ", ".join(f"{t} {c}" for t, c in stats["per_target"].items()))
    print(f"  findings: {len(saved)} distinct, {sum(1 for s in saved if not s[2]['known'])} new")
    for cls, (hits, distinct, new) in sorted(by_class.items()):
        print(f"    {cls}: {hits} hits, {distinct} distinct, {new} new")
    for fid, f, e, _ in saved:
        print(f"    {fid} [{'known: ' + e['known'] if e['known'] else 'NEW'}] x{e['hits']} {f.sig}")
    print(f"  details: {os.path.abspath(a.out)}/summary.json, findings/")
    return 1 if any(not e["known"] for e in seen.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
