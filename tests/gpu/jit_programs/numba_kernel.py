"""A Numba kernel (numba-cuda links its PTX with nvJitLink and loads a
cubin), launched 10 times. Prints an exact sum."""
import sys

import numpy as np

if not hasattr(np, "row_stack"):  # numba 0.68 still names it; NumPy 2.4 removed it
    np.row_stack = np.vstack
from numba import cuda  # noqa: E402


@cuda.jit
def jit_numba(x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += 2.0 * x[i]


n = 1 << 20
x = cuda.to_device((np.arange(n) % 7).astype(np.float32))
y = cuda.to_device(np.zeros(n, dtype=np.float32))
for _ in range(10):
    jit_numba[(n + 255) // 256, 256](x, y)
h = y.copy_to_host()
print("numba sum", float(h.sum()), "ok", bool((h == 20 * (np.arange(n) % 7)).all()))
print("numba_kernel done")
# which nvJitLink files the process mapped (stderr: stdout must equal the plain
# run's); under ntop the stand-in and the real library it forwards to
with open("/proc/self/maps") as maps:
    for path in sorted({line.split()[-1] for line in maps if "libnvJitLink" in line}):
        print("mapped:", path, file=sys.stderr)
