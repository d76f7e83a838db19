"""Elementwise NumPy kernels run over L2-sized blocks.

A kernel written as a chain of whole-array ufunc passes (a rational, a float64 round trip)
streams every temporary through memory once per pass: at 1M elements each pass reads and
writes 4-8 MB. Run on blocks of ``_BLOCK`` elements, the same passes stay in the L2 cache
(erf's forward: 15 ms -> 6 ms at 1M; fmod by an array through float64: 3x). The unary kernels
of ``unary.py``, ``gamma.py`` and GELU, and fmod/remainder/floor division of
``arithmetic.py`` use it.
"""
from __future__ import annotations

import math

import numpy as np

_BLOCK = 32768  # elements: a float64 temporary of 256 KiB, a few of them fit in L2


def _blockwise(kernel):
    """``kernel(xp, *arrays, **params)``, elementwise, run on blocks of ``_BLOCK`` elements.
    Arrays of one shape are cut into flat blocks; arrays that broadcast (a row of divisors
    against a matrix) into blocks of whole rows of the first axis, where an operand of
    length 1 on that axis comes whole into every block. NumPy scalars and numbers go whole
    to every block. Anything else (CuPy arrays, Tensors, small or 0-d arrays) runs whole. A
    kernel may return a tuple of results (operands of one shape only): each is assembled."""
    def run(xp, *arrays, **params):
        if len(arrays) == 1 and type(arrays[0]) is np.ndarray and arrays[0].size <= _BLOCK:
            return kernel(xp, *arrays, **params)  # (one small array, as below: 1 us sooner)
        whole = _whole(arrays)
        if whole:
            return kernel(xp, *arrays, **params)
        if whole is None:
            return _by_rows(kernel, xp, arrays, params)
        shape = next(a.shape for a in arrays if type(a) is np.ndarray)
        size = math.prod(shape)
        flats = [a.reshape(-1) if type(a) is np.ndarray else a for a in arrays]
        first = kernel(xp, *(_cut(f, 0, _BLOCK) for f in flats), **params)
        if type(first) is tuple:  # several results of one pass over each block
            outs = tuple(np.empty(size, f.dtype) for f in first)
            for start in range(0, size, _BLOCK):
                block = first if start == 0 else kernel(
                    xp, *(_cut(f, start, start + _BLOCK) for f in flats), **params)
                for out, part in zip(outs, block):
                    out[start:start + _BLOCK] = part
            return tuple(out.reshape(shape) for out in outs)
        out = np.empty(size, first.dtype)
        out[:_BLOCK] = first
        for start in range(_BLOCK, size, _BLOCK):
            out[start:start + _BLOCK] = kernel(
                xp, *(_cut(f, start, start + _BLOCK) for f in flats), **params)
        return out.reshape(shape)
    run.__name__ = kernel.__name__
    run.kernel = kernel  # (the block kernel itself, for kernels built of kernels)
    run.resolve = lambda xp, *arrays: (  # (compiled mode: the kernel, where it runs whole)
        (kernel, range(len(arrays) + 1)) if _whole(arrays) else None)
    return run


def _whole(arrays):
    """Whether a blockwise kernel runs on ``arrays`` whole (True), by rows of arrays that
    broadcast (None), or by flat blocks (False). It depends on the operands' types and
    shapes only: compiled mode records the kernel itself where it runs whole
    (``direct``)."""
    shaped = [a for a in arrays if type(a) is np.ndarray]
    if len(shaped) < len(arrays) and not all(
            type(a) is np.ndarray or isinstance(a, (np.generic, int, float)) for a in arrays):
        return True
    shape = shaped[0].shape if shaped else ()
    if any(a.shape != shape for a in shaped):
        return None
    return math.prod(shape) <= _BLOCK


def direct(fn, arrays):
    """The kernel ``fn`` (a ``_blockwise`` function, or any other) runs on ``arrays``: the
    block kernel itself where ``fn`` would run it whole, else ``fn``."""
    kernel = getattr(fn, "kernel", None)
    return kernel if kernel is not None and _whole(arrays) else fn


def _cut(a, start, stop):
    return a[start:stop] if type(a) is np.ndarray else a


def _by_rows(kernel, xp, arrays, params):
    """Broadcasting operands, in blocks of whole rows of the broadcast shape's first axis."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in arrays))
    row = math.prod(shape[1:])
    rows = _BLOCK // row if row else 0
    if rows < 1 or math.prod(shape) <= _BLOCK:
        return kernel(xp, *arrays, **params)
    padded = [a.reshape((1,) * (len(shape) - a.ndim) + a.shape) if type(a) is np.ndarray
              else a for a in arrays]
    out = None
    for start in range(0, shape[0], rows):
        block = kernel(xp, *(a[start:start + rows] if type(a) is np.ndarray and a.shape[0] > 1
                             else a for a in padded), **params)
        if out is None:
            out = np.empty(shape, block.dtype)
        out[start:start + rows] = block
    return out
