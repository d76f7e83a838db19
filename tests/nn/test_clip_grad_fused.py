"""``clip_grad_norm_``'s fused path (plain float32/float64 gradients of one dtype, the 2-norm):
the same total norm, scaled gradients, dtypes, version counters and errors as the op-by-op
path it bypasses and as PyTorch; and ``sum_of_squares``, the 2-norm's blocked sum, against the
exact sum."""
import numpy as np
import pytest

import ember
from ember.nn.utils import clip_grad
from ember.ops._blocks import _BLOCK
from ember.ops.reduction.norms import sum_of_squares

from ..conftest import to_np

SHAPES = [(65, 48), (48,), (144, 48), (1,), (300, 300), (3, 4, 5)]


def _params(lib, dtype, scale=10.0, shapes=SHAPES, seed=0):
    rng = np.random.default_rng(seed)
    params = []
    for s in shapes:
        p = lib.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
        p.grad = lib.tensor((rng.standard_normal(s) * scale).astype(dtype))
        params.append(p)
    return params


def _general_path(monkeypatch):
    monkeypatch.setattr(clip_grad, "_plain_arrays", lambda tensors: None)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("max_norm", [0.5, 1e9])  # clipped, and scaled by 1
def test_fused_path_equals_the_general_path(monkeypatch, dtype, max_norm):
    fused = _params(ember, dtype)
    versions = [p.grad._version for p in fused]
    total = ember.nn.utils.clip_grad_norm_(fused, max_norm)
    _general_path(monkeypatch)
    general = _params(ember, dtype)
    want = ember.nn.utils.clip_grad_norm_(general, max_norm)
    assert total.dtype == want.dtype and total.shape == want.shape == ()
    assert total.grad_fn is None and not total.requires_grad
    np.testing.assert_allclose(to_np(total), to_np(want), rtol=1e-6 if dtype == np.float32
                               else 1e-14)
    for p, q, v in zip(fused, general, versions):
        assert p.grad.dtype == q.grad.dtype
        assert p.grad._version == q.grad._version == v + 1
        np.testing.assert_allclose(to_np(p.grad), to_np(q.grad), rtol=1e-6, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_path_against_torch(torch, dtype):
    out = []
    for lib in (ember, torch):
        params = _params(lib, dtype)
        total = lib.nn.utils.clip_grad_norm_(params, 1.0)
        out.append((to_np(total), [to_np(p.grad) for p in params], str(total.dtype)))
    assert out[0][2].split(".")[-1] == out[1][2].split(".")[-1]
    tol = 1e-6 if dtype == "float32" else 1e-13
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=tol)
    for a, b in zip(out[0][1], out[1][1]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * np.abs(b).max())


def test_get_total_norm_of_plain_tensors(torch):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    got = ember.nn.utils.get_total_norm([ember.tensor(a) for a in arrays])
    want = torch.nn.utils.get_total_norm([torch.tensor(a) for a in arrays])
    np.testing.assert_allclose(to_np(got), want.numpy(), rtol=1e-6)
    assert got.dtype == ember.float32


def test_mixed_dtypes_and_other_norms_take_the_general_path(torch):
    for norm_type in (2.0, 1.0, float("inf")):
        results = []
        for lib in (ember, torch):
            params = (_params(lib, np.float32, shapes=[(5, 4)])
                      + _params(lib, np.float64, shapes=[(3,)], seed=1))
            total = lib.nn.utils.clip_grad_norm_(params, 0.5, norm_type=norm_type)
            results.append((to_np(total), [to_np(p.grad) for p in params],
                            [str(p.grad.dtype).split(".")[-1] for p in params]))
        np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-6)
        assert results[0][2] == results[1][2]
        for a, b in zip(results[0][1], results[1][1]):
            np.testing.assert_allclose(a, b, rtol=1e-6)


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_nonfinite_norm_errors_and_scales_as_before(monkeypatch, torch, bad):
    outs = []
    for lib in (ember, torch):
        params = _params(lib, np.float32, shapes=[(4, 3), (3,)])
        with lib.no_grad():
            params[0].grad[1, 2] = bad
        with pytest.raises(RuntimeError, match="non-finite"):
            lib.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
        total = lib.nn.utils.clip_grad_norm_(params, 1.0)
        outs.append((to_np(total), [to_np(p.grad) for p in params]))
    np.testing.assert_array_equal(np.isnan(outs[0][0]), np.isnan(outs[1][0]))
    for a, b in zip(outs[0][1], outs[1][1]):
        np.testing.assert_array_equal(np.isnan(a), np.isnan(b))


def test_a_gradient_saved_by_a_node_is_seen_as_written():
    """The fused scaling bumps each gradient's version as ``mul_`` does: a node that saved a
    gradient (here through a later op) refuses to run backward."""
    p = ember.tensor([1.0, 2.0], requires_grad=True)
    p.grad = ember.tensor([3.0, 4.0])
    w = ember.tensor([1.0, 1.0], requires_grad=True)
    y = (w * p.grad).sum()  # MulBackward0 saves p.grad for w's gradient
    ember.nn.utils.clip_grad_norm_([p], 1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 1000, _BLOCK, _BLOCK + 1, 5 * _BLOCK + 7, 1_000_003])
def test_sum_of_squares_is_close_to_the_exact_sum(dtype, n):
    x = (np.random.default_rng(n).standard_normal(n) * 3).astype(dtype)
    got = sum_of_squares(x)
    assert got.dtype == dtype
    exact = np.sum(x.astype(np.longdouble) ** 2)
    # within a few roundings of the exact sum, as NumPy's pairwise sum of the squares
    assert abs(got - exact) <= 8 * np.finfo(dtype).eps * exact + np.finfo(dtype).tiny
    if n <= _BLOCK:  # small arrays: NumPy's own sum, bit for bit
        assert got == np.sum(np.abs(x) * np.abs(x))


def test_sum_of_squares_of_special_values_and_views():
    x = np.ones(3 * _BLOCK, np.float32)
    x[_BLOCK + 5] = np.inf
    assert sum_of_squares(x) == np.inf
    x[7] = np.nan
    assert np.isnan(sum_of_squares(x))
    y = np.arange(12.0).reshape(3, 4).T  # not contiguous
    assert sum_of_squares(y) == np.sum(y * y)


def test_vector_norm_of_a_large_array_against_torch(torch):
    a = np.random.default_rng(5).standard_normal((700, 500)).astype(np.float32)
    e = ember.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    ne, nt = ember.linalg.vector_norm(e), torch.linalg.vector_norm(t)
    exact = np.sqrt(np.sum(a.astype(np.float64) ** 2))
    np.testing.assert_allclose(to_np(ne), exact, rtol=1e-6)
    # (PyTorch's float32 sum is 3e-6 off the exact norm here)
    np.testing.assert_allclose(to_np(ne), nt.detach().numpy(), rtol=1e-5)
    ne.backward()
    nt.backward()
    np.testing.assert_allclose(to_np(e.grad), t.grad.numpy(), rtol=1e-5, atol=1e-9)
    assert ne.grad_fn.name() == nt.grad_fn.name()
