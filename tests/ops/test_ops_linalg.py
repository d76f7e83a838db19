"""Linear algebra: products, contractions, diagonals, decompositions, norms (``ember.linalg``).

Every spec runs gradcheck and, for smooth functions, gradgradcheck in float64, and is compared
with PyTorch (values, dtype, grad_fn, a random vector-Jacobian product) in float32 and float64.
Eigen- and singular vectors are defined up to sign, so their specs use sign-invariant functions
of them (``abs``, reconstructions), as PyTorch's own tests do. Then: inputs without a
derivative (integers), PyTorch's errors for bad input, the subgradients PyTorch picks at
singular matrices and tied spectra, named results, views, and ``torch.linalg`` under
``python -m ember run``.
"""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from ..opspec import Spec, op_tests
from ..oracle import raised

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")


def _well(L, a):
    """A well-conditioned matrix built from ``a`` (the gradient still flows through ``a``)."""
    return a + 4 * L.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def _spd(L, a):
    """A symmetric positive-definite matrix built from ``a``."""
    return a @ a.mT + a.shape[-1] * L.eye(a.shape[-1], dtype=a.dtype, device=a.device)


def _sym(L, a):
    return a + a.mT


def _abs_all(outputs):
    return tuple(o.abs() for o in outputs)


def _inplace_diagonal(L, a, b):
    y = a * 1
    y.diagonal().mul_(b)
    y.diagonal(1)[:] = b[:2] * 3
    return y


MATRIX = [((3, 3),), ((2, 3, 3),)]

