"""Linear algebra: matrix products, contractions, diagonals, decompositions and their derivatives.

The family is one package, a file per concern:

- ``products.py``: ``mm``, ``bmm``, ``mv``, ``dot``, ``vdot``, ``matmul``'s dispatch, and the
  composites on them (``outer``, ``inner``, ``cross``, ``matrix_power``, ``multi_dot``,
  ``vecdot``); ``addmm.py``: the products added into an input (``addmm``, ``addmv``,
  ``baddbmm``, ``addbmm``, ``addr``) and their in-place methods;
- ``einsum.py``: contractions built from those, step for step as PyTorch builds them
  (``einsum``, ``tensordot``, ``kron``), so their graphs, grad_fn names and rounding match;
- ``diagonals.py``: diagonals and triangles (``diagonal`` is a view; ``diag``, ``diag_embed``,
  ``diagflat``, ``trace``, ``tril``, ``triu``);
- the ``torch.linalg`` functions (``linalg_inv``, ``linalg_svd``...; ``ember.linalg`` exports
  them under their short names, as ``torch.linalg`` does): ``solvers.py`` (inverses,
  determinants, solves), ``decompositions.py`` (Cholesky, QR, eigh, SVD, pinv, rank) and
  ``norms.py`` (matrix norms, ``cdist``). Decompositions run on NumPy's LAPACK and
  differentiate with PyTorch's formulas (``FunctionsManual.cpp``), written once against the
  array namespace so second derivatives come from recording the first ones;
- ``_common.py``: what they share (checks, messages, ember's own LU factors).

Gradients are for real inputs (complex inputs run forward only). This module gathers the
family's surface (``ember/ops/__init__.py``) from the files.
"""
from __future__ import annotations

from ._common import _LinAlgError  # noqa: F401  (importers: ember.linalg)
from .addmm import _in_place, addbmm, addmm, addmv, addr, baddbmm
from .decompositions import (  # noqa: F401
    linalg_cholesky,
    linalg_eigh,
    linalg_eigvalsh,
    linalg_pinv,
    linalg_qr,
    linalg_svd,
    linalg_svdvals,
)
from .diagonals import diag, diag_embed, diagflat, diagonal, trace, tril, triu
from .einsum import einsum, kron, tensordot
from .norms import cdist, linalg_matrix_norm, linalg_norm  # noqa: F401
from .products import (  # noqa: F401
    bmm,
    cross,
    dot,
    ger,
    inner,
    linalg_cross,
    linalg_matrix_power,
    matmul,
    matrix_power,
    mm,
    mv,
    outer,
    vdot,
)
from .solvers import (  # noqa: F401
    det,
    inverse,
    linalg_det,
    linalg_inv,
    linalg_slogdet,
    linalg_solve,
    linalg_solve_triangular,
    logdet,
    slogdet,
)

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "outer", "ger", "addmm", "addmv",
           "baddbmm", "einsum", "tensordot", "kron", "trace", "diag", "diagonal", "diag_embed",
           "tril", "triu", "det", "inverse", "slogdet", "logdet", "matrix_power", "cross",
           "addr", "inner", "diagflat", "addbmm", "cdist"]
METHODS = {name: globals()[name] for name in __all__
           if name not in ("einsum", "tensordot", "cdist")}
METHODS.update({name + "_": _in_place(globals()[name])
                for name in ("addmm", "addmv", "baddbmm", "addr", "addbmm")})
INPLACE = ("tril", "triu")
ARRAY_API = {}
