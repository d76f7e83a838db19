"""``ember.distributions`` against ``torch.distributions``.

Each distribution is built from the same NumPy parameters in both libraries; densities,
entropies, moments, cdf/icdf, derived parameters (``probs``/``logits``, covariance, precision,
Cholesky factor), KL divergences and the gradients of all of them are compared with PyTorch's
(rtol 1e-6 in float32, 1e-12 in float64), and gradcheck/gradgradcheck run in float64. Reprs and
the ValueErrors for invalid parameters and values are compared as whole strings. Samples cannot
match PyTorch's numbers (different generator): their shapes, dtypes, support, gradients (for
``rsample``) and, loosely, their statistics are checked instead.
"""
import contextlib
import io
import runpy
import subprocess
import sys
import warnings
from functools import partial

import numpy as np
import pytest

import ember
import ember.distributions as ed

from ..conftest import to_np
from ..oracle import assert_same_tensor, error_of

RTOL = {np.float32: 1e-6, np.float64: 1e-12}


@pytest.fixture(autouse=True)
def _default_validation():
    """Validation on by default in both libraries, as a fresh process has it: PyTorch's dynamo
    turns its default off for good once anything in the session has used torch.compile."""
    libs = [ember]
    try:
        import torch
        libs.append(torch)
    except ImportError:
        pass
    saved = [L.distributions.Distribution._validate_args for L in libs]
    for L in libs:
        L.distributions.Distribution._validate_args = True
    yield
    for L, value in zip(libs, saved):
        L.distributions.Distribution._validate_args = value
rng = np.random.default_rng(0)


def close(e, t, dtype=np.float64, atol=0.0):
    """ember tensor ``e`` equals PyTorch tensor ``t``: shape, dtype name and values."""
    assert_same_tensor(e, t, rtol=RTOL[dtype], atol=atol)


# ``message(fn)``: ``(type, str)`` of the exception ``fn()`` must raise
message = partial(error_of, exact_type=True)


def pd_matrix(n, batch=(), dtype=np.float64):
    a = rng.standard_normal(batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


# --------------------------------------------------------------------------- Categorical
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("param", ["probs", "logits"])
@pytest.mark.parametrize("shape", [(3,), (2, 4)])
def test_categorical_values(torch, dtype, param, shape):
    raw = rng.random(shape).astype(dtype) + 0.1 if param == "probs" else \
        rng.standard_normal(shape).astype(dtype)
    dists = [L.distributions.Categorical(**{param: L.tensor(raw)}) for L in (ember, torch)]
    e, t = dists
    assert e.batch_shape == t.batch_shape and e.event_shape == t.event_shape
    assert e.param_shape == t.param_shape
    assert repr(e) == repr(t)
    for name in ("probs", "logits", "entropy()", "mean", "variance", "mode",
                 "enumerate_support()", "enumerate_support(False)", "perplexity()"):
        close(eval("e." + name), eval("t." + name), dtype, atol=0.0)
    assert repr(e) == repr(t)  # now with both parameters
    n = shape[-1]
    for value in (np.array(1), rng.integers(0, n, shape[:-1]), rng.integers(0, n, (5, 1)),
                  rng.integers(0, n, (3,) + shape[:-1])):
        close(e.log_prob(ember.tensor(value)), t.log_prob(torch.tensor(value)), dtype)
    assert repr(e.support) == repr(t.support)


def test_categorical_zero_probabilities(torch):
    p = np.array([[0.0, 0.25, 0.75], [1.0, 0.0, 0.0]])
    e, t = (L.distributions.Categorical(probs=L.tensor(p)) for L in (ember, torch))
    close(e.entropy(), t.entropy())
    close(e.log_prob(ember.tensor([0, 1])), t.log_prob(torch.tensor([0, 1])))
    lg = np.array([-np.inf, 0.0, 1.0])
    e, t = (L.distributions.Categorical(logits=L.tensor(lg)) for L in (ember, torch))
    close(e.entropy(), t.entropy())
    close(e.probs, t.probs)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_categorical_gradients(torch, param):
    """REINFORCE's loss ``-(log_prob(a) * advantage) - c * entropy`` differentiates as torch's."""
    raw = rng.random((4, 3)) + 0.1
    actions = rng.integers(0, 3, (4,))
    adv = rng.standard_normal(4)
    grads = []
    for L in (ember, torch):
        x = L.tensor(raw, requires_grad=True)
        d = L.distributions.Categorical(**{param: x})
        loss = -(d.log_prob(L.tensor(actions)) * L.tensor(adv)).sum() - 0.01 * d.entropy().sum()
        loss.backward()
        grads.append(x.grad)
    close(*grads)


@pytest.mark.parametrize("param", ["probs", "logits"])
def test_categorical_gradcheck(param):
    raw = ember.tensor(rng.random((2, 3)) + 0.1, requires_grad=True)
    actions = ember.tensor([2, 0])

    def f(x):
        d = ed.Categorical(**{param: x}, validate_args=False)
        return d.log_prob(actions), d.entropy()

    assert ember.autograd.gradcheck(f, (raw,))
    assert ember.autograd.gradgradcheck(f, (raw,))


def test_categorical_sample():
    ember.manual_seed(0)
    d = ed.Categorical(probs=ember.tensor([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]]))
    assert d.sample().shape == (2,) and d.sample().dtype == ember.int64
    s = d.sample((4000,))
    assert s.shape == (4000, 2) and not s.requires_grad
    counts = np.stack([np.bincount(to_np(s)[:, i], minlength=3) for i in range(2)]) / 4000
    np.testing.assert_allclose(counts, [[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]], atol=0.04)
    assert d.sample((2, 3)).shape == (2, 3, 2)
    e = d.expand((5, 2))
    assert e.batch_shape == (5, 2) and e.sample((7,)).shape == (7, 5, 2)


