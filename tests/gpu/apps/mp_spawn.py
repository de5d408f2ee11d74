"""Worker processes started the ways that lose inherited fds: multiprocessing
"spawn" (fds closed) and subprocess with close_fds in another directory.
Each runs CuPy kernels; every process must be recorded by ntop (issue 10)."""
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile


def work(seed):
    import cupy as cp
    k = cp.RawKernel(r'''extern "C" __global__ void sq(const float *x, float *y, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = x[i] * x[i]; }''', "sq")
    x = cp.arange(1 << 20, dtype=cp.float32) % (seed + 3)
    y = cp.empty_like(x)
    k(((x.size + 255) // 256,), (256,), (x, y, cp.int32(x.size)))
    return int(cp.asnumpy(y.sum()))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        print("child", work(9))
        sys.exit(0)
    ctx = mp.get_context("spawn")
    with ctx.Pool(4) as pool:
        print("spawn", pool.map(work, range(4)))
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "child"], close_fds=True,
                         cwd=tempfile.gettempdir(), capture_output=True, text=True)
    print(out.stdout.strip(), "rc", out.returncode)
