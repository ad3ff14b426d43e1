"""The shipped kernels as the benchmark sees them: inputs, float64 references, tolerances,
verification shapes, and the work each call does (FLOPs, bytes) for rates.

References and tolerances follow docs/kernels.md ("Verification"): inputs uniform in [-1, 1]
(softmax [-4, 4]) rounded to T and never zero; error = max|got - ref| / scale with scale =
max|ref| (flash attention: max|V|); tol(T, L) = 3 u_T + 4 u_f32 sqrt(L) with L the reduction
length (K for the gemms, N for softmax/rmsnorm, S + D for attention).
"""
import math

import torch

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
          "e4m3": torch.float8_e4m3fn, "e5m2": torch.float8_e5m2}
UNIT_ROUNDOFF = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8, "e4m3": 2.0 ** -4,
                 "e5m2": 2.0 ** -3}
ELEM_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "e4m3": 1, "e5m2": 1}
EPS = 1e-5
LOG2E = 1.4426950408889634


def tolerance(types, length):
    return 3 * UNIT_ROUNDOFF[types] + 4 * UNIT_ROUNDOFF["f32"] * math.sqrt(max(length, 1))


def f32(x):
    """The value an f32 scalar argument really has (the kernel sees the rounded float)."""
    return float(torch.tensor(x, dtype=torch.float32))


def random_tensor(shape, types, device, gen, lo=-1.0, hi=1.0):
    """Uniform in [lo, hi], rounded to T; elements that round to 0 become 0.5 (never zero)."""
    x = torch.rand(shape, generator=gen, device=device, dtype=torch.float32) * (hi - lo) + lo
    x = x.to(DTYPES[types]).to(torch.float32)  # rounded (FP8 has no torch.where)
    return torch.where(x == 0, torch.full_like(x, 0.5), x).to(DTYPES[types])


class Kernel:
    """One spec. Subclasses fill in the parts that differ."""
    name = ""
    dims = ()            # dim names in the order of a shape tuple
    inputs = ()          # (tensor name, shape expression over dims)
    outputs = ()
    input_range = (-1.0, 1.0)

    def shape_of(self, expr, shape):
        env = dict(zip(self.dims, shape))
        return tuple(env[d] if isinstance(d, str) else d for d in expr)

    def values(self, shape):
        """Dims, scalars and flags by name, for the call."""
        return dict(zip(self.dims, shape))

    def tensor_type(self, name, types):
        """The element type of tensor `name` in the variant for `types` (default: all T)."""
        return types

    def tolerance(self, types, length):
        return tolerance(types, length)

    def reduction_length(self, shape):
        raise NotImplementedError

    def reference(self, x64, shape, values):
        """{output name: float64 tensor} from float64 copies of the (rounded) inputs."""
        raise NotImplementedError

    def scale(self, ref, x64):
        return ref.abs().max().item() if ref.numel() else 1.0

    def scaled_err(self, got, ref, x64):
        """max |got - ref| over scale() (0 for an empty output); float64 tensors."""
        if not got.numel():
            return 0.0
        return (got - ref).abs().max().item() / (self.scale(ref, x64) or 1.0)

    def make_inputs(self, shape, types, device, gen):
        lo, hi = self.input_range
        return {n: random_tensor(self.shape_of(e, shape), self.tensor_type(n, types), device,
                                 gen, lo, hi)
                for n, e in self.inputs}

    def flops(self, shape, values):
        return 0.0

    def bytes_moved(self, shape, types):
        """The fewest bytes a call must move: each input read once, each output written once."""
        n = 0
        for name, e in self.inputs + self.outputs:
            n += math.prod(self.shape_of(e, shape)) * ELEM_BYTES[self.tensor_type(name, types)]
        return n

    def label(self, shape, values):
        return "x".join(str(s) for s in shape)


