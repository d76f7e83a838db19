"""``torch.cuda``: the GPU, through CuPy.

``is_available()`` is True when CuPy is installed and sees a GPU; then these functions act on
CuPy's devices, streams, events and memory pool. Without one, each behaves as in a CPU-only
build of PyTorch 2.13: the seeding functions and memory counters are silent no-ops (seeding is
lazy, counts are 0), and the functions that need a device raise PyTorch's
``AssertionError("Torch not compiled with CUDA enabled")``, or its other error where it has one.
"""
from .. import _device
from .._tensor import Tensor
from . import memory, nvtx, random, streams
from ._common import cupy, device_index, require
from .memory import (
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_summary,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
    set_per_process_memory_fraction,
)
from .random import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from .streams import Event, Stream, current_stream, default_stream

__all__ = [
    "is_available", "device_count", "is_initialized", "init", "current_device", "set_device",
    "device", "device_of", "synchronize", "get_device_name", "get_device_properties",
    "get_device_capability", "is_bf16_supported", "get_arch_list", "current_stream",
    "default_stream", "stream", "StreamContext", "Stream", "Event", "OutOfMemoryError",
    "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed", "get_rng_state",
    "get_rng_state_all", "set_rng_state", "set_rng_state_all", "empty_cache",
    "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
    "reset_peak_memory_stats", "reset_max_memory_allocated", "memory_stats", "mem_get_info",
    "memory_summary", "set_per_process_memory_fraction", "ipc_collect",
    "is_current_stream_capturing", "memory", "nvtx",
    "random", "streams", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor",
    "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor",
]


class OutOfMemoryError(RuntimeError):
    """``torch.cuda.OutOfMemoryError``: a GPU allocation failed."""


def is_available():
    """True when CuPy is installed and sees at least one GPU."""
    return _device.cuda_available()


def device_count():
    """How many GPUs CuPy sees (0 without CuPy or a GPU)."""
    if not is_available():
        return 0
    return cupy().cuda.runtime.getDeviceCount()


def is_initialized():
    """Whether CUDA has been started: True once CuPy has been loaded with a GPU."""
    return bool(_device._cupy)


def init():
    """Start CUDA (CuPy) now instead of at first use."""
    require()


def current_device():
    """The index of the current GPU."""
    return require().cuda.runtime.getDevice()


def set_device(device):
    """Make ``device`` the current GPU (``'cuda'`` tensors then go there). A negative index
    does nothing, as in PyTorch."""
    if _device.CUDA_ON_CPU:
        return
    index = device_index(device, optional=False)
    if index < 0:
        return
    cp = cupy()
    if cp is None:  # PyTorch's CPU build fails this way
        raise AttributeError("module 'torch._C' has no attribute '_cuda_setDevice'")
    cp.cuda.Device(index).use()


class device:
    """``with torch.cuda.device(i):`` makes GPU ``i`` current inside the block."""

    def __init__(self, device):
        self.idx = device_index(device, optional=True)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is None:  # PyTorch compares None with an int here
            raise TypeError("'<' not supported between instances of 'NoneType' and 'int'")
        if self.idx < 0:
            return None
        cp = cupy()
        if cp is None:
            raise RuntimeError("PyTorch was compiled without CUDA support")
        self.prev_idx = cp.cuda.runtime.getDevice()
        cp.cuda.runtime.setDevice(self.idx)

    def __exit__(self, *exc):
        if self.prev_idx >= 0:
            cupy().cuda.runtime.setDevice(self.prev_idx)
        return False


class device_of(device):
    """``with torch.cuda.device_of(t):`` makes ``t``'s GPU current (nothing for CPU tensors)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def synchronize(device=None):
    """Wait until every kernel queued on ``device`` has finished."""
    if _device.CUDA_ON_CPU:
        return
    cp = require()
    with cp.cuda.Device(device_index(device)):
        cp.cuda.runtime.deviceSynchronize()


class _CudaDeviceProperties:
    """What ``get_device_properties`` reports, read from the CUDA runtime."""

    def __init__(self, props):
        name = props["name"]
        self.name = name.decode() if isinstance(name, bytes) else name
        self.major, self.minor = props["major"], props["minor"]
        self.total_memory = props["totalGlobalMem"]
        self.multi_processor_count = props["multiProcessorCount"]
        self.is_integrated = props.get("integrated", 0)
        self.is_multi_gpu_board = props.get("isMultiGpuBoard", 0)
        self.L2_cache_size = props.get("l2CacheSize", 0)

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB)")


def get_device_properties(device=None):
    cp = require()
    return _CudaDeviceProperties(cp.cuda.runtime.getDeviceProperties(device_index(device)))


def get_device_name(device=None):
    return get_device_properties(device).name


def get_device_capability(device=None):
    props = get_device_properties(device)
    return props.major, props.minor


def is_bf16_supported(including_emulation=True):
    """ember has no bfloat16 tensors (NumPy has no bfloat16), on any device: False."""
    return False


def get_arch_list():
    """The GPU architectures PyTorch was compiled for; ember compiles nothing ahead: []."""
    return []


class StreamContext:
    """``with torch.cuda.stream(s):`` queues the block's kernels on ``s`` (``None``: no
    change)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream._stream.__enter__()

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream._stream.__exit__(*exc)
        return False


def stream(stream):
    return StreamContext(stream)


def is_current_stream_capturing():
    """Whether the current stream is recording a CUDA graph: ember records none (PyTorch's
    CPU build raises this RuntimeError)."""
    if cupy() is None:
        raise RuntimeError("Tried to instantiate dummy base class _cuda_isCurrentStreamCapturing")
    return False


def ipc_collect():
    """Free memory shared with other processes once they are done: CuPy shares none."""
    require()


class _LegacyCudaType(type):
    """``torch.cuda.FloatTensor`` and its kin: ``isinstance`` checks dtype and a GPU device;
    calling one makes a CUDA tensor (PyTorch's TypeError without a GPU)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.is_cuda

    def __call__(cls, *args):
        if not is_available():
            raise TypeError(f"type torch.cuda.{cls.__name__} not available. Torch not compiled "
                            "with CUDA enabled.")
        return legacy_new(cls.dtype, args, device="cuda")


def _legacy(name, dtype):
    return _LegacyCudaType(name, (), {"dtype": dtype, "__module__": __name__,
                                      "__doc__": f"Legacy CUDA {dtype!r} tensor type."})


from .._creation import LEGACY_TYPES, legacy_new  # noqa: E402  (the CPU types' names and dtypes)

FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor, CharTensor, \
    ByteTensor, BoolTensor = (_legacy(name, dtype) for name, dtype in LEGACY_TYPES)

from . import amp  # noqa: E402,F401  (torch.cuda.amp)
