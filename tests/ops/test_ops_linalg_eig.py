"""``torch.linalg.eig`` and ``eigvals`` (general matrices, complex results) against PyTorch:
values, dtypes, grad_fns, gradients of phase-invariant functions (finite differences, second
order, PyTorch's), the refusal of phase-dependent losses, and PyTorch's errors."""
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
MATRIX = [((3, 3),), ((2, 4, 4),)]


def _eig_parts(L, a):
    """Eigenvalues and the squared moduli of the eigenvectors' entries (which do not depend on
    the phase each eigenvector is defined up to; squared: ember's forward mode of a complex
    ``abs`` is not PyTorch's yet)."""
    values, vectors = L.linalg.eig(a)
    return values.real, values.imag, (vectors * vectors.conj()).real


SPECS = [
    Spec("eig", _eig_parts, MATRIX, tol=10),
    Spec("eigvals", lambda L, a: (lambda w: (w.real, w.imag))(L.linalg.eigvals(a)), MATRIX,
         tol=10),
    # the matrix rebuilt from its eigendecomposition's phase-invariant products
    Spec("eig_projector", lambda L, a: (lambda r: (r[1] * r[1].conj()).real @ a)(
        L.linalg.eig(a)), [((3, 3),)], tol=10),
]
test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_eig_matches_torch(dtype):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((3, 5, 5))
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(a.shape)
    outs = [lib.linalg.eig(lib.tensor(a, dtype=getattr(lib, dtype))) for lib in (ember, torch)]
    tol = dict(rtol=1e-4, atol=1e-5) if dtype in ("float32", "complex64") else \
        dict(rtol=1e-10, atol=1e-12)
    for e, t in zip(outs[0], outs[1]):
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(to_np(outs[0][0]), to_np(outs[1][0]), **tol)
    # eigenvectors: each is defined up to a phase (PyTorch's float32 LAPACK and NumPy's pick
    # different signs); compare each with the phase that aligns it
    ve, vt = to_np(outs[0][1]), to_np(outs[1][1])
    phase = np.sum(np.conj(ve) * vt, axis=-2, keepdims=True)
    np.testing.assert_allclose(ve * phase / np.abs(phase), vt, **tol)
    if dtype == "float64":  # the same LAPACK routine in double: the very same vectors
        np.testing.assert_allclose(ve, vt, **tol)
    ev = [lib.linalg.eigvals(lib.tensor(a, dtype=getattr(lib, dtype))) for lib in (ember, torch)]
    np.testing.assert_allclose(to_np(ev[0]), to_np(ev[1]), **tol)


@needs_torch
def test_phase_dependent_loss_refused_like_torch():
    a = np.random.default_rng(0).standard_normal((4, 4))
    got = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        with pytest.raises(RuntimeError) as err:
            lib.linalg.eig(x)[1].real.sum().backward()
        got.append(str(err.value))
    assert got[0] == got[1]


ERRORS = [
    lambda L: L.linalg.eig(L.ones(2, 3)),
    lambda L: L.linalg.eig(L.ones(3)),
    lambda L: L.linalg.eig(L.ones(3, 3, dtype=L.int64)),
    lambda L: L.linalg.eigvals(L.ones(3)),
    lambda L: L.linalg.eigvals(L.ones(2, 3)),
    lambda L: L.linalg.eig(L.tensor([[float("nan"), 1.0], [1.0, 1.0]])),
    lambda L: L.linalg.eigvals(L.tensor([[float("inf"), 1.0], [1.0, 1.0]], requires_grad=True)),
]


@needs_torch
@pytest.mark.parametrize("make", ERRORS)
def test_errors_match_torch(make):
    same_error(make, torch)


@needs_torch
def test_empty_matches_torch():
    for shape in [(0, 0), (2, 0, 0)]:
        e = ember.linalg.eig(ember.zeros(shape))
        t = torch.linalg.eig(torch.zeros(shape))
        for x, y in zip(e, t):
            assert tuple(x.shape) == tuple(y.shape) and str(x.dtype) == str(y.dtype)


@needs_torch
def test_eigvals_of_non_finite_matrices_are_nan_like_torch():
    """Without a graph PyTorch's eigvals gives NaNs for a matrix with an infinite entry (a
    NaN entry crashes PyTorch 2.13: not compared); ember gives NaNs for both."""
    a = np.stack([[[np.inf, 1.0], [1.0, 1.0]], [[1.0, 0.0], [0.0, 2.0]]])
    e, t = (lib.linalg.eigvals(lib.tensor(a)) for lib in (ember, torch))
    assert str(e.dtype) == str(t.dtype)
    np.testing.assert_allclose(to_np(e), to_np(t))
    nan = ember.linalg.eigvals(ember.tensor([[np.nan, 1.0], [1.0, 1.0]]))
    assert np.isnan(to_np(nan)).all()
