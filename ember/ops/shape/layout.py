"""Copies that change only the memory layout or the dtype: ``clone``, ``contiguous`` and
``to_dtype`` (``Tensor.to(dtype)``). ``reshape`` falls back on ``clone`` when no view serves,
so this module sits below ``views.py``.
"""
from __future__ import annotations

import warnings

import numpy as np

from ... import _memory_format
from ..registry import array_api, defop, public


@defop("clone", jvp="linear", batch="pointwise")
def _clone(xp, input):
    return input.copy()


_clone.defvjp(lambda xp, g, ans, input: g)



@public
def clone(input, *, memory_format=None):
    """A copy that stays in the graph (``CloneBackward0``), laid out as ``memory_format``
    asks; the default ``preserve_format`` keeps ``input``'s stride order."""
    fmt = _memory_format.check(memory_format, "clone")
    if getattr(input, "_levels", None) and fmt not in (_memory_format.preserve_format,
                                                       _memory_format.contiguous_format):
        raise RuntimeError("NYI: Tensor.clone(memory_format) inside vmap is only supported with "
                           "memory_format torch.preserve_format or torch.contiguous_format (got "
                           f"{_memory_format.CPP_NAMES[fmt]})")
    if input._data.flags.c_contiguous and fmt in (_memory_format.preserve_format,
                                                  _memory_format.contiguous_format):
        return _clone(input)
    return _clone_as(input, fmt)


@defop("clone", n_in=1, jvp="linear", batch="pointwise")
def _clone_as(xp, input, fmt):
    return _memory_format.relayout(input, fmt)


_clone_as.defvjp(lambda xp, g, ans, input, fmt: g)


@public
def contiguous(input, *args, memory_format=None):
    """``input`` itself when it is laid out as ``memory_format`` (default
    ``contiguous_format``) asks, otherwise such a copy."""
    if args:
        raise TypeError(f"contiguous() takes 0 positional arguments but {len(args)} was given")
    fmt = _memory_format.check(memory_format, "contiguous", _memory_format.contiguous_format)
    if fmt is _memory_format.preserve_format:
        fmt = _memory_format.contiguous_format
    _memory_format.check_rank(input.ndim, fmt)
    return input if input.is_contiguous(memory_format=fmt) else _clone_as(input, fmt)



# --------------------------------------------------------------------------- dtype


@defop("to_copy", n_in=1, jvp="linear", batch="pointwise")
def _to_copy(xp, input, dtype):
    if input.dtype.kind == "c" and dtype.kind != "c":
        input = input.real  # complex -> real keeps the real part
    return input.astype(dtype)


_to_copy.defvjp(lambda xp, g, ans, input, dtype: g)


def to_dtype(input, dtype, copy=False):
    """``input`` converted to ``dtype`` (itself when nothing changes and no copy is asked for)."""
    if input._data.dtype == dtype.np and not copy:
        return input
    if input._data.dtype.kind == "c" and not dtype.is_complex:
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=3)
    return _to_copy(input, dtype.np)


# Rules' casts (a complex gradient reaching a real input) keep the real part silently.
array_api("astype")(
    lambda x, dtype: x if x._data.dtype == np.dtype(getattr(dtype, "np", dtype))
    else _to_copy(x, np.dtype(getattr(dtype, "np", dtype))))
