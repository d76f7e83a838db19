"""``autograd.functional``: vjp, jvp, jacobian, hessian, hvp, vhp.

Outputs, their structure (Tensor or tuple, nested outputs x inputs), ``create_graph`` and the
strict-mode and argument errors are compared with PyTorch (``torch`` fixture); third derivatives
with finite differences.
"""
import numpy as np
import pytest

import ember

from ..oracle import agree

# PyTorch's vectorized jacobian goes through vmap, which warns about torch.jit.script.
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")


def point(lib, *shapes):
    """Float64 inputs with fixed values (one tensor per shape)."""
    rng = np.random.default_rng(len(shapes))
    return tuple(lib.tensor(rng.uniform(0.5, 1.5, s), dtype=lib.float64) for s in shapes)


def f_vec(x):
    """R^3 -> R^2, nonlinear in every entry."""
    return (x[:2] * x[1:].exp()).sin()


def f_pair(x, y):
    """Two inputs -> two outputs of different shapes."""
    return (x @ y).tanh(), (x.sin() * 2).sum(dim=1)


def f_scalar(x):
    return (x.sin() * x ** 2).sum() + x.prod()


def f_scalar_pair(x, y):
    return (x * y.exp()).sum() + (x ** 3).sum()


def vectors(lib, *shapes):
    return tuple(lib.linspace(-1.0, 1.0, int(np.prod(s)), dtype=lib.float64).reshape(s)
                 for s in shapes)


def functional(lib):
    return lib.autograd.functional


@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_and_jvp(torch, create_graph):
    def run(lib):
        F = functional(lib)
        x, = point(lib, (3,))
        xy = point(lib, (2, 3), (3, 2))
        return (F.vjp(f_vec, x, vectors(lib, (2,))[0], create_graph=create_graph),
                F.jvp(f_vec, x, vectors(lib, (3,))[0], create_graph=create_graph),
                F.vjp(f_pair, xy, vectors(lib, (2, 2), (2,)), create_graph=create_graph),
                F.jvp(f_pair, xy, vectors(lib, (2, 3), (3, 2)), create_graph=create_graph),
                F.vjp(f_scalar, x)[1])
    agree(run, torch)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian(torch, create_graph, vectorize):
    def run(lib):
        F = functional(lib)
        x, = point(lib, (3,))
        xy = point(lib, (2, 3), (3, 2))
        return (F.jacobian(f_vec, x, create_graph=create_graph, vectorize=vectorize),
                F.jacobian(f_pair, xy, create_graph=create_graph, vectorize=vectorize),
                F.jacobian(lambda x: (f_vec(x),), x, vectorize=vectorize),
                F.jacobian(lambda x, y: x * 2, xy, vectorize=vectorize))
    agree(run, torch)


def test_jacobian_shapes_nest_outputs_then_inputs(torch):
    def run(lib):
        jac = functional(lib).jacobian(f_pair, point(lib, (2, 3), (3, 2)))
        return [[tuple(block.shape) for block in row] for row in jac]
    assert agree(run, torch) == [[(2, 2, 2, 3), (2, 2, 3, 2)], [(2, 2, 3), (2, 3, 2)]]


@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian_hvp_vhp(torch, create_graph):
    def run(lib):
        F = functional(lib)
        x, = point(lib, (3,))
        xy = point(lib, (2,), (2,))
        v, = vectors(lib, (3,))
        vs = vectors(lib, (2,), (2,))
        return (F.hessian(f_scalar, x, create_graph=create_graph),
                F.hessian(f_scalar_pair, xy, create_graph=create_graph),
                F.hessian(f_scalar, x, vectorize=True, outer_jacobian_strategy="forward-mode"),
                F.hvp(f_scalar, x, v, create_graph=create_graph),
                F.vhp(f_scalar, x, v, create_graph=create_graph),
                F.hvp(f_scalar_pair, xy, vs, create_graph=create_graph),
                F.vhp(f_scalar_pair, xy, vs, create_graph=create_graph))
    agree(run, torch)


def test_create_graph_results_are_differentiable(torch):
    def run(lib):
        F = functional(lib)
        x = point(lib, (3,))[0].requires_grad_()
        out = []
        for result in (F.jacobian(f_vec, x, create_graph=True),
                       F.hessian(f_scalar, x, create_graph=True),
                       F.hvp(f_scalar, x, vectors(lib, (3,))[0], create_graph=True)[1],
                       F.jvp(f_vec, x, vectors(lib, (3,))[0], create_graph=True)[1]):
            g, = lib.autograd.grad(result.sum(), x)
            out.append((result.requires_grad, g))
        plain = F.jacobian(f_vec, x)
        return out, plain.requires_grad
    agree(run, torch)


def test_forward_mode_strategy(torch):
    def run(lib):
        x, = point(lib, (3,))
        return functional(lib).jacobian(f_vec, x, vectorize=True, strategy="forward-mode")
    agree(run, torch)


@pytest.mark.parametrize("kwargs, raises", [
    (dict(strategy="sideways"), AssertionError),
    (dict(strategy="forward-mode"), NotImplementedError),
    (dict(strategy="forward-mode", vectorize=True, create_graph=True), NotImplementedError),
    (dict(strategy="forward-mode", vectorize=True, strict=True), RuntimeError),
    (dict(vectorize=True, strict=True), RuntimeError),
])
def test_jacobian_refusals(torch, kwargs, raises):
    agree(lambda lib: functional(lib).jacobian(f_vec, point(lib, (3,))[0], **kwargs), torch,
          raises=raises)


def constant(x):
    return x.detach() * 2


def linear(x):
    return (x * 3).sum()


