"""Helpers shared by the nn kernels of ``ember/ops/nn/``: a Tensor's raw array, an op
applied to raw arrays or recorded (``create_graph=True``), a ``*_backward`` op's zero
derivative in its input, the lowest value of a dtype.
"""
from __future__ import annotations

import numpy as np

from ... import _array_api
from ..._tensor import Tensor


def _raw(x):
    """The raw array of a Tensor (an integer output such as indices, seen in a rule)."""
    return x._data if isinstance(x, Tensor) else x


def _apply(op, xp, *args):
    """``op`` recorded when a rule runs on Tensors (``create_graph=True``), else its forward."""
    if _array_api.is_tensor_namespace(xp):
        return op(*args)
    return op.forward(xp, *args)


def _zeros_rule(xp, g, ans, grad, input, *params):
    """A ``*_backward`` op's derivative in ``input``, which it reads only for its shape."""
    return xp.zeros_like(input)


def _lowest(dtype):
    return -np.inf if dtype.kind in "fc" else np.iinfo(dtype).min
