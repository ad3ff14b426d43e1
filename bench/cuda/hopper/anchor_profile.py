"""One call each of ours and of the anchor (torch SDPA with the cuDNN backend) per attention
bar shape of issue #4, each inside an NVTX range "prof" (ours first, then the anchor), for Nsight Compute to profile
side by side (bench/cuda/hopper/anchor_profile.sh runs it under ncu):

    python3 bench/cuda/hopper/anchor_profile.py --dist build-bench-cuda/dist

Without ncu it prints the shapes and the variant dispatch picks."""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tgapi  # noqa: E402

SHAPES = [  # (B, H, S, D, causal): the attention bars of issue #4
    (4, 32, 4096, 128, 0),
    (4, 32, 4096, 128, 1),
    (1, 32, 16384, 128, 0),
    (8, 16, 2048, 64, 0),
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dist", default="build-bench-cuda/dist")
    p.add_argument("--lib", default="tgb")
    a = p.parse_args()
    api = tgapi.Library(os.path.join(a.dist, f"lib{a.lib}.so"), os.path.join(a.dist, f"{a.lib}.h"),
                        a.lib)
    stream = torch.cuda.Stream()
    torch.cuda.set_stream(stream)
    launch = tgapi.make_launch(0, stream.cuda_stream)
    g = torch.Generator(device="cuda")
    g.manual_seed(1)
    for B, H, S, D, causal in SHAPES:
        q, k, v = (torch.randn(B, H, S, D, device="cuda", dtype=torch.bfloat16, generator=g)
                   for _ in range(3))
        o = torch.empty_like(q)
        scale = D ** -0.5
        args = dict(Q=q.data_ptr(), K=k.data_ptr(), V=v.data_ptr(), O=o.data_ptr(), B=B, H=H, S=S,
                    D=D, sm_scale=scale, causal=causal)
        ours = api.bind("flash_attention_fwd", "bf16", launch, **args)

        def cudnn():
            with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v, is_causal=bool(causal), scale=scale)
        name = f"B{B}_H{H}_S{S}_D{D}_c{causal}"
        for label, fn in (("ours", ours), ("cudnn", cudnn)):
            fn()  # warm-up outside the range
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push("prof")  # one name: ncu --nvtx-include prof/
            fn()
            torch.cuda.nvtx.range_pop()
            torch.cuda.synchronize()
            print(f"ran {label} {name}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
