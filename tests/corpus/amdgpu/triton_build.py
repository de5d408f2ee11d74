#!/usr/bin/env python3
"""Compiles src/triton_kernels.py with the installed triton's AMD backend
(no GPU, no ROCm) into triton.KERNEL.ARCH.hsaco beside this script.
Called by regen.sh; needs `pip install triton` (the version regen.sh pins)."""
import os
import sys

# (fusion on, as Triton 3.9 defaults to; said explicitly to keep the bytes)
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "src"))

import triton  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402
from triton_kernels import KERNELS  # noqa: E402

# (arch, wave size): Triton builds gfx9 for wave64 and gfx11 for wave32
TARGETS = [("gfx90a", 64), ("gfx942", 64), ("gfx1100", 32)]

for name, (fn, sig, consts) in KERNELS.items():
    for arch, wave in TARGETS:
        k = triton.compile(ASTSource(fn=fn, signature=sig, constexprs=consts),
                           target=GPUTarget("hip", arch, wave))
        with open(os.path.join(here, f"triton.{name}.{arch}.hsaco"), "wb") as f:
            f.write(k.asm["hsaco"])
