"""``torch.linalg``'s LU factors, solves with them, the ``_ex`` forms, and the functions built
on them, against PyTorch: values, dtypes, grad_fns, gradients (finite differences, second
order, PyTorch's), and PyTorch's errors and messages."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from ..conftest import to_np
from ..opspec import Spec, op_tests
from ..oracle import same_error
from .test_ops_linalg import _well, needs_torch, torch


def _spd(L, a):
    return a @ a.mT + a.shape[-1] * L.eye(a.shape[-1], dtype=a.dtype)


def _lu_solve(L, a, b, **kwargs):
    LU, pivots = L.linalg.lu_factor(a)
    return L.linalg.lu_solve(LU, pivots, b, **kwargs)


MATRIX = [((3, 3),), ((2, 3, 3),)]
RECTANGULAR = [((4, 3),), ((3, 4),), ((2, 5, 3),), ((1, 2, 4),)]

SPECS = [
    Spec("lu_factor", lambda L, a: L.linalg.lu_factor(a).LU, MATRIX + RECTANGULAR),
    Spec("lu_factor_ex", lambda L, a: L.linalg.lu_factor_ex(a)[:2], MATRIX),
    # (P, which has no gradient, is compared in test_lu_factors_match_torch)
    Spec("lu", lambda L, a: L.linalg.lu(a)[1:], MATRIX + RECTANGULAR),
    Spec("lu_solve", lambda L, a, b: _lu_solve(L, a, b),
         [((3, 3), (3, 2)), ((2, 3, 3), (3, 1)), ((2, 3, 3), (2, 3, 2))]),
    Spec("lu_solve_adjoint", lambda L, a, b: _lu_solve(L, a, b, adjoint=True),
         [((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 1))]),
    Spec("lu_solve_right", lambda L, a, b: _lu_solve(L, a, b, left=False),
         [((3, 3), (2, 3)), ((2, 3, 3), (1, 3))]),
    Spec("lu_solve_right_adjoint", lambda L, a, b: _lu_solve(L, a, b, left=False, adjoint=True),
         [((3, 3), (2, 3))]),
    Spec("cholesky_ex", lambda L, a: L.linalg.cholesky_ex(_spd(L, a)), MATRIX),
    Spec("cholesky_ex_upper", lambda L, a: L.linalg.cholesky_ex(_spd(L, a), upper=True).L,
         [((3, 3),)]),
    Spec("inv_ex", lambda L, a: L.linalg.inv_ex(_well(L, a)), MATRIX),
    Spec("solve_ex", lambda L, a, b: L.linalg.solve_ex(_well(L, a), b),
         [((3, 3), (3, 2)), ((2, 3, 3), (2, 3)), ((2, 3, 3), (1, 3, 2))]),
    Spec("solve_ex_right", lambda L, a, b: L.linalg.solve_ex(_well(L, a), b, left=False)[0],
         [((3, 3), (2, 3))]),
]
test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


def _both(make, dtype="float64"):
    return [make(lib, getattr(lib, dtype)) for lib in (ember, torch)]


def _same(e, t, **tol):
    e, t = (e, t) if isinstance(e, tuple) else ((e,), (t,))
    assert len(e) == len(t)
    for x, y in zip(e, t):
        assert tuple(x.shape) == tuple(y.shape) and str(x.dtype) == str(y.dtype)
        np.testing.assert_allclose(to_np(x), to_np(y), **(tol or dict(rtol=1e-10, atol=1e-12)))


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (5, 3), (3, 5), (40, 40), (2, 37, 23),
                                   (23, 37), (0, 3), (2, 0, 0), (1, 1)])
def test_lu_factors_match_torch(shape, dtype):
    """Pivots exactly, factors to rounding; large enough to cross the recursive blocks."""
    a = np.random.default_rng(sum(shape)).standard_normal(shape)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == "float32" else dict(rtol=1e-9, atol=1e-11)
    e, t = _both(lambda L, dt: L.linalg.lu_factor_ex(L.tensor(a, dtype=dt)), dtype)
    _same(tuple(e), tuple(t), **tol)
    e, t = _both(lambda L, dt: L.linalg.lu(L.tensor(a, dtype=dt)), dtype)
    _same(tuple(e), tuple(t), **tol)
    assert e.P.grad_fn is None and t.P.grad_fn is None


@needs_torch
def test_lu_singular_matches_torch():
    """Zero pivots: reported in ``info`` by ``lu_factor_ex``, raised by ``lu_factor``."""
    cases = [np.zeros((3, 3)), np.array([[1., 2, 3], [2, 4, 6], [1, 1, 1]]),
             np.array([[0., 1], [0, 2]]), np.stack([np.eye(3), np.zeros((3, 3))])]
    for a in cases:
        e, t = _both(lambda L, dt: L.linalg.lu_factor_ex(L.tensor(a, dtype=dt)))
        _same(tuple(e), tuple(t))
        got = []
        for lib in (ember, torch):
            with pytest.raises(RuntimeError) as err:
                lib.linalg.lu_factor(lib.tensor(a))
            got.append(str(err.value))
        assert got[0] == got[1]


@needs_torch
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [True, False])
def test_lu_solve_broadcasts_like_torch(left, adjoint):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 1, 4, 4)), rng.standard_normal((3, 4, 4))
    e, t = _both(lambda L, dt: _lu_solve(L, L.tensor(a), L.tensor(b), left=left,
                                          adjoint=adjoint))
    _same(e, t)


@pytest.mark.parametrize("left", [True, False])
def test_lu_solve_broadcast_gradients(left):
    """(Not a spec row: PyTorch 2.13's vmap of a broadcasting lu_solve disagrees with its own
    loop over samples, which ember follows.)"""
    rng = np.random.default_rng(4)
    a = ember.tensor(rng.standard_normal((3, 3)) + 4 * np.eye(3), requires_grad=True)
    b = ember.tensor(rng.standard_normal((2, 3, 3)), requires_grad=True)
    assert gradcheck(lambda a, b: _lu_solve(ember, a, b, left=left), (a, b))
    assert gradgradcheck(lambda a, b: _lu_solve(ember, a, b, left=left), (a, b))


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_permuted_gradients_match_torch(dtype):
    """Gradients through factors whose pivots reorder many rows (their ``P`` applied as a row
    order, ``_permute``), batched and broadcast, against PyTorch's."""
    rng = np.random.default_rng(8)
    a = rng.standard_normal((3, 19, 19)).astype(dtype)
    b = rng.standard_normal((2, 1, 19, 5)).astype(dtype)
    calls = [lambda L, A, B: L.linalg.lu_factor_ex(A)[0] * B[0, :, :, :1],
             lambda L, A, B: L.linalg.lu_factor(A[:2, :, :12]).LU,
             lambda L, A, B: L.linalg.lu_factor(A[:, :12]).LU]
    calls += [lambda L, A, B, left=left, adjoint=adjoint: _lu_solve(
        L, A, B if left else B.mT, left=left, adjoint=adjoint)
        for left in (True, False) for adjoint in (True, False)]
    tol = 2e-3 if dtype == "float32" else 1e-9
    for call in calls:
        grads = []
        for lib in (ember, torch):
            A, B = (lib.tensor(x, requires_grad=True) for x in (a, b))
            out = call(lib, A, B)
            out.backward(lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape))
                                    .astype(dtype)))
            grads.append([to_np(t.grad) for t in (A, B) if t.grad is not None])
        assert len(grads[0]) == len(grads[1])
        for g, w in zip(*grads):
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol * np.abs(w).max())


