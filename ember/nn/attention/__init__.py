"""``torch.nn.attention``: choosing the kernels ``F.scaled_dot_product_attention`` may use.

On the CPU PyTorch has two kernels, math and flash attention. ember has both too: the math
backend's composite, and one op standing for the flash kernel where PyTorch runs it
(``ops/nn/attention.py``: same grad_fn, layouts and values up to rounding). Under
``sdpa_kernel(...)`` with MATH enabled, the flash op runs only if FLASH_ATTENTION is enabled too
(and ``torch.backends.cuda.enable_flash_sdp`` left on); with FLASH_ATTENTION but not MATH
ember's attention runs where PyTorch's CPU flash kernel would (4-D inputs, no dropout), with
PyTorch's errors elsewhere (PyTorch's result can then differ from ember's in the last bits;
PyTorch also warns why its kernel was not used); with neither, PyTorch's error.

The enabled set is process-wide (PyTorch keeps it in global flags): ``sdpa_kernel`` changes
it for every thread until it exits.
"""
from __future__ import annotations

import contextlib
import enum

from ...backends import cuda as _cuda_backend

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.Enum):
    """The attention kernels PyTorch knows."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value


_ALL = frozenset(b for b in SDPBackend if b is not SDPBackend.ERROR)
_enabled = set(_ALL)  # global state, as PyTorch's backend flags

_NO_BACKEND = ("No viable backend for scaled_dot_product_attention was found. This is likely due "
               "to turning off both the math kernel and the fused kernels.")


def _flash_enabled():
    """Whether PyTorch's CPU would consider its flash kernel: enabled here and in
    ``torch.backends.cuda`` (PyTorch reads one flag for both)."""
    return SDPBackend.FLASH_ATTENTION in _enabled and _cuda_backend.flash_sdp_enabled()


def _check_enabled(query, key, value, dropout_p):
    """Raise PyTorch's CPU error unless a kernel ember can stand in for is enabled and would
    accept these inputs."""
    if SDPBackend.MATH in _enabled:
        return
    if SDPBackend.FLASH_ATTENTION not in _enabled:
        raise RuntimeError(_NO_BACKEND)
    if dropout_p != 0 or not query.dim() == key.dim() == value.dim() == 4:
        raise RuntimeError("No available kernel.  Aborting execution.")


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Enable only ``backends`` (one ``SDPBackend`` or a list) inside the block, or the
    decorated function; every backend is enabled again on exit, as in PyTorch.
    ``set_priority`` (the order to try them in) changes nothing in ember.

    Example:
        >>> with sdpa_kernel(SDPBackend.MATH):
        ...     out = F.scaled_dot_product_attention(q, k, v)
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    chosen = {backends} if isinstance(backends, SDPBackend) else set(backends)
    previous = set(_enabled)
    _enabled.clear()
    _enabled.update(chosen & _ALL)
    try:
        yield {}
    finally:
        _enabled.clear()
        _enabled.update(previous)
