"""Output hashing for the Python examples: a hash of the raw bytes, so a run
under ntop must be bit-identical to a plain run (no rounding that could hide a
difference). Lines starting with "info:" are run-to-run noise by convention."""
import hashlib


def tensor_hash(t):
    """sha256 prefix of a torch tensor's bytes (any dtype)."""
    import torch
    b = t.detach().reshape(-1).contiguous().cpu().view(torch.uint8).numpy().tobytes()
    return hashlib.sha256(b).hexdigest()[:16]


def array_hash(a):
    """sha256 prefix of a numpy array's bytes."""
    import numpy as np
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


def checksum(what, digest):
    print(f"checksum {what} {digest}", flush=True)
