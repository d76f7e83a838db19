"""The pointwise activations and losses on large arrays, where their kernels take a NumPy path
of their own (branch-free selects, in-place buffers; ``ops/nn/activation.py``'s ``_fast``).

Each case runs on 5,000 elements holding the awkward values (NaN, +-inf, +-0, the kinks, tiny
and huge numbers) among random ones: its values and gradient must be, bit for bit (signed
zeros and NaN included), what the same op gives in pieces too small for that path, and agree
with PyTorch's.
"""
import numpy as np
import pytest

import ember

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

N = 5000  # above the kernels' threshold (4096); each half is below it
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e30, -1e30, 1e-45, -1e-45,
           0.5, -0.5, 1.0, -1.0, 1.2, -1.2, 0.3, -0.3, 0.2, -0.2, 3.0, -3.0, 1.5, -1.5, 0.7,
           -0.7, 20.0, 10.0, 0.75, -0.75, 88.0, -88.0, 750.0, -750.0]


def fn(L):
    return L.nn.functional


def _inplace(name, *args, **kw):
    def f(L, a):
        b = a * 1
        out = getattr(fn(L), name)(b, *args, inplace=True, **kw)
        assert out is b
        return out
    return f


UNARY = {
    "elu": lambda L, a: fn(L).elu(a, alpha=1.5),
    "elu_default": lambda L, a: fn(L).elu(a),
    "elu_zero_alpha": lambda L, a: fn(L).elu(a, alpha=0.0),
    "elu_negative_alpha": lambda L, a: fn(L).elu(a, alpha=-0.5),
    "selu": lambda L, a: fn(L).selu(a),
    "celu": lambda L, a: fn(L).celu(a, alpha=0.6),
    "elu_": _inplace("elu", alpha=1.5),
    "selu_": _inplace("selu"),
    "celu_": _inplace("celu", 0.7),
    "leaky_relu": lambda L, a: fn(L).leaky_relu(a, 0.2),
    "leaky_relu_zero": lambda L, a: fn(L).leaky_relu(a, 0.0),
    "leaky_relu_one": lambda L, a: fn(L).leaky_relu(a, 1.0),
    "leaky_relu_steep": lambda L, a: fn(L).leaky_relu(a, 1.5),
    "leaky_relu_negative": lambda L, a: fn(L).leaky_relu(a, -0.3),
    "leaky_relu_": _inplace("leaky_relu", 0.2),
    "rrelu_eval": lambda L, a: fn(L).rrelu(a, 0.05, 0.5),
    "softplus": lambda L, a: fn(L).softplus(a),
    "softplus_beta": lambda L, a: fn(L).softplus(a, beta=2.0, threshold=1.5),
    "silu": lambda L, a: fn(L).silu(a),
    "mish": lambda L, a: fn(L).mish(a),
    "hardswish": lambda L, a: fn(L).hardswish(a),
    "hardsigmoid": lambda L, a: fn(L).hardsigmoid(a),
    "softshrink": lambda L, a: fn(L).softshrink(a),
    "softshrink_lambd": lambda L, a: fn(L).softshrink(a, 1.2),
    "softshrink_zero": lambda L, a: fn(L).softshrink(a, 0.0),
    "hardshrink": lambda L, a: fn(L).hardshrink(a),
    "hardshrink_lambd": lambda L, a: fn(L).hardshrink(a, 1.2),
    "threshold": lambda L, a: fn(L).threshold(a, 0.3, -4.0),
    "threshold_": _inplace("threshold", 0.2, 1.5),
    "logit": lambda L, a: (a / 8 + 0.5).logit(),
    "logit_eps": lambda L, a: (a / 8 + 0.5).logit(eps=0.25),
    "angle": lambda L, a: L.angle(a) * a,  # (0 or pi, NaN kept; -0.0 gives 0)
    "sigmoid": lambda L, a: L.sigmoid(a),
    "prelu": lambda L, a: fn(L).prelu(a.reshape(-1, 100), L.tensor(
        np.linspace(-0.5, 1.5, 100), dtype=a.dtype)),
}

