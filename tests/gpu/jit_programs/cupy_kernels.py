"""CuPy kernels compiled at run time with NVRTC: a RawKernel and an
ElementwiseKernel, each launched 10 times (with a fresh CUPY_CACHE_DIR, so
they are compiled, not read back from CuPy's cache). Prints exact sums."""
import os
import shutil
import sys
import tempfile

cache = tempfile.mkdtemp(prefix="jit-cupy-")
os.environ["CUPY_CACHE_DIR"] = cache
import cupy as cp  # noqa: E402

raw = cp.RawKernel(r'''
extern "C" __global__ void jit_raw(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += 2.0f * x[i];
}
''', "jit_raw")
elem = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * 3.0f + y", "jit_elem")

n = 1 << 20
x = (cp.arange(n, dtype=cp.float32) % 7)
y = cp.zeros(n, dtype=cp.float32)
for _ in range(10):
    raw(((n + 255) // 256,), (256,), (x, y, cp.int32(n)))
z = cp.zeros(n, dtype=cp.float32)
for _ in range(10):
    z = elem(x, z)
cp.cuda.runtime.deviceSynchronize()
print("raw sum", float(y.sum()), "ok", bool((y == 20 * x).all()))
print("elem sum", float(z.sum()), "ok", bool((z == 30 * x).all()))
shutil.rmtree(cache, ignore_errors=True)
print("cupy_kernels done")
# which nvrtc files the process mapped (stderr: stdout must equal the plain
# run's); under ntop the stand-in and the real library it forwards to
with open("/proc/self/maps") as maps:
    for path in sorted({line.split()[-1] for line in maps if "libnvrtc" in line}):
        print("mapped:", path, file=sys.stderr)
