#!/usr/bin/env python3
"""Runs the libFuzzer target tilegen_fuzz_spec (FuzzSpec.cpp) with the seed corpus (kernels/,
tests/errors/, the YAML inputs of tests/lit and tests/wgsl) and the spec dictionary, classifies
what it finds (findings.py) and saves new findings with a minimized input.

  run_libfuzzer.py --fuzzer BUILD/tests/fuzz/tilegen_fuzz_spec --runs 3000 --seed 1 --work DIR
  run_libfuzzer.py --fuzzer ... --seconds 1800 --work DIR          # the long run

Deterministic for a given --seed and --runs (one process, no fork mode). A finding stops
libFuzzer; a known one (tests/fuzz/known_findings.txt) is counted and the run goes on from the
next seed with the runs that are left (at most --restarts times). Internal errors and
generate-rejects findings on the known list do not even stop it (TILEGEN_FUZZ_KNOWN).
Exit status: 0 if no new finding, 1 if any, 2 on a set-up error.
"""
import argparse
import glob
import hashlib
import os
import re
import resource
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import findings as fnd  # noqa: E402

SRC_ROOT = os.path.dirname(os.path.dirname(HERE))


def seed_files():
    pats = ["kernels/*.yaml", "tests/errors/*.yaml", "tests/lit/**/*.yaml", "tests/wgsl/*.yaml",
            "tests/schema/bad/*.yaml", "examples/**/*.yaml"]
    out = []
    for p in pats:
        out += glob.glob(os.path.join(SRC_ROOT, p), recursive=True)
    return sorted(set(out))


def classify_log(log):
    """(class, signature) of the finding that stopped libFuzzer, from its output."""
    rep = fnd.sanitizer_report(log)
    m = re.search(r"tilegen-fuzz: FINDING: (.*)", log)
    if m and not rep:
        what = m.group(1)
        if what.startswith("internal error"):
            return "internal-error", fnd.internal_error(what) or fnd.normalize(what)
        if "generate rejects" in what:
            rest = log[m.end():]
            return "generate-rejects", fnd.first_error(rest)
        return "unexpected-exit", fnd.normalize(what)
    if rep:
        return "sanitizer", rep[1]
    if "ERROR: libFuzzer: timeout" in log:
        return "hang", "libFuzzer timeout (one input over --timeout)"
    if "ERROR: libFuzzer: out-of-memory" in log or "malloc limit" in log:
        return "oom", "libFuzzer out-of-memory (over -rss_limit_mb)"
    if "ERROR: libFuzzer: deadly signal" in log:
        return "crash", "deadly signal"
    return "crash", "libFuzzer stopped: " + fnd.normalize(log.strip().splitlines()[-1] if log.strip() else "")


