"""More nn.functional names of issue 20 against PyTorch: fractional max pooling, pdist,
multilabel_margin_loss, gumbel_softmax, conv_tbc, grouped_mm, linear_cross_entropy, the
*_with_indices and upsample* forms, softmax without dim, the probes and the refusals."""
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from .test_nn_zoo_functional import _both, _close, _error, _f64

torch = pytest.importorskip("torch")

EF = ember.nn.functional
rng = np.random.default_rng(2)

FMP_CASES = [(2, (2, 3, 7, 9), 2, (3, 4)), (2, (2, 3, 7, 9), (3, 2), (5, 6)),
             (2, (3, 8, 8), 3, (4, 4)), (2, (1, 1, 5, 5), 2, (1, 1)),
             (3, (1, 2, 5, 6, 7), 2, (3, 3, 4)), (3, (2, 9, 8, 7), (2, 3, 2), (3, 2, 4))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(FMP_CASES)))
def test_fractional_max_pool_against_pytorch(case, dtype):
    nd, shape, k, out = FMP_CASES[case]
    batched = len(shape) == nd + 2
    samples = rng.uniform(0, 1, (shape[0] if batched else 1, shape[-nd - 1], nd))
    res = []
    for lib in (ember, torch):
        dt = getattr(lib, dtype)
        x = lib.tensor(np.random.default_rng(case).standard_normal(shape), dtype=dt,
                       requires_grad=True)
        fn = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
        o, i = fn(x, k, output_size=out, return_indices=True,
                  _random_samples=lib.tensor(samples, dtype=dt))
        w = lib.tensor(np.random.default_rng(1).standard_normal(tuple(o.shape)), dtype=dt)
        (o * w).sum().backward()
        res.append((o.detach().numpy(), i.numpy(), x.grad.numpy()))
    np.testing.assert_array_equal(res[0][0], res[1][0])
    np.testing.assert_array_equal(res[0][1], res[1][1])
    np.testing.assert_array_equal(res[0][2], res[1][2])


def test_fractional_max_pool_random_and_gradcheck():
    x = ember.randn(2, 3, 9, 9)
    o, i = EF.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True)
    assert o.shape == (2, 3, 4, 4) and i.dtype == ember.int64
    np.testing.assert_array_equal(o.numpy(), np.take_along_axis(
        x.numpy().reshape(2, 3, -1), i.numpy().reshape(2, 3, -1), 2).reshape(o.shape))
    samples = ember.tensor(rng.uniform(0, 1, (1, 2, 2)))
    xs = _f64(rng.permutation(50).reshape(1, 2, 5, 5) / 10.0)  # no ties
    def fn(a):
        return EF.fractional_max_pool2d(a, 2, output_size=3, _random_samples=samples)
    assert gradcheck(fn, xs)
    assert gradgradcheck(fn, xs)
    m = ember.nn.FractionalMaxPool2d(2, output_size=3, _random_samples=samples)
    assert repr(m) == repr(torch.nn.FractionalMaxPool2d(2, output_size=3)) == \
        "FractionalMaxPool2d()"
    np.testing.assert_array_equal(m(xs[0]).detach().numpy(), fn(xs[0]).detach().numpy())


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.fractional_max_pool2d(L.zeros(1, 2, 7, 9), 2),
    lambda L: L.nn.functional.fractional_max_pool2d(L.zeros(1, 2, 7, 9), 5, output_size=4),
    lambda L: L.nn.functional.fractional_max_pool3d(L.zeros(1, 2, 5, 6, 7), 4, output_size=3),
    lambda L: L.nn.functional.fractional_max_pool2d(L.zeros(1, 2, 7, 9), 2, output_size=3,
                                                    _random_samples=L.zeros(1, 2, 3)),
    lambda L: L.nn.functional.fractional_max_pool2d(
        L.zeros(1, 2, 7, 9, dtype=L.float64), 2, output_size=3, _random_samples=L.zeros(1, 2, 2)),
    lambda L: L.nn.FractionalMaxPool2d(2),
    lambda L: L.nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5),
    lambda L: L.nn.FractionalMaxPool2d(2, output_ratio=1.5),
])
def test_fractional_errors_match_pytorch(call):
    assert _error(ember, call) == _error(torch, call)


