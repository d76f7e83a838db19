"""``ember.nn.functional`` against PyTorch.

The primitives (activations, convolution) run through the spec table: gradcheck and
gradgradcheck in float64, and values, dtypes, grad_fn names and vector-Jacobian products against
PyTorch. The composite functions are compared with PyTorch on the same inputs: outputs and
gradients to float32 tolerance.
"""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

from .opspec import Spec, op_tests

F = "nn.functional"
ACT = [((2, 3),), ((4,),)]


def fn(L):
    return L.nn.functional


def conv_spec(name, f, xs, ws, bs=None, **kw):
    shapes = [(xs, ws) + ((bs,) if bs else ())]
    if bs:
        return Spec(name, lambda L, x, w, b: f(fn(L))(x, w, b, **kw), shapes, tol=20)
    return Spec(name, lambda L, x, w: f(fn(L))(x, w, **kw), shapes, tol=20)


def c1(m):
    return m.conv1d


def c2(m):
    return m.conv2d


def ct2(m):
    return m.conv_transpose2d


def ct1(m):
    return m.conv_transpose1d


SPECS = [
    Spec("relu", lambda L, a: fn(L).relu(a), ACT),
    Spec("leaky_relu", lambda L, a: fn(L).leaky_relu(a, 0.2), ACT),
    Spec("elu", lambda L, a: fn(L).elu(a, alpha=1.5), ACT),
    Spec("gelu", lambda L, a: fn(L).gelu(a), ACT),
    Spec("gelu_tanh", lambda L, a: fn(L).gelu(a, approximate="tanh"), ACT),
    Spec("silu", lambda L, a: fn(L).silu(a), ACT),
    Spec("mish", lambda L, a: fn(L).mish(a), ACT),
    Spec("softplus", lambda L, a: fn(L).softplus(a), ACT),
    Spec("softplus_beta", lambda L, a: fn(L).softplus(a, beta=2.0, threshold=1.5), ACT),
    Spec("hardtanh", lambda L, a: fn(L).hardtanh(a, -0.5, 1.0), ACT),
    conv_spec("conv1d", c1, (2, 3, 7), (4, 3, 3), (4,)),
    conv_spec("conv1d_stride_pad_dil", c1, (2, 2, 9), (3, 2, 2), (3,), stride=2, padding=1,
              dilation=2),
    conv_spec("conv1d_same", c1, (1, 2, 6), (2, 2, 4), padding="same"),
    conv_spec("conv2d", c2, (2, 3, 5, 4), (2, 3, 3, 2), (2,)),
    conv_spec("conv2d_nobias_stride", c2, (1, 2, 6, 5), (3, 2, 2, 3), stride=(2, 1),
              padding=(1, 2)),
    conv_spec("conv2d_groups_dil", c2, (2, 4, 6, 6), (6, 2, 2, 2), (6,), groups=2, dilation=2,
              padding=1),
    conv_spec("conv2d_same", c2, (1, 2, 5, 5), (2, 2, 2, 3), padding="same", dilation=(1, 2)),
    conv_spec("conv2d_valid", c2, (1, 1, 4, 4), (1, 1, 3, 3), padding="valid"),
    conv_spec("conv_transpose2d", ct2, (2, 3, 3, 4), (3, 2, 2, 3), (2,), stride=2, padding=1,
              output_padding=1),
    conv_spec("conv_transpose2d_groups", ct2, (1, 4, 3, 3), (4, 1, 3, 2), groups=2, dilation=2),
    conv_spec("conv_transpose1d", ct1, (2, 2, 5), (2, 3, 3), (3,), stride=3),
]



def conv_weight_grad(L, x, w):
    """The weight gradient with ``create_graph=True`` (the convolution's double backward)."""
    y = L.nn.functional.conv2d(x, w, stride=2, padding=1, groups=2)
    return L.autograd.grad((y * y).sum(), w, create_graph=True)[0]


SPECS.append(Spec("conv2d_weight_grad", conv_weight_grad, [((2, 4, 5, 5), (4, 2, 3, 2))],
                  tol=20))

