"""``linalg.solve_triangular`` by blocks (``ops/linalg/_triangular.py``) against PyTorch's
``trsm``: sizes across the leaf size, both triangles and sides, unit diagonals, broadcast
batches, every floating dtype, ill-conditioned matrices (by backward error), the other triangle
never read, zero pivots inside a block; gradients by finite differences; and the value shared
by the two rules of ``solve`` and ``solve_triangular`` (computed once) in every combination of
inputs that require grad."""
import itertools

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from ..conftest import to_np

DTYPES = ["float32", "float64", "complex64", "complex128"]
SIZES = [1, 7, 8, 9, 33, 115]  # one leaf, a leaf, a leaf and a row, many leaves
SIDES = list(itertools.product([True, False], [True, False], [False, True]))  # upper, left, unit


def _matrix(rng, shape, dtype, unit):
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    n = shape[-1]
    # off the diagonal small enough that unit triangles stay well conditioned at n = 115
    return (a / np.sqrt(n) + (0 if unit else 4) * np.eye(n)).astype(dtype)


def _rhs(rng, shape, dtype):
    b = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        b = b + 1j * rng.standard_normal(shape)
    return b.astype(dtype)


def _backward_error(T, X, B):
    """max |T X - B| / (|T| |X| + |B|), componentwise, in extended precision."""
    T, X, B = (np.asarray(v, dtype=np.clongdouble) for v in (T, X, B))
    residual = np.abs(T @ X - B)
    scale = np.abs(T) @ np.abs(X) + np.abs(B)
    return float(np.max(residual / np.maximum(scale, np.finfo(np.longdouble).tiny)))


# right-hand sides: a few (each diagonal block by ``gesv``), many (by its inverse, refined)
COLUMNS = [1, 4, 12]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("k", COLUMNS)
def test_values_match_pytorch(torch, dtype, n, k):
    rng = np.random.default_rng(n)
    eps = np.finfo(dtype).eps
    for upper, left, unit in SIDES:
        for a_batch, b_batch in [((), ()), ((3,), ()), ((), (2,)), ((2, 1), (3,))]:
            A = _matrix(rng, a_batch + (n, n), dtype, unit)
            B = _rhs(rng, b_batch + ((n, k) if left else (k, n)), dtype)
            got, want = (to_np(lib.linalg.solve_triangular(
                lib.tensor(A), lib.tensor(B), upper=upper, left=left, unitriangular=unit))
                for lib in (ember, torch))
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=200 * eps, atol=200 * eps)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("k", COLUMNS)
def test_ill_conditioned_is_backward_stable_as_pytorchs(torch, dtype, upper, k):
    """Graded columns (condition ~1e6 in single, ~1e12 in double precision): the answers differ
    in their last digits, but each is the exact solution of a problem within a few ulps of the
    given one, componentwise, as LAPACK's substitution guarantees."""
    rng = np.random.default_rng(1)
    n = 64
    grading = np.logspace(0, -6 if np.finfo(dtype).bits < 64 else -12, n)
    A = (_matrix(rng, (2, n, n), dtype, False) * grading).astype(dtype)
    B = _rhs(rng, (n, k), dtype)
    T = np.triu(A) if upper else np.tril(A)
    errors = []
    for lib in (ember, torch):
        X = to_np(lib.linalg.solve_triangular(lib.tensor(A), lib.tensor(B), upper=upper))
        errors.append(max(_backward_error(T[i], X[i], B) for i in range(2)))
    eps = np.finfo(dtype).eps
    assert errors[0] <= max(4 * errors[1], 8 * eps), errors


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("unit", [True, False])
@pytest.mark.parametrize("n", [5, 40])
def test_the_other_triangle_is_not_read(upper, unit, n):
    rng = np.random.default_rng(2)
    A = _matrix(rng, (n, n), "float64", unit)
    B = rng.standard_normal((n, 12))
    garbage = A.copy()
    other = np.tril(np.ones((n, n), bool), -1) if upper else np.triu(np.ones((n, n), bool), 1)
    garbage[other] = np.nan
    if unit:
        np.fill_diagonal(garbage, np.inf)
    want, got = (ember.linalg.solve_triangular(ember.tensor(m), ember.tensor(B), upper=upper,
                                               unitriangular=unit).numpy() for m in (A, garbage))
    np.testing.assert_array_equal(got, want)
    T = np.triu(A) if upper else np.tril(A)
    if unit:
        np.fill_diagonal(T, 1)
    np.testing.assert_allclose(T @ got, B, atol=1e-12)


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("at", [3, 20])
@pytest.mark.parametrize("k", COLUMNS)
def test_zero_pivot_inside_a_block_is_pytorchs(torch, upper, at, k):
    """No error, as LAPACK's ``trsm``: the infinities and NaNs of dividing by zero propagate
    through the blocks after the one holding the zero (and in one small triangle)."""
    rng = np.random.default_rng(3)
    n = 24 if at > 10 else 12
    A = _matrix(rng, (n, n), "float64", False)
    A[at, at] = 0
    B = rng.standard_normal((n, k))
    got, want = (to_np(lib.linalg.solve_triangular(lib.tensor(A), lib.tensor(B), upper=upper))
                 for lib in (ember, torch))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-10)


