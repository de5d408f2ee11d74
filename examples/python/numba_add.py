"""Numba example: numba.cuda.jit kernels (Numba links its PTX through the
driver's cuLink* API). Prints hashes of the output bytes; exits 1 on a wrong
result. Values are exact in float32, so results are compared with ==."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

# numba 0.68's typing registry still names np.row_stack, which NumPy 2.4
# removed: without this alias the first kernel compile fails on numpy 2.5.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack
from numba import cuda  # noqa: E402
from outhash import array_hash, checksum  # noqa: E402


@cuda.jit
def nb_vec_add(x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + y[i]


@cuda.jit
def nb_saxpy(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


def main():
    n = (1 << 20) + 7
    idx = np.arange(n)
    x = ((idx % 1024) * 0.5).astype(np.float32)
    y = ((idx % 77) * 0.25).astype(np.float32)
    dx, dy = cuda.to_device(x), cuda.to_device(y)
    fails = 0
    threads = 256
    blocks = (n + threads - 1) // threads

    dout = cuda.to_device(np.full(n, np.nan, dtype=np.float32))
    for _ in range(3):
        nb_vec_add[blocks, threads](dx, dy, dout)
    cuda.synchronize()
    got = dout.copy_to_host()
    if not np.array_equal(got, x + y):
        print("MISMATCH nb_vec_add", file=sys.stderr)
        fails += 1
    checksum("nb_vec_add", array_hash(got))

    dout = cuda.to_device(np.full(n, np.nan, dtype=np.float32))
    for _ in range(3):
        nb_saxpy[blocks, threads](np.float32(4.0), dx, dy, dout)
    cuda.synchronize()
    got = dout.copy_to_host()
    if not np.array_equal(got, np.float32(4.0) * x + y):
        print("MISMATCH nb_saxpy", file=sys.stderr)
        fails += 1
    checksum("nb_saxpy", array_hash(got))
    print("numba_add", "FAILED" if fails else "ok")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