test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


# --------------------------------------------------------------------------- composites

def _rand(shape, seed, lo=-2.0, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, size=shape)


def compare(torch, f, arrays, ints=(), dtype="float32", grads=True, tol=None):
    """Run ``f(lib, *tensors)`` in both libraries; compare outputs and input gradients."""
    results = []
    for L in (ember, torch):
        dt = getattr(L, dtype)
        ts = [L.tensor(a, dtype=dt, requires_grad=grads) for a in arrays]
        ts += [L.tensor(i) for i in ints]
        out = f(L, *ts)
        outs = out if isinstance(out, tuple) else (out,)
        gs = []
        if grads:
            rng = np.random.default_rng(7)
            fl = [o for o in outs if o.requires_grad]
            vs = [L.tensor(rng.uniform(-1, 1, size=tuple(o.shape)), dtype=o.dtype) for o in fl]
            L.autograd.backward(fl, vs)
            gs = [t.grad for t in ts[:len(arrays)]]
        results.append((outs, gs))
    (eo, eg), (to, tg) = results
    tol = tol or (dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else
                  dict(rtol=1e-10, atol=1e-12))
    assert len(eo) == len(to)
    for e, t in zip(eo, to):
        assert tuple(e.shape) == tuple(t.shape) and str(e.dtype) == str(t.dtype)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **tol)
    for e, t in zip(eg, tg):
        assert (e is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(e.numpy(), t.numpy(), **tol)


def test_softmax_reexported():
    assert fn(ember).softmax is ember.softmax
    assert fn(ember).log_softmax is ember.log_softmax
    assert "binary_cross_entropy_with_logits" in fn(ember).__all__


def test_sigmoid_tanh_linear(torch):
    compare(torch, lambda L, a: fn(L).sigmoid(a) + fn(L).tanh(a), [_rand((2, 3), 0)])
    compare(torch, lambda L, x, w, b: fn(L).linear(x, w, b),
            [_rand((4, 3), 1), _rand((5, 3), 2), _rand((5,), 3)])
    compare(torch, lambda L, x, w: fn(L).linear(x, w), [_rand((2, 4, 3), 1), _rand((5, 3), 2)])


@pytest.mark.parametrize("name", ["relu", "leaky_relu", "elu", "silu", "mish", "hardtanh"])
def test_inplace_activations(torch, name):
    def f(L, a):
        b = a * 1
        out = getattr(fn(L), name)(b, inplace=True)
        assert out is b
        return b
    compare(torch, f, [_rand((2, 3), 0)])


def test_dropout():
    x = ember.ones(1000, requires_grad=True)
    ember.manual_seed(0)
    y = fn(ember).dropout(x, 0.25)
    kept = y.detach().numpy() != 0
    assert 0.65 < kept.mean() < 0.85
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.75)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 1 / 0.75, 0))
    assert fn(ember).dropout(x, 0.5, training=False) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        fn(ember).dropout(x, 1.5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses(torch, reduction):
    a, b = _rand((3, 4), 0), _rand((3, 4), 1)
    for name, kw in [("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {"beta": 0.7}),
                     ("smooth_l1_loss", {}), ("huber_loss", {"delta": 0.6})]:
        compare(torch, lambda L, x, y: getattr(fn(L), name)(x, y, reduction=reduction, **kw),
                [a, b])


def test_bad_reduction(torch):
    for L in (ember, torch):
        with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
            fn(L).mse_loss(L.ones(2), L.ones(2), reduction="foo")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(torch, reduction):
    x = _rand((5, 4), 0)
    t = np.array([0, 3, 1, -100, 2])
    w = np.array([0.5, 1.0, 2.0, 1.5])
    compare(torch, lambda L, a, tt: fn(L).nll_loss(a, tt, L.tensor(w, dtype=a.dtype),
                                                    reduction=reduction), [x], [t])
    x3 = _rand((2, 3, 2, 2), 1)
    t3 = np.array([[[0, 2], [1, 1]], [[2, 0], [0, 7]]])
    compare(torch, lambda L, a, tt: fn(L).nll_loss(a, tt, ignore_index=7, reduction=reduction),
            [x3], [t3])


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy(torch, reduction, smoothing):
    x = _rand((5, 4), 0)
    t = np.array([0, 3, 1, 1, 2])
    w = np.array([0.5, 1.0, 2.0, 1.5])
    ce = lambda L, a, tt, **k: fn(L).cross_entropy(  # noqa: E731
        a, tt, reduction=reduction, label_smoothing=smoothing, **k)
    compare(torch, lambda L, a, tt: ce(L, a, tt), [x], [t])
    compare(torch, lambda L, a, tt: ce(L, a, tt, weight=L.tensor(w, dtype=a.dtype)), [x], [t])
    compare(torch, lambda L, a, tt: ce(L, a, tt, ignore_index=1), [x], [t])
    x3 = _rand((2, 3, 2, 2), 1)
    t3 = np.array([[[0, 2], [1, 1]], [[2, 0], [0, 1]]])
    compare(torch, lambda L, a, tt: ce(L, a, tt), [x3], [t3])
    probs = np.random.default_rng(3).dirichlet(np.ones(4), size=5)
    compare(torch, lambda L, a, p: ce(L, a, p), [x, probs])
    compare(torch, lambda L, a, p: ce(L, a, p, weight=L.tensor(w, dtype=a.dtype)), [x, probs])


def test_cross_entropy_1d(torch):
    compare(torch, lambda L, a, tt: fn(L).cross_entropy(a, tt), [_rand((4,), 0)],
            [np.array(2)])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_and_kl(torch, reduction):
    p = _rand((3, 4), 0, 0.05, 0.95)
    y = _rand((3, 4), 1, 0.0, 1.0)
    w = _rand((4,), 2, 0.5, 1.5)
    compare(torch, lambda L, a, b: fn(L).binary_cross_entropy(a, b, reduction=reduction),
            [p, y])
    compare(torch, lambda L, a, b: fn(L).binary_cross_entropy(
        a, b, L.tensor(w, dtype=a.dtype), reduction=reduction), [p, y])
    lp = np.log(p)
    compare(torch, lambda L, a, b: fn(L).kl_div(a, b, reduction=reduction), [lp, y])
    compare(torch, lambda L, a, b: fn(L).kl_div(a, b, reduction=reduction, log_target=True),
            [lp, np.log(y + 0.1)])


def test_kl_batchmean(torch):
    compare(torch, lambda L, a, b: fn(L).kl_div(a, b, reduction="batchmean"),
            [_rand((3, 4), 0), _rand((3, 4), 1, 0, 1)])


def test_similarity_normalize(torch):
    a, b = _rand((3, 4), 0), _rand((3, 4), 1)
    compare(torch, lambda L, x, y: fn(L).cosine_similarity(x, y), [a, b])
    compare(torch, lambda L, x, y: fn(L).cosine_similarity(x, y, dim=0), [a, b])
    compare(torch, lambda L, x: fn(L).normalize(x), [a])
    compare(torch, lambda L, x: fn(L).normalize(x, p=1.0, dim=0), [a])


def test_one_hot(torch):
    idx = np.array([[0, 2], [1, 3]])
    e = fn(ember).one_hot(ember.tensor(idx))
    t = fn(torch).one_hot(torch.tensor(idx))
    assert str(e.dtype) == str(t.dtype)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    np.testing.assert_array_equal(fn(ember).one_hot(ember.tensor(idx), 6).numpy(),
                                  fn(torch).one_hot(torch.tensor(idx), 6).numpy())
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
            fn(L).one_hot(L.tensor(idx), 3)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad(torch, mode):
    x = _rand((2, 3, 4, 5), 0)
    compare(torch, lambda L, a: fn(L).pad(a, (1, 2), mode=mode), [x[0]])
    compare(torch, lambda L, a: fn(L).pad(a, (2, 1, 1, 3), mode=mode), [x])
    compare(torch, lambda L, a: fn(L).pad(a, (1, 1, 2, 0, 1, 1), mode=mode), [x])
    if mode == "constant":
        compare(torch, lambda L, a: fn(L).pad(a, (1, 1, 0, 2, 1, 0), value=2.5), [x])
        compare(torch, lambda L, a: fn(L).pad(a, (-1, 2)), [x])


def test_pad_errors(torch):
    for L in (ember, torch):
        with pytest.raises(NotImplementedError, match="Padding size 2 is not supported for 4D"):
            fn(L).pad(L.ones(2, 3, 4, 5), (1, 2), mode="reflect")
        with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
            fn(L).pad(L.ones(2, 3, 4), (1, 2), mode="foo")


def test_embedding(torch):
    w = _rand((6, 3), 0)
    idx = np.array([[0, 2, 5], [2, 2, 1]])
    compare(torch, lambda L, a, i: fn(L).embedding(i, a), [w], [idx])
    compare(torch, lambda L, a, i: fn(L).embedding(i, a, padding_idx=2), [w], [idx])


@pytest.mark.parametrize("kw", [{}, {"stride": 1}, {"stride": 2, "padding": 1},
                                {"padding": 1, "dilation": 2}, {"ceil_mode": True}])
def test_max_pool(torch, kw):
    x = np.random.default_rng(0).permutation(2 * 3 * 7 * 6).reshape(2, 3, 7, 6) / 10.0
    compare(torch, lambda L, a: fn(L).max_pool2d(a, 3, **kw), [x])
    compare(torch, lambda L, a: fn(L).max_pool1d(a, 2, **kw), [x[:, :, 0]])
    compare(torch, lambda L, a: fn(L).max_pool2d(a, (2, 3), return_indices=True, **kw), [x])


def test_max_pool_gradient_goes_to_argmax():
    x = ember.tensor([[[1.0, 5.0, 2.0, 3.0]]], requires_grad=True)
    fn(ember).max_pool1d(x, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[[0, 1, 0, 1]]])


@pytest.mark.parametrize("kw", [{}, {"stride": 1}, {"stride": 2, "padding": 1},
                                {"padding": 1, "count_include_pad": False}])
def test_avg_pool(torch, kw):
    x = _rand((2, 3, 7, 6), 0)
    compare(torch, lambda L, a: fn(L).avg_pool2d(a, 3, **kw), [x])
    compare(torch, lambda L, a: fn(L).avg_pool1d(a, 3, **kw), [x[:, :, 0]])


def test_avg_pool_divisor(torch):
    compare(torch, lambda L, a: fn(L).avg_pool2d(a, 2, divisor_override=3),
            [_rand((1, 2, 4, 4), 0)])


@pytest.mark.parametrize("size", [(1, 1), (2, 3), (3, 5), 4, (None, 2)])
def test_adaptive_avg_pool2d(torch, size):
    compare(torch, lambda L, a: fn(L).adaptive_avg_pool2d(a, size), [_rand((2, 3, 7, 5), 0)])


def test_batch_norm(torch):
    x = _rand((4, 3, 2, 2), 0)
    w, b = _rand((3,), 1), _rand((3,), 2)
    stats = {}
    for L in (ember, torch):
        rm, rv = L.zeros(3, dtype=L.float64), L.ones(3, dtype=L.float64)
        fn(L).batch_norm(L.tensor(x), rm, rv, training=True, momentum=0.2)
        stats[L.__name__] = (rm.numpy(), rv.numpy())
    np.testing.assert_allclose(*[s[0] for s in stats.values()], rtol=1e-10)
    np.testing.assert_allclose(*[s[1] for s in stats.values()], rtol=1e-10)
    rm, rv = np.array([0.1, -0.2, 0.3]), np.array([1.5, 0.5, 2.0])
    compare(torch, lambda L, a, c, d: fn(L).batch_norm(a, None, None, c, d, training=True),
            [x, w, b])
    compare(torch, lambda L, a, c, d: fn(L).batch_norm(
        a, L.tensor(rm, dtype=a.dtype), L.tensor(rv, dtype=a.dtype), c, d), [x, w, b])
    compare(torch, lambda L, a: fn(L).batch_norm(a, None, None, training=True),
            [_rand((5, 3), 3)])


def test_layer_group_norm(torch):
    x = _rand((2, 4, 3), 0)
    compare(torch, lambda L, a, c, d: fn(L).layer_norm(a, (4, 3), c, d),
            [x, _rand((4, 3), 1), _rand((4, 3), 2)])
    compare(torch, lambda L, a: fn(L).layer_norm(a, [3]), [x])
    compare(torch, lambda L, a, c, d: fn(L).group_norm(a, 2, c, d),
            [_rand((2, 4, 3, 2), 3), _rand((4,), 1), _rand((4,), 2)])
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="Expected number of channels in input to be "
                                               "divisible by num_groups"):
            fn(L).group_norm(L.ones(2, 4, 3), 3)


