"""Reductions by sums and products: ``sum``, ``mean``, ``prod``, ``nansum`` / ``nanmean``,
``logsumexp``, ``softmax`` / ``log_softmax`` (normalised by a sum), ``count_nonzero`` and the
logical ``all`` / ``any``.
"""
from __future__ import annotations

import builtins
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ... import _array_api, _dtypes, _xp
from ..._broadcast import sum_head
from ..._tensor import _wrap_dim
from .. import batching
from ..autocast import autocast_op
from ..reduced import round_reduced
from ..registry import array_api, defop, public
from .common import (
    _accumulation_dtype,
    _all_dims,
    _api_reduction,
    _count,
    _dims,
    _expand_back,
    _no_dims,
    _unreduce,
)
from .rows import _FLOATS, max_last, rows_back, short_columns, sum_last

if TYPE_CHECKING:
    from typing import Protocol

    from ..._tensor import Tensor
    from ..._typing import DTypeLike

    class _Softmax(Protocol):  # softmax's and log_softmax's signature, for type checkers
        def __call__(self, input: Tensor, dim: int, dtype: DTypeLike = None) -> Tensor: ...

# --------------------------------------------------------------------------- sum, mean, prod


@defop("sum", n_in=1, jvp="linear", batch=batching.whole(
    lambda v, nb, p: batching.flat(v, nb).sum(-1, dtype=batching.dtype_of(p[-1]))))
def _sum_all(xp, input, shape, dtype):
    return xp.sum(input, dtype=dtype)


_sum_all.defvjp(lambda xp, g, ans, input, shape, dtype: xp.broadcast_to(g, shape))


@defop("sum", n_in=1, overload=1, jvp="linear", batch="moved")
def _sum_dim(xp, input, dims, keepdim, shape, dtype):
    if dtype is None or dtype == input.dtype:  # leading dims of a short tail: see sum_head
        head = sum_head(input, dims)
        if head is not None:
            return head if keepdim else head.reshape(head.shape[len(dims):])
    return xp.sum(input, axis=dims, keepdims=keepdim, dtype=dtype)


_sum_dim.defvjp(lambda xp, g, ans, input, dims, keepdim, shape, dtype:
                _expand_back(xp, g, shape, dims, keepdim))


@public
def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001 - PyTorch's name
    """Sum of all elements, or over ``dim`` (an int or tuple); integers sum to int64."""
    dtype = _dtypes.as_dtype(dtype, "sum")
    dt = _accumulation_dtype(input, dtype)
    if dim is None:
        return _sum_all(input, input.shape, dt)
    return _sum_dim(input, _all_dims(dim, input.ndim), keepdim, input.shape, dt)


array_api("sum")(_api_reduction(sum))


@defop("mean", n_in=1, jvp="linear",
       batch=batching.whole(lambda v, nb, p: batching.flat(v, nb).mean(-1)))
def _mean_all(xp, input, shape):
    return xp.sum(input) / input.size  # NaN for an empty input, without NumPy's warning


_mean_all.defvjp(lambda xp, g, ans, input, shape:
                 xp.broadcast_to(g / math.prod(shape), shape))


@defop("mean", n_in=1, overload=1, jvp="linear", batch="moved")
def _mean_dim(xp, input, dims, keepdim, shape):
    return xp.sum(input, axis=dims, keepdims=keepdim) / _count(shape, dims)


_mean_dim.defvjp(lambda xp, g, ans, input, dims, keepdim, shape:
                 _expand_back(xp, g / _count(shape, dims), shape, dims, keepdim))


def _check_mean_dtype(name, dtype):
    """PyTorch's error for a mean asked for a result dtype that is neither floating nor complex
    (checked before the input's own dtype)."""
    dtype = _dtypes.as_dtype(dtype, name)
    if dtype is not None and dtype.category < 2:
        raise RuntimeError(f"{name}(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: {dtype._word}")


@public
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Arithmetic mean; floating and complex inputs only, as in PyTorch."""
    _check_mean_dtype("mean", dtype)
    if dtype is not None:
        input = input.to(dtype)
    if not _dtypes.is_inexact(input._data.dtype):
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {input.dtype._word}")
    if dim is None:
        return _mean_all(input, input.shape)
    return _mean_dim(input, _all_dims(dim, input.ndim), keepdim, input.shape)


array_api("mean")(_api_reduction(mean))


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


@defop("prod", n_in=1, jvp="transpose", batch=batching.whole(
    lambda v, nb, p: batching.flat(v, nb).prod(-1, dtype=batching.dtype_of(p[-1]))))
def _prod_all(xp, input, dtype):
    return xp.prod(input, dtype=dtype)


def _prod_all_rule(xp, g, ans, input, dtype):
    if input.ndim == 0:
        return g
    if not (input == 0).any():
        return g * (ans / input)
    return g * xp.reshape(_prod_of_others(xp, xp.reshape(input, (-1,)), 0), input.shape)


_prod_all.defvjp(_prod_all_rule)


@defop("prod", n_in=1, overload=1, jvp="transpose", batch="moved")
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


@public
@autocast_op("prod")
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements, or over one ``dim``; integers multiply to int64."""
    dtype = _dtypes.as_dtype(dtype, "prod")
    dt = _accumulation_dtype(input, dtype)
    if dim is None:
        return _prod_all(input, dt)
    d = _wrap_dim(dim, input.ndim)
    return _prod_dim(input, d if input.ndim else None, keepdim, dt)