SPECS = [
    # products
    Spec("mm", lambda L, a, b: L.mm(a, b), [((2, 3), (3, 4))]),
    Spec("mm_method", lambda L, a, b: a.mm(b), [((3, 3), (3, 1))]),
    # operands stored column by column: their gradients are computed in that layout
    Spec("mm_transposed", lambda L, a, b: a.t().mm(b.t()), [((3, 2), (4, 3)), ((1, 1), (4, 1))]),
    Spec("bmm", lambda L, a, b: L.bmm(a, b), [((2, 2, 3), (2, 3, 4))]),
    Spec("mv", lambda L, a, b: a.mv(b), [((2, 3), (3,))]),
    Spec("dot", lambda L, a, b: L.dot(a, b), [((3,), (3,))]),
    Spec("vdot", lambda L, a, b: a.vdot(b), [((3,), (3,))]),
    Spec("outer", lambda L, a, b: L.outer(a, b), [((3,), (2,))]),
    Spec("ger", lambda L, a, b: a.ger(b), [((2,), (3,))]),
    Spec("addmm", lambda L, a, b, c: L.addmm(a, b, c),
         [((2, 4), (2, 3), (3, 4)), ((), (2, 3), (3, 4)), ((4,), (2, 3), (3, 4)),
          ((1, 4), (2, 3), (3, 4))]),
    Spec("addmm_scaled", lambda L, a, b, c: a.addmm(b, c, beta=0.5, alpha=-2),
         [((2, 4), (2, 3), (3, 4))]),
    Spec("addmm_transposed", lambda L, a, b, c: L.addmm(a, b.t(), c.t(), alpha=2),
         [((4,), (3, 2), (4, 3)), ((2, 4), (1, 2), (4, 1))]),
    Spec("addmm_beta0", lambda L, a, b, c: L.addmm(a, b, c, beta=0), [((2, 4), (2, 3), (3, 4))]),
    Spec("addmm_", lambda L, a, b, c: (a * 1).addmm_(b, c, alpha=3), [((2, 4), (2, 3), (3, 4))]),
    Spec("addmv", lambda L, a, b, c: L.addmv(a, b, c, beta=2, alpha=0.5),
         [((2,), (2, 3), (3,)), ((), (2, 3), (3,)), ((1,), (2, 3), (3,))]),
    Spec("addmv_", lambda L, a, b, c: (a * 1).addmv_(b, c), [((2,), (2, 3), (3,))]),
    Spec("baddbmm", lambda L, a, b, c: L.baddbmm(a, b, c, beta=-1, alpha=2),
         [((2, 2, 4), (2, 2, 3), (2, 3, 4)), ((4,), (2, 2, 3), (2, 3, 4))]),
    Spec("baddbmm_", lambda L, a, b, c: (a * 1).baddbmm_(b, c), [((2, 2, 4), (2, 2, 3),
                                                                  (2, 3, 4))]),
    Spec("matmul_fold", lambda L, a, b: a @ b, [((2, 2, 3), (3, 4)), ((2, 3, 3), (3,)),
                                                 ((3, 4), (2, 4, 2)), ((3,), (2, 3, 4))]),
    Spec("matmul_batched", lambda L, a, b: L.matmul(a, b), [((2, 1, 2, 3), (3, 3, 2)),
                                                           ((1, 2, 3), (4, 3, 2))]),
    Spec("matmul_unfoldable", lambda L, a: a.transpose(0, 1) @ L.linspace(
        -1, 1, 12, dtype=a.dtype).reshape(3, 4), [((2, 2, 3),)]),
    # contractions
    Spec("einsum_matmul", lambda L, a, b: L.einsum("ij,jk->ik", a, b), [((2, 3), (3, 4))]),
    Spec("einsum_implicit", lambda L, a, b: L.einsum("ij,jk", a, b), [((2, 3), (3, 2))]),
    Spec("einsum_diagonal", lambda L, a: L.einsum("ii->i", a), [((3, 3),)]),
    Spec("einsum_trace", lambda L, a: L.einsum("ii", a), [((3, 3),)]),
    Spec("einsum_repeated_3", lambda L, a: L.einsum("iji->j", a), [((2, 3, 2),)]),
    Spec("einsum_transpose", lambda L, a: L.einsum("ij->ji", a), [((2, 3),)]),
    Spec("einsum_sum", lambda L, a: L.einsum("ij->", a), [((2, 3),)]),
    Spec("einsum_outer3", lambda L, a, b, c: L.einsum("i,j,k->ijk", a, b, c),
         [((2,), (3,), (2,))]),
    Spec("einsum_dot", lambda L, a, b: L.einsum("i,i", a, b), [((3,), (3,))]),
    Spec("einsum_hadamard", lambda L, a, b: L.einsum("ij,ij->ij", a, b), [((2, 3), (1, 3))]),
    Spec("einsum_ellipsis", lambda L, a, b: L.einsum("...ij,...jk", a, b),
         [((2, 2, 3), (2, 3, 2)), ((2, 3), (3, 2))]),
    Spec("einsum_ellipsis_broadcast", lambda L, a, b: L.einsum("...i,...i->...", a, b),
         [((2, 1, 3), (4, 3))]),
    Spec("einsum_bilinear", lambda L, a, b, c: L.einsum("bn,anm,bm->ba", a, b, c),
         [((2, 3), (2, 3, 2), (2, 2))]),
    Spec("einsum_chain", lambda L, a, b, c: L.einsum("ij,jk,kl->il", a, b, c),
         [((2, 3), (3, 3), (3, 2))]),
    Spec("einsum_sublist", lambda L, a, b: L.einsum(a, [..., 0, 1], b, [..., 1, 2], [..., 0, 2]),
         [((2, 2, 3), (2, 3, 4))]),
    Spec("tensordot", lambda L, a, b: L.tensordot(a, b, dims=1), [((2, 3), (3, 4))]),
    Spec("tensordot_outer", lambda L, a, b: L.tensordot(a, b, dims=0), [((3,), (2,))]),
    Spec("tensordot_full", lambda L, a, b: L.tensordot(a, b), [((2, 3), (2, 3))]),
    Spec("tensordot_lists", lambda L, a, b: L.tensordot(a, b, dims=([0, 2], [1, 0])),
         [((3, 2, 4), (4, 3, 2)), ((3, 2, 1), (4, 3, 2))]),
    Spec("tensordot_crossed", lambda L, a, b: L.tensordot(a, b, dims=([0, 1], [1, 0])),
         [((3, 2), (2, 3))]),
    Spec("kron", lambda L, a, b: L.kron(a, b), [((2, 3), (3, 2)), ((3,), (2, 2)), ((), (3,))]),
    # diagonals and triangles
    Spec("trace", lambda L, a: L.trace(a), [((3, 3),), ((2, 3),)]),
    Spec("diag_vector", lambda L, a: L.diag(a), [((3,),)]),
    Spec("diag_vector_offset", lambda L, a: a.diag(-2), [((3,),)]),
    Spec("diag_matrix", lambda L, a: L.diag(a, 1), [((3, 4),)]),
    Spec("diagonal", lambda L, a: L.diagonal(a), [((3, 3),), ((2, 3),)]),
    Spec("diagonal_dims", lambda L, a: a.diagonal(-1, 2, 0), [((2, 3, 4),)]),
    Spec("diagonal_inplace", _inplace_diagonal, [((3, 3), (3,))]),
    Spec("diag_embed", lambda L, a: L.diag_embed(a), [((3,),), ((2, 3),)]),
    Spec("diag_embed_dims", lambda L, a: a.diag_embed(1, 0, 2), [((2, 3),)]),
    Spec("tril", lambda L, a: L.tril(a), [((3, 3),), ((2, 3, 4),)]),
    Spec("triu", lambda L, a: a.triu(-1), [((3, 4),)]),
    Spec("tril_", lambda L, a: (a * 1).tril_(1), [((3, 3),)]),
    # torch.linalg
    Spec("inv", lambda L, a: L.linalg.inv(_well(L, a)), MATRIX),
    Spec("inverse", lambda L, a: _well(L, a).inverse(), [((3, 3),)]),
    Spec("det", lambda L, a: L.linalg.det(a), MATRIX + [((1, 1),)]),
    Spec("det_method", lambda L, a: a.det(), [((3, 3),)]),
    Spec("slogdet", lambda L, a: L.linalg.slogdet(a), MATRIX),
    Spec("slogdet_torch", lambda L, a: L.slogdet(a), [((3, 3),)]),
    Spec("logdet", lambda L, a: L.logdet(_spd(L, a)), MATRIX),
    Spec("solve", lambda L, a, b: L.linalg.solve(_well(L, a), b),
         [((3, 3), (3, 2)), ((3, 3), (3,)), ((2, 3, 3), (2, 3)), ((2, 3, 3), (3,)),
          ((2, 3, 3), (1, 3, 2))]),
    Spec("solve_right", lambda L, a, b: L.linalg.solve(_well(L, a), b, left=False),
         [((3, 3), (2, 3)), ((2, 3, 3), (1, 3))]),
    Spec("solve_triangular", lambda L, a, b: L.linalg.solve_triangular(_well(L, a), b,
                                                                       upper=True),
         [((3, 3), (3, 2)), ((2, 3, 3), (3, 1))]),
    Spec("solve_triangular_right_unit",
         lambda L, a, b: L.linalg.solve_triangular(a, b, upper=False, left=False,
                                                   unitriangular=True),
         [((3, 3), (2, 3))]),
    Spec("cholesky", lambda L, a: L.linalg.cholesky(_spd(L, a)), MATRIX),
    Spec("cholesky_upper", lambda L, a: L.linalg.cholesky(_spd(L, a), upper=True), MATRIX),
    Spec("qr", lambda L, a: L.linalg.qr(a), [((4, 3),), ((3, 3),), ((3, 4),), ((2, 4, 3),)]),
    Spec("qr_complete", lambda L, a: L.linalg.qr(a, mode="complete"), [((3, 3),), ((2, 4),)]),
    Spec("eigh", lambda L, a: (lambda r: (r.eigenvalues, r.eigenvectors.abs()))(
        L.linalg.eigh(_sym(L, a))), MATRIX, distinct=True, tol=10),
    Spec("eigh_upper", lambda L, a: (lambda r: r[1] @ L.diag_embed(r[0] ** 3) @ r[1].mT)(
        L.linalg.eigh(_sym(L, a), UPLO="U")), MATRIX, distinct=True, tol=10),
    Spec("eigvalsh", lambda L, a: L.linalg.eigvalsh(_sym(L, a)), MATRIX, distinct=True,
         tol=10),
    Spec("svd", lambda L, a: _abs_all(L.linalg.svd(a, full_matrices=False)),
         [((4, 3),), ((3, 4),), ((2, 3, 3),)], distinct=True, tol=10),
    # Only the first min(m, n) singular vectors are determined by A (and differentiated).
    Spec("svd_full", lambda L, a: (lambda r: (r.U[..., :3].abs(), r.S, r.Vh[..., :3, :].abs()))(
        L.linalg.svd(a)), [((4, 3),), ((3, 4),)], distinct=True, tol=10),
    Spec("svd_reconstruct", lambda L, a: (lambda r: (r.U * r.S[..., None, :] ** 2) @ r.Vh)(
        L.linalg.svd(a, full_matrices=False)), [((4, 3),), ((2, 3, 4),)], distinct=True,
         tol=10),
    Spec("svdvals", lambda L, a: L.linalg.svdvals(a), [((3, 4),), ((2, 3, 3),)], distinct=True,
         tol=5),  # (PyTorch's float32 SVD is the less accurate one: ember's runs in float64)
    Spec("pinv", lambda L, a: L.linalg.pinv(a), [((3, 4),), ((2, 4, 3),)], tol=10),
    Spec("pinv_hermitian", lambda L, a: L.linalg.pinv(_sym(L, _well(L, a)), hermitian=True),
         MATRIX, tol=10),
    Spec("matrix_power", lambda L, a: L.linalg.matrix_power(a, 5), MATRIX, domain=(-1, 1)),
    Spec("matrix_power_small", lambda L, a: (a.matrix_power(0) + L.matrix_power(a, 1) +
                                             a.matrix_power(2) + a.matrix_power(3)), MATRIX),
    Spec("matrix_power_negative", lambda L, a: L.linalg.matrix_power(_well(L, a), -3), MATRIX),
    Spec("matrix_power_inverse", lambda L, a: L.linalg.matrix_power(_well(L, a), -1),
         [((3, 3),)]),
    Spec("matrix_norm_fro", lambda L, a: L.linalg.matrix_norm(a), [((3, 4),), ((2, 3, 4),)]),
    Spec("matrix_norm_nuc", lambda L, a: L.linalg.matrix_norm(a, "nuc", dim=(0, 2)),
         [((3, 2, 4),)], distinct=True),
    Spec("matrix_norm_2", lambda L, a: L.linalg.matrix_norm(a, 2, keepdim=True),
         [((3, 4),), ((2, 3, 4),)], distinct=True),
    Spec("matrix_norm_-2", lambda L, a: L.linalg.matrix_norm(a, -2, dim=(2, 0), keepdim=True),
         [((3, 2, 4),)], distinct=True),
    Spec("matrix_norm_1", lambda L, a: L.linalg.matrix_norm(a, 1), [((3, 4),), ((2, 3, 4),)],
         distinct=True),
    Spec("matrix_norm_-1", lambda L, a: L.linalg.matrix_norm(a, -1, dim=(0, 2), keepdim=True),
         [((3, 2, 4),)], distinct=True),
    Spec("matrix_norm_inf", lambda L, a: L.linalg.matrix_norm(a, float("inf")), [((3, 4),)],
         distinct=True),
    Spec("matrix_norm_-inf", lambda L, a: L.linalg.matrix_norm(a, -float("inf"), dim=(2, 1)),
         [((3, 2, 4),)], distinct=True),
    Spec("norm", lambda L, a: L.linalg.norm(a), [((3,),), ((2, 3),), ((2, 3, 4),)]),
    Spec("norm_orders", lambda L, a: L.linalg.norm(a.reshape(-1), 3) + L.linalg.norm(a[0], 1),
         [((2, 3),)], distinct=True),
    Spec("norm_dims", lambda L, a: L.linalg.norm(a, "nuc", dim=(1, 2)) +
         L.linalg.norm(a, dim=1).sum(-1), [((2, 3, 4),)], distinct=True),
    Spec("vector_norm", lambda L, a: L.linalg.vector_norm(a, 3, dim=-1), [((2, 3),)]),
    # cross, addr, inner, diagflat
    Spec("cross", lambda L, a, b: L.cross(a, b, dim=0), [((3,), (3,)), ((3, 2), (3, 1))]),
    Spec("addr", lambda L, a, b, c: a.addr(b, c, beta=0.5, alpha=2),
         [((2, 3), (2,), (3,)), ((3,), (2,), (3,))]),
    Spec("addr_beta0", lambda L, a, b, c: L.addr(a, b, c, beta=0), [((2, 3), (2,), (3,))]),
    Spec("inner", lambda L, a, b: L.inner(a, b), [((3,), (3,)), ((2, 3), (4, 3)), ((), (3,))]),
    Spec("diagflat", lambda L, a: L.diagflat(a), [((3,),), ((2, 2),)]),
    Spec("diagflat_offset", lambda L, a: a.diagflat(-1), [((3,),)]),
    # addbmm, cdist
    Spec("addbmm", lambda L, a, b, c: L.addbmm(a, b, c), [((2, 4), (3, 2, 5), (3, 5, 4)),
                                                          ((4,), (2, 2, 3), (2, 3, 4))]),
    Spec("addbmm_scaled", lambda L, a, b, c: a.addbmm(b, c, beta=-0.5, alpha=2),
         [((1, 4), (3, 2, 5), (3, 5, 4))]),
    Spec("addbmm_beta0", lambda L, a, b, c: L.addbmm(a, b, c, beta=0), [((), (2, 2, 3),
                                                                         (2, 3, 2))]),
    Spec("addbmm_", lambda L, a, b, c: (a * 1).addbmm_(b, c, alpha=0.5),
         [((2, 4), (3, 2, 5), (3, 5, 4))]),
    Spec("cdist", lambda L, a, b: L.cdist(a, b), [((3, 4), (2, 4)), ((2, 1, 3, 4), (5, 2, 4))]),
    Spec("cdist_p1", lambda L, a, b: L.cdist(a, b, 1), [((3, 4), (2, 4))]),
    Spec("cdist_inf", lambda L, a, b: L.cdist(a, b, float("inf")), [((3, 4), (2, 4))]),
    Spec("cdist_p3", lambda L, a, b: L.cdist(a, b, p=3.0), [((2, 3, 2), (2, 4, 2))]),
    Spec("cdist_p1_5", lambda L, a, b: L.cdist(a, b, 1.5), [((3, 4), (2, 4))]),
    Spec("cdist_p0_5", lambda L, a, b: L.cdist(a, b, 0.5), [((3, 4), (2, 4))]),
    Spec("cdist_p0", lambda L, a, b: L.cdist(a, b, 0), [((3, 4), (2, 4))]),
    Spec("cdist_mm", lambda L, a, b: L.cdist(a, b), [((26, 3), (2, 3)), ((2, 26, 3), (1, 2, 3))]),
    Spec("cdist_use_mm", lambda L, a, b: L.cdist(a, b, compute_mode="use_mm_for_euclid_dist"),
         [((3, 4), (2, 4))]),
    Spec("cdist_no_mm", lambda L, a, b: L.cdist(a, b, 2,
                                                "donot_use_mm_for_euclid_dist"),
         [((26, 3), (2, 3))]),
    # zero distances (PyTorch's subgradient 0) and inf-norm ties (each gets the whole gradient)
    Spec("cdist_zero_distance", lambda L, a, b: L.cdist(L.cat([a, b]), b, p=2.0),
         [((2, 3), (2, 3))], gradgrad=False, finite_differences=False),
    Spec("cdist_p1_5_zero_distance", lambda L, a, b: L.cdist(L.cat([a, b]), b, p=1.5),
         [((2, 3), (2, 3))], gradgrad=False, finite_differences=False),
    Spec("cdist_inf_ties", lambda L, a: L.cdist(L.stack([a, -a]), L.zeros(1, 3, dtype=a.dtype),
                                                float("inf")),
         [((3,),)], gradgrad=False, finite_differences=False),
]