# --------------------------------------------------------------------------- pdist


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, 3, float("inf")])
def test_pdist_against_pytorch(p, dtype):
    x = rng.standard_normal((5, 3))
    x[1] = x[0]  # a zero distance
    x[2, 0] = x[0, 0]  # a zero component
    x[3, :2] = x[0, :2] + 1.0  # a tie for the max
    e, t = _both(lambda L, a: L.nn.functional.pdist(a, p), x, dtype=dtype)
    _close(e, t, dtype)


@pytest.mark.parametrize("p", [1.5, 2, 3])
def test_pdist_finite_differences(p):
    x = _f64(rng.standard_normal((4, 3)))
    assert gradcheck(lambda a: EF.pdist(a, p), x)
    assert gradgradcheck(lambda a: EF.pdist(a, p), x)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.pdist(L.zeros(2, 3, 4)),
    lambda L: L.nn.functional.pdist(L.zeros(3, 4, dtype=L.int64)),
    lambda L: L.nn.functional.pdist(L.zeros(3, 4), -1),
])
def test_pdist_errors(call):
    assert _error(ember, call) == _error(torch, call)


# --------------------------------------------------------------------------- multilabel margin

MLM_TARGET = np.array([[1, 2, -1, 0], [0, -1, 3, 3], [3, 3, 3, 3], [-1, 1, 2, 3]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_multilabel_margin_loss_against_pytorch(reduction, dtype):
    x = rng.standard_normal((4, 4))
    e, t = _both(lambda L, a: L.nn.functional.multilabel_margin_loss(
        a, L.tensor(MLM_TARGET), reduction=reduction), x, dtype=dtype)
    _close(e, t, dtype)
    e, t = _both(lambda L, a: L.nn.MultiLabelMarginLoss(reduction=reduction)(
        a, L.tensor(MLM_TARGET[0])), x[0], dtype=dtype)
    _close(e, t, dtype)
    assert repr(ember.nn.MultiLabelMarginLoss()) == repr(torch.nn.MultiLabelMarginLoss())


def test_multilabel_margin_loss_finite_differences():
    x = _f64(rng.standard_normal((4, 4)))
    def fn(a):
        return EF.multilabel_margin_loss(a, ember.tensor(MLM_TARGET))
    assert gradcheck(fn, x)
    assert gradgradcheck(fn, x)


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.multilabel_margin_loss(L.zeros(3, 4), L.zeros(1, 4,
                                                                           dtype=L.int64)),
    lambda L: L.nn.functional.multilabel_margin_loss(L.zeros(3, 4), L.full((3, 4), 5)),
    lambda L: L.nn.functional.multilabel_margin_loss(L.zeros(3, 4), L.zeros(3, 4)),
    lambda L: L.nn.functional.multilabel_margin_loss(L.zeros(2, 3, 4),
                                                     L.zeros(2, 3, 4, dtype=L.int64)),
    lambda L: L.nn.functional.multilabel_margin_loss(L.zeros(3, 4, dtype=L.int64),
                                                     L.zeros(3, 4, dtype=L.int64)),
    lambda L: L.nn.functional.multilabel_margin_loss(L.zeros(3, 4),
                                                     L.zeros(3, 4, dtype=L.int64),
                                                     reduction="foo"),
])
def test_multilabel_margin_errors(call):
    assert _error(ember, call) == _error(torch, call)


# --------------------------------------------------------------------------- the rest


def test_gumbel_softmax():
    logits = ember.randn(64, 5, requires_grad=True)
    soft = EF.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).detach().numpy(), 1.0, rtol=1e-6)
    hard = EF.gumbel_softmax(logits, hard=True)
    h = hard.detach().numpy()
    assert set(np.unique(h)) <= {0.0, 1.0} and (h.sum(-1) == 1).all()
    w = ember.randn(64, 5)
    (hard * w).sum().backward()  # straight through: the soft sample's gradient
    assert logits.grad is not None and np.abs(logits.grad.numpy()).sum() > 0
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        EF.gumbel_softmax(logits, eps=1e-3)
    counts = np.bincount(EF.gumbel_softmax(ember.tensor([[0.0, np.log(3.0)]]).expand(
        4000, 2), hard=True).argmax(-1).numpy(), minlength=2)
    assert abs(counts[1] / 4000 - 0.75) < 0.04  # argmax of Gumbel-perturbed logits ~ softmax


