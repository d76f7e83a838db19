"""Losses, dropout, similarity and the in-place activations of ``nn.functional`` against PyTorch.

The fused loss ops run through the spec table (gradcheck and gradgradcheck in float64; values,
dtypes, grad_fn names and vector-Jacobian products against PyTorch), for every reduction and
option. The other tests compare whole graphs (node names), warnings and error texts with
PyTorch's.
"""
import warnings

import numpy as np
import pytest

import ember

from ..opspec import Spec, op_tests
from .test_nn_functional import _rand, compare

REDUCTIONS = ["none", "mean", "sum"]
W3 = np.array([0.5, 2.0, 1.25])  # a class weight for 3 classes


def fn(L):
    return L.nn.functional


def _weight(L, x, w=W3):
    return L.tensor(w, dtype=x.dtype)


def _pointwise_specs():
    pairs = [((2, 3), (2, 3)), ((4,), (4,)), ((), ())]
    specs = []
    for r in REDUCTIONS:
        specs += [
            Spec(f"mse_{r}", lambda L, a, b, r=r: fn(L).mse_loss(a, b, reduction=r), pairs),
            Spec(f"mse_weight_{r}", lambda L, a, b, r=r: fn(L).mse_loss(
                a, b, reduction=r, weight=_weight(L, a, np.arange(1.0, 7.0).reshape(2, 3))),
                 [((2, 3), (2, 3))]),
            Spec(f"l1_{r}", lambda L, a, b, r=r: fn(L).l1_loss(a, b, reduction=r), pairs),
            Spec(f"smooth_l1_{r}", lambda L, a, b, r=r: fn(L).smooth_l1_loss(a, b, reduction=r),
                 pairs),
            Spec(f"smooth_l1_beta_{r}", lambda L, a, b, r=r: fn(L).smooth_l1_loss(
                a, b, reduction=r, beta=0.7), pairs),
            Spec(f"smooth_l1_beta0_{r}", lambda L, a, b, r=r: fn(L).smooth_l1_loss(
                a, b, reduction=r, beta=0.0), pairs),
            Spec(f"huber_{r}", lambda L, a, b, r=r: fn(L).huber_loss(a, b, reduction=r), pairs),
            Spec(f"soft_margin_{r}", lambda L, a, r=r: fn(L).soft_margin_loss(  # +-1 targets
                a, _weight(L, a, np.sign(np.arange(a.numel()) % 3 - 0.5).reshape(a.shape)),
                reduction=r), [((2, 3),), ((4,),), ((),)]),
            Spec(f"huber_delta_{r}", lambda L, a, b, r=r: fn(L).huber_loss(
                a, b, reduction=r, delta=0.6), pairs),
            Spec(f"huber_weight_{r}", lambda L, a, b, r=r: fn(L).huber_loss(
                a, b, reduction=r, delta=1.5, weight=_weight(L, a, np.full((2, 3), 0.5))),
                 [((2, 3), (2, 3))]),
            Spec(f"bce_{r}", lambda L, a, b, r=r: fn(L).binary_cross_entropy(a, b, reduction=r),
                 [((2, 3), (2, 3)), ((4,), (4,))], domain=(0.05, 0.95)),
            Spec(f"bce_weight_{r}", lambda L, a, b, r=r: fn(L).binary_cross_entropy(
                a, b, _weight(L, a), reduction=r), [((2, 3), (2, 3))], domain=(0.05, 0.95)),
        ]
    return specs


