"""The nn.functional names added for issue 20 against PyTorch: grid_sample/affine_grid,
ctc_loss, fractional max pooling, pdist, multilabel_margin_loss, gumbel_softmax, conv_tbc,
grouped_mm, the *_with_indices and upsample* forms, softmax without dim; values and
gradients (vs PyTorch, and by finite differences in float64, to second order), errors."""
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

EF, TF = ember.nn.functional, torch.nn.functional
rng = np.random.default_rng(0)


def _both(fn, *arrays, dtype="float64", seed=1):
    """``fn(lib, *tensors)`` for ember and PyTorch: outputs and the input gradients of a
    random vector-Jacobian product."""
    out = []
    for lib in (ember, torch):
        xs = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in arrays]
        y = fn(lib, *xs)
        w = lib.tensor(np.random.default_rng(seed).standard_normal(tuple(y.shape)),
                       dtype=y.dtype)
        (y * w).sum().backward()
        out.append((y.detach().numpy(), [None if x.grad is None else x.grad.numpy()
                                         for x in xs]))
    return out


def _close(e, t, dtype):
    tol = 1e-10 if dtype == "float64" else 1e-4
    np.testing.assert_allclose(e[0], t[0], rtol=tol, atol=tol)
    for ge, gt in zip(e[1], t[1]):
        np.testing.assert_allclose(ge, gt, rtol=tol, atol=tol)


def _f64(*arrays):
    return [ember.tensor(a, dtype=ember.float64, requires_grad=True) for a in arrays]


# --------------------------------------------------------------------------- grid_sample

X2 = rng.standard_normal((2, 3, 4, 5))
G2 = rng.uniform(-1.3, 1.3, (2, 3, 4, 2))
G2[0, 0, 0] = (1.0, -1.0)  # on the corners: the clip's gradient is 0 there (PyTorch's)
X3 = rng.standard_normal((2, 2, 3, 4, 5))
G3 = rng.uniform(-1.3, 1.3, (2, 2, 3, 2, 3))
GRID_CASES = [(nd, mode, pad, ac) for nd in (2, 3) for mode in ("bilinear", "nearest", "bicubic")
              for pad in ("zeros", "border", "reflection") for ac in (False, True)
              if not (nd == 3 and mode == "bicubic")]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("nd,mode,pad,ac", GRID_CASES)
def test_grid_sample_against_pytorch(nd, mode, pad, ac, dtype):
    x, g = (X2, G2) if nd == 2 else (X3, G3)
    e, t = _both(lambda L, a, b: L.nn.functional.grid_sample(
        a, b, mode=mode, padding_mode=pad, align_corners=ac), x, g, dtype=dtype)
    _close(e, t, dtype)


@pytest.mark.parametrize("mode,pad,ac", [("bilinear", "zeros", False),
                                         ("bilinear", "reflection", True),
                                         ("bicubic", "border", False),
                                         ("bicubic", "reflection", True)])
def test_grid_sample_finite_differences(mode, pad, ac):
    x = rng.standard_normal((1, 2, 3, 4))
    g = rng.uniform(-0.9, 0.9, (1, 2, 3, 2))  # away from the kinks at pixel centres
    def fn(a, b):
        return EF.grid_sample(a, b, mode=mode, padding_mode=pad, align_corners=ac)
    assert gradcheck(fn, _f64(x, g))
    assert gradgradcheck(fn, _f64(x, g))