@pytest.mark.parametrize("upper,left,unit", SIDES)
def test_gradients_by_finite_differences(upper, left, unit):
    rng = np.random.default_rng(4)
    n = 19  # three leaves
    A = ember.tensor(_matrix(rng, (2, n, n), "float64", unit), requires_grad=True)
    B = ember.tensor(rng.standard_normal((n, 3) if left else (3, n)), requires_grad=True)
    C = ember.tensor(rng.standard_normal((n, 10) if left else (10, n)), requires_grad=True)

    def f(A, B):
        return ember.linalg.solve_triangular(A, B, upper=upper, left=left, unitriangular=unit)
    assert gradcheck(f, (A, B))
    assert gradgradcheck(f, (A, B))
    assert gradcheck(f, (A, C))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("upper,left,unit", SIDES)
@pytest.mark.parametrize("k", [1, 9])
def test_gradient_of_the_triangle_is_pytorchs(torch, dtype, upper, left, unit, k):
    """The gradient of ``A`` (its triangle zeroed in place on NumPy, ``_triangle``) is
    PyTorch's, the triangle not read exactly zero, a broadcast ``A`` summed over the batch."""
    rng = np.random.default_rng(6)
    n = 19
    a = _matrix(rng, (3, n, n), dtype, unit)
    b = _rhs(rng, (3, n, k) if left else (3, k, n), dtype)
    for a_ in (a, a[0]):  # batched, and broadcast against a batch of right-hand sides
        grads = []
        for lib in (ember, torch):
            A = lib.tensor(a_, requires_grad=True)
            X = lib.linalg.solve_triangular(A, lib.tensor(b), upper=upper, left=left,
                                            unitriangular=unit)
            (X * lib.tensor(b)).sum().backward()
            grads.append(to_np(A.grad))
        got, want = grads
        other = np.tril(np.ones((n, n), bool), -1 + int(unit)) if upper else \
            np.triu(np.ones((n, n), bool), 1 - int(unit))
        assert (got[..., other] == 0).all()
        tol = 1e-4 if dtype == "float32" else 1e-11
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


SOLVERS = {
    "solve": lambda L, A, B: L.linalg.solve(A, B),
    "solve_right": lambda L, A, B: L.linalg.solve(A, B.mT, left=False),
    "solve_vector": lambda L, A, B: L.linalg.solve(A, B[..., 0]),
    "solve_triangular": lambda L, A, B: L.linalg.solve_triangular(A, B, upper=True),
    "solve_triangular_right": lambda L, A, B: L.linalg.solve_triangular(A, B.mT, upper=False,
                                                                        left=False),
    "lstsq": lambda L, A, B: L.linalg.lstsq(A, B).solution,  # (its pinv, shared likewise)
    "lstsq_vector": lambda L, A, B: L.linalg.lstsq(A, B[..., 0]).solution,
}


@pytest.mark.parametrize("name", list(SOLVERS))
@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
def test_the_shared_solve_gives_each_rule_its_own_gradient(torch, name, needs):
    """The solve with ``A^T`` that both rules need is computed once: the gradients are still
    PyTorch's whichever inputs require grad, for two nodes fed the same gradient, and for a
    graph run backward twice."""
    fn = SOLVERS[name]
    rng = np.random.default_rng(5)
    a = rng.standard_normal((2, 5, 5)) + 4 * np.eye(5)
    bs = [rng.standard_normal((2, 5, 2)) for _ in range(2)]
    results = []
    for lib in (ember, torch):
        A = lib.tensor(a, requires_grad=needs[0])
        B1, B2 = (lib.tensor(b, requires_grad=needs[1]) for b in bs)
        out = fn(lib, A, B1) + fn(lib, A, B2) * 2  # two nodes, one gradient arriving at both
        grads = []
        for _ in range(2):  # twice through the same graph
            inputs = [t for t, need in ((A, needs[0]), (B1, needs[1]), (B2, needs[1])) if need]
            grads.append([to_np(g) for g in lib.autograd.grad(out.sum(), inputs,
                                                              retain_graph=True)])
        results.append(grads)
    for got, want in zip(*results):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
