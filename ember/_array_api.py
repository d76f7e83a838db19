"""ember's array-API namespace over Tensors (``Tensor.__array_namespace__``).

Derivative rules run against this namespace under ``create_graph=True``: the same rule text
that runs on raw NumPy arrays then runs on ember Tensors and is recorded, giving higher-order
derivatives. Names and keywords follow the array API standard (``axis``, ``keepdims``).
"""
from __future__ import annotations

from . import _dtypes, _xp
from .ops import linalg as _linalg
from .ops import pointwise as _pw
from .ops import reduction as _red
from .ops import shape as _shape

exp, log, log1p, sigmoid = _pw.exp, _pw.log, _pw.log1p, _pw.sigmoid
abs, sign, maximum = _pw.abs, _pw.sign, _pw.maximum  # noqa: A001
multiply, add, subtract, divide, negative = _pw.mul, _pw.add, _pw.sub, _pw.div, _pw.neg
matmul = _linalg.matmul


def _dt(dtype):
    return dtype if isinstance(dtype, _dtypes.dtype) or dtype is None else \
        _dtypes.from_numpy_dtype(dtype)


def sum(x, axis=None, keepdims=False, dtype=None):  # noqa: A001 - the standard's name
    return _red.sum(x, dim=axis, keepdim=keepdims, dtype=_dt(dtype))


def mean(x, axis=None, keepdims=False):
    return _red.mean(x, dim=axis, keepdim=keepdims)


def reshape(x, shape, copy=None):
    return _shape.reshape(x, tuple(shape))


def broadcast_to(x, shape):
    return _shape.expand(x, tuple(shape))


def expand_dims(x, axis):
    return _shape.unsqueeze(x, axis)


def squeeze(x, axis):
    return _shape.squeeze(x, axis)


def swapaxes(x, axis1, axis2):
    return _shape.transpose(x, axis1, axis2)


def astype(x, dtype):
    return _shape.to_dtype(x, _dt(dtype))


def where(condition, x1, x2):
    return _pw.where(condition, x1, x2)


def zeros(shape, dtype=None, device=None):
    from . import _creation
    return _creation.zeros(tuple(shape), dtype=_dt(dtype), device=device)


def zeros_like(x, dtype=None, device=None):
    from . import _creation
    return _creation.zeros_like(x, dtype=_dt(dtype))


def __getattr__(name):
    extra = _xp.EXTRAS.get(name)
    if extra is not None and extra[1] is not None:
        return extra[1]
    raise AttributeError(f"ember's array namespace has no attribute {name!r}")