def test_categorical_expand(torch):
    logits = rng.standard_normal(3)
    e, t = (L.distributions.Categorical(logits=L.tensor(logits)).expand((2, 4))
            for L in (ember, torch))
    assert e.batch_shape == t.batch_shape and repr(e) == repr(t)
    close(e.log_prob(ember.tensor([[0], [2]])), t.log_prob(torch.tensor([[0], [2]])))


def test_categorical_errors(torch):
    for kwargs in ({}, {"probs": np.ones(2), "logits": np.ones(2)}, {"probs": np.array(1.0)},
                   {"logits": np.array(1.0)}, {"probs": np.array([-0.5, 1.0, 0.5])},
                   {"probs": np.array([[0.5, 0.5], [np.nan, 1.0]])},
                   {"logits": np.array([0.0, np.nan])}):
        got = [message(lambda: L.distributions.Categorical(
            **{k: L.tensor(v) for k, v in kwargs.items()})) for L in (ember, torch)]
        assert got[0] == got[1], kwargs
    for value in ([0, 3], [0.5, 1.0], [[0, 1, 1]], 1.0, [-1, 0]):
        got = []
        for L in (ember, torch):
            d = L.distributions.Categorical(probs=L.tensor([[0.2, 0.8], [0.5, 0.5]]))
            v = value if isinstance(value, float) else L.tensor(value)
            got.append(message(lambda: d.log_prob(v)))  # noqa: B023
        assert got[0] == got[1], value
    # validate_args=False skips the checks (and the value is used as it is)
    d = ed.Categorical(probs=ember.tensor([2.0, 2.0]), validate_args=False)
    np.testing.assert_allclose(to_np(d.probs), [0.5, 0.5])


# --------------------------------------------------------------------------- Normal
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal_values(torch, dtype):
    loc = rng.standard_normal((2, 3)).astype(dtype)
    scale = (rng.random(3) + 0.5).astype(dtype)
    e, t = (L.distributions.Normal(L.tensor(loc), L.tensor(scale)) for L in (ember, torch))
    assert e.batch_shape == t.batch_shape and e.event_shape == t.event_shape
    assert repr(e) == repr(t)
    x = rng.standard_normal((4, 2, 3)).astype(dtype)
    u = rng.random((2, 3)).astype(dtype)
    for name in ("log_prob", "cdf"):
        close(getattr(e, name)(ember.tensor(x)), getattr(t, name)(torch.tensor(x)), dtype)
    close(e.icdf(ember.tensor(u)), t.icdf(torch.tensor(u)), dtype)
    for name in ("mean", "mode", "stddev", "variance", "entropy()", "loc", "scale"):
        close(eval("e." + name), eval("t." + name), dtype)
    ex, tx = e.expand((5, 2, 3)), t.expand((5, 2, 3))
    assert ex.batch_shape == tx.batch_shape and repr(ex) == repr(tx)
    close(ex.entropy(), tx.entropy(), dtype)


