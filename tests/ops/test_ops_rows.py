"""``ember/ops/reduction/rows.py``: the BLAS row sums and transposed row maxima behind
softmax, log_softmax and the norms — exact against float64 sums, NaN and infinities as
NumPy's reductions, the fallbacks — and softmax/log_softmax/cross-entropy on shapes that take
the fast paths, against PyTorch (float32 and float64) and finite differences."""
import numpy as np
import pytest

import ember
from ember import _xp
from ember.autograd import gradcheck, gradgradcheck
from ember.ops.reduction import rows

from ..conftest import to_np

XP = _xp.NUMPY
SHAPES = [(512, 27), (10000, 3), (40, 1024), (7, 1025), (2, 3, 64), (5000,), (3, 70, 1),
          (100, 48), (300, 49), (6, 64, 128), (1, 700)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sums_are_exact_sums(shape, dtype):
    x = (np.random.default_rng(0).standard_normal(shape) * 10).astype(dtype)
    eps = np.finfo(dtype).eps
    got = rows.sum_last(XP, x)
    want = x.astype(np.float64).sum(axis=-1, keepdims=True)
    bound = 16 * eps * np.abs(x).sum(axis=-1, keepdims=True, dtype=np.float64)
    assert got.dtype == dtype and got.shape == want.shape
    assert (np.abs(got - want) <= bound).all()
    if x.ndim >= 2:
        got = rows.sum_last(XP, x, k=2)
        want = x.astype(np.float64).sum(axis=(-2, -1), keepdims=True)
        assert got.shape == want.shape
        big = np.abs(x).sum(axis=(-2, -1), keepdims=True, dtype=np.float64)
        assert (np.abs(got - want) <= x.shape[-1] * x.shape[-2] * eps * big).all()
    got = rows.sum_first(XP, x)
    want = x.astype(np.float64).sum(axis=0)
    assert got.dtype == dtype and got.shape == want.shape
    assert (np.abs(got - want) <= x.shape[0] * eps * np.abs(x).sum(axis=0)).all()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_is_numpys(shape, dtype):
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    np.testing.assert_array_equal(rows.max_last(XP, x), x.max(axis=-1, keepdims=True))


def test_nan_and_infinities_propagate_as_in_numpy():
    x = np.random.default_rng(2).standard_normal((300, 5)).astype(np.float32)
    x[0, 1] = np.nan
    x[1, 2] = np.inf
    x[2, :2] = [np.inf, -np.inf]
    x[3] = -np.inf
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(rows.sum_last(XP, x), x.sum(axis=-1, keepdims=True))
        np.testing.assert_array_equal(rows.sum_first(XP, x.T.copy()), x.sum(axis=-1))
    np.testing.assert_array_equal(rows.max_last(XP, x), x.max(axis=-1, keepdims=True))
    long = np.repeat(x, 30, axis=1)  # rows of 150: the segment-wise maximum
    np.testing.assert_array_equal(rows.max_last(XP, long), long.max(axis=-1, keepdims=True))


def test_other_arrays_fall_back():
    """Non-contiguous, integer, half-precision and empty arrays: NumPy's own reductions."""
    x = np.random.default_rng(3).standard_normal((200, 6))
    for a in (x.T, x.astype(np.int64), x.astype(np.float16), np.zeros((0, 6)), x[:, :1]):
        np.testing.assert_array_equal(rows.sum_last(XP, a), a.sum(axis=-1, keepdims=True))
        if a.size:
            np.testing.assert_array_equal(rows.max_last(XP, a), a.max(axis=-1, keepdims=True))


def _logits(shape, dtype, rng):
    x = rng.standard_normal(shape) * 4
    x[..., 0, :3] = [80.0, -80.0, 0.0]  # far apart: the shift matters
    x[..., 1, 1::2] = -np.inf  # a masked row (causal attention)
    return x.astype(dtype)


@pytest.mark.parametrize("shape", [(300, 27), (4, 128, 16), (20, 700), (6, 5), (64, 48), (63, 48),
                                   (100, 49), (200, 3), (20000, 27)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_family_matches_torch_on_the_fast_paths(torch, shape, dtype):
    rng = np.random.default_rng(4)
    x = _logits(shape, getattr(np, dtype), rng)
    v = rng.standard_normal(shape)
    target = rng.integers(0, shape[-1], shape[0])
    results = []
    for lib in (ember, torch):
        F = lib.nn.functional
        outs = []
        for f in (lambda t: F.softmax(t, -1), lambda t: F.log_softmax(t, -1)):
            t = lib.tensor(x, requires_grad=True)
            y = f(t)
            (y.masked_fill(~lib.isfinite(y), 0) * lib.tensor(v, dtype=t.dtype)).sum().backward()
            outs += [to_np(y), to_np(t.grad)]
        if len(shape) == 2:
            t = lib.tensor(np.where(np.isfinite(x), x, -50).astype(x.dtype), requires_grad=True)
            loss = F.cross_entropy(t, lib.tensor(target))
            loss.backward()
            outs += [to_np(loss), to_np(t.grad)]
        results.append(outs)
    rtol = 2e-6 if dtype == "float32" else 1e-13
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)


def test_short_columns_only_where_the_transposed_passes_pay():
    """Rows of 2 to 48 elements, at least 64 of them, contiguous float32/float64: the
    transposed copy (and back, unchanged); anything else None (the passes on the rows)."""
    rng = np.random.default_rng(8)
    for shape in [(64, 48), (512, 27), (4, 32, 2), (64, 2)]:
        for dtype in (np.float32, np.float64):
            x = rng.standard_normal(shape).astype(dtype)
            cols = rows.short_columns(XP, x)
            np.testing.assert_array_equal(cols, x.reshape(-1, shape[-1]).T)
            assert cols.flags.c_contiguous
            back = rows.rows_back(cols, shape)
            np.testing.assert_array_equal(back, x)
            assert back.flags.c_contiguous
    x = rng.standard_normal((512, 27))
    for a in (x[:63], x[:, :1], rng.standard_normal((64, 49)), x.T.copy().T,
              x.astype(np.float16), x[0], np.zeros((0, 27))):
        assert rows.short_columns(XP, a) is None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_family_on_short_rows_with_nan_and_infinities(torch, dtype):
    """The transposed passes where a row holds NaN, +inf, -inf (masked) or is all -inf: the
    values PyTorch gives (NaN rows included), and the same for a non-contiguous input (which
    takes the passes on the rows)."""
    x = np.random.default_rng(9).standard_normal((128, 7)) * 5
    x[0, 3], x[1, 2], x[2, ::2], x[3], x[4, :2] = np.nan, np.inf, -np.inf, -np.inf, 1e30
    x = x.astype(dtype)
    rtol = 2e-6 if dtype == "float32" else 1e-13
    for f in ("softmax", "log_softmax"):
        want = to_np(getattr(torch, f)(torch.tensor(x), -1))
        with np.errstate(invalid="ignore"):
            got = to_np(getattr(ember, f)(ember.tensor(x), -1))
            got_t = to_np(getattr(ember, f)(ember.tensor(x.T.copy()).t(), -1))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
        np.testing.assert_allclose(got_t, want, rtol=rtol, atol=rtol)


def test_softmax_family_derivatives_on_the_fast_paths():
    """Finite differences (first and second order) in float64, on shapes where both row
    reductions take their fast path (last dim short, many rows)."""
    x = ember.tensor(np.random.default_rng(5).standard_normal((70, 5)), requires_grad=True)
    for f in (lambda t: ember.softmax(t, -1), lambda t: ember.log_softmax(t, -1),
              lambda t: ember.nn.functional.cross_entropy(t, ember.arange(70) % 5)):
        assert gradcheck(f, (x,))
        assert gradgradcheck(f, (x,))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_norms_match_torch_on_the_fast_paths(torch, dtype):
    """Layer norm (rows of the trailing dims), group norm, batch and instance norm (per
    channel: the spatial rows, then the batch), with an offset mean and a tiny and a huge
    scale, forward and every gradient."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((8, 6, 10, 12)) * 3 + 50
    x[0] *= 1e-4
    x[1] *= 1e4
    v, w, b = rng.standard_normal(x.shape), rng.standard_normal(6), rng.standard_normal(6)
    w2, b2 = rng.standard_normal((10, 12)), rng.standard_normal((10, 12))
    calls = [lambda F, t, w, b, w2, b2: F.layer_norm(t, (10, 12), w2, b2),
             lambda F, t, w, b, w2, b2: F.group_norm(t, 3, w, b),
             lambda F, t, w, b, w2, b2: F.batch_norm(t, None, None, w, b, True),
             lambda F, t, w, b, w2, b2: F.instance_norm(t, weight=w, bias=b),
             lambda F, t, w, b, w2, b2: F.batch_norm(t[:, :, 0, 0], None, None, w, b, True)]
    for call in calls:
        results = []
        for lib in (ember, torch):
            ts = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
                  for a in (x, w, b, w2, b2)]
            y = call(lib.nn.functional, *ts)
            vy = v.reshape(-1)[:y.numel()].reshape(tuple(y.shape))
            (y * lib.tensor(vy, dtype=y.dtype)).sum().backward()
            results.append([to_np(y)] + [to_np(t.grad) for t in ts if t.grad is not None])
        tol = 1e-4 if dtype == "float32" else 1e-10
        for a, c in zip(*results):
            np.testing.assert_allclose(a, c, rtol=tol, atol=tol * np.abs(c).max())