test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


# --------------------------------------------------------------------------- integer inputs

# Products and diagonals of integer tensors have no derivative: values and dtype as PyTorch's.
INTEGER = {
    "mm": lambda L, a: L.mm(a, a),
    "bmm": lambda L, a: L.bmm(a[None], a[None]),
    "mv": lambda L, a: L.mv(a, a[0]),
    "dot": lambda L, a: L.dot(a[0], a[1]),
    "matmul_batched": lambda L, a: a.expand(2, 3, 3) @ a,
    "addmm_truncated_scalars": lambda L, a: L.addmm(a, a, a, beta=2.5, alpha=1.5),
    "addmv": lambda L, a: L.addmv(a[0], a, a[1], alpha=2),
    "einsum": lambda L, a: L.einsum("ij,jk->ik", a, a),
    "tensordot": lambda L, a: L.tensordot(a, a, dims=1),
    "kron": lambda L, a: L.kron(a[0], a),
    "outer_promotes": lambda L, a: L.outer(a[0], a[1].float()),
    "trace_int64": lambda L, a: L.trace(a.int()),
    "trace_uint8": lambda L, a: L.trace(a.abs().byte()),
    "diag": lambda L, a: L.diag(a, 1),
    "diagonal": lambda L, a: a.diagonal(),
    "diag_embed": lambda L, a: L.diag_embed(a),
    "tril": lambda L, a: L.tril(a, -1),
    "triu_bool": lambda L, a: L.triu(a > 0),
    "matrix_power": lambda L, a: L.linalg.matrix_power(a, 3),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(INTEGER))
def test_integer_inputs(name):
    values = np.arange(-4, 5).reshape(3, 3)
    e = INTEGER[name](ember, ember.tensor(values))
    t = INTEGER[name](torch, torch.tensor(values))
    assert repr(e) == repr(t)


# --------------------------------------------------------------------------- bad input

