"""``torch.histogram``: counts (or weights, or densities) of a tensor's values in bins, with
the bin edges; no gradient (PyTorch's has none either).

``bins`` is a count (equal bins over ``range``, by default the values' min and max, widened by
0.5 each way when they are equal, and [0, 1] for an empty tensor) or a 1-D tensor of increasing
edges. Values on an inner edge fall in the bin to its right; the last bin includes its right
edge. The result and edges have the input's dtype. NumPy's ``histogram`` does the counting.
It is ``ember.histogram`` and a Tensor method (declared: ``_surface.py``); it is no op.
"""
from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor
from .operands import _check_tensor
from .reduction import return_type
from .registry import public

_Histogram = return_type("histogram", ("hist", "bin_edges"))


@public
def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """``(hist, bin_edges)`` of ``input``'s values (see the module docstring)."""
    _check_tensor("histogram", input)
    if out is not None:
        raise TypeError("histogram(): out= is not supported by ember")
    if not input.is_floating_point():
        raise NotImplementedError(f'"histogramdd" not implemented for '
                                  f"'{input.dtype._legacy[:-len('Tensor')]}'")
    x = input._data.reshape(-1)
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            "the input tensor excluding its innermost dimension, but got input with shape "
            f"[{x.size}, 1] and weight with shape {list(weight.shape)}")
    if isinstance(bins, Tensor):
        edges = bins._data.astype(x.dtype)
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                               "dimension 0")
        if range is not None:
            lo, hi = float(range[0]), float(range[1])
        elif x.size:
            lo, hi = float(x.min()), float(x.max())
        else:
            lo, hi = 0.0, 1.0
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{lo:g} max {hi:g} for dimension 0")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is "
                               "not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = np.linspace(lo, hi, bins + 1).astype(x.dtype)
    w = None if weight is None else weight._data.reshape(-1)
    hist, _ = np.histogram(x, edges, weights=w, density=density)
    make = Tensor._make
    return _Histogram((make(np.asarray(hist, dtype=x.dtype), None, False),
                       make(edges, None, False)))
