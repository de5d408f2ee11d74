"""CuPy worker processes started the ways that lose inherited descriptors:
4 workers by multiprocessing "spawn" (a fresh interpreter, fds
closed) and 1 child by subprocess.run(close_fds=True) in another working
directory. Each runs a RawKernel, an ElementwiseKernel and a
ReductionKernel plus cupy.sum on integer data and returns checksums, so the
output is the same on every run. Workers 2 and 3 and the child compile
with CUPY_COMPILE_WITH_PTX=1 (the driver gets PTX, which ntop can probe);
workers 0 and 1 get NVRTC cubins (SASS only). The parent itself never
touches CUDA: 5 CUDA processes in all."""
import ast
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile

SQ = r'''extern "C" __global__ void sq_mod(const int *x, int *y, int n, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (x[i] * x[i]) % m;
}'''


def work(seed):
    if seed >= 2:
        os.environ["CUPY_COMPILE_WITH_PTX"] = "1"
    import cupy as cp
    n = 1 << 20
    x = cp.arange(n, dtype=cp.int32) % (seed + 1000)
    y = cp.empty_like(x)
    sq = cp.RawKernel(SQ, "sq_mod")
    sq(((n + 255) // 256,), (256,), (x, y, cp.int32(n), cp.int32(seed + 7)))
    axpb = cp.ElementwiseKernel("int32 a, int32 b", "int32 c", "c = a * 3 + b - 1", "axpb_i32")
    z = axpb(y, x)
    sumsq = cp.ReductionKernel("int64 v", "int64 s", "v * v", "a + b", "s = a", "0", "sumsq_i64")
    s1 = int(cp.asnumpy(z.astype(cp.int64).sum()))
    s2 = int(cp.asnumpy(sumsq(y.astype(cp.int64))))
    cp.cuda.Device().synchronize()
    return (seed, s1, s2)


def expected(seed):
    import numpy as np
    x = np.arange(1 << 20, dtype=np.int64) % (seed + 1000)
    y = (x * x) % (seed + 7)
    return (seed, int((y * 3 + x - 1).sum()), int((y * y).sum()))


def worker(seed, q):
    try:
        q.put(work(seed))
    except Exception as e:  # reported by the parent, never hangs it
        q.put((seed, "error", repr(e)))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        print("child cwd=%s" % ("tmp" if os.getcwd() == os.path.realpath(tempfile.gettempdir()) else "other"),
              "result", work(int(sys.argv[2])))
        sys.exit(0)
    ctx = mp.get_context("spawn")  # one process per worker: 4 CUDA processes, always
    q = ctx.Queue()
    procs = [ctx.Process(target=worker, args=(seed, q)) for seed in range(4)]
    for p in procs:
        p.start()
    results = sorted((q.get(timeout=300) for _ in procs), key=lambda r: r[0])
    for p in procs:
        p.join()
    for r in results:
        print("spawn worker", r)
    bad = [p.exitcode for p in procs if p.exitcode != 0] + [r for r in results if r[1] == "error"]
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "child", "9"], close_fds=True,
                         cwd=tempfile.gettempdir(), capture_output=True, text=True)
    print(out.stdout.strip(), "rc", out.returncode)
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)
    got = results + [ast.literal_eval(out.stdout.rsplit("result", 1)[-1].strip()) if out.returncode == 0 else None]
    want = [expected(s) for s in (0, 1, 2, 3, 9)]
    print("checksums match numpy:", got == want)
    sys.exit(1 if bad or out.returncode != 0 or got != want else 0)
