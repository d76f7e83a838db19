"""Reductions, softmax and norms, with their derivatives (scans and sorting: ``sorting.py``).

Shared conventions: ``dim`` is an int or a tuple of ints (``None`` — and, where PyTorch allows
it, an empty tuple — means every dim); ``keepdim`` keeps reduced dims with size 1. A reduction's
rule first restores the reduced dims of its gradient (``_unreduce``), then works elementwise.

Value-selecting reductions (``max(dim)``, ``sort``, ``topk``, ...) send the gradient to the
selected positions with the private ``scatter`` / ``gather`` pair below; their results come as
``torch.return_types.X`` tuples (``return_type``).
"""
from __future__ import annotations

import builtins
import math
import operator
import types
import warnings

import numpy as np

from .. import _dtypes, _errors, _xp
from .._out import write_out
from .._tensor import Tensor, _wrap_dim
from .autocast import autocast_op
from .reduced import round_reduced
from .registry import defop

# --------------------------------------------------------------------------- dims and shapes


def _dims(dim, ndim):
    """``dim`` (an int or a sequence) as sorted non-negative dims; a 0-d tensor has none."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    wrapped = [_wrap_dim(d, ndim) for d in dims]
    for k, d in enumerate(wrapped):
        if d in wrapped[:k]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return tuple(sorted(wrapped)) if ndim else ()


def _no_dims(dim):
    return dim is None or (not isinstance(dim, int) and len(dim) == 0)


def _all_dims(dim, ndim):
    """``_dims``, where ``None`` or an empty sequence means every dim."""
    return tuple(range(ndim)) if _no_dims(dim) else _dims(dim, ndim)


def _kept_shape(shape, dims):
    return tuple(1 if i in dims else n for i, n in enumerate(shape))


def _count(shape, dims):
    """How many elements each reduction over ``dims`` combines."""
    return math.prod(shape[d] for d in dims)


def _unreduce(xp, g, shape, dims, keepdim):
    """``g`` (a reduction over ``dims`` of a tensor of ``shape``) with the reduced dims back."""
    if not keepdim and dims:
        g = xp.reshape(g, _kept_shape(shape, dims))
    return g


def _expand_back(xp, g, shape, dims, keepdim):
    """Broadcast a reduced gradient back over the reduced dims."""
    return xp.broadcast_to(_unreduce(xp, g, shape, dims, keepdim), shape)


def _raw(x):
    return x._data if isinstance(x, Tensor) else x


def _check_nonempty(name, input, dim):
    """PyTorch's error for reducing an empty dim by an op without identity (max, ...); it
    names the first such dim as the caller spelled it (``dim`` an int or a sequence)."""
    for d in (dim,) if isinstance(dim, int) else dim:
        if input.ndim and input.shape[_wrap_dim(d, input.ndim)] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _no_dim_error(name, suffix=" Specify the reduction dim with the 'dim' argument."):
    return f"{name}(): Expected reduction dim to be specified for input.numel() == 0.{suffix}"


def _accumulation_dtype(input, dtype):
    """The dtype of sum/prod/cumsum: ``dtype`` if given, int64 for integers and bools."""
    if dtype is not None:
        return dtype.np
    return _dtypes.int64.np if input._data.dtype.kind in "biu" else input._data.dtype


# --------------------------------------------------------------------------- return types

return_types = types.SimpleNamespace()  # ``ember.return_types.max`` etc., as ``torch.return_types``


class _ReturnType(tuple):
    """Base of the ``torch.return_types.X`` classes: a tuple whose items are also attributes."""

    __slots__ = ()
    __match_args__ = ()

    def __new__(cls, sequence):
        items = tuple(sequence)
        n = len(cls.__match_args__)
        if len(items) != n:
            raise TypeError(f"torch.return_types.{cls.__name__}() takes a {n}-sequence "
                            f"({len(items)}-sequence given)")
        return tuple.__new__(cls, items)

    def __repr__(self):
        fields = ",\n".join(f"{name}={value!r}" for name, value in zip(self.__match_args__, self))
        return f"torch.return_types.{type(self).__name__}(\n{fields})"

    def __reduce__(self):
        return type(self), (tuple(self),)


def return_type(name, fields):
    """The class ``torch.return_types.<name>`` with item names ``fields`` (made once)."""
    cls = getattr(return_types, name, None)
    if cls is None:
        namespace = {"__slots__": (), "__match_args__": tuple(fields), "n_fields": len(fields),
                     "n_sequence_fields": len(fields), "n_unnamed_fields": 0}
        namespace.update({f: property(operator.itemgetter(i)) for i, f in enumerate(fields)})
        cls = type(name, (_ReturnType,), namespace)
        cls.__module__, cls.__qualname__ = __name__, f"return_types.{name}"  # picklable
        setattr(return_types, name, cls)
    return cls


# --------------------------------------------------------------------------- value selection


@defop("scatter", n_in=2, jvp="linear")
def _scatter(xp, base, src, index, axis, shape):
    """``src`` written at ``index`` along ``axis`` into a tensor of ``shape`` filled with ``base``.

    ``index`` holds distinct positions along ``axis`` (a selection: argmax, a permutation,
    top-k), so no two writes collide and the derivative is a plain gather.
    """
    out = xp.full(shape, base, dtype=src.dtype)
    xp.put_along_axis(out, index, src, axis)
    return out


_scatter.defvjp(None, lambda xp, g, ans, base, src, index, axis, shape:
                xp.gather_along_axis(g, index, axis, shape))


@defop("gather", n_in=1, jvp="linear")
def _gather(xp, input, index, axis, shape):
    """The values of ``input`` (of ``shape``) at ``index`` along ``axis`` (see ``_scatter``)."""
    return xp.take_along_axis(input, index, axis=axis)


_gather.defvjp(lambda xp, g, ans, input, index, axis, shape:
               xp.scatter_along_axis(g, index, axis, shape))

_xp.register_extra(
    "scatter_along_axis",
    lambda xp, src, index, axis, shape: _scatter.forward(xp, 0, src, index, axis, shape),
    lambda src, index, axis, shape: _scatter(0, src, _raw(index), axis, shape))
_xp.register_extra(
    "gather_along_axis",
    lambda xp, input, index, axis, shape: _gather.forward(xp, input, index, axis, shape),
    lambda input, index, axis, shape: _gather(input, _raw(index), axis, shape))


def _unselect(xp, g, index, dim, keepdim, shape):
    """The gradient of selecting ``index`` along ``dim`` of a tensor of ``shape``."""
    if not shape:
        return g
    index = _raw(index)
    if not keepdim:
        kept = index.shape[:dim] + (1,) + index.shape[dim:]
        index, g = index.reshape(kept), xp.reshape(g, kept)
    return xp.scatter_along_axis(g, index, dim, shape)


def picked(xp, input, index, dim, keepdim):
    """``(values, indices)`` of a reduction that picks one element along ``dim`` (max, min,
    mode): ``index`` has ``dim`` kept (size 1); both lose it unless ``keepdim``."""
    values = xp.take_along_axis(input, index, axis=dim)
    if not keepdim:
        values, index = xp.squeeze(values, axis=dim), xp.squeeze(index, axis=dim)
    return values, index


def _evenly_distribute(xp, g, ans, input):
    """Full max/min/median: tied inputs share the gradient; a NaN result goes to the NaNs."""
    mask = (input != input) if ans != ans else (input == ans)
    # (filled in, as PyTorch's CPU kernel does: an infinite g leaves the others 0, not NaN)
    return xp.where(mask, g / int(mask.sum()), 0)


# --------------------------------------------------------------------------- sum, mean, prod


@defop("sum", n_in=1, jvp="linear")
def _sum_all(xp, input, shape, dtype):
    return xp.sum(input, dtype=dtype)


_sum_all.defvjp(lambda xp, g, ans, input, shape, dtype: xp.broadcast_to(g, shape))


@defop("sum", n_in=1, overload=1, jvp="linear")
def _sum_dim(xp, input, dims, keepdim, shape, dtype):
    return xp.sum(input, axis=dims, keepdims=keepdim, dtype=dtype)


_sum_dim.defvjp(lambda xp, g, ans, input, dims, keepdim, shape, dtype:
                _expand_back(xp, g, shape, dims, keepdim))


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001 - PyTorch's name
    """Sum of all elements, or over ``dim`` (an int or tuple); integers sum to int64."""
    dt = _accumulation_dtype(input, dtype)
    if dim is None:
        return _sum_all(input, input.shape, dt)
    return _sum_dim(input, _all_dims(dim, input.ndim), keepdim, input.shape, dt)


@defop("mean", n_in=1, jvp="linear")
def _mean_all(xp, input, shape):
    return xp.sum(input) / input.size  # NaN for an empty input, without NumPy's warning


_mean_all.defvjp(lambda xp, g, ans, input, shape:
                 xp.broadcast_to(g / math.prod(shape), shape))


@defop("mean", n_in=1, overload=1, jvp="linear")
def _mean_dim(xp, input, dims, keepdim, shape):
    return xp.sum(input, axis=dims, keepdims=keepdim) / _count(shape, dims)


_mean_dim.defvjp(lambda xp, g, ans, input, dims, keepdim, shape:
                 _expand_back(xp, g / _count(shape, dims), shape, dims, keepdim))


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean; floating and complex inputs only, as in PyTorch."""
    if dtype is not None:
        input = input.to(dtype)
    if not _dtypes.is_inexact(input._data.dtype):
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {input.dtype._legacy[:-6]}")
    if dim is None:
        return _mean_all(input, input.shape)
    return _mean_dim(input, _all_dims(dim, input.ndim), keepdim, input.shape)