@pytest.mark.parametrize("kw", [{"size": (5, 7)}, {"scale_factor": 2}, {"size": (2, 3)},
                                {"scale_factor": 1.5}])
@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bilinear_ac"])
def test_interpolate(torch, kw, mode):
    extra = {}
    if mode == "bilinear_ac":
        mode, extra = "bilinear", {"align_corners": True}
    compare(torch, lambda L, a: fn(L).interpolate(a, mode=mode, **kw, **extra),
            [_rand((2, 3, 4, 5), 0)])


def test_conv_errors_and_unbatched(torch):
    compare(torch, lambda L, x, w: fn(L).conv2d(x, w, padding=1),
            [_rand((3, 5, 5), 0), _rand((2, 3, 3, 3), 1)])
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="expected input"):
            fn(L).conv2d(L.ones(1, 4, 5, 5), L.ones(2, 3, 3, 3))
        with pytest.raises(RuntimeError, match="padding='same' is not supported for strided "
                                             "convolutions"):
            fn(L).conv2d(L.ones(1, 3, 5, 5), L.ones(2, 3, 3, 3), stride=2, padding="same")


def test_conv_dtype_errors(torch):
    for L in (ember, torch):
        with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
            fn(L).conv2d(L.ones(1, 2, 4, 4), L.ones(3, 2, 2, 2, dtype=L.float64))
        with pytest.raises(RuntimeError, match=r"Input type \(float\) and bias type \(double\) "
                                               "should be the same"):
            fn(L).conv2d(L.ones(1, 2, 4, 4), L.ones(3, 2, 2, 2), L.ones(3, dtype=L.float64))


