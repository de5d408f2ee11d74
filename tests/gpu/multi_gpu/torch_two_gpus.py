"""PyTorch on cuda:0 and cuda:1 in one process: a matmul and a reduction on
each GPU (different sizes, so each launch's grid says its GPU), one line
of results per GPU (the same with and without ntop)."""
import torch

torch.manual_seed(0)
for dev, n in ((0, 2048), (1, 3072)):
    x = torch.randn(n, n, device=f"cuda:{dev}")
    y = torch.relu(x @ x)
    s = y.sum(dim=0)
    torch.cuda.synchronize(dev)
    print(f"torch_two_gpus: cuda:{dev} n={n} sum={s.sum().item():.6e} max={s.max().item():.6e}")
