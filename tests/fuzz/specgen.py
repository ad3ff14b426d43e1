"""Grammar-based generator of random VALID tilegen specs (docs/spec.md), deterministic from a seed.

A program is built from the language's rules, not by mutating text: it picks the kernel-level
declarations (types, params with constraints and value sets, flags, scalars with `require`,
tensors), a schedule (tile constants as lists and ranges, `require`, per-target overrides,
shape classes), a grid and a body, and keeps track of what is in scope, each buffer's shape and
dtype and each tensor's access, so that every op it writes type-checks: copy (global <-> on-chip,
on-chip <-> on-chip with casts, pads), fill, gemm (transpose_a/b, clear), reduce (sum/max/min,
clear), parallel (1-3 index variables, let, =, +=, typed random expressions over buffers,
tensors, scalars, params, flags), for (start), pipelined (stages, split with carry/combine),
if/else and atomic_add, nested. Tile sizes and thread counts come from the ranges the shipped
kernels use, so that most programs are accepted on C targets and many on GPU and WGSL targets
(a spec over a GPU's shared memory or registers is a located user error there, not a finding).

Usage as a library: Generator(seed).program() -> an ordered dict (the YAML tree; yamlout.dump
renders it). `python3 specgen.py SEED` prints one program.
"""
import random
import sys

import yamlout

FLOAT_DTYPES = ["f32", "f16", "bf16"]
RARE_DTYPES = ["f64", "e4m3", "e5m2", "i8", "i32", "i64"]
INT_DTYPES = {"i8", "i32", "i64"}


class Buf:
    def __init__(self, name, scope, dtype, axes):
        self.name, self.scope, self.dtype, self.axes = name, scope, dtype, tuple(axes)


class Tensor:
    def __init__(self, name, dtype, dims, access):
        self.name, self.dtype, self.dims, self.access = name, dtype, list(dims), access

    @property
    def readable(self):
        return self.access in ("read", "readwrite")

    @property
    def writable(self):
        return self.access in ("write", "readwrite")