class Gemm(Kernel):
    name = "gemm"
    dims = ("M", "N", "K")
    inputs = (("A", ("M", "K")), ("B", ("K", "N")))
    outputs = (("C", ("M", "N")),)
    verify_shapes = [(1, 1, 1), (7, 7, 7), (129, 129, 129), (1000, 129, 257), (65, 257, 300),
                     (33, 1, 513), (1, 1000, 31), (4097, 129, 1000), (129, 4097, 7),
                     (0, 7, 5), (7, 0, 5), (7, 5, 0),
                     # a last wave at most half full of tiles with 32 k steps or more: sm_90a
                     # runs those tiles in parts that join (docs/hopper.md, split tail): 136
                     # bf16 tiles (8 parts of 16 k steps), 272 FP8 tiles; ragged M (TMA needs
                     # rows of whole 16 bytes: N % 8 == 0, and K % 16 == 0 for FP8). Then N
                     # 4300: rows of 4-byte but not 16-byte multiples (tg_kernel<4>, no TMA),
                     # and shapes over a wave that do not split. Then launches of at most half
                     # the SMs' tiles (M 100: 8 bf16 tiles, 16 FP8; M 64: the small_m class):
                     # every tile in parts (split-K). Then small_m with odd N and K (C stored
                     # element by element by the ping-pong kernel's threads, A and B copied
                     # where TMA needs it). Then the gemv_narrow, gemv and gemv32 classes
                     # (mma.sync tiles of 16 and 32 rows fed by cp.async): 16x32 tiles (N 4096,
                     # and N 640 with K 1000, no whole k tile), 16x64 tiles with one row tile
                     # and two (M 17) and a k tile wider than K (K 8), 32-row tiles at N 8192.
                     (1000, 4352, 8000), (1000, 4352, 2048), (1000, 4300, 2048), (2000, 3000, 1008),
                     (100, 2048, 8192), (64, 4096, 2048), (16, 4097, 4096), (3, 8191, 1023),
                     (5, 4096, 1024), (3, 640, 1000), (5, 8192, 256), (17, 1024, 8),
                     (24, 8192, 520)]
    quick_shapes = [(1, 1, 1), (7, 7, 7), (129, 129, 129), (65, 257, 300), (7, 5, 0), (0, 7, 5),
                    (1000, 4352, 8000), (1000, 4300, 2048), (100, 2048, 8192)]

    def reduction_length(self, shape):
        return shape[2]

    def reference(self, x, shape, values):
        return {"C": x["A"] @ x["B"]}

    def flops(self, shape, values):
        m, n, k = shape
        return 2.0 * m * n * k


class GemmBiasGelu(Gemm):
    name = "gemm_bias_gelu"
    inputs = (("A", ("M", "K")), ("B", ("K", "N")), ("bias", ("N",)))

    def reference(self, x, shape, values):
        y = x["A"] @ x["B"] + x["bias"][None, :]
        return {"C": 0.5 * y * (1.0 + torch.erf(y / math.sqrt(2.0)))}

    def scale(self, ref, x64):
        """max|y| with y = A @ B + bias, the GELU's input, when it exceeds max|C|: the spec's
        f32 epilogue 0.5 y (1 + erf(y / sqrt 2)) cancels for y < 0 (1 + erf(-1.41) = 0.046), so
        its error is a few ulp of |y|, not of |C|. A 1x1x1 call with y near -2 measured 1.56 tol
        against max|C| on the H200 (bench/RESULTS.md, 2026-12-05)."""
        if not ref.numel():
            return 1.0
        y = x64["A"] @ x64["B"] + x64["bias"][None, :]
        return max(ref.abs().max().item(), y.abs().max().item())


class GemmFp8(Gemm):
    """C (bf16) = (A @ B^T) * scale_a * scale_b, A [M, K] and B [N, K] in FP8. The inputs are
    exact FP8 values, so the error is the accumulation's and the bf16 output's: the tolerance
    is tol(bf16, K). On sm_90a the FP8 wgmma keeps ~14 bits in its accumulator; the generated
    kernel adds each k tile's partial sums to an f32 accumulator (as torch._scaled_mm does by
    default), measured 0.25-0.29 tol at K = 8192, the same as torch._scaled_mm."""
    name = "gemm_fp8"
    inputs = (("A", ("M", "K")), ("B", ("N", "K")))

    def tensor_type(self, name, types):
        return "bf16" if name == "C" else types

    def tolerance(self, types, length):
        return tolerance("bf16", length)

    def values(self, shape):
        v = super().values(shape)
        v["scale_a"], v["scale_b"] = 0.37, 2.5
        return v

    def reference(self, x, shape, values):
        s = f32(f32(values["scale_a"]) * f32(values["scale_b"]))  # one f32 product, as ours
        return {"C": (x["A"] @ x["B"].transpose(0, 1)) * s}


class GemmFp8Fast(GemmFp8):
    """gemm_fp8 with `fast_accum: true` (bench/cuda/CMakeLists.txt writes its spec): on sm_90a
    the partial sums stay in the FP8 wgmma accumulator over all of K, as with
    torch._scaled_mm(use_fast_accum=True); measured 0.65-0.88 tol(bf16, K) at K = 8192 and
    1.01 once (bench/RESULTS.md, 2026-11-30), so its tolerance is twice tol(bf16, K)."""
    name = "gemm_fp8_fast"

    def tolerance(self, types, length):
        return 2 * tolerance("bf16", length)


