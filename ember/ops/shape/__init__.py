"""Shape ops: views (sharing storage and version counter), joins, splits and reorderings.

A view op returns a NumPy view of its input and is wrapped with ``as_view``, so in-place writes
through it reach the base (which then gets a ``CopySlices`` node). Ops that PyTorch computes as
copies (``flip``, ``roll``, ``repeat``...) copy here too.

The family is split by what its results are:

- views: ``views.py`` (view, reshape, squeeze, permute, transpose, conj, expand, the in-place
  reshapes) and ``slices.py`` (slice, split, unbind, narrow, select, unfold, real, imag);
- copies: ``layout.py`` (clone, contiguous, to_dtype), ``copies.py`` (repeat, flip, roll,
  rot90, sum_to_size) and ``joins.py`` (cat, stack, atleast_Nd, diff, grids and blocks);
- ``helpers.py``: argument parsing and warn-once messages they share.

This module gathers the family's surface (``ops/__init__.py``).
"""
from __future__ import annotations

import numpy as np

from ..._creation import tril_indices, triu_indices
from .copies import (
    flip,
    fliplr,
    flipud,
    repeat,
    repeat_interleave,
    roll,
    rot90,
    sum_to_size,
    tile,
)
from .joins import (
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    cartesian_prod,
    cat,
    column_stack,
    combinations,
    concat,
    concatenate,
    diff,
    dstack,
    hstack,
    meshgrid,
    row_stack,
    stack,
    vander,
    vstack,
)
from .layout import _to_copy, clone, contiguous
from .layout import to_dtype as to_dtype  # (not in the surface: imported through the package)
from .slices import (
    chunk,
    imag,
    narrow,
    real,
    select,
    split,
    split_with_sizes,
    tensor_split,
    unbind,
    unfold,
)
from .views import (
    _conj,
    _is_conj,
    _is_neg,
    _matrix_H,
    _mH,
    _mT,
    _numpy_T,
    adjoint,
    broadcast_tensors,
    broadcast_to,
    conj,
    expand,
    expand_as,
    flatten,
    moveaxis,
    movedim,
    permute,
    ravel,
    reshape,
    reshape_as,
    resolve_conj,
    resolve_neg,
    squeeze,
    squeeze_,
    swapaxes,
    swapaxes_,
    swapdims,
    swapdims_,
    t,
    t_,
    transpose,
    transpose_,
    unflatten,
    unsqueeze,
    unsqueeze_,
    view,
    view_as,
)

# --------------------------------------------------------------------------- the family's surface
__all__ = ["view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "ravel", "clone",
           "contiguous", "unsqueeze", "squeeze", "permute", "t", "transpose", "swapaxes",
           "swapdims", "adjoint", "movedim", "moveaxis", "expand", "expand_as", "broadcast_to",
           "broadcast_tensors", "repeat", "tile", "repeat_interleave", "cat", "concat",
           "concatenate", "stack", "atleast_1d", "atleast_2d", "atleast_3d", "hstack", "vstack",
           "row_stack", "dstack", "column_stack", "split", "split_with_sizes", "chunk",
           "tensor_split", "unbind", "narrow", "flip", "fliplr", "flipud", "roll", "rot90",
           "select", "conj", "resolve_conj", "resolve_neg", "real", "imag", "diff", "meshgrid",
           "cartesian_prod", "combinations", "block_diag", "broadcast_shapes", "tril_indices",
           "triu_indices", "vander"]
_FUNCTIONS_ONLY = ("cat", "concat", "concatenate", "stack", "atleast_1d", "atleast_2d",
                   "atleast_3d", "hstack", "vstack", "row_stack", "dstack", "column_stack",
                   "broadcast_tensors", "meshgrid", "cartesian_prod", "combinations",
                   "block_diag", "broadcast_shapes", "tril_indices", "triu_indices",
                   "vander")
METHODS = {name: globals()[name] for name in __all__ if name not in _FUNCTIONS_ONLY}
METHODS.update(
    T=property(_numpy_T),
    mT=property(_mT),
    mH=property(_mH),
    H=property(_matrix_H),
    real=property(real),
    imag=property(imag),
    is_conj=_is_conj,
    is_neg=_is_neg,
    unfold=unfold,
    sum_to_size=sum_to_size,
    unsqueeze_=unsqueeze_,
    squeeze_=squeeze_,
    t_=t_,
    transpose_=transpose_,
    swapaxes_=swapaxes_,
    swapdims_=swapdims_,
)
INPLACE = ()
ARRAY_API = {
    "reshape": lambda x, shape, copy=None: reshape(x, tuple(shape)),
    "broadcast_to": lambda x, shape: expand(x, tuple(shape)),
    "expand_dims": lambda x, axis: unsqueeze(x, axis),
    "squeeze": lambda x, axis: squeeze(x, axis),
    "swapaxes": lambda x, axis1, axis2: transpose(x, axis1, axis2),
    "transpose": lambda x, axes=None: permute(x, tuple(range(x.ndim - 1, -1, -1))
                                              if axes is None else tuple(axes)),
    # Rules' casts (a complex gradient reaching a real input) keep the real part silently.
    "astype": lambda x, dtype: x if x._data.dtype == np.dtype(getattr(dtype, "np", dtype))
    else _to_copy(x, np.dtype(getattr(dtype, "np", dtype))),
    "stack": lambda arrays, axis=0: stack(arrays, dim=axis),
    "concat": lambda arrays, axis=0: cat(arrays, dim=axis),
    "concatenate": lambda arrays, axis=0: cat(arrays, dim=axis),
    "flip": lambda x, axis=None: flip(x, tuple(range(x.ndim)) if axis is None else axis),
    "roll": lambda x, shift, axis=None: roll(x, shift, axis),
    "rot90": lambda x, k=1, axes=(0, 1): rot90(x, k, axes),
    "tile": lambda x, reps: tile(x, tuple(reps)),
    "conj": lambda x: _conj(x) if x.is_complex() else x,
}