class Generator:
    """One program per instance: Generator(seed).program()."""

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.seed = seed
        self.counter = 0

    # ---- helpers -----------------------------------------------------------------------------
    def chance(self, p):
        return self.r.random() < p

    def pick(self, xs):
        return self.r.choice(list(xs))

    RESERVED = {"i8", "i32", "i64", "f32", "f16", "f64", "e4m3", "e5m2", "bf16"}

    def fresh(self, stem):
        self.counter += 1
        name = f"{stem}{self.counter}"
        return name if name not in self.RESERVED else self.fresh(stem)

    def resolve_dtype(self, d):
        """A dtype as seen by the type rules: a type parameter counts as its first binding."""
        return self.types[d][0] if d in self.types else d

    def is_float(self, d):
        return self.resolve_dtype(d) not in INT_DTYPES and all(
            x not in INT_DTYPES for x in self.types.get(d, [d]))

    def is_int(self, d):
        return all(x in INT_DTYPES for x in self.types.get(d, [d]))

    # ---- kernel-level declarations -----------------------------------------------------------
    def program(self):
        r = self.r
        self.family = self.pick(["gemm"] * 4 + ["rowwise"] * 3 + ["elementwise"] * 3 +
                                ["attention"] * 2 + ["soup"] * 3)
        spec = {}
        spec["kernel"] = self.kernel_name()
        spec["summary"] = self.summary()
        self.types = {}
        if self.chance(0.7):
            n = 2 if self.chance(0.15) else 1
            for name in ["T", "U"][:n]:
                pool = FLOAT_DTYPES + [x for x in ["f64", "e4m3", "e5m2"] if self.chance(0.05)]
                k = 1 if self.chance(0.5) else 2
                self.types[name] = r.sample(pool, k)
            spec["types"] = {k: list(v) for k, v in self.types.items()}

        # Axes: name -> (dim param, tile constant or value param, description)
        need = {"gemm": "MNK", "attention": "MN", "rowwise": "MN", "elementwise": "MN",
                "soup": "MNK"}[self.family]
        if self.family in ("elementwise", "soup") and self.chance(0.3):
            need = need[:1] if self.family == "elementwise" else need
        self.axes = {}
        params = {}
        for a in need:
            params[a] = self.dim_param(a)
            self.axes[a] = "B" + a
        self.value_param = None
        if self.family == "attention" or self.chance(0.2):
            vals = sorted(r.sample([16, 32, 64, 128], 2 if self.chance(0.4) else 1))
            params["D"] = {"values": vals}
            self.value_param = "D"
            self.axes["D"] = "D"
        self.batch = None
        if self.family == "attention" or self.chance(0.2):
            params["Bt"] = "dim"
            self.batch = "Bt"
        spec["params"] = params
        self.dims = [k for k in params if k != "D"]

        self.flags = []
        if self.chance(0.35):
            self.flags = [self.pick(["causal", "use_bias", "flip", "relu"])]
            spec["flags"] = {f: "bool" if self.chance(0.7) else {"type": "bool"} for f in self.flags}

        self.scalars = {}
        if self.chance(0.5):
            sc = {}
            for name in r.sample(["alpha", "beta", "eps", "scale"], self.pick([1, 1, 2])):
                t = self.pick(["f32"] * 12 + (["T"] * 4 if "T" in self.types else []) + ["f64", "i32", "i32"])
                self.scalars[name] = t
                if self.chance(0.4):
                    sc[name] = {"type": t, "require": self.scalar_require(name, t)}
                else:
                    sc[name] = t if self.chance(0.8) else {"type": t}
            spec["scalars"] = sc

        self.tensors = {}
        self.make_tensors()
        spec["tensors"] = {}
        for t in self.tensors.values():
            d = {"type": t.dtype, "shape": list(t.dims)}
            if t.access != "read" or self.chance(0.1):
                d["access"] = t.access
            spec["tensors"][t.name] = d

        spec["schedule"] = self.schedule()
        spec["grid"] = self.grid()
        if self.chance(0.85):
            spec["threads"] = "threads" if "threads" in self.tile_consts else self.pick([64, 128, 256])
        self.loops = []
        self.scope = [[]]  # stack of lists of Buf visible
        self.depth = 0
        spec["body"] = self.body_for_family()
        return spec

    def kernel_name(self):
        stem = self.pick(["gemm", "norm", "mix", "scan", "attn", "ew", "tile", "kern"])
        return f"{stem}_{self.seed % 100000}" if self.chance(0.8) else f"k{self.r.randrange(10**6)}"

    def summary(self):
        words = ["C = A @ B", "row softmax", "elementwise", "a random tile program", "fuzz"]
        s = f"{self.pick(words)} (seed {self.seed})"
        if self.chance(0.1):  # spec text that reaches generated comments and strings
            s += self.pick([" with \"quotes\"", " back\\slash", " 50% of */ it", " a // b",
                            " tab\there", " <html> & 'x'", " ${x} `y`", " é ü 漢"])
        return s

    def dim_param(self, a):
        if self.chance(0.75):
            return "dim"
        d = {"dim": "dynamic"}
        if self.chance(0.6):
            d["multiple_of"] = self.pick([1, 2, 8, 16])
        if self.chance(0.4):
            d["min"] = self.pick([0, 1, 16])
        if self.chance(0.3):
            d["max"] = self.pick([65536, 1 << 20, 1 << 31])
        return d

    def scalar_require(self, name, t):
        if t in INT_DTYPES:
            return self.pick([f"{name} >= 0", f"{name} > 0 && {name} < 1000000"])
        return self.pick([f"{name} > 0", f"{name} > 0 && {name} < inf", f"{name} >= 0.0",
                          f"{name} == {name}", f"!({name} < 0) && {name} <= 1e6"])

    def tensor_dtype(self, writable_float=True):
        if self.types and self.chance(0.75):
            return self.pick(self.types)
        return self.pick(["f32"] * 4 + ["f16", "bf16"] + (["f64", "i32", "i32"] if self.chance(0.2) else []))

    def add_tensor(self, stem, dims, access, dtype=None):
        name = stem if stem not in self.tensors else self.fresh(stem)
        self.tensors[name] = Tensor(name, dtype or self.tensor_dtype(), dims, access)
        return self.tensors[name]

    def lead(self):
        return [self.batch] if self.batch else []

    def make_tensors(self):
        f = self.family
        b = self.lead()
        if f == "gemm":
            ta, tb = self.chance(0.25), self.chance(0.3)
            self.trans = (ta, tb)
            self.add_tensor("A", b + (["K", "M"] if ta else ["M", "K"]), "read")
            self.add_tensor("B", b + (["N", "K"] if tb else ["K", "N"]), "read")
            if self.chance(0.3):
                self.add_tensor("bias", ["N"], "read")
            if self.chance(0.2):
                self.add_tensor("C", b + ["M", "N"], "write", dtype="f32" if self.chance(0.5) else "i32")
                self.c_atomic = True
            else:
                self.add_tensor("C", b + ["M", "N"], self.pick(["write"] * 4 + ["readwrite"]))
                self.c_atomic = False
        elif f == "attention":
            self.add_tensor("Q", b + ["M", "D"], "read")
            self.add_tensor("K", b + ["N", "D"], "read")
            self.add_tensor("V", b + ["N", "D"], "read")
            self.add_tensor("O", b + ["M", "D"], "write")
        elif f == "rowwise":
            self.add_tensor("X", b + ["M", "N"], "read")
            if self.chance(0.4):
                self.add_tensor("W", ["N"], "read")
            self.add_tensor("Y", b + ["M", "N"], self.pick(["write", "write", "readwrite"]))
        else:
            dims = [d for d in "MNK" if d in self.axes]
            for i in range(self.pick([1, 2, 2, 3])):
                ds = dims if self.chance(0.7) else self.r.sample(dims, len(dims))
                self.add_tensor(self.pick(["X", "Z", "In"]), b + ds, "read")
            for i in range(self.pick([1, 1, 2])):
                self.add_tensor(self.pick(["Y", "Out", "R"]), b + dims,
                                self.pick(["write", "write", "readwrite"]))
            if self.value_param and self.chance(0.5):
                self.add_tensor("P", [dims[0], "D"], "read")

    # ---- schedule ----------------------------------------------------------------------------
    def candidates(self, axis):
        fam = self.family
        if axis == "K":
            pool = [16, 32, 64, 128]
        elif fam in ("rowwise",) and axis == "N":
            pool = [64, 128, 256, 512, 1024]
        elif fam == "rowwise" and axis == "M":
            pool = [1, 2, 4, 8, 16]
        else:
            pool = [16, 32, 64, 128]
        if self.chance(0.1):
            pool = pool + [self.pick([8, 24, 48, 96, 192, 3, 7])]
        if self.chance(0.15):
            lo = self.pick(pool)
            return {"range": [lo, lo * self.pick([1, 2, 4])], "multiple_of": lo}
        c = self.r.sample(pool, self.pick([1, 2, 2, 3]))
        if min(c) > pool[1] and self.chance(0.7):  # a small tile too: GPU register budgets
            c.append(pool[self.pick([0, 1])])
        return c

    def schedule(self):
        sch = {}
        self.tile_consts = {}
        for a, t in self.axes.items():
            if t == "D":
                continue
            sch[t] = self.candidates(a)
            self.tile_consts[t] = sch[t]
        if self.family in ("gemm", "attention", "soup") or self.chance(0.3):
            sch["stages"] = self.r.sample([1, 2, 3, 4], self.pick([1, 2]))
            self.tile_consts["stages"] = sch["stages"]
        if self.chance(0.85):
            sch["threads"] = list(dict.fromkeys(self.r.sample([32, 64, 128, 128, 256, 256], self.pick([1, 2, 2, 3]))))
            self.tile_consts["threads"] = sch["threads"]
        req = []
        if self.chance(0.35):
            consts = [c for c in self.tile_consts if c not in ("stages",)]
            for _ in range(self.pick([1, 1, 2])):
                x, y = self.pick(consts), self.pick(consts)
                req.append(self.pick([f"{x} * {y} >= 256", f"{x} <= 4 * {y}", f"{x} % 16 == 0 || {x} < 16",
                                      f"{x} * {y} <= 65536", f"{x} >= 1"]))
            if self.flags and self.chance(0.3):
                req.append(f"!{self.flags[0]} || {consts[0]} >= 1")
            if self.value_param and self.chance(0.3):
                req.append(f"{self.value_param} * {consts[0]} <= 1 << 20".replace(" << 20", " * 1048576"))
        if req:
            sch["require"] = req
        if self.chance(0.75):
            sch["targets"] = self.target_overrides()
        if self.chance(0.2) and self.dims:
            sch["classes"] = self.classes()
        return sch

    def target_overrides(self):
        out = {}
        small = {"M": [8, 16], "N": [16, 32], "K": [8, 16]}
        tgts = self.r.sample(["c", "c_avx512", "sm_80", "sm_90", "sm_90a", "wgsl", "wgsl_f16"],
                             self.pick([1, 2, 3]))
        if self.chance(0.7) and not any(t.startswith("wgsl") for t in tgts):
            tgts.append("wgsl")  # WebGPU's 16 KiB of workgroup memory: most specs need small tiles
        for tgt in tgts:
            o = {}
            for c in self.tile_consts:
                if not (tgt.startswith("wgsl") and c != "stages" and c != "threads") and not self.chance(0.5):
                    continue
                if c == "threads":
                    o[c] = [64] if tgt.startswith("wgsl") else self.r.sample([128, 256], 1)
                elif c == "stages":
                    o[c] = self.r.sample([1, 2, 3, 4], 1)
                elif tgt.startswith("wgsl"):
                    a = c[1:] if c.startswith("B") else "M"
                    o[c] = list(small.get(a, [16]))[: self.pick([1, 2])]
                else:
                    o[c] = self.r.sample([16, 32, 64, 128], self.pick([1, 2]))
            if o:
                out[tgt] = o
        return out or {"c": {next(iter(self.tile_consts)): [32]}}

    def classes(self):
        d = self.dims[0]
        out = {}
        if self.chance(0.5):
            out["small"] = f"{d} <= 64"
        else:
            out["small"] = {"when": f"{d} <= 64", "shape": {d: self.pick([16, 32, 64])}}
            if self.chance(0.4):
                c = next(iter(self.tile_consts))
                out["small"]["targets"] = {self.pick(["sm_80", "sm_90a"]): {c: [16, 32]}}
        if self.chance(0.3) and len(self.dims) > 1:
            out["mid"] = f"{d} * {self.dims[1]} <= 1048576"
        return out

    # ---- grid --------------------------------------------------------------------------------
    def grid(self):
        """Block indices: one per tiled axis of the output (x first), plus the batch."""
        g = {}
        self.grid_axes = {}  # axis -> block index name
        order = {"gemm": "NM", "attention": "M", "rowwise": "M", "elementwise": "NM", "soup": "NM"}
        axes = [a for a in order[self.family] if a in self.axes]
        if self.family in ("rowwise",) and self.chance(0.2):
            axes = []
        names = ["bx", "by", "bz"]
        for a in axes:
            n = names[len(g)]
            tile = self.axes[a]
            g[n] = self.pick([f"cdiv({a}, {tile})", f"({a} + {tile} - 1) / {tile}"]) \
                if self.chance(0.9) else f"cdiv({a}, {tile})"
            self.grid_axes[a] = n
        if self.batch and len(g) < 3:
            n = names[len(g)]
            g[n] = self.batch
            self.grid_batch = n
        else:
            self.grid_batch = None
        if not g:
            g["bx"] = self.pick(["1", "cdiv(M, 4)", "M"]) if "M" in self.axes else "1"
        return g

    # ---- expressions -------------------------------------------------------------------------
    def axis_offset(self, a):
        """The start index of the current tile along axis a in its tensor dim."""
        tile = self.axes.get(a)
        if a in self.grid_axes:
            return f"{self.grid_axes[a]} * {tile}"
        for var, la in reversed(self.loops):
            if la == a:
                return f"{var} * {tile}"
        return "0"

    def lead_index(self, dim):
        if dim == self.batch and self.grid_batch:
            return self.grid_batch
        return "0"

    def tensor_region(self, t, axes):
        """Start indices of t for a tile whose axes are `axes` (t's last dims), or None."""
        n = len(axes)
        if n > len(t.dims) or list(t.dims[len(t.dims) - n:]) != list(axes):
            return None
        idx = [self.lead_index(d) for d in t.dims[:len(t.dims) - n]]
        idx += [self.axis_offset(a) if a in self.axes and self.axes[a] != "D" else "0" for a in axes]
        return f"{t.name}[{', '.join(idx)}]"

    def visible(self):
        return [b for s in self.scope for b in s]

    def int_atom(self, pvars):
        opts = [str(self.pick([0, 1, 2, 3, 7, 16]))]
        opts += [v for v, _ in pvars]
        opts += [v for v, _ in self.loops]
        opts += list(self.grid_axes.values()) + ([self.grid_batch] if self.grid_batch else [])
        opts += self.dims + [c for c in self.tile_consts]
        if self.value_param:
            opts.append(self.value_param)
        return self.pick(opts)

    def int_expr(self, pvars, depth=2):
        if depth <= 0 or self.chance(0.4):
            return self.int_atom(pvars)
        a, b = self.int_expr(pvars, depth - 1), self.int_expr(pvars, depth - 1)
        k = self.r.randrange(7)
        if k == 0:
            return f"{a} + {b}"
        if k == 1:
            return f"{a} * {self.pick([1, 2, 3])}"
        if k == 2:
            return f"({a}) / {self.pick([1, 2, 4]) if self.chance(0.5) else self.pick(list(self.tile_consts))}"
        if k == 3:
            return f"({a}) % {self.pick([2, 3, 8])}"
        if k == 4:
            return f"{self.pick(['min', 'max'])}({a}, {b})"
        if k == 5:
            return f"cdiv({a}, {self.pick([1, 2, 16])})"
        return f"{a} - {b}"

    def bool_expr(self, pvars, depth=2, uniform=False):
        if self.flags and self.chance(0.3):
            f = self.pick(self.flags)
            return f if self.chance(0.6) else f"!{f}"
        if depth <= 0 or self.chance(0.5):
            a = self.int_expr(pvars, 1)
            b = self.int_expr(pvars, 1)
            return f"{a} {self.pick(['<', '<=', '>', '>=', '==', '!='])} {b}"
        return f"({self.bool_expr(pvars, depth - 1, uniform)}) {self.pick(['&&', '||'])} " \
               f"({self.bool_expr(pvars, depth - 1, uniform)})"

    def uniform_cond(self):
        # if conditions: params, flags, scalars, block indices, loop vars (no buffers, no
        # parallel vars)
        opts = []
        if self.flags:
            opts += [self.flags[0], f"!{self.flags[0]}"]
        opts += [f"{d} > {self.pick([0, 16, 100])}" for d in self.dims]
        opts += [f"{g} % 2 == 0" for g in self.grid_axes.values()]
        opts += [f"{v} == 0" for v, _ in self.loops] + [f"{v} + 1 < {self.pick(self.dims)}" for v, _ in self.loops]
        num_scalars = [s for s, t in self.scalars.items() if t not in INT_DTYPES]
        if num_scalars:
            opts.append(f"{self.pick(num_scalars)} > 0.5")
        c = self.pick(opts)
        if self.chance(0.2):
            c = f"{c} && {self.pick(opts)}"
        return c

    def float_atom(self, pvars, readable, lets):
        r = self.r
        k = r.randrange(10)
        if k <= 3 and readable:
            return self.read_elem(self.pick(readable), pvars)
        if k == 4 and lets:
            return self.pick(lets)
        if k == 5 and self.scalars:
            return self.pick(list(self.scalars))
        if k == 6:
            return f"f32({self.int_atom(pvars)})"
        return self.pick(["1.0", "0.5", "2.0", "0.0", "1e-3", "-1.5", "3", "0.7071067811865476"])

    def float_expr(self, pvars, readable, lets, depth=3):
        if depth <= 0 or self.chance(0.3):
            return self.float_atom(pvars, readable, lets)
        k = self.r.randrange(12)
        a = self.float_expr(pvars, readable, lets, depth - 1)
        if k <= 3:
            b = self.float_expr(pvars, readable, lets, depth - 1)
            return f"{a} {self.pick(['+', '-', '*', '+', '*'])} {b}"
        if k == 4:
            b = self.float_expr(pvars, readable, lets, depth - 1)
            return f"({a}) / ({b} + 2.0)" if self.chance(0.5) else f"{a} / {self.pick(['2.0', '3', '0.5'])}"
        if k <= 6:
            fn = self.pick(["exp", "exp2", "log", "sqrt", "rsqrt", "tanh", "erf", "abs", "floor", "ceil"])
            return f"{fn}({a})"
        if k == 7:
            b = self.float_expr(pvars, readable, lets, depth - 1)
            return f"{self.pick(['min', 'max'])}({a}, {b})"
        if k == 8:
            b = self.float_expr(pvars, readable, lets, depth - 1)
            return f"(({self.bool_expr(pvars, 1)}) ? {a} : {b})"
        if k == 9:
            b = self.float_expr(pvars, readable, lets, depth - 1)
            return f"({a} {self.pick(['<', '>=', '=='])} {b} ? {a} : -inf)" if self.chance(0.5) else f"-({a})"
        if k == 10:
            return f"{self.pick(['f32', 'bf16', 'f16'] * 12 + ['f64'])}({a})"
        return f"({a})"

    def read_elem(self, src, pvars):
        """src: a Buf or Tensor readable with the parallel vars pvars [(var, axis)]."""
        amap = {a: v for v, a in pvars}
        if isinstance(src, Buf):
            return f"{src.name}[{', '.join(amap[a] for a in src.axes)}]"
        idx = []
        n_lead = len(src.dims) - sum(1 for d in src.dims if d in amap)
        for i, d in enumerate(src.dims):
            if d in amap and i >= n_lead:
                off = self.axis_offset(d)
                idx.append(amap[d] if off == "0" else f"{off} + {amap[d]}")
            else:
                idx.append(self.lead_index(d))
        return f"{src.name}[{', '.join(idx)}]"

    def readable_for(self, pvars, exclude=()):
        axes = {a for _, a in pvars}
        out = [b for b in self.visible() if set(b.axes) <= axes and len(set(b.axes)) == len(b.axes)
               and b.name not in exclude]
        for t in self.tensors.values():
            if t.readable and t.name not in exclude:
                tail = [d for d in t.dims if d in axes]
                lead = [d for d in t.dims if d not in axes]
                if tail and all(d == self.batch for d in lead) and t.dims[len(lead):] == tail:
                    out.append(t)
        return out

    # ---- ops ---------------------------------------------------------------------------------
    def declare(self, scope, dtype, axes, stem=None):
        if scope == "local":  # one thread's registers: a few elements, literal extents
            axes = tuple(self.pick(["2", "4", "8"]) for _ in range(min(len(axes), 2)))
        b = Buf(self.fresh(stem or {"shared": "s", "fragment": "f", "local": "l"}[scope]), scope,
                dtype, axes)
        self.scope[-1].append(b)
        return b

    def decl_op(self, bufs):
        """One shared/fragment/local op declaring bufs (all of the same scope)."""
        scope = bufs[0].scope
        return {scope: {b.name: [b.dtype] + [self.axes[a] if a in self.axes else a for a in b.axes]
                        for b in bufs}}

    def copy_in(self, buf, pad=None):
        srcs = [t for t in self.tensors.values() if t.readable and self.tensor_region(t, buf.axes)
                and not (self.is_int(t.dtype) is False and self.is_int(buf.dtype))]
        srcs = [t for t in srcs if not (not self.is_int(t.dtype) and self.is_int(buf.dtype))]
        if not srcs:
            return None
        t = self.pick(srcs)
        op = {"src": self.tensor_region(t, buf.axes), "dst": buf.name}
        if pad is not None:
            op["pad"] = pad
        elif self.chance(0.25) and not self.is_int(t.dtype):
            op["pad"] = self.pick([0, "-inf", 1.0, "0.5"])
        return {"copy": op}

    def copy_out(self, buf):
        dsts = [t for t in self.tensors.values() if t.writable and self.tensor_region(t, buf.axes)
                and not (self.is_int(t.dtype) and not self.is_int(buf.dtype))]
        if not dsts:
            return None
        t = self.pick(dsts)
        return {"copy": {"src": buf.name, "dst": self.tensor_region(t, buf.axes)}}

    def atomic_out(self, buf):
        dsts = [t for t in self.tensors.values() if t.writable and t.dtype in ("f32", "i32")
                and self.tensor_region(t, buf.axes)
                and not (t.dtype == "i32" and not self.is_int(buf.dtype))]
        if not dsts:
            return None
        t = self.pick(dsts)
        return {"atomic_add": {"src": buf.name, "dst": self.tensor_region(t, buf.axes)}}

    def fill(self, buf):
        if self.is_int(buf.dtype):
            v = self.pick([0, 1, "-1"])
        else:
            v = self.pick([0, 0, 1.0, "-inf", "inf", "0.5"] +
                          [s for s, t in self.scalars.items() if t not in INT_DTYPES] +
                          [f"{s} * 2" for s, t in self.scalars.items() if t not in INT_DTYPES])
        return {"fill": {"dst": buf.name, "value": v}}

    def parallel(self, target_axes=None, writes=None):
        """A parallel op over the axes of a visible buffer; stores into buffers of those axes
        (or writable tensors), each point reading only its own element of what it writes."""
        vis = self.visible()
        cands = [b for b in vis if len(b.axes) <= 3 and len(set(b.axes)) == len(b.axes)]
        if writes is None:
            if not cands:
                return None
            writes = self.pick(cands)
        axes = target_axes or list(writes.axes)
        var_names = ["i", "j", "l"]
        pvars = [(self.fresh(var_names[n]) if self.chance(0.2) else var_names[n], a) for n, a in enumerate(axes)]
        # parallel extents: the tile constants (or value param) of the axes, or a literal
        head = {v: self.axes.get(a, a) for v, a in pvars}
        stores = [writes] + [b for b in vis if b is not writes and set(b.axes) == set(axes)
                             and len(b.axes) == len(axes) and self.chance(0.2)]
        stores += [t for t in self.tensors.values() if t.writable and self.chance(0.15)
                   and [d for d in t.dims if d != self.batch] == list(axes)]
        written = {s.name for s in stores}
        readable = self.readable_for(pvars, exclude=written)
        body, lets = [], []
        for _ in range(self.pick([0, 0, 1, 2])):
            name = self.fresh("t")
            body.append(f"let {name} = {self.float_expr(pvars, readable, lets, 2)}")
            lets.append(name)
        for s in stores:
            own = self.read_elem(s, pvars)
            rd = readable + ([s] if isinstance(s, Buf) else [])
            e = self.float_expr(pvars, readable, lets, 3)
            if isinstance(s, Buf) and self.chance(0.3):
                e = f"{own} * {e}" if self.chance(0.5) else f"{own} + {e}"
            dt = s.dtype
            if self.is_int(dt):
                e = f"{self.resolve_dtype(dt) if self.resolve_dtype(dt) in INT_DTYPES else 'i32'}({e})"
            op = "+=" if self.chance(0.15) else "="
            body.append(f"{own} {op} {e}")
            del rd
        return {"parallel": head, "body": body}

    def gemm_ops(self, a_buf, b_buf, c_buf, ta, tb):
        g = {"a": a_buf.name, "b": b_buf.name, "c": c_buf.name}
        if ta or self.chance(0.05):
            g["transpose_a"] = ta
        if tb or self.chance(0.05):
            g["transpose_b"] = tb
        if self.chance(0.3):
            g["clear"] = self.chance(0.5)
        if self.chance(0.05):
            g["fast_accum"] = self.chance(0.5)
        return {"gemm": g}

    def reduce(self, src, dst_scope="fragment"):
        if len(src.axes) < 2:
            return None
        dim = self.r.randrange(len(src.axes))
        dst_axes = src.axes[:dim] + src.axes[dim + 1:]
        vis = [b for b in self.visible() if b.axes == dst_axes and not self.is_int(b.dtype)]
        ops = []
        if vis and self.chance(0.6):
            dst = self.pick(vis)
        else:
            dst = self.declare(dst_scope, "f32", dst_axes)
            ops.append(self.decl_op([dst]))
        red = {"op": self.pick(["sum", "max", "min"]), "src": src.name, "dst": dst.name, "dim": dim}
        if self.chance(0.4):
            red["clear"] = self.chance(0.5)
        ops.append({"reduce": red})
        return ops

    # ---- loops and ifs -----------------------------------------------------------------------
    def loop(self, axis, build_body, pipelined=None, split=None):
        """A for/pipelined loop over axis's tiles; build_body() returns the body ops."""
        var = self.pick(["k", "kk", "it"]) if not any(v == "k" for v, _ in self.loops) else self.fresh("k")
        if any(v == var for v, _ in self.loops):
            var = self.fresh("k")
        tile = self.axes[axis]
        extent = f"cdiv({axis}, {tile})"
        if self.flags and self.chance(0.15):
            extent = f"{self.flags[0]} ? min({extent}, 2) : {extent}"
        if pipelined is None:
            pipelined = self.chance(0.5) and "stages" in self.tile_consts
        head = {"var": var, "extent": extent}
        if pipelined:
            head["stages"] = "stages" if "stages" in self.tile_consts else self.pick([1, 2])
            if split:
                head["split"] = split
        elif self.chance(0.15):
            head["start"] = self.pick([0, 1])
        self.loops.append((var, axis))
        self.scope.append([])
        self.depth += 1
        body = build_body()
        self.depth -= 1
        self.scope.pop()
        self.loops.pop()
        return {("pipelined" if pipelined else "for"): head, "body": body or [self.fill_any()]}

    def fill_any(self):
        vis = self.visible()
        if vis:
            return self.fill(self.pick(vis))
        b = self.declare("local", "f32", ("M",) if "M" in self.axes else (list(self.axes)[0],))
        return self.decl_op([b])

    def maybe_if(self, build):
        """Wraps ops from build() in an if (with an else built the same way) sometimes."""
        if not self.chance(0.15) or self.depth > 3:
            return build()
        cond = self.uniform_cond()
        self.scope.append([])
        self.depth += 1
        then = build()
        self.scope.pop()
        op = {"if": cond, "then": then or [self.fill_any()]}
        if self.chance(0.4):
            self.scope.append([])
            els = build()
            self.scope.pop()
            if els:
                op["else"] = els
        self.depth -= 1
        return [op]

    # ---- families ----------------------------------------------------------------------------
    def body_for_family(self):
        return {"gemm": self.gemm_body, "attention": self.attention_body,
                "rowwise": self.rowwise_body, "elementwise": self.elementwise_body,
                "soup": self.soup_body}[self.family]()

    def operand_dtype(self):
        if self.types and self.chance(0.8):
            fl = [t for t in self.types if self.is_float(t)]
            if fl:
                return self.pick(fl)
        return self.pick(["f32", "f16", "bf16"])

    def gemm_body(self):
        ta, tb = self.trans
        body = []
        dt = self.operand_dtype()
        a_scope = "shared" if self.chance(0.85) else "fragment"
        a = self.declare(a_scope, dt, ("K", "M") if ta else ("M", "K"), "A_s")
        b = self.declare("shared" if self.chance(0.9) else "fragment", dt, ("N", "K") if tb else ("K", "N"), "B_s")
        if a.scope == b.scope:
            body.append({a.scope: {a.name: [a.dtype] + [self.axes[x] for x in a.axes],
                                   b.name: [b.dtype] + [self.axes[x] for x in b.axes]}})
        else:
            body += [self.decl_op([a]), self.decl_op([b])]
        acc = self.declare("fragment", "f32" if self.chance(0.9) else "T" if "T" in self.types
                           and self.is_float("T") else "f32", ("M", "N"), "acc")
        body.append(self.decl_op([acc]))
        body.append({"fill": {"dst": acc.name, "value": 0}})

        def k_body():
            ops = []
            ops += self.maybe_if(lambda: [x for x in [self.copy_in(a)] if x])
            ops += [x for x in [self.copy_in(b)] if x]
            if self.chance(0.2):
                p = self.parallel(writes=a) if a.scope == "fragment" or self.chance(0.3) else None
                if p:
                    ops.append(p)
            ops.append(self.gemm_ops(a, b, acc, ta, tb))
            return ops

        split = None
        if self.chance(0.25) and "stages" in self.tile_consts:
            part = self.fresh("acc_part")
            split = {"carry": {acc.name: part},
                     "combine": [{"parallel": {"i": self.axes["M"], "j": self.axes["N"]},
                                  "body": [f"{acc.name}[i, j] = {acc.name}[i, j] + {part}[i, j]"]}]}
        body.append(self.loop("K", k_body, pipelined=True if split else None, split=split))
        # epilogue
        for _ in range(self.pick([0, 1, 1, 2])):
            p = self.parallel(writes=acc)
            if p:
                body.append(p)
        if self.chance(0.2):
            body += self.reduce(acc) or []
        out_buf = acc
        if self.chance(0.25):
            cast = self.declare("fragment", self.tensors["C"].dtype if not self.is_int(self.tensors["C"].dtype)
                                else "f32", ("M", "N"), "c")
            body.append(self.decl_op([cast]))
            body.append({"copy": {"src": acc.name, "dst": cast.name}})
            out_buf = cast
        if self.c_atomic:
            op = self.atomic_out_op(out_buf)
            body.append(op or self.copy_out(out_buf))
        else:
            op = self.copy_out(out_buf)
            if op:
                body += self.maybe_if(lambda: [op])
        return [x for x in body if x]

    def atomic_out_op(self, buf):
        return self.atomic_out(buf)

    def attention_body(self):
        dt = self.operand_dtype()
        q = self.declare("shared", dt, ("M", "D"), "Q_s")
        k = self.declare("shared", dt, ("N", "D"), "K_s")
        v = self.declare("shared", dt, ("N", "D"), "V_s")
        body = [{"shared": {q.name: [dt, self.axes["M"], "D"], k.name: [dt, self.axes["N"], "D"],
                            v.name: [dt, self.axes["N"], "D"]}}]
        s = self.declare("fragment", "f32", ("M", "N"), "s")
        p = self.declare("fragment", dt, ("M", "N"), "p")
        acc = self.declare("fragment", "f32", ("M", "D"), "acc")
        m = self.declare("fragment", "f32", ("M",), "m")
        mb = self.declare("fragment", "f32", ("M",), "mb")
        l = self.declare("fragment", "f32", ("M",), "l")
        body.append({"fragment": {b.name: [b.dtype] + [self.axes[x] for x in b.axes]
                                  for b in (s, p, acc, m, mb, l)}})
        body.append(self.copy_in(q))
        body += [{"fill": {"dst": acc.name, "value": 0}}, {"fill": {"dst": m.name, "value": "-inf"}},
                 {"fill": {"dst": l.name, "value": 0}}]
        scale = next((x for x, t in self.scalars.items() if t == "f32"), "0.125")

        def kv():
            ops = [self.copy_in(k, pad=0), self.copy_in(v, pad=0),
                   {"gemm": {"a": q.name, "b": k.name, "c": s.name, "transpose_b": True, "clear": True}}]
            ops.append({"parallel": {"i": self.axes["M"], "j": self.axes["N"]},
                        "body": [f"let kv = {self.loops[-1][0]} * {self.axes['N']} + j",
                                 f"{s.name}[i, j] = kv >= N ? -inf : {s.name}[i, j] * {scale}"]})
            ops.append({"reduce": {"op": "max", "src": s.name, "dst": mb.name, "dim": 1}})
            ops.append({"parallel": {"i": self.axes["M"]},
                        "body": [f"let mn = max({m.name}[i], {mb.name}[i])",
                                 f"{l.name}[i] = mn == -inf ? 0.0 : {l.name}[i] * exp({m.name}[i] - mn)",
                                 f"{mb.name}[i] = mn == -inf ? 1.0 : exp({m.name}[i] - mn)",
                                 f"{m.name}[i] = mn"]})
            ops.append({"parallel": {"i": self.axes["M"], "j": self.axes["N"]},
                        "body": [f"{s.name}[i, j] = {m.name}[i] == -inf ? 0.0 : exp({s.name}[i, j] - {m.name}[i])"]})
            ops.append({"reduce": {"op": "sum", "src": s.name, "dst": l.name, "dim": 1, "clear": False}})
            ops.append({"copy": {"src": s.name, "dst": p.name}})
            ops.append({"parallel": {"i": self.axes["M"], "j": "D"},
                        "body": [f"{acc.name}[i, j] = {acc.name}[i, j] * {mb.name}[i]"]})
            ops.append({"gemm": {"a": p.name, "b": v.name, "c": acc.name}})
            if self.chance(0.3):
                extra = self.parallel(writes=s)
                if extra:
                    ops.insert(4, extra)
            return [x for x in ops if x]

        body.append(self.loop("N", kv))
        body.append({"parallel": {"i": self.axes["M"], "j": "D"},
                     "body": [f"{acc.name}[i, j] = {l.name}[i] == 0.0 ? 0.0 : {acc.name}[i, j] / {l.name}[i]"]})
        body.append(self.copy_out(acc))
        return [x for x in body if x]

    def rowwise_body(self):
        x = self.declare("fragment", "f32", ("M", "N"), "x")
        e = self.declare("fragment", "f32", ("M", "N"), "e")
        acc = self.declare("fragment", "f32", ("M",), "r")
        body = [self.decl_op([x, e, acc])]
        w = None
        if "W" in self.tensors and self.chance(0.8):
            w = self.declare("fragment", "f32", ("N",), "w")
            body.append(self.decl_op([w]))
        body.append(self.fill(acc))

        def pass1():
            ops = [self.copy_in(x)]
            ops.append(self.parallel(writes=e) or self.fill(e))
            ops += self.reduce(e) or []
            if self.chance(0.5):
                ops.append({"reduce": {"op": self.pick(["sum", "max"]), "src": x.name, "dst": acc.name,
                                       "dim": 1, "clear": False}})
            return [o for o in ops if o]

        body.append(self.loop("N", pass1, pipelined=False if self.chance(0.7) else None))
        if self.chance(0.7):
            body.append({"parallel": {"i": self.axes["M"]},
                         "body": [f"{acc.name}[i] = {self.pick(['rsqrt', 'exp', 'abs', 'sqrt'])}({acc.name}[i] / max(N, 1) + 1e-5)"]})

        def pass2():
            ops = [self.copy_in(x)]
            if w:
                ops.append(self.copy_in(w))
            ops.append(self.parallel(writes=x))
            ops += self.maybe_if(lambda: [self.copy_out(x)])
            return [o for o in ops if o]

        body.append(self.loop("N", pass2, pipelined=False))
        return [o for o in body if o]

    def elementwise_body(self):
        axes = [a for a in ("M", "N", "K") if a in self.axes][:2]
        if self.value_param and self.chance(0.3):
            axes = axes[:1] + ["D"]
        if self.chance(0.3):
            axes = axes[:1]
        body = []
        ins = []
        for _ in range(self.pick([1, 2])):
            b = self.declare(self.pick(["fragment", "fragment", "shared", "local"]),
                             self.pick(["f32", "f32"] + ([self.pick(self.types)] if self.types else []) + ["i32"]),
                             axes)
            body.append(self.decl_op([b]))
            ci = self.copy_in(b)
            body.append(ci if ci else self.fill(b))
            ins.append(b)
        out = self.declare("fragment", "f32", axes, "o")
        body.append(self.decl_op([out]))
        body += self.maybe_if(lambda: [self.parallel(writes=out)])
        if self.chance(0.3):
            body.append(self.parallel(writes=self.pick(ins + [out])))
        if len(axes) >= 2 and self.chance(0.3):
            body += self.reduce(out) or []
        co = self.copy_out(out)
        if co is None:
            cast = self.declare("fragment", self.pick([t for t in self.tensors.values() if t.writable]).dtype,
                                axes, "oc")
            body.append(self.decl_op([cast]))
            body.append({"copy": {"src": out.name, "dst": cast.name}})
            co = self.copy_out(cast) or self.atomic_out(out)
        body += self.maybe_if(lambda: [co] if co else [])
        return [o for o in body if o]

    def soup_body(self):
        """Random ops in random order over the kernel's axes, with nested loops and ifs."""
        body = []
        self.random_ops(body, self.pick([3, 5, 8]))
        # write every output once at the end
        for t in self.tensors.values():
            if t.writable:
                axes = [d for d in t.dims if d != self.batch]
                src = [b for b in self.visible() if list(b.axes) == axes and not
                       (self.is_int(t.dtype) and not self.is_int(b.dtype))]
                if src:
                    body.append(self.copy_out(self.pick(src)))
        return [o for o in body if o]

    def random_ops(self, out, n):
        for _ in range(n):
            k = self.r.randrange(11)
            vis = self.visible()
            axes_pool = [a for a in self.axes if a != "D"] + (["D"] if self.value_param else [])
            if k <= 1 or not vis:
                axes = tuple(self.r.sample(axes_pool, min(len(axes_pool), self.pick([1, 2, 2]))))
                scope = self.pick(["fragment", "fragment", "shared", "local"])
                dt = self.pick(["f32", "f32", "f32", "i32"] + (list(self.types) if self.types else ["f16"]))
                b = self.declare(scope, dt, axes)
                out.append(self.decl_op([b]))
                out.append(self.copy_in(b) or self.fill(b))
            elif k == 2:
                out.append(self.fill(self.pick(vis)))
            elif k == 3:
                b = self.pick(vis)
                out.append(self.copy_in(b) or self.fill(b))
            elif k == 4:
                out.append(self.parallel())
            elif k == 5:
                fl = [b for b in vis if len(b.axes) == 2 and not self.is_int(b.dtype)]
                if fl:
                    out.extend(self.reduce(self.pick(fl)) or [])
            elif k == 6 and self.depth < 3:
                la = [a for a in self.axes if a != "D"]
                out.append(self.loop(self.pick(la), lambda: self.nested_ops()))
            elif k == 7 and self.depth < 3:
                out.extend(self.maybe_if(lambda: self.nested_ops()) if self.chance(0.9) else [])
                if self.chance(0.5) and self.depth < 3:
                    cond = self.uniform_cond()
                    self.scope.append([])
                    self.depth += 1
                    then = self.nested_ops()
                    self.scope.pop()
                    self.depth -= 1
                    out.append({"if": cond, "then": then or [self.fill_any()]})
            elif k == 8:
                self.random_gemm(out)
            elif k == 9:
                fl = [b for b in vis if not self.is_int(b.dtype)]
                if fl:
                    src = self.pick(fl)
                    same = [b for b in vis if b.axes == src.axes and b is not src and not
                            (self.is_int(b.dtype) and not self.is_int(src.dtype))]
                    if same:
                        out.append({"copy": {"src": src.name, "dst": self.pick(same).name}})
            else:
                b = self.pick(vis)
                out.append(self.atomic_out(b) or self.copy_out(b) or self.fill(b))

    def nested_ops(self):
        ops = []
        self.random_ops(ops, self.pick([1, 2, 3]))
        return [o for o in ops if o]

    def random_gemm(self, out):
        if not all(x in self.axes for x in "MNK"):
            return
        ta, tb = self.chance(0.3), self.chance(0.3)
        dt = self.operand_dtype()
        a = self.declare(self.pick(["shared", "shared", "fragment"]), dt, ("K", "M") if ta else ("M", "K"))
        b = self.declare(self.pick(["shared", "shared", "fragment"]), dt, ("N", "K") if tb else ("K", "N"))
        cs = [x for x in self.visible() if x.axes == ("M", "N") and x.scope == "fragment"
              and x.dtype == "f32"]
        out.append(self.decl_op([a]))
        out.append(self.decl_op([b]))
        out.append(self.copy_in(a) or self.fill(a))
        out.append(self.copy_in(b) or self.fill(b))
        if cs and self.chance(0.6):
            c = self.pick(cs)
        else:
            c = self.declare("fragment", "f32", ("M", "N"), "acc")
            out.append(self.decl_op([c]))
            out.append(self.fill(c))
        out.append(self.gemm_ops(a, b, c, ta, tb))


def render(spec, seed):
    return yamlout.dump(spec, header=f"tilegen fuzz program, specgen seed {seed}")


def generate(seed):
    return render(Generator(seed).program(), seed)


if __name__ == "__main__":
    for s in sys.argv[1:] or ["1"]:
        sys.stdout.write(generate(int(s)))
