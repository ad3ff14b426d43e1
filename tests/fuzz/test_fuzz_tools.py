#!/usr/bin/env python3
"""Tests of the fuzzers' own parts (ctest fuzz.tools): the program generator is deterministic
and its programs pass tilegen's front end; the finding classifier reads sanitizer reports,
internal errors and signals and abstracts their signatures; the YAML writer quotes what it must;
the known-findings list matches by class and regex.

  test_fuzz_tools.py TILEGEN
"""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import findings as fnd  # noqa: E402
import specgen  # noqa: E402
import yamlout  # noqa: E402

TILEGEN = None

ASAN_REPORT = """=================================================================
==123==ERROR: AddressSanitizer: heap-use-after-free on address 0x602000001234 at pc 0x55 bp 0x7ff sp 0x7fe
READ of size 1 at 0x602000001234 thread T0
    #0 0x5555 in tilegen::passes::(anonymous namespace)::shape_class_reps(tilegen::ir::Kernel const&, std::map<int, int> const&) /src/generator/passes/TileRecommend.cpp:412:17
    #1 0x5556 in tilegen::passes::recommend(tilegen::ir::Kernel const&) /src/generator/passes/TileRecommend.cpp:530:9
    #2 0x5557 in std::vector<int>::at(unsigned long) /usr/include/c++/12/bits/stl_vector.h:1100:3
    #3 0x5558 in tilegen::tools::Driver::check(tilegen::tools::Options const&) /src/generator/tools/Driver.cpp:397:19
    #4 0x5559 in main /src/generator/tools/tilegen.cpp:250:3

0x602000001234 is located 4 bytes inside of 16-byte region
freed by thread T0 here:
    #0 0x6666 in operator delete(void*) (/src/build/generator/tools/tilegen+0x1)
    #1 0x6667 in tilegen::ir::simplify(tilegen::ir::Expr const&) /src/generator/ir/Simplify.cpp:90:1
SUMMARY: AddressSanitizer: heap-use-after-free /src/generator/passes/TileRecommend.cpp:412:17 in shape_class_reps
"""

UBSAN_REPORT = """/src/generator/spec/LowerExpr.cpp:211:14: runtime error: negation of -9223372036854775808 cannot be represented in type 'int64_t' (aka 'long'); cast to an unsigned type to negate this value to itself
    #0 0x77 in tilegen::spec::(anonymous namespace)::fold(tilegen::spec::Expr const&) /src/generator/spec/LowerExpr.cpp:211:14
    #1 0x78 in tilegen::spec::lower_expr(tilegen::spec::Expr const&) /src/generator/spec/LowerExpr.cpp:300:3
SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior /src/generator/spec/LowerExpr.cpp:211:14
"""


class Generator(unittest.TestCase):
    def test_deterministic(self):
        for seed in (1, 7, 123456789):
            self.assertEqual(specgen.generate(seed), specgen.generate(seed))
        self.assertNotEqual(specgen.generate(1), specgen.generate(2))

    def test_programs_pass_the_front_end(self):
        """Every generated program is a well-formed spec: `tilegen kernels` (the front end and the
        library-wide name checks) accepts it."""
        bad = []
        with tempfile.TemporaryDirectory() as d:
            for seed in range(1, 31):
                path = os.path.join(d, f"p{seed}.yaml")
                with open(path, "w") as f:
                    f.write(specgen.generate(seed))
                p = subprocess.run([TILEGEN, "kernels", path], capture_output=True, text=True)
                if p.returncode != 0:
                    bad.append(f"seed {seed}: exit {p.returncode}: {p.stderr[:300]}")
        self.assertEqual(bad, [])

    def test_uses_the_language(self):
        """Over 200 programs every op, both transposes, value sets, classes, overrides, ranges,
        scalar requires and split loops occur."""
        text = "".join(specgen.generate(s) for s in range(200))
        for needle in ["- copy:", "- fill:", "- gemm:", "- reduce:", "- parallel:", "- for:", "- pipelined:",
                       "- if:", "else:", "- atomic_add:", "transpose_a: true", "transpose_b: true", "clear:",
                       "values:", "classes:", "targets:", "range:", "require:", "split:", "let ", "+=",
                       "multiple_of:", "flags:", "scalars:", "types:", "pad:", "local:", "shared:"]:
            self.assertIn(needle, text, needle)