def _prod_of_others(xp, x, axis):
    """Each element's product of the other elements along ``axis`` (exact with zeros).

    The product of the elements before it times the product of those after it, both as
    exclusive cumulative products — differentiable, so it serves double backward too.
    """
    n = x.shape[axis]
    if n < 2:
        return xp.ones_like(x)
    head = (slice(None),) * axis

    def exclusive_cumprod(v):
        ones = xp.ones_like(v[head + (slice(0, 1),)])
        return xp.cumprod(xp.concatenate([ones, v[head + (slice(0, n - 1),)]], axis), axis=axis)

    return exclusive_cumprod(x) * xp.flip(exclusive_cumprod(xp.flip(x, axis=axis)), axis=axis)


@defop("prod", n_in=1, jvp="transpose")
def _prod_all(xp, input, dtype):
    return xp.prod(input, dtype=dtype)


def _prod_all_rule(xp, g, ans, input, dtype):
    if input.ndim == 0:
        return g
    if not (input == 0).any():
        return g * (ans / input)
    return g * xp.reshape(_prod_of_others(xp, xp.reshape(input, (-1,)), 0), input.shape)


_prod_all.defvjp(_prod_all_rule)


@defop("prod", n_in=1, overload=1, jvp="transpose")
def _prod_dim(xp, input, dim, keepdim, dtype):
    return xp.prod(input, axis=dim, keepdims=keepdim, dtype=dtype)


