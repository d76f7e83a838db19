"""Every distribution of ``cases.CASES`` against PyTorch's: shapes, reprs, supports, moments,
densities, cdf/icdf, entropy, expand, gradients; sampling by shape, support and moments.

Parameters are random (fixed seed), float32 and float64, with no batch, a batch, and
parameters of different shapes that broadcast. Where PyTorch raises for a property
(``NotImplementedError``: no closed form), ember must raise the same type.
"""
import contextlib
import math
import re

import numpy as np
import pytest

import ember

from ..oracle import assert_same_tensor
from .cases import CASES

RTOL = {np.float32: 2e-5, np.float64: 1e-10}
ATOL = {np.float32: 1e-5, np.float64: 1e-10}
BATCHES = {"scalar": (), "batch": (3,), "batch2": (2, 3), "broadcast": None}
# gradients of entropies go through ember's trigamma, accurate to about 1e-9 relative
GRAD_RTOL = 1e-8
PROPERTIES = ("mean", "variance", "stddev", "mode", "entropy()", "param_shape")


def _ids(case):
    return case.name + (f"-{case.id}" if case.id else "")


def make_params(case, batch, dtype, seed=0):
    rng = np.random.default_rng(seed)
    arrays = {}
    for i, (name, gen) in enumerate(case.params.items()):
        shape = batch if batch is not None else ((2, 1) if i == 0 else (3,))
        v = gen(rng, shape, dtype)
        arrays[name] = v if type(v) in (int, float) else np.asarray(v, dtype)
    return arrays


@contextlib.contextmanager
def torch_default(torch, case, dtype):
    """PyTorch with float64 as its default dtype, for a case that needs it in float64
    (GeneralizedPareto compares with a default-dtype tensor: "Double did not match Float")."""
    if not (case.torch_default64 and dtype is np.float64):
        yield
        return
    saved = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(saved)


def _both(torch, case, batch, dtype):
    arrays = make_params(case, batch, dtype)
    return arrays, case.build(ember, arrays), case.build(torch, arrays)


def _attempt(fn):
    try:
        return fn(), None
    except (NotImplementedError, AttributeError) as e:
        return None, e


def _keys(text):
    return re.findall(r"(\w+): ", text)


def _get(obj, name):
    if name.endswith("()"):
        return getattr(obj, name[:-2])()
    return getattr(obj, name)


def _close(e, t, dtype, rtol=None):
    if isinstance(t, tuple):  # torch.Size
        assert tuple(e) == tuple(t)
        return
    assert_same_tensor(e, t, rtol=rtol or RTOL[dtype], atol=ATOL[dtype])


def _array_params(case, batch):
    arrays = make_params(case, batch, np.float64)
    return [k for k, v in arrays.items() if isinstance(v, np.ndarray)]


@pytest.mark.parametrize("batch", list(BATCHES))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_values_against_torch(torch, case, dtype, batch):
    if batch not in case.batches:
        pytest.skip("PyTorch cannot run this case with this batch")
    if BATCHES[batch] is None and len(_array_params(case, ())) < 2:
        pytest.skip("one parameter: nothing to broadcast")
    with torch_default(torch, case, dtype):
        _compare_values(torch, case, dtype, batch)


def _compare_values(torch, case, dtype, batch):
    arrays, e, t = _both(torch, case, BATCHES[batch], dtype)
    assert e.batch_shape == t.batch_shape and e.event_shape == t.event_shape
    assert repr(e) == repr(t)
    assert e.has_rsample == t.has_rsample
    assert e.has_enumerate_support == t.has_enumerate_support
    if "tensor(" not in repr(t.support):  # (bounds that are tensors print per library)
        assert repr(e.support) == repr(t.support)
    for name in PROPERTIES:
        if name in case.skip:
            continue
        want, t_err = _attempt(lambda: _get(t, name))
        got, e_err = _attempt(lambda: _get(e, name))
        if t_err is not None:
            assert type(e_err) is type(t_err), (name, e_err, t_err)
            continue
        assert e_err is None, (name, e_err)
        _close(got, want, dtype, case.rtol.get(name) if dtype is np.float64 else None)
    rng = np.random.default_rng(1)
    shape = (2,) + tuple(t.batch_shape) + tuple(t.event_shape)
    value = case.value(rng, shape, dtype, arrays)
    _close(e.log_prob(ember.tensor(value)), t.log_prob(torch.tensor(value)), dtype)
    want, t_err = _attempt(lambda: t.cdf(torch.tensor(value)))
    if t_err is None:
        _close(e.cdf(ember.tensor(value)), want, dtype)
    if case.icdf:
        u = rng.uniform(0.02, 0.98, shape).astype(dtype)
        _close(e.icdf(ember.tensor(u)), t.icdf(torch.tensor(u)), dtype)
    if t.has_enumerate_support:
        for expand in (True, False):
            _close(e.enumerate_support(expand), t.enumerate_support(expand), dtype)
    # derived parameters computed since: the repr names the same parameters (their last digits
    # may differ: a probability derived from logits rounds differently)
    assert _keys(repr(e)) == _keys(repr(t))


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_expand(torch, case):
    with torch_default(torch, case, np.float64):
        _compare_expand(torch, case)


def _compare_expand(torch, case):
    if "batch" not in case.batches:
        pytest.skip("PyTorch cannot run this case with a batch")
    arrays, e, t = _both(torch, case, (3,), np.float64)
    ee, te = e.expand((2, 3)), t.expand((2, 3))
    assert ee.batch_shape == te.batch_shape and ee.event_shape == te.event_shape
    rng = np.random.default_rng(2)
    value = case.value(rng, (2, 3) + tuple(t.event_shape), np.float64, arrays)
    _close(ee.log_prob(ember.tensor(value)), te.log_prob(torch.tensor(value)), np.float64)
    assert ee.sample().shape == te.sample().shape


