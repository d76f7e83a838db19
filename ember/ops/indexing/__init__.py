"""Indexing: ``x[key]``, ``x[key] = v``, and the gather / scatter / index / mask families.

Keys are applied as PyTorch applies them: the basic parts (integers, slices, ``None``, ``...``,
Python bools) become a chain of views (``x[0, 1:]`` is ``SliceBackward0`` over
``SelectBackward0``), then the advanced parts (integer and boolean tensors, lists) index the
view in one ``IndexBackward0``. Assignment writes into that view in place, giving the base a
``CopySlices`` node, or through ``index_put_`` for advanced keys.

Every op here reads or writes the entries of its input at a NumPy index *key* (a tuple of
slices and integer arrays): ``gather``, ``index_select``, ``take`` and ``masked_select`` are
reads whose derivative adds the gradient back at the key (repeated indices accumulate);
``scatter``, ``index_copy``, ``index_put``... are writes whose derivative reads the gradient at
the key for the written values and zeroes it there for the input.

The family is split by concern: ``keys.py`` (key helpers, argument checks, parsing ``x[key]``),
``reading.py`` (getitem, gather, index_select, take, masked_select, nonzero),
``scattering.py`` (scatter, scatter_add, scatter_reduce) and ``writing.py`` (setitem,
index_put, copy, fill, index_add / copy / fill, masked_fill / scatter, put). Each public
function declares where it goes (``ops/_surface.py``); this module re-exports the functions
other modules reach through the package.
"""
from __future__ import annotations

from . import reading, scattering, writing  # noqa: F401  (on import, each declares its functions)
from .reading import gather as gather
from .reading import getitem as getitem  # (Tensor.__getitem__ and __setitem__: _tensor_methods
from .reading import index_select as index_select
from .reading import masked_select as masked_select
from .reading import nonzero as nonzero
from .writing import setitem as setitem  # binds these two, through the package)