class Softmax(Kernel):
    name = "softmax"
    dims = ("M", "N")
    inputs = (("X", ("M", "N")),)
    outputs = (("Y", ("M", "N")),)
    input_range = (-4.0, 4.0)
    verify_shapes = [(1, 1), (7, 7), (129, 129), (1000, 129), (3, 1000), (5, 2049), (2, 4100),
                     (1001, 33), (4097, 1000), (1, 4097), (7, 16385), (0, 7), (7, 0)]
    quick_shapes = [(1, 1), (7, 7), (129, 129), (5, 2049), (1001, 33), (0, 7), (7, 0)]

    def reduction_length(self, shape):
        return shape[1]

    def reference(self, x, shape, values):
        return {"Y": torch.softmax(x["X"], dim=-1)}


class RmsNorm(Softmax):
    name = "rmsnorm"
    inputs = (("X", ("M", "N")), ("W", ("N",)))
    input_range = (-1.0, 1.0)

    def values(self, shape):
        v = super().values(shape)
        v["eps"] = EPS
        return v

    def reference(self, x, shape, values):
        X = x["X"]
        r = torch.rsqrt((X * X).mean(dim=-1, keepdim=True) + f32(values["eps"]))
        return {"Y": X * r * x["W"][None, :]}


class FlashAttentionFwd(Kernel):
    name = "flash_attention_fwd"
    dims = ("B", "H", "S", "D")
    inputs = (("Q", ("B", "H", "S", "D")), ("K", ("B", "H", "S", "D")),
              ("V", ("B", "H", "S", "D")))
    outputs = (("O", ("B", "H", "S", "D")),)
    # (B, H, S, D); each is run with causal 0 and 1 (see shapes_with_flags)
    verify_shapes = [(1, 1, 1, 64), (2, 3, 7, 64), (1, 2, 129, 64), (1, 1, 300, 64),
                     (1, 1, 4097, 64), (1, 1, 1, 128), (2, 1, 7, 128), (1, 2, 129, 128),
                     (1, 1, 300, 128), (1, 2, 1000, 128), (0, 2, 7, 64), (1, 1, 0, 128),
                     # a last wave at most half full of tiles of 32 KV blocks or more: sm_90a
                     # (non-causal) runs those tiles in parts that merge (m, l, O); ragged S.
                     # Then launches of at most half the SMs' tiles: every tile in parts.
                     (1, 5, 4000, 128), (1, 8, 4000, 64), (2, 9, 1000, 128), (1, 2, 4096, 128),
                     (1, 2, 4096, 64)]
    quick_shapes = [(1, 1, 1, 64), (2, 3, 7, 64), (1, 2, 129, 64), (2, 1, 7, 128),
                    (1, 1, 130, 128), (0, 2, 7, 64), (1, 5, 4000, 128)]

    def values(self, shape, causal=0):
        v = super().values(shape)
        v["sm_scale"] = 1.0 / math.sqrt(shape[3])
        v["causal"] = causal
        return v

    def reduction_length(self, shape):
        return shape[2] + shape[3]

    def scale(self, ref, x64):
        return x64["V"].abs().max().item() if x64["V"].numel() else 1.0

    def reference(self, x, shape, values):
        """Attention in float64, one batch at a time (S x S scores per head)."""
        q, k, v = x["Q"], x["K"], x["V"]
        s_len = shape[2]
        out = torch.empty_like(q)
        mask = None
        if values["causal"]:
            idx = torch.arange(s_len, device=q.device)
            mask = idx[None, :] > idx[:, None]  # key j after query i
        for b in range(shape[0]):
            s = (q[b] @ k[b].transpose(-1, -2)) * f32(values["sm_scale"])
            if mask is not None:
                s = s.masked_fill(mask, float("-inf"))
            out[b] = torch.softmax(s, dim=-1) @ v[b]
            del s
        return {"O": out}

    def flops(self, shape, values):
        b, h, s, d = shape
        f = 4.0 * b * h * s * s * d  # two S x S x D products per head
        return f / 2 if values["causal"] else f

    def label(self, shape, values):
        b, h, s, d = shape
        return f"B{b} H{h} S{s} D{d}" + (" causal" if values["causal"] else "")


KERNELS = {k.name: k for k in (Gemm(), GemmBiasGelu(), GemmFp8(), GemmFp8Fast(), Softmax(),
                               RmsNorm(), FlashAttentionFwd())}


def verify_cases(kernel, quick):
    """[(shape, values)] to verify; flash attention runs each shape with causal 0 and 1."""
    shapes = kernel.quick_shapes if quick else kernel.verify_shapes
    if kernel.name == "flash_attention_fwd":
        return [(s, kernel.values(s, c)) for s in shapes for c in (0, 1)]
    return [(s, kernel.values(s)) for s in shapes]
