"""nll_loss's kernel (ops/nn/loss.py): the picks by a flat index and each target's weight by a
gather from a table with 0 at the ignored class, for every kind of ``ignore_index`` (in the
classes, -1, PyTorch's -100, far negative, past the classes, absent), with and without class
weights, every reduction, inputs of 1 to 5 dims, float32 and float64; against PyTorch, and by
finite differences. Also the ignored targets whose pick or incoming gradient is not finite
(PyTorch's loss and gradient there are 0)."""
import numpy as np
import pytest

import ember

from ..conftest import to_np

DTYPES = [np.float32, np.float64]
REDUCTIONS = ["none", "mean", "sum"]
IGNORES = [1, -1, -100, -5000, 7]  # (7: past the 4 classes)
SHAPES = [(4,), (9, 4), (3, 4, 5), (2, 4, 3, 2), (2, 4, 2, 1, 3)]


def _case(shape, ignore_index, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = rng.integers(0, shape[0 if len(shape) == 1 else 1], tshape)
    if t.ndim:
        t.reshape(-1)[::3] = ignore_index  # some ignored, some kept
    else:
        t = np.array(3)  # (one target: kept; test_one_ignored_target has it ignored)
    return x, t


def _close(a, b, dtype):
    tol = 2e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(to_np(a), to_np(b), rtol=tol, atol=tol)


def _both(torch, f, x, t, dtype, weight, **kw):
    """``f``'s loss and input gradient (under a weighted sum of the loss) in ember and torch."""
    out = []
    for L in (ember, torch):
        xt = L.tensor(x.astype(dtype), requires_grad=True)
        w = None if weight is None else L.tensor(np.asarray(weight, dtype))
        loss = getattr(L.nn.functional, f)(xt, L.tensor(t), w, **kw)
        g = np.random.default_rng(1).standard_normal(tuple(loss.shape)).astype(dtype)
        (loss * L.tensor(g)).sum().backward()
        out.append((loss, xt.grad))
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignore_index", IGNORES + [None])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_nll_against_pytorch(torch, dtype, reduction, ignore_index, weighted, shape):
    x, t = _case(shape, -100 if ignore_index is None else ignore_index)
    weight = [0.5, 2.0, 0.0, 1.25] if weighted else None  # (a class of weight 0 too)
    kw = dict(reduction=reduction)
    if ignore_index is not None:
        kw["ignore_index"] = ignore_index
    else:
        t = np.abs(t) % 4  # no target ignored: the shorter path
    (le, ge), (lt, gt) = _both(torch, "nll_loss", x, t, dtype, weight, **kw)
    _close(le, lt, dtype)
    _close(ge, gt, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignore_index", [2, -1, -100])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("shape", [(9, 4), (2, 4, 3, 2)])
def test_cross_entropy_weighted_with_ignore_against_pytorch(torch, dtype, reduction,
                                                            ignore_index, smoothing, shape):
    x, t = _case(shape, ignore_index, seed=2)
    (le, ge), (lt, gt) = _both(torch, "cross_entropy", x, t, dtype, [0.5, 2.0, 1.5, 1.0],
                               reduction=reduction, ignore_index=ignore_index,
                               label_smoothing=smoothing)
    _close(le, lt, dtype)
    _close(ge, gt, dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignore_index", [1, -1, -100, 7])
@pytest.mark.parametrize("bad", [-np.inf, np.inf, np.nan])
def test_ignored_targets_whose_pick_is_not_finite(torch, reduction, ignore_index, bad):
    """An ignored target reads some entry of its row (times a weight 0): not finite there,
    the loss must still leave it out, as PyTorch does."""
    x, t = _case((3000, 4), ignore_index)  # (large: the bit-mask select path too)
    x[:] = bad  # every entry but the kept targets' picks
    kept = t != ignore_index
    x[np.flatnonzero(kept), t[kept]] = np.random.default_rng(3).standard_normal(kept.sum())
    for weight in (None, [0.5, 2.0, 1.5, 1.0]):
        (le, ge), (lt, gt) = _both(torch, "nll_loss", x, t, np.float64, weight,
                                   reduction=reduction, ignore_index=ignore_index)
        assert np.isfinite(to_np(le)).all()
        _close(le, lt, np.float64)
        _close(ge, gt, np.float64)
        if reduction == "none":  # +0 at the ignored targets, as PyTorch's
            assert not np.signbit(to_np(le)[~kept]).any()


@pytest.mark.parametrize("ignore_index", [1, -1])
@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_ignored_targets_whose_incoming_gradient_is_not_finite(torch, ignore_index, bad):
    x, t = _case((3000, 4), ignore_index)
    grads = []
    for L in (ember, torch):
        xt = L.tensor(x, requires_grad=True)
        loss = L.nn.functional.nll_loss(xt, L.tensor(t), L.tensor([0.5, 2.0, 1.5, 1.0],
                                                                   dtype=L.float64),
                                        ignore_index=ignore_index, reduction="none")
        loss.backward(L.tensor(np.where(t == ignore_index, bad, 1.0)))
        grads.append(to_np(xt.grad))
    np.testing.assert_array_equal(*grads)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignore_index", [1, -1, 7])
def test_one_ignored_target(torch, reduction, ignore_index):
    x = np.arange(4.0)
    for weight in (None, [0.5, 2.0, 1.5, 1.0]):
        (le, ge), (lt, gt) = _both(torch, "nll_loss", x, np.array(ignore_index), np.float64,
                                   weight, reduction=reduction, ignore_index=ignore_index)
        np.testing.assert_array_equal(to_np(le), to_np(lt))
        np.testing.assert_array_equal(to_np(ge), to_np(gt))


@pytest.mark.parametrize("weighted", [False, True])
def test_every_target_ignored(torch, weighted):
    for L in (ember, torch):
        x = L.zeros(3000, 4, requires_grad=True)
        w = L.tensor([0.5, 2.0, 1.5, 1.0]) if weighted else None
        loss = L.nn.functional.nll_loss(x, L.full((3000,), 1), w, ignore_index=1)
        loss.backward()
        assert np.isnan(loss.item()) and (to_np(x.grad) == 0).all()


def test_class_weights_summing_to_zero_give_nan_as_pytorch(torch):
    x, t = _case((6, 4), 1)
    t[t != 1] = 2
    (le, ge), (lt, gt) = _both(torch, "nll_loss", x, t, np.float64, [1.0, 1.0, 0.0, 1.0],
                               ignore_index=1)
    assert np.isnan(to_np(le)) and np.isnan(to_np(lt))
    np.testing.assert_array_equal(np.isnan(to_np(ge)), np.isnan(to_np(gt)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_non_contiguous_input(torch, dtype):
    x, t = _case((9, 4), -1)
    xs = np.ascontiguousarray(x.T).T  # (9, 4) with strides of a transpose
    (le, ge), (lt, gt) = _both(torch, "nll_loss", xs, t, dtype, [0.5, 2.0, 1.5, 1.0],
                               ignore_index=-1, reduction="none")
    _close(le, lt, dtype)
    _close(ge, gt, dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ignore_index", [1, -1, -5000, 7, None])
@pytest.mark.parametrize("shape", [(4,), (5, 4), (2, 4, 3, 2)])
def test_nll_gradients_by_finite_differences(reduction, ignore_index, shape):
    x, t = _case(shape, -100 if ignore_index is None else ignore_index, seed=4)
    if ignore_index is None:
        t, ignore_index = np.abs(t) % 4, -100
    xe = ember.tensor(x, requires_grad=True)
    te, w = ember.tensor(t), ember.tensor([0.5, 2.0, 1.5, 1.0], dtype=ember.float64)
    for weight in (None, w):
        def f(x, weight=weight):
            return ember.nn.functional.nll_loss(x, te, weight, ignore_index=ignore_index,
                                                reduction=reduction)
        assert ember.autograd.gradcheck(f, (xe,))
        assert ember.autograd.gradgradcheck(f, (xe,))


@pytest.mark.parametrize("shape, tshape", [((2, 3, 0), (2, 0)), ((0, 3), (0,)), ((0, 3, 2), (0, 2)),
                                           ((2, 3, 0, 0), (2, 0, 0)), ((2, 0), (2,))])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("kw", [{}, {"weight": True}, {"ignore_index": 1}])
def test_no_targets(torch, shape, tshape, reduction, kw):
    """Empty inputs and targets (the flat index of no targets): PyTorch's results, or its
    error (a target 0 of no classes)."""
    out = []
    for L in (ember, torch):
        x = L.zeros(shape, requires_grad=True)
        k = dict(kw, weight=L.ones(shape[1])) if "weight" in kw else kw
        try:
            loss = L.nn.functional.nll_loss(x, L.zeros(tshape, dtype=L.int64),
                                            reduction=reduction, **k)
            loss.sum().backward()
            out.append((tuple(loss.shape), to_np(loss).tolist(), tuple(x.grad.shape)))
        except (RuntimeError, IndexError) as e:
            out.append(type(e))
    assert str(out[0]) == str(out[1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("ignore_index", [-1, 5, 30, -100, None])
def test_rows_without_weights_equal_the_weighted_path(torch, dtype, reduction, ignore_index):
    """(N, C) rows without class weights (a language model's loss: makemore's (512, 27) with
    -1 past each word) take the path without the weight table: the loss and gradient equal,
    bit for bit, the general path's with weights of ones, and PyTorch's; also with an
    incoming gradient that is not 1."""
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((512, 27)) * 3).astype(dtype)
    t = rng.integers(0, 27, 512)
    if ignore_index is not None:
        t[rng.random(512) < 0.3] = ignore_index
    kw = {} if ignore_index is None else {"ignore_index": ignore_index}
    results = []
    for L, weight in ((ember, None), (ember, np.ones(27, dtype)), (torch, None)):
        xt = L.tensor(x, requires_grad=True)
        w = None if weight is None else L.tensor(weight)
        loss = L.nn.functional.cross_entropy(xt, L.tensor(t), w, reduction=reduction, **kw)
        (loss * 0.75).backward()
        results.append((to_np(loss), to_np(xt.grad)))
    (a, ga), (b, gb), (c, gc) = results
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ga, gb)
    _close(a, c, dtype)
    _close(ga, gc, dtype)
