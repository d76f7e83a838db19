"""The losses of ``ember/nn/functional/`` against PyTorch: values, dtypes,
``grad_fn``, gradients (and finite differences in float64), the modules, and the errors."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

from ..conftest import to_np
from ..opspec import Spec, op_tests

_T = [0, 3, 1]
SPECS = [
    Spec("multi_margin_loss", lambda L, x: L.nn.functional.multi_margin_loss(
        x, L.tensor(_T), margin=0.7), [((3, 4),)]),
    Spec("multi_margin_loss_p2", lambda L, x: L.nn.functional.multi_margin_loss(
        x, L.tensor(_T), p=2, weight=L.tensor([1.0, 2, 3, 4], dtype=x.dtype),
        reduction="none"), [((3, 4),)]),
    Spec("multi_margin_loss_1d", lambda L, x: L.nn.functional.multi_margin_loss(
        x, L.tensor(2), reduction="sum"), [((5,),)]),
]
test_op_gradcheck, test_op_gradgradcheck, test_op_against_pytorch = op_tests(SPECS)

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 5))
Y = rng.standard_normal((4, 5))
Z = rng.standard_normal((4, 5))
SIGN = np.array([1.0, -1.0, -1.0, 1.0])
SIGNS = np.where(rng.standard_normal((4, 5)) > 0, 1.0, -1.0)
LABELS = (rng.standard_normal((4, 5)) > 0).astype(np.float64)
COUNTS = rng.integers(0, 5, (4, 5)).astype(np.float64)
VAR = rng.uniform(0.1, 2.0, (4, 5))

# name -> (float inputs that get gradients, other inputs, kwargs)
CASES = {
    "margin_ranking_loss": ((X[0], Y[0]), (SIGNS[0],), dict(margin=0.3)),
    "hinge_embedding_loss": ((X,), (SIGNS,), dict(margin=0.5)),
    "cosine_embedding_loss": ((X, Y), (SIGN,), dict(margin=0.1)),
    "triplet_margin_loss": ((X, Y, Z), (), dict(margin=0.8)),
    "triplet_swap_p1": ((X, Y, Z), (), dict(p=1, swap=True)),
    "triplet_margin_with_distance_loss": ((X, Y, Z), (), dict(swap=True)),
    "multilabel_soft_margin_loss": ((X,), (LABELS,), dict()),
    "multilabel_weighted": ((X,), (LABELS, np.linspace(0.5, 1.5, 5)), dict()),
    "poisson_nll_loss": ((X,), (COUNTS,), dict()),
    "poisson_full_rates": ((np.abs(X) + 0.1,), (COUNTS,), dict(log_input=False, full=True)),
    "gaussian_nll_loss": ((X, Y, VAR), (), dict()),
    "gaussian_full_shared_var": ((X, Y, VAR[:, :1]), (), dict(full=True)),
}
FUNCTION = {"triplet_swap_p1": "triplet_margin_loss", "multilabel_weighted":
            "multilabel_soft_margin_loss", "poisson_full_rates": "poisson_nll_loss",
            "gaussian_full_shared_var": "gaussian_nll_loss"}


def _call(lib, case, reduction, dtype):
    grads, others, kwargs = CASES[case]
    xs = [lib.tensor(a, dtype=dtype, requires_grad=True) for a in grads]
    os_ = [lib.tensor(a, dtype=dtype) for a in others]
    fn = getattr(lib.nn.functional, FUNCTION.get(case, case))
    if case.startswith("gaussian"):
        out = fn(xs[0], xs[1], xs[2], reduction=reduction, **kwargs)
    else:
        out = fn(*xs, *os_, reduction=reduction, **kwargs)
    return xs, out


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", CASES)
def test_matches_torch(torch, case, reduction):
    for dtype in ("float32", "float64"):
        (xe, oute), (xt, outt) = (_call(lib, case, reduction, getattr(lib, dtype))
                                  for lib in (ember, torch))
        assert str(oute.dtype) == str(outt.dtype) and tuple(oute.shape) == tuple(outt.shape)
        assert type(oute.grad_fn).__name__ == type(outt.grad_fn).__name__
        tol = 1e-5 if dtype == "float32" else 1e-12
        np.testing.assert_allclose(to_np(oute), to_np(outt), rtol=tol, atol=tol)
        w = np.linspace(0.5, 2.0, oute.numel()).reshape(tuple(oute.shape))
        (oute * ember.tensor(w, dtype=oute.dtype)).sum().backward()
        (outt * torch.tensor(w, dtype=outt.dtype)).sum().backward()
        for a, b in zip(xe, xt):
            np.testing.assert_allclose(to_np(a.grad), to_np(b.grad), rtol=tol, atol=tol)


@pytest.mark.parametrize("case", [c for c in CASES if not c.startswith("gaussian")])
def test_gradcheck(case):
    grads, others, kwargs = CASES[case]
    fn = getattr(ember.nn.functional, FUNCTION.get(case, case))
    os_ = [ember.tensor(a) for a in others]
    xs = [ember.tensor(a, requires_grad=True) for a in grads]
    assert gradcheck(lambda *xs: fn(*xs, *os_, reduction="none", **kwargs), xs)


def test_gaussian_var_gets_no_gradient_where_clamped(torch):
    outs = []
    for lib in (ember, torch):
        var = lib.tensor([1e-9, 0.5, 2.0], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([0.1, 0.2, 0.3], dtype=lib.float64, requires_grad=True)
        lib.nn.functional.gaussian_nll_loss(x, lib.zeros(3, dtype=lib.float64), var).backward()
        outs.append((to_np(var.grad), to_np(x.grad)))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


MODULES = [
    ("MarginRankingLoss", dict(margin=0.2), (X[0], Y[0], SIGNS[0])),
    ("HingeEmbeddingLoss", dict(reduction="sum"), (X, SIGNS)),
    ("CosineEmbeddingLoss", dict(margin=-0.2), (X, Y, SIGN)),
    ("TripletMarginLoss", dict(p=3.0, swap=True), (X, Y, Z)),
    ("TripletMarginWithDistanceLoss", dict(margin=2.0), (X, Y, Z)),
    ("MultiLabelSoftMarginLoss", dict(reduction="none"), (X, LABELS)),
    ("PoissonNLLLoss", dict(full=True), (X, COUNTS)),
    ("GaussianNLLLoss", dict(eps=0.5), (X, Y, VAR)),
    ("MultiMarginLoss", dict(p=2, margin=0.5), (X, np.array([0, 4, 2, 1]))),
    ("NLLLoss2d", dict(), (np.log(np.abs(X) / 3), np.array([0, 4, 2, 1]))),
]


@pytest.mark.parametrize("name,kwargs,args", MODULES, ids=[m[0] for m in MODULES])
def test_modules_match_torch(torch, name, kwargs, args):
    oute, outt = (getattr(lib.nn, name)(**kwargs)(*[lib.tensor(a) for a in args])
                  for lib in (ember, torch))  # (integer arrays become int64 targets)
    np.testing.assert_allclose(to_np(oute), to_np(outt), rtol=1e-12)
    assert repr(getattr(ember.nn, name)(**kwargs)) == repr(getattr(torch.nn, name)(**kwargs))


def L_ones3(L):
    return L.ones(3)


ERRORS = [
    ("margin_ranking_loss", lambda L: (L.zeros(3), L.zeros(3), L.zeros(1, 3)), {}),
    ("cosine_embedding_loss", lambda L: (L.zeros(2, 3), L.zeros(2, 3), L.zeros(2, 1)), {}),
    ("cosine_embedding_loss", lambda L: (L.zeros(3), L.zeros(3), L.zeros(2)), {}),
    ("cosine_embedding_loss", lambda L: (L.zeros(2, 3), L.zeros(3), L.tensor(1.0)), {}),
    ("triplet_margin_loss", lambda L: (L.zeros(2, 3), L.zeros(3), L.zeros(2, 3)), {}),
    ("triplet_margin_with_distance_loss", lambda L: (L.zeros(3), L.zeros(3), L.zeros(3)),
     dict(margin=0)),
    ("triplet_margin_with_distance_loss", lambda L: (L.zeros(3), L.zeros(3), L.zeros(3)),
     dict(reduction="max")),
    ("multilabel_soft_margin_loss", lambda L: (L.zeros(2, 3), L.zeros(2, 3)),
     dict(reduction="max")),
    ("poisson_nll_loss", lambda L: (L.zeros(3), L.zeros(3)), dict(reduction="max")),
    ("gaussian_nll_loss", lambda L: (L.zeros(2, 3), L.zeros(2, 3), L.zeros(3, 3)), {}),
    ("gaussian_nll_loss", lambda L: (L.zeros(2, 3), L.zeros(2, 3), -L.ones(2, 3)), {}),
    ("gaussian_nll_loss", lambda L: (L.zeros(2, 3), L.zeros(2, 3), -1.0), {}),
    ("gaussian_nll_loss", lambda L: (L.zeros(2, 3), L.zeros(2, 3), L.ones(2)),
     dict(reduction="max")),
    ("hinge_embedding_loss", lambda L: (L.zeros(3), L.zeros(3)), dict(reduction="max")),
    ("multi_margin_loss", lambda L: (L.zeros(3, 4), L.tensor([0, 1, 2])), dict(p=3)),
    ("multi_margin_loss", lambda L: (L.zeros(3, 4), L.tensor([0, 4, 1])), {}),
    ("multi_margin_loss", lambda L: (L.zeros(3, 4), L.tensor([0, 1])), {}),
    ("multi_margin_loss", lambda L: (L.zeros(3, 4), L.tensor([0, 1, 2])),
     dict(weight=L_ones3)),
    ("multi_margin_loss", lambda L: (L.zeros(3, 4), L.tensor([0.0, 1, 2])), {}),
]


@pytest.mark.parametrize("name,make,kwargs", ERRORS)
def test_errors_match_torch(torch, name, make, kwargs):
    got = []
    for lib in (ember, torch):
        kw = {k: v(lib) if callable(v) else v for k, v in kwargs.items()}
        with pytest.raises((RuntimeError, ValueError)) as err:
            getattr(lib.nn.functional, name)(*make(lib), **kw)
        got.append((type(err.value), str(err.value)))
    assert got[0] == got[1]