BAD = {
    "mm_1d": lambda L: L.mm(L.ones(3), L.ones(3, 3)),
    "mm_mat2_1d": lambda L: L.mm(L.ones(3, 3), L.ones(3)),
    "mm_shapes": lambda L: L.mm(L.ones(2, 3), L.ones(2, 3)),
    "mm_dtype": lambda L: L.mm(L.ones(2, 2), L.ones(2, 2, dtype=L.float64)),
    "mm_dtype_long": lambda L: L.mm(L.ones(2, 2), L.ones(2, 2, dtype=L.long)),
    "matmul_dtype": lambda L: L.ones(2, 2) @ L.ones(2, 2, dtype=L.float64),
    "matmul_dot_dtype": lambda L: L.ones(2) @ L.ones(2, dtype=L.float64),
    "matmul_mv_dtype": lambda L: L.ones(2, 2) @ L.ones(2, dtype=L.float64),
    "matmul_batched_dtype": lambda L: L.ones(3) @ L.ones(2, 3, 3, dtype=L.float64),
    "matmul_batched_shapes": lambda L: L.ones(2, 2, 3) @ L.ones(2, 4, 5),
    "matmul_fold_shapes": lambda L: L.ones(2, 2, 3) @ L.ones(4, 5),
    "matmul_fold_vector": lambda L: L.ones(2, 2, 3) @ L.ones(4),
    "matmul_vector_batch": lambda L: L.ones(3) @ L.ones(2, 4, 5),
    "matmul_batch_broadcast": lambda L: L.ones(2, 2, 3) @ L.ones(3, 3, 5),
    "bmm_2d": lambda L: L.bmm(L.ones(2, 3), L.ones(2, 3, 4)),
    "bmm_2d_batch2": lambda L: L.bmm(L.ones(2, 2, 3), L.ones(3, 4)),
    "bmm_batch": lambda L: L.bmm(L.ones(2, 2, 3), L.ones(3, 3, 4)),
    "bmm_inner": lambda L: L.bmm(L.ones(2, 2, 3), L.ones(2, 4, 4)),
    "bmm_dtype": lambda L: L.bmm(L.ones(2, 2, 3), L.ones(2, 3, 4, dtype=L.float64)),
    "mv_shape": lambda L: L.mv(L.ones(2, 3), L.ones(4)),
    "mv_dims": lambda L: L.mv(L.ones(3), L.ones(3)),
    "mv_vec_2d": lambda L: L.mv(L.ones(2, 3), L.ones(3, 1)),
    "mv_dtype": lambda L: L.mv(L.ones(2, 3), L.ones(3, dtype=L.float64)),
    "dot_dims": lambda L: L.dot(L.ones(2, 3), L.ones(3)),
    "dot_size": lambda L: L.dot(L.ones(3), L.ones(4)),
    "dot_dtype": lambda L: L.dot(L.ones(3), L.ones(3, dtype=L.float64)),
    "vdot_dims": lambda L: L.vdot(L.ones(3), L.ones(3, 1)),
    "vdot_size": lambda L: L.vdot(L.ones(3), L.ones(2)),
    "outer_dims": lambda L: L.outer(L.ones(2, 3), L.ones(3)),
    "outer_dims2": lambda L: L.outer(L.ones(3), L.ones(2, 3)),
    "outer_0d": lambda L: L.outer(L.tensor(1.0), L.ones(3)),
    "addmm_shapes": lambda L: L.addmm(L.ones(2, 2), L.ones(2, 3), L.ones(4, 2)),
    "addmm_input": lambda L: L.addmm(L.ones(3, 3), L.ones(2, 3), L.ones(3, 2)),
    "addmm_input_3d": lambda L: L.addmm(L.ones(1, 2, 2), L.ones(2, 3), L.ones(3, 2)),
    "addmm_mat1_1d": lambda L: L.addmm(L.ones(2), L.ones(3), L.ones(3, 2)),
    "addmm_mat2_1d": lambda L: L.addmm(L.ones(2, 2), L.ones(2, 3), L.ones(3)),
    "addmm_dtype_mats": lambda L: L.addmm(L.ones(2, 2), L.ones(2, 3, dtype=L.float64),
                                          L.ones(3, 2)),
    "addmm_dtype_input": lambda L: L.addmm(L.ones(2, 2, dtype=L.float64), L.ones(2, 3),
                                           L.ones(3, 2)),
    "addmm_inplace_shape": lambda L: L.ones(2).addmm_(L.ones(2, 3), L.ones(3, 2)),
    "linear_0d": lambda L: L.nn.functional.linear(L.tensor(1.0), L.ones(2, 2)),
    "linear_0d_weight": lambda L: L.nn.functional.linear(L.ones(2), L.tensor(1.0)),
    "linear_vector_weight_bias": lambda L: L.nn.functional.linear(L.ones(3, 5), L.ones(5),
                                                                  L.ones(1)),
    "linear_bias_3d": lambda L: L.nn.functional.linear(L.ones(2, 3, 5), L.ones(4, 5),
                                                       L.ones(1, 1, 4)),
    "linear_bias_add_": lambda L: L.nn.functional.linear(L.ones(5), L.ones(4, 5),
                                                         L.ones(3, 4)),
    "linear_shapes": lambda L: L.nn.functional.linear(L.ones(2, 3, 5), L.ones(4, 3), L.ones(4)),
    "linear_dtype": lambda L: L.nn.functional.linear(L.ones(2, 5), L.ones(4, 5),
                                                     L.ones(4, dtype=L.float64)),
    "addbmm_2d": lambda L: L.addbmm(L.ones(3, 5), L.ones(3, 4), L.ones(2, 4, 5)),
    "addbmm_shapes": lambda L: L.addbmm(L.ones(3, 5), L.ones(2, 3, 4), L.ones(2, 3, 5)),
    "addbmm_batches": lambda L: L.addbmm(L.ones(3, 5), L.ones(2, 3, 4), L.ones(3, 4, 5)),
    "addbmm_input": lambda L: L.addbmm(L.ones(2, 5), L.ones(2, 3, 4), L.ones(2, 4, 5)),
    "addbmm_dtype": lambda L: L.addbmm(L.ones(3, 5, dtype=L.float64), L.ones(2, 3, 4),
                                       L.ones(2, 4, 5)),
    "addbmm_dtype2": lambda L: L.addbmm(L.ones(3, 5), L.ones(2, 3, 4),
                                        L.ones(2, 4, 5, dtype=L.float64)),
    "cdist_1d": lambda L: L.cdist(L.ones(3), L.ones(2, 3)),
    "cdist_1d_x2": lambda L: L.cdist(L.ones(2, 3), L.ones(3)),
    "cdist_columns": lambda L: L.cdist(L.ones(3, 4), L.ones(2, 3)),
    "cdist_negative_p": lambda L: L.cdist(L.ones(3, 4), L.ones(2, 4), -1),
    "cdist_long": lambda L: L.cdist(L.ones(3, 4, dtype=L.long), L.ones(2, 4, dtype=L.long)),
    "cdist_dtypes": lambda L: L.cdist(L.ones(3, 4), L.ones(2, 4, dtype=L.float64)),
    "cdist_batch": lambda L: L.cdist(L.ones(2, 3, 4), L.ones(3, 2, 4)),
    "cdist_mode": lambda L: L.cdist(L.ones(3, 4), L.ones(2, 4), compute_mode="foo"),
    "addmv_shapes": lambda L: L.addmv(L.ones(2), L.ones(2, 3), L.ones(4)),
    "addmv_input": lambda L: L.addmv(L.ones(3), L.ones(2, 3), L.ones(3)),
    "addmv_input_2d": lambda L: L.addmv(L.ones(2, 2), L.ones(2, 3), L.ones(3)),
    "addmv_dtype": lambda L: L.addmv(L.ones(2), L.ones(2, 3), L.ones(3, dtype=L.float64)),
    "addmv_inplace_shape": lambda L: L.ones(1).addmv_(L.ones(3, 3), L.ones(3)),
    "baddbmm_shapes": lambda L: L.baddbmm(L.ones(2, 2, 2), L.ones(2, 2, 3), L.ones(2, 4, 2)),
    "baddbmm_input": lambda L: L.baddbmm(L.ones(3, 2, 2), L.ones(2, 2, 3), L.ones(2, 3, 2)),
    "baddbmm_2d": lambda L: L.baddbmm(L.ones(2, 2), L.ones(2, 3), L.ones(3, 2)),
    "baddbmm_dtype_input": lambda L: L.baddbmm(L.ones(2, 2, 2, dtype=L.float64),
                                               L.ones(2, 2, 3), L.ones(2, 3, 2)),
    "baddbmm_dtype_batch2": lambda L: L.baddbmm(L.ones(2, 2, 2), L.ones(2, 2, 3),
                                                L.ones(2, 3, 2, dtype=L.float64)),
    "baddbmm_inplace_shape": lambda L: L.ones(2, 1, 1).baddbmm_(L.ones(2, 2, 3),
                                                                L.ones(2, 3, 2)),
    "einsum_no_operand": lambda L: L.einsum("i"),
    "einsum_fewer": lambda L: L.einsum("ij,jk", L.ones(2, 3)),
    "einsum_more": lambda L: L.einsum("ij", L.ones(2, 3), L.ones(3)),
    "einsum_ndim": lambda L: L.einsum("ijk", L.ones(2, 3)),
    "einsum_ndim_ellipsis": lambda L: L.einsum("ijk...", L.ones(2, 3)),
    "einsum_sizes": lambda L: L.einsum("ij,jk", L.ones(2, 3), L.ones(4, 5)),
    "einsum_output_unknown": lambda L: L.einsum("ij->k", L.ones(2, 3)),
    "einsum_output_twice": lambda L: L.einsum("ij->ii", L.ones(2, 3)),
    "einsum_bad_char": lambda L: L.einsum("i1", L.ones(2, 3)),
    "einsum_bad_char_output": lambda L: L.einsum("ij->i1", L.ones(2, 3)),
    "einsum_repeated_sizes": lambda L: L.einsum("ii", L.ones(2, 3)),
    "einsum_lone_dot": lambda L: L.einsum("i.j", L.ones(2, 3)),
    "einsum_two_ellipses": lambda L: L.einsum("...i...", L.ones(2, 3)),
    "einsum_output_dot": lambda L: L.einsum("ij->.i", L.ones(2, 3)),
    "einsum_ellipsis_sizes": lambda L: L.einsum("...i,...i", L.ones(2, 3), L.ones(4, 3)),
    "einsum_dtype": lambda L: L.einsum("i,i", L.ones(2), L.ones(2, dtype=L.float64)),
    "einsum_sublist_range": lambda L: L.einsum(L.ones(2), [60]),
    "tensordot_lengths": lambda L: L.tensordot(L.ones(2, 3), L.ones(3, 2), dims=([0, 1], [0])),
    "tensordot_sizes": lambda L: L.tensordot(L.ones(2, 3), L.ones(4, 2), dims=([1], [0])),
    "tensordot_negative": lambda L: L.tensordot(L.ones(2, 3), L.ones(3, 2), dims=-1),
    "tensordot_too_many": lambda L: L.tensordot(L.ones(2, 3), L.ones(3, 2), dims=3),
    "tensordot_dtype": lambda L: L.tensordot(L.ones(2, 3), L.ones(3, 2, dtype=L.float64)),
    "tensordot_dim_range": lambda L: L.tensordot(L.ones(2, 3), L.ones(3, 2), dims=([5], [0])),
    "tensordot_repeated": lambda L: L.tensordot(L.ones(2, 2), L.ones(2, 2),
                                                dims=([0, 0], [0, 1])),
    "trace_1d": lambda L: L.trace(L.ones(3)),
    "trace_3d": lambda L: L.ones(3, 3, 3).trace(),
    "trace_bool": lambda L: L.trace(L.ones(3, 3, dtype=L.bool)),
    "diag_3d": lambda L: L.diag(L.ones(2, 2, 2)),
    "diag_0d": lambda L: L.diag(L.tensor(1.0)),
    "diagonal_same_dims": lambda L: L.diagonal(L.ones(2, 3), 0, 0, 0),
    "diagonal_dim_range": lambda L: L.ones(2, 3).diagonal(0, 0, 2),
    "diagonal_1d": lambda L: L.diagonal(L.ones(3)),
    "diag_embed_same_dims": lambda L: L.diag_embed(L.ones(2, 3), 0, 1, -2),
    "diag_embed_dim_range": lambda L: L.diag_embed(L.ones(2, 3), 0, 0, 3),
    "tril_1d": lambda L: L.tril(L.ones(3)),
    "triu_0d": lambda L: L.triu(L.tensor(1.0)),
    "tril_inplace_1d": lambda L: L.ones(3).tril_(),
    "inv_nonsquare": lambda L: L.linalg.inv(L.ones(2, 3)),
    "inv_1d": lambda L: L.linalg.inv(L.ones(3)),
    "inv_singular": lambda L: L.linalg.inv(L.tensor([[1.0, 2.0], [2.0, 4.0]])),
    # (exactly singular: [[1, 2, 3], [4, 5, 6], [7, 8, 9]] is so only up to rounding, and
    # whether LAPACK's float32 LU meets a zero pivot there depends on the build)
    "inv_singular_3": lambda L: L.linalg.inv(L.tensor([[1.0, 2, 3], [2, 4, 6], [1, 1, 1]])),
    "inv_singular_pivoted": lambda L: L.linalg.inv(L.tensor([[0.0, 0.0], [1.0, 1.0]])),
    "inv_singular_batch": lambda L: L.linalg.inv(L.stack([L.eye(2), L.zeros(2, 2)])),
    "inv_int": lambda L: L.linalg.inv(L.ones(2, 2, dtype=L.long)),
    "inv_int_nonsquare": lambda L: L.linalg.inv(L.ones(2, 3, dtype=L.long)),
    "inv_half": lambda L: L.linalg.inv(L.ones(2, 2, dtype=L.float16)),
    "inverse_singular": lambda L: L.zeros(3, 3).inverse(),
    "det_nonsquare": lambda L: L.linalg.det(L.ones(2, 3)),
    "det_1d": lambda L: L.det(L.ones(3)),
    "det_int": lambda L: L.linalg.det(L.ones(2, 2, dtype=L.long)),
    "slogdet_nonsquare": lambda L: L.linalg.slogdet(L.ones(2, 3)),
    "slogdet_int": lambda L: L.slogdet(L.ones(2, 2, dtype=L.long)),
    "logdet_1d": lambda L: L.logdet(L.ones(2)),
    "logdet_int": lambda L: L.logdet(L.ones(2, 2, dtype=L.long)),
    "solve_shapes": lambda L: L.linalg.solve(L.ones(3, 3), L.ones(4, 2)),
    "solve_vector_shape": lambda L: L.linalg.solve(L.ones(3, 3), L.ones(4)),
    "solve_batch_of_rows": lambda L: L.linalg.solve(L.eye(3).expand(2, 3, 3), L.ones(4, 3)),
    "solve_right_shapes": lambda L: L.linalg.solve(L.eye(3), L.ones(3, 2), left=False),
    "solve_right_vector": lambda L: L.linalg.solve(L.eye(3), L.ones(3), left=False),
    "solve_singular": lambda L: L.linalg.solve(L.ones(3, 3), L.ones(3, 2)),
    "solve_singular_batch": lambda L: L.linalg.solve(L.stack([L.eye(3), L.zeros(3, 3)]),
                                                     L.ones(2, 3)),
    "solve_nonsquare": lambda L: L.linalg.solve(L.ones(2, 3), L.ones(2)),
    "solve_dtype": lambda L: L.linalg.solve(L.eye(3), L.ones(3, dtype=L.float64)),
    "solve_int": lambda L: L.linalg.solve(L.eye(3, dtype=L.long), L.ones(3, dtype=L.long)),
    "solve_0d": lambda L: L.linalg.solve(L.eye(3), L.tensor(1.0)),
    "solve_broadcast": lambda L: L.linalg.solve(L.eye(3).expand(2, 3, 3), L.ones(4, 3, 2)),
    "solve_triangular_1d": lambda L: L.linalg.solve_triangular(L.eye(3), L.ones(3), upper=True),
    "solve_triangular_shapes": lambda L: L.linalg.solve_triangular(L.eye(3), L.ones(4, 1),
                                                                   upper=True),
    "solve_triangular_right": lambda L: L.linalg.solve_triangular(L.eye(3), L.ones(4, 1),
                                                                  upper=False, left=False),
    "cholesky_not_pd": lambda L: L.linalg.cholesky(L.tensor([[1.0, 2], [2, 1]])),
    "cholesky_not_pd_batch": lambda L: L.linalg.cholesky(L.stack([L.eye(2), -L.eye(2)])),
    "cholesky_nonsquare": lambda L: L.linalg.cholesky(L.ones(2, 3)),
    "cholesky_1d": lambda L: L.linalg.cholesky(L.ones(3)),
    "cholesky_int": lambda L: L.linalg.cholesky(L.ones(2, 2, dtype=L.long)),
    "qr_mode": lambda L: L.linalg.qr(L.ones(2, 3), mode="full"),
    "qr_1d": lambda L: L.linalg.qr(L.ones(3)),
    "qr_int": lambda L: L.linalg.qr(L.ones(2, 2, dtype=L.long)),
    "qr_r_backward": lambda L: L.linalg.qr(L.ones(3, 2, requires_grad=True),
                                           mode="r")[1].sum().backward(),
    "qr_complete_backward": lambda L: L.linalg.qr(L.ones(3, 2, requires_grad=True),
                                                  mode="complete")[0].sum().backward(),
    "eigh_nonsquare": lambda L: L.linalg.eigh(L.ones(2, 3)),
    "eigh_uplo": lambda L: L.linalg.eigh(L.eye(2), UPLO="X"),
    "eigh_1d": lambda L: L.linalg.eigh(L.ones(2)),
    "eigvalsh_uplo": lambda L: L.linalg.eigvalsh(L.eye(2), UPLO="x"),
    "svd_1d": lambda L: L.linalg.svd(L.ones(2)),
    "svd_int": lambda L: L.linalg.svd(L.ones(2, 2, dtype=L.long)),
    "svd_driver": lambda L: L.linalg.svd(L.ones(2, 2), driver="gesvd"),
    "svdvals_1d": lambda L: L.linalg.svdvals(L.ones(2)),
    "pinv_1d": lambda L: L.linalg.pinv(L.ones(3)),
    "pinv_int": lambda L: L.linalg.pinv(L.ones(3, 3, dtype=L.long)),
    "matrix_norm_ord": lambda L: L.linalg.matrix_norm(L.ones(2, 2), 3),
    "matrix_norm_ord_float": lambda L: L.linalg.matrix_norm(L.ones(2, 2), 3.5),
    "matrix_norm_ord_str": lambda L: L.linalg.matrix_norm(L.ones(2, 2), "foo"),
    "matrix_norm_1d": lambda L: L.linalg.matrix_norm(L.ones(2)),
    "matrix_norm_same_dims": lambda L: L.linalg.matrix_norm(L.ones(2, 2), dim=(0, 0)),
    "matrix_norm_same_dims_wrapped": lambda L: L.linalg.matrix_norm(L.ones(2, 2), dim=(-1, 1)),
    "matrix_norm_one_dim": lambda L: L.linalg.matrix_norm(L.ones(2, 2), dim=(0,)),
    "matrix_norm_three_dims": lambda L: L.linalg.matrix_norm(L.ones(2, 2, 2), dim=(0, 1, 2)),
    "matrix_norm_dim_range": lambda L: L.linalg.matrix_norm(L.ones(2, 2), dim=(0, 2)),
    "matrix_norm_int": lambda L: L.linalg.matrix_norm(L.ones(2, 2, dtype=L.long)),
    "matrix_norm_dtype": lambda L: L.linalg.matrix_norm(L.ones(2, 2), dtype=L.long),
    "norm_dims": lambda L: L.linalg.norm(L.ones(2, 2, 2), dim=(0, 1, 2)),
    "norm_ord_3d": lambda L: L.linalg.norm(L.ones(2, 2, 2), 2),
    "norm_str_1d": lambda L: L.linalg.norm(L.ones(2), "fro"),
    "norm_str_3d": lambda L: L.linalg.norm(L.ones(2, 2, 2), "fro"),
    "norm_int": lambda L: L.linalg.norm(L.ones(2, 2, dtype=L.long)),
    "matrix_power_nonsquare": lambda L: L.linalg.matrix_power(L.ones(2, 3), 2),
    "matrix_power_1d": lambda L: L.matrix_power(L.ones(2), 2),
    "matrix_power_int_inverse": lambda L: L.linalg.matrix_power(L.ones(2, 2, dtype=L.long), -1),
    "matrix_power_singular": lambda L: L.linalg.matrix_power(L.ones(2, 2), -2),
    "matrix_power_float": lambda L: L.linalg.matrix_power(L.ones(2, 2), 2.5),
}