def test_conv_tbc_grouped_mm_linear_cross_entropy():
    x, w, b = rng.standard_normal((5, 2, 3)), rng.standard_normal((3, 3, 4)), \
        rng.standard_normal(4)
    e, t = _both(lambda L, *a: L.nn.functional.conv_tbc(*a, 1), x, w, b)
    _close(e, t, "float64")
    assert gradgradcheck(lambda *a: EF.conv_tbc(*a, 1), _f64(x, w, b))
    a3, b3 = rng.standard_normal((2, 8, 16)), rng.standard_normal((2, 16, 8))
    e, t = _both(lambda L, a, b: L.nn.functional.grouped_mm(a, b), a3, b3, dtype="float32")
    _close(e, t, "float32")
    offs = np.array([8, 16, 24], np.int32)
    for sa, sb in (((24, 16), (3, 16, 8)), ((8, 24), (24, 16)), ((3, 8, 16), (16, 24))):
        e, t = _both(lambda L, a, b: L.nn.functional.grouped_mm(a, b, offs=L.tensor(offs)),
                     rng.standard_normal(sa), rng.standard_normal(sb), dtype="float32")
        _close(e, t, "float32")
    xs, ws = rng.standard_normal((6, 5)), rng.standard_normal((4, 5))
    target = np.array([0, 1, 2, 3, -100, 1])
    for kw in ({}, {"ignore_index": 1, "label_smoothing": 0.1, "reduction": "sum"}):
        e, t = _both(lambda L, a, b: L.nn.functional.linear_cross_entropy(
            a, b, L.tensor(np.abs(target) % 4 if kw else target), **kw), xs, ws)
        _close(e, t, "float64")


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.grouped_mm(L.zeros(4, 8), L.zeros(8, 6)),
    lambda L: L.nn.functional.grouped_mm(L.zeros(2, 8, 16, dtype=L.float64),
                                         L.zeros(2, 16, 8, dtype=L.float64)),
    lambda L: L.nn.functional.grouped_mm(L.zeros(2, 8, 16), L.zeros(2, 16, 8),
                                         bias=L.zeros(2, 8)),
    lambda L: L.nn.functional.conv_tbc(L.zeros(5, 2, 3), L.zeros(3, 2, 4), L.zeros(4)),
    lambda L: L.nn.functional.conv_tbc(L.zeros(5, 2), L.zeros(3, 2, 4), L.zeros(4)),
    lambda L: L.nn.functional.conv_tbc(L.zeros(5, 2, 3), L.zeros(3, 3, 4), L.zeros(3)),
])
def test_more_errors(call):
    assert _error(ember, call) == _error(torch, call)


def test_scaled_mm_refused():
    F = ember.nn.functional
    for fn in (F.scaled_mm, F.scaled_grouped_mm):
        with pytest.raises(NotImplementedError, match="float8"):
            fn(ember.zeros(4, 8), ember.zeros(8, 4), ember.ones(()), F.ScalingType.TensorWise,
               ember.ones(()), F.ScalingType.TensorWise)
    assert [m.name for m in F.ScalingType] == list(torch.nn.functional.ScalingType.__members__)
    assert [m.name for m in F.SwizzleType] == list(torch.nn.functional.SwizzleType.__members__)


