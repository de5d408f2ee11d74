"""torch.compile (Inductor: generated Triton kernels) in default mode and in
"reduce-overhead" mode (CUDA graphs), on a small linear + GELU + LayerNorm
block; prints checksums rounded so that compiled and eager runs compare,
and the same program must print the same under ntop (issue 10)."""
import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.LayerNorm(512)).cuda()
x = torch.randn(64, 256, device="cuda")
with torch.no_grad():
    eager = model(x)
    for mode in ("default", "reduce-overhead"):
        f = torch.compile(model, mode=mode)
        for _ in range(3):
            y = f(x)
        torch.cuda.synchronize()
        print(mode, "close to eager:", bool(torch.allclose(y, eager, atol=1e-3)), "sum %.2f" % y.sum().item())