def _prod_dim_rule(xp, g, ans, input, dim, keepdim, dtype):
    if input.ndim == 0:
        return g
    g, ans = (_unreduce(xp, t, input.shape, (dim,), keepdim) for t in (g, ans))
    if not (input == 0).any():
        return g * (ans / input)
    return g * _prod_of_others(xp, input, dim)


_prod_dim.defvjp(_prod_dim_rule)


@autocast_op("prod")
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements, or over one ``dim``; integers multiply to int64."""
    dt = _accumulation_dtype(input, dtype)
    if dim is None:
        return _prod_all(input, dt)
    d = _wrap_dim(dim, input.ndim)
    return _prod_dim(input, d if input.ndim else None, keepdim, dt)


# --------------------------------------------------------------------------- NaN-ignoring


@defop("nansum", n_in=1, jvp="transpose")
def _nansum(xp, input, dims, keepdim, dtype):
    return xp.nansum(input, axis=dims, keepdims=keepdim, dtype=dtype)


_nansum.defvjp(lambda xp, g, ans, input, dims, keepdim, dtype: xp.where(
    xp.isnan(input), 0, _expand_back(xp, g, input.shape, dims, keepdim)))


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """``sum`` with NaNs counted as zero."""
    return _nansum(input, _all_dims(dim, input.ndim), keepdim, _accumulation_dtype(input, dtype))


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the elements that are not NaN (``nansum`` over their count)."""
    if dtype is not None:
        input = input.to(dtype)
    if not _dtypes.is_inexact(input._data.dtype):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {input.dtype._legacy[:-6]}")
    return nansum(input, dim, keepdim) / sum(input.isnan().logical_not(), dim, keepdim)


# --------------------------------------------------------------------------- max, min, arg*


def _extreme_ops(name):
    """The ops of ``max`` or ``min``: full (ties share), over a dim (with indices), amax."""

    @defop(name, n_in=1, overload=1, jvp="transpose")
    def full(xp, input):
        return getattr(xp, name)(input)

    full.defvjp(_evenly_distribute)

    @defop(name, n_in=1, nout=2, jvp="transpose")
    def over_dim(xp, input, dim, keepdim, shape):
        if input.ndim == 0:
            return input.copy(), xp.zeros((), dtype=np.int64)
        return picked(xp, input, getattr(xp, "arg" + name)(input, axis=dim, keepdims=True),
                      dim, keepdim)

    over_dim.defvjp(lambda xp, g, ans, input, dim, keepdim, shape:
                    _unselect(xp, g[0], ans[1], dim, keepdim, shape))
    over_dim.saved_outputs = (1,)  # the indices only

    @defop("a" + name, n_in=1, jvp="transpose")
    def amax(xp, input, dims, keepdim):
        return getattr(xp, name)(input, axis=dims, keepdims=keepdim)

    def amax_rule(xp, g, ans, input, dims, keepdim):
        g, ans = (_unreduce(xp, t, input.shape, dims, keepdim) for t in (g, ans))
        mask = input == ans
        return g / xp.astype(xp.sum(mask, axis=dims, keepdims=True), g.dtype) * mask

    amax.defvjp(amax_rule)
    return full, over_dim, amax


_max_all, _max_dim, _amax = _extreme_ops("max")
_min_all, _min_dim, _amin = _extreme_ops("min")


def _extreme(name, full, over_dim, binary):
    fields = return_type(name, ("values", "indices"))

    def public(input, dim=None, keepdim=False):
        if isinstance(dim, Tensor):
            return binary()(input, dim)
        if dim is None:
            if input.numel() == 0:
                raise RuntimeError(_no_dim_error(name))
            return full(input)
        d = _wrap_dim(dim, input.ndim)
        _check_nonempty(name, input, d)
        return fields(over_dim(input, d, keepdim, input.shape))

    public.__name__ = public.__qualname__ = name
    public.__doc__ = (
        f"``{name}(input)``: the {name}imum element (tied elements share the gradient).\n"
        f"``{name}(input, dim, keepdim=False)``: ``(values, indices)`` of the {name}ima along "
        f"``dim`` (the first one on ties; the gradient goes to it).\n"
        f"``{name}(input, other)``: the elementwise {name}imum, as ``torch.{name}imum``.")
    return public