@needs_torch
def test_ex_forms_at_failures_match_torch():
    """Not positive-definite / singular: ``info`` and the values LAPACK leaves."""
    not_pd = [np.array([[4., 2, 1], [2, 1, 3], [1, 3, 5]]),
              np.array([[4., 2, 1], [2, 5, 3], [1, 3, -5]]), -np.eye(2)[None].repeat(2, 0)]
    for a in not_pd:
        for upper in (False, True):
            e, t = _both(lambda L, dt: L.linalg.cholesky_ex(L.tensor(a), upper=upper))
            _same(tuple(e), tuple(t))
    singular = [np.array([[1., 2], [2, 4]]), np.array([[1., 2, 3], [2, 4, 6], [1, 1, 1]]),
                np.stack([np.eye(2), [[1., 2], [2, 4]]])]
    for a in singular:
        e, t = _both(lambda L, dt: L.linalg.inv_ex(L.tensor(a)))
        _same(tuple(e), tuple(t))
        e, t = _both(lambda L, dt: L.linalg.solve_ex(L.tensor(a), L.ones(a.shape[-1],
                                                                         dtype=dt)))
        _same(tuple(e), tuple(t))
    e, t = _both(lambda L, dt: L.linalg.solve_ex(L.eye(2, dtype=dt).expand(4, 1, 2, 2),
                                                 L.ones(3, 2, 1, dtype=dt)))
    _same(tuple(e), tuple(t))


