"""``ember.linalg``: PyTorch's ``torch.linalg`` namespace.

The functions live with the rest of the linear algebra in ``ember/ops/linalg/`` under their
ATen names (``linalg_inv``...); here they get their ``torch.linalg`` names. ``vector_norm``
comes from the reductions.
"""
from __future__ import annotations

from ._out import add_out as _add_out
from .ops.linalg import _LinAlgError as LinAlgError
from .ops.linalg import diagonal as _diagonal
from .ops.linalg import linalg_cholesky as cholesky
from .ops.linalg import linalg_cross as cross
from .ops.linalg import linalg_det as det
from .ops.linalg import linalg_eigh as eigh
from .ops.linalg import linalg_eigvalsh as eigvalsh
from .ops.linalg import linalg_inv as inv
from .ops.linalg import linalg_matrix_norm as matrix_norm
from .ops.linalg import linalg_matrix_power as matrix_power
from .ops.linalg import linalg_norm as norm
from .ops.linalg import linalg_pinv as pinv
from .ops.linalg import linalg_qr as qr
from .ops.linalg import linalg_slogdet as slogdet
from .ops.linalg import linalg_solve as solve
from .ops.linalg import linalg_solve_triangular as solve_triangular
from .ops.linalg import linalg_svd as svd
from .ops.linalg import linalg_svdvals as svdvals
from .ops.linalg import matmul
from .ops.linalg.decompositions import linalg_matrix_rank as matrix_rank
from .ops.linalg.eig import linalg_eig as eig
from .ops.linalg.eig import linalg_eigvals as eigvals
from .ops.linalg.factorizations import linalg_cholesky_ex as cholesky_ex
from .ops.linalg.factorizations import linalg_inv_ex as inv_ex
from .ops.linalg.factorizations import linalg_lu as lu
from .ops.linalg.factorizations import linalg_lu_factor as lu_factor
from .ops.linalg.factorizations import linalg_lu_factor_ex as lu_factor_ex
from .ops.linalg.factorizations import linalg_lu_solve as lu_solve
from .ops.linalg.factorizations import linalg_solve_ex as solve_ex
from .ops.linalg.functions import linalg_cond as cond
from .ops.linalg.functions import linalg_lstsq as lstsq
from .ops.linalg.functions import linalg_tensorinv as tensorinv
from .ops.linalg.functions import linalg_tensorsolve as tensorsolve
from .ops.linalg.functions import linalg_vander as vander
from .ops.linalg.functions import matrix_exp
from .ops.linalg.householder import linalg_householder_product as householder_product
from .ops.linalg.ldl import linalg_ldl_factor as ldl_factor
from .ops.linalg.ldl import linalg_ldl_factor_ex as ldl_factor_ex
from .ops.linalg.ldl import linalg_ldl_solve as ldl_solve
from .ops.linalg.products import linalg_multi_dot as multi_dot
from .ops.linalg.products import linalg_vecdot as vecdot
from .ops.reduction import vector_norm

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig",
           "eigh", "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
           "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve",
           "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot",
           "norm", "pinv", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd",
           "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonal ``offset`` of each matrix (dims ``dim1``, ``dim2``), as a view."""
    return _diagonal(A, offset, dim1, dim2)


_add_out(globals(), "linalg.")  # out= on the functions PyTorch gives it (ember/_out_rules.py)
