"""PyTorch example: torch.zeros (many small blocks), add, softmax, matmul
(cuBLAS) and reductions. Stock PyTorch ships SASS only, so ntop lists and
times these kernels but cannot probe them (it must say why). Prints hashes
of the output bytes; exits 1 on a wrong result.
Usage: torch_ops.py [repeats] (default 3)."""
import os
import sys

# Before torch initialises cuBLAS: needed for deterministic algorithms.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from outhash import checksum, tensor_hash  # noqa: E402


def close(got, want, tol):
    return (got.double().cpu() - want.double()).abs().max().item() <= tol


def main():
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    fails = []
    xa = torch.randn(1024, 1024)
    xb = torch.randn(1024, 1024)
    a, b = xa.cuda(), xb.cuda()
    for _ in range(repeats):
        z = torch.zeros(4096, 4096, dtype=torch.float16, device="cuda")
        s = a + b
        sm = torch.softmax(a, dim=-1)
        mm = a @ b
        mh = a.half() @ b.half()
        r0 = a.sum(dim=0)
        r = a.sum()
    torch.cuda.synchronize()
    if not bool((z == 0).all()):
        fails.append("zeros")
    if not torch.equal(s.cpu(), xa + xb):
        fails.append("add")
    if not close(sm, torch.softmax(xa.double(), dim=-1), 1e-6):
        fails.append("softmax")
    ref = xa.double() @ xb.double()
    if not close(mm, ref, 1e-3):
        fails.append("matmul")
    if not close(mh, ref, 0.5):  # fp16 inputs: rounding of the inputs dominates
        fails.append("matmul_half")
    if not close(r0, xa.double().sum(dim=0), 1e-3):
        fails.append("sum_dim0")
    if not close(r, xa.double().sum(), 1e-1):
        fails.append("sum")
    for name, t in (("zeros", z), ("add", s), ("softmax", sm), ("matmul", mm),
                    ("matmul_half", mh), ("sum_dim0", r0), ("sum", r)):
        checksum(name, tensor_hash(t))
    for f in fails:
        print(f"MISMATCH {f}", file=sys.stderr)
    print("torch_ops", "FAILED" if fails else "ok")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
