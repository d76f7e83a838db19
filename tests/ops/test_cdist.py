"""``cdist``'s kernels (``ops/linalg/distances.py``): the blocked direct form in every blocking
regime, and ``p = 2`` by matrix products with its directly computed near rows — values and
gradients against PyTorch and against float64 references, finite differences, and the inputs
where the product form cancels."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.ops.linalg import distances

PS = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, float("inf")]
DIRECT = "donot_use_mm_for_euclid_dist"
MM = "use_mm_for_euclid_dist"
# (x1, x2) shapes and a block size putting them in each regime of ``_blocks``: whole batches
# per block, rows of x1 per block, and rows of x2 cut within a row of x1.
REGIMES = [(((2, 1, 5, 4), (3, 6, 4)), 1000), (((9, 4), (11, 4)), 50),
           (((3, 9, 4), (3, 11, 4)), 7), (((9, 4), (11, 4)), None)]


@pytest.fixture(params=REGIMES, ids=["batches", "rows", "rows_and_columns", "default"])
def regime(request, monkeypatch):
    shapes, block = request.param
    if block is not None:
        monkeypatch.setattr(distances, "_BLOCK", block)
    return shapes


def _pair(lib, shapes, dtype, data=None, seed=0):
    rng = np.random.default_rng(seed)
    vals = data or [rng.uniform(-2, 2, s) for s in shapes]
    return [lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True) for v in vals]


def _run(lib, xs, p, mode):
    out = lib.cdist(*xs, p, compute_mode=mode)
    w = np.random.default_rng(1).uniform(0.5, 1.5, tuple(out.shape))
    (out * lib.tensor(w, dtype=out.dtype)).sum().backward()
    return [out.detach().numpy()] + [x.grad.numpy() for x in xs]


def _tol(dtype):
    return dict(rtol=1e-10, atol=1e-12) if dtype == "float64" else dict(rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["use_mm_for_euclid_dist_if_necessary", DIRECT, MM])
@pytest.mark.parametrize("p", PS)
def test_blocked_kernels_match_torch(torch, regime, p, mode, dtype):
    for data in (None, "integers"):  # integers: zero differences, ties at the maximum
        rng = np.random.default_rng(2)
        vals = None if data is None else [rng.integers(-2, 3, s).astype(float) for s in regime]
        if vals is not None and p == 2 and mode != DIRECT:
            continue  # PyTorch's product form is not exact at zero distances (below)
        got = _run(ember, _pair(ember, regime, dtype, vals), p, mode)
        want = _run(torch, _pair(torch, regime, dtype, vals), p, mode)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, **_tol(dtype))


@pytest.mark.parametrize("p", [0.5, 1.0, 1.5, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("mode", [DIRECT, MM])
def test_blocked_kernels_finite_differences(regime, p, mode):
    if mode == MM and p != 2:
        pytest.skip("the mode only applies to p = 2")
    xs = _pair(ember, regime, "float64")
    fn = lambda a, b: ember.cdist(a, b, p, compute_mode=mode)  # noqa: E731
    assert gradcheck(fn, xs)
    if p not in (1.0, float("inf")):
        assert gradgradcheck(fn, xs)


def _reference(x1, x2):
    """Euclidean distances and the gradients of ``sum(w * dist)`` in float64, directly."""
    diff = x1[:, None, :] - x2[None, :, :]
    dist = np.sqrt((diff * diff).sum(-1))
    w = np.random.default_rng(1).uniform(0.5, 1.5, dist.shape)
    unit = np.where(dist[..., None] == 0, 0, diff / np.where(dist == 0, 1, dist)[..., None])
    return dist, (w[..., None] * unit).sum(1), -(w[..., None] * unit).sum(0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_product_form_keeps_the_direct_accuracy(dtype):
    """Points clustered far from the origin (the product form alone cancels to noise) and rows
    of x1 equal to rows of x2 (distance exactly 0, gradient 0 as PyTorch's subgradient)."""
    rng = np.random.default_rng(3)
    centre = rng.uniform(-1, 1, 40) * 1e3
    x2 = centre + rng.normal(0, 1e-2, (30, 40))
    x1 = np.concatenate([centre + rng.normal(0, 1e-2, (20, 40)), x2[:10]])
    x1, x2 = (np.asarray(x, dtype=dtype).astype(float) for x in (x1, x2))
    got = _run(ember, _pair(ember, None, dtype, [x1, x2]), 2.0, MM)
    for g, w in zip(got, _reference(x1, x2)):  # float32: the rounding of the sums only
        scale = np.abs(w).max() * (1e-5 if dtype == "float32" else 1e-12)
        np.testing.assert_allclose(g, w, rtol=1e-4 if dtype == "float32" else 1e-10,
                                   atol=scale)
    assert (got[0][20:].diagonal() == 0).all()


def test_product_form_far_rows_use_the_product(monkeypatch):
    """Well-separated rows never reach the direct kernel (the fast path is the one taken)."""
    calls = []
    direct = distances._direct
    monkeypatch.setattr(distances, "_direct", lambda *a: calls.append(1) or direct(*a))
    rng = np.random.default_rng(4)
    x1, x2 = (ember.tensor(rng.uniform(-1, 1, (n, 30))) for n in (40, 35))
    near = ember.cat([x1[:3], x2[:1]])
    ember.cdist(x1, x2)
    assert not calls
    np.testing.assert_array_equal(ember.cdist(near, x2)[3, 0].numpy(), 0.0)
    assert calls


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("mode", [DIRECT, MM])
def test_nonfinite_inputs_match_torch(torch, p, mode):
    # (PyTorch's inf-norm skips NaN differences, inf - inf too, taking the largest of the
    # others: not followed, a NaN is kept)
    nan, inf = (np.nan, np.inf) if p != float("inf") else (0.5, 5.0)
    x1 = np.array([[0.0, 1.0], [inf, 1.0], [nan, 0.0], [-np.inf, 2.0]] * 7)
    x2 = np.array([[1.0, 1.0], [np.inf, 0.0], [2.0, -np.inf]] * 9)
    # ember's product form computes these rows directly: PyTorch's direct values
    outs = [lib.cdist(lib.tensor(x1), lib.tensor(x2), p, compute_mode=m).numpy()
            for lib, m in ((ember, mode), (torch, DIRECT if p == 2 else mode))]
    np.testing.assert_array_equal(*outs)
