"""The scatter family: ``scatter`` (of a tensor or a number, and its legacy ``reduce=``),
``scatter_add`` and ``scatter_reduce`` (sum, prod, mean, amax, amin), with PyTorch's
derivatives, ties of amax / amin sharing the gradient.

Like the other writes (``writing.py``), a scatter's derivative reads the gradient at the key
for the values written and zeroes it there for the input.
"""
from __future__ import annotations

import numpy as np

from ... import _errors, _xp
from ..._tensor import Tensor
from ...autograd import grad_mode
from ...autograd.graph import Node, gradient_edge, new_node
from .. import batching
from ..registry import defop, public, saves_also
from .keys import _scatter_args, _zeroed


def _block(key):
    """The leading block of ``src`` that a scatter with this key reads."""
    shape = np.broadcast_shapes(*(k.shape for k in key if not isinstance(k, slice)))
    return tuple(slice(0, n) for n in shape)



def _ufunc_at(xp, name, out, key, values):
    """``out[key] = name(out[key], values)`` with repeated indices applied one by one."""
    if name == "add":
        xp.add_at(out, key, values)
    elif xp is _xp.NUMPY:
        getattr(np, name).at(out, key, values)
    else:  # CuPy has ``at`` for few ufuncs (not multiply): do it on the host
        host = xp.asnumpy(out)
        getattr(np, name).at(host, tuple(xp.asnumpy(k) if not isinstance(k, slice) else k
                                         for k in key), xp.asnumpy(values))
        out[...] = xp.asarray(host)



def _src_rule(name):
    """The derivative for the ``src`` of a scatter: the gradient read where it was written."""
    def rule(xp, g, ans, input, src, key, src_shape, *params):
        grad = g[key]
        if tuple(grad.shape) != tuple(src_shape):  # PyTorch's engine refuses it too
            raise RuntimeError(f"Function {name} returned an invalid gradient at index 1 - got "
                               f"{list(grad.shape)} but expected shape compatible with "
                               f"{list(src_shape)}")
        return grad
    return rule


@defop("scatter", n_in=2, jvp="linear", batch="loop")
def _scatter(xp, input, src, key, src_shape):
    out = input.copy()
    out[key] = src[_block(key)]
    return out


_scatter.defvjp(lambda xp, g, ans, input, src, key, src_shape: _zeroed(xp, g, key),
                _src_rule("ScatterBackward0"))


@defop("scatter", n_in=1, overload=1, jvp="transpose", batch="loop")
def _scatter_value(xp, input, key, value):
    out = input.copy()
    out[key] = value
    return out


_scatter_value.defvjp(lambda xp, g, ans, input, key, value: _zeroed(xp, g, key))


@defop("scatter_add", n_in=2, jvp="linear", batch="loop", inplace=True)
def _scatter_add(xp, input, src, key, src_shape):
    out = input.copy()
    xp.add_at(out, key, src[_block(key)])
    return out


_scatter_add.defvjp(lambda xp, g, ans, input, src, key, src_shape: g,
                    _src_rule("ScatterAddBackward0"))


@_scatter_add.public
@batching.reads_data(2, "index")
def scatter_add(input, dim, index, src):
    """Add ``src`` into a copy of ``input`` at ``index`` along ``dim`` (repeats accumulate)."""
    key = _scatter_args("scatter", input, dim, index, src)
    return saves_also(_scatter_add(input, src, key, tuple(src.shape)), index)


def _reduce_identity(reduce, dtype):
    """The value an entry starts from when the input's own entry is left out."""
    floating = dtype.kind in "fc"
    if reduce == "amax":
        return -np.inf if floating else np.iinfo(dtype).min
    if reduce == "amin":
        return np.inf if floating else np.iinfo(dtype).max
    return 1 if reduce == "prod" else 0


def _scatter_counts(xp, key, shape, include_self, like):
    """How many values reduce into each entry (the input's own one included if it is); entries
    nothing reduces into count 1."""
    ones = xp.new_zeros(like, _shape_of(key)) + 1
    n = xp.index_add_zeros(ones, shape, key) + (1 if include_self else 0)
    return xp.where(n == 0, n + 1, n)


def _shape_of(key):
    return tuple(s.stop for s in _block(key))


@defop("scatter_reduce", n_in=2, jvp="transpose", batch="loop", inplace=True)
def _scatter_reduce(xp, input, src, key, src_shape, reduce, include_self):
    out = input.copy()
    src = src[_block(key)]
    if not include_self:
        out[key] = _reduce_identity(reduce, out.dtype)
    _ufunc_at(xp, {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum",
                   "amin": "minimum"}[reduce], out, key, src)
    if reduce == "mean":
        count = xp.zeros(out.shape, dtype=out.dtype)
        xp.add_at(count, key, 1)
        count = xp.maximum(count + (1 if include_self else 0), 1)
        out = out / count if out.dtype.kind in "fc" else xp.floor_divide(out, count)
    return out


_xp.register_extra("scatter_reduce_at", _scatter_reduce.forward, _scatter_reduce)


