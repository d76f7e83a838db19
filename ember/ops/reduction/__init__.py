"""Reductions, softmax and norms, with their derivatives (scans and sorting: ``ops/sorting/``).

Shared conventions: ``dim`` is an int or a tuple of ints (``None`` — and, where PyTorch allows
it, an empty tuple — means every dim); ``keepdim`` keeps reduced dims with size 1. A reduction's
rule first restores the reduced dims of its gradient (``_unreduce``), then works elementwise.

Value-selecting reductions (``max(dim)``, ``sort``, ``topk``, ...) send the gradient to the
selected positions with the private ``scatter`` / ``gather`` pair (``extremes.py``); their
results come as ``torch.return_types.X`` tuples (``return_type``).

The family is split by concern: ``common.py`` (dims, shapes, return types), ``sums.py`` (sum,
mean, prod, nansum, logsumexp, softmax, count_nonzero, all / any), ``extremes.py`` (max / min,
amax / amin, aminmax, argmax / argmin, and the value-selection helpers), ``statistics.py``
(var / std and their ``*_mean`` forms, cov, corrcoef), ``norms.py`` (vector_norm, norm, dist,
renorm) and ``integration.py`` (trapezoid, cumulative_trapezoid). This module gathers the
family's surface (``ops/__init__.py``).
"""
from __future__ import annotations

from .common import _api_dtype as _api_dtype  # (ops/sorting/ imports it through the package)
from .common import _api_reduction, return_types
from .common import return_type as return_type  # (imported through the package)
from .extremes import amax, amin, aminmax, argmax, argmin, max, min
from .integration import cumulative_trapezoid, trapezoid, trapz
from .norms import dist, norm, renorm
from .norms import vector_norm as vector_norm  # (ember.linalg imports it through the package)
from .statistics import corrcoef, cov, std, std_mean, var, var_mean
from .sums import (
    all,
    any,
    count_nonzero,
    log_softmax,
    logsumexp,
    mean,
    nanmean,
    nansum,
    prod,
    softmax,
    sum,
)

# --------------------------------------------------------------------------- the family's surface
__all__ = ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std",
           "var_mean", "std_mean", "logsumexp", "softmax", "log_softmax", "norm",
           "count_nonzero", "all", "any", "return_types", "nansum", "nanmean", "aminmax",
           "dist", "renorm", "trapezoid", "trapz", "cumulative_trapezoid", "cov",
           "corrcoef"]
METHODS = {name: globals()[name] for name in __all__
           if name not in ("var_mean", "std_mean", "return_types", "trapezoid", "trapz",
                           "cumulative_trapezoid")}
INPLACE = ("renorm",)


ARRAY_API = {
    "sum": _api_reduction(sum),
    "mean": _api_reduction(mean),
    "prod": _api_reduction(prod),
    "max": _api_reduction(amax),
    "min": _api_reduction(amin),
    "argmax": lambda x, axis=None, keepdims=False: argmax(x, axis, keepdims),
    "argmin": lambda x, axis=None, keepdims=False: argmin(x, axis, keepdims),
    "var": lambda x, axis=None, correction=0, keepdims=False: var(
        x, axis, keepdim=keepdims, correction=correction),
    "std": lambda x, axis=None, correction=0, keepdims=False: std(
        x, axis, keepdim=keepdims, correction=correction),
    "all": lambda x, axis=None, keepdims=False: all(x, axis, keepdims),
    "any": lambda x, axis=None, keepdims=False: any(x, axis, keepdims),
}
