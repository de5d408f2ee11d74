"""A diagnostic: which link path Numba takes and what it hands it.
Wraps cuda.bindings.nvjitlink's calls (the module cuda.core's Linker uses)
and the driver's cuLink* in Python, then compiles and runs one kernel.
Everything it says goes to stderr; stdout carries only the app's result."""
import sys

import numpy as np

if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack


def say(*a):
    print("linkwatch:", *a, file=sys.stderr, flush=True)


def wrap(mod, name, show):
    real = getattr(mod, name, None)
    if real is None:
        say("no", mod.__name__ + "." + name)
        return

    def hooked(*a, **k):
        r = real(*a, **k)
        say(mod.__name__ + "." + name, show(a), "->", type(r).__name__)
        return r

    setattr(mod, name, hooked)


def head(b):
    try:
        return bytes(b[:12])
    except Exception:
        return repr(b)[:40]


try:
    from cuda.bindings import nvjitlink

    wrap(nvjitlink, "create", lambda a: a[1:])
    wrap(nvjitlink, "add_data", lambda a: ("type", int(a[1]), "len", a[3], head(a[2])))
    wrap(nvjitlink, "add_file", lambda a: ("type", int(a[1]), a[2]))
    wrap(nvjitlink, "complete", lambda a: ())
    wrap(nvjitlink, "get_linked_cubin_size", lambda a: ())
    wrap(nvjitlink, "get_linked_cubin", lambda a: (type(a[1]).__name__,))
    wrap(nvjitlink, "get_linked_ptx", lambda a: ())
except Exception as e:  # noqa: BLE001
    say("cuda.bindings.nvjitlink:", e)
try:
    from cuda.bindings import driver as drv

    for n in ("cuLinkCreate", "cuLinkAddData", "cuLinkComplete", "cuModuleLoadData", "cuModuleLoadDataEx",
              "cuLibraryLoadData"):
        wrap(drv, n, lambda a: (len(a),))
except Exception as e:  # noqa: BLE001
    say("cuda.bindings.driver:", e)

from numba import cuda  # noqa: E402
from numba.cuda.cudadrv import driver as nd  # noqa: E402

say("USE_NV_BINDING", getattr(nd, "USE_NV_BINDING", "?"), "have_nvjitlink",
    getattr(nd, "_have_nvjitlink", lambda: "?")())
try:
    import cuda.core.experimental._linker as cl

    say("cuda.core linker module", cl.__file__)
    cl._lazy_init()
    say("cuda.core uses nvjitlink:", getattr(cl, "_nvjitlink", "?"))
except Exception as e:  # noqa: BLE001
    say("cuda.core linker:", e)


@cuda.jit
def jit_numba(x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] += 2.0 * x[i]


n = 1 << 16
x = cuda.to_device(np.ones(n, dtype=np.float32))
y = cuda.to_device(np.zeros(n, dtype=np.float32))
jit_numba[(n + 255) // 256, 256](x, y)
print("linkwatch sum", float(y.copy_to_host().sum()))
lib = next(iter(jit_numba.overloads.values())).library
cub = lib.get_cubin()
code = getattr(cub, "code", cub)
say("cubin object", type(cub).__name__, "bytes", len(bytes(code)), head(bytes(code)))
with open("/proc/self/maps") as maps:
    for path in sorted({line.split()[-1] for line in maps if "nvJitLink" in line or "libcuda" in line or
                        "nvrtc" in line or "nvptxcompiler" in line.lower()}):
        say("mapped", path)
