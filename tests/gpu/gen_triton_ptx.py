"""Compiles the Triton kernels of examples/python/triton_kernels.py on the GPU
machine and writes their PTX to $OUT/triton_ptx/triton_<name>.ptx (for
tests/corpus/ptx/). The PTX is taken from the compiled kernel's asm['ptx']
after a warm-up launch, i.e. exactly what Triton handed to ptxas.
Usage: python3 tests/gpu/gen_triton_ptx.py [OUTDIR]"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.normpath(os.path.join(here, "..", "..", "examples", "python")))
import torch  # noqa: E402
import triton  # noqa: E402
import triton_kernels as tk  # noqa: E402


def write(outdir, name, compiled):
    ptx = compiled.asm["ptx"]
    if isinstance(ptx, bytes):
        ptx = ptx.decode()
    path = os.path.join(outdir, f"triton_{name}.ptx")
    with open(path, "w") as f:
        f.write(f"// triton {triton.__version__}: {name}, from tests/gpu/gen_triton_ptx.py\n")
        f.write(ptx)
    print(f"wrote {path} ({len(ptx)} bytes)")


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.environ.get("OUT", "gpu-out"), "triton_ptx")
    os.makedirs(outdir, exist_ok=True)
    torch.manual_seed(0)
    x = torch.randn(4096, device="cuda")
    y = torch.randn(4096, device="cuda")
    write(outdir, "add", tk.add(x, y, torch.empty_like(x)))
    s = torch.randn(128, 1000, device="cuda")
    write(outdir, "softmax", tk.softmax(s, torch.empty_like(s)))
    a = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    b = torch.randn(256, 256, device="cuda", dtype=torch.float16)
    c = torch.empty(256, 256, device="cuda", dtype=torch.float32)
    write(outdir, "matmul", tk.matmul(a, b, c))
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    sys.exit(main())