def _nll_specs():
    shapes = [  # (input shape, target shape): 1-d, 2-d, 3-d (through the 4-d op), 4-d, 5-d
        ((3,), ()), ((5, 3), (5,)), ((2, 3, 4), (2, 4)), ((2, 3, 2, 3), (2, 2, 3)),
        ((2, 3, 2, 1, 2), (2, 2, 1, 2))]
    specs = []
    for r in REDUCTIONS:
        for xs, ts in shapes:
            tag = f"{r}_{len(xs)}d"
            ints = {1: (ts, 3)}
            specs += [
                Spec(f"nll_{tag}", lambda L, x, t, r=r: fn(L).nll_loss(x, t, reduction=r),
                     [(xs, ts)], int_args=ints),
                # ignore_index=1: targets of class 1 drop out of the loss and of the mean
                Spec(f"nll_weight_ignore_{tag}", lambda L, x, t, r=r: fn(L).nll_loss(
                    x, t, _weight(L, x), ignore_index=1, reduction=r), [(xs, ts)], int_args=ints),
                Spec(f"ce_{tag}", lambda L, x, t, r=r: fn(L).cross_entropy(x, t, reduction=r),
                     [(xs, ts)], int_args=ints),
                Spec(f"ce_smooth_{tag}", lambda L, x, t, r=r: fn(L).cross_entropy(
                    x, t, reduction=r, label_smoothing=0.15), [(xs, ts)], int_args=ints),
                Spec(f"ce_smooth_weight_ignore_{tag}", lambda L, x, t, r=r: fn(L).cross_entropy(
                    x, t, _weight(L, x), ignore_index=2, reduction=r, label_smoothing=0.3),
                     [(xs, ts)], int_args=ints),
                # class probabilities: a target of the input's shape (itself differentiable)
                Spec(f"ce_probs_{tag}", lambda L, x, p, r=r: fn(L).cross_entropy(
                    x, L.softmax(p, 0 if p.ndim == 1 else 1), reduction=r), [(xs, xs)]),
                Spec(f"ce_probs_weight_smooth_{tag}", lambda L, x, p, r=r: fn(L).cross_entropy(
                    x, L.softmax(p, 0 if p.ndim == 1 else 1), _weight(L, x), reduction=r,
                    label_smoothing=0.2), [(xs, xs)]),
            ]
    return specs


def _kl(L, a, b, r, log_target):
    target = b if log_target else L.softmax(b, -1)
    with warnings.catch_warnings():  # reduction='mean' warns (test_kl_div_mean_warns)
        warnings.simplefilter("ignore")
        return fn(L).kl_div(L.log_softmax(a, -1), target, reduction=r, log_target=log_target)


def _inplace(name, **kw):
    def f(L, a):
        b = a * 1  # a non-leaf to write into
        out = getattr(fn(L), name)(b, inplace=True, **kw)
        assert out is b
        return out
    return f


SPECS = _pointwise_specs() + _nll_specs() + [
    Spec(f"kl_div_{r}_{lt}", lambda L, a, b, r=r, lt=lt: _kl(L, a, b, r, lt),
         [((2, 3), (2, 3)), ((4,), (4,))])
    for r in REDUCTIONS + ["batchmean"] for lt in (False, True)
] + [
    Spec("cosine_similarity", lambda L, a, b: fn(L).cosine_similarity(a, b),
         [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 3, 2), (2, 3, 2))]),
    # Norms below eps: PyTorch clamps them out of autograd's sight, so the gradient is not the
    # derivative there (no finite differences) but must still be PyTorch's.
    Spec("cosine_similarity_dim0_eps", lambda L, a, b: fn(L).cosine_similarity(
        a, b, dim=0, eps=0.5), [((3, 2), (3, 2))], domain=(-0.3, 0.3),
         finite_differences=False),
    Spec("normalize", lambda L, a: fn(L).normalize(a), [((2, 3),)]),
    Spec("normalize_p1_eps", lambda L, a: fn(L).normalize(a, p=1.0, dim=0, eps=0.4),
         [((2, 3),)], domain=(-0.3, 0.3)),
    Spec("leaky_relu_", _inplace("leaky_relu", negative_slope=0.2), [((2, 3),)]),
    Spec("leaky_relu_zero_slope_", _inplace("leaky_relu", negative_slope=0.0), [((2, 3),)]),
    Spec("elu_", _inplace("elu", alpha=1.5), [((2, 3),)]),
    Spec("elu_zero_alpha_", _inplace("elu", alpha=0.0), [((2, 3),)]),
    Spec("relu_", _inplace("relu"), [((2, 3),)]),
    Spec("hardtanh_", _inplace("hardtanh", min_val=-0.5, max_val=1.0), [((2, 3),)]),
    Spec("silu_", _inplace("silu"), [((2, 3),)]),
    Spec("mish_", _inplace("mish"), [((2, 3),)]),
]

test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


# --------------------------------------------------------------------------- whole graphs


def _graph(t):
    """The node names of ``t``'s graph, depth first (the structure PyTorch would show)."""
    def walk(node):
        if node is None:
            return None
        return (type(node).__name__, tuple(walk(child) for child, _ in node.next_functions))
    return walk(t.grad_fn)