def test_affine_grid_against_pytorch_and_finite_differences():
    for size in ((2, 1, 3, 4), (2, 3, 1, 5), (2, 1, 2, 3, 4)):
        theta = rng.standard_normal((2, len(size) - 2, len(size) - 1))
        for ac in (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                e, t = _both(lambda L, th: L.nn.functional.affine_grid(th, size, ac), theta)
            _close(e, t, "float64")
    fn = lambda th: EF.affine_grid(th, (2, 1, 3, 4), align_corners=False)  # noqa: E731
    assert gradcheck(fn, _f64(rng.standard_normal((2, 2, 3))))
    assert gradgradcheck(fn, _f64(rng.standard_normal((2, 2, 3))))


def _error(lib, fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(lib)
        except Exception as exc:  # noqa: BLE001 (the comparison is the point)
            return type(exc).__name__, str(exc)
    return None


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 1, 1, 2), mode="x"),
    lambda L: L.nn.functional.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 1, 1, 2),
                                          padding_mode="x"),
    lambda L: L.nn.functional.grid_sample(L.zeros(1, 1, 2, 2, 2), L.zeros(1, 1, 1, 1, 3),
                                          mode="bicubic", align_corners=False),
    lambda L: L.nn.functional.grid_sample(L.zeros(2, 1, 2, 2), L.zeros(1, 1, 1, 2)),
    lambda L: L.nn.functional.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 1, 1, 1)),
    lambda L: L.nn.functional.grid_sample(L.zeros(1, 1, 0, 2), L.zeros(1, 1, 1, 2)),
    lambda L: L.nn.functional.grid_sample(L.zeros(1, 1, 2, 2), L.zeros(1, 1, 1, 2,
                                                                       dtype=L.float64)),
    lambda L: L.nn.functional.affine_grid(L.zeros(2, 2, 3, dtype=L.int64), (2, 1, 3, 4)),
    lambda L: L.nn.functional.affine_grid(L.zeros(2, 2, 3), (2, 1, 3, 4, 5)),
    lambda L: L.nn.functional.affine_grid(L.zeros(2, 2, 3), (2, 1, 3)),
    lambda L: L.nn.functional.affine_grid(L.zeros(2, 2, 3), (2, 1, 0, 4)),
])
def test_grid_errors_match_pytorch(call):
    assert _error(ember, call) == _error(torch, call)


def test_grid_align_corners_warning():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior"):
            lib.nn.functional.grid_sample(lib.zeros(1, 1, 2, 2), lib.zeros(1, 1, 1, 2))


# --------------------------------------------------------------------------- ctc_loss

LP = rng.standard_normal((6, 3, 5))
CTC_CASES = [
    (np.array([[1, 2, 2], [1, 1, 0], [3, 4, 1]]), [6, 5, 4], [3, 2, 2]),
    (np.array([[1, 1, 1], [2, 2, 2], [3, 3, 3]]), [4, 5, 2], [3, 3, 1]),  # one impossible
    (np.array([1, 2, 1, 1, 3]), [6, 6, 3], [2, 2, 1]),  # concatenated targets
    (np.array([[1, 2, 2], [1, 1, 0], [3, 4, 1]]), [6, 0, 4], [3, 0, 0]),  # empty ones
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", range(len(CTC_CASES)))
def test_ctc_loss_against_pytorch(case, reduction, zero_infinity, dtype):
    tg, il, tl = CTC_CASES[case]
    e, t = _both(lambda L, x: L.nn.functional.ctc_loss(
        x.log_softmax(-1), L.tensor(tg), L.tensor(il), L.tensor(tl), reduction=reduction,
        zero_infinity=zero_infinity), LP, dtype=dtype)
    np.testing.assert_allclose(e[0], t[0], rtol=1e-5 if dtype == "float32" else 1e-12)
    finite = np.isfinite(t[1][0])
    assert (np.isfinite(e[1][0]) == finite).all()
    np.testing.assert_allclose(e[1][0][finite], t[1][0][finite], atol=1e-5 if dtype ==
                               "float32" else 1e-12)


def test_ctc_loss_finite_differences_and_module():
    tg, il, tl = CTC_CASES[0]
    def fn(x):
        return EF.ctc_loss(x, ember.tensor(tg), ember.tensor(il), ember.tensor(tl))
    lp = LP - np.log(np.exp(LP).sum(-1, keepdims=True))
    assert gradcheck(fn, _f64(lp))
    assert gradgradcheck(fn, _f64(lp))
    m = ember.nn.CTCLoss(blank=0, reduction="sum", zero_infinity=True)
    assert repr(m) == repr(torch.nn.CTCLoss()) == "CTCLoss()"
    e = m(ember.tensor(lp), ember.tensor(tg), ember.tensor(il), ember.tensor(tl))
    t = torch.nn.CTCLoss(reduction="sum", zero_infinity=True)(
        torch.tensor(lp), torch.tensor(tg), torch.tensor(il), torch.tensor(tl))
    np.testing.assert_allclose(e.item(), t.item(), rtol=1e-12)
    unbatched = [lib.nn.functional.ctc_loss(lib.tensor(lp[:, 0]), lib.tensor([1, 2]),
                                            lib.tensor(6), lib.tensor(2), reduction="none")
                 for lib in (ember, torch)]
    assert unbatched[0].shape == unbatched[1].shape
    np.testing.assert_allclose(unbatched[0].numpy(), unbatched[1].numpy(), rtol=1e-12)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.ctc_loss(L.zeros(5, 2, 4), L.ones(2, 2, dtype=L.int64),
                                       L.tensor([6, 4]), L.tensor([2, 2])),
    lambda L: L.nn.functional.ctc_loss(L.zeros(5, 2, 4), L.ones(2, 2, dtype=L.int64),
                                       L.tensor([5, 4]), L.tensor([3, 2])),
    lambda L: L.nn.functional.ctc_loss(L.zeros(5, 2, 4), L.ones(2, 2, dtype=L.int64),
                                       L.tensor([5, 4]), L.tensor([-1, 2])),
    lambda L: L.nn.functional.ctc_loss(L.zeros(5, 2, 4), L.ones(2, 2, dtype=L.int64),
                                       L.tensor([5]), L.tensor([2, 2])),
    lambda L: L.nn.functional.ctc_loss(L.zeros(5, 2, 4), L.ones(2, 2, dtype=L.int64),
                                       L.tensor([5, 4]), L.tensor([2, 2]), blank=4),
    lambda L: L.nn.functional.ctc_loss(L.zeros(5, 2, 4, dtype=L.int64),
                                       L.ones(2, 2, dtype=L.int64), L.tensor([5, 4]),
                                       L.tensor([2, 2])),
])
def test_ctc_errors_match_pytorch(call):
    assert _error(ember, call) == _error(torch, call)


