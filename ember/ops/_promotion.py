"""PyTorch's type promotion of an op's inputs (``defop(..., promote=True | "float")``): array
inputs cast to the result dtype before the forward runs (``Op.__call__``)."""
from __future__ import annotations

from .. import _dtypes
from .._tensor import Tensor as _Tensor

# Python scalar types that never change a result dtype of the given array kinds.
_WEAK_SCALARS = {"f": (int, float), "c": (int, float, complex), "i": (int,), "u": (int,)}


def _promote(mode, args, arrays, n_in):
    """Cast array inputs to the op's result dtype (PyTorch promotion; 'float' makes ints float)."""
    first = arrays[0]
    dt = first.dtype if hasattr(first, "dtype") else None
    same = dt is not None
    if same:
        weak = _WEAK_SCALARS.get(dt.kind, ())
        for i in range(1, n_in):
            a = arrays[i]
            t = type(a)
            if t is bool or (t not in weak and getattr(a, "dtype", None) != dt):
                same = False
                break
    if same and (mode is True or dt.kind in "fc"):
        return
    ops = [a if isinstance(a, _Tensor) else (_Raw(a) if hasattr(a, "dtype") else a)
           for a in args[:n_in] if a is not None]  # None: an absent optional input (clamp)
    rt = _dtypes.result_type(*ops)
    if mode == "float" and rt.category < 2:
        rt = _dtypes.get_default_dtype()
    target = rt.np
    for i in range(n_in):
        a = arrays[i]
        if hasattr(a, "dtype") and a.dtype != target:
            arrays[i] = a.astype(target)


class _Raw:
    """A raw array seen by ``result_type`` as a tensor."""

    __slots__ = ("dtype", "ndim")

    def __init__(self, arr):
        self.dtype = _dtypes.from_numpy_dtype(arr.dtype)
        self.ndim = arr.ndim
