"""``nn.Parameter``: a Tensor that a Module registers as one of its parameters."""
from .. import _dtypes
from .._creation import empty
from .._tensor import Tensor


class Parameter(Tensor):
    """A leaf Tensor, ``requires_grad=True`` by default, sharing storage with ``data``."""

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        p = object.__new__(cls)
        p._setup(data._data, None, False)
        p._vc = data._vc
        if requires_grad and not _dtypes.is_inexact(data._data.dtype):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        p._rg = bool(requires_grad)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (Tensor.__reduce_ex__(self, protocol), self.requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        p = Parameter(self.detach().clone(), self.requires_grad)
        memo[id(self)] = p
        return p


def _rebuild_parameter(reduced, requires_grad):
    fn, args = reduced
    return Parameter(fn(*args).detach(), requires_grad)
