"""Single-precision linear algebra runs in single precision (``ops/linalg/_lapack.py``: NumPy's
Python layer would cast float32 to float64 and back): inverses, determinants, solves and the
SVD against PyTorch (which computes float32 in float32) and against ember in double precision,
float32 and complex64 in and out, batched, with gradients; singular and non-finite inputs
behave as in double precision."""
import numpy as np
import pytest

import ember
from ember.ops.linalg._lapack import lapack

from ..conftest import to_np

CALLS = {
    "inv": lambda L, a: L.linalg.inv(a),
    "inverse": lambda L, a: a.inverse(),
    "matrix_power_-1": lambda L, a: L.linalg.matrix_power(a, -1),
    "det": lambda L, a: L.linalg.det(a),
    "slogdet": lambda L, a: tuple(L.linalg.slogdet(a)),
    "logdet": lambda L, a: L.logdet(a @ a.mT.conj()),
    "solve": lambda L, a: L.linalg.solve(a, a[..., :3] * 2 - 1),
    "solve_vector": lambda L, a: L.linalg.solve(a, a[..., 0] + 1),
    "solve_right": lambda L, a: L.linalg.solve(a, a[..., :2, :] - 1, left=False),
    "solve_triangular": lambda L, a: L.linalg.solve_triangular(a, a[..., :4] + 1, upper=True),
    "svdvals": lambda L, a: L.linalg.svdvals(a),
    "svd_reconstruct": lambda L, a: (lambda r: (r.U * r.S[..., None, :]) @ r.Vh)(
        L.linalg.svd(a, full_matrices=False)),
    "svd_full": lambda L, a: (lambda r: (r.U.abs(), r.S, r.Vh.abs()))(L.linalg.svd(a)),
}
# Names that hold for complex input too (the sign-invariant functions of complex singular
# vectors are not the same |entries|).
COMPLEX = [name for name in CALLS if name != "svd_full"]


def _matrix(n, batch, complex_, seed=0):
    """Well-conditioned matrices (a diagonal shift), float64 or complex128."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, batch + (n, n))
    if complex_:
        a = a + 1j * rng.uniform(-1, 1, batch + (n, n))
    return a + 3 * np.eye(n) * np.sqrt(n) / 4


def _outputs(res):
    return [to_np(r.resolve_conj()) for r in (res if isinstance(res, tuple) else (res,))]


@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("shape", [(6, ()), (40, (3,)), (9, (2, 2))])
@pytest.mark.parametrize("name", list(CALLS))
def test_single_precision_matches_pytorch_and_double(torch, name, shape, complex_):
    if complex_ and name not in COMPLEX:
        pytest.skip("singular vectors of complex matrices are defined up to a phase")
    n, batch = shape
    a = _matrix(n, batch, complex_)
    single = np.complex64 if complex_ else np.float32
    call = CALLS[name]
    got = _outputs(call(ember, ember.tensor(a.astype(single))))
    want = _outputs(call(torch, torch.tensor(a.astype(single))))
    exact = _outputs(call(ember, ember.tensor(a)))
    for g, w, e in zip(got, want, exact):
        assert g.dtype == w.dtype and g.dtype in (np.float32, np.complex64)
        # (singular vectors: as accurate as the gaps between singular values allow)
        atol = (3e-4 if name == "svd_full" else 2e-5) * np.abs(e).max()
        np.testing.assert_allclose(g, w, atol=atol, rtol=0)
        np.testing.assert_allclose(g, e, atol=atol, rtol=0)


@pytest.mark.parametrize("name", list(CALLS))
def test_single_precision_gradients_match_pytorch(torch, name):
    a = _matrix(12, (2,), False, seed=1).astype(np.float32)
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        outs = CALLS[name](lib, x)
        outs = outs if isinstance(outs, tuple) else (outs,)
        rng = np.random.default_rng(2)
        sum((o * lib.tensor(rng.uniform(0.5, 1.5, tuple(o.shape)).astype(np.float32))).sum()
            for o in outs).backward()
        assert x.grad.dtype == lib.float32
        grads.append(to_np(x.grad))
    # (float32 LAPACK: OpenBLAS's and MKL's round apart, by up to ~3e-5 of the largest entry
    # on one machine and ~5e-5 on another, AVX-512's)
    np.testing.assert_allclose(grads[0], grads[1], atol=6e-5 * np.abs(grads[1]).max(), rtol=0)


def test_the_single_precision_loops_are_the_ones_called():
    a32 = np.eye(3, dtype=np.float32)
    assert lapack(np, a32) is not np.linalg
    assert lapack(np, a32.astype(np.complex64)) is not np.linalg
    assert lapack(np, a32.astype(np.float64)) is np.linalg
    assert lapack(np, a32, a32.astype(np.float64)) is np.linalg  # mixed: NumPy's own
    # float32 LAPACK leaves the rounding of single precision in the result that a float64
    # solve rounded to float32 does not
    rng = np.random.default_rng(0)
    b = rng.uniform(-1, 1, (30, 30)).astype(np.float32) + 6 * np.eye(30, dtype=np.float32)
    single = lapack(np, b).inv(b)
    assert single.dtype == np.float32
    assert not np.array_equal(single, np.linalg.inv(b))
    np.testing.assert_allclose(single, np.linalg.inv(b.astype(np.float64)), atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_singular_and_non_finite_inputs_as_in_double_precision(dtype):
    dt = getattr(ember, dtype)
    singular = ember.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=dt)
    nan = ember.tensor([[1.0, float("nan")], [2.0, 3.0]], dtype=dt)
    with pytest.raises(RuntimeError, match="The diagonal element 2 is zero"):
        ember.linalg.inv(singular)
    with pytest.raises(RuntimeError, match="the input matrix is singular"):
        ember.linalg.solve(singular, singular[:, :1])
    assert to_np(ember.linalg.det(singular)) == 0
    assert np.isnan(to_np(ember.linalg.det(nan)))
    assert np.isnan(to_np(ember.linalg.inv(nan))).all()
    assert np.isneginf(to_np(ember.linalg.slogdet(singular).logabsdet))
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        ember.linalg.svd(nan)
