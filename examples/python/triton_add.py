"""Triton example: a vector add and a matmul (tl.dot: wgmma on Hopper).
Triton loads cubins with cuModuleLoadData; ntop finds the PTX in Triton's
cache. Prints hashes of the output bytes; exits 1 on a wrong result."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from outhash import checksum, tensor_hash  # noqa: E402
import triton_kernels as tk  # noqa: E402


def main():
    torch.manual_seed(1234)
    fails = 0
    n = (1 << 20) + 3  # not a multiple of the block: the mask matters
    x = torch.randn(n, dtype=torch.float32).cuda()
    y = torch.randn(n, dtype=torch.float32).cuda()
    out = torch.full_like(x, float("nan"))
    for _ in range(3):
        tk.add(x, y, out)
    torch.cuda.synchronize()
    if not torch.equal(out, x + y):
        print("MISMATCH triton_add", file=sys.stderr)
        fails += 1
    checksum("triton_add", tensor_hash(out))

    M = N = K = 512
    a = torch.randn(M, K, dtype=torch.float16).cuda()
    b = torch.randn(K, N, dtype=torch.float16).cuda()
    c = torch.full((M, N), float("nan"), dtype=torch.float32, device="cuda")
    for _ in range(3):
        tk.matmul(a, b, c)
    torch.cuda.synchronize()
    ref = a.double() @ b.double()
    err = (c.double() - ref).abs().max().item()
    if not err < 1e-2:
        print(f"MISMATCH triton_matmul max abs err {err}", file=sys.stderr)
        fails += 1
    checksum("triton_matmul", tensor_hash(c))
    print("triton_add", "FAILED" if fails else "ok")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
