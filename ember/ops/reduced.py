"""Reduced precision (float16, bfloat16): how ops compute them, as PyTorch's CPU kernels do,
in float32 with each op's result rounded back to the tensor's dtype.

``Op.__call__`` (``registry.py``) calls ``upcast`` before a forward whose inputs have such a
dtype and ``round_to`` on its results; a plain backward runs the rules on ``upcast_values`` of
the saved arrays and gradients, and ``registry._fit`` rounds each input's gradient back. So no
forward or rule is written for these dtypes, and NumPy never computes in them (ml_dtypes'
bfloat16 ufuncs would round every step, and NumPy's float16 sums accumulate in float16).
"""
from __future__ import annotations

import numpy as np

from .. import _dtypes

__all__ = ["upcast", "round_to", "upcast_values", "any_reduced", "reduced", "round_reduced"]

_LOWP = _dtypes.LOW_PRECISION_TYPES


def upcast(arrays, n_in, scalar_operands):
    """Reduced precision (float16, bfloat16): the arrays of inputs of such a dtype, and a
    parameter that names one (a reduction's ``dtype``), replaced by float32 ones, as PyTorch
    computes these ops in float32. Returns the reduced dtype the results round back to (None: no
    input had one), or None as well when a parameter names float32 itself (``.float()``,
    ``sum(dtype=torch.float32)``): those results stay float32.

    A Python number among the inputs is rounded to the reduced dtype first, as PyTorch casts
    it to the common dtype (``Op.scalar_operands`` says where else such numbers stand, or
    that the op reads them unrounded)."""
    low = None
    for i in range(n_in):
        a = arrays[i]
        dt = getattr(a, "dtype", None)
        if dt is not None and type(dt) in _LOWP:
            low = dt
            arrays[i] = a.astype(_dtypes.LOW_PRECISION[dt])
    if low is not None:
        for i in range(n_in) if scalar_operands is None else scalar_operands:
            a = arrays[i]
            if type(a) is float or type(a) is int:
                arrays[i] = float(np.asarray(a, low).astype(_dtypes.LOW_PRECISION[low]))
    for j in range(n_in, len(arrays)):
        p = arrays[j]
        if isinstance(p, np.dtype):
            if type(p) in _LOWP:
                low = p
                arrays[j] = _dtypes.LOW_PRECISION[p]
            elif low is not None and p == _dtypes.LOW_PRECISION[low]:
                return None
    return low


# The reduced dtype (float16, bfloat16) the running forward's results are rounded to, None when it
# computes in its own dtype: read by ``round_reduced``. Process-wide, as forwards do not yield.
reduced = [None]


def round_reduced(x):
    """``x`` rounded to the reduced dtype of the running forward (and back to float32), or
    ``x`` itself when there is none: for the few PyTorch kernels that keep an intermediate
    in the tensor's own reduced dtype (log_softmax's sum and its log)."""
    low = reduced[0]
    if low is None:
        return x
    return x.astype(low).astype(_dtypes.LOW_PRECISION[low])


def round_to(out, low):
    """The floating results of a forward run by ``_upcast``, rounded to ``low``."""
    if isinstance(out, tuple):
        return tuple(round_to(o, low) for o in out)
    compute = _dtypes.LOW_PRECISION[low]
    if getattr(out, "dtype", None) == compute:
        return out.astype(low)
    return out


def any_reduced(values):
    """Whether ``values`` (as ``upcast_values`` takes them: arrays, tuples or lists of them,
    dtypes, numbers) hold a reduced-precision array or dtype: a walk that makes nothing, so
    that a backward in float32 (nearly all of them) copies no node's arguments."""
    for v in values if isinstance(values, (tuple, list)) else (values,):
        t = type(v)
        if t is np.ndarray:
            if type(v.dtype) in _LOWP:
                return True
        elif t is int or t is float or v is None:
            continue
        elif isinstance(v, (tuple, list)):
            if any_reduced(v):
                return True
        elif t in _LOWP:  # a dtype parameter
            return True
        else:
            dt = getattr(v, "dtype", None)
            if dt is not None and type(dt) in _LOWP:
                return True
    return False


def upcast_values(values):
    """Reduced-precision arrays among ``values`` (an array, a tuple or list of them, None)
    as float32, for a derivative rule run in a plain backward; dtype parameters likewise."""
    if isinstance(values, (tuple, list)):
        return type(values)(upcast_values(v) for v in values)
    dt = getattr(values, "dtype", None)
    if dt is not None and type(dt) in _LOWP:
        return values.astype(_dtypes.LOW_PRECISION[dt])
    if isinstance(values, np.dtype) and type(values) in _LOWP:
        return _dtypes.LOW_PRECISION[values]
    return values
