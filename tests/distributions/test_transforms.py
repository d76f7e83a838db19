"""``ember.distributions.transforms`` and ``biject_to``/``transform_to`` against PyTorch's.

Each transform is built the same way in both libraries and applied to the same inputs:
outputs, inverses, log-Jacobians, shapes, domains/codomains, reprs, signs and caching agree;
gradients of the output and log-Jacobian are checked by finite differences (first and second
order) in float64 and against PyTorch's.
"""
import numpy as np
import pytest

import ember

from ..oracle import assert_same_tensor, error_of

RTOL = {np.float32: 2e-5, np.float64: 1e-11}


def _real(shape):
    return lambda rng: rng.standard_normal(shape)


def _positive(shape):
    return lambda rng: rng.uniform(0.3, 3.0, shape)


# name -> (build(lib), input generator, bijective-in-practice: the inverse recovers x)
TRANSFORMS = {
    "exp": (lambda L: L.distributions.ExpTransform(), _real((3, 4)), True),
    "sigmoid": (lambda L: L.distributions.SigmoidTransform(), _real((3, 4)), True),
    "tanh": (lambda L: L.distributions.TanhTransform(), _real((3, 4)), True),
    "softplus": (lambda L: L.distributions.SoftplusTransform(), _real((3, 4)), True),
    "abs": (lambda L: L.distributions.AbsTransform(), _positive((3, 4)), True),
    "power": (lambda L: L.distributions.PowerTransform(L.tensor([0.5, 2.0, -1.5, 3.0],
                                                                dtype=L.float64)),
              _positive((3, 4)), True),
    "power-number": (lambda L: L.distributions.PowerTransform(2.0), _positive((3, 4)), True),
    "affine": (lambda L: L.distributions.AffineTransform(
        L.tensor([0.5, -1.0, 2.0, 0.0], dtype=L.float64),
        L.tensor([2.0, -0.5, 1.5, -3.0], dtype=L.float64)), _real((3, 4)), True),
    "affine-numbers": (lambda L: L.distributions.AffineTransform(2.0, -3.0), _real((3, 4)), True),
    "affine-event": (lambda L: L.distributions.AffineTransform(
        1.0, L.tensor([2.0, -0.5, 1.5, 3.0], dtype=L.float64), event_dim=1),
        _real((3, 4)), True),
    "stick-breaking": (lambda L: L.distributions.StickBreakingTransform(), _real((3, 4)), True),
    "softmax": (lambda L: L.distributions.SoftmaxTransform(), _real((3, 4)), False),
    "lower-cholesky": (lambda L: L.distributions.LowerCholeskyTransform(), _real((2, 3, 3)),
                       False),
    "positive-definite": (lambda L: L.distributions.PositiveDefiniteTransform(),
                          _real((2, 3, 3)), False),
    "corr-cholesky": (lambda L: L.distributions.CorrCholeskyTransform(), _real((2, 6)), True),
    "compose": (lambda L: L.distributions.ComposeTransform(
        [L.distributions.AffineTransform(0.5, 2.0), L.distributions.ExpTransform(),
         L.distributions.PowerTransform(0.5)]), _real((3, 4)), True),
    "compose-event": (lambda L: L.distributions.ComposeTransform(
        [L.distributions.ExpTransform(), L.distributions.StickBreakingTransform()]),
        _real((3, 4)), False),
    "identity": (lambda L: L.distributions.identity_transform, _real((3, 4)), True),
    "independent": (lambda L: L.distributions.IndependentTransform(
        L.distributions.SigmoidTransform(), 1), _real((3, 4)), True),
    "reshape": (lambda L: L.distributions.ReshapeTransform((4,), (2, 2)), _real((3, 4)), True),
    "inverse": (lambda L: L.distributions.ExpTransform().inv, _positive((3, 4)), True),
    "cat": (lambda L: L.distributions.CatTransform(
        [L.distributions.ExpTransform(), L.distributions.identity_transform,
         L.distributions.SigmoidTransform()], dim=1, lengths=[1, 2, 1]), _real((3, 4)), True),
    "cat-event": (lambda L: L.distributions.CatTransform(
        [L.distributions.ExpTransform(), L.distributions.SigmoidTransform()], dim=-1,
        lengths=[2, 2]), _real((3, 4)), True),
    "stack": (lambda L: L.distributions.StackTransform(
        [L.distributions.ExpTransform(), L.distributions.TanhTransform(),
         L.distributions.identity_transform, L.distributions.SoftplusTransform()], dim=1),
        _real((3, 4)), True),
    "cdf": (lambda L: L.distributions.CumulativeDistributionTransform(
        L.distributions.Normal(L.tensor(0.5, dtype=L.float64),
                               L.tensor(2.0, dtype=L.float64))), _real((3, 4)), True),
}