def stat(log, name):
    m = re.findall(rf"stat::{name}:\s*(\d+)", log)
    return int(m[-1]) if m else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fuzzer", required=True)
    ap.add_argument("--work", required=True, help="folder for the corpus, artifacts and findings")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, help="total executions (deterministic)")
    ap.add_argument("--seconds", type=int, help="total time (the long run)")
    ap.add_argument("--timeout", type=int, default=120,
                    help="seconds per input (libFuzzer -timeout); run time is the grammar fuzzer's measure")
    ap.add_argument("--rss-limit-mb", type=int, default=4096)
    ap.add_argument("--restarts", type=int, default=8)
    ap.add_argument("--keep-corpus", action="store_true", help="reuse WORK/corpus from an earlier run")
    ap.add_argument("--known", default=os.path.join(HERE, "known_findings.txt"))
    ap.add_argument("--timing-tilegen", help="a release tilegen: an input over --timeout is timed again "
                    "with it (check and generate, every target) and is a finding only over --time-limit")
    ap.add_argument("--time-limit", type=float, default=2.0, help="seconds of CPU time (release build)")
    a = ap.parse_args(argv)
    if not a.runs and not a.seconds:
        ap.error("give --runs or --seconds")
    if not os.access(a.fuzzer, os.X_OK):
        print(f"run_libfuzzer: no fuzzer at {a.fuzzer}", file=sys.stderr)
        return 2

    corpus, seeds = os.path.join(a.work, "corpus"), os.path.join(a.work, "seeds")
    arts, fdir = os.path.join(a.work, "artifacts"), os.path.join(a.work, "findings")
    if not a.keep_corpus:
        shutil.rmtree(corpus, ignore_errors=True)
    shutil.rmtree(seeds, ignore_errors=True)
    for d in (corpus, seeds, arts, fdir):
        os.makedirs(d, exist_ok=True)
    files = seed_files()
    for f in files:  # named by content: the same order on every machine
        data = open(f, "rb").read()
        with open(os.path.join(seeds, hashlib.sha1(data).hexdigest()), "wb") as out:
            out.write(data)
    known = fnd.KnownList(a.known)
    env = dict(os.environ, TILEGEN_FUZZ_KNOWN=os.path.abspath(a.known))
    print(f"run_libfuzzer: {a.fuzzer}; {len(files)} seed files; seed {a.seed}; "
          f"{'%d runs' % a.runs if a.runs else '%d s' % a.seconds}", flush=True)

    t0 = time.monotonic()
    runs_left, seed = a.runs, a.seed
    execs, restarts, status, unconfirmed = 0, 0, 0, 0
    seen = {}
    cov = ft = 0
    known_hits = {}
    while True:
        cmd = [a.fuzzer, f"-seed={seed}", f"-timeout={a.timeout}", f"-rss_limit_mb={a.rss_limit_mb}",
               f"-dict={os.path.join(HERE, 'spec.dict')}", f"-artifact_prefix={arts}/",
               "-print_final_stats=1", "-reload=0", "-report_slow_units=1000000", corpus, seeds]
        if a.runs:
            cmd.insert(1, f"-runs={runs_left}")
        else:
            left = int(a.seconds - (time.monotonic() - t0))
            if left <= 0:
                break
            cmd.insert(1, f"-max_total_time={left}")
        p = subprocess.run(cmd, capture_output=True, env=env)
        log = p.stderr.decode("utf-8", "replace") + p.stdout.decode("utf-8", "replace")
        with open(os.path.join(a.work, f"log-seed{seed}.txt"), "w") as out:
            out.write(log)
        n = stat(log, "number_of_executed_units")
        execs += n
        m = re.findall(r"cov: (\d+) ft: (\d+)", log)
        if m:
            cov, ft = max(cov, int(m[-1][0])), max(ft, int(m[-1][1]))
        for name, hits in re.findall(r"tilegen-fuzz: known finding (\S+): (\d+) inputs", log):
            known_hits[name] = known_hits.get(name, 0) + int(hits)
        if p.returncode == 0:
            break
        cls, sig = classify_log(log)
        m = re.findall(r"Test unit written to (\S+)", log)  # the last: slow units come first
        art = m[-1] if m and os.path.exists(m[-1]) else None
        if art:  # a seed that is a finding would stop every restart at once: set it aside
            data = open(art, "rb").read()
            seed_file = os.path.join(seeds, hashlib.sha1(data).hexdigest())
            if os.path.exists(seed_file):
                os.remove(seed_file)
                src = next((f for f in files if open(f, "rb").read() == data), "?")
                print(f"  seed {os.path.relpath(src, SRC_ROOT)} is this finding: left out of the rest of the run")
        if cls == "hang" and art and a.timing_tilegen:
            t = release_time(a.timing_tilegen, art)
            if t <= a.time_limit:
                print(f"  timeout not confirmed: the release build takes {t:.2f} s of CPU on {art} "
                      f"(the sanitizers, a loaded machine); going on", flush=True)
                unconfirmed += 1
                seed += 1
                if a.runs:
                    runs_left -= max(n, 1)
                    if runs_left <= 0:
                        break
                continue
            sig = f"check + generate over {a.time_limit} s of CPU (release build)"
            cls = "slow"
        k = known.match(cls, sig)
        first = (cls, sig) not in seen
        seen.setdefault((cls, sig), [0, k, art])[0] += 1
        print(f"  [{'known: ' + k if k else 'NEW'}] {cls}: {sig} (seed {seed}, after {n} runs; "
              f"{art or 'no artifact'})", flush=True)
        if not k:
            status = 1
            if first and art:
                save(a, cls, sig, art, log, fdir, env)
        restarts += 1
        if restarts > a.restarts:
            print(f"run_libfuzzer: stopping after {restarts} findings")
            break
        seed += 1
        if a.runs:
            runs_left -= max(n, 1)
            if runs_left <= 0:
                break
    el = time.monotonic() - t0
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ru.ru_utime + ru.ru_stime
    print(f"\nrun_libfuzzer: {execs} inputs in {el:.0f} s ({execs / el if el else 0:.1f}/s; "
          f"{execs / cpu if cpu else 0:.1f} per CPU second); coverage: "
          f"{cov} edges, {ft} features; corpus {len(os.listdir(corpus))} new inputs; "
          f"findings: {len(seen)} distinct ({sum(1 for v in seen.values() if not v[1])} new)")
    if unconfirmed:
        print(f"  {unconfirmed} timeouts not confirmed by the release build (not findings)")
    for name, hits in sorted(known_hits.items()):
        print(f"  known finding {name} (internal error / generate-rejects, not stopped on): {hits} inputs")
    for (cls, sig), (hits, k, art) in seen.items():
        print(f"  {fnd.finding_id(cls, sig)} [{'known: ' + k if k else 'NEW'}] x{hits} {cls}: {sig}")
    return status


