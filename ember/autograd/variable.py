"""``torch.autograd.variable``: ``Variable``, the tensor wrapper of PyTorch before 0.4."""
from __future__ import annotations

import warnings

from .. import _errors
from .._creation import _type_name
from .._tensor import Tensor
from .graph import execution_engine

__all__ = ["VariableMeta", "Variable"]


class VariableMeta(type):
    """Makes every tensor an instance of ``Variable``."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor)


class Variable(metaclass=VariableMeta):
    """The pre-0.4 wrapper, kept for old code: every tensor is a Variable, and
    ``Variable(t, requires_grad=False)`` is ``t.detach()`` (a new leaf sharing ``t``'s data)
    with ``requires_grad`` set on it, as in PyTorch.

    Example:
        >>> t = ember.ones(2)
        >>> v = Variable(t, requires_grad=True)
        >>> v.requires_grad, t.requires_grad
        (True, False)
    """

    _execution_engine = execution_engine  # (``queue_callback``: autograd/graph.py)

    def __new__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {_type_name(data)}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        out = data.detach()
        if requires_grad:
            if not (out.is_floating_point() or out.is_complex()):
                raise RuntimeError(_errors.INT_FACTORY_REQUIRES_GRAD)
            out.requires_grad_(True)
        return out