def _close(e, t, dtype):
    assert_same_tensor(e, t, rtol=RTOL[dtype], atol=RTOL[dtype])


def _outcome(fn):
    try:
        return fn(), None
    except (NotImplementedError, ValueError) as e:
        return None, e


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transform_against_torch(torch, name, dtype):
    build, gen, invertible = TRANSFORMS[name]
    x = gen(np.random.default_rng(0)).astype(dtype)
    e, t = build(ember), build(torch)
    if name in ("power", "affine", "affine-event", "cdf"):  # parameters in x's dtype
        e, t = _in_dtype(ember, name, dtype), _in_dtype(torch, name, dtype)
    assert repr(e) == repr(t)
    assert repr(e.domain) == repr(t.domain) and repr(e.codomain) == repr(t.codomain)
    assert e.bijective == t.bijective
    for attr in ("event_dim", "sign"):
        want, t_err = _outcome(lambda: getattr(t, attr))
        got, e_err = _outcome(lambda: getattr(e, attr))
        assert type(e_err) is type(t_err)
        if t_err is None:
            if hasattr(want, "shape"):
                _close(got, want, dtype)
            else:
                assert got == want
    ye, yt = e(ember.tensor(x)), t(torch.tensor(x))
    _close(ye, yt, dtype)
    assert tuple(e.forward_shape(x.shape)) == tuple(t.forward_shape(x.shape))
    assert tuple(e.inverse_shape(yt.shape)) == tuple(t.inverse_shape(yt.shape))
    y = yt.numpy()
    _close(e.inv(ember.tensor(y)), t.inv(torch.tensor(y)), dtype)
    if invertible and dtype is np.float64:
        np.testing.assert_allclose(e.inv(ye).numpy(), x, rtol=1e-9, atol=1e-9)
    want, t_err = _outcome(lambda: t.log_abs_det_jacobian(torch.tensor(x), yt))
    got, e_err = _outcome(lambda: e.log_abs_det_jacobian(ember.tensor(x), ye))
    assert type(e_err) is type(t_err)
    if t_err is None:
        _close(got, want, dtype)