def test_normal_number_parameters(torch):
    """Python numbers become default-dtype scalars; a tensor argument sets the dtype."""
    for args in ((0.0, 1.0), (1, 2.5), (0.0, np.array([1.0, 2.0])),
                 (np.array([0.0], dtype=np.float64), 2.0)):
        e, t = (L.distributions.Normal(*[L.tensor(a) if isinstance(a, np.ndarray) else a
                                         for a in args]) for L in (ember, torch))
        assert e.batch_shape == t.batch_shape and repr(e) == repr(t)
        close(e.log_prob(ember.tensor(0.5)), t.log_prob(torch.tensor(0.5)),
              np.float32 if e.loc.dtype == ember.float32 else np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ember.distributions.Normal(0.0, 1.0).entropy().dtype == ember.float32


@pytest.mark.slow
def test_normal_gradients(torch):
    loc, scale, x = rng.standard_normal(3), rng.random(3) + 0.5, rng.standard_normal((2, 3))
    grads = []
    for L in (ember, torch):
        a, b, v = (L.tensor(z, requires_grad=True) for z in (loc, scale, x))
        d = L.distributions.Normal(a, b)
        out = (d.log_prob(v).sum() + d.entropy().sum() + d.cdf(v).sum()
               + d.icdf(L.sigmoid(v)).sum())
        out.backward()
        grads.append((a.grad, b.grad, v.grad))
    for g, h in zip(*grads):
        close(g, h)
    a, b, v = (ember.tensor(z, requires_grad=True) for z in (loc, scale, x))

    def f(a, b, v):
        d = ed.Normal(a, b)
        return d.log_prob(v), d.entropy(), d.cdf(v), d.icdf(ember.sigmoid(v))

    assert ember.autograd.gradcheck(f, (a, b, v))
    assert ember.autograd.gradgradcheck(f, (a, b, v))


def test_normal_rsample_and_sample():
    ember.manual_seed(0)
    loc = ember.tensor([1.0, -2.0], requires_grad=True)
    scale = ember.tensor([0.5, 2.0], requires_grad=True)
    d = ed.Normal(loc, scale)
    assert d.has_rsample
    x = d.rsample((3,))
    assert x.shape == (3, 2) and x.dtype == ember.float32 and x.requires_grad
    x.sum().backward()  # d x / d loc = 1, d x / d scale = eps = (x - loc) / scale
    np.testing.assert_allclose(to_np(loc.grad), [3.0, 3.0])
    eps = (to_np(x) - to_np(loc)) / to_np(scale)
    np.testing.assert_allclose(to_np(scale.grad), eps.sum(0), rtol=1e-5)
    s = d.sample((20000,))
    assert s.shape == (20000, 2) and not s.requires_grad
    np.testing.assert_allclose(to_np(s).mean(0), [1.0, -2.0], atol=0.06)
    np.testing.assert_allclose(to_np(s).std(0), [0.5, 2.0], rtol=0.05)
    with pytest.warns(UserWarning, match="sample_n will be deprecated"):
        assert d.sample_n(4).shape == (4, 2)


def test_normal_errors(torch):
    for args in (([0.0, 1.0], [1.0, -1.0]), ([np.nan], [1.0]), ([0.0], [0.0])):
        got = [message(lambda: L.distributions.Normal(*map(L.tensor, args)))  # noqa: B023
               for L in (ember, torch)]
        assert got[0] == got[1]
    for value in ([[1.0, 2.0, 3.0]], [np.nan, 0.0], 0.5):
        got = []
        for L in (ember, torch):
            d = L.distributions.Normal(L.zeros(2), L.ones(2))
            v = value if isinstance(value, float) else L.tensor(value)
            got.append(message(lambda: d.log_prob(v)))  # noqa: B023
        assert got[0] == got[1]
    assert ed.Normal(ember.tensor([0.0]), ember.tensor([-1.0]), validate_args=False).scale < 0


# --------------------------------------------------------------------------- MultivariateNormal
def _mvn_args(L, kind, loc, cov):
    if kind == "covariance_matrix":
        return {kind: L.tensor(cov)}
    if kind == "precision_matrix":
        return {kind: L.tensor(np.linalg.inv(cov))}
    return {kind: L.tensor(np.linalg.cholesky(cov))}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
@pytest.mark.parametrize("loc_shape,cov_batch", [((3,), ()), ((2, 3), ()), ((2, 3), (4, 1))])
def test_mvn_values(torch, dtype, kind, loc_shape, cov_batch):
    loc = rng.standard_normal(loc_shape).astype(dtype)
    cov = pd_matrix(3, cov_batch, np.float64)
    e, t = (L.distributions.MultivariateNormal(
        L.tensor(loc), **{k: v.to(getattr(L, np.dtype(dtype).name))
                          for k, v in _mvn_args(L, kind, loc, cov).items()})
        for L in (ember, torch))
    assert e.batch_shape == t.batch_shape and e.event_shape == t.event_shape
    assert repr(e) == repr(t)
    x = rng.standard_normal((5,) + tuple(t.batch_shape) + (3,)).astype(dtype)
    tol = 1e-5 if dtype == np.float32 else 1e-10  # different factorisation / solve orders
    for name in ("log_prob(X)", "entropy()", "mean", "mode", "variance", "stddev", "scale_tril",
                 "covariance_matrix", "precision_matrix", "loc"):
        ev = eval("e." + name, {"e": e, "X": ember.tensor(x)})
        tv = eval("t." + name, {"t": t, "X": torch.tensor(x)})
        assert tuple(ev.shape) == tuple(tv.shape) and str(ev.dtype) == str(tv.dtype), name
        np.testing.assert_allclose(to_np(ev), to_np(tv), rtol=tol, atol=tol, err_msg=name)
    ex, tx = e.expand((6,) + tuple(t.batch_shape)), t.expand((6,) + tuple(t.batch_shape))
    assert ex.batch_shape == tx.batch_shape and repr(ex) == repr(tx)
    np.testing.assert_allclose(to_np(ex.log_prob(ember.tensor(x[0]))),
                               to_np(tx.log_prob(torch.tensor(x[0]))), rtol=tol, atol=tol)


@pytest.mark.slow
def test_mvn_gradients(torch):
    """Gradients through cholesky/solve_triangular/log-det agree with PyTorch's, to 2nd order."""
    a0, loc0, x0 = rng.standard_normal((3, 3)), rng.standard_normal(3), rng.standard_normal((4, 3))
    for kind in ("covariance_matrix", "precision_matrix", "scale_tril"):
        grads = []
        for L in (ember, torch):
            a, loc, x = (L.tensor(z, requires_grad=True) for z in (a0, loc0, x0))
            m = a @ a.mT + 3 * L.eye(3)
            param = L.linalg.cholesky(m) if kind == "scale_tril" else m
            d = L.distributions.MultivariateNormal(loc, **{kind: param})
            (d.log_prob(x).sum() + d.entropy() + d.variance.sum()).backward()
            grads.append((a.grad, loc.grad, x.grad))
        for g, h in zip(*grads):
            np.testing.assert_allclose(to_np(g), to_np(h), rtol=1e-10, atol=1e-12)

    def f(a, loc, x):
        d = ed.MultivariateNormal(loc, covariance_matrix=a @ a.mT + 3 * ember.eye(3),
                                  validate_args=False)
        return d.log_prob(x), d.entropy()

    args = [ember.tensor(z, requires_grad=True) for z in (a0, loc0, x0)]
    assert ember.autograd.gradcheck(f, args)
    assert ember.autograd.gradgradcheck(f, args)


def test_mvn_rsample():
    ember.manual_seed(0)
    cov = ember.tensor([[2.0, 0.6], [0.6, 1.0]], dtype=ember.float64)
    loc = ember.tensor([1.0, -1.0], dtype=ember.float64, requires_grad=True)
    d = ed.MultivariateNormal(loc, cov)
    x = d.rsample((20000,))
    assert x.shape == (20000, 2) and x.dtype == ember.float64 and x.requires_grad
    x.sum().backward()
    np.testing.assert_allclose(to_np(loc.grad), [20000.0, 20000.0])
    xs = to_np(x)
    np.testing.assert_allclose(xs.mean(0), [1.0, -1.0], atol=0.05)
    np.testing.assert_allclose(np.cov(xs.T), to_np(cov), atol=0.08)
    s = ed.MultivariateNormal(ember.zeros(2, 3), scale_tril=ember.eye(3)).sample((4,))
    assert s.shape == (4, 2, 3) and not s.requires_grad


def test_mvn_errors(torch):
    cases = [
        lambda L: L.distributions.MultivariateNormal(L.zeros(2)),
        lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.eye(2), scale_tril=L.eye(2)),
        lambda L: L.distributions.MultivariateNormal(L.tensor(0.0), L.eye(2)),
        lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.ones(2)),
        lambda L: L.distributions.MultivariateNormal(L.zeros(2), scale_tril=L.ones(2)),
        lambda L: L.distributions.MultivariateNormal(L.zeros(2), precision_matrix=L.ones(2)),
        lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.tensor([[1.0, 2.0], [2.0, 1]])),
        lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.tensor([[1.0, 0.5], [0, 1]])),
        lambda L: L.distributions.MultivariateNormal(L.zeros(2), scale_tril=L.ones(2, 2)),
        lambda L: L.distributions.MultivariateNormal(L.zeros(2), scale_tril=-L.eye(2)),
        lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.eye(2)).log_prob(L.zeros(3)),
        lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.eye(2)).log_prob(
            L.tensor([np.nan, 0.0])),
    ]
    for case in cases:
        assert message(lambda: case(ember)) == message(lambda: case(torch))  # noqa: B023