def _grads(lib, case, arrays, value, with_entropy):
    params = {k: lib.tensor(v, requires_grad=True) if isinstance(v, np.ndarray) else v
              for k, v in arrays.items()}
    names = [k for k, v in params.items() if not isinstance(v, (int, float))]
    if case.make is not None:
        d = case.make(lib, **params)
    else:
        d = getattr(lib.distributions, case.name)(**params)
    out = d.log_prob(lib.tensor(value)).sum()
    if with_entropy:
        out = out + d.entropy().sum()
    return lib.autograd.grad(out, [params[k] for k in names])


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_gradients_against_torch(torch, case):
    arrays = make_params(case, _batch_for(case), np.float64)
    with torch_default(torch, case, np.float64):
        t = case.build(torch, arrays)
    with_entropy = _attempt(t.entropy)[1] is None
    value = case.value(np.random.default_rng(3), (2, 3) + tuple(t.event_shape), np.float64,
                       arrays)
    got = _grads(ember, case, arrays, value, with_entropy)
    with torch_default(torch, case, np.float64):
        want = _grads(torch, case, arrays, value, with_entropy)
    names = [k for k, v in arrays.items() if isinstance(v, np.ndarray)]
    for name, g, w in zip(names, got, want):
        if name == "scale_tril":  # only the lower triangle is read: PyTorch's gradient has
            g, w = g.tril(), w.tril()  # (meaningless) upper entries from cholesky_solve
        _close(g, w, np.float64, rtol=GRAD_RTOL)


def _batch_for(case):
    return (3,) if "batch" in case.batches else ()


def _structured(name, t):
    """A matrix parameter made what its constraint asks from free entries (finite
    differences move one entry at a time): symmetric, or lower triangular."""
    if name in ("covariance_matrix", "precision_matrix"):
        return (t + t.mT) / 2
    if name == "scale_tril":
        return t.tril()
    return t


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_gradcheck(case):
    arrays = make_params(case, (2,) if "batch" in case.batches else (), np.float64)
    names = [k for k, v in arrays.items() if isinstance(v, np.ndarray)]
    d0 = case.build(ember, arrays)
    value = ember.tensor(case.value(np.random.default_rng(4), (2,) + tuple(d0.event_shape),
                                    np.float64, arrays))
    has_entropy = _attempt(d0.entropy)[1] is None

    def fn(*tensors):
        kwargs = dict(arrays)
        kwargs.update(zip(names, (_structured(k, t) for k, t in zip(names, tensors))))
        d = case.make(ember, **kwargs) if case.make else \
            getattr(ember.distributions, case.name)(validate_args=False, **kwargs)
        out = d.log_prob(value)
        return (out, d.entropy()) if has_entropy else out

    inputs = [ember.tensor(arrays[k], requires_grad=True) for k in names]
    assert ember.autograd.gradcheck(fn, inputs)
    assert ember.autograd.gradgradcheck(fn, inputs)


def _check_distribution_of(d, s, case):
    """Where the distribution has a cdf: the Kolmogorov-Smirnov distance of each batch
    element's draws from it is within what 20000 draws from it give (sqrt(n) D < 2.2: a
    false alarm about once in 10^4)."""
    if d.event_shape or d.support.is_discrete or _attempt(lambda: d.cdf(s[:1]))[1]:
        return
    n = s.shape[0]
    ordered = np.sort(s.numpy(), axis=0)
    cdf = d.cdf(ember.tensor(ordered)).numpy()
    ranks = np.arange(1, n + 1).reshape((n,) + (1,) * (cdf.ndim - 1))
    distance = np.maximum(ranks / n - cdf, cdf - (ranks - 1) / n).max(0)
    assert (math.sqrt(n) * distance < 2.2).all(), distance


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_sampling(case):
    arrays = make_params(case, _batch_for(case), np.float64)
    d = case.build(ember, arrays)
    ember.manual_seed(0)
    n = 20000
    s = d.sample((n,))
    assert s.shape == (n,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert s.dtype == ember.float64 and not s.requires_grad
    assert bool(d.support.check(s).all())
    _check_distribution_of(d, s, case)
    if case.name == "VonMises":  # angles wrap: E[cos(x - loc)] = I1/I0 = 1 - variance
        got = (s - d.loc).cos().mean(0).numpy()
        assert np.abs(got - (1 - d.variance).numpy()).max() < 5 / math.sqrt(n)
        return
    mean, var = _attempt(lambda: d.mean)[0], _attempt(lambda: d.variance)[0]
    if case.heavy or mean is None or not bool(mean.isfinite().all()) \
            or not bool(var.isfinite().all()):
        return
    sd = var.sqrt().numpy()
    err = np.abs(s.mean(0).numpy() - mean.numpy())
    assert (err <= 5 * sd / math.sqrt(n) + 1e-12).all(), (err, sd)
    # the variance too (a wrong spread with the right mean fails here)
    sample_var = s.var(0).numpy()
    assert (np.abs(sample_var - var.numpy()) <= 0.1 * var.numpy() + 1e-12).all()
    if d.has_rsample:
        params = {k: ember.tensor(v, requires_grad=True) if isinstance(v, np.ndarray) else v
                  for k, v in arrays.items()}
        dr = case.make(ember, **params) if case.make else \
            getattr(ember.distributions, case.name)(**params)
        r = dr.rsample((5,))
        assert r.requires_grad and r.shape == (5,) + tuple(d.batch_shape) + tuple(d.event_shape)