@pytest.mark.parametrize("call", [
    lambda F, x: F.jacobian(constant, x, strict=True),
    lambda F, x: F.vjp(constant, x, x, strict=True),
    lambda F, x: F.jvp(constant, x, x, strict=True),
    lambda F, x: F.jacobian(lambda t, u: t * 2, (x, x), strict=True),
    lambda F, x: F.hessian(linear, x, strict=True),
    lambda F, x: F.hvp(linear, x, x, strict=True),
    lambda F, x: F.vhp(linear, x, x, strict=True),
    lambda F, x: F.vjp(lambda t: t * 2, x, x, create_graph=True, strict=True),
], ids=["jacobian_constant", "vjp_constant", "jvp_constant", "jacobian_unused_input",
        "hessian_linear", "hvp_linear", "vhp_linear", "vjp_linear_create_graph"])
def test_strict_mode_errors(torch, call):
    agree(lambda lib: call(functional(lib), point(lib, (3,))[0]), torch, raises=RuntimeError)


@pytest.mark.parametrize("call, raises", [
    (lambda F, x: F.vjp(f_vec, x), RuntimeError),                       # v needed
    (lambda F, x: F.jvp(f_vec, x), RuntimeError),
    (lambda F, x: F.vjp(f_vec, x, x), RuntimeError),                     # wrong size
    (lambda F, x: F.jvp(f_pair, (x.reshape(3, 1), x.reshape(1, 3)), (x,)), RuntimeError),
    (lambda F, x: F.hvp(f_scalar, (x,), (x[:2],)), RuntimeError),        # entry 0 wrong
    (lambda F, x: F.jacobian(f_vec, [x]), TypeError),                   # a list
    (lambda F, x: F.jacobian(f_vec, (x, 3)), TypeError),
    (lambda F, x: F.jacobian(lambda t: 3, x), TypeError),
    (lambda F, x: F.hessian(f_vec, x), RuntimeError),                   # not one element
    (lambda F, x: F.hessian(lambda t: (f_scalar(t),), x), RuntimeError),  # a tuple
    (lambda F, x: F.vhp(f_vec, x, x), RuntimeError),
    (lambda F, x: F.hvp(lambda t: (f_scalar(t),), x, x), RuntimeError),
], ids=["vjp_no_v", "jvp_no_v", "vjp_v_size", "jvp_v_length", "hvp_entry_size", "list_inputs",
        "non_tensor_input", "non_tensor_output", "hessian_vector", "hessian_tuple",
        "vhp_vector", "hvp_tuple"])
def test_argument_errors(torch, call, raises):
    agree(lambda lib: call(functional(lib), point(lib, (3,))[0]), torch, raises=raises)


def test_no_v_needed_for_one_element(torch):
    def run(lib):
        F = functional(lib)
        s = lib.tensor([0.7], dtype=lib.float64)
        return (F.vjp(lambda t: (t ** 3).sum(), s), F.jvp(lambda t: t.exp(), s),
                F.hvp(lambda t: (t ** 4).sum(), s), F.vhp(lambda t: (t ** 4).sum(), s))
    agree(run, torch)


def test_unused_inputs_give_zeros(torch):
    def run(lib):
        F = functional(lib)
        x, y = point(lib, (3,), (2,))
        return (F.jacobian(lambda a, b: a.exp(), (x, y)), F.vjp(lambda a, b: a.sum(), (x, y)),
                F.hessian(lambda a, b: (a ** 3).sum(), (x, y)))
    agree(run, torch)


def third_derivative_by_differences(f, x, eps=1e-4):
    """d/dx_k of the Hessian by central differences: T[i, j, k]."""
    F = ember.autograd.functional
    base = x.numpy()
    slices = []
    for k in range(base.size):
        step = np.zeros_like(base)
        step[k] = eps
        plus = F.hessian(f, ember.tensor(base + step)).numpy()
        minus = F.hessian(f, ember.tensor(base - step)).numpy()
        slices.append((plus - minus) / (2 * eps))
    return np.stack(slices, axis=-1)


def test_third_derivatives_match_finite_differences(torch):
    def third(lib):
        F = functional(lib)
        x, = point(lib, (3,))
        return F.jacobian(lambda t: F.hessian(f_scalar, t, create_graph=True), x)
    got = agree(third, torch)
    expected = third_derivative_by_differences(f_scalar, point(ember, (3,))[0])
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6, atol=1e-7)


def test_third_derivative_by_repeated_grad_matches_finite_differences():
    x = ember.tensor([0.3, -0.8], dtype=ember.float64, requires_grad=True)

    def f(t):
        return (t.sin() * t.exp()).sum()
    g, = ember.autograd.grad(f(x), x, create_graph=True)
    gg, = ember.autograd.grad(g.sum(), x, create_graph=True)
    ggg, = ember.autograd.grad(gg.sum(), x)
    # f is a sum of u(t) = sin t e^t per entry; u''' = 2 e^t (cos t - sin t) by hand, and by
    # central differences of u'' = 2 e^t cos t:
    eps = 1e-5
    t = x.detach().numpy()
    second = (lambda s: 2 * np.exp(s) * np.cos(s))
    np.testing.assert_allclose(ggg.numpy(), (second(t + eps) - second(t - eps)) / (2 * eps),
                               rtol=1e-7)
    np.testing.assert_allclose(ggg.numpy(), 2 * np.exp(t) * (np.cos(t) - np.sin(t)), rtol=1e-12)


def test_gradcheck_of_the_hessian():
    """``gradcheck`` of ``hessian(create_graph=True)``: third derivatives by finite differences
    of the whole Hessian, entry by entry."""
    x = ember.tensor([0.4, 1.1, -0.6], dtype=ember.float64, requires_grad=True)
    F = ember.autograd.functional
    assert ember.autograd.gradcheck(lambda t: F.hessian(f_scalar, t, create_graph=True), (x,))
