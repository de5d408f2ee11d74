"""Triton kernels shared by triton_add.py and tests/gpu/gen_triton_ptx.py.

Kernel names are what ntop lists (Triton uses the Python function name as the
PTX entry name), so keep them unique: triton_add_kernel, triton_softmax_kernel,
triton_matmul_kernel.
"""
import triton
import triton.language as tl


@triton.jit
def triton_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def triton_softmax_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(x_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def triton_matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                         stride_am, stride_ak, stride_bk, stride_bn,
                         stride_cm, stride_cn,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                         BLOCK_K: tl.constexpr):
    # M, N, K are multiples of the block sizes (the callers make sure).
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        acc += tl.dot(tl.load(a_ptrs), tl.load(b_ptrs))
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c_ptrs = c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, acc)


def add(x, y, out, block=1024):
    n = x.numel()
    return triton_add_kernel[(triton.cdiv(n, block),)](x, y, out, n, BLOCK=block)


def softmax(x, out):
    rows, cols = x.shape
    block = triton.next_power_of_2(cols)
    return triton_softmax_kernel[(rows,)](x, out, cols, x.stride(0), BLOCK=block)


def matmul(a, b, c, bm=64, bn=64, bk=32):
    M, K = a.shape
    _, N = b.shape
    assert M % bm == 0 and N % bn == 0 and K % bk == 0
    return triton_matmul_kernel[(M // bm, N // bn)](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
        c.stride(0), c.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