BINARY = {
    f"{name}_{r}": (lambda L, a, b, f=f, r=r: f(L, a, b, r))
    for r in ("none", "mean", "sum")
    for name, f in {
        "smooth_l1": lambda L, a, b, r: fn(L).smooth_l1_loss(a, b, reduction=r),
        "smooth_l1_beta": lambda L, a, b, r: fn(L).smooth_l1_loss(a, b, reduction=r, beta=0.5),
        "huber": lambda L, a, b, r: fn(L).huber_loss(a, b, reduction=r),
        "huber_delta": lambda L, a, b, r: fn(L).huber_loss(a, b, reduction=r, delta=0.7),
    }.items()
}


def _values(dtype, seed, finite=False, n=N):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-4, 4, n)
    special = np.array([v for v in SPECIAL if not finite or np.isfinite(v)])
    x[rng.choice(n, 40 * len(special), replace=False)] = np.repeat(special, 40)
    return x.astype(dtype)


def _run(L, f, arrays, g):
    xs = [L.tensor(a, requires_grad=True) for a in arrays]
    out = f(L, *xs)
    out.backward(L.tensor(g.reshape(tuple(out.shape)) if out.ndim else g[0]))
    return [out.detach().numpy()] + [x.grad.numpy() for x in xs]


def _in_pieces(f, arrays, g):
    """``f`` and its gradients on halves of the inputs: each below the fast paths' size."""
    halves = [_run(ember, f, [a[:N // 2] for a in arrays], g[:N // 2]),
              _run(ember, f, [a[N // 2:] for a in arrays], g[N // 2:])]
    return [np.concatenate([h[i].reshape(-1) for h in halves]) for i in range(len(halves[0]))]


def _in_chunks(f, arrays, g, size):
    """``f`` and its gradients on consecutive pieces of ``size`` elements."""
    runs = [_run(ember, f, [a[k:k + size] for a in arrays], g[k:k + size])
            for k in range(0, g.size, size)]
    return [np.concatenate([r[i].reshape(-1) for r in runs]) for i in range(len(runs[0]))]


def _same_bits(a, b):
    a, b = np.asarray(a).reshape(-1), np.asarray(b).reshape(-1)
    assert a.dtype == b.dtype
    nan = np.isnan(a)
    np.testing.assert_array_equal(nan, np.isnan(b))
    np.testing.assert_array_equal(a[~nan].view(f"u{a.itemsize}"), b[~nan].view(f"u{b.itemsize}"))


def _close(a, b, dtype):
    tol = dict(rtol=1e-4, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(a).reshape(-1), np.asarray(b).reshape(-1),
                               equal_nan=True, **tol)


def _check(name, f, arrays, dtype, *, pieces):
    g = _values(dtype, 7, finite=True)
    if pieces:
        for a, b in zip(_run(ember, f, arrays, g), _in_pieces(f, arrays, g)):
            _same_bits(a, b)
    if torch is not None:
        # (gradients where an input is NaN or infinite are left out: PyTorch's vectorised
        # kernels disagree with its own scalar formulas there, and ember gives the latter)
        g = np.random.default_rng(7).uniform(-1, 1, N).astype(dtype)
        finite = np.logical_and.reduce([np.isfinite(a) for a in arrays])
        e, t = _run(ember, f, arrays, g), _run(torch, f, arrays, g)
        _close(e[0], t[0], dtype)
        for a, b in zip(e[1:], t[1:]):
            _close(a.reshape(-1)[finite], b.reshape(-1)[finite], dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_activation_large(name, dtype):
    _check(name, UNARY[name], [_values(dtype, 0)], dtype, pieces=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_activation_blocks(name, dtype):
    """Above ``ops/unary.py``'s ``_blockwise`` block (32768 elements) the kernels run block
    by block, the last block short: bit for bit what pieces too small for any fast path
    give."""
    n = 70_000  # two whole blocks and a short one; pieces of 3,500
    x, g = _values(dtype, 0, n=n), _values(dtype, 7, finite=True, n=n)
    for a, b in zip(_run(ember, UNARY[name], [x], g), _in_chunks(UNARY[name], [x], g, 3500)):
        _same_bits(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(n for n in BINARY if n.endswith("_none")))
def test_loss_blocks(name, dtype):
    """As test_activation_blocks, for the elementwise losses."""
    n = 70_000
    a, b = _values(dtype, 0, finite=True, n=n), _values(dtype, 1, finite=True, n=n)
    b[:300] = a[:300] - np.resize(np.array([0.5, -0.5, 1.0, -1.0, 0.7, -0.7, 0.0], dtype), 300)
    g = _values(dtype, 7, finite=True, n=n)
    f = BINARY[name]
    for x, y in zip(_run(ember, f, [a, b], g), _in_chunks(f, [a, b], g, 3500)):
        _same_bits(x, y)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_loss_large(name, dtype):
    # |input - target| lands on the kinks (+-beta, +-delta) and on 0 exactly
    a, b = _values(dtype, 0, finite=True), _values(dtype, 1, finite=True)
    b[:300] = a[:300] - np.resize(np.array([0.5, -0.5, 1.0, -1.0, 0.7, -0.7, 0.0], dtype), 300)
    _check(name, BINARY[name], [a, b], dtype, pieces=name.endswith("_none"))


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("name", ["elu", "selu", "celu", "leaky_relu", "threshold",
                                  "rrelu_eval"])
def test_signed_zeros_large(name):
    """Where PyTorch's result is a signed zero (-0.0 in, or input * 0), ember's is the same.
    (Not softshrink: PyTorch's own vectorised loop gives +0 inside, its scalar tail input * 0;
    ember gives input * 0 at every size.)"""
    x = np.resize(np.array([0.0, -0.0, -1e-45, 1e-45, 0.1, -0.1], np.float32), N)
    e = UNARY[name](ember, ember.tensor(x)).numpy()
    t = UNARY[name](torch, torch.tensor(x)).numpy()
    np.testing.assert_array_equal(np.signbit(e), np.signbit(t))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("delta", [1.0, 0.7, 2.5])
def test_huber_formula_bits(delta, dtype):
    """Huber's loss is computed branch-free as ``c * (z - 0.5 * c)``, ``c = min(z, delta)``:
    bit for bit PyTorch's two formulas (and smooth L1's with beta 1)."""
    a, b = _values(dtype, 0), _values(dtype, 1, finite=True)
    b[:300] = a[:300] - np.resize(np.array([delta, -delta, 0.0, 1e-40, 3e-45], dtype), 300)
    z = np.abs(a - b)
    with np.errstate(all="ignore"):
        want = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
    for size in (N, 100):  # the fast path and the small one
        x, y = ember.tensor(a[:size]), ember.tensor(b[:size])
        _same_bits(fn(ember).huber_loss(x, y, reduction="none", delta=delta).numpy(),
                   want[:size])
        if delta == 1.0:
            _same_bits(fn(ember).smooth_l1_loss(x, y, reduction="none").numpy(), want[:size])


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softplus_double_backward_tails(dtype):
    """softplus's rule divides by ``1 + exp(-beta x)`` on raw arrays; recorded (create_graph)
    it is a sigmoid, whose derivative stays finite where that exp overflows."""
    x = np.array([-800.0, -200.0, -90.0, -30.0, -0.0, 0.0, 1.5, 15.0, 30.0, 800.0], dtype)
    out = []
    for L in (ember, torch):
        t = L.tensor(x, requires_grad=True)
        (g,) = L.autograd.grad(fn(L).softplus(t).sum(), t,
                               create_graph=True)
        (gg,) = L.autograd.grad((g * g).sum(), t)
        out.append([g.detach().numpy(), gg.numpy()])
    for e, t in zip(*out):
        assert np.isfinite(e).all()
        _close(e, t, dtype)