def _pointwise(name):
    def get():
        from . import pointwise
        return getattr(pointwise, name)
    return get


max = _extreme("max", _max_all, _max_dim, _pointwise("maximum"))  # noqa: A001 - PyTorch's name
min = _extreme("min", _min_all, _min_dim, _pointwise("minimum"))  # noqa: A001


def _amax_public(name, op):
    def public(input, dim=(), keepdim=False):
        if _no_dims(dim) and input.numel() == 0:
            raise RuntimeError(_no_dim_error(name))
        _check_nonempty(name, input, dim)
        return op(input, _all_dims(dim, input.ndim), keepdim)
    public.__name__ = public.__qualname__ = name
    public.__doc__ = (f"The {name[1:]}imum over ``dim`` (every dim by default); tied elements "
                      "share the gradient equally.")
    return public


amax = _amax_public("amax", _amax)
amin = _amax_public("amin", _amin)


@defop("aminmax", n_in=1, nout=2, jvp="transpose")
def _aminmax(xp, input, dims, keepdim):
    return xp.min(input, axis=dims, keepdims=keepdim), xp.max(input, axis=dims, keepdims=keepdim)


_aminmax.defvjp(lambda xp, g, ans, input, dims, keepdim:
                _amin.rules[0](xp, g[0], ans[0], input, dims, keepdim) +
                _amax.rules[0](xp, g[1], ans[1], input, dims, keepdim))


def aminmax(input, *, dim=None, keepdim=False):
    """``(min, max)`` over ``dim`` (every dim by default); ties share the gradient."""
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        dims = tuple(range(input.ndim))
    else:
        d = _wrap_dim(dim, input.ndim)
        dims = (d,) if input.ndim else ()
        _check_nonempty("aminmax", input, dim)
    return return_type("aminmax", ("min", "max"))(_aminmax(input, dims, keepdim))


def _arg_op(name):
    @defop(name, n_in=1)
    def op(xp, input, dim, keepdim):
        if input.ndim == 0:
            return xp.zeros((), dtype=np.int64)
        return getattr(xp, name)(input, axis=dim, keepdims=keepdim)

    def public(input, dim=None, keepdim=False):
        if input._data.dtype == np.bool_:
            raise RuntimeError(f"{name}(): does not support bool input")
        if dim is None:
            if input.numel() == 0:
                raise IndexError(_no_dim_error(name, ""))
            return op(input, None, keepdim)
        d = _wrap_dim(dim, input.ndim)
        _check_nonempty(name, input, d)
        return op(input, d, keepdim)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = (f"Index of the {name[3:]}imum (the first on ties), over the flattened "
                      "input or along ``dim``; int64, without gradient.")
    return public


argmax = _arg_op("argmax")
argmin = _arg_op("argmin")


# --------------------------------------------------------------------------- variance


def _correction(name, unbiased, correction, dim):
    """PyTorch's ``correction`` from the legacy ``unbiased`` flag or itself (default 1)."""
    if unbiased is not None and correction is not None:
        got = "Tensor" + ("" if dim is None else f", {type(dim).__name__}")
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got ({got}, "
            "correction=int, unbiased=bool), but expected one of:\n"
            " * (Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, "
            "*, Tensor out = None)\n"
            " * (Tensor input, tuple of ints dim = None, *, Number correction = None, "
            "bool keepdim = False, Tensor out = None)\n"
            " * (Tensor input, bool unbiased = True)\n")
    if unbiased is not None:
        return int(bool(unbiased))
    return 1 if correction is None else correction


def _mean_raw(xp, x, dims, keepdim):
    """The mean on raw arrays over ``dims`` (all if None or empty), NaN when empty."""
    axis = dims or None
    n = x.size if axis is None else _count(x.shape, axis)
    return xp.sum(x, axis=axis, keepdims=keepdim) / n


def _variance(xp, x, dims, correction, keepdim):
    axis = dims or None
    n = x.size if axis is None else _count(x.shape, axis)
    dev = x - _mean_raw(xp, x, axis, True)
    return xp.sum(dev * dev, axis=axis, keepdims=keepdim) / builtins.max(0, n - correction)


def _var_grad(xp, g, input, dims, correction, keepdim):
    """d var / d input: ``2 (x - mean) / (N - correction)``, PyTorch's form and edge cases.

    ``dims`` None is PyTorch's reduction without ``dim``. An empty ``dims`` reduces every dim
    too, but PyTorch's derivative then counts N as 1, and so does this one.
    """
    if dims is None:
        dof = math.prod(input.shape) - correction
        mean = xp.mean(input)
        if dof <= 0:  # infinite slope, NaN where x equals the mean (inf * 0)
            return g * xp.where(input == mean, math.nan, math.inf)
        return (2.0 / dof) * g * (input - mean)
    dof = _count(input.shape, dims) - correction
    g = _unreduce(xp, g, input.shape, dims, keepdim)
    scale = 2.0 / dof if dof else math.inf
    return scale * g * (input - xp.mean(input, axis=dims or None, keepdims=True))


def _std_grad(xp, g, ans, input, dims, correction, keepdim):
    return _var_grad(xp, xp.where(ans == 0, 0, g / (ans * 2)), input, dims, correction, keepdim)


