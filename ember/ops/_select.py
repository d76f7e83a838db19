"""Branch-free selects for NumPy's large float arrays: ``where(cond, a, b)`` bit for bit, as
word blends. NumPy's ``where`` branches on every element, about 5 ns each on a mask as random
as an activation's (8x a multiply); the blends are a few vectorised passes. The pointwise
activations, losses and rounding ops use them (on Tensors, CuPy arrays and small arrays they
are ``xp.where`` itself).
"""
from __future__ import annotations

import numpy as np

from .. import _xp

_MASK_MIN_SIZE = 4096  # see _zero_where


def _zero_where(xp, cond, x):
    """``where(cond, 0, x)``, bit for bit: +0.0 where ``cond`` holds, ``x`` (-0.0 and NaN
    included) elsewhere.

    NumPy's ``where`` branches on every element, about 5 ns each on a mask as random as a
    ReLU's (8x a multiply). On a NumPy float array the same bits come from masking ``x``'s
    bits with all-zeros or all-ones words, in three vectorised passes (which cost more calls:
    ``where`` stays faster below a few thousand elements).
    """
    if (type(x) is not np.ndarray or type(cond) is not np.ndarray or cond.shape != x.shape
            or x.dtype.char not in "efd" or x.size < _MASK_MIN_SIZE):
        return xp.where(cond, _xp.constant(0, x.dtype) if type(x) is np.ndarray else 0, x)
    word = np.dtype(f"u{x.itemsize}")
    mask = cond.astype(word)  # 1 where zeroed
    mask -= 1                 # there 0, elsewhere all ones (unsigned wrap-around)
    mask &= x.view(word)
    return mask.view(x.dtype)


def _fast(*arrays):
    """Whether the kernels below may take their NumPy path: large float NumPy arrays of one
    shape (in a recorded backward the rules get Tensors, and CuPy's ``where`` is no branch)."""
    first = arrays[0]
    return all(type(a) is np.ndarray and a.shape == first.shape for a in arrays) \
        and first.dtype.char in "efd" and first.size >= _MASK_MIN_SIZE


def _select(xp, cond, a, b):
    """``where(cond, a, b)`` bit for bit; ``a`` and ``b`` arrays of ``cond``'s shape and one
    float dtype, or numbers (NumPy scalars of that dtype where both are).

    As ``_zero_where``: on large NumPy arrays the bits are blended as words, ``b ^ (cond *
    (a ^ b))``, three branch-free passes (four with two arrays); ``where`` costs about 5x that
    on a random mask.
    """
    arrays = [v for v in (a, b) if getattr(v, "ndim", 0)]
    if (type(cond) is not np.ndarray or cond.size < _MASK_MIN_SIZE
            or any(type(v) is not np.ndarray or v.shape != cond.shape for v in arrays)):
        return xp.where(cond, a, b)
    dtype = getattr(arrays[0] if arrays else a, "dtype", None)
    if dtype is None or dtype.char not in "efd" or any(v.dtype != dtype for v in arrays):
        return xp.where(cond, a, b)
    word = np.dtype(f"u{dtype.itemsize}")
    av, bv = (np.asarray(v, dtype).view(word) for v in (a, b))
    mask = cond.astype(word)  # 1 where cond holds, else 0
    mask *= av ^ bv
    mask ^= bv
    return mask.view(dtype)
