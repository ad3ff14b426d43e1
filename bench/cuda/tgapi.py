"""ctypes binding of a tilegen dispatch library, built from its generated header.

The argument order of every public function is read from `<lib>.h` (docs/internals.md,
"Variant ABI": launch, tensors in spec order, int64 dims in params order, scalars, int
flags), so the marshalling cannot drift from the generator: a caller names its arguments
(`A=..., M=...`) and `Library.call` puts them where the header says. A name the header does
not have, or one it has that the caller left out, is an error, not a silent zero.
"""
import ctypes
import os
import re

TG_OK = 0
STATUS_NAMES = {
    0: "TG_OK", 1: "TG_ERR_NULL_POINTER", 2: "TG_ERR_MISALIGNED", 3: "TG_ERR_INVALID_DIM",
    4: "TG_ERR_UNSUPPORTED_SHAPE", 5: "TG_ERR_NO_VARIANT", 6: "TG_ERR_INVALID_ARGUMENT",
    7: "TG_ERR_SIZE_OVERFLOW", 8: "TG_ERR_DEVICE", 9: "TG_ERR_INTERNAL",
    10: "TG_ERR_OUT_OF_MEMORY",
}


class TgLaunch(ctypes.Structure):
    """tg_launch (runtime/include/tilegen/runtime.h)."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("device", ctypes.c_int),
                ("stream", ctypes.c_void_p), ("num_threads", ctypes.c_int)]


class TgSelection(ctypes.Structure):
    """tg_selection (runtime/include/tilegen/runtime.h)."""
    _fields_ = [("status", ctypes.c_int), ("variant", ctypes.c_char_p),
                ("target", ctypes.c_char_p), ("instance", ctypes.c_char_p),
                ("reason", ctypes.c_char * 256)]


# C parameter type (as the generator prints it) -> (kind, ctypes type).
_SCALAR_TYPES = {
    "int64_t": ("dim", ctypes.c_int64), "float": ("scalar", ctypes.c_float),
    "double": ("scalar", ctypes.c_double), "int": ("flag", ctypes.c_int),
    "int32_t": ("scalar", ctypes.c_int32), "int8_t": ("scalar", ctypes.c_int8),
}
_ELEM_TYPES = {"float": "f32", "double": "f64", "tg_f16": "f16", "tg_bf16": "bf16",
               "tg_e4m3": "e4m3", "tg_e5m2": "e5m2",
               "int8_t": "i8", "int16_t": "i16", "int32_t": "i32", "int64_t": "i64",
               "uint8_t": "u8", "uint16_t": "u16", "uint32_t": "u32", "uint64_t": "u64"}

_PROTO = re.compile(r"tg_status\s+(\w+)\s*\(([^;]*?)\)\s*;", re.S)


class Param:
    def __init__(self, name, kind, ctype, elem=None, const=False):
        self.name, self.kind, self.ctype, self.elem, self.const = name, kind, ctype, elem, const

    def __repr__(self):
        return f"{self.kind}:{self.name}"


def parse_header(text):
    """{function name: [Param]} for every `tg_status f(...)` prototype, launch first."""
    protos = {}
    for m in _PROTO.finditer(text):
        name, arglist = m.group(1), m.group(2)
        params = []
        for raw in arglist.split(","):
            decl = " ".join(raw.split())
            pm = re.fullmatch(r"(const\s+)?(\w+)\s*(\*?)\s*(\w+)", decl)
            if not pm:
                raise ValueError(f"{name}: cannot parse parameter '{decl}'")
            const, ctype, star, pname = bool(pm.group(1)), pm.group(2), pm.group(3), pm.group(4)
            if star and ctype == "tg_launch":
                params.append(Param(pname, "launch", ctypes.POINTER(TgLaunch)))
            elif star and ctype == "tg_selection":
                params.append(Param(pname, "out", ctypes.POINTER(TgSelection)))
            elif star and ctype == "tg_gpu_launch_desc":  # the _desc twin's output
                params.append(Param(pname, "desc", ctypes.c_void_p))
            elif star:
                if ctype not in _ELEM_TYPES:
                    raise ValueError(f"{name}: unknown tensor element type '{ctype}'")
                params.append(Param(pname, "tensor", ctypes.c_void_p, _ELEM_TYPES[ctype],
                                    const))
            else:
                if ctype not in _SCALAR_TYPES:
                    raise ValueError(f"{name}: unknown value type '{ctype}'")
                kind, ct = _SCALAR_TYPES[ctype]
                params.append(Param(pname, kind, ct))
        if not params or params[0].kind != "launch":
            raise ValueError(f"{name}: the first parameter is not the launch handle")
        protos[name] = params
    return protos


class CallError(RuntimeError):
    pass


class Library:
    """A loaded dispatch library. `lib` is the name given to add_tile_kernels()."""

    def __init__(self, so_path, header_path, lib):
        with open(header_path) as f:
            self.protos = parse_header(f.read())
        if not self.protos:
            raise ValueError(f"{header_path}: no tilegen prototypes found")
        self.lib = lib
        # The library carries a static cudart whose API symbols may be exported. Loaded
        # plainly, its own calls to them would bind to the cudart torch has already loaded
        # globally; RTLD_DEEPBIND makes it use the cudart it was linked with, as a C program
        # linking it would. TGB_DEEPBIND=0 turns that off (to compare).
        mode = ctypes.RTLD_LOCAL
        if hasattr(os, "RTLD_DEEPBIND") and os.environ.get("TGB_DEEPBIND", "1") != "0":
            mode |= os.RTLD_DEEPBIND
        self.dll = ctypes.CDLL(os.path.abspath(so_path), mode=mode)
        self.fns = {}
        for name, params in self.protos.items():
            fn = getattr(self.dll, name)
            fn.restype = ctypes.c_int
            fn.argtypes = [p.ctype for p in params]
            self.fns[name] = fn
        # The runtime's tg_status_string is linked in only if the dispatch code uses it.
        self._status_string = getattr(self.dll, "tg_status_string", None)
        if self._status_string is not None:
            self._status_string.restype = ctypes.c_char_p
            self._status_string.argtypes = [ctypes.c_int]

    def status_string(self, s):
        name = STATUS_NAMES.get(s, f"status {s}")
        if self._status_string is not None:
            return f"{name} ({self._status_string(s).decode()})"
        return name

    def function(self, kernel, types):
        """The public function; `types` "" for a kernel without type parameters."""
        return f"{self.lib}_{kernel}_{types}" if types else f"{self.lib}_{kernel}"

    def has(self, kernel, types):
        return self.function(kernel, types) in self.protos

    def kernels(self):
        """[(kernel, types)] of every non-query function, in header order."""
        out = []
        for name in self.protos:
            if name.endswith(("_query", "_desc")) or not name.startswith(self.lib + "_"):
                continue
            kernel, _, types = name[len(self.lib) + 1:].rpartition("_")
            out.append((kernel, types))
        return out

    def tensor_params(self, kernel, types):
        return [p for p in self.protos[self.function(kernel, types)] if p.kind == "tensor"]

    def _marshal(self, name, launch, values, sel=None):
        params = self.protos[name]
        names = {p.name for p in params if p.kind not in ("launch", "out", "desc")}
        extra = set(values) - names
        missing = names - set(values)
        if extra or missing:
            raise CallError(f"{name}: arguments do not match the header "
                            f"(unknown: {sorted(extra)}, missing: {sorted(missing)})")
        args = []
        for p in params:
            if p.kind == "launch":
                args.append(ctypes.byref(launch) if launch is not None else None)
            elif p.kind == "out":
                args.append(ctypes.byref(sel))
            elif p.kind == "tensor":
                v = values[p.name]
                args.append(None if v is None else ctypes.c_void_p(int(v)))
            else:
                args.append(p.ctype(values[p.name]))
        return args

    def call(self, kernel, types, launch, **values):
        """Calls <lib>_<kernel>_<types>; tensors are given as integer addresses (or None)."""
        name = self.function(kernel, types)
        return self.fns[name](*self._marshal(name, launch, values))

    def bind(self, kernel, types, launch, **values):
        """A zero-argument callable that makes the call (arguments marshalled once, so a
        timing loop pays only the ctypes call) and raises CallError on a status != TG_OK."""
        name = self.function(kernel, types)
        fn, args = self.fns[name], self._marshal(name, launch, values)
        status_string = self.status_string

        def run():
            st = fn(*args)
            if st != TG_OK:
                raise CallError(f"{name} returned {status_string(st)}")
        run.keep_alive = (launch, values)  # the launch struct must outlive the callable
        return run

    def query(self, kernel, types, launch, **values):
        """Calls the _query twin; returns (status, TgSelection)."""
        name = self.function(kernel, types) + "_query"
        sel = TgSelection()
        st = self.fns[name](*self._marshal(name, launch, values, sel))
        return st, sel


def make_launch(device, stream=0, num_threads=0):
    return TgLaunch(ctypes.sizeof(TgLaunch), device, ctypes.c_void_p(stream or None),
                    num_threads)


def describe(sel):
    """'sm_90 bf16_causal1_D128 (reason)' from a TgSelection."""
    t = (sel.target or b"").decode()
    i = (sel.instance or b"").decode()
    return t, i, sel.reason.decode(errors="replace")


def reruns_differ(call, output, n):
    """Runs `call` (one launch, returns a status) n more times, filling `output` (a torch tensor
    it writes) with NaN before each, and counts the results whose bytes differ from what the
    launch before them left (split joins merge in a fixed order: results are bitwise
    reproducible, docs/hopper.md). -1 if a launch fails."""
    import torch  # noqa: PLC0415 (tgapi itself needs no torch)
    first = output.detach().clone().view(torch.uint8)
    differ = 0
    for _ in range(n):
        output.fill_(float("nan"))
        if call() != TG_OK:
            return -1
        torch.cuda.synchronize()
        differ += int(not torch.equal(output.view(torch.uint8), first))
    return differ


def rerun_note(differ, n):
    """reruns_differ's count in words."""
    if differ < 0:
        return f"{n} reruns: a launch failed"
    return f"{n} reruns: " + ("bitwise identical" if differ == 0 else f"{differ} differ")
