"""The public op functions ``import ember`` exports (``ember.exp``, ``ember.cat``...), read off
their declarations (``_surface.py``) once every op family has declared them.

Type checkers read ``_exports.pyi`` instead, which lists the same names with where each is
defined; ``tools/tensor_stub.py`` writes it (and the tests check it is current).
"""
from __future__ import annotations

from .. import _tensor_methods  # noqa: F401  (imports every op family: their declarations)
from ._surface import FUNCTIONS

globals().update(FUNCTIONS)
__all__ = list(FUNCTIONS)