IDX = np.array([0, 2, 1, 0])
GRAPH_CASES = {
    "mse_weight_mean": lambda L, x, y: fn(L).mse_loss(x, y, weight=y.detach()),
    "mse_broadcast": lambda L, x, y: fn(L).mse_loss(x, y[0]),
    "l1_weight_none": lambda L, x, y: fn(L).l1_loss(x, y, weight=y.detach(), reduction="none"),
    "huber_weight_mean": lambda L, x, y: fn(L).huber_loss(x, y, weight=y.detach()),
    "smooth_l1_beta0": lambda L, x, y: fn(L).smooth_l1_loss(x, y, beta=0.0),
    "nll_3d_none": lambda L, x, y: fn(L).nll_loss(x.reshape(2, 3, 2), L.tensor(IDX).reshape(2, 2),
                                                  reduction="none"),
    "ce": lambda L, x, y: fn(L).cross_entropy(x, L.tensor(IDX)),
    "ce_smooth": lambda L, x, y: fn(L).cross_entropy(x, L.tensor(IDX), label_smoothing=0.1),
    "ce_smooth_weight_none": lambda L, x, y: fn(L).cross_entropy(
        x, L.tensor(IDX), _weight(L, x), label_smoothing=0.1, reduction="none"),
    "ce_probs": lambda L, x, y: fn(L).cross_entropy(x, y.detach().softmax(1)),
    "ce_probs_weight_smooth": lambda L, x, y: fn(L).cross_entropy(
        x, y.detach().softmax(1), _weight(L, x), label_smoothing=0.1),
    "ce_probs_sum": lambda L, x, y: fn(L).cross_entropy(x, y.detach().softmax(1),
                                                        reduction="sum"),
    "bce_weight": lambda L, x, y: fn(L).binary_cross_entropy(x.sigmoid(), y.sigmoid(),
                                                             _weight(L, x)),
    "cosine": lambda L, x, y: fn(L).cosine_similarity(x, y),
    "cosine_broadcast": lambda L, x, y: fn(L).cosine_similarity(x, y[0]),
    "normalize": lambda L, x, y: fn(L).normalize(x),
    "kl_batchmean": lambda L, x, y: fn(L).kl_div(x, y, reduction="batchmean"),
    "dropout": lambda L, x, y: fn(L).dropout(x),
    "dropout_p1_inplace": lambda L, x, y: fn(L).dropout(x * 1, 1.0, inplace=True),
    "dropout_inplace": lambda L, x, y: fn(L).dropout(x * 1, 0.3, inplace=True),
}