def _mean_grad(xp, g, input, dims, keepdim):
    if not dims:
        return xp.broadcast_to(g / math.prod(input.shape), input.shape)
    return _expand_back(xp, g / _count(input.shape, dims), input.shape, dims, keepdim)


@defop("var", n_in=1, jvp="transpose")
def _var(xp, input, dims, correction, keepdim):
    return _variance(xp, input, dims, correction, keepdim)


_var.defvjp(lambda xp, g, ans, input, dims, correction, keepdim:
            _var_grad(xp, g, input, dims, correction, keepdim))


@defop("std", n_in=1, jvp="transpose")
def _std(xp, input, dims, correction, keepdim):
    return _variance(xp, input, dims, correction, keepdim) ** 0.5


_std.defvjp(_std_grad)


@defop("var_mean", n_in=1, nout=2, jvp="transpose")
def _var_mean(xp, input, dims, correction, keepdim):
    return (_variance(xp, input, dims, correction, keepdim),
            _mean_raw(xp, input, dims, keepdim))


def _with_mean_part(first, g_mean, input, dims, keepdim, xp):
    """A moment's gradient part plus the mean's, skipping either whose output gradient did
    not arrive (None: PyTorch's undefined gradient, see ``Op.missing_grads_as_none``)."""
    if g_mean is None:
        return first
    mean = _mean_grad(xp, g_mean, input, dims, keepdim)
    return mean if first is None else first + mean


_var_mean.defvjp(lambda xp, g, ans, input, dims, correction, keepdim: _with_mean_part(
    None if g[0] is None else _var_grad(xp, g[0], input, dims, correction, keepdim),
    g[1], input, dims, keepdim, xp))
_var_mean.missing_grads_as_none = True


@defop("std_mean", n_in=1, nout=2, jvp="transpose")
def _std_mean(xp, input, dims, correction, keepdim):
    return (_variance(xp, input, dims, correction, keepdim) ** 0.5,
            _mean_raw(xp, input, dims, keepdim))


_std_mean.defvjp(lambda xp, g, ans, input, dims, correction, keepdim: _with_mean_part(
    None if g[0] is None else _std_grad(xp, g[0], ans[0], input, dims, correction, keepdim),
    g[1], input, dims, keepdim, xp))
_std_mean.missing_grads_as_none = True
_std_mean.saved_outputs = (0,)  # the std only


def _moments(name, op):
    def public(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
        if isinstance(dim, bool):  # the legacy overload var(input, unbiased)
            dim, unbiased = None, dim
        c = _correction(name, unbiased, correction, dim)
        if not _dtypes.is_inexact(input._data.dtype):
            what = "std and var" if name in ("std", "var") else name
            raise RuntimeError(f"{what} only support floating point and complex dtypes")
        dims = None if dim is None else _dims(dim, input.ndim)
        if input.ndim == 0:
            dims = None
        out_numel = math.prod(s for i, s in enumerate(input.shape) if dims and i not in dims)
        n = input.numel() // out_numel if out_numel else 0  # PyTorch's reduction factor
        if n - c <= 0:
            _errors.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                         "less than the reduction factor (input numel divided by output "
                         "numel).")
        return op(input, dims, c, keepdim)

    public.__name__ = public.__qualname__ = name
    return public


var = _moments("var", _var)
std = _moments("std", _std)
var_mean = _moments("var_mean", _var_mean)
std_mean = _moments("std_mean", _std_mean)
var.__doc__ = ("Variance over ``dim`` (every dim by default) with Bessel's ``correction`` "
               "(default 1; the legacy ``unbiased=False`` means 0).")
std.__doc__ = "Standard deviation: the square root of :func:`var`, same arguments."
var_mean.__doc__ = "``(var, mean)`` in one pass, same arguments as :func:`var`."
std_mean.__doc__ = "``(std, mean)`` in one pass, same arguments as :func:`var`."


# --------------------------------------------------------------------------- logsumexp, softmax


@defop("logsumexp", n_in=1, promote="float", jvp="transpose")
def _logsumexp(xp, input, dims, keepdim):
    if input.size == 0:
        return xp.log(xp.sum(xp.exp(input), axis=dims, keepdims=keepdim))
    shift = xp.max(input, axis=dims, keepdims=True)
    shift = xp.where(xp.isinf(shift), 0, shift)  # all -inf (or an inf): nothing to stabilise
    out = xp.log(xp.sum(xp.exp(input - shift), axis=dims, keepdims=True)) + shift
    return out if keepdim else xp.squeeze(out, axis=dims)


def _logsumexp_rule(xp, g, ans, input, dims, keepdim):
    g, ans = (_unreduce(xp, t, input.shape, dims, keepdim) for t in (g, ans))
    return g * xp.exp(input - ans)


_logsumexp.defvjp(_logsumexp_rule)


