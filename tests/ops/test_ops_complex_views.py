"""``view_as_real`` / ``view_as_complex`` against PyTorch: shared storage, strides, grad_fns,
gradients in PyTorch's complex convention (also second order), and the errors."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from ..conftest import to_np
from ..opspec import Spec, op_tests

SPECS = [
    Spec("view_as_real_complex", lambda L, x: L.view_as_real(L.view_as_complex(x) * (1 + 2j)),
         [((3, 2),), ((2, 2, 2),)]),
]
test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)

Z = np.array([[1 + 2j, 3 - 1j, 0.5j], [2, -1 - 1j, 0.25 + 4j]])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_view_as_real_matches_torch(torch, dtype):
    outs = []
    for lib in (ember, torch):
        z = lib.tensor(Z, dtype=getattr(lib, dtype), requires_grad=True)
        r = lib.view_as_real(z)
        w = lib.tensor(np.arange(12.0).reshape(2, 3, 2), dtype=r.dtype)
        (r * w).sum().backward()
        t = lib.view_as_real(z.detach().t())
        outs.append((to_np(r), str(r.dtype), type(r.grad_fn).__name__, to_np(z.grad),
                     tuple(t.shape), t.stride()))
    for a, b in zip(*outs):
        np.testing.assert_equal(a, b)


def test_view_as_complex_matches_torch(torch):
    x = np.arange(12.0).reshape(2, 3, 2) - 5
    outs = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        c = lib.view_as_complex(xt)
        w = lib.tensor(np.array([1 + 1j, 2, -1j]))
        (c * w).real.sum().backward()
        outs.append((to_np(c), str(c.dtype), type(c.grad_fn).__name__, to_np(xt.grad)))
    for a, b in zip(*outs):
        np.testing.assert_equal(a, b)


def test_views_share_storage(torch):
    for lib in (ember, torch):
        z = lib.zeros(3, dtype=lib.complex128)
        lib.view_as_real(z)[1, 1] = 5.0
        assert z[1].item() == 5j and z._version == 1
        x = lib.zeros(2, 2)
        lib.view_as_complex(x).mul_(0)
        lib.view_as_complex(x)[0] = 1 + 2j
        assert x.tolist() == [[1.0, 2.0], [0.0, 0.0]]


def test_gradients_by_finite_differences():
    x = ember.tensor(np.arange(8.0).reshape(2, 2, 2) / 7 - 0.3, requires_grad=True)
    f = lambda x: ember.view_as_real(ember.view_as_complex(x * x) * (1 + 2j)).sin()  # noqa: E731
    assert gradcheck(f, [x]) and gradgradcheck(f, [x])


ERRORS = [
    lambda L: L.view_as_real(L.ones(2)), lambda L: L.view_as_complex(L.ones(2, 3)),
    lambda L: L.view_as_complex(L.ones(2, dtype=L.int64)), lambda L: L.view_as_complex(L.ones(())),
    lambda L: L.view_as_complex(L.ones(2, 4)[:, ::2]), lambda L: L.view_as_complex(L.ones(6)[1:5]
                                                                                    .view(2, 2)),
    lambda L: L.view_as_complex(L.ones(3, 2).t().contiguous().t()),
    lambda L: L.view_as_real(L.tensor([1 + 2j, 3j]).conj()),  # (ifft of a real input is one)
    lambda L: L.view_as_real(L.fft.ifft(L.ones(4))),
]


@pytest.mark.parametrize("make", ERRORS)
def test_errors_match_torch(torch, make):
    got = []
    for lib in (ember, torch):
        with pytest.raises(RuntimeError) as err:
            make(lib)
        got.append(str(err.value))
    assert got[0] == got[1]