ERRORS = [
    lambda L: L.linalg.lu_factor(L.ones(3)),
    lambda L: L.linalg.lu_factor(L.eye(3), pivot=False),
    lambda L: L.linalg.lu(L.ones(3)),
    lambda L: L.linalg.lu(L.eye(3), pivot=False),
    lambda L: L.linalg.lu_factor_ex(L.zeros(2, 3, 3), check_errors=True),
    lambda L: L.linalg.lu_solve(L.eye(3), L.tensor([1, 2, 3], dtype=L.int32), L.ones(3)),
    lambda L: L.linalg.lu_solve(L.ones(3, 4), L.tensor([1, 2, 3], dtype=L.int32),
                                L.ones(3, 1)),
    lambda L: L.linalg.lu_solve(L.eye(3), L.tensor([1, 2, 3], dtype=L.int32), L.ones(2, 1)),
    lambda L: L.linalg.lu_solve(L.eye(3), L.tensor([1, 2, 3], dtype=L.int32), L.ones(2, 1),
                                left=False),
    lambda L: L.linalg.lu_solve(L.eye(3), L.tensor([1, 2, 3]), L.ones(3, 1)),
    lambda L: L.linalg.lu_solve(L.eye(3), L.tensor([1, 2], dtype=L.int32), L.ones(3, 1)),
    lambda L: L.linalg.lu_solve(L.eye(3), L.tensor([1, 2, 3], dtype=L.int32),
                                L.ones(3, 1, dtype=L.float64)),
    lambda L: L.linalg.lu_solve(L.eye(3), L.tensor([0, 2, 3], dtype=L.int32), L.ones(3, 1)),
    lambda L: L.linalg.lu_solve(L.eye(3), L.tensor([4, 2, 3], dtype=L.int32), L.ones(3, 1)),
    lambda L: L.linalg.cholesky_ex(-L.eye(3), check_errors=True),
    lambda L: L.linalg.cholesky_ex(-L.eye(3).expand(2, 3, 3), check_errors=True),
    lambda L: L.linalg.cholesky_ex(L.ones(2, 3)),
    lambda L: L.linalg.cholesky_ex(L.ones(2, 2, dtype=L.int64)),
    lambda L: L.linalg.inv_ex(L.zeros(3, 3), check_errors=True),
    lambda L: L.linalg.inv_ex(L.zeros(2, 3, 3), check_errors=True),
    lambda L: L.linalg.inv_ex(L.zeros(2, 3)),
    lambda L: L.linalg.solve_ex(L.zeros(3, 3), L.ones(3), check_errors=True),
    lambda L: L.linalg.solve_ex(L.zeros(2, 2, 2), L.ones(2, 2), check_errors=True),
    lambda L: L.linalg.solve_ex(L.eye(3), L.ones(2)),
]


@needs_torch
@pytest.mark.parametrize("make", ERRORS)
def test_errors_match_torch(make):
    same_error(make, torch)


@needs_torch
def test_lu_factor_int_dtype_refused_like_torch():
    for dtype in ("int64", "float16"):
        got = []
        for lib in (ember, torch):
            with pytest.raises(NotImplementedError) as err:
                lib.linalg.lu_factor(lib.ones(3, 3, dtype=getattr(lib, dtype)))
            got.append(str(err.value))
        assert got[0] == got[1]