def _scatter_reduce_self(xp, g, ans, input, src, key, src_shape, reduce, include_self):
    """PyTorch's derivative for ``input`` (zero where it was excluded from the reduction)."""
    if reduce == "mean":
        g = g / _scatter_counts(xp, key, input.shape, include_self, g)
    elif reduce == "prod":
        # The product of the other factors, without dividing by a zero input.
        masked = xp.where(input == 0, input * 0 + 1, input)
        g = g * xp.scatter_reduce_at(masked, src, key, src_shape, reduce, include_self) / masked
    elif reduce in ("amax", "amin"):
        g = (input == ans) * g / _ties(xp, ans, input, src, key)
    return g if include_self else _zeroed(xp, g, key)


def _ties(xp, ans, input, src, key):
    """How many values equal each result of ``amax``/``amin`` (they share its gradient)."""
    src_wins = xp.astype(src[_block(key)] == ans[key], ans.dtype)  # (a count: no gradient)
    return (input == ans) + xp.index_add_zeros(src_wins, ans.shape, key)


def _scatter_reduce_src(xp, g, ans, input, src, key, src_shape, reduce, include_self):
    grad = _src_rule("ScatterReduceBackward0")(xp, g, ans, input, src, key, src_shape)
    if reduce == "mean":
        return grad / _scatter_counts(xp, key, input.shape, include_self, g)[key]
    if reduce == "prod":
        zero = src == 0
        zeros_there = xp.index_add_zeros(zero * (src * 0 + 1), input.shape, key)[key]
        lone_zero = zero & (zeros_there == 1)
        # A lone zero's derivative is the product of the others: redo the product without it.
        without = xp.scatter_reduce_at(input, xp.where(lone_zero, src * 0 + 1, src), key,
                                       src_shape, reduce, include_self)
        return xp.where(lone_zero, (g * without)[key],
                        (g * ans)[key] / xp.where(zero, src * 0 + 1, src))
    if reduce in ("amax", "amin"):
        share = (g / _ties(xp, ans, input, src, key))[key]
        return (src == ans[key]) * share
    return grad


_scatter_reduce.defvjp(_scatter_reduce_self, _scatter_reduce_src)


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


@_scatter_reduce.public
@batching.reads_data(2, "index")
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Reduce ``src`` into a copy of ``input`` at ``index`` along ``dim``.

    ``reduce``: 'sum', 'prod', 'mean', 'amax' or 'amin'; ``include_self``: whether the input's
    own entries take part. Ties of amax/amin share the gradient equally, as in PyTorch.
    """
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if reduce not in _REDUCTIONS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    key = _scatter_args("scatter", input, dim, index, src)
    return saves_also(_scatter_reduce(input, src, key, tuple(src.shape), reduce, include_self),
                      index)


def _scatter_reduce_arg(reduce, kind):
    """The deprecated ``reduce=`` of ``scatter``: 'add' or 'multiply'."""
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if kind == "src":
        _errors.warn("The reduce argument of torch.scatter with Tensor src is deprecated and "
                     "will be removed in a future PyTorch release. Use torch.scatter_reduce "
                     "instead for more reduction options.")


@public(inplace=True)
@batching.reads_data(2, "index")
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """Write ``src`` (or the number ``value``) into a copy of ``input`` at ``index`` along ``dim``.

    Where indices repeat, the last write wins.
    """
    if src is None:
        src = value
    if reduce is not None:
        _scatter_reduce_arg(reduce, "src" if isinstance(src, Tensor) else "value")
    key = _scatter_args("scatter", input, dim, index, src)
    if reduce is not None:
        return _scatter_legacy(input, src, key, reduce)
    if isinstance(src, Tensor):
        return saves_also(_scatter(input, src, key, tuple(src.shape)), index)
    return saves_also(_scatter_value(input, key, src), index)


class _NotImplemented(Node):
    """The grad_fn of a result PyTorch computes but cannot differentiate: running it raises."""

    __slots__ = ("_message",)

    def apply(self, grad_outputs, create_graph):
        raise RuntimeError(self._message)

    def release(self):
        pass


_NotImplemented.__name__ = _NotImplemented.__qualname__ = "NotImplemented"


def _scatter_legacy(input, src, key, reduce):
    """``scatter(..., reduce='add'|'multiply')``: its result gets PyTorch's ``NotImplemented``
    grad_fn, whose backward raises."""
    xp = _xp.namespace_of(input._data)
    out = input._data.copy()
    values = src._data[_block(key)] if isinstance(src, Tensor) else src
    _ufunc_at(xp, "add" if reduce == "add" else "multiply", out, key,
              xp.broadcast_to(xp.asarray(values, dtype=out.dtype), _shape_of(key)))
    inputs = [t for t in (input, src) if isinstance(t, Tensor)]
    if not (grad_mode._state.grad and any(t.requires_grad for t in inputs)):
        return Tensor._make(out, None, False)
    node = new_node(_NotImplemented, tuple(gradient_edge(t) for t in inputs))
    node._message = "derivative for aten::scatter is not implemented"
    return Tensor._make(out, node, True)
