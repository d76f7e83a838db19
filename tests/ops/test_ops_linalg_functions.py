"""``torch.linalg``'s ``matrix_exp``, ``lstsq``, ``vander``, ``cond``, ``tensorinv`` and
``tensorsolve`` against PyTorch: values, dtypes, grad_fns, gradients (finite differences,
second order, PyTorch's), and PyTorch's errors and messages."""
import numpy as np
import pytest

import ember

from ..conftest import to_np
from ..opspec import Spec, op_tests
from ..oracle import same_error
from .test_ops_linalg import _well, needs_torch, torch

MATRIX = [((3, 3),), ((2, 3, 3),)]
INF = float("inf")

SPECS = [
    Spec("matrix_exp", lambda L, a: L.linalg.matrix_exp(a), MATRIX),
    Spec("matrix_exp_scaled", lambda L, a: L.matrix_exp(8 * a), [((3, 3),)], tol=10),
    # PyTorch's approximant is the less accurate one at small norms: 6.5e-12 off the exact
    # value here, ember's 2e-16 (test_matrix_exp_is_exact_at_small_norms)
    Spec("matrix_exp_method", lambda L, a: (a * 0.01).matrix_exp(), [((2, 2),)], tol=100),
    Spec("vander", lambda L, x: L.linalg.vander(x), [((3,),), ((2, 4),)]),
    Spec("vander_N", lambda L, x: L.linalg.vander(x, N=5), [((3,),), ((),)]),
    Spec("cond", lambda L, a: L.linalg.cond(a), [((3, 3),), ((2, 3, 4),)], distinct=True),
    Spec("cond_-2", lambda L, a: L.linalg.cond(a, -2), [((4, 3),)], distinct=True),
    Spec("cond_nuc", lambda L, a: L.linalg.cond(_well(L, a), "nuc"), MATRIX, distinct=True),
    Spec("tensorinv", lambda L, a: L.linalg.tensorinv(_well(L, a.reshape(6, 6)).reshape(
        2, 3, 6), ind=2), [((6, 6),)]),
    Spec("tensorinv_ind1", lambda L, a: L.linalg.tensorinv(_well(L, a).reshape(4, 2, 2), ind=1),
         [((4, 4),)]),
    Spec("tensorsolve", lambda L, a, b: L.linalg.tensorsolve(_well(L, a).reshape(2, 3, 6), b),
         [((6, 6), (2, 3))]),
    Spec("tensorsolve_dims", lambda L, a, b: L.linalg.tensorsolve(
        _well(L, a).reshape(6, 2, 3).permute(1, 0, 2), b, dims=(1,)), [((6, 6), (2, 3))]),
    # (tol: float32 roundings of two methods, ember's SVD and LAPACK's gelsy QR)
    Spec("lstsq", lambda L, a, b: L.linalg.lstsq(a, b)[:2], [((5, 3), (5, 2)), ((2, 4, 4),
                                                                                 (2, 4, 1))],
         tol=10),
    Spec("lstsq_wide", lambda L, a, b: L.linalg.lstsq(a, b).solution, [((2, 4), (2, 3))]),
    Spec("lstsq_gelsd", lambda L, a, b: L.linalg.lstsq(a, b, driver="gelsd")[:2],
         [((5, 3), (5, 2)), ((2, 5, 3), (2, 5))]),
    Spec("lstsq_gels", lambda L, a, b: L.linalg.lstsq(a, b, driver="gels")[:2],
         [((5, 3), (5, 2)), ((3, 5), (3, 1))]),
]
test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


def _pair(make, dtype="float64"):
    return [make(lib, getattr(lib, dtype)) for lib in (ember, torch)]


