"""``torch.svd``/``qr``/``pinverse``, ``hsplit``/``vsplit``/``dsplit`` and
``Tensor.fill_diagonal_`` against PyTorch: values, return types, grad_fns, gradients, errors."""
import warnings

import numpy as np
import pytest

import ember

from ..conftest import to_np
from ..opspec import Spec, op_tests

SPECS = [
    # U V^T and S do not depend on the singular vectors' signs
    Spec("svd", lambda L, a: (lambda r: (r.S, r.U @ r.V.mT))(L.svd(a)), [((4, 3),), ((3, 3),)]),
    Spec("svd_full", lambda L, a: (lambda r: r.U[..., :, :3] @ r.V.mT)(L.svd(a, some=False)),
         [((2, 4, 3),)]),
    Spec("svd_no_uv", lambda L, a: L.svd(a, compute_uv=False)[1], [((4, 3),)]),
    Spec("qr", lambda L, a: tuple(L.qr(a)), [((4, 3),), ((3, 3),)]),
    # (float32 decompositions run in float64 here: last digits differ)
    Spec("pinverse", lambda L, a: L.pinverse(a), [((4, 3),), ((2, 3, 4),)], tol=10),
    Spec("hsplit", lambda L, a: L.hsplit(a, [1, 3]), [((2, 4),), ((5,),)]),
    Spec("vsplit", lambda L, a: a.vsplit(2), [((4, 3),)]),
    Spec("dsplit", lambda L, a: L.dsplit(a, [1]), [((2, 2, 3),)]),
    Spec("fill_diagonal_", lambda L, a: (a * 1).fill_diagonal_(0.5), [((3, 4),), ((3, 3, 3),)]),
    Spec("quantile", lambda L, a: L.quantile(a, 0.3), [((7,),), ((3, 4),)], distinct=True),
    Spec("quantile_dim", lambda L, a: a.quantile(0.65, dim=0, keepdim=True), [((5, 3),)],
         distinct=True),
    Spec("quantile_q_vector", lambda L, a: L.quantile(
        a, L.tensor([0.1, 0.5, 0.95], dtype=a.dtype), dim=1, interpolation="midpoint"),
        [((2, 5, 3),)], distinct=True),
    Spec("nanquantile", lambda L, a: L.nanquantile(a.masked_fill(a > 1.5, float("nan")), 0.4,
                                                   dim=-1), [((3, 6),)], distinct=True),
]
test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


def test_return_types_and_shapes(torch):
    for lib in (ember, torch):
        a = lib.randn(2, 5, 3, dtype=lib.float64)
        r = lib.svd(a)
        assert type(r).__name__ == "svd" and [tuple(t.shape) for t in r] == [(2, 5, 3), (2, 3),
                                                                              (2, 3, 3)]
        r = lib.svd(a, some=False, compute_uv=False)
        assert [tuple(t.shape) for t in r] == [(2, 5, 5), (2, 3), (2, 3, 3)]
        assert not r.U.any() and not r.V.any()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            q = lib.qr(a, some=False)
        assert type(q).__name__ == "qr" and tuple(q.Q.shape) == (2, 5, 5)
        assert tuple(a.pinverse().shape) == (2, 3, 5)


@pytest.mark.parametrize("shape,wrap", [((3, 4), False), ((7, 3), True), ((7, 3), False),
                                        ((4, 3), True), ((2, 2, 2), False), ((3, 3, 3, 3), False)])
def test_fill_diagonal_matches_torch(torch, shape, wrap):
    outs = []
    for lib in (ember, torch):
        x = lib.zeros(*shape, dtype=lib.int64)
        assert x.fill_diagonal_(2.7, wrap=wrap) is x
        outs.append(to_np(x))
    np.testing.assert_array_equal(*outs)


