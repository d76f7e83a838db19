"""Second derivatives through piecewise-linear ops, against PyTorch.

PyTorch declares the derivative of relu, threshold, hardtanh, leaky_relu and the shrinks as
ops of their own (``threshold_backward(grad, self, 0)``...): under ``create_graph`` their
gradient requires grad whenever the input does, and differentiating it again gives zeros.
Where PyTorch's formula only masks the incoming gradient (clamp, max, sort, where) the
gradient does not require grad, and asking for a second derivative raises. ember follows it.
"""
import pytest

import ember
from tests.oracle import outcome


def _f(lib):
    return lib.nn.functional


CASES = {
    "relu": lambda lib, x: lib.relu(x).sum(),
    "relu_method": lambda lib, x: x.relu().sum(),
    "threshold": lambda lib, x: _f(lib).threshold(x, 0.5, 0.0).sum(),
    "hardtanh": lambda lib, x: _f(lib).hardtanh(x).sum(),
    "relu6": lambda lib, x: _f(lib).relu6(x * 3).sum(),
    "leaky_relu": lambda lib, x: _f(lib).leaky_relu(x, 0.1).sum(),
    "hardshrink": lambda lib, x: _f(lib).hardshrink(x).sum(),
    "softshrink": lambda lib, x: _f(lib).softshrink(x).sum(),
    "abs": lambda lib, x: x.abs().sum(),
    "l1_loss": lambda lib, x: _f(lib).l1_loss(x, lib.zeros(4)),
    "smooth_l1_on_the_kink": lambda lib, x: _f(lib).smooth_l1_loss(x, lib.zeros(4)),
    "clamp": lambda lib, x: x.clamp(-1, 0.5).sum(),
    "max": lambda lib, x: x.max(),
    "sort": lambda lib, x: x.sort()[0][0],
    "where": lambda lib, x: lib.where(x > 0, x, 0.0).sum(),
    "relu_squared": lambda lib, x: (lib.relu(x) ** 2).sum(),
    "relu_then_mul": lambda lib, x: (lib.relu(x) * x).sum(),
}


def _second_order(lib, loss):
    x = lib.tensor([1.0, -2.0, 3.0, 0.5], requires_grad=True)
    g, = lib.autograd.grad(loss(lib, x), x, create_graph=True)
    seen = g.tolist(), g.requires_grad
    hvp, = lib.autograd.grad((g * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum(), x)
    return seen, (hvp + lib.zeros(4)).tolist()  # (PyTorch may give a lazy zero tensor)


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivative_as_pytorch(name, torch):
    loss = CASES[name]
    assert outcome(_second_order, ember, loss) == outcome(_second_order, torch, loss)


def test_relu_second_derivative_is_zero_without_pytorch():
    x = ember.tensor([1.0, -2.0], requires_grad=True)
    g, = ember.autograd.grad(ember.relu(x).sum(), x, create_graph=True)
    assert g.requires_grad and type(g.grad_fn).__name__ == "ThresholdBackwardBackward0"
    h, = ember.autograd.grad(g.sum(), x)
    assert h.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("wrt", ["x_x_z", "z_x_z", "x_z_x"])
def test_repeated_inputs_with_unused(wrt, torch):
    def run(lib):
        x = lib.ones(2, requires_grad=True)
        z = lib.ones(2, requires_grad=True)
        inputs = [{"x": x, "z": z}[c] for c in wrt.split("_")]
        got = lib.autograd.grad((z * 2).sum(), inputs, allow_unused=True)
        return [None if g is None else g.tolist() for g in got]
    assert outcome(run, ember) == outcome(run, torch)