def _same(e, t, **tol):
    e, t = (tuple(e), tuple(t)) if isinstance(e, tuple) else ((e,), (t,))
    assert len(e) == len(t)
    for x, y in zip(e, t):
        assert tuple(x.shape) == tuple(y.shape) and str(x.dtype) == str(y.dtype)
        assert x.requires_grad == y.requires_grad
        np.testing.assert_allclose(to_np(x), to_np(y), **(tol or dict(rtol=1e-10, atol=1e-12)))


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("scale", [0.0, 1e-3, 0.1, 1.0, 5.0, 60.0])
def test_matrix_exp_matches_torch(scale, dtype):
    """Across the degrees of the approximant and the numbers of squarings; a batch whose
    matrices need different ones."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 4, 4)) * np.array([scale, scale / 50, scale * 2])[:, None, None]
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(a.shape) * scale
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-11, atol=1e-12)
    if dtype == "float32" and scale == 60.0:
        # PyTorch's float32 squarings lose digits (1.3e-5 off its float64 result; ember rounds
        # its float64 result once); the third matrix overflows float32: PyTorch's squarings
        # give NaN, ember's inf
        a = a[:2]
        tol = dict(rtol=5e-5, atol=1e-6)
        exact = torch.linalg.matrix_exp(torch.tensor(a)).numpy()
        np.testing.assert_allclose(ember.linalg.matrix_exp(ember.tensor(a, dtype=ember.float32)
                                                           ).numpy(), exact, rtol=1e-6)
    e, t = _pair(lambda L, dt: L.linalg.matrix_exp(L.tensor(a, dtype=dt)), dtype)
    _same(e, t, **tol)


def _exact_exp(a):
    """``exp(a)`` by its Taylor series in exact rational arithmetic (small ``a``)."""
    from fractions import Fraction
    n = a.shape[-1]
    A = [[Fraction(float(x)) for x in row] for row in a]
    term = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    total = [row[:] for row in term]
    for k in range(1, 30):
        term = [[sum(term[i][m] * A[m][j] for m in range(n)) / k for j in range(n)]
                for i in range(n)]
        total = [[total[i][j] + term[i][j] for j in range(n)] for i in range(n)]
    return np.array([[float(x) for x in row] for row in total])


@pytest.mark.parametrize("scale", [1e-6, 1e-2, 0.3, 1.0])
def test_matrix_exp_is_exact_at_small_norms(scale):
    a = np.random.default_rng(0).uniform(-2, 2, (3, 3)) * scale
    got = ember.linalg.matrix_exp(ember.tensor(a)).numpy()
    np.testing.assert_allclose(got, _exact_exp(a), rtol=1e-15, atol=1e-15)
    one = np.array([[-1.3]])  # 1 x 1: exp itself, in float32 too (PyTorch's is off by 3e-4)
    for dtype in (ember.float32, ember.float64):
        x = ember.tensor(one, dtype=dtype, requires_grad=True)
        ember.linalg.matrix_exp(x).backward(ember.ones(1, 1, dtype=dtype))
        np.testing.assert_allclose(x.grad.numpy(), np.exp(one).astype(x.grad.numpy().dtype),
                                   rtol=1e-7 if dtype == ember.float32 else 1e-15)


COND_ORDERS = ["fro", 1, -1, INF, -INF]


@pytest.mark.parametrize("p", COND_ORDERS)
def test_cond_inverse_orders_gradients(p):
    """``norm(A) * norm(A^{-1})``: gradcheck and gradgradcheck, and PyTorch's values and
    grad_fns. (Not spec rows: PyTorch 2.13's own backward of these fails, its ``masked_fill_``
    writes into the inverse that ``inv_ex``'s backward saved; the gradients are compared
    with PyTorch's of the same composition written out of place, below.)"""
    from ember.autograd import gradcheck, gradgradcheck
    a = ember.tensor(np.random.default_rng(2).uniform(-1, 1, (2, 3, 3)) + 4 * np.eye(3),
                     requires_grad=True)
    assert gradcheck(lambda a: ember.linalg.cond(a, p), (a,))
    assert gradgradcheck(lambda a: ember.linalg.cond(a, p), (a,))
    if torch is None:
        return
    for dtype in ("float32", "float64"):
        x = np.random.default_rng(3).uniform(-1, 1, (2, 3, 3)) + 4 * np.eye(3)
        e = ember.tensor(x, dtype=getattr(ember, dtype), requires_grad=True)
        t = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
        ce, ct = ember.linalg.cond(e, p), torch.linalg.cond(t, p)
        assert type(ce.grad_fn).__name__ == type(ct.grad_fn).__name__
        _same(ce, ct, **(dict(rtol=1e-5) if dtype == "float32" else {}))
        ce.sum().backward()
        (torch.linalg.matrix_norm(t, p) * torch.linalg.matrix_norm(torch.linalg.inv(t), p)
         ).sum().backward()
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(),
                                   rtol=1e-5 if dtype == "float32" else 1e-10)


@needs_torch
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((5, 3), (5,)),
                                    ((2, 5, 3), (2, 5)), ((2, 4, 4), (1, 4, 2))])