def release_time(tilegen, path):
    """CPU seconds the release tilegen takes to check and generate `path` for every target."""
    targets = "c,c_avx512,sm_80,sm_86,sm_90,sm_90a,wgsl,wgsl_f16_subgroups"
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = os.path.join(os.path.dirname(path), "timing-out")
    for cmd in (["check", "--targets", targets, path],
                ["generate", "--lib", "fz", "--targets", targets, "--out", out, path]):
        try:
            subprocess.run([tilegen] + cmd, capture_output=True, timeout=600)
        except subprocess.TimeoutExpired:
            return float("inf")
    shutil.rmtree(out, ignore_errors=True)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)


def save(a, cls, sig, art, log, fdir, env):
    """Minimizes the artifact (libFuzzer -minimize_crash) and saves it with its report."""
    fid = fnd.finding_id(cls, sig)
    dst = os.path.join(fdir, fid + ".yaml")
    shutil.copy(art, dst)
    if cls in ("sanitizer", "crash", "internal-error", "generate-rejects", "unexpected-exit"):
        mini = os.path.join(fdir, fid + ".min")
        subprocess.run([a.fuzzer, "-minimize_crash=1", "-runs=2000", f"-timeout={a.timeout}",
                        f"-exact_artifact_path={mini}", art], capture_output=True,
                       env=dict(os.environ, TILEGEN_FUZZ_KNOWN=""), timeout=1800)
        if os.path.exists(mini):
            p = subprocess.run([a.fuzzer, mini], capture_output=True, timeout=600)
            mlog = p.stderr.decode("utf-8", "replace")
            if p.returncode != 0 and classify_log(mlog) == (cls, sig):
                shutil.move(mini, dst)
            else:
                os.remove(mini)
    with open(os.path.join(fdir, fid + ".txt"), "w") as out:
        out.write(f"class: {cls}\nsignature: {sig}\ninput: {fid}.yaml (run: tilegen_fuzz_spec {fid}.yaml, "
                  f"or tilegen check --targets c,sm_80,sm_90a,wgsl {fid}.yaml)\n\n{log[-6000:]}")


if __name__ == "__main__":
    sys.exit(main())