@pytest.mark.parametrize("seed", range(6))
def test_ctc_op_equals_the_recursion_written_with_ops(seed):
    """The op's kernels (alpha forward, its adjoint backward) against the same recursion
    recorded as ember ops: random lengths, repeated labels, impossible and empty samples."""
    from ember.nn.functional import ctc
    r = np.random.default_rng(seed)
    frames, batch, classes, width = int(r.integers(1, 12)), int(r.integers(1, 5)), 4, 4
    labels = r.integers(1, classes, (batch, width))
    if seed % 2:
        labels[:, 1:] = labels[:, :1]  # repeats: skips barred, some samples impossible
    in_len = r.integers(0, frames + 1, batch)
    tg_len = r.integers(0, width + 1, batch)
    lp = ember.tensor(r.standard_normal((frames, batch, classes))).log_softmax(-1)
    lp = lp.detach().requires_grad_()
    ext = np.zeros((batch, 2 * width + 1), np.int64)
    ext[:, 1::2] = labels
    skip = np.zeros(ext.shape, bool)
    skip[:, 2:] = (ext[:, 2:] != 0) & (ext[:, 2:] != ext[:, :-2])
    fast = ctc._ctc(lp, ext, skip, in_len, tg_len, False)[0]
    slow = ctc._nll_composite(lp, ext, skip, in_len, tg_len)
    assert fast.grad_fn.name() == "CtcLossBackward0"
    impossible = slow.detach().numpy() > 1e29  # (its best path carries the large "log 0")
    assert (np.isinf(fast.detach().numpy()) == impossible).all()
    np.testing.assert_allclose(fast.detach().numpy()[~impossible],
                               slow.detach().numpy()[~impossible], rtol=1e-13)
    g = ember.tensor(r.standard_normal(batch) * ~impossible)
    got, = ember.autograd.grad(fast, lp, g)
    want, = ember.autograd.grad(slow, lp, g)
    np.testing.assert_allclose(got.numpy()[:, ~impossible], want.numpy()[:, ~impossible],
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_none_grad_fn_and_impossible_gradient_match_pytorch(zero_infinity):
    tg, il, tl = CTC_CASES[1]  # one impossible sample
    names, grads = [], []
    for lib in (ember, torch):
        x = lib.tensor(LP, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(x.log_softmax(-1), lib.tensor(tg), lib.tensor(il),
                                          lib.tensor(tl), reduction="none",
                                          zero_infinity=zero_infinity)
        names.append(loss.grad_fn.name())
        grads.append(lib.autograd.grad(loss.sum(), x)[0].numpy())
    assert names[0] == names[1] == ("WhereBackward0" if zero_infinity else "CtcLossBackward0")
    assert (np.isfinite(grads[0]) == np.isfinite(grads[1])).all()
    finite = np.isfinite(grads[1])
    np.testing.assert_allclose(grads[0][finite], grads[1][finite], atol=1e-12)