def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input)))`` over ``dim``, computed without overflow."""
    if _no_dims(dim) and not keepdim and input.ndim and input.numel():
        # PyTorch reduces every dim but adds back maxima that kept theirs, and fails so.
        raise RuntimeError("output with shape [] doesn't match the broadcast shape "
                           f"{[1] * input.ndim}")
    return _logsumexp(input, _all_dims(dim, input.ndim), keepdim)


@defop("softmax", n_in=1, jvp="transpose")
def _softmax(xp, input, dim):
    if input.size == 0:
        return input.copy()
    # Methods and in place: a quarter less time on a batch of class scores (NumPy's xp.max
    # and xp.sum add Python-level calls).
    e = xp.exp(input - input.max(axis=dim, keepdims=True))
    e /= e.sum(axis=dim, keepdims=True)
    return e


_softmax.defvjp(lambda xp, g, ans, input, dim:
                ans * (g - xp.sum(g * ans, axis=dim, keepdims=True)))


@defop("log_softmax", n_in=1, jvp="transpose")
def _log_softmax(xp, input, dim):
    if input.size == 0:
        return input.copy()
    shifted = input - input.max(axis=dim, keepdims=True)
    # (PyTorch keeps the sum and its log in a bfloat16 input's own dtype: round_reduced)
    shifted -= round_reduced(xp.log(round_reduced(xp.exp(shifted).sum(axis=dim, keepdims=True))))
    return shifted


_log_softmax.defvjp(lambda xp, g, ans, input, dim:
                    g - xp.exp(ans) * xp.sum(g, axis=dim, keepdims=True))


def _softmax_public(name, op):
    def public(input, dim, dtype=None):
        if dtype is not None:
            input = input.to(dtype)
        d = _wrap_dim(dim, input.ndim)
        if not _dtypes.is_inexact(input._data.dtype):
            kernel = "lastdim_kernel_impl" if d == builtins.max(input.ndim - 1, 0) else \
                "kernel_impl"
            raise NotImplementedError(
                f'"{name}_{kernel}" not implemented for \'{input.dtype._legacy[:-6]}\'')
        return op(input, d if input.ndim else None)

    public.__name__ = public.__qualname__ = name
    return public


softmax = _softmax_public("softmax", _softmax)
log_softmax = _softmax_public("log_softmax", _log_softmax)
softmax.__doc__ = ("``exp(x) / sum(exp(x))`` along ``dim`` (computed stably); ``dtype`` casts "
                   "the input first.")
log_softmax.__doc__ = "``log(softmax(input, dim))``, computed stably."


# --------------------------------------------------------------------------- norms


def _sgn(xp, x):
    """The sign, 0 for NaN (as PyTorch's ``sgn``); its derivative is zero."""
    return xp.where(x == x, xp.sign(x), 0)


@defop("linalg_vector_norm", n_in=1, jvp="transpose")
def _vector_norm(xp, input, ord, dims, keepdim, dtype):
    x = input if dtype is None else input.astype(dtype)
    a = xp.abs(x)
    if ord == 2:
        return xp.sqrt(xp.sum(a * a, axis=dims, keepdims=keepdim))
    if ord == 1:
        return xp.sum(a, axis=dims, keepdims=keepdim)
    if ord == math.inf:
        return xp.max(a, axis=dims, keepdims=keepdim)
    if ord == -math.inf:
        return xp.min(a, axis=dims, keepdims=keepdim)
    if ord == 0:
        return xp.sum(a != 0, axis=dims, keepdims=keepdim, dtype=a.dtype)
    return xp.sum(a ** ord, axis=dims, keepdims=keepdim) ** (1.0 / ord)


def _vector_norm_rule(xp, g, ans, input, ord, dims, keepdim, dtype):
    """PyTorch's ``norm_backward``, including its subgradients at zero and ties of inf-norms."""
    if ord == 0:
        return None
    shape_dims = tuple(range(input.ndim)) if dims is None else dims
    g, norm = (_unreduce(xp, t, input.shape, shape_dims, keepdim) for t in (g, ans))
    if ord == 1:
        return _sgn(xp, input) * g
    if ord == 2:
        return g * xp.where(norm == 0, 0, input / norm)
    if math.isinf(ord):
        a = xp.abs(input)
        mask = (a == norm) | (a != a)
        count = xp.astype(xp.sum(mask, axis=dims, keepdims=True), g.dtype)
        return _sgn(xp, input) * ((g / count) * mask)
    if ord < 1:
        scaled = _sgn(xp, input) * xp.where(input == 0, 0, xp.abs(input) ** (ord - 1))
        return scaled * g * norm ** (1 - ord)
    scale = xp.where(norm == 0, 0, g / norm ** (ord - 1))
    if ord < 2:
        return _sgn(xp, input) * xp.abs(input) ** (ord - 1) * scale
    return input * xp.abs(input) ** (ord - 2) * scale


_vector_norm.defvjp(_vector_norm_rule)


def _other_dims(ndim, dim):
    return tuple(d for d in range(ndim) if d != dim)


@defop("renorm", n_in=1, jvp="transpose")
def _renorm(xp, input, p, dim, maxnorm):
    norm = _vector_norm.forward(xp, input, p, _other_dims(input.ndim, dim), True, None)
    return input * xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)