def test_with_indices_upsample_and_probes():
    x = rng.standard_normal((1, 2, 6, 6))
    for name, args in (("max_pool2d_with_indices", (2,)), ("max_pool1d_with_indices", (2,)),
                       ("adaptive_max_pool2d_with_indices", (3,)),
                       ("adaptive_max_pool1d_with_indices", (3,))):
        xx = x[0] if "1d" in name else x
        e = getattr(EF, name)(ember.tensor(xx), *args)
        t = getattr(torch.nn.functional, name)(torch.tensor(xx), *args)
        for a, b in zip(e, t):
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    for name, kw in (("upsample", {"scale_factor": 2, "mode": "bilinear"}),
                     ("upsample_nearest", {"scale_factor": 2}),
                     ("upsample_bilinear", {"size": (5, 7)})):
        with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
            e = getattr(EF, name)(ember.tensor(x), **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = getattr(torch.nn.functional, name)(torch.tensor(x), **kw)
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)
    assert not EF.has_torch_function((ember.zeros(1),))
    assert not EF.has_torch_function_unary(ember.zeros(1))
    assert not EF.has_torch_function_variadic(ember.zeros(1), 2)
    EF.assert_int_or_pair(3, "k", "{} bad")
    with pytest.raises(AssertionError, match="k bad"):
        EF.assert_int_or_pair([3], "k", "{} bad")
    e = EF.native_channel_shuffle(ember.tensor(x), 2)
    np.testing.assert_array_equal(e.numpy(), torch.nn.functional.native_channel_shuffle(
        torch.tensor(x), 2).numpy())


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (2, 3, 4), (2, 3, 4, 5)])
def test_softmax_without_dim(name, shape):
    x = rng.standard_normal(shape)
    with pytest.warns(UserWarning, match=f"Implicit dimension choice for {name} has been "
                                         "deprecated"):
        e = getattr(EF, name)(ember.tensor(x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = getattr(torch.nn.functional, name)(torch.tensor(x))
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


def _vmapped_equals_loop(fn, xs):
    v = ember.func.vmap(fn)(ember.tensor(xs))
    ref = np.stack([fn(ember.tensor(a)).numpy() for a in xs])
    np.testing.assert_allclose(v.numpy(), ref, rtol=1e-12, atol=1e-12)


def test_forward_mode_and_vmap():
    # composed of ember's ops: forward-mode AD and vmap come with them (PyTorch has no
    # forward AD for grid_sampler; the tangents are checked by central differences)
    r = np.random.default_rng(5)
    x, tx = (ember.tensor(r.standard_normal((2, 3, 4, 5))) for _ in range(2))
    g, tg = (ember.tensor(r.uniform(-0.9, 0.9, (2, 3, 4, 2))) for _ in range(2))
    def grid(a, b):
        return EF.grid_sample(a, b, mode="bicubic", padding_mode="reflection",
                              align_corners=False)
    _, tangent = ember.func.jvp(grid, (x, g), (tx, tg))
    h = 1e-6
    fd = (grid(x + h * tx, g + h * tg) - grid(x - h * tx, g - h * tg)) / (2 * h)
    np.testing.assert_allclose(tangent.numpy(), fd.numpy(), atol=1e-7)
    lp = ember.tensor(r.standard_normal((6, 2, 4))).log_softmax(-1)
    t = ember.tensor(r.standard_normal((6, 2, 4)))
    def ctc(a):
        return EF.ctc_loss(a, ember.tensor([[1, 2], [1, 1]]), ember.tensor([6, 5]),
                           ember.tensor([2, 2]))
    _, tangent = ember.func.jvp(ctc, (lp,), (t,))
    np.testing.assert_allclose(tangent.item(), ((ctc(lp + h * t) - ctc(lp - h * t)) /
                                                (2 * h)).item(), rtol=1e-6)
    _vmapped_equals_loop(EF.pdist, r.standard_normal((3, 4, 2)))
    _vmapped_equals_loop(lambda a: EF.grid_sample(a, g, align_corners=True),
                         r.standard_normal((3, 2, 3, 4, 5)))
    target = ember.tensor([[1, 2, -1, 0]] * 4)
    _vmapped_equals_loop(lambda a: EF.multilabel_margin_loss(a, target),
                         r.standard_normal((3, 4, 4)))


@pytest.mark.parametrize("p", [0, 0.5, 1, 1.5, 2, float("inf")])
def test_pdist_op_equals_its_composition_and_pytorch(p):
    """The row-by-row op (PdistBackward0) against the composition of ember's ops that serves
    its second derivatives, and against PyTorch, on rows with repeats and shared components."""
    from ember.nn.functional import more
    x = rng.standard_normal((23, 7))
    x[5] = x[2]
    x[9, :3] = x[4, :3]
    g = rng.standard_normal(23 * 22 // 2)
    a = ember.tensor(x, requires_grad=True)
    fast = EF.pdist(a, p)
    assert fast.grad_fn.name() == "PdistBackward0"
    slow = more._pdist_composite(a, float(p))
    np.testing.assert_allclose(fast.detach().numpy(), slow.detach().numpy(), rtol=1e-13)
    got, = ember.autograd.grad(fast, a, ember.tensor(g))
    want, = ember.autograd.grad(slow, a, ember.tensor(g))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    t = torch.tensor(x, requires_grad=True)
    ref = torch.nn.functional.pdist(t, p)
    assert ref.grad_fn.name() == "PdistBackward0"
    np.testing.assert_allclose(fast.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(got.numpy(), torch.autograd.grad(ref, t, torch.tensor(g))[0],
                               rtol=1e-10, atol=1e-12)
