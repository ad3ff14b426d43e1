#!/usr/bin/env python3
"""Times torch SDPA (flash = FA2, cudnn) on one attention shape, to put a sweep's times next to
the anchors in the same device call. Usage: sdpa_anchor.py B H S D [causal]"""
import sys, torch
from torch.nn.attention import sdpa_kernel, SDPBackend
B, H, S, D = (int(x) for x in sys.argv[1:5])
causal = len(sys.argv) > 5 and sys.argv[5] == "1"
q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
flops = 4 * B * H * S * S * D / (2 if causal else 1)
for name, be in (("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)):
    with sdpa_kernel(be):
        f = lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
        for _ in range(5):
            f()
        torch.cuda.synchronize()
        times = []
        for _ in range(20):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(); f(); b.record(); b.synchronize()
            times.append(a.elapsed_time(b))
        ms = sorted(times)[len(times) // 2]
        print(f"sdpa {name} B{B} H{H} S{S} D{D} causal{int(causal)}: {ms:.4f} ms median, {flops / ms / 1e9:.0f} TFLOP/s")