SPLIT_ERRORS = [
    lambda L: L.hsplit(L.ones(4, 6), 4), lambda L: L.hsplit(L.ones(5), 2),
    lambda L: L.hsplit(L.ones(()), 1), lambda L: L.vsplit(L.ones(3), 1),
    lambda L: L.dsplit(L.ones(2, 3), 2), lambda L: L.hsplit(L.ones(2, 2), 2.0),
    lambda L: L.zeros(2, 3, 4).fill_diagonal_(1), lambda L: L.zeros(3).fill_diagonal_(1),
    lambda L: L.ones(2, 2, requires_grad=True).fill_diagonal_(1),
]


@pytest.mark.parametrize("make", SPLIT_ERRORS)
def test_errors_match_torch(torch, make):
    got = []
    for lib in (ember, torch):
        with pytest.raises((RuntimeError, TypeError)) as err:
            make(lib)
        got.append((type(err.value), str(err.value)))
    assert got[0] == got[1]


def test_qr_warns_once(torch):
    import ember.ops.legacy as legacy
    legacy._qr_warned = False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ember.qr(ember.eye(2))
        ember.qr(ember.eye(2))
    assert len(caught) == 1 and str(caught[0].message).startswith("torch.qr is deprecated")


QUANTILE_CASES = [dict(q=0.3), dict(q=0.3, dim=1), dict(q=[0.2, 0.7], dim=0, keepdim=True),
                  dict(q=[0.1, 0.9]), dict(q=0.5, dim=-1, keepdim=True, interpolation="nearest"),
                  dict(q=0.25, dim=0, interpolation="midpoint"),
                  dict(q=1.0, interpolation="higher"), dict(q=0.0, dim=1, interpolation="lower")]


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("kwargs", QUANTILE_CASES)
def test_quantile_with_nans_matches_torch(torch, name, kwargs):
    data = np.random.default_rng(0).standard_normal((3, 5))
    data[1, 2] = np.nan
    data[2, :] = np.nan
    outs = []
    for lib in (ember, torch):
        kw = dict(kwargs)
        q = kw.pop("q")
        q = lib.tensor(q, dtype=lib.float64) if isinstance(q, list) else q
        y = getattr(lib, name)(lib.tensor(data), q, **kw)
        outs.append(to_np(y))
    assert outs[0].shape == outs[1].shape
    np.testing.assert_allclose(*outs, rtol=1e-12)


QUANTILE_ERRORS = [
    lambda L, f: f(L.ones(3, dtype=L.int64), 0.5), lambda L, f: f(L.ones(3), 1.5),
    lambda L, f: f(L.ones(3), L.tensor([0.5, 2.0])),
    lambda L, f: f(L.ones(3), L.tensor([0.5], dtype=L.float64)),
    lambda L, f: f(L.ones(3), L.ones(2, 2) / 2), lambda L, f: f(L.ones(0), 0.5),
    lambda L, f: f(L.ones(3), 0.5, interpolation="cubic"), lambda L, f: f(L.ones(3), 0.5, dim=2),
]


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("make", QUANTILE_ERRORS)
def test_quantile_errors_match_torch(torch, name, make):
    got = []
    for lib in (ember, torch):
        with pytest.raises((RuntimeError, IndexError)) as err:
            make(lib, getattr(lib, name))
        got.append((type(err.value), str(err.value)))
    assert got[0] == got[1]


def test_chain_matmul_matches_torch(torch):
    import ember.ops.legacy as legacy
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal(s) for s in ((2, 3), (3, 4), (4, 5))]
    outs = []
    for lib in (ember, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            legacy._chain_warned = False
            ts = [lib.tensor(a, requires_grad=True) for a in arrs]
            y = lib.chain_matmul(*ts)
            one = lib.chain_matmul(ts[0])
        y.sum().backward()
        outs.append((to_np(y), [to_np(t.grad) for t in ts], type(y.grad_fn).__name__,
                     type(one.grad_fn).__name__, str(caught[0].message).split(" (Trig")[0]))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-12)
    for a, b in zip(outs[0][1], outs[1][1]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    assert outs[0][2:] == outs[1][2:]
    with pytest.raises(RuntimeError, match="Expected one or more matrices"):
        ember.chain_matmul()