def test_lstsq_matches_torch(driver, shapes):
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal(s) for s in shapes)
    for dtype in ("float32", "float64"):
        tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else {}
        e, t = _pair(lambda L, dt: L.linalg.lstsq(L.tensor(a, dtype=dt, requires_grad=True),
                                                  L.tensor(b, dtype=dt), driver=driver), dtype)
        _same(e, t, **tol)


@needs_torch
def test_lstsq_rank_deficient_matches_torch():
    """The minimum-norm solution, the rank (``rcond``), no residuals."""
    a = np.array([[1., 2], [2, 4], [3, 6]])
    for driver in ("gelsy", "gelsd", "gelss"):
        for rcond in (None, 0.5):
            e, t = _pair(lambda L, dt: L.linalg.lstsq(L.tensor(a), L.ones(3, 1, dtype=dt),
                                                      rcond, driver=driver))
            _same(e, t, rtol=1e-10, atol=1e-10)


@needs_torch
def test_cond_at_singular_matches_torch():
    cases = [np.zeros((2, 2)), np.array([[1., 2], [2, 4]]), np.zeros((2, 3, 3)),
             np.stack([np.eye(2), [[1., 2], [2, 4]]])]
    for a in cases:
        for p in ("fro", "nuc", 1, -1, INF, -INF):
            e, t = _pair(lambda L, dt: L.linalg.cond(L.tensor(a), p))
            noise = np.isfinite(to_np(t)) & (to_np(t) > 1e15)
            if not noise.any():
                _same(e, t)
                continue
            # the smallest singular value is rounding noise: the condition number is ~1/eps
            # times a factor each LAPACK rounds its own way (MKL's, OpenBLAS's): both large
            assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
            assert np.all(to_np(e)[noise] > 1e15), (p, to_np(e))
            np.testing.assert_allclose(to_np(e)[~noise], to_np(t)[~noise], rtol=1e-10,
                                       atol=1e-12)


@needs_torch
def test_vander_integers_match_torch():
    for dtype in ("int64", "int8", "complex64"):
        e, t = _pair(lambda L, dt: L.linalg.vander(L.tensor([1, 2, 3], dtype=dt), N=4), dtype)
        _same(e, t)


ERRORS = [
    lambda L: L.linalg.matrix_exp(L.ones(2, 3)),
    lambda L: L.linalg.matrix_exp(L.ones(3)),
    lambda L: L.linalg.matrix_exp(L.ones(3, 3, dtype=L.int64)),
    lambda L: L.matrix_exp(L.ones(2, 3)),
    lambda L: L.linalg.vander(L.tensor(1.)),
    lambda L: L.linalg.vander(L.ones(3), N=1),
    lambda L: L.linalg.vander(L.ones(3), N=-1),
    lambda L: L.linalg.vander(L.tensor([True, False])),
    lambda L: L.linalg.cond(L.eye(3), p=3),
    lambda L: L.linalg.cond(L.eye(3), p="foo"),
    lambda L: L.linalg.cond(L.ones(2, 3), p="fro"),
    lambda L: L.linalg.cond(L.ones(2, 3), p=-INF),
    lambda L: L.linalg.cond(L.ones(3)),
    lambda L: L.linalg.cond(L.ones(3, 3, dtype=L.int64)),
    lambda L: L.linalg.tensorinv(L.ones(4, 4), ind=0),
    lambda L: L.linalg.tensorinv(L.ones(2, 3, 4), ind=1),
    lambda L: L.linalg.tensorinv(L.zeros(4, 2, 2), ind=1),
    lambda L: L.linalg.tensorsolve(L.ones(2, 3, 6), L.ones(3)),
    lambda L: L.linalg.tensorsolve(L.zeros(2, 2), L.ones(2)),
    lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(4, 1)),
    lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(4)),
    lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(3, 1), driver="foo"),
    lambda L: L.linalg.lstsq(L.ones(3), L.ones(3, 1)),
    lambda L: L.linalg.lstsq(L.ones(3, 2), L.ones(3, 1, dtype=L.float64)),
    lambda L: L.linalg.lstsq(L.ones(3, 2, dtype=L.int64), L.ones(3, 1, dtype=L.int64)),
    lambda L: L.linalg.lstsq(L.ones(3, 2), L.tensor(1.)),
]


@needs_torch
@pytest.mark.parametrize("make", ERRORS)
def test_errors_match_torch(make):
    same_error(make, torch)
