"""``torch.cuda.nvtx``: named ranges for NVIDIA's profilers, through ``cupy.cuda.nvtx``.

Without a GPU these raise PyTorch's RuntimeError, as its CPU build does."""
import contextlib

from ._common import cupy

__all__ = ["range_push", "range_pop", "mark", "range"]

_NOT_INSTALLED = "NVTX functions not installed. Are you sure you have a CUDA build?"


def _nvtx():
    cp = cupy()
    if cp is None:
        raise RuntimeError(_NOT_INSTALLED)
    from cupy.cuda import nvtx
    return nvtx


def range_push(msg):
    """Open a nested range named ``msg``."""
    _nvtx().RangePush(msg)


def range_pop():
    """Close the innermost open range."""
    _nvtx().RangePop()


def mark(msg):
    """Mark an instant named ``msg``."""
    _nvtx().Mark(msg)


@contextlib.contextmanager
def range(msg, *args, **kwargs):  # noqa: A001 - PyTorch's name
    """A range around a ``with`` block (``msg`` formatted with the extra arguments)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