def _renorm_rule(xp, g, ans, input, p, dim, maxnorm):
    """PyTorch's ``renorm_backward``: slices whose norm exceeds ``maxnorm`` were scaled by
    ``maxnorm / (norm + 1e-7)``, which depends on the slice through its norm."""
    dims = _other_dims(input.ndim, dim)
    norm = _vector_norm.forward(xp, input, p, dims, True, None)
    along = _vector_norm_rule(xp, xp.sum(input * g, axis=dims, keepdims=True), norm, input, p,
                              dims, True, None)
    inverse = 1 / (norm + 1e-7)
    factor = inverse * maxnorm
    return xp.where(norm > maxnorm, g * factor - along * factor * inverse, g)


_renorm.defvjp(_renorm_rule)


def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled down to (just
    under) ``maxnorm``; the other slices unchanged."""
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           "dimensions")
    if not _dtypes.is_inexact(input._data.dtype):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {input.dtype._legacy[:-6]}")
    d = _wrap_dim(dim, input.ndim)
    if getattr(input, "_levels", None):  # inside vmap: from ops that batch, same derivative
        from .pointwise import where
        x = input.clone()  # what the products save stays intact when renorm_ writes input
        norm = vector_norm(x, p, _other_dims(input.ndim, d), True)
        return x * where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    return _renorm(input, float(p), d, float(maxnorm))


@defop("dist", promote="float", n_in=2, jvp="transpose")
def _dist(xp, input, other, p):
    return _vector_norm.forward(xp, input - other, p, None, False, None)


def _dist_rule(xp, g, ans, input, other, p):
    """The norm's gradient at ``input - other`` (None for ``p = 0``: a count)."""
    return _vector_norm_rule(xp, g, ans, input - other, p, None, False, None)


_dist.defvjp(_dist_rule, lambda xp, g, ans, input, other, p:
             None if p == 0 else -_dist_rule(xp, g, ans, input, other, p))


def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast)."""
    if input.dtype is _dtypes.bool and other.dtype is _dtypes.bool:
        from .operands import _BOOL_SUB  # (dist subtracts first, as PyTorch's does)
        raise RuntimeError(_BOOL_SUB)
    return _dist(input, other, float(p))


def _format_ord(ord):
    return str(int(ord)) if float(ord).is_integer() else str(ord)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """``torch.linalg.vector_norm``: ``sum(|x|**ord)**(1/ord)`` over ``dim`` (every dim by
    default); ``ord`` 0 counts non-zeros, ``inf``/``-inf`` take the max/min of ``|x|``."""
    if isinstance(ord, str) or not isinstance(ord, (int, float)):
        raise TypeError("linalg_vector_norm(): argument 'ord' (position 2) must be Number, not "
                        f"{type(ord).__name__}")
    if not _dtypes.is_inexact(x._data.dtype):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {x.dtype._legacy[:-6]}")
    if dtype is not None:
        if not (dtype.is_floating_point or dtype.is_complex):
            raise RuntimeError("linalg.vector_norm: dtype should be floating point or complex, "
                               f"but got {dtype._legacy[:-6]}")
        if _dtypes.promote_types(x.dtype, dtype) != dtype:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input "
                               f"({x.dtype._legacy[:-6]}) should be convertible without "
                               f"narrowing to the specified dtype ({dtype._legacy[:-6]})")
    if ord < 0 or math.isinf(ord):
        what = f"linalg.vector_norm cannot compute the {_format_ord(ord)} norm on "
        if _no_dims(dim) and x.numel() == 0:
            raise RuntimeError(what + "an empty tensor because the operation does not have an "
                               "identity")
        for d in () if _no_dims(dim) or not x.ndim else (dim,) if isinstance(dim, int) else dim:
            if x.shape[_wrap_dim(d, x.ndim)] == 0:
                raise RuntimeError(what + f"the dimension {d}because this dimension is empty "
                                   "and the operation does not have an identity")
    dims = None if dim is None else _all_dims(dim, x.ndim)
    return _vector_norm(x, float(ord), dims, keepdim, None if dtype is None else dtype.np)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """``torch.norm``: vector norms (``p`` a number, or 'fro' over at most two dims) through
    :func:`vector_norm`; other string orders ('nuc') are matrix norms (``ember.linalg``)."""
    if out is not None:
        return write_out("norm", out, norm(input, p, dim, keepdim, dtype=dtype))
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(p, str):
        if p == "fro" and (dim is None or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype)
        from .. import linalg
        dims = list(range(input.ndim)) if dim is None else dim
        return linalg.matrix_norm(input, p, dims, keepdim, dtype=dtype)
    return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype)


# --------------------------------------------------------------------------- counting, logic


@defop("count_nonzero", n_in=1)
def _count_nonzero(xp, input, dims):
    return xp.sum(input != 0, axis=dims, dtype=np.int64)


def count_nonzero(input, dim=None):
    """How many elements are not zero, over ``dim`` (every dim by default); int64."""
    return _count_nonzero(input, _all_dims(dim, input.ndim))


def _logical_reduce(name):
    @defop(name, n_in=1)
    def reduce(xp, input, axis, keepdim):
        out = getattr(xp, name)(input, axis=axis, keepdims=keepdim)
        return out.astype(np.uint8) if input.dtype == np.uint8 else out  # PyTorch keeps uint8

    def public(input, dim=None, keepdim=False):
        axis = None if dim is None else _dims(dim, input.ndim)  # () reduces nothing here
        return reduce(input, axis, keepdim)
    public.__name__ = public.__qualname__ = name
    public.__doc__ = (f"Whether {name} elements (over ``dim``: an int or a tuple) are true, as "
                      "a bool tensor (uint8 for uint8 input, as in PyTorch).")
    return public


all = _logical_reduce("all")  # noqa: A001 - PyTorch's name
any = _logical_reduce("any")  # noqa: A001


# --------------------------------------------------------------------------- integration
# Composites, written as PyTorch writes them (Integration.cpp, Correlation.cpp), so the nodes
# recorded and the rounding are PyTorch's.


def _scalar_ops():
    from .pointwise import div_scalar, mul_scalar
    return mul_scalar, div_scalar


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


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``: with sample points ``x``, or spacing ``dx``
    (default 1); no samples integrate to 0."""
    mul_scalar, div_scalar = _scalar_ops()
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