@needs_torch
@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_pytorchs_error(name):
    want = raised(BAD[name], torch, quiet=True)
    assert want is not None
    assert raised(BAD[name], ember, quiet=True) == want


def test_linalg_errors_are_runtime_errors():
    with pytest.raises(ember.linalg.LinAlgError) as info:
        ember.linalg.inv(ember.zeros(2, 2))
    assert isinstance(info.value, RuntimeError)
    assert type(info.value).__name__ == "_LinAlgError"


IN_PLACE_BAD = {
    "addmm_": lambda x: x.addmm_(ember.ones(2, 3), ember.ones(3, 2)),
    "addmm_shapes": lambda x: x.addmm_(ember.ones(1, 3), ember.ones(4, 1)),
    "addmv_": lambda x: x.addmv_(ember.ones(2, 3), ember.ones(3)),
    "baddbmm_": lambda x: x.baddbmm_(ember.ones(1, 1, 3), ember.ones(1, 3, 2)),
    "tril_": lambda x: x[0].tril_(),
    "dtype": lambda x: x.addmm_(ember.ones(1, 3, dtype=ember.float64), ember.ones(3, 3)),
}


@pytest.mark.parametrize("name", list(IN_PLACE_BAD))
def test_failed_in_place_calls_leave_input_unchanged(name):
    x = ember.tensor([[1.0, 2.0, 3.0]])
    with pytest.raises((RuntimeError, IndexError)):
        IN_PLACE_BAD[name](x)
    assert x.tolist() == [[1.0, 2.0, 3.0]] and x._version == 0


