"""Binds the public op functions to ``Tensor`` as methods, operators and in-place forms.

``ember.exp(x)`` and ``x.exp()`` are the same function; ``x.exp_()`` runs it and writes the
result into ``x`` (``Tensor._inplace``), with PyTorch's version-counter and leaf checks.
"""
from __future__ import annotations

from . import _device, _dtypes
from ._tensor import Tensor
from .ops import (
    conv,
    indexing,
    linalg,
    nn_layers,
    nn_ops,
    pointwise,
    reduction,
    shape,
    sorting,
    unary,
)
from .ops.registry import defop

FAMILIES = (pointwise, unary, reduction, sorting, shape, linalg, indexing, nn_ops, conv,
            nn_layers)


def _make_inplace(fn):
    def method(self, *args, **kwargs):
        return self._inplace(fn, *args, **kwargs)
    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"In-place version of :func:`{fn.__name__}`."
    return method


for _family in FAMILIES:
    for _name, _fn in _family.METHODS.items():
        setattr(Tensor, _name, _fn)
    for _name in _family.INPLACE:
        setattr(Tensor, _name + "_", _make_inplace(_family.METHODS[_name]))


def _fill_(self, value):
    """Fill with ``value`` (a number or a 0-dim tensor) in place."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        return self._inplace(indexing._fill, value)
    return self._inplace(indexing._fill_scalar, value)


def _zero_(self):
    """Fill with zeros in place."""
    return self._inplace(indexing._zero)


def _copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast, cast) into self in place."""
    from .ops.indexing import _copy
    if isinstance(src, Tensor) and src.is_cuda != self.is_cuda:
        src = src.to(self.device)
    return self._inplace(_copy, src)


Tensor.fill_ = _fill_
Tensor.zero_ = _zero_
Tensor.copy_ = _copy_

# ------------------------------------------------------------------ operators


def _swap(fn):
    def reflected(self, other):
        return fn(other, self)
    return reflected


Tensor.__add__ = pointwise.add
Tensor.__radd__ = lambda self, other: pointwise._add(self, other, 1)
Tensor.__iadd__ = Tensor.add_
Tensor.__sub__ = pointwise.sub
Tensor.__rsub__ = lambda self, other: pointwise.rsub(self, other)
Tensor.__isub__ = Tensor.sub_
Tensor.__mul__ = pointwise.mul
Tensor.__rmul__ = lambda self, other: pointwise._mul(self, other)
Tensor.__imul__ = Tensor.mul_
Tensor.__truediv__ = pointwise.div
Tensor.__rtruediv__ = _swap(pointwise.div)
Tensor.__itruediv__ = Tensor.div_
Tensor.__floordiv__ = pointwise.floor_divide
Tensor.__rfloordiv__ = _swap(pointwise.floor_divide)
Tensor.__ifloordiv__ = Tensor.floor_divide_
Tensor.__mod__ = pointwise.remainder
Tensor.__rmod__ = _swap(pointwise.remainder)
Tensor.__imod__ = Tensor.remainder_
Tensor.__pow__ = pointwise.pow
Tensor.__rpow__ = _swap(pointwise.pow)
Tensor.__ipow__ = Tensor.pow_
Tensor.__matmul__ = linalg.matmul
Tensor.__rmatmul__ = _swap(linalg.matmul)
Tensor.__neg__ = pointwise.neg
Tensor.__pos__ = lambda self: self
Tensor.__eq__ = pointwise.eq
Tensor.__ne__ = pointwise.ne
Tensor.__lt__ = pointwise.lt
Tensor.__le__ = pointwise.le
Tensor.__gt__ = pointwise.gt
Tensor.__ge__ = pointwise.ge
Tensor.__hash__ = lambda self: id(self)
Tensor.__and__ = pointwise.bitwise_and
Tensor.__or__ = pointwise.bitwise_or
Tensor.__xor__ = pointwise.bitwise_xor
Tensor.__invert__ = pointwise.bitwise_not
Tensor.__abs__ = pointwise.abs

# ------------------------------------------------------------------ conversions


def _to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)`` or ``to(other)``: converted copy."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    for a in args:
        if isinstance(a, _dtypes.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, _device.device)):
            device = a
    out = self
    if dtype is not None:
        out = shape.to_dtype(out, dtype, copy)
    if device is not None:
        dev = _device.canonical(device)
        if dev != out.device:
            out = _move(out, dev)
    return out


def _move(t, dev):
    return _to_device(t, dev, t.device)


@defop("to_copy", n_in=1, jvp="linear")
def _to_device(xp, input, device, source):
    return _device.move(input, device)


_to_device.defvjp(lambda xp, g, ans, input, device, source:
                  g.to(source) if isinstance(g, Tensor) else _device.move(g, source))

Tensor.to = _to
Tensor.cpu = lambda self: _to(self, "cpu")
Tensor.cuda = lambda self, device=None, non_blocking=False: _to(
    self, "cuda" if device is None else _device.device("cuda", device)
    if isinstance(device, int) else device)


def _caster(dtype):
    def cast(self, memory_format=None):
        return shape.to_dtype(self, dtype)
    cast.__name__ = dtype.name
    return cast


for _m, _d in [("float", _dtypes.float32), ("double", _dtypes.float64), ("half", _dtypes.float16),
               ("long", _dtypes.int64), ("int", _dtypes.int32), ("short", _dtypes.int16),
               ("char", _dtypes.int8), ("byte", _dtypes.uint8), ("bool", _dtypes.bool),
               ("cfloat", _dtypes.complex64), ("cdouble", _dtypes.complex128)]:
    setattr(Tensor, _m, _caster(_d))