# --------------------------------------------------------------------------- KL divergence
def test_kl_values(torch):
    def T(L, v):
        return L.tensor(v, dtype=L.float64)

    pairs = [
        lambda L: (L.distributions.Normal(T(L, [0.0, 1.0]), T(L, [1.0, 2.0])),
                   L.distributions.Normal(T(L, [0.5]), T(L, [0.7]))),
        lambda L: (L.distributions.Categorical(probs=T(L, [[0.2, 0.8, 0.0], [0.3, 0.3, 0.4]])),
                   L.distributions.Categorical(probs=T(L, [0.5, 0.0, 0.5]))),
        lambda L: (L.distributions.Categorical(logits=T(L, [0.1, -1.0, 2.0])),
                   L.distributions.Categorical(logits=T(L, [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]))),
        lambda L: (L.distributions.MultivariateNormal(T(L, [[0.0, 1.0], [1.0, 1.0]]),
                                                      T(L, [[2.0, 0.3], [0.3, 1.0]])),
                   L.distributions.MultivariateNormal(T(L, [0.5, 0.0]),
                                                      scale_tril=T(L, [[1.0, 0.0], [0.4, 2.0]]))),
    ]
    for pair in pairs:
        e, t = (L.distributions.kl_divergence(*pair(L)) for L in (ember, torch))
        assert tuple(e.shape) == tuple(t.shape)
        close(e, t)
    grads = []
    for L in (ember, torch):
        x = L.tensor([[0.1, -1.0, 2.0]], dtype=L.float64, requires_grad=True)
        y = L.tensor([0.4, 0.3, 0.3], dtype=L.float64)
        L.distributions.kl.kl_divergence(L.distributions.Categorical(logits=x),
                                         L.distributions.Categorical(probs=y)).sum().backward()
        grads.append(x.grad)
    close(*grads)
    x = ember.tensor([0.3, 1.2], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda x: ed.kl_divergence(ed.Normal(x[0], x[1]), ed.Normal(0.5, 2.0)), (x,))


