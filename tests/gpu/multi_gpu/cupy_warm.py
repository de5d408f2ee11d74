"""CuPy kernels with a warm on-disk cache: CUPY_CACHE_DIR is kept between
runs (the caller runs this plain first, so the cubins are on disk), a
RawKernel, an ElementwiseKernel and a ReductionKernel, each launched 5
times; prints exact sums (the same with and without ntop)."""
import cupy as cp

raw = cp.RawKernel(r'''
extern "C" __global__ void warm_raw(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] += 2.0f * x[i];
}
''', "warm_raw")
elem = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * 3.0f + y", "warm_elem")
red = cp.ReductionKernel("float32 x", "float32 y", "x * x", "a + b", "y = a", "0", "warm_sumsq")

n = 1 << 20
x = cp.arange(n, dtype=cp.float32) % 7
y = cp.zeros(n, dtype=cp.float32)
z = cp.zeros(n, dtype=cp.float32)
s = 0.0
for _ in range(5):
    raw(((n + 255) // 256,), (256,), (x, y, cp.int32(n)))
    z = elem(x, z)
    s += float(red(x))
print(f"cupy_warm: {float(y.sum()):.1f} {float(z.sum()):.1f} {s:.1f}")
