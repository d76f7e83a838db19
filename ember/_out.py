"""PyTorch's ``out=`` keyword, in one place: a function's result written into the tensor the
caller handed in, which is then returned.

As in PyTorch: no autograd through ``out=`` (an argument that requires grad is refused); the
result is cast to ``out``'s dtype only within its category (no float into an integer ``out``),
and not at all by ``gather`` and the norms; an ``out`` of another shape is resized, with
PyTorch's deprecation warning when it had elements (twice when an elementwise op also casts,
as PyTorch's TensorIterator resizes its temporary too; never for most factory functions).
Factory functions (``zeros``, ``arange`` ...) take ``out``'s dtype when given none.
"""
from __future__ import annotations

import functools
import sys
import warnings

from . import _dtypes, _errors
from .autograd import anomaly_mode, grad_mode


def write_out(name, out, result, dtypes="cast", resized=_errors.OUT_RESIZED):
    """``out`` holding ``result``, as PyTorch's ``name(..., out=out)`` leaves it; returns it.

    ``dtypes``: how ``out``'s dtype may differ from the result's — ``"cast"`` (elementwise
    ops), ``"cat"`` (the same, with ``cat``'s TypeError), ``"exact"`` (not at all).
    ``resized``: the warning when ``out`` had elements and is resized (None: none).
    """
    if grad_mode.is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError(_errors.OUT_AUTOGRAD.format(name=name))
    src, dst = result.dtype, out.dtype
    if dtypes == "exact" and src != dst:
        from .ops.linalg import _cpp
        raise RuntimeError(_errors.OUT_EXACT.format(expected=_cpp(result), got=_cpp(out)))
    if not _dtypes.can_cast(src, dst):
        if dtypes == "cat":
            raise TypeError(_errors.OUT_CAT_CAST.format(out=_word(dst)))
        raise RuntimeError(_errors.OUT_CAST.format(result=_word(src), out=_word(dst)))
    data, target = result._data, out._data
    if data.shape == target.shape:
        target[...] = data
    else:
        if target.size and resized is not None:
            message = resized.format(old=list(target.shape), new=list(data.shape),
                                     old_numel=target.size, numel=data.size,
                                     new_tuple=tuple(data.shape))
            for _ in range(2 if dtypes == "cast" and src != dst else 1):
                warnings.warn(message, UserWarning, stacklevel=_user_level())
        out._data = data.astype(target.dtype)  # new storage, as resizing gives
    anomaly_mode.note_write(out, name + "(out=...)")
    return out


def takes_out(fn):
    """``fn`` (an op of ``ops/sorting.py``) with PyTorch's ``out=``: the result written into
    ``out`` (for a ``(values, indices)`` result, a pair, the indices int64, checked before
    anything is written). The scans take ``out``'s dtype as their ``dtype``."""
    name = fn.__name__

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if name in ("cumsum", "cumprod"):
            dtype = kwargs.setdefault("dtype", out.dtype) or out.dtype
            if dtype != out.dtype:
                raise RuntimeError(f"Expected out tensor to have dtype {_cpp_name(dtype)}, but "
                                   f"got {_cpp_name(out.dtype)} instead")
        result = fn(*args, **kwargs)
        if not isinstance(result, tuple):
            return write_out(name, out, result)
        if out[1].dtype != result[1].dtype:
            raise RuntimeError(
                f"expected scalar_type Long but found {out[1].dtype._legacy[:-6]}" if name in (
                    "cummax", "cummin") else "Expected out tensor to have dtype long int, but "
                f"got {_cpp_name(out[1].dtype)} instead")
        return type(result)((write_out(name, out[0], result[0]),
                             write_out(name, out[1], result[1], dtypes="exact")))
    return with_out


def _cpp_name(dtype):
    """The C++ name of ``dtype`` in PyTorch's out= dtype errors ('long int', 'float')."""
    word = dtype._legacy[:-6]
    return {"Long": "long int", "Short": "short int", "Char": "signed char",
            "Byte": "unsigned char", "Half": "c10::Half"}.get(word, word.lower())


def factory_out(name, out, dtype, make, resized=None):
    """``make(dtype)`` written into ``out``: a factory function's ``out=``, whose dtype must be
    ``out``'s when it is given (``arange`` alone warns when it resizes, in words of its own)."""
    if dtype is not None and dtype != out.dtype:
        raise RuntimeError(_errors.OUT_DTYPE.format(dtype=_word(dtype), out=_word(out.dtype)))
    return write_out(name, out, make(out.dtype), resized=resized)


def _user_level():
    """The ``stacklevel`` that makes a warning raised in ``write_out`` name the user's line."""
    frame, level = sys._getframe(1), 1  # (the frame walk of anomaly_mode.note_write)
    while frame is not None and frame.f_code.co_filename.startswith(anomaly_mode._PACKAGE):
        frame, level = frame.f_back, level + 1
    return level


def _word(dtype):
    return dtype._legacy[:-6]  # 'torch.FloatTensor' -> 'Float'
