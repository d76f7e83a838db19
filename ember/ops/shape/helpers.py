"""What the shape modules share: argument parsing (sizes, dims, ``-1``), PyTorch's warn-once
messages, and the ``new_zeros`` / ``_embed`` helpers that derivative rules of reads use.

The ops themselves live beside it: ``views.py`` and ``slices.py`` (results that share storage),
``layout.py``, ``copies.py`` and ``joins.py`` (results that copy).
"""
from __future__ import annotations

import math
import warnings

from ... import _errors, _xp
from ..._creation import zeros
from ..._tensor import Tensor, _wrap_dim
from .. import batching

# Messages PyTorch gives once per process (``TORCH_WARN_ONCE``).
T_DEPRECATED = (
    "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated "
    "and it will throw an error in a future release. Consider `x.mT` to transpose batches of "
    "matrices or `x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a "
    "tensor.")
ZERO_DIM_DEPRECATED = "Tensor.{name} is deprecated on 0-D tensors. {hint}"
_warned = set()


def _warn_once(message, stacklevel):
    """Warn the first time only; ``stacklevel`` counts from the caller of ``_warn_once``."""
    if message not in _warned:
        _warned.add(message)
        warnings.warn(message, UserWarning, stacklevel=stacklevel + 1)


def infer_size(shape, numel):
    """Resolve one ``-1`` in ``shape``; PyTorch's errors for impossible shapes."""
    if -1 not in shape and math.prod(shape) == numel and (not shape or min(shape) >= 0):
        return tuple(shape)  # (every view and reshape of a model: the checks below, in one)
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in shape:
        if s != -1:
            if s < 0:
                raise RuntimeError(f"invalid shape dimension {s}")
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(_errors.VIEW_SIZE.format(shape=shape, numel=numel))
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(_errors.VIEW_SIZE.format(shape=shape, numel=numel))
    return tuple(shape)


def _shape_args(shape, keyword=None, name=None, label=None):
    """``f(2, 3)`` and ``f((2, 3))`` alike: the sizes as a tuple; or ``f(label=keyword)``,
    PyTorch's keyword for them."""
    if keyword is not None:
        if shape:
            raise TypeError(f"{name}() got multiple values for argument '{label}'")
        return _int_list(keyword)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        return tuple(shape[0])
    return tuple(shape)


def _int_list(dims):
    return (dims,) if isinstance(dims, int) else tuple(dims)


def _unique_dims(dims, ndim):
    """Wrapped dims, with PyTorch's error for a dim named twice."""
    wrapped = tuple(_wrap_dim(d, ndim) for d in dims)
    for i, d in enumerate(wrapped):
        if d in wrapped[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return wrapped


def _new_zeros(like, shape):
    """Zeros of ``shape`` with ``like``'s dtype and device (``Tensor.new_zeros``); inside vmap,
    per sample of ``like`` (a rule writes a batched gradient into them)."""
    levels = getattr(like, "_levels", None)
    if levels:
        batch = tuple(like._data.shape[:len(levels)])
        return batching.wrap(zeros(batch + tuple(shape), dtype=like.dtype, device=like.device),
                             levels)
    return zeros(tuple(shape), dtype=like.dtype, device=like.device)


# Rules call ``xp.new_zeros(g, shape)``: unlike ``xp.zeros``, it stays on ``g``'s device when
# the rule runs on Tensors (under ``create_graph``).
_xp.register_extra("new_zeros", lambda xp, like, shape: xp.zeros(shape, dtype=like.dtype),
                   _new_zeros)


def _embed(xp, g, shape, key):
    """Zeros of ``shape`` with ``g`` written at ``key``: the derivative of reading ``a[key]``.
    (Recorded, under ``create_graph``, as one op rather than a write into a view.)"""
    if isinstance(g, Tensor):
        return xp.index_add_zeros(g, shape, key)
    out = xp.new_zeros(g, shape)
    out[key] = g
    return out


def _add_at(out, g, input, key, shape):
    """``out += _embed(np, g, shape, key)`` in place, without the zeros (``Op.defvjp_into``:
    ``key`` is basic indexing, each entry of ``out`` at most once)."""
    out[key] += g
