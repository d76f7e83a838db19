"""``nn.grad`` (the gradients of a convolution with respect to its input and its weight)
against PyTorch, and differentiable in turn."""
import numpy as np
import pytest

import ember
from tests.conftest import to_np

_CASES = [  # n, input shape, weight shape, kwargs
    (1, (2, 4, 9), (6, 2, 3), {"stride": 2, "padding": 1, "groups": 2}),
    (2, (1, 2, 6, 6), (3, 2, 3, 3), {"stride": 2}),
    (2, (2, 3, 7, 5), (4, 3, 2, 3), {"padding": (1, 0), "dilation": (2, 1)}),
    (3, (1, 2, 4, 5, 4), (2, 1, 2, 2, 2), {"groups": 2, "stride": (1, 2, 1)}),
]


@pytest.mark.parametrize("n,xs,ws,kwargs", _CASES)
def test_conv_grads_match_torch(torch, n, xs, ws, kwargs):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    out_shape = torch.nn.functional.__dict__[f"conv{n}d"](
        torch.tensor(x), torch.tensor(w), **kwargs).shape
    go = rng.standard_normal(tuple(out_shape))

    def grad(lib, kind):
        args = ((xs, lib.tensor(w)) if kind == "input" else (lib.tensor(x), ws))
        return getattr(lib.nn.grad, f"conv{n}d_{kind}")(*args, lib.tensor(go), **kwargs)
    for kind in ("input", "weight"):
        got, want = grad(ember, kind), grad(torch, kind)
        assert got.shape == want.shape and not got.requires_grad
        np.testing.assert_allclose(to_np(got), to_np(want), rtol=1e-12, atol=1e-12)


def test_conv_grads_are_differentiable():
    rng = np.random.default_rng(1)
    w = ember.tensor(rng.standard_normal((3, 2, 2, 2)), requires_grad=True)
    go = ember.tensor(rng.standard_normal((1, 3, 3, 3)), requires_grad=True)
    x = ember.tensor(rng.standard_normal((1, 2, 4, 4)), requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda w, go: ember.nn.grad.conv2d_input((1, 2, 4, 4), w, go), (w, go))
    assert ember.autograd.gradcheck(
        lambda x, go: ember.nn.grad.conv2d_weight(x, (3, 2, 2, 2), go), (x, go))
    with ember.no_grad():
        assert not ember.nn.grad.conv2d_input((1, 2, 4, 4), w, go).requires_grad


def test_grad_output_shape_error(torch):
    def err(lib):
        with pytest.raises(RuntimeError) as e:
            lib.nn.grad.conv2d_input((1, 2, 5, 5), lib.ones(3, 2, 3, 3), lib.ones(1, 3, 4, 4))
        return str(e.value)
    assert err(ember) == err(torch)