@pytest.mark.parametrize("name", sorted(GRAPH_CASES))
def test_graph_matches_pytorch(torch, name):
    graphs = []
    for L in (ember, torch):
        x = L.tensor(_rand((4, 3), 0), dtype=L.float32, requires_grad=True)
        y = L.tensor(_rand((4, 3), 1), dtype=L.float32, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            graphs.append(_graph(GRAPH_CASES[name](L, x, y)))
    assert graphs[0] == graphs[1]


# --------------------------------------------------------------------------- values, gradients


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_losses(torch, reduction):
    a, b = _rand((3, 4), 0), _rand((3, 4), 1)
    for name, kw in [("mse_loss", {}), ("l1_loss", {}), ("smooth_l1_loss", {"beta": 0.7}),
                     ("smooth_l1_loss", {}), ("huber_loss", {"delta": 0.6})]:
        compare(torch, lambda L, x, y: getattr(fn(L), name)(x, y, reduction=reduction, **kw),
                [a, b])


@pytest.mark.parametrize("reduction", REDUCTIONS)
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
    compare(torch, lambda L, a, tt: fn(L).nll_loss(a, tt.to(L.uint8), reduction=reduction),
            [x], [np.array([0, 3, 1, 1, 2])])


def test_nll_loss_4d_weight_of_any_shape(torch):
    """nll_loss2d only counts the weight's elements."""
    compare(torch, lambda L, a, tt: fn(L).nll_loss(a, tt, L.tensor([[0.5, 2.0, 1.0]],
                                                                   dtype=a.dtype)),
            [_rand((2, 3, 2, 2), 0)], [np.array([[[0, 2], [1, 1]], [[2, 0], [0, 1]]])])


def test_nll_loss_all_ignored(torch):
    """Mean over no targets: NaN, and a zero gradient."""
    for reduction in REDUCTIONS:
        compare(torch, lambda L, a, tt: fn(L).nll_loss(a, tt, reduction=reduction),
                [_rand((2, 3), 0)], [np.array([-100, -100])])


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy(torch, reduction, smoothing):
    x = _rand((5, 4), 0)
    t = np.array([0, 3, 1, 1, 2])
    w = np.array([0.5, 1.0, 2.0, 1.5])
    ce = lambda L, a, tt, **k: fn(L).cross_entropy(  # noqa: E731
        a, tt, reduction=reduction, label_smoothing=smoothing, **k)
    compare(torch, lambda L, a, tt: ce(L, a, tt), [x], [t])
    compare(torch, lambda L, a, tt: ce(L, a, tt, weight=L.tensor(w, dtype=a.dtype)), [x], [t])
    compare(torch, lambda L, a, tt: ce(L, a, tt, ignore_index=1), [x], [t])
    compare(torch, lambda L, a, tt: ce(L, a, tt, weight=L.tensor(w, dtype=a.dtype),
                                       ignore_index=1), [x], [t])
    x3 = _rand((2, 3, 2, 2), 1)
    t3 = np.array([[[0, 2], [1, 1]], [[2, 0], [0, 1]]])
    compare(torch, lambda L, a, tt: ce(L, a, tt), [x3], [t3])
    probs = np.random.default_rng(3).dirichlet(np.ones(4), size=5)
    compare(torch, lambda L, a, p: ce(L, a, p), [x, probs])
    compare(torch, lambda L, a, p: ce(L, a, p, weight=L.tensor(w, dtype=a.dtype)), [x, probs])


def test_cross_entropy_1d(torch):
    compare(torch, lambda L, a, tt: fn(L).cross_entropy(a, tt), [_rand((4,), 0)],
            [np.array(2)])
    compare(torch, lambda L, a, p: fn(L).cross_entropy(a, p, reduction="none"),
            [_rand((4,), 0), np.array([0.1, 0.2, 0.3, 0.4])])


def test_cross_entropy_negative_smoothing_is_ignored(torch):
    """PyTorch checks only label_smoothing > 1; a negative value means no smoothing."""
    x = _rand((3, 4), 0)
    compare(torch, lambda L, a, tt: fn(L).cross_entropy(a, tt, label_smoothing=-0.5), [x],
            [np.array([0, 3, 1])])
    compare(torch, lambda L, a, p: fn(L).cross_entropy(a, p.softmax(1), label_smoothing=-0.5),
            [x, _rand((3, 4), 1)])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce(torch, reduction):
    p = _rand((3, 4), 0, 0.05, 0.95)
    y = _rand((3, 4), 1, 0.0, 1.0)
    w = _rand((4,), 2, 0.5, 1.5)
    compare(torch, lambda L, a, b: fn(L).binary_cross_entropy(a, b, reduction=reduction),
            [p, y])
    compare(torch, lambda L, a, b: fn(L).binary_cross_entropy(
        a, b, L.tensor(w, dtype=a.dtype), reduction=reduction), [p, y])


def test_bce_log_clamp(torch):
    """Inputs 0 and 1: the logs are clamped at -100, the gradient's x(1-x) at 1e-12."""
    p = np.array([0.0, 1.0, 0.0, 1.0, 0.5])
    y = np.array([0.0, 1.0, 1.0, 0.0, 0.5])
    for dtype in ("float32", "float64"):
        compare(torch, lambda L, a, b: fn(L).binary_cross_entropy(a, b.detach(), reduction="none"),
                [p, y], dtype=dtype)


@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
def test_kl_div(torch, reduction, log_target):
    lp = np.log(_rand((3, 4), 0, 0.05, 0.95))
    y = _rand((3, 4), 1, 0.0, 1.0)
    target = np.log(y + 0.1) if log_target else y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(torch, lambda L, a, b: fn(L).kl_div(a, b, reduction=reduction,
                                                    log_target=log_target), [lp, target])
        compare(torch, lambda L, a, b: fn(L).kl_div(a, b, reduction=reduction,
                                                    log_target=log_target), [lp[0], target[0]])


def test_similarity_normalize(torch):
    a, b = _rand((3, 4), 0), _rand((3, 4), 1)
    compare(torch, lambda L, x, y: fn(L).cosine_similarity(x, y), [a, b])
    compare(torch, lambda L, x, y: fn(L).cosine_similarity(x, y, dim=0), [a, b])
    compare(torch, lambda L, x, y: fn(L).cosine_similarity(x, y, dim=-1), [a, b[0]])
    compare(torch, lambda L, x: fn(L).normalize(x), [a])
    compare(torch, lambda L, x: fn(L).normalize(x, p=1.0, dim=0), [a])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cosine_similarity_near_eps(torch, dtype):
    """Norms around eps: each input divided by its clamped norm, the clamp unseen by autograd."""
    a = np.array([[1e-9, -2e-9, 0.0], [3e-5, 1e-5, -2e-5], [0.0, 0.0, 0.0], [1e-8, 0.0, 0.0]])
    b = np.array([[2e-9, 1e-9, 1e-9], [1e-5, 1e-5, 1e-5], [1.0, 2.0, 0.5], [0.0, 1e-8, 0.0]])
    compare(torch, lambda L, x, y: fn(L).cosine_similarity(x, y), [a, b], dtype=dtype,
            tol=dict(rtol=1e-5, atol=0))


def test_cosine_similarity_integers(torch):
    for L in (ember, torch):
        a, b = L.tensor([[1, 2, 2]]), L.tensor([[2.0, 0.0, 1.0]], dtype=L.float64)
        out = fn(L).cosine_similarity(a, b)
        assert str(out.dtype) == "torch.float64"
        np.testing.assert_allclose(out.numpy(), [4 / 3 / np.sqrt(5)])


# --------------------------------------------------------------------------- activations


@pytest.mark.parametrize("name,kw", [("relu", {}), ("leaky_relu", {"negative_slope": 0.2}),
                                     ("elu", {"alpha": 0.7}), ("silu", {}), ("mish", {}),
                                     ("hardtanh", {})])
def test_inplace_activations(torch, name, kw):
    def f(L, a):
        b = a * 1
        out = getattr(fn(L), name)(b, inplace=True, **kw)
        assert out is b
        return b
    compare(torch, f, [_rand((2, 3), 0)])
    compare(torch, f, [_rand((2, 3), 0)], dtype="float64")


@pytest.mark.parametrize("name", ["leaky_relu", "elu"])
def test_inplace_negative_slope_backward_error(torch, name):
    errors = []
    for L in (ember, torch):
        b = L.tensor([[1.0, -2.0]], requires_grad=True) * 1
        getattr(fn(L), name)(b, -0.5, inplace=True)
        with pytest.raises(RuntimeError) as info:
            b.sum().backward()
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_relu_prints_like_pytorch(torch):
    """max(x, 0) of a negative number is 0, not -0, and integer tensors stay integers."""
    for values in ([-1.0, 0.0, 2.5, -0.0], [-3, 4]):
        outs = [repr(fn(L).relu(L.tensor(values))) for L in (ember, torch)]
        assert outs[0] == outs[1]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("create_graph", [False, True], ids=["arrays", "recorded"])
def test_relu_special_values_bit_for_bit(torch, dtype, create_graph):
    """relu and its gradient keep -0.0, NaN and infinities bit for bit as PyTorch's do, in a
    plain backward (NumPy arrays: the masked-bits path) and a recorded one (Tensors: ``where``).
    The gradient passes ``g`` where the result is NaN (PyTorch's threshold_backward)."""
    nan, inf = float("nan"), float("inf")
    values = [nan, -nan, -1.0, -0.0, 0.0, 2.5, -inf, inf, 3.0] * 500  # large: the fast path
    grads = [5.0, -5.0, -2.0, -3.0, nan, -0.0, -1.0, 7.0, -nan] * 500
    bits = []
    for L in (ember, torch):
        x = L.tensor(values, dtype=getattr(L, dtype), requires_grad=True)
        y = fn(L).relu(x)
        (gx,) = L.autograd.grad(y, x, L.tensor(grads, dtype=x.dtype), create_graph=create_graph)
        bits.append([t.detach().numpy().view(f"u{t.element_size()}") for t in (y, gx)])
    for ours, theirs in zip(*bits):
        np.testing.assert_array_equal(ours, theirs)


# --------------------------------------------------------------------------- dropout


def test_dropout():
    x = ember.ones(1000, requires_grad=True)
    ember.manual_seed(0)
    y = fn(ember).dropout(x, 0.25)
    assert type(y.grad_fn).__name__ == "MulBackward0"
    kept = y.detach().numpy() != 0
    assert 0.65 < kept.mean() < 0.85
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.75, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, 1 / 0.75, 0), rtol=1e-6)
    assert fn(ember).dropout(x, 0.5, training=False) is x
    assert fn(ember).dropout(x, 0.0) is x
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but "
                                         "got 1.5"):
        fn(ember).dropout(x, 1.5)