def _in_dtype(lib, name, dtype):
    d = lib.float32 if dtype is np.float32 else lib.float64
    D = lib.distributions
    if name == "power":
        return D.PowerTransform(lib.tensor([0.5, 2.0, -1.5, 3.0], dtype=d))
    if name == "affine":
        return D.AffineTransform(lib.tensor([0.5, -1.0, 2.0, 0.0], dtype=d),
                                 lib.tensor([2.0, -0.5, 1.5, -3.0], dtype=d))
    if name == "affine-event":
        return D.AffineTransform(1.0, lib.tensor([2.0, -0.5, 1.5, 3.0], dtype=d), event_dim=1)
    return D.CumulativeDistributionTransform(D.Normal(lib.tensor(0.5, dtype=d),
                                                      lib.tensor(2.0, dtype=d)))


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transform_gradients(torch, name):
    build, gen, _ = TRANSFORMS[name]
    x = gen(np.random.default_rng(1))
    e, t = build(ember), build(torch)
    xt = torch.tensor(x, requires_grad=True)
    jacobian, error = _outcome(lambda: t.log_abs_det_jacobian(xt, t(xt)))
    has_jacobian = error is None and jacobian.requires_grad  # (not a constant)

    def fn(lib, tr):
        def f(v):
            y = tr(v)
            if not has_jacobian:
                return y
            return y, tr.log_abs_det_jacobian(v, y)
        return f

    xe = ember.tensor(x, requires_grad=True)
    assert ember.autograd.gradcheck(fn(ember, e), (xe,))
    assert ember.autograd.gradgradcheck(fn(ember, e), (xe,))
    outs_e, outs_t = fn(ember, e)(xe), fn(torch, t)(xt)
    if not has_jacobian:
        outs_e, outs_t = (outs_e,), (outs_t,)
    w = np.random.default_rng(2)
    for oe, ot in zip(outs_e, outs_t):
        assert oe.requires_grad == ot.requires_grad
        if not ot.requires_grad:  # a constant log-Jacobian (affine, reshape, identity)
            continue
        g = w.standard_normal(tuple(ot.shape))
        (ge,) = ember.autograd.grad(oe, xe, ember.tensor(g), retain_graph=True)
        (gt,) = torch.autograd.grad(ot, xt, torch.tensor(g), retain_graph=True)
        _close(ge, gt, np.float64)


def test_parameter_gradients(torch):
    """Gradients reach a transform's own parameters (affine loc/scale, power exponent)."""
    x = np.random.default_rng(3).uniform(0.5, 2.0, (3, 4))
    grads = []
    for L in (ember, torch):
        loc = L.tensor([0.5, -1.0, 2.0, 0.3], dtype=L.float64, requires_grad=True)
        scale = L.tensor([2.0, -0.5, 1.5, -3.0], dtype=L.float64, requires_grad=True)
        exponent = L.tensor([0.5, 2.0, -1.5, 3.0], dtype=L.float64, requires_grad=True)
        chain = L.distributions.ComposeTransform([L.distributions.PowerTransform(exponent),
                                                  L.distributions.AffineTransform(loc, scale)])
        v = L.tensor(x)
        y = chain(v)
        out = y.sum() + chain.log_abs_det_jacobian(v, y).sum()
        grads.append(L.autograd.grad(out, [loc, scale, exponent]))
    for g, w in zip(*grads):
        _close(g, w, np.float64)


def test_caching_and_identity(torch):
    for L in (ember, torch):
        D = L.distributions
        x = L.randn(3, dtype=L.float64)
        cached = D.ExpTransform(cache_size=1)
        y = cached(x)
        assert cached.inv(y) is x and cached(x) is y
        plain = D.ExpTransform()
        assert plain.inv(plain(x)) is not x
        assert plain.inv.inv is plain and plain.with_cache(0) is plain
        assert D.ExpTransform() == D.ExpTransform() and D.ExpTransform() != D.TanhTransform()
        assert D.ExpTransform().inv == D.ExpTransform().inv
        assert D.AffineTransform(1.0, 2.0) == D.AffineTransform(1.0, 2.0)
        assert D.AffineTransform(1.0, 2.0) != D.AffineTransform(1.0, 3.0)
        assert D.ComposeTransform([D.ExpTransform()]) == D.ComposeTransform([D.ExpTransform()])
        chain = D.ComposeTransform([D.ExpTransform(), D.AffineTransform(0.0, 2.0)],
                                   cache_size=1)
        assert all(p._cache_size == 1 for p in chain.parts)
        assert chain.inv.inv is chain
        assert D.identity_transform(x) is x
    assert repr(ember.distributions.ExpTransform().inv) == repr(
        torch.distributions.ExpTransform().inv)