def test_register_kl_dispatch(torch):
    """Subclasses use the most specific registration; ambiguity warns; no match raises."""
    got = []
    for L in (ember, torch):
        D = L.distributions

        class MyNormal(D.Normal):
            pass

        class MyCat(D.Categorical):
            pass

        p, q = MyNormal(0.0, 1.0), MyNormal(1.0, 2.0)
        before = float(D.kl_divergence(p, q))

        @D.register_kl(MyNormal, D.Normal)
        def _left(p, q):
            return L.tensor(1.0)

        @D.register_kl(D.Normal, MyNormal)
        def _right(p, q):
            return L.tensor(2.0)

        with pytest.warns(RuntimeWarning) as record:
            ambiguous = float(D.kl_divergence(p, q))
        got.append((before, ambiguous, str(record[0].message),
                    message(lambda: D.kl_divergence(D.Normal(0.0, 1.0),  # noqa: B023
                                                    MyCat(logits=L.zeros(2))))))  # noqa: B023
    assert got[0][0] == pytest.approx(got[1][0], rel=1e-6)
    assert got[0][1:] == got[1][1:]
    with pytest.raises(TypeError):
        ed.register_kl(int, ed.Normal)


# --------------------------------------------------------------------------- base class
def test_base_class(torch):
    got = []
    for L in (ember, torch):
        D = L.distributions

        class Bare(D.Distribution):
            pass

        class Custom(D.Normal):
            def __init__(self, loc):
                super().__init__(loc, 1.0)

        with pytest.warns(UserWarning) as record:
            bare = Bare()
        row = [str(record[0].message).replace("torch", "T").replace("ember", "T")
               .replace("tests.distributions.test_distributions", "__main__")]
        for attr in ("mean", "variance", "support", "arg_constraints", "stddev"):
            row.append(message(lambda: getattr(bare, attr))[0])  # noqa: B023
        row.append(message(lambda: bare.mode)[1].split("'")[-2].split(".")[-1])  # noqa: B023
        for call in ("rsample()", "sample()", "log_prob(0)", "cdf(0)", "icdf(0)", "entropy()",
                     "enumerate_support()", "expand((2,))", "perplexity()"):
            row.append(message(lambda: eval("bare." + call, {"bare": bare}))[0])  # noqa: B023
        row.append(message(lambda: Custom(L.zeros(2)).expand((3, 2))))  # noqa: B023
        row.append(message(lambda: D.Distribution.set_default_validate_args(2)))
        row.append(D.Distribution._validate_args)
        row.append((L.distributions.Normal.has_rsample, D.Categorical.has_enumerate_support,
                    D.Categorical.has_rsample, repr(D.Normal.support),
                    repr(D.MultivariateNormal.support), repr(D.Categorical.arg_constraints),
                    repr(D.MultivariateNormal.arg_constraints)))
        D.Distribution.set_default_validate_args(False)
        try:
            row.append(D.Normal(L.tensor([0.0]), L.tensor([-1.0]))._validate_args)
        finally:
            D.Distribution.set_default_validate_args(True)
        got.append(row)
    assert got[0] == got[1]