def test_dropout_draw_unchanged():
    """The same draw as before the fused form: keep where ``rand >= p``."""
    ember.manual_seed(3)
    expected = ember.rand(4, 5) >= 0.4
    ember.manual_seed(3)
    y = fn(ember).dropout(ember.ones(4, 5), 0.4)
    np.testing.assert_array_equal(y.numpy() != 0, expected.numpy())


# --------------------------------------------------------------------------- errors, warnings


def _error_cases(L):
    """Bad calls, by name (each a thunk)."""
    x = L.tensor([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3]], requires_grad=True)
    p = L.tensor([[0.1, 0.5, 0.9], [0.0, 1.0, 0.3]], requires_grad=True)
    t = L.tensor([[0.4, -1.0, 0.0], [1.0, 2.0, -0.3]])
    idx = L.tensor([2, 0])
    f = fn(L)
    z4 = L.zeros(2, 3, 4, 4)
    return {
        "mse_reduction": lambda: f.mse_loss(x, t, reduction="foo"),
        "mse_weight_size": lambda: f.mse_loss(x, t, weight=L.ones(3)),
        "mse_weight_reduction": lambda: f.mse_loss(x, t, weight=L.ones(2, 3), reduction="foo"),
        "mse_int": lambda: f.mse_loss(L.tensor([1, 2]), L.tensor([1, 3])),
        "mse_bool": lambda: f.mse_loss(L.tensor([True]), L.tensor([False])),
        "mse_broadcast": lambda: f.mse_loss(x, L.ones(4)),
        "l1_weight_size": lambda: f.l1_loss(x, t, weight=L.ones(3)),
        "smooth_l1_beta": lambda: f.smooth_l1_loss(x, t, beta=-1.0),
        "smooth_l1_int": lambda: f.smooth_l1_loss(L.tensor([1, 2]), L.tensor([1, 3])),
        "smooth_l1_reduction": lambda: f.smooth_l1_loss(x, t, reduction="foo", beta=-1.0),
        "huber_delta": lambda: f.huber_loss(x, t, delta=0.0),
        "huber_int": lambda: f.huber_loss(L.tensor([1, 2]), L.tensor([1, 3])),
        "huber_reduction": lambda: f.huber_loss(x, t, reduction="foo", delta=-1.0),
        "huber_weight_reduction": lambda: f.huber_loss(x, t, weight=L.ones(2, 3),
                                                       reduction="foo"),
        "huber_weight_size": lambda: f.huber_loss(x, t, weight=L.ones(3), delta=-1.0),
        "nll_out_of_bounds": lambda: f.nll_loss(x, L.tensor([5, 0])),
        "nll_negative": lambda: f.nll_loss(x, L.tensor([-1, 0])),
        "nll_batch": lambda: f.nll_loss(x, L.tensor([1, 0, 1])),
        "nll_0d_input": lambda: f.nll_loss(x[0, 0], L.tensor(1)),
        "nll_0d_target": lambda: f.nll_loss(x, L.tensor(1)),
        "nll_1d_target_size": lambda: f.nll_loss(x[0], L.tensor([1, 2])),
        "nll_multi_target": lambda: f.nll_loss(x, L.tensor([[1], [0]])),
        "nll_float_target": lambda: f.nll_loss(x, L.tensor([1.0, 0.0])),
        "nll_int32_target": lambda: f.nll_loss(x, L.tensor([1, 0], dtype=L.int32)),
        "nll_bool_target": lambda: f.nll_loss(x, L.tensor([True, False])),
        "nll_weight_size": lambda: f.nll_loss(x, idx, weight=L.ones(4)),
        "nll_weight_dtype": lambda: f.nll_loss(x, idx, weight=L.ones(3, dtype=L.float64)),
        "nll_weight_grad": lambda: f.nll_loss(x, idx, weight=L.ones(3, requires_grad=True)),
        "nll_int_input": lambda: f.nll_loss(L.tensor([[1, 2]]), L.tensor([1])),
        "nll_3d_target_size": lambda: f.nll_loss(L.zeros(2, 3, 4), L.zeros(2, 5, dtype=L.long)),
        "nll_3d_target_1d": lambda: f.nll_loss(L.zeros(2, 3, 4), L.zeros(2, dtype=L.long)),
        "nll_4d_size": lambda: f.nll_loss(z4, L.zeros(2, 5, 4, dtype=L.long)),
        "nll_4d_target_dims": lambda: f.nll_loss(z4, L.zeros(2, 4, dtype=L.long)),
        "nll_4d_weight_size": lambda: f.nll_loss(z4, L.zeros(2, 4, 4, dtype=L.long),
                                                 weight=L.ones(2)),
        "nll_4d_uint8": lambda: f.nll_loss(z4, L.zeros(2, 4, 4, dtype=L.uint8)),
        "nll_4d_int32": lambda: f.nll_loss(z4, L.zeros(2, 4, 4, dtype=L.int32)),
        "nll_4d_int_input": lambda: f.nll_loss(z4.long(), L.zeros(2, 4, 4, dtype=L.long)),
        "nll_4d_out_of_bounds": lambda: f.nll_loss(z4, L.full((2, 4, 4), 3)),
        "nll_4d_weight_grad": lambda: f.nll_loss(z4, L.zeros(2, 4, 4, dtype=L.long),
                                                 weight=L.ones(3, requires_grad=True)),
        "ce_probs_int": lambda: f.cross_entropy(x, L.ones(2, 3, dtype=L.long)),
        "ce_probs_ignore_index": lambda: f.cross_entropy(x, t, ignore_index=1),
        "ce_smoothing_indices": lambda: f.cross_entropy(x, idx, label_smoothing=1.5),
        "ce_smoothing_probs": lambda: f.cross_entropy(x, t, label_smoothing=2.0),
        "ce_probs_weight": lambda: f.cross_entropy(x, t, weight=L.ones(4)),
        "ce_probs_shape": lambda: f.cross_entropy(x, L.rand(2, 4)),
        "ce_out_of_bounds": lambda: f.cross_entropy(x, L.tensor([3, 0])),
        "ce_smoothing_out_of_bounds": lambda: f.cross_entropy(x, L.tensor([1, 5]),
                                                              label_smoothing=0.2),
        "ce_0d": lambda: f.cross_entropy(x[0, 0], L.tensor(0)),
        "ce_reduction": lambda: f.cross_entropy(x, idx, reduction="foo"),
        "ce_float_indices": lambda: f.cross_entropy(x, L.tensor([1.0, 0.0])),
        "bce_weight_broadcast": lambda: f.binary_cross_entropy(p, t, weight=L.ones(2)),
        "bce_size": lambda: f.binary_cross_entropy(p, t[0]),
        "bce_range": lambda: f.binary_cross_entropy(p * 2, t),
        "bce_nan": lambda: f.binary_cross_entropy(p * float("nan"), t),
        "bce_reduction": lambda: f.binary_cross_entropy(p, t, reduction="foo"),
        "bce_target_dtype": lambda: f.binary_cross_entropy(p, t.double()),
        "bce_int": lambda: f.binary_cross_entropy(L.tensor([1, 0]), L.tensor([1, 0])),
        "bce_weight_grad": lambda: f.binary_cross_entropy(p, t, L.ones(3, requires_grad=True)),
        "bce_logits_weight_grad": lambda: f.binary_cross_entropy_with_logits(
            x, t, L.ones(3, requires_grad=True)),
        "kl_reduction": lambda: f.kl_div(x, t, reduction="foo"),
        "kl_int": lambda: f.kl_div(L.tensor([1, 2]), L.tensor([1, 3]), reduction="sum"),
        "cosine_int": lambda: f.cosine_similarity(L.tensor([[1, 2]]), L.tensor([[1, 3]])),
        "cosine_shape": lambda: f.cosine_similarity(x, L.zeros(2, 4)),
        "cosine_dim": lambda: f.cosine_similarity(x, t, dim=2),
        "leaky_relu_int": lambda: f.leaky_relu(L.tensor([1, -2])),
        "elu_int": lambda: f.elu(L.tensor([1, -2])),
        "silu_int": lambda: f.silu(L.tensor([1, -2])),
        "mish_int": lambda: f.mish(L.tensor([1, -2])),
        "gelu_int": lambda: f.gelu(L.tensor([1, -2])),
        "softplus_int": lambda: f.softplus(L.tensor([1, -2])),
        "dropout_p": lambda: f.dropout(x, -0.1),
        "dropout_int": lambda: f.dropout(L.tensor([1, 2]), 0.5),
        "dropout_bool_inplace": lambda: f.dropout(L.tensor([True]), 0.5, inplace=True),
        "relu_bool": lambda: f.relu(L.tensor([True, False])),
        "cosine_eps": lambda: f.cosine_similarity(x, t, dim=5, eps=-0.5),
        "cosine_int_eps": lambda: f.cosine_similarity(L.tensor([[1, 2]]), L.tensor([[1, 3]]),
                                                      eps=-1.0),
        "bce_weight_larger": lambda: f.binary_cross_entropy(p[0], p[0].detach(), L.ones(2, 3)),
        "bce_target_range_first": lambda: f.binary_cross_entropy(L.tensor([0.5, 2.0]),
                                                                 L.tensor([3.0, 0.5])),
        "bce_logits_pos_weight_grad": lambda: f.binary_cross_entropy_with_logits(
            x, t, pos_weight=L.ones(3, requires_grad=True)),
        # the order of PyTorch's checks, where several fail at once
        "nll_order_multi_target_float": lambda: f.nll_loss(x, L.zeros(2, 1)),
        "nll_order_1d_size_float": lambda: f.nll_loss(x[0], L.zeros(2)),
        "nll_order_int32_weight": lambda: f.nll_loss(x, idx.int(), weight=L.ones(4)),
        "nll_order_input_weight_dtype": lambda: f.nll_loss(L.tensor([[1, 2]]), L.tensor([1]),
                                                           weight=L.ones(2, dtype=L.float64)),
        "nll_order_weight_grad_first": lambda: f.nll_loss(x.detach(), L.tensor([1.0, 0.0]),
                                                          weight=L.ones(4, requires_grad=True)),
        "nll_order_4d_float_size": lambda: f.nll_loss(z4, L.zeros(2, 3, 2)),
        "nll_order_4d_uint8_size": lambda: f.nll_loss(z4, L.zeros(2, 2, 3, dtype=L.uint8)),
        "nll_order_4d_uint8_weight_dtype": lambda: f.nll_loss(
            z4, L.zeros(2, 4, 4, dtype=L.uint8), weight=L.ones(3, dtype=L.float64)),
        "nll_order_4d_uint8_int_input": lambda: f.nll_loss(z4.long(),
                                                           L.zeros(2, 4, 4, dtype=L.uint8)),
        "nll_order_out_of_bounds_weight_dtype": lambda: f.nll_loss(
            x, L.tensor([5, 0]), weight=L.ones(3, dtype=L.float64)),
    }