def trapz(y, x=None, *, dx=None, dim=-1):
    """``trapezoid`` under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral along ``dim`` (one element fewer than ``y``)."""
    mul_scalar, div_scalar = _scalar_ops()
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


# --------------------------------------------------------------------------- covariance
COV_DOF = ("cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
           "number of observations.")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in the
    columns), optionally weighted by integer ``fweights`` and real ``aweights``."""

    from .pointwise import div
    if input.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input._data.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    for name, weights, kind, what in (("fweights", fweights, "iu", "integral"),
                                      ("aweights", aweights, "f", "floating point")):
        if weights is None:
            continue
        if weights.ndim > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                               f"{name} with {weights.ndim} dimensions")
        if weights._data.dtype.kind not in kind or weights._data.dtype == np.bool_:
            raise RuntimeError(f"cov(): expected {name} to have {what} dtype but got {name} "
                               f"with {weights.dtype._legacy[:-6]} dtype")
        if weights.numel() != n:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                               f"observations in the input but got {weights.numel()} != {n}")
        if n and bool((weights._data < 0).any()):
            raise RuntimeError(f"cov(): {name} cannot be negative")
        w = weights if w is None else w * weights
    if w is None:
        w_sum = Tensor._make(np.asarray(n, dtype=np.int64), None, False)
    else:
        w_sum = w.sum()
        if not bool(w_sum._data != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = div((x if w is None else x * w).sum(1), w_sum)
    if w is not None and correction != 0 and aweights is not None:
        norm = w_sum - div((w * aweights).sum() * correction, w_sum)
    else:
        norm = w_sum - correction
    if bool(norm._data <= 0):
        warnings.warn(COV_DOF, UserWarning, stacklevel=2)
        norm = norm * 0
    x = x - avg.unsqueeze(1)
    c = x.mm((x if w is None else x * w).t().conj())
    return div(c, norm).squeeze()


def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input``, clipped to ``[-1, 1]``."""
    if input.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:  # one variable: nan where the variance is nan, inf or 0, else 1
        return c / c
    stddev = c.diagonal().sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return c.clip(-1, 1)


# --------------------------------------------------------------------------- the family's surface
__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std",
           "var_mean", "std_mean", "logsumexp", "softmax", "log_softmax", "norm",
           "count_nonzero", "all", "any", "return_types", "nansum", "nanmean", "aminmax",
           "dist", "renorm", "trapezoid", "trapz", "cumulative_trapezoid", "cov",
           "corrcoef"]
METHODS = {name: globals()[name] for name in __all__
           if name not in ("var_mean", "std_mean", "return_types", "trapezoid", "trapz",
                           "cumulative_trapezoid")}
INPLACE = ("renorm",)


def _api_dtype(dtype):
    return dtype if dtype is None or isinstance(dtype, _dtypes.dtype) else \
        _dtypes.from_numpy_dtype(dtype)


def _api_reduction(fn):
    """``fn`` with the array API's spelling; there ``axis=()`` reduces nothing (in PyTorch an
    empty ``dim`` means every dim)."""
    def reduce(x, axis=None, keepdims=False, dtype=None):
        if axis == ():
            return x if dtype is None else x.to(_api_dtype(dtype))
        extra = {} if dtype is None else {"dtype": _api_dtype(dtype)}
        return fn(x, axis, keepdims, **extra)
    return reduce


ARRAY_API = {
    "sum": _api_reduction(sum),
    "mean": _api_reduction(mean),
    "prod": _api_reduction(prod),
    "max": _api_reduction(amax),
    "min": _api_reduction(amin),
    "argmax": lambda x, axis=None, keepdims=False: argmax(x, axis, keepdims),
    "argmin": lambda x, axis=None, keepdims=False: argmin(x, axis, keepdims),
    "var": lambda x, axis=None, correction=0, keepdims=False: var(
        x, axis, keepdim=keepdims, correction=correction),
    "std": lambda x, axis=None, correction=0, keepdims=False: std(
        x, axis, keepdim=keepdims, correction=correction),
    "all": lambda x, axis=None, keepdims=False: all(x, axis, keepdims),
    "any": lambda x, axis=None, keepdims=False: any(x, axis, keepdims),
}
