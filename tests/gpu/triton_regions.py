#!/usr/bin/env python3
"""Triton kernels timed by the app's own clock, for what the regions probe
costs and for the inside-a-kernel case study (tests/gpu/inside_kernel.sh).

  triton_regions.py [--attn FILE] [--reps N] [--only matmul|attn]

matmul: a pipelined fp16 matmul of ours (num_stages=3, 128x128x64 tiles,
8 warps), 4096^3. attn: the forward kernel of Triton's fused-attention
tutorial (FILE: the tutorial's kernels, e.g. a copy of
python/tutorials/06-fused-attention.py's forward part defining
attention_fwd), Z=4, H=32, N_CTX=4096, HEAD_DIM=64, not causal, its
autotuner held to one configuration (num_stages=3) so that a run under ntop
times the same kernel as a plain run. Each kernel: 3 warm-up launches, then
REPS launches each between two CUDA events; prints

  NAME us=MEDIAN sum=HASH

(the median of the app-side microseconds per launch, and a hash of the
output, which must be the same with and without ntop)."""
import argparse
import hashlib
import importlib.util
import statistics
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def mm_kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr,
              BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    pa = a + rm[:, None] * sam + rk[None, :] * sak
    pb = b + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        acc += tl.dot(tl.load(pa), tl.load(pb))
        pa += BK * sak
        pb += BK * sbk
    tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(tl.float16))


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    mm_kernel[(M // 128, N // 128)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                    c.stride(0), c.stride(1), BM=128, BN=128, BK=64, num_stages=3, num_warps=8)
    return c


def timed(fn, reps):
    for _ in range(3):
        out = fn()
    torch.cuda.synchronize()
    us = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        out = fn()
        e1.record()
        e1.synchronize()
        us.append(e0.elapsed_time(e1) * 1000.0)
    return statistics.median(us), out


def digest(t):
    return hashlib.sha256(t.detach().contiguous().view(torch.uint8).cpu().numpy().tobytes()).hexdigest()[:16]


def load_attn(path):
    spec = importlib.util.spec_from_file_location("fused_attention", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    one = triton.Config({"BLOCK_M": 128, "BLOCK_N": 64}, num_stages=3, num_warps=4,
                        pre_hook=getattr(mod, "_tma_pre_hook", None))
    for k in ("_attn_fwd_tma", "_attn_fwd"):
        if hasattr(mod, k):
            getattr(mod, k).configs = [one if k.endswith("tma") else triton.Config(one.kwargs, num_stages=3,
                                                                                  num_warps=4)]
    return mod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attn")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--only")
    args = ap.parse_args()
    torch.manual_seed(0)
    if args.only in (None, "matmul"):
        a = torch.randn((4096, 4096), device="cuda", dtype=torch.float16)
        b = torch.randn((4096, 4096), device="cuda", dtype=torch.float16)
        us, c = timed(lambda: matmul(a, b), args.reps)
        print(f"matmul us={us:.1f} sum={digest(c)}")
    if args.only in (None, "attn") and args.attn:
        mod = load_attn(args.attn)
        shape = (4, 32, 4096, 64)
        q, k, v = (torch.randn(shape, device="cuda", dtype=torch.float16) for _ in range(3))
        us, o = timed(lambda: mod.attention_fwd(q, k, v, False, 0.5), args.reps)
        print(f"attn us={us:.1f} sum={digest(o)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
