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
renorm) and ``integration.py`` (trapezoid, cumulative_trapezoid). Each file declares its
public functions where it writes them (``ops/_surface.py``); this module imports the files and
re-exports what other modules import through the package.
"""
from __future__ import annotations

from . import integration, statistics  # noqa: F401  (their declarations: ops/_surface.py)
from .common import _api_dtype as _api_dtype  # (ops/sorting/ imports it through the package)
from .common import return_type as return_type  # (imported through the package)
from .common import return_types as return_types  # (the pickled return types' home)
from .extremes import amax as amax
from .extremes import amin as amin
from .extremes import argmax as argmax
from .norms import vector_norm as vector_norm  # (ember.linalg imports it through the package)
from .sums import all as all
from .sums import log_softmax as log_softmax
from .sums import softmax as softmax
from .sums import sum as sum
