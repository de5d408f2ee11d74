"""Triton kernels of our own for the AMDGPU corpus (built by triton_build.py).

An elementwise add, a row reduction and a tl.dot matmul: the three shapes
Triton code objects take (plain loads and stores; LDS and cross-lane
reductions; MFMA on gfx9, WMMA on gfx11).
"""
import triton
import triton.language as tl


@triton.jit
def tt_add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


@triton.jit
def tt_rowsum(x, out, ncols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + row * stride + cols, mask=cols < ncols, other=0.0)
    tl.store(out + row, tl.sum(v, axis=0))


@triton.jit
def tt_matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        ta = tl.load(a + rm[:, None] * K + (k + rk)[None, :],
                     mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        tb = tl.load(b + (k + rk)[:, None] * N + rn[None, :],
                     mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(ta, tb)
    tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


# name -> (kernel, signature, constexprs)
KERNELS = {
    "tt_add": (tt_add, {"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32", "BLOCK": "constexpr"},
               {"BLOCK": 256}),
    "tt_rowsum": (tt_rowsum, {"x": "*fp32", "out": "*fp32", "ncols": "i32", "stride": "i32",
                              "BLOCK": "constexpr"}, {"BLOCK": 512}),
    "tt_matmul": (tt_matmul, {"a": "*fp16", "b": "*fp16", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32",
                              "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
                  {"BM": 32, "BN": 32, "BK": 32}),
}