class Classifier(unittest.TestCase):
    def test_asan(self):
        cls, sig = fnd.classify_run(-6, "", ASAN_REPORT, False)
        self.assertEqual(cls, "sanitizer")
        self.assertEqual(sig, "AddressSanitizer: heap-use-after-free | tilegen::passes::shape_class_reps "
                              "(TileRecommend.cpp) < "
                              "tilegen::passes::recommend (TileRecommend.cpp) < "
                              "tilegen::tools::Driver::check (Driver.cpp)")

    def test_ubsan(self):
        cls, sig = fnd.classify_run(-6, "", UBSAN_REPORT, False)
        self.assertEqual(cls, "sanitizer")
        self.assertTrue(sig.startswith("UBSan LowerExpr.cpp: negation of N cannot be represented"), sig)
        self.assertIn("tilegen::spec::fold (LowerExpr.cpp)", sig)

    def test_internal_error(self):
        err = ("internal error: /src/generator/layout/Layout.cpp:88: elementwise: columns not divisible by "
               "the threads [cols % (threads / rows) == 0]\nThis is a bug in tilegen 0.1.0\n")
        self.assertEqual(fnd.classify_run(70, "", err, False),
                         ("internal-error", "layout/Layout.cpp:N: elementwise: columns not divisible by the "
                                            "threads [cols % (...) == N]"))

    def test_exit_codes(self):
        self.assertIsNone(fnd.classify_run(0, "", "", False))
        self.assertIsNone(fnd.classify_run(1, "", "x.yaml:1:1: error: unknown op 'cpy'\n", False))
        self.assertEqual(fnd.classify_run(-11, "", "", False), ("crash", "signal 11"))
        self.assertEqual(fnd.classify_run(None, "", "", True)[0], "hang")
        self.assertEqual(fnd.classify_run(3, "", "", False)[0], "unexpected-exit")

    def test_normalize(self):
        self.assertEqual(fnd.normalize("kernel 'k7' uses f64 at 12:3, 0xdeadbeef"),
                         "kernel 'X' uses f64 at N:N, 0xX")

    def test_known_list(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("# comment\nwgsl-f64 internal-error which WGSL does not have\n")
        try:
            k = fnd.KnownList(f.name)
            self.assertEqual(k.match("internal-error", "kernel 'X' uses f64 (...), which WGSL does not have"),
                             "wgsl-f64")
            self.assertIsNone(k.match("sanitizer", "which WGSL does not have"))
            self.assertIsNone(k.match("internal-error", "something else"))
        finally:
            os.unlink(f.name)


class Yaml(unittest.TestCase):
    def test_quoting(self):
        text = yamlout.dump({"kernel": "k", "summary": "a: b # c", "x": ["yes", "1.5", "-inf", "A[i, j]"],
                             "f": True, "n": 3})
        self.assertIn('summary: "a: b # c"', text)
        self.assertIn('x: ["yes", 1.5, "-inf", "A[i, j]"]', text)
        self.assertIn("f: true", text)

    def test_round_trip(self):
        try:
            import yaml
        except ImportError:
            self.skipTest("PyYAML is not installed")
        def numbers(t):  # an expression that is a number is written as one (the spec reads both)
            if isinstance(t, dict):
                return {k: numbers(v) for k, v in t.items()}
            if isinstance(t, list):
                return [numbers(v) for v in t]
            if isinstance(t, str):
                try:
                    return float(t) if any(c in t for c in ".eE") else int(t)
                except ValueError:
                    return t
            return t

        for seed in range(50):
            tree = specgen.Generator(seed).program()
            self.assertEqual(numbers(yaml.safe_load(specgen.render(tree, seed))), numbers(tree))


if __name__ == "__main__":
    TILEGEN = sys.argv.pop(1) if len(sys.argv) > 1 else "tilegen"
    unittest.main(verbosity=2)