def test_conv_float32_large(torch):
    compare(torch, lambda L, x, w, b: fn(L).conv2d(x, w, b, stride=2, padding=2, groups=2),
            [_rand((4, 6, 16, 15), 0), _rand((8, 3, 5, 5), 1), _rand((8,), 2)],
            tol=dict(rtol=1e-4, atol=1e-4))


def test_composite_gradcheck():
    def x(shape, seed, lo=-2.0, hi=2.0):
        return ember.tensor(_rand(shape, seed, lo, hi), dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda a: fn(ember).max_pool2d(a, 2),
                     [ember.tensor(np.random.default_rng(0).permutation(16).reshape(1, 1, 4, 4)
                                   / 4.0, dtype=ember.float64, requires_grad=True)])
    assert gradcheck(lambda a: fn(ember).avg_pool2d(a, 2, padding=1), [x((1, 2, 3, 3), 1)])
    assert gradcheck(lambda a: fn(ember).interpolate(a, scale_factor=2, mode="bilinear"),
                     [x((1, 1, 3, 3), 2)])
    assert gradcheck(lambda a: fn(ember).group_norm(a, 2), [x((2, 4, 3), 3)])
    assert gradcheck(lambda a: fn(ember).cross_entropy(a, ember.tensor([0, 2]),
                                                       label_smoothing=0.1), [x((2, 3), 4)])