# --------------------------------------------------------------------------- singular, tied


SINGULAR = [[[1.0, 2.0], [2.0, 4.0]], [[0.0, 0.0], [1.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]],
            [[1.0, 2, 3], [4, 5, 6], [7, 8, 9]], np.zeros((3, 3)).tolist(),
            [[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]]]


def _det_derivatives(lib, m):
    A = lib.tensor(m, dtype=lib.float64, requires_grad=True)
    det = lib.linalg.det(A)
    plain, = lib.autograd.grad(det.sum(), A)
    recorded, = lib.autograd.grad(lib.linalg.det(A).sum(), A, create_graph=True)
    second, = lib.autograd.grad(recorded.sum(), A)
    return repr(det.detach()), repr(plain), recorded.detach().numpy(), second.numpy()


@needs_torch
@pytest.mark.parametrize("m", SINGULAR, ids=range(len(SINGULAR)))
def test_det_at_singular_matrices_is_pytorchs(m):
    """Zero (PyTorch's LU with its zero pivots nudged; signed zeros included) in a plain
    backward; the adjugate, from an SVD, when the backward is recorded."""
    e, t = _det_derivatives(ember, m), _det_derivatives(torch, m)
    assert e[:2] == t[:2]
    np.testing.assert_allclose(e[2], t[2], rtol=1e-12, atol=1e-12)
    if np.isfinite(t[3]).all():  # at the zero matrix PyTorch's second derivative is 0/0
        np.testing.assert_allclose(e[3], t[3], rtol=1e-12, atol=1e-12)
    else:
        assert (e[3] == 0).all()


