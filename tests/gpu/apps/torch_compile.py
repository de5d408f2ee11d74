"""torch.compile (Inductor: generated Triton kernels) in default mode and in
"reduce-overhead" mode (CUDA graphs), on a small linear + GELU + LayerNorm
block; prints a weighted-sum checksum of the eager output to 3 decimals and
of each compiled output to 2 (compiled kernels may differ from eager, and
Inductor may pick its kernel configs by timing, in the last bits), and
whether each is allclose to eager; the same program must print the same
under ntop."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.LayerNorm(512)).cuda()
x = torch.randn(64, 256, device="cuda")
w = torch.linspace(-1, 1, 512, device="cuda")  # a weighted sum: LayerNorm rows sum to ~0


def checksum(t, decimals):
    return "%.*f" % (decimals, (t.double() * w.double()).sum().item())


with torch.no_grad():
    eager = model(x)
    print("eager sum", checksum(eager, 3))
    for mode in ("default", "reduce-overhead"):
        f = torch.compile(model, mode=mode)
        for _ in range(3):
            y = f(x)
        torch.cuda.synchronize()
        print(mode, "close to eager:", bool(torch.allclose(y, eager, atol=1e-3)), "sum", checksum(y, 2))
print("torch_compile done")