def test_constraint_reprs_and_checks(torch):
    C, T = ed.constraints, torch.distributions.constraints
    names = ["boolean", "corr_cholesky", "dependent", "lower_cholesky", "lower_triangular",
             "nonnegative",
             "nonnegative_integer", "one_hot", "positive", "positive_definite",
             "positive_semidefinite", "positive_integer", "real", "real_vector", "simplex",
             "square", "symmetric", "unit_interval"]
    values = [np.array([[1.0, 0.0], [0.5, 2.0]]), np.array([[2.0, 1.0], [1.0, 2.0]]),
              np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 0.0]]),
              np.array([[0.0, 1.0], [-1.0, np.nan]])]
    for name in names:
        c, t = getattr(C, name), getattr(T, name)
        assert repr(c) == repr(t)
        if name == "dependent":
            assert C.is_dependent(c) and message(lambda: c.check(0)) == message(lambda: t.check(0))
            continue
        assert (c.event_dim, c.is_discrete) == (t.event_dim, t.is_discrete), name
        for v in values:
            close(c.check(ember.tensor(v)), t.check(torch.tensor(v)))
    for make in ("interval(0, 1)", "integer_interval(0, 3)", "greater_than(2)",
                 "greater_than_eq(2)", "less_than(1.5)", "half_open_interval(0, 1)",
                 "independent(real, 2)", "multinomial(3)", "cat([real, positive], 1, [1, 1])",
                 "cat([real_vector, simplex], -1)", "stack([real, positive], 1)",
                 "stack([real, positive], -2)", "stack([positive, real], 0)"):
        c, t = eval(make, dict(vars(C))), eval(make, dict(vars(T)))
        assert repr(c) == repr(t) and (c.event_dim, c.is_discrete) == (t.event_dim, t.is_discrete)
        for v in values:
            close(c.check(ember.tensor(v)), t.check(torch.tensor(v)))
    assert sorted(C.__all__) == sorted(T.__all__)


