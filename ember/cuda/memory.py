"""``torch.cuda.memory``: how much GPU memory ember's tensors hold.

With CuPy, ember's GPU arrays come from CuPy's default memory pool, which plays the part of
PyTorch's caching allocator: ``memory_allocated`` is the bytes in use by arrays, and
``memory_reserved`` the bytes the pool holds from the driver. The peak is tracked by an
allocator hook installed when CuPy is first loaded. Without a GPU every count is 0, as in
PyTorch.
"""
import collections
import warnings

from ._common import cupy, device_index, require

__all__ = ["empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "memory_stats", "memory_summary", "mem_get_info", "set_per_process_memory_fraction"]

_peak = {}  # GPU index -> the most bytes in use since the last reset
_NO_C = "module 'torch._C' has no attribute '{}'"  # PyTorch's CPU build fails this way


def install_peak_tracking(cp):
    """Route CuPy's allocations through the default pool while recording the peak in use."""
    pool = cp.get_default_memory_pool()
    runtime = cp.cuda.runtime

    def malloc(size):
        memory = pool.malloc(size)
        index = runtime.getDevice()
        _peak[index] = max(_peak.get(index, 0), pool.used_bytes())
        return memory
    cp.cuda.set_allocator(malloc)


def empty_cache():
    """Give the pool's unused blocks back to the driver."""
    cp = cupy()
    if cp is not None:
        cp.get_default_memory_pool().free_all_blocks()


def _pool_bytes(device, what):
    cp = cupy()
    if cp is None:
        return 0
    with cp.cuda.Device(device_index(device)):
        pool = cp.get_default_memory_pool()
        return pool.used_bytes() if what == "used" else pool.total_bytes()


def memory_allocated(device=None):
    """Bytes held by live tensors on ``device``."""
    return _pool_bytes(device, "used")


def memory_reserved(device=None):
    """Bytes the memory pool holds on ``device`` (in use or cached)."""
    return _pool_bytes(device, "total")


def max_memory_allocated(device=None):
    """The most bytes held by tensors on ``device`` since the start or the last reset."""
    if cupy() is None:
        return 0
    index = device_index(device)
    return max(_peak.get(index, 0), memory_allocated(index))


def max_memory_reserved(device=None):
    """ember does not track the pool's peak size; the pool only grows until ``empty_cache``,
    so its current size is returned."""
    return memory_reserved(device)


def reset_peak_memory_stats(device=None):
    if cupy() is None:
        raise AttributeError(_NO_C.format("_cuda_resetPeakMemoryStats"))
    index = device_index(device)
    _peak[index] = memory_allocated(index)


def reset_max_memory_allocated(device=None):
    """Deprecated in PyTorch for ``reset_peak_memory_stats``, which it calls (and warns)."""
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def memory_stats(device=None):
    """PyTorch's allocator statistics; with CuPy, the few counts its pool keeps."""
    if cupy() is None:
        return collections.OrderedDict()
    index = device_index(device)
    return collections.OrderedDict([
        ("allocated_bytes.all.current", memory_allocated(index)),
        ("allocated_bytes.all.peak", max_memory_allocated(index)),
        ("reserved_bytes.all.current", memory_reserved(index)),
    ])


def memory_summary(device=None, abbreviated=False):
    """A printable summary of ``memory_stats`` (PyTorch's CPU build fails on its empty stats
    with this KeyError; ember's GPU summary is a few lines, not PyTorch's full table)."""
    stats = memory_stats(device)
    return (f"Allocated: {stats['allocated_bytes.all.current']} bytes (peak "
            f"{stats['allocated_bytes.all.peak']} bytes)\n"
            f"Reserved:  {stats['reserved_bytes.all.current']} bytes\n")


def set_per_process_memory_fraction(fraction, device=None):
    """Cap the memory pool of ``device`` at ``fraction`` of the GPU's memory."""
    cp = require()
    with cp.cuda.Device(device_index(device)):
        cp.get_default_memory_pool().set_limit(fraction=fraction)


def mem_get_info(device=None):
    """(free, total) bytes on the GPU, from the driver."""
    cp = require()
    with cp.cuda.Device(device_index(device)):
        return cp.cuda.runtime.memGetInfo()

