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

Each public function declares where it goes (``ops/_surface.py``); this module re-exports the
functions other modules reach through the package.
"""
from __future__ import annotations

from .copies import flip as flip
from .joins import broadcast_shapes as broadcast_shapes
from .joins import cat as cat
from .joins import stack as stack
from .layout import clone as clone
from .layout import contiguous as contiguous
from .layout import to_dtype as to_dtype
from .slices import tensor_split as tensor_split
from .views import broadcast_tensors as broadcast_tensors
from .views import expand as expand
from .views import movedim as movedim
from .views import permute as permute
from .views import reshape as reshape
from .views import squeeze as squeeze
from .views import unsqueeze as unsqueeze
from .views import view as view
