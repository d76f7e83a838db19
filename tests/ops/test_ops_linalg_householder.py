"""``torch.linalg.householder_product`` (``orgqr``) against PyTorch: values (real and
complex), grad_fns, gradients (finite differences, second order, PyTorch's), errors."""
import numpy as np
import pytest

import ember

from ..conftest import to_np
from ..opspec import Spec, op_tests
from ..oracle import same_error

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")

SPECS = [
    Spec("householder_product", lambda L, a, t: L.linalg.householder_product(a, t),
         [((4, 3), (2,)), ((3, 3), (3,)), ((2, 5, 2), (2, 2)), ((3, 2), (1,))],
         tol=5),  # (float32: roundings of the rank-1 updates in another order than LAPACK's)
    Spec("orgqr", lambda L, a, t: L.orgqr(a, t), [((4, 2), (2,))]),
    Spec("orgqr_method", lambda L, a, t: a.orgqr(t), [((3, 2), (1,))]),
]
test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_householder_product_of_geqrf_is_q(dtype):
    """The reflections of a QR factorization give its ``Q``, as in PyTorch."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 6, 4))
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(a.shape)
    A, tau = torch.geqrf(torch.tensor(a, dtype=getattr(torch, dtype)))
    t = torch.linalg.householder_product(A, tau)
    e = ember.linalg.householder_product(ember.tensor(A.numpy()), ember.tensor(tau.numpy()))
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
    tol = 1e-5 if dtype in ("float32", "complex64") else 1e-12
    np.testing.assert_allclose(to_np(e), to_np(t), rtol=tol, atol=tol)


ERRORS = [
    lambda L: L.linalg.householder_product(L.ones(3, 2), L.ones(3)),
    lambda L: L.linalg.householder_product(L.ones(2, 3), L.ones(2)),
    lambda L: L.linalg.householder_product(L.ones(3), L.ones(1)),
    lambda L: L.linalg.householder_product(L.ones(3, 2), L.ones(2, dtype=L.float64)),
    lambda L: L.linalg.householder_product(L.ones(2, 3, 2), L.ones(3, 2)),
    lambda L: L.linalg.householder_product(L.ones(3, 2), L.ones(1, 2)),
    lambda L: L.linalg.householder_product(L.ones(2, 3, 2), L.ones(2)),
]


@needs_torch
@pytest.mark.parametrize("make", ERRORS)
def test_errors_match_torch(make):
    same_error(make, torch)