def _slogdet_derivative(lib, m):
    A = lib.tensor(m, dtype=lib.float64, requires_grad=True)
    sign, logabsdet = lib.linalg.slogdet(A)
    grad, = lib.autograd.grad(logabsdet.sum(), A)
    return repr(sign.detach()), repr(logabsdet.detach()), repr(grad)


@needs_torch
@pytest.mark.parametrize("m", SINGULAR, ids=range(len(SINGULAR)))
def test_slogdet_at_singular_matrices_is_pytorchs(m):
    """No derivative exists there; the infinities and NaNs are those of PyTorch's LU solve."""
    assert _slogdet_derivative(ember, m) == _slogdet_derivative(torch, m)


@needs_torch
@pytest.mark.parametrize("left", [True, False])
def test_solve_triangular_with_a_zero_pivot_is_pytorchs(left):
    """No error, as in LAPACK's ``trsm``: the infinities and NaNs of dividing by zero."""
    def run(lib):
        T = lib.tensor([[1.0, 2, 3], [0, 0, 1], [0, 0, 2]])
        B = lib.tensor([[1.0, 0], [1, 1], [2, 0]])
        return [repr(lib.linalg.solve_triangular(T, B if left else B.mT, upper=True, left=left)),
                repr(lib.linalg.solve_triangular(T.mT, B if left else B.mT, upper=False,
                                                 left=left))]
    assert run(ember) == run(torch)


TIED = {
    "svdvals_repeated": (lambda L, a: L.linalg.svdvals(a), [[2.0, 0, 0], [0, 2, 0], [0, 0, 1]]),
    "eigvalsh_repeated": (lambda L, a: L.linalg.eigvalsh(a), [[1.0, 0, 0], [0, 1, 0], [0, 0, 3]]),
    "matrix_norm_2_tie": (lambda L, a: L.linalg.matrix_norm(a, 2), [[2.0, 0], [0, -2]]),
    "matrix_norm_-2_tie": (lambda L, a: L.linalg.matrix_norm(a, -2), [[2.0, 0], [0, -2]]),
    "matrix_norm_1_tie": (lambda L, a: L.linalg.matrix_norm(a, 1), [[1.0, -2], [3, 2]]),
    "matrix_norm_inf_tie": (lambda L, a: L.linalg.matrix_norm(a, float("inf")),
                            [[1.0, -2], [3, 0]]),
    "matrix_norm_1_zero": (lambda L, a: L.linalg.matrix_norm(a, 1), [[0.0, 1], [2, 0]]),
    "matrix_norm_fro_zero": (lambda L, a: L.linalg.matrix_norm(a), [[0.0, 0], [0, 0]]),
    "norm_zero": (lambda L, a: L.linalg.norm(a), [[0.0, 0], [0, 0]]),
    "nuc_identity": (lambda L, a: L.linalg.matrix_norm(a, "nuc"), [[1.0, 0], [0, 1]]),
}


