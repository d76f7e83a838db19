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
  determinants, solves), ``decompositions.py`` (Cholesky, QR, eigh, SVD, pinv, rank),
  ``norms.py`` (matrix norms) and ``distances.py`` (``cdist``). Decompositions run on NumPy's
  LAPACK and differentiate with PyTorch's formulas (``FunctionsManual.cpp``), written once
  against the array namespace so second derivatives come from recording the first ones;
- ``_common.py``: what they share (checks, messages, ember's own LU factors);
  ``_triangular.py``: triangular solves by blocks (NumPy has no ``trsm``); ``_lapack.py``:
  NumPy's LAPACK loops in single precision for float32 and complex64 (its Python layer
  computes them in double).

Gradients of complex input: the holomorphic functions (inverse, determinant, solves, matrix
products) and slogdet follow PyTorch's convention; the decompositions whose rules are written
for real matrices (Cholesky, QR, eigh, SVD, pinv) raise NotImplementedError (``_common.
real_only``) rather than return a wrong gradient. Each file declares its public
functions where it writes them (``ops/_surface.py``); this module imports the files and
re-exports what other modules import through the package (``ember.linalg``'s functions...).
"""
from __future__ import annotations

from . import addmm, distances, einsum  # noqa: F401  (their declarations: ops/_surface.py)
from . import functions as _functions  # noqa: F401  (lu, lstsq, matrix_exp... of issue 20)
from ._common import _LinAlgError as _LinAlgError
from .decompositions import linalg_cholesky as linalg_cholesky
from .decompositions import linalg_eigh as linalg_eigh
from .decompositions import linalg_eigvalsh as linalg_eigvalsh
from .decompositions import linalg_pinv as linalg_pinv
from .decompositions import linalg_qr as linalg_qr
from .decompositions import linalg_svd as linalg_svd
from .decompositions import linalg_svdvals as linalg_svdvals
from .diagonals import diagonal as diagonal
from .norms import linalg_matrix_norm as linalg_matrix_norm
from .norms import linalg_norm as linalg_norm
from .products import linalg_cross as linalg_cross
from .products import linalg_matrix_power as linalg_matrix_power
from .products import matmul as matmul
from .solvers import linalg_det as linalg_det
from .solvers import linalg_inv as linalg_inv
from .solvers import linalg_slogdet as linalg_slogdet
from .solvers import linalg_solve as linalg_solve
from .solvers import linalg_solve_triangular as linalg_solve_triangular
