"""Data-parallel training under torchrun (one process per GPU, NCCL): a
small MLP, 20 SGD steps on per-rank random batches; rank 0 prints the
final loss and a checksum of the weights (the same with and without ntop:
NCCL's all-reduce of two ranks is deterministic here)."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).cuda()
ddp = DDP(model, device_ids=[torch.cuda.current_device()])
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
g = torch.Generator(device="cuda").manual_seed(rank)
for step in range(20):
    x = torch.randn(64, 256, device="cuda", generator=g)
    loss = ddp(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
torch.cuda.synchronize()
if rank == 0:
    w = sum(p.double().sum().item() for p in model.parameters())
    print(f"ddp_train: world {dist.get_world_size()} loss {loss.item():.6f} weights {w:.6f}")
dist.destroy_process_group()
