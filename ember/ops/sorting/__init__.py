"""Ops along one dim, in order: scans (cumsum, cumprod), sorting and order statistics (sort,
argsort, topk, kthvalue, median), with their derivatives.

Sorted and selected values are differentiable (the gradient goes back to the positions they
were taken from); indices are int64. Equal elements keep their order, as in PyTorch's CPU sort,
and NaN sorts as the largest value. Where PyTorch's choice among equal elements is its own
algorithm's (``median`` over a dim, ``kthvalue``'s quickselect), ember makes the same choice,
so the gradient lands on the same element.

The family is split by concern: ``scans.py`` (cumsum, cumprod, logcumsumexp, cummax /
cummin), ``ordering.py`` (sort, argsort, msort, topk, kthvalue, median, mode) and ``sets.py``
(unique, bincount, histc, searchsorted, bucketize, isin). This module gathers the family's
surface (``ops/__init__.py``).
"""
from __future__ import annotations

from ..reduction import _api_dtype
from .ordering import argsort, kthvalue, median, mode, msort, sort, topk
from .scans import cummax, cummin, cumprod, cumsum, logcumsumexp
from .sets import bincount, bucketize, histc, isin, searchsorted, unique, unique_consecutive

# --------------------------------------------------------------------------- the family's surface
__all__ = ["cumsum", "cumprod", "sort", "argsort", "msort", "topk", "kthvalue", "median", "mode",
           "cummax", "cummin", "logcumsumexp", "unique", "unique_consecutive", "bincount", "histc",
           "searchsorted", "bucketize", "isin"]
METHODS = {name: globals()[name] for name in __all__
           if name not in ("searchsorted", "bucketize", "isin")}
INPLACE = ("cumsum", "cumprod")
ARRAY_API = {
    "cumsum": lambda x, axis=None, dtype=None: cumsum(x, axis, dtype=_api_dtype(dtype)),
    "cumprod": lambda x, axis=None, dtype=None: cumprod(x, axis, dtype=_api_dtype(dtype)),
    "sort": lambda x, axis=-1, descending=False, stable=True: sort(x, axis, descending).values,
    "argsort": lambda x, axis=-1, descending=False, stable=True: argsort(x, axis, descending),
}
