"""``lgamma``, ``digamma``, ``polygamma``, ``mvlgamma`` against PyTorch: values (special
points included), dtypes, grad_fn, derivatives to second order (finite differences and
PyTorch), the Tensor and in-place forms, and the errors."""
import numpy as np
import pytest

import ember

from ..conftest import to_np
from ..opspec import UNARY_SHAPES, Spec, op_tests

POSITIVE = (0.2, 6.0)
SPECS = [
    Spec("lgamma", lambda L, x: L.lgamma(x), UNARY_SHAPES, domain=POSITIVE),
    Spec("lgamma_negative", lambda L, x: L.lgamma(x), UNARY_SHAPES, domain=(-2.9, -2.1)),
    # PyTorch's trigamma (digamma's derivative) is accurate to ~5e-10 only: looser comparisons
    Spec("digamma", lambda L, x: L.digamma(x), UNARY_SHAPES, domain=POSITIVE, tol=1e2),
    Spec("digamma_negative", lambda L, x: x.digamma(), UNARY_SHAPES, domain=(-0.9, -0.1),
         tol=1e2),
    Spec("polygamma_1", lambda L, x: L.polygamma(1, x), UNARY_SHAPES, domain=POSITIVE, tol=1e2),
    Spec("polygamma_2", lambda L, x: x.polygamma(2), UNARY_SHAPES, domain=POSITIVE, tol=10),
    Spec("polygamma_3_negative", lambda L, x: L.polygamma(3, x), UNARY_SHAPES,
         domain=(-1.8, -1.2), tol=10),
    Spec("mvlgamma", lambda L, x: L.mvlgamma(x, 3), UNARY_SHAPES, domain=(1.2, 5.0)),
    Spec("mvlgamma_1", lambda L, x: x.mvlgamma(p=1), UNARY_SHAPES, domain=POSITIVE),
]
test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)

SPECIAL = np.array([0.0, -0.0, -1.0, -2.5, 1.0, 2.0, 0.5, np.inf, -np.inf, np.nan, 1e-300,
                    171.6, 1e20, 1.4616321449683622, -50.3, 7.0, 1e-8, 3e5])


@pytest.mark.parametrize("name,n", [("lgamma", None), ("digamma", None), ("polygamma", 0),
                                    ("polygamma", 1), ("polygamma", 2), ("polygamma", 5)])
def test_special_values_match_torch(torch, name, n):
    got = []
    for lib in (ember, torch):
        x = lib.tensor(SPECIAL)
        got.append(to_np(getattr(lib, name)(x) if n is None else lib.polygamma(n, x)))
    ours, theirs = got
    close = np.isclose(ours, theirs, rtol=1e-9, atol=0) | (np.isnan(ours) & np.isnan(theirs))
    # next to a negative pole both give a huge finite value (sin(pi x) is not 0 in floats)
    close |= (np.abs(theirs) > 1e30) & (np.abs(ours) > 1e30) & (SPECIAL == np.floor(SPECIAL))
    assert close.all(), (SPECIAL[~close], ours[~close], theirs[~close])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "float16"])
def test_dtypes_match_torch(torch, dtype):
    data = np.array([1, 2, 3, 5]) if dtype != "bool" else np.array([True, False, True])
    for fn in (lambda L, x: L.lgamma(x), lambda L, x: L.digamma(x),
               lambda L, x: L.polygamma(2, x), lambda L, x: L.mvlgamma(x + 2, 2)):
        outs = [fn(lib, lib.tensor(data, dtype=getattr(lib, dtype))) for lib in (ember, torch)]
        assert str(outs[0].dtype) == str(outs[1].dtype)
        np.testing.assert_allclose(to_np(outs[0]).astype(float), to_np(outs[1]).astype(float),
                                   rtol=1e-3 if dtype == "float16" else 1e-6)


def test_inplace_forms_match_torch(torch):
    data = np.array([0.5, 1.5, 3.0])
    for name, args in (("lgamma_", ()), ("digamma_", ()), ("polygamma_", (1,)),
                       ("mvlgamma_", (2,))):
        outs = []
        for lib in (ember, torch):
            x = lib.tensor(data + 1)
            assert getattr(x, name)(*args) is x
            outs.append(to_np(x))
        np.testing.assert_allclose(*outs, rtol=1e-8)


def test_third_derivative_through_the_family(torch):
    outs = []
    for lib in (ember, torch):
        x = lib.tensor([0.7, 2.5], dtype=lib.float64, requires_grad=True)
        (g1,) = lib.autograd.grad(lib.lgamma(x).sum(), x, create_graph=True)
        (g2,) = lib.autograd.grad(g1.sum(), x, create_graph=True)
        (g3,) = lib.autograd.grad(g2.sum(), x)
        outs.append([to_np(g) for g in (g1, g2, g3)])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-8)


ERRORS = [
    (TypeError, lambda L: L.polygamma(1.5, L.ones(2))),
    (TypeError, lambda L: L.polygamma(1, [1.0])),
    (RuntimeError, lambda L: L.polygamma(-1, L.ones(2))),
    (RuntimeError, lambda L: L.mvlgamma(L.ones(2), 0)),
    (TypeError, lambda L: L.lgamma(2.0)),
    (RuntimeError, lambda L: L.tensor([3, 4]).lgamma_()),
    (RuntimeError, lambda L: L.ones(2, requires_grad=True).digamma_()),
]


@pytest.mark.parametrize("kind,make", ERRORS)
def test_errors_match_torch(torch, kind, make):
    got = []
    for lib in (ember, torch):
        with pytest.raises(kind) as err:
            make(lib)
        got.append(str(err.value))
    assert got[0] == got[1]


def test_forward_mode_and_vmap(torch):
    outs = []
    for lib in (ember, torch):
        fwAD = lib.autograd.forward_ad
        x = lib.tensor([0.7, 2.5, 4.0], dtype=lib.float64)
        with fwAD.dual_level():
            dual = fwAD.make_dual(x, lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64))
            tangents = [to_np(fwAD.unpack_dual(f(dual)).tangent) for f in (
                lib.lgamma, lib.digamma, lambda t: lib.polygamma(2, t),
                lambda t: lib.mvlgamma(t + 1, 2))]
        batched = to_np(lib.vmap(lambda r: lib.polygamma(1, r) * r.lgamma())(x.reshape(3, 1)))
        outs.append(tangents + [batched])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-8)
