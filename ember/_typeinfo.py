"""``torch.finfo`` and ``torch.iinfo``: the numerical limits of a dtype.

The values are NumPy's ``finfo``/``iinfo`` (ml_dtypes' for bfloat16), read into plain Python
numbers as PyTorch gives them; ``dtype`` is the dtype's name as a string, and the repr prints
each number with six significant digits, as PyTorch's does.
"""
from __future__ import annotations

import builtins

import numpy as np

from . import _dtypes

__all__ = ["finfo", "iinfo"]


def _g(v):
    return f"{v:g}"


class finfo:
    """Machine limits of a floating dtype (of the default dtype when none is given); for a
    complex dtype, those of its real part.

    Example::

        >>> ember.finfo(ember.bfloat16).eps
        0.0078125
    """

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):  # noqa: A002 - PyTorch's parameter name
        d = _dtypes.get_default_dtype() if type is None else type
        if not isinstance(d, _dtypes.dtype):
            raise TypeError("finfo(): argument 'type' (position 1) must be torch.dtype, not "
                            f"{builtins.type(d).__name__}")
        if d.category < 2:
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        d = d.to_real()
        info = _dtypes.np_finfo(d.np)
        self.bits = d.itemsize * 8
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision  # (float16: 0.001, not its nearest half)
        self.dtype = d.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    __hash__ = None  # (unhashable, as PyTorch's)

    def __repr__(self):
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, "
                f"max={_g(self.max)}, eps={_g(self.eps)}, "
                f"smallest_normal={_g(self.smallest_normal)}, tiny={_g(self.tiny)}, "
                f"dtype={self.dtype})")


class iinfo:
    """Limits of an integer (or bool) dtype: ``bits``, ``min``, ``max`` as Python ints."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):  # noqa: A002 - PyTorch's parameter name
        if not isinstance(type, _dtypes.dtype):
            raise TypeError("iinfo(): argument 'type' (position 1) must be torch.dtype, not "
                            f"{builtins.type(type).__name__}")
        if type is _dtypes.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.category > 1:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.bits, self.min, self.max = info.bits, int(info.min), int(info.max)
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    __hash__ = None

    def __repr__(self):
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"
