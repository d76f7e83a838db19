"""Ops along one dim, in order: scans (cumsum, cumprod), sorting and order statistics (sort,
argsort, topk, kthvalue, median), with their derivatives.

Sorted and selected values are differentiable (the gradient goes back to the positions they
were taken from); indices are int64. Equal elements keep their order, as in PyTorch's CPU sort,
and NaN sorts as the largest value. Where PyTorch's choice among equal elements is its own
algorithm's (``median`` over a dim, ``kthvalue``'s quickselect), ember makes the same choice,
so the gradient lands on the same element.

The family is split by concern: ``scans.py`` (cumsum, cumprod, logcumsumexp, cummax /
cummin), ``ordering.py`` (sort, argsort, msort, topk, kthvalue, median, mode) and ``sets.py``
(unique, bincount, histc, searchsorted, bucketize, isin). Each public function declares where
it goes (``ops/_surface.py``).
"""
from __future__ import annotations

from . import ordering, scans, sets  # noqa: F401  (on import, each declares its functions)
from .scans import cumprod as cumprod  # (shape's vander reaches it through the package)