@needs_torch
@pytest.mark.parametrize("name", list(TIED))
def test_subgradients_at_ties_and_kinks_are_pytorchs(name):
    fn, m = TIED[name]

    def run(lib):
        a = lib.tensor(m, dtype=lib.float64, requires_grad=True)
        out = fn(lib, a)
        grad, = lib.autograd.grad(out.sum(), a)
        return out.detach().numpy(), grad.numpy()
    (e_out, e_grad), (t_out, t_grad) = run(ember), run(torch)
    np.testing.assert_allclose(e_out, t_out, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(e_grad, t_grad, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- results, views


@needs_torch
@pytest.mark.parametrize("call", [
    lambda L, a: L.linalg.slogdet(a), lambda L, a: L.slogdet(a), lambda L, a: L.linalg.qr(a),
    lambda L, a: L.linalg.qr(a, mode="r"), lambda L, a: L.linalg.eigh(L.diag(L.diagonal(a))),
    lambda L, a: L.linalg.svd(L.diag(L.diagonal(a))),
], ids=["slogdet", "torch.slogdet", "qr", "qr_r", "eigh", "svd"])
def test_named_results_print_as_pytorchs(call):
    def run(lib):
        return call(lib, lib.tensor([[3.0, 1.0], [1.0, 2.0]], requires_grad=True))
    e, t = run(ember), run(torch)
    assert repr(e) == repr(t) and str(e) == str(t)
    assert type(e).__name__ == type(t).__name__ and len(e) == len(t)
    for field in ("sign", "logabsdet", "Q", "R", "eigenvalues", "eigenvectors", "U", "S", "Vh"):
        assert hasattr(e, field) == hasattr(t, field)


def test_diagonal_is_a_view():
    x = ember.zeros(3, 3)
    d = x.diagonal()
    d.add_(1)
    assert x.tolist() == ember.eye(3).tolist()
    assert x._version == d._version == 1
    assert x.diagonal(1)._base is x


def test_ember_linalg_namespace():
    import ember.linalg as la
    assert la.inv.__name__ == "linalg_inv" and ember.linalg is la
    assert la.vector_norm(ember.tensor([3.0, 4.0])).item() == 5.0
    assert la.diagonal(ember.eye(3) * 2, offset=0).tolist() == [2.0, 2.0, 2.0]


@pytest.mark.slow
@needs_torch
def test_torch_linalg_under_ember_run(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import torch
        import torch.linalg
        from torch.linalg import det
        A = torch.tensor([[4.0, 1.0], [1.0, 3.0]], requires_grad=True)
        print(torch.linalg.inv(A), det(A))
        print(torch.linalg.slogdet(A))
        torch.linalg.matrix_norm(A).backward()
        print(A.grad)
        print(torch.einsum("ij,jk->ik", A, A))
    """))
    def run(*cmd):
        return subprocess.run([sys.executable, *cmd, str(script)], capture_output=True,
                              text=True, check=True).stdout
    assert run("-m", "ember", "run") == run()


# --------------------------------------------------------------------------- F.linear

# (input shape, weight shape, bias shape, input contiguous): the graph PyTorch records differs.
LINEAR = {
    "vector": ((5,), (4, 5), None, True),  # mm of the unsqueezed input, squeezed back
    "vector_bias": ((5,), (4, 5), (4,), True),  # view to a matrix, addmm, view back
    "matrix": ((3, 5), (4, 5), None, True),  # mm
    "matrix_bias": ((3, 5), (4, 5), (4,), True),  # addmm
    "matrix_bias_2d": ((3, 5), (4, 5), (3, 4), True),  # addmm, any bias that broadcasts
    "batch": ((2, 3, 5), (4, 5), None, True),  # matmul folded into mm, viewed back
    "batch_bias": ((2, 3, 5), (4, 5), (4,), True),  # view, addmm, view
    "batch_bias_row": ((2, 1, 3, 5), (4, 5), (1, 4), True),  # a vector up to dims of size 1
    "batch_bias_strided": ((2, 3, 5), (4, 5), (4,), False),  # matmul, then add_ in place
    "batch_bias_scalar": ((2, 3, 5), (4, 5), (), True),  # not a vector: matmul, add_
    "batch_bias_2d": ((2, 3, 5), (4, 5), (3, 4), True),
    "vector_weight": ((3, 5), (5,), None, True),  # mv
    "vectors_bias": ((5,), (5,), (), True),  # dot, add_
}


def _graph_names(t):
    """The grad_fn class names of ``t``'s graph, depth first."""
    names, stack = [], [t.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is not None:
            names.append(type(fn).__name__)
            stack += [f for f, _ in fn.next_functions]
    return names


def _linear_inputs(L, case, dtype):
    x_shape, w_shape, b_shape, contiguous = case
    rng = np.random.default_rng(0)
    shapes = [x_shape[::-1] if not contiguous else x_shape, w_shape] + (
        [b_shape] if b_shape is not None else [])
    xs = [L.tensor(rng.uniform(-1, 1, s), dtype=dtype, requires_grad=True) for s in shapes]
    x = xs[0] if contiguous else xs[0].permute(*reversed(range(len(x_shape))))
    return xs, [x] + xs[1:]


def _linear_run(L, case):
    leaves, args = _linear_inputs(L, case, L.float32)
    y = L.nn.functional.linear(*args)
    v = L.tensor(np.random.default_rng(1).uniform(-1, 1, tuple(y.shape)), dtype=L.float32)
    grads = L.autograd.grad(y, leaves, v)
    return (_graph_names(y), tuple(y.shape), y.stride(), [g.stride() for g in grads],
            y.detach().numpy(), [g.numpy() for g in grads])


@pytest.mark.parametrize("name", list(LINEAR))
def test_linear_records_pytorchs_graph(torch, name):
    """``F.linear``'s grad_fn names (the whole graph), output and gradient strides, values and
    vector-Jacobian products against PyTorch's, for inputs of 1 to 4 dims, with and without
    bias. The weight's gradient is row-major like the weight (no transposing copy)."""
    e, t = _linear_run(ember, LINEAR[name]), _linear_run(torch, LINEAR[name])
    assert e[:4] == t[:4]
    for a, b in zip([e[4], *e[5]], [t[4], *t[5]]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


PRODUCT_LAYOUTS = {
    "mm_mat1_transposed": lambda L, a, b, c: L.mm(a.t(), b),
    "mm_mat2_transposed": lambda L, a, b, c: L.mm(a, b.t()),
    "mm_both_transposed": lambda L, a, b, c: a.t().mm(b.t()),
    "addmm_transposed": lambda L, a, b, c: L.addmm(c, a.t(), b.t(), alpha=2),
    "matmul_transposed": lambda L, a, b, c: a.t() @ b,
}


@pytest.mark.parametrize("name", list(PRODUCT_LAYOUTS))
def test_product_gradients_keep_operand_layouts(torch, name):
    """A matrix stored column by column (a transposed view) gets its gradient computed in that
    layout, as PyTorch's ``mm_mat1_backward``/``mm_mat2_backward`` do: same strides, values."""
    def run(L):
        rng = np.random.default_rng(0)
        xs = [L.tensor(rng.uniform(-1, 1, (3, 3)), requires_grad=True) for _ in range(3)]
        y = PRODUCT_LAYOUTS[name](L, *xs)
        grads = L.autograd.grad(y, xs, L.tensor(rng.uniform(-1, 1, (3, 3))), allow_unused=True)
        return [g.stride() for g in grads if g is not None], [g.numpy() for g in grads
                                                              if g is not None]
    (e_strides, e_grads), (t_strides, t_grads) = run(ember), run(torch)
    assert e_strides == t_strides
    for a, b in zip(e_grads, t_grads):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("name", list(LINEAR))
def test_linear_gradcheck(name):
    leaves, args = _linear_inputs(ember, LINEAR[name], ember.float64)
    perm = args[0].shape != leaves[0].shape

    def f(x, *rest):
        return ember.nn.functional.linear(x.permute(*reversed(range(x.ndim))) if perm else x,
                                          *rest)
    assert gradcheck(f, leaves)
    assert gradgradcheck(f, leaves)


# --------------------------------------------------------------------------- CuPy

CUDA = {
    "inv": (lambda L, a: L.linalg.inv(_well(L, a)), [(2, 3, 3)]),
    "det": (lambda L, a: L.linalg.det(a), [(2, 3, 3)]),
    "slogdet": (lambda L, a: L.linalg.slogdet(a)[1], [(2, 3, 3)]),
    "solve": (lambda L, a, b: L.linalg.solve(_well(L, a), b), [(2, 3, 3), (2, 3)]),
    "solve_triangular": (lambda L, a, b: L.linalg.solve_triangular(_well(L, a), b, upper=True),
                         [(3, 3), (3, 2)]),
    "cholesky": (lambda L, a: L.linalg.cholesky(_spd(L, a)), [(2, 3, 3)]),
    "qr": (lambda L, a: sum(t.sum() for t in L.linalg.qr(a)), [(3, 4)]),
    "eigh": (lambda L, a: (lambda r: r[0].sum() + r[1].abs().sum())(L.linalg.eigh(_sym(L, a))),
             [(2, 3, 3)]),
    "svd": (lambda L, a: sum(t.abs().sum() for t in L.linalg.svd(a, full_matrices=False)),
            [(4, 3)]),
    "pinv": (lambda L, a: L.linalg.pinv(a), [(3, 4)]),
    "norms": (lambda L, a: L.linalg.matrix_norm(a, "nuc") + L.linalg.matrix_norm(a, 1),
              [(3, 4)]),
    "matrix_power": (lambda L, a: L.linalg.matrix_power(a, 5) + L.linalg.matrix_power(a, 0),
                     [(3, 3)]),
    "einsum": (lambda L, a, b: L.einsum("bij,bjk->bik", a, b), [(2, 2, 3), (2, 3, 4)]),
    "diagonals": (lambda L, a: (L.diag(a, 1) ** 2).sum() + L.trace(a * a) +
                  (L.tril(a).diagonal() ** 3).sum(), [(3, 3)]),
    "diag_embed": (lambda L, a: L.diag_embed(a, 1, 0, 2) ** 2, [(2, 3)]),
    "addmm": (lambda L, a, b, c: L.addmm(a, b, c, beta=0.5, alpha=2), [(2, 4), (2, 3), (3, 4)]),
}


@pytest.mark.skipif(not ember.cuda.is_available(), reason="no CuPy GPU backend")
@pytest.mark.parametrize("name", list(CUDA))
def test_cuda_matches_cpu(name):
    """Values, gradients and second derivatives on the GPU, and that they stay there."""
    fn, shapes = CUDA[name]
    rng = np.random.default_rng(0)
    values = [rng.uniform(-2, 2, s) for s in shapes]
    results = []
    for dev in ("cpu", "cuda"):
        xs = [ember.tensor(v, dtype=ember.float64, device=dev, requires_grad=True)
              for v in values]
        out = fn(ember, *xs)
        plain = ember.autograd.grad(out.sum(), xs, retain_graph=True)
        first = ember.autograd.grad(out.sum(), xs, create_graph=True)
        curved = [g for g in first if g.requires_grad]
        second = ember.autograd.grad(sum((g * g).sum() for g in curved), xs,
                                     allow_unused=True) if curved else ()
        tensors = [out, *plain, *first, *(g for g in second if g is not None)]
        assert all(t.device.type == dev for t in tensors)
        results.append([t.detach().cpu().numpy() for t in tensors])
    for c, g in zip(*results):
        np.testing.assert_allclose(c, g, rtol=1e-8, atol=1e-10)