@pytest.mark.slow
def test_module_paths_under_run(torch, tmp_path):
    """Scripts import PyTorch's module paths (``python -m ember run`` maps torch to ember)."""
    script = tmp_path / "rl.py"
    script.write_text(
        "import torch\n"
        "from torch.distributions import Categorical\n"
        "from torch.distributions.normal import Normal\n"
        "from torch.distributions.multivariate_normal import MultivariateNormal\n"
        "from torch.distributions.kl import kl_divergence, register_kl\n"
        "from torch.distributions import constraints, utils\n"
        "from torch.distributions.distribution import Distribution\n"
        "d = Categorical(logits=torch.tensor([0.0, 1.0]))\n"
        "a = d.sample()\n"
        "print(d, d.log_prob(torch.tensor(1)), Normal(0.0, 1.0).entropy(), "
        "utils.probs_to_logits(torch.tensor([0.5])))\n")
    out = subprocess.run([sys.executable, "-m", "ember", "run", str(script)],
                         capture_output=True, text=True, check=True).stdout
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        runpy.run_path(str(script))  # the same script with real PyTorch, in this process
    assert out == buffer.getvalue()


def test_unimplemented_names_say_so(torch):
    """Every public name of torch.distributions is either in ember or refused clearly."""
    for name in torch.distributions.__all__:
        if name in ed.__all__:
            assert hasattr(ed, name)
            continue
        with pytest.raises(AttributeError, match=f"ember does not implement "
                                                 f"torch.distributions.{name} yet"):
            getattr(ed, name)
    missing = sorted(set(torch.distributions.__all__) - set(ed.__all__))
    if missing:
        with pytest.raises(ImportError, match=f"cannot import name '{missing[0]}'"):
            exec(f"from ember.distributions import {missing[0]}")  # Python's own words


def test_exponential_family_entropy(torch):
    """The generic Bregman-divergence entropy equals PyTorch's (and Normal's closed form)."""
    loc, scale = rng.standard_normal(3), rng.random(3) + 0.5
    e = ed.ExponentialFamily.entropy(ed.Normal(ember.tensor(loc), ember.tensor(scale)))
    t = torch.distributions.ExponentialFamily.entropy(
        torch.distributions.Normal(torch.tensor(loc), torch.tensor(scale)))
    close(e, t)
    np.testing.assert_allclose(to_np(e), 0.5 + 0.5 * np.log(2 * np.pi) + np.log(scale),
                               rtol=1e-12)


def test_lazy_parameters_track_gradients_under_no_grad(torch):
    """A parameter derived lazily inside no_grad still differentiates, as in PyTorch."""
    grads = []
    for L in (ember, torch):
        x = L.tensor([0.1, 0.5, -0.3], dtype=L.float64, requires_grad=True)
        d = L.distributions.Categorical(logits=x)
        with L.no_grad():
            probs = d.probs
        (probs * L.tensor([1.0, 2.0, 3.0], dtype=L.float64)).sum().backward()
        grads.append(x.grad)
    close(*grads)
