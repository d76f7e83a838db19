"""pdist's kernels (ember/nn/functional/more.py). p = 2, the Gram form: distances and gradients
against an exact (mpmath) reference across scales, near-duplicate and identical rows, float32
and float64; against PyTorch; blocked as for large inputs; the rows' path for inf and nan;
its first and second derivatives by finite differences. Other p: by chunks of rows."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.nn.functional import more

EF = ember.nn.functional
EPS = {"float32": float(np.finfo(np.float32).eps), "float64": float(np.finfo(np.float64).eps)}


def _cluster(rng, n, m, scale=1.0, far=1e3, gap=1e-4):
    """Random rows, and a pair far from their mean (large centred norms) ``gap`` apart
    relatively: there the Gram form would cancel all but a few digits."""
    x = rng.standard_normal((n, m)) * scale
    x[0] = far * scale * rng.standard_normal(m)
    x[1] = x[0] * (1 + gap * rng.standard_normal(m))
    return x


def _cases():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((30, 12))
    dup = x.copy()
    dup[1] = dup[0]  # d = 0
    dup[2] = dup[0]
    dup[3] = dup[0] + 1e-6  # a tiny, uniform difference
    dup[4, :6] = dup[5, :6]  # a shared half
    mixed = x.copy()
    mixed[::3] *= 1e3
    mixed[1::3] *= 1e-3
    return {
        "random": x,
        "offset": x + 1000.0,  # large norms, small distances: centring removes the offset
        "duplicates": dup,
        "near_far_from_mean": _cluster(rng, 30, 12),
        "nearer_still": _cluster(rng, 30, 12, gap=1e-7),
        "mixed_scales": mixed,
        "huge": x * 1e30,  # float32's squares overflow (PyTorch: inf); float64 takes them
        "tiny": x * 1e-30,  # float32's squares underflow (PyTorch: 0)
        "one_feature": rng.standard_normal((25, 1)),
        "two_rows": rng.standard_normal((2, 5)),
    }


CASES = _cases()


def _exact(x, g):
    """Distances and the gradient of ``sum(g * pdist(x))`` in 40 digits (x as given)."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    n, m = x.shape
    rows = [[mp.mpf(float(v)) for v in r] for r in x]
    d = np.empty(n * (n - 1) // 2)
    grad = [[mp.mpf(0)] * m for _ in range(n)]
    k = 0
    for i in range(n):
        for j in range(i + 1, n):
            diff = [a - b for a, b in zip(rows[i], rows[j])]
            dist = mp.sqrt(mp.fsum(v * v for v in diff))
            d[k] = float(dist)
            if dist != 0:
                w = mp.mpf(float(g[k])) / dist
                for c in range(m):
                    grad[i][c] += w * diff[c]
                    grad[j][c] -= w * diff[c]
            k += 1
    return d, np.array([[float(v) for v in r] for r in grad])


def _ours(x, g):
    a = ember.tensor(x, requires_grad=True)
    out = EF.pdist(a)
    grad, = ember.autograd.grad(out, a, ember.tensor(g))
    return out.detach().numpy(), grad.numpy()


def _pair_scale(n, g):
    """Per row i, sum over its pairs of |g|: the scale of the gradient's rounding."""
    i, j = np.triu_indices(n, 1)
    s = np.zeros(n)
    np.add.at(s, i, np.abs(g))
    np.add.at(s, j, np.abs(g))
    return s[:, None]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_against_exact(case, dtype):
    """float32: each distance correctly rounded but for 1/64 ulp (PyTorch's float32 loop is
    off by up to ~m/2 ulp, and overflows at 1e19); float64: within the direct form's bound."""
    x = CASES[case].astype(dtype)
    n, m = x.shape
    g = np.random.default_rng(3).standard_normal(n * (n - 1) // 2).astype(dtype)
    d, grad = _ours(x, g)
    want_d, want_grad = _exact(x, g)
    assert d.dtype == grad.dtype == np.dtype(dtype)
    eps = EPS[dtype]
    rel = 0.5 * eps * (1 + 1 / 32) if dtype == "float32" else 4 * (m + 2) * eps / 2 + eps
    np.testing.assert_array_less(np.abs(d - want_d), rel * want_d + 1e-300)
    assert np.all(d[want_d == 0] == 0)
    # the gradient: within the dtype's rounding of each row's scale, sum over pairs of |g|
    scale = _pair_scale(n, g.astype(np.float64))
    bound = eps * scale if dtype == "float32" else 8 * n * eps * scale
    np.testing.assert_array_less(np.abs(grad - want_grad), np.broadcast_to(bound, x.shape))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ["random", "offset", "duplicates", "near_far_from_mean",
                                  "nearer_still", "mixed_scales", "one_feature", "two_rows"])
def test_against_pytorch(case, dtype):
    torch = pytest.importorskip("torch")
    x = CASES[case].astype(dtype)
    n = x.shape[0]
    g = np.random.default_rng(4).standard_normal(n * (n - 1) // 2).astype(dtype)
    d, grad = _ours(x, g)
    t = torch.tensor(x, requires_grad=True)
    ref = torch.nn.functional.pdist(t)
    tgrad, = torch.autograd.grad(ref, t, torch.tensor(g))
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(d, ref.detach().numpy(), rtol=tol, atol=0)
    scale = _pair_scale(n, g.astype(np.float64))
    np.testing.assert_array_less(np.abs(grad - tgrad.numpy()),
                                 np.broadcast_to(tol * scale, x.shape))


def test_identical_rows_have_zero_gradient_between_them():
    x = np.random.default_rng(5).standard_normal((6, 4)).astype(np.float32)
    x[3] = x[1]
    g = np.zeros(15, np.float32)
    g[6] = 1.0  # pair (1, 3): its distance only
    d, grad = _ours(x, g)
    assert d[6] == 0
    assert np.all(grad == 0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_blocks_of_rows(monkeypatch, dtype):
    """Large inputs go by blocks of rows (O(block * n) memory): the same values as one
    block, the pairs across blocks and within each included."""
    x = CASES["near_far_from_mean"].astype(dtype)
    n = x.shape[0]
    g = np.random.default_rng(6).standard_normal(n * (n - 1) // 2).astype(dtype)
    whole = _ours(x, g)
    for block in (1, 40, 100, 300):
        monkeypatch.setattr(more, "_GRAM_BLOCK", block)
        blocked = _ours(x, g)
        rtol = 1e-6 if dtype == "float32" else 1e-14
        np.testing.assert_allclose(blocked[0], whole[0], rtol=rtol, atol=0)
        np.testing.assert_allclose(blocked[1], whole[1], rtol=rtol,
                                   atol=rtol * np.abs(whole[1]).max())


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_inf_and_nan_as_pytorch(bad):
    """Non-finite input goes by rows: inf and nan only where PyTorch has them."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(8).standard_normal((7, 3))
    x[2, 1] = bad
    g = np.random.default_rng(9).standard_normal(21)
    d, grad = _ours(x, g)
    ref, tgrad = _torchs(torch, x, g)
    np.testing.assert_allclose(d, ref, rtol=1e-12)
    np.testing.assert_allclose(grad, tgrad, rtol=1e-12)


@pytest.mark.parametrize("scale", [1e160, 1e-160, 1e-310])
def test_float64_squares_out_of_range_as_pytorch(scale):
    """float64 rows whose squares overflow or underflow: computed directly, as PyTorch."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(10).standard_normal((9, 4)) * scale
    x[:3] *= 1e-3  # some pairs in range
    g = np.random.default_rng(11).standard_normal(36)
    d, grad = _ours(x, g)
    ref, tgrad = _torchs(torch, x, g)
    np.testing.assert_allclose(d, ref, rtol=1e-13)
    np.testing.assert_allclose(grad, tgrad, rtol=1e-12, atol=1e-300)


def _torchs(torch, x, g):
    """PyTorch's pdist of ``x`` and its gradient for ``g``, as arrays."""
    t = torch.tensor(x, requires_grad=True)
    ref = torch.nn.functional.pdist(t)
    tgrad, = torch.autograd.grad(ref, t, torch.tensor(g))
    return ref.detach().numpy(), tgrad.numpy()


@pytest.mark.parametrize("shape", [(0, 3), (1, 3), (4, 0)])
def test_degenerate_shapes(shape):
    torch = pytest.importorskip("torch")
    x = np.ones(shape)
    d, grad = _ours(x, np.ones(shape[0] * (shape[0] - 1) // 2))
    np.testing.assert_array_equal(d, torch.nn.functional.pdist(torch.tensor(x)).numpy())
    np.testing.assert_array_equal(grad, np.zeros(shape))


def test_finite_differences_with_near_and_far_pairs():
    """First and second derivatives in float64, on rows where both the Gram form and the
    direct one serve pairs (float64: pairs with d² < S / 2 go direct), and a pair differing
    in some components only (its second derivative there: not zero)."""
    x = np.random.default_rng(12).standard_normal((8, 5))
    x[1] = x[0] + 1e-3 * np.arange(5)
    x[4] = 3 * x[2]
    a = ember.tensor(x, requires_grad=True)
    assert gradcheck(EF.pdist, (a,))
    assert gradgradcheck(EF.pdist, (a,))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 3, float("inf")])
def test_other_p_by_chunks_of_rows(monkeypatch, p, dtype):
    """p other than 2 goes by rows, each row's pairs in chunks (of _ROW_CHUNK elements):
    chunks of one, two and all rows, with zero distances, shared components and ties for
    the maximum, against PyTorch."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(13).standard_normal((9, 4))
    x[3] = x[1]
    x[5, :2] = x[0, :2]
    x[7, :2] = x[2, :2] + 1.0
    x = x.astype(dtype)
    g = np.random.default_rng(14).standard_normal(36).astype(dtype)
    t = torch.tensor(x, requires_grad=True)
    ref = torch.nn.functional.pdist(t, p)
    tgrad, = torch.autograd.grad(ref, t, torch.tensor(g))
    tol = 1e-5 if dtype == "float32" else 1e-12
    for chunk in (1, 8, 1 << 16):
        monkeypatch.setattr(more, "_ROW_CHUNK", chunk)
        a = ember.tensor(x, requires_grad=True)
        out = EF.pdist(a, p)
        grad, = ember.autograd.grad(out, a, ember.tensor(g))
        np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=tol,
                                   atol=tol)
        np.testing.assert_allclose(grad.numpy(), tgrad.numpy(), rtol=tol, atol=tol)
