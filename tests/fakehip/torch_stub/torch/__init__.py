"""A stand-in for the few `torch` names Triton 3.9's AMD backend touches,
for tests over the HIP test double (tests/fakehip) only: no GPU, no ROCm.

Triton's AMD driver is active when `torch.cuda.is_available()` and
`torch.version.hip` is set; it asks torch for the current device and
stream, and takes tensors as objects with `data_ptr()` and a `dtype` whose
str() is "torch.NAME". The test double's device memory is host memory, so a
tensor here is a ctypes buffer in this process. `untyped_storage().size()`
is there because Triton specializes a tensor under 2 GiB for buffer loads
and stores when torch is present, as it does with real torch on ROCm.
Nothing else of torch exists here: a name Triton starts to need fails
loudly with AttributeError rather than doing something made up."""
import contextlib
import ctypes
import sys
import types

version = types.SimpleNamespace(hip="7.1.25424", cuda=None)


class dtype:
    def __init__(self, name, ctype):
        self.name, self.ctype = name, ctype
        self.itemsize = ctypes.sizeof(ctype)

    def __repr__(self):
        return "torch." + self.name

    __str__ = __repr__


float32 = dtype("float32", ctypes.c_float)
float64 = dtype("float64", ctypes.c_double)
int8 = dtype("int8", ctypes.c_int8)
int32 = dtype("int32", ctypes.c_int32)
int64 = dtype("int64", ctypes.c_int64)
float, int = float32, int32  # torch.float, torch.int


class device:
    def __init__(self, type, index=0):
        self.type, self.index = type, index

    def __repr__(self):
        return f"device(type='{self.type}', index={self.index})"


class _Storage:
    def __init__(self, nbytes):
        self._nbytes = nbytes

    def size(self):
        return self._nbytes


class Tensor:
    """A 1-D tensor in host memory (the test double's device memory)."""

    def __init__(self, n, dtype=float32):
        self.dtype = dtype
        self.device = device("cuda", 0)
        self._buf = (dtype.ctype * n)()

    def data_ptr(self):
        return ctypes.addressof(self._buf)

    def numel(self):
        return len(self._buf)

    def element_size(self):
        return self.dtype.itemsize

    def untyped_storage(self):
        return _Storage(len(self._buf) * self.dtype.itemsize)

    def tolist(self):
        return list(self._buf)

    def zero_(self):
        ctypes.memset(self._buf, 0, ctypes.sizeof(self._buf))
        return self

    def record_stream(self, stream):
        pass


def empty(n, dtype=float32, device=None):
    return Tensor(n, dtype)


zeros = empty  # ctypes buffers start zeroed


def tensor(values, dtype=float32, device=None):
    t = Tensor(len(values), dtype)
    t._buf[:] = values
    return t


class _Stream:
    """The null stream: the test double runs every launch at once."""
    cuda_stream = 0

    def __init__(self, stream_ptr=0, device=None):
        self.cuda_stream = stream_ptr


class _Cuda(types.ModuleType):
    """torch.cuda: one device, the null stream."""
    Stream = ExternalStream = _Stream

    def is_available(self):
        return True

    def device_count(self):
        return 1

    def current_device(self):
        return 0

    def set_device(self, index):
        if index != 0:
            raise RuntimeError(f"torch stub: no device {index} (one device)")

    def get_device_capability(self, index=0):
        return (9, 0)  # gfx90a, as torch on ROCm reports it

    def current_stream(self, index=0):
        return _Stream()

    def default_stream(self, index=0):
        return _Stream()

    def stream(self, s):
        return contextlib.nullcontext(s)

    def synchronize(self, index=0):
        pass


cuda = _Cuda("torch.cuda")
sys.modules["torch.cuda"] = cuda  # `import torch.cuda` finds it