array_api("prod")(_api_reduction(prod))


# --------------------------------------------------------------------------- NaN-ignoring


@defop("nansum", n_in=1, jvp="transpose", batch="moved")
def _nansum(xp, input, dims, keepdim, dtype):
    return xp.nansum(input, axis=dims, keepdims=keepdim, dtype=dtype)


_nansum.defvjp(lambda xp, g, ans, input, dims, keepdim, dtype: xp.where(
    xp.isnan(input), 0, _expand_back(xp, g, input.shape, dims, keepdim)))


@_nansum.public
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """``sum`` with NaNs counted as zero."""
    dtype = _dtypes.as_dtype(dtype, "nansum")
    return _nansum(input, _all_dims(dim, input.ndim), keepdim, _accumulation_dtype(input, dtype))


@public
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the elements that are not NaN (``nansum`` over their count)."""
    _check_mean_dtype("nanmean", dtype)
    if dtype is not None:
        input = input.to(dtype)
    if not _dtypes.is_inexact(input._data.dtype):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {input.dtype._word}")
    return nansum(input, dim, keepdim) / sum(input.isnan().logical_not(), dim, keepdim)



# --------------------------------------------------------------------------- logsumexp, softmax


@defop("logsumexp", n_in=1, promote="float", jvp="transpose", batch="moved")
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


@_logsumexp.public
def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input)))`` over ``dim``, computed without overflow."""
    if _no_dims(dim) and not keepdim and input.ndim and input.numel():
        # PyTorch reduces every dim but adds back maxima that kept theirs, and fails so.
        raise RuntimeError("output with shape [] doesn't match the broadcast shape "
                           f"{[1] * input.ndim}")
    return _logsumexp(input, _all_dims(dim, input.ndim), keepdim)


# Over the last dim (a batch of class scores) the row maxima and sums are ``rows``' (BLAS and
# transposed reductions: 2-5x less time than NumPy's row-at-a-time ones on short rows);
# over another dim, methods (NumPy's xp.max and xp.sum add Python-level calls).


def _row_max(xp, x, dim):
    return max_last(xp, x) if dim == x.ndim - 1 else x.max(axis=dim, keepdims=True)


def _row_sum(xp, x, dim):
    return sum_last(xp, x) if dim == x.ndim - 1 else xp.sum(x, axis=dim, keepdims=True)


@defop("softmax", n_in=1, jvp="transpose", batch="moved")
def _softmax(xp, input, dim):
    if input.size == 0:
        return input.copy()
    cols = short_columns(xp, input) if dim == input.ndim - 1 else None
    if cols is not None:  # (short rows: the same passes on the transposed copy, see rows.py)
        cols -= cols.max(axis=0)
        np.exp(cols, out=cols)
        cols /= cols.sum(axis=0)
        return rows_back(cols, input.shape)
    e = input - _row_max(xp, input, dim)
    # in the difference's buffer: one array of the input's size, not two (0-d: a scalar)
    e = xp.exp(e, out=e) if e.ndim else xp.exp(e)
    e /= _row_sum(xp, e, dim)
    return e


def _softmax_rule(xp, g, ans, input, dim):
    """``ans * (g - sum(g * ans))``; on raw arrays in two buffers, not three (13% of the
    backward at (16, 3, 128, 128))."""
    if _array_api.is_tensor_namespace(xp):
        return ans * (g - _row_sum(xp, g * ans, dim))
    out = g - _row_sum(xp, g * ans, dim)
    out *= ans
    return out


_softmax.defvjp(_softmax_rule)


# On NumPy float arrays log_softmax and its rule run over blocks of the leading dim (whole
# rows of the reduced dim, about _ROWS_BYTES each), each block's passes in one output buffer
# and one scratch for the exponentials, while it is in cache: no temporaries of the input's
# size, and the passes after the first read the cache, not memory (the same operations in the
# same order: the same values). At (1291, 774) float32 the forward 1.5 -> 1.2 ms, the rule
# 1.5 -> 0.9 ms.
_ROWS_BYTES = 1 << 19


