"""A small Triton program for regress hip_triton: Triton 3.9's own AMD
launcher (its driver.c built by Triton, the runtime dlopen'ed from
TRITON_LIBHIP_PATH) over the HIP test double, with the torch stand-in of
tests/fakehip/torch_stub. tt_add is compiled twice (BLOCK 256 and 128:
two code objects, two modules) and launched three times; every result is
checked. What it prints must not change under ntop."""
import torch
import triton
import triton.language as tl


@triton.jit
def tt_add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


def main():
    n = 1000
    x = torch.tensor([float(i) for i in range(n)])
    y = torch.tensor([2.0 * i + 0.5 for i in range(n)])
    target = triton.runtime.driver.active.get_current_target()
    print(f"driver: {type(triton.runtime.driver.active).__name__}, target {target.backend} {target.arch} "
          f"warp {target.warp_size}")
    bad = 0
    for block in (256, 256, 128):
        out = torch.zeros(n)
        grid = (triton.cdiv(n, block),)
        tt_add[grid](x, y, out, n, BLOCK=block)
        v = out.tolist()
        wrong = sum(v[i] != 3.0 * i + 0.5 for i in range(n))
        bad += wrong
        print(f"tt_add BLOCK={block} grid={grid[0]}: " + ("ok" if not wrong else f"{wrong} of {n} WRONG"))
    print("triton_add: all correct" if not bad else "triton_add: WRONG")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