def test_transform_errors(torch):
    def cases(L):
        D = L.distributions
        return [
            lambda: D.ExpTransform(cache_size=2),
            lambda: D.ReshapeTransform((2, 3), (4,)),
            lambda: D.ReshapeTransform((4,), (2, 2)).forward_shape((3,)),
            lambda: D.CorrCholeskyTransform().forward_shape((5,)),
            lambda: D.CorrCholeskyTransform().inverse_shape((3, 4)),
            lambda: D.StickBreakingTransform().forward_shape(()),
            lambda: D.StickBreakingTransform().sign,
            lambda: D.TransformedDistribution(D.Normal(0.0, 1.0), 3),
            lambda: D.TransformedDistribution(D.Normal(0.0, 1.0), [3]),
            lambda: D.TransformedDistribution(D.Normal(0.0, 1.0), D.StickBreakingTransform()),
            lambda: D.AffineTransform(0.0, 1.0, cache_size=1).with_cache(0).with_cache(3),
            lambda: D.biject_to(D.constraints.lower_cholesky),
            lambda: D.CumulativeDistributionTransform(D.Normal(0.0, 1.0)).with_cache(1)
            .with_cache(2),
        ]
    for fe, ft in zip(cases(ember), cases(torch)):
        assert error_of(fe, exact_type=False) == error_of(ft, exact_type=False)


CONSTRAINTS = [
    ("real", lambda C: C.real, (3, 4)),
    ("positive", lambda C: C.positive, (3, 4)),
    ("nonnegative", lambda C: C.nonnegative, (3, 4)),
    ("greater_than", lambda C: C.greater_than(2.0), (3, 4)),
    ("greater_than_eq", lambda C: C.greater_than_eq(-1.0), (3, 4)),
    ("less_than", lambda C: C.less_than(1.5), (3, 4)),
    ("unit_interval", lambda C: C.unit_interval, (3, 4)),
    ("interval", lambda C: C.interval(-2.0, 5.0), (3, 4)),
    ("half_open_interval", lambda C: C.half_open_interval(0.0, 3.0), (3, 4)),
    ("simplex", lambda C: C.simplex, (3, 4)),
    ("real_vector", lambda C: C.real_vector, (3, 4)),
    ("independent", lambda C: C.independent(C.positive, 2), (3, 4)),
    ("corr_cholesky", lambda C: C.corr_cholesky, (2, 6)),
    ("lower_cholesky", lambda C: C.lower_cholesky, (2, 3, 3)),
    ("positive_definite", lambda C: C.positive_definite, (2, 3, 3)),
    ("positive_semidefinite", lambda C: C.positive_semidefinite, (2, 3, 3)),
    ("cat", lambda C: C.cat([C.positive, C.real, C.unit_interval], 1, [2, 1, 1]), (3, 4)),
    ("stack", lambda C: C.stack([C.positive, C.real, C.unit_interval, C.real], 1), (3, 4)),
]


@pytest.mark.parametrize("name,make,shape", CONSTRAINTS, ids=[c[0] for c in CONSTRAINTS])
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_constraint_registries(torch, registry, name, make, shape):
    x = np.random.default_rng(4).standard_normal(shape)
    results = []
    for L in (ember, torch):
        reg = getattr(L.distributions, registry)
        c = make(L.distributions.constraints)
        try:
            tr = reg(c)
        except NotImplementedError as e:
            results.append(("raises", str(e)))
            continue
        y = tr(L.tensor(x))
        assert bool(c.check(y).all())
        results.append((repr(tr), y))
    (re, ye), (rt, yt) = results
    assert re == rt
    if re != "raises":
        _close(ye, yt, np.float64)
        tr = getattr(ember.distributions, registry)(make(ember.distributions.constraints))
        if tr.bijective:
            np.testing.assert_allclose(tr.inv(ye).numpy(), x, rtol=1e-9, atol=1e-9)


def test_register_a_new_constraint(torch):
    class Positive2(ember.distributions.constraints.Constraint):
        def check(self, value):
            return value > 2

    registry = ember.distributions.constraint_registry.ConstraintRegistry()
    registry.register(Positive2, lambda c: ember.distributions.ExpTransform())
    assert isinstance(registry(Positive2()), ember.distributions.ExpTransform)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint"):
        registry.register(3, lambda c: None)
