"""Integration by the trapezoidal rule: ``trapezoid`` / ``trapz`` and
``cumulative_trapezoid``, composites of other ops.
"""
from __future__ import annotations

import numpy as np

from ... import _xp
from ..._tensor import Tensor, _wrap_dim
from ..pointwise import div_scalar, mul_scalar
from ..registry import public

# --------------------------------------------------------------------------- integration
# Composites, written as PyTorch writes them (Integration.cpp), so the nodes recorded and the
# rounding are PyTorch's.


def _sample_dim(name, y, dim):
    if y.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, y.ndim)


def _check_real_dx(name, dx):
    if isinstance(dx, Tensor):
        dx = dx.item()
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return float(dx)


def _spacing(name, y, x, dim):
    """``x``'s differences along ``dim``, shaped to broadcast against those of ``y``."""
    if y._data.dtype == np.bool_ or x._data.dtype == np.bool_:
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           "supported")
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        x = x.view([x.shape[0] if d == dim else 1 for d in range(y.ndim)])
    elif x.ndim < y.ndim:
        x = x.view((1,) * (y.ndim - x.ndim) + tuple(x.shape))
    n = x.shape[dim]
    return x.narrow(dim, 1, n - 1) - x.narrow(dim, 0, n - 1)


def _pairs(y, dim):
    n = y.shape[dim]
    return y.narrow(dim, 0, n - 1) + y.narrow(dim, 1, n - 1)


def _invalid_trapezoid_args(name, y, x, dx):
    got = ", ".join([type(y).__name__, type(x).__name__] + ([f"dx={type(dx).__name__}"]
                                                            if dx is not None else []))
    raise TypeError(
        f"{name}() received an invalid combination of arguments - got ({got}), but expected "
        f"one of:\n * (Tensor y, Tensor x, *, int dim = -1)\n * (Tensor y, *, Number dx = 1, "
        "int dim = -1)\n")


@public(method=False)
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``: with sample points ``x``, or spacing ``dx``
    (default 1); no samples integrate to 0."""
    if x is not None and (dx is not None or not isinstance(x, Tensor)):
        _invalid_trapezoid_args("trapezoid", y, x, dx)
    d = _sample_dim("trapezoid", y, dim)
    if y.shape[d] == 0:
        shape = tuple(n for i, n in enumerate(y.shape) if i != d)
        return Tensor._make(_xp.namespace_of(y._data).zeros(shape, dtype=y._data.dtype),
                            None, False)
    if x is not None:
        return div_scalar((_pairs(y, d) * _spacing("trapezoid", y, x, d)).sum(d), 2.0)
    if y._data.dtype == np.bool_:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    step = _check_real_dx("trapezoid", 1 if dx is None else dx)
    return mul_scalar(y.sum(d) - mul_scalar(y.select(d, 0) + y.select(d, -1), 0.5), step)


@public(method=False)
def trapz(y, x=None, *, dx=None, dim=-1):
    """``trapezoid`` under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


@public(method=False)
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral along ``dim`` (one element fewer than ``y``)."""
    if x is not None and (dx is not None or not isinstance(x, Tensor)):
        _invalid_trapezoid_args("cumulative_trapezoid", y, x, dx)
    d = _sample_dim("cumulative_trapezoid", y, dim)
    if x is not None:
        return div_scalar((_pairs(y, d) * _spacing("cumulative_trapezoid", y, x, d)).cumsum(d),
                          2.0)
    if y._data.dtype == np.bool_:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is "
                           "not supported")
    step = _check_real_dx("cumulative_trapezoid", 1 if dx is None else dx)
    if y.shape[d] == 0:
        return y.narrow(d, 0, 0) * 1.0
    return mul_scalar(_pairs(y, d), step / 2.0).cumsum(d)