def _blocks(x, dim):
    """Slices of ``x``'s first dim, each about ``_ROWS_BYTES`` of whole rows along ``dim``
    (one, the whole array, when ``dim`` is the first)."""
    if dim == 0 or x.ndim < 2:
        return (slice(None),)
    step = builtins.max(1, _ROWS_BYTES // (x[0].size * x.itemsize))
    return tuple(slice(i, i + step) for i in range(0, x.shape[0], step))


def _plain_pair(xp, a, b=None):
    return (xp is _xp.NUMPY and type(a) is np.ndarray and a.dtype in _FLOATS and a.size > 0
            and (b is None or (type(b) is np.ndarray and b.dtype == a.dtype
                               and b.shape == a.shape)))


@defop("log_softmax", n_in=1, jvp="transpose", batch="moved")
def _log_softmax(xp, input, dim):
    if input.size == 0:
        return input.copy()
    # Short rows: the same passes on the transposed copy (see rows.py), up to a size that
    # stays in cache; past it the blocks below are faster (1M elements of rows of 27: 3.2
    # against 5.3 ms).
    fits = dim == input.ndim - 1 and input.nbytes <= _ROWS_BYTES
    cols = short_columns(xp, input) if fits else None
    if cols is not None:
        cols -= cols.max(axis=0)
        cols -= round_reduced(np.log(round_reduced(np.exp(cols).sum(axis=0))))
        return rows_back(cols, input.shape)
    blocks = _blocks(input, dim) if input.nbytes > _ROWS_BYTES and _plain_pair(xp, input) else ()
    if len(blocks) < 2:  # (one block: the same passes, without the buffers' set-up)
        shifted = input - _row_max(xp, input, dim)
        # (PyTorch keeps the sum and its log in a bfloat16 input's own dtype: round_reduced)
        shifted -= round_reduced(xp.log(round_reduced(_row_sum(xp, xp.exp(shifted), dim))))
        return shifted
    out = np.empty_like(input)
    scratch = None
    for b in blocks:
        x, shifted = input[b], out[b]
        np.subtract(x, _row_max(xp, x, dim), out=shifted)
        if scratch is None:
            scratch = np.empty(shifted.size, shifted.dtype)
        e = np.exp(shifted, out=scratch[:shifted.size].reshape(shifted.shape))
        shifted -= round_reduced(np.log(round_reduced(_row_sum(xp, e, dim))))
    return out


def _log_softmax_rule(xp, g, ans, input, dim):
    """``g - exp(ans) * sum(g)``."""
    if not _plain_pair(xp, ans, g) or ans.ndim == 0:
        return g - xp.exp(ans) * _row_sum(xp, g, dim)
    out = np.empty(ans.shape, ans.dtype)
    for b in _blocks(ans, dim):
        grad, part = g[b], out[b]
        np.exp(ans[b], out=part)
        part *= _row_sum(xp, grad, dim)
        np.subtract(grad, part, out=part)
    return out


_log_softmax.defvjp(_log_softmax_rule)


def _softmax_public(name: str, op: Any) -> _Softmax:
    def public(input: Tensor, dim: int, dtype: DTypeLike = None) -> Tensor:
        if dtype is not None:
            input = input.to(dtype)
        d = _wrap_dim(dim, input.ndim)
        if not _dtypes.is_inexact(input._data.dtype):
            kernel = "lastdim_kernel_impl" if d == builtins.max(input.ndim - 1, 0) else \
                "kernel_impl"
            raise NotImplementedError(
                f'"{name}_{kernel}" not implemented for \'{input.dtype._word}\'')
        return op(input, d if input.ndim else None)

    public.__name__ = public.__qualname__ = name
    return op.public(public)


softmax = _softmax_public("softmax", _softmax)
log_softmax = _softmax_public("log_softmax", _log_softmax)
softmax.__doc__ = ("``exp(x) / sum(exp(x))`` along ``dim`` (computed stably); ``dtype`` casts "
                   "the input first.")
log_softmax.__doc__ = "``log(softmax(input, dim))``, computed stably."



# --------------------------------------------------------------------------- counting, logic


@defop("count_nonzero", n_in=1, batch="moved")
def _count_nonzero(xp, input, dims):
    return xp.sum(input != 0, axis=dims, dtype=np.int64)


@_count_nonzero.public
def count_nonzero(input, dim=None):
    """How many elements are not zero, over ``dim`` (every dim by default); int64."""
    return _count_nonzero(input, _all_dims(dim, input.ndim))


def _logical_reduce(name):
    @defop(name, n_in=1, batch="moved")
    def reduce(xp, input, axis, keepdim):
        out = getattr(xp, name)(input, axis=axis, keepdims=keepdim)
        return out.astype(np.uint8) if input.dtype == np.uint8 else out  # PyTorch keeps uint8

    def public(input, dim=None, keepdim=False):
        axis = None if dim is None else _dims(dim, input.ndim)  # () reduces nothing here
        return reduce(input, axis, keepdim)
    public.__name__ = public.__qualname__ = name
    public.__doc__ = (f"Whether {name} elements (over ``dim``: an int or a tuple) are true, as "
                      "a bool tensor (uint8 for uint8 input, as in PyTorch).")
    return reduce.public(public)


all = _logical_reduce("all")  # noqa: A001 - PyTorch's name
any = _logical_reduce("any")  # noqa: A001
array_api("all")(lambda x, axis=None, keepdims=False: all(x, axis, keepdims))
array_api("any")(lambda x, axis=None, keepdims=False: any(x, axis, keepdims))