@pytest.mark.parametrize("name", sorted(_error_cases(ember)))
def test_errors_match_pytorch(torch, name):
    """Same exception type and whole message as PyTorch's, and nothing changed."""
    results = []
    for L in (ember, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(Exception) as info:
                _error_cases(L)[name]()
        results.append((type(info.value).__name__, str(info.value)))
    assert results[0] == results[1]


def _warnings(f):
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        f()
    return [(w.category.__name__, str(w.message)) for w in ws
            if not issubclass(w.category, ImportWarning)]


@pytest.mark.parametrize("name,call", [
    ("mse_broadcast", lambda f, L, x: f.mse_loss(x, x[0])),
    ("l1_broadcast", lambda f, L, x: f.l1_loss(x, x[:1])),
    ("smooth_l1_broadcast", lambda f, L, x: f.smooth_l1_loss(x, x[0])),
    ("huber_broadcast", lambda f, L, x: f.huber_loss(x, x[0])),
    ("mse_legacy", lambda f, L, x: f.mse_loss(x, x, size_average=False)),
    ("nll_legacy", lambda f, L, x: f.nll_loss(x, L.tensor([0, 1]), reduce=False)),
    ("ce_elementwise_mean", lambda f, L, x: f.cross_entropy(x, L.tensor([0, 1]),
                                                            reduction="elementwise_mean")),
    ("bce_legacy", lambda f, L, x: f.binary_cross_entropy(x.sigmoid(), x.sigmoid().detach(),
                                                          size_average=False)),
    ("kl_mean", lambda f, L, x: f.kl_div(x, x.detach())),
    ("kl_legacy", lambda f, L, x: f.kl_div(x, x.detach(), reduce=False)),
    ("kl_batchmean", lambda f, L, x: f.kl_div(x, x.detach(), reduction="batchmean")),
])
def test_warnings_match_pytorch(torch, name, call):
    found = [_warnings(lambda: call(fn(L), L, L.ones(2, 3, requires_grad=True)))
             for L in (ember, torch)]
    assert found[0] == found[1]
    assert found[0] or name == "kl_batchmean"
