"""Reverse-mode autograd: backward, accumulation, retain_graph, grad, create_graph, errors.

Each behaviour runs on ember and, when importable, on PyTorch, and the two must agree —
values, exception types and messages.
"""
import threading
import warnings
from functools import partial

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

from ..oracle import same_error

try:
    import torch as _torch
except ImportError:  # the oracle is optional
    _torch = None

LIBS = [pytest.param(ember, id="ember")] + (
    [pytest.param(_torch, id="torch")] if _torch is not None else [])


# ``same_error(fn_of_lib)``: the same type and text on ember and PyTorch, ember's added
# explanation aside (checked in test_anomaly.py)
same_error = partial(same_error, torch=_torch, explained=True)


# --------------------------------------------------------------------------- seeds' basics


@pytest.mark.parametrize("lib", LIBS)
def test_scalar_backward_uses_implicit_one(lib):
    a = lib.tensor([4.0], requires_grad=True)
    (a * a).backward()
    assert a.grad.tolist() == [8.0]
    b = lib.tensor([4.0], requires_grad=True)
    (b * b).backward(lib.tensor([1.0]))
    assert b.grad.tolist() == [8.0]


@pytest.mark.parametrize("lib", LIBS)
def test_vector_jacobian_product(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = lib.empty(3)
    y[0] = x[0] ** 2
    y[1] = x[0] ** 2 + 5 * x[1] ** 2
    y[2] = 3 * x[1]
    assert type(y.grad_fn).__name__ == "CopySlices"
    y.backward(lib.ones(3))
    assert x.grad.tolist() == [4.0, 23.0]


@pytest.mark.parametrize("lib", LIBS)
def test_gradients_accumulate_until_zeroed(lib):
    x = lib.ones(2, 2, requires_grad=True)
    for expected in (4.5, 9.0):
        out = ((x + 2) * (x + 2) * 3).mean()
        out.backward()
        assert x.grad.tolist() == [[expected] * 2] * 2
    x.grad.data.zero_()
    assert x.grad.tolist() == [[0.0] * 2] * 2
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [[2.0] * 2] * 2


@pytest.mark.parametrize("lib", LIBS)
def test_accumulation_is_in_place_on_existing_grad(lib):
    x = lib.ones(3, requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert x.grad is g and g.tolist() == [5.0] * 3


@pytest.mark.parametrize("lib", LIBS)
def test_grad_never_aliases_another_grad_or_the_callers_gradient(lib):
    # .grad may take a freshly computed gradient without copying it, but never one that the
    # caller or another leaf can still see: writes into one .grad must not show elsewhere.
    a = lib.ones(3, requires_grad=True)
    b = lib.ones(3, requires_grad=True)
    (a + b).sum().backward()  # AddBackward0 hands the same gradient to both inputs
    a.grad.mul_(10)
    assert b.grad.tolist() == [1.0] * 3
    seed = lib.full((3,), 2.0)
    a.grad = None
    a.backward(seed)  # a leaf seeded directly
    a.grad.add_(1)
    assert seed.tolist() == [2.0] * 3
    y = b * 1
    b.grad = None
    y.backward(seed)  # the seed passes through MulBackward0's rule
    b.grad.add_(1)
    assert seed.tolist() == [2.0] * 3
    c = lib.ones(2, requires_grad=True)
    (c * 2).sum().backward()
    first = c.grad
    (c * 3).sum().backward()  # the second gradient is added into the first .grad, in place
    assert first.tolist() == [5.0, 5.0] and c.grad is first


@pytest.mark.parametrize("lib", LIBS)
def test_retain_graph_allows_second_backward(lib):
    x = lib.tensor([2.0, 2.0], requires_grad=True)
    z = lib.tensor([4.0, 4.0], requires_grad=True)
    y = x ** 2 + z ** 3
    w = lib.ones(2)
    for k in (1, 2, 3):
        y.backward(w, retain_graph=True)
        assert x.grad.tolist() == [4.0 * k] * 2
        assert z.grad.tolist() == [48.0 * k] * 2


def test_second_backward_error_only_when_freed_values_are_needed():
    def twice(lib, f):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = f(x)
        y.backward()
        y.backward()
        return x.grad.tolist()

    # (x + 1).sum() saves nothing: two backwards are fine, on both libraries.
    assert twice(ember, lambda x: (x + 1).sum()) == [2.0, 2.0]
    for f in (lambda x: (x * 2).sum(), lambda x: (x * x).sum(), lambda x: x.exp().sum(),
              lambda x: (x / 2).sum(), lambda x: (x ** 2).sum(), lambda x: x.sigmoid().sum()):
        kind, msg = same_error(lambda lib, f=f: twice(lib, f))
        assert kind == "RuntimeError"
        assert msg.startswith("Trying to backward through the graph a second time")


def test_non_scalar_backward_needs_gradient():
    kind, msg = same_error(lambda lib: (lib.rand(3, requires_grad=True) + 2).backward())
    assert (kind, msg) == ("RuntimeError", "grad can be implicitly created only for scalar outputs")


def test_gradient_shape_mismatch():
    same_error(lambda lib: (lib.ones(3, requires_grad=True) * 2).backward(lib.ones(2)))


def test_backward_of_tensor_without_grad():
    kind, msg = same_error(lambda lib: lib.ones(2).sum().backward())
    assert msg == "element 0 of tensors does not require grad and does not have a grad_fn"


def test_requires_grad_only_for_floating_point():
    same_error(lambda lib: lib.tensor([1, 2]).requires_grad_())
    same_error(lambda lib: lib.tensor([1, 2], requires_grad=True))


def test_requires_grad_flag_of_non_leaf():
    def f(lib):
        y = lib.ones(2, requires_grad=True) * 2
        y.requires_grad_(True)  # allowed: already requires grad
        y.requires_grad = False

    kind, msg = same_error(f)
    assert msg.startswith("you can only change requires_grad flags of leaf variables.")


@pytest.mark.parametrize("lib", LIBS)
def test_non_leaf_grad_access_warns(lib):
    z = lib.ones(2, requires_grad=True) * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert z.grad is None
    assert len(caught) == 1 and caught[0].category is UserWarning
    text = str(caught[0].message).split(" (Triggered internally")[0]
    assert text == ember._errors.NONLEAF_GRAD_WARNING


@pytest.mark.parametrize("lib", LIBS)
def test_retain_grad_keeps_non_leaf_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x ** 2
    y.retain_grad()
    (y ** 3).sum().backward()
    assert y.grad.tolist() == [3.0, 48.0]
    assert x.grad.tolist() == [6.0, 192.0]


# --------------------------------------------------------------------------- autograd.grad


@pytest.mark.parametrize("lib", LIBS)
def test_grad_returns_without_accumulating(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (g,) = lib.autograd.grad((x ** 3).sum(), x)
    assert g.tolist() == [3.0, 12.0, 27.0] and x.grad is None


@pytest.mark.parametrize("lib", LIBS)
def test_grad_of_non_leaf_input(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = (y * y).sum() + y.sum()
    gy, gx = lib.autograd.grad(z, [y, x])
    assert gy.tolist() == [7.0, 13.0] and gx.tolist() == [21.0, 39.0]


def test_grad_unused_input_errors():
    def f(lib):
        x = lib.ones(2, requires_grad=True)
        u = lib.ones(2, requires_grad=True)
        lib.autograd.grad((x * 2).sum(), [x, u])
    kind, msg = same_error(f)
    assert "allow_unused=True" in msg

    x, u = ember.ones(2, requires_grad=True), ember.ones(2, requires_grad=True)
    gx, gu = ember.autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
    assert gu is None and gx.tolist() == [2.0, 2.0]
    gx, gu = ember.autograd.grad((x * 2).sum(), [x, u], materialize_grads=True)
    assert gu.tolist() == [0.0, 0.0]


def test_grad_input_without_grad_errors():
    same_error(lambda lib: lib.autograd.grad((lib.ones(2, requires_grad=True) * 2).sum(),
                                             lib.ones(2)))


@pytest.mark.parametrize("lib", LIBS)
def test_second_derivative_of_cube(lib):
    x = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
    (g,) = lib.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert g.requires_grad
    (h,) = lib.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.tolist(), [6.0, -12.0, 3.0])


@pytest.mark.parametrize("lib", LIBS)
def test_third_derivative_through_backward(lib):
    x = lib.tensor(2.0, requires_grad=True)
    y = x.exp() * x ** 4
    (g1,) = lib.autograd.grad(y, x, create_graph=True)
    (g2,) = lib.autograd.grad(g1, x, create_graph=True)
    (g3,) = lib.autograd.grad(g2, x)
    e = np.exp(2.0)
    # d^3/dx^3 [e^x x^4] = e^x (x^4 + 12x^3 + 36x^2 + 24x)
    np.testing.assert_allclose(g3.item(), e * (16 + 96 + 144 + 48), rtol=1e-5)


@pytest.mark.parametrize("lib", LIBS)
def test_hessian_vector_product(lib):
    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    A = lib.tensor([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]], dtype=lib.float64)
    f = 0.5 * (x @ (A @ x)) + (x ** 3).sum()
    (g,) = lib.autograd.grad(f, x, create_graph=True)
    v = lib.tensor([1.0, 0.0, -1.0], dtype=lib.float64)
    (hv,) = lib.autograd.grad((g * v).sum(), x)
    H = np.array(A.tolist()) + np.diag(6 * np.array(x.tolist()))
    np.testing.assert_allclose(hv.tolist(), H @ np.array([1.0, 0.0, -1.0]))


@pytest.mark.parametrize("lib", LIBS)
def test_backward_create_graph_leaves_differentiable_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad
    x.grad = None
    g.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


@pytest.mark.parametrize("lib", LIBS)
def test_backward_inputs_restricts_accumulation(lib):
    x = lib.ones(2, requires_grad=True)
    w = lib.ones(2, requires_grad=True)
    (x * w * 3).sum().backward(inputs=[w])
    assert x.grad is None and w.grad.tolist() == [3.0, 3.0]


# --------------------------------------------------------------------------- modes


@pytest.mark.parametrize("lib", LIBS)
def test_no_grad_and_enable_grad(lib):
    x = lib.ones(2, requires_grad=True)
    with lib.no_grad():
        y = x * 2
        with lib.enable_grad():
            z = x * 2
    assert not y.requires_grad and y.grad_fn is None and z.requires_grad

    @lib.no_grad()
    def f(t):
        return t * 2

    assert not f(x).requires_grad
    with lib.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert lib.is_grad_enabled()
    with lib.inference_mode():
        assert not (x * 2).requires_grad


def test_grad_mode_is_thread_local():
    seen = []
    with ember.no_grad():
        t = threading.Thread(target=lambda: seen.append(ember.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]


# --------------------------------------------------------------------------- detach, data, in-place


@pytest.mark.parametrize("lib", LIBS)
def test_detach_shares_storage_and_version(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.grad_fn is None
    d.add_(1)
    assert x._version == 1 and x.tolist() == [2.0, 3.0]
    data = x.data
    data.mul_(2)
    assert x._version == 1 and x.tolist() == [4.0, 6.0]


def test_in_place_on_leaf_requiring_grad():
    kind, msg = same_error(lambda lib: lib.ones(2, requires_grad=True).add_(1))
    assert msg == "a leaf Variable that requires grad is being used in an in-place operation."
    same_error(lambda lib: lib.ones(2, requires_grad=True)[0].mul_(2))

    def setitem(lib):
        x = lib.ones(2, requires_grad=True)
        x[0] = 3.0
    same_error(setitem)


def test_saved_tensor_modified_in_place():
    def f(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = x * 1
        b = a * a
        a.add_(1)
        b.sum().backward()

    kind, msg = same_error(f)
    assert "output 0 of Add, is at version 1; expected version 0" in msg

    def saved_output(lib):
        x = lib.ones(2, 3, requires_grad=True)
        y = x.exp()
        y.add_(1)
        y.sum().backward()
    same_error(saved_output)

    def saved_leaf(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.ones(2)
        y = x * w
        with lib.no_grad():
            w.add_(1)
        y.sum().backward()
    same_error(saved_leaf)


@pytest.mark.parametrize("lib", LIBS)
def test_in_place_ops_on_non_leaf(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    y.add_(1)
    y.mul_(x)  # needs y's old value for x's gradient: saved before the write
    y.sub_(0.5)
    y.div_(2)
    assert type(y.grad_fn).__name__ == "DivBackward0"
    y.sum().backward()
    # y = ((2x + 1) * x - 0.5) / 2  ->  dy/dx = (4x + 1) / 2
    assert x.grad.tolist() == [2.5, 4.5, 6.5]
    assert y._version == 4


@pytest.mark.parametrize("lib", LIBS)
def test_in_place_through_view(lib):
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 1
    y[1:3].mul_(10)
    y[0] = x[3] * x[3]
    assert type(y.grad_fn).__name__ == "CopySlices"
    y.backward(lib.tensor([1.0, 2.0, 3.0, 4.0]))
    assert x.grad.tolist() == [0.0, 20.0, 30.0, 4.0 + 8.0]


@pytest.mark.parametrize("lib", LIBS)
def test_zero_fill_copy_in_place(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.zero_()
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]
    z = lib.zeros(2)
    z.copy_(x * 2)
    z.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    w = lib.zeros(3).fill_(2.5)
    assert w.tolist() == [2.5] * 3


@pytest.mark.parametrize("lib", LIBS)
def test_hooks_can_replace_gradients(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))
    y = x * 2
    h = y.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert seen == [[20.0, 20.0]] and x.grad.tolist() == [20.0, 20.0]
    h.remove()
    x.grad = None
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


@pytest.mark.slow
def test_deep_chain_has_no_recursion_limit():
    x = ember.tensor([1.0], requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.tolist() == [1.0]


@pytest.mark.parametrize("lib", LIBS)
def test_next_functions_and_accumulate_grad(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    (fn, nr), (none, _) = y.grad_fn.next_functions
    assert type(fn).__name__ == "AccumulateGrad" and fn.variable is x and none is None
    assert (x + 1).grad_fn.next_functions[0][0] is fn  # one AccumulateGrad per leaf
    assert repr(y.grad_fn).startswith("<MulBackward0 object at 0x")


# --------------------------------------------------------------------------- gradcheck itself


def test_gradcheck_accepts_right_and_rejects_wrong_derivatives():
    x = ember.tensor([0.3, -0.7, 1.1], dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda t: (t.exp() * t ** 2).sum(), (x,))
    assert gradgradcheck(lambda t: (t.sigmoid() * t).sum(), (x,))

    class Wrong(ember.autograd.Node):
        pass

    def wrong(t):
        out = t.detach() * 3  # value 3t, but the graph says 2t
        return out + (t * 2 - t.detach() * 2)
    with pytest.raises(ember.autograd.gradcheck.__globals__["GradcheckError"]):
        gradcheck(wrong, (x,))
    assert gradcheck(wrong, (x,), raise_exception=False) is False


# --------------------------------------------------------------------------- memory


def test_saved_values_are_freed_by_backward():
    x = ember.ones(3, requires_grad=True)
    y = x.exp()
    z = (y * x).sum()
    exp_node, mul_node = y.grad_fn, z.grad_fn.next_functions[0][0]
    assert exp_node._ans is not None and any(s is not None for s in mul_node._saved)
    z.backward()
    assert exp_node._ans is None and mul_node._freed and mul_node._saved is None
    w = (x.exp() * 2).sum()
    w.backward(retain_graph=True)
    assert w.grad_fn.next_functions[0][0].next_functions[0][0]._ans is not None


def test_graphs_free_themselves_without_the_garbage_collector():
    import gc
    import weakref
    gc.disable()
    try:
        x = ember.ones(3, requires_grad=True)
        y = (x * 2).exp()
        y.retain_grad()
        y.register_hook(lambda g: g)
        refs = [weakref.ref(y), weakref.ref(y.grad_fn)]
        y.sum().backward()
        del y
        assert all(r() is None for r in refs)
        acc = weakref.ref((x * 1).grad_fn.next_functions[0][0])
        assert acc() is None  # AccumulateGrad lives only as long as a graph uses it
    finally:
        gc.enable()


@pytest.mark.parametrize("lib", LIBS)
def test_node_hooks(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = []
    y.grad_fn.register_hook(lambda gi, go: seen.append((gi[0].tolist(), go[0].tolist())))
    y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    y.sum().backward()
    assert seen == [([6.0, 6.0], [2.0, 2.0])] and x.grad.tolist() == [6.0, 6.0]


@pytest.mark.parametrize("lib", LIBS)
def test_variable_shim(lib):
    from_variable = lib.autograd.Variable(lib.ones(2), requires_grad=True)
    assert isinstance(from_variable, lib.Tensor) and from_variable.requires_grad
    assert isinstance(lib.ones(1), lib.autograd.Variable)


def test_gradcheck_fast_mode_checks_a_random_projection():
    x = ember.tensor(np.linspace(-1, 1, 40).reshape(5, 8), requires_grad=True)
    w = ember.tensor(np.linspace(0.5, 2, 8), dtype=ember.float64)
    assert gradcheck(lambda t: (t.exp() @ w).sigmoid(), (x,), fast_mode=True)

    def wrong(t):
        return t.detach() * 3 + (t * 2 - t.detach() * 2)
    assert gradcheck(wrong, (x,), fast_mode=True, raise_exception=False) is False


@pytest.mark.parametrize("lib", LIBS)
def test_fill_zero_copy_record_pytorchs_nodes(lib):
    x = lib.ones(3, requires_grad=True)
    names = []
    for f in (lambda y: y.fill_(2.5), lambda y: y.fill_(lib.tensor(2.0)), lambda y: y.zero_(),
              lambda y: y.copy_(lib.ones(3))):
        y = x * 1
        f(y)
        names.append(type(y.grad_fn).__name__)
        y.sum().backward()
    assert names == ["FillBackward2", "FillBackward3", "ZeroBackward0", "CopyBackwards"]
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_nonleaf_grad_warns_only_while_undefined(torch):
    def run(lib):
        x = lib.ones(2, requires_grad=True)
        y = x * 2
        z = (y * y).sum()
        with warnings.catch_warnings(record=True) as before:
            warnings.simplefilter("always")
            assert y.grad is None
        z.backward(inputs=[y])
        with warnings.catch_warnings(record=True) as after:
            warnings.simplefilter("always")
            grad = y.grad.tolist()
        return len(before), len(after), grad
    assert run(ember) == run(torch) == (1, 0, [4.0, 4.0])


def test_complex_sgn_and_its_gradient_match_pytorch(torch):
    values = [-3 + 4j, 1 + 2j, 0j, 0.5 - 0.2j]
    seed = [1 + 0.5j, -2 + 1j, 0.3 + 0.7j, -1j]
    out = {}
    for lib in (ember, torch):
        z = lib.tensor(values, dtype=lib.complex128, requires_grad=True)
        s = lib.sgn(z)
        s.backward(lib.tensor(seed, dtype=lib.complex128))
        out[lib] = (s.detach().numpy(), z.grad.numpy())
    np.testing.assert_allclose(out[ember][0], out[torch][0], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out[ember][1], out[torch][1], rtol=1e-12, atol=1e-15)


_COMPLEX_CASES = {
    "mul": lambda L, z, w: (z * w).abs().sum(),
    "exp": lambda L, z, w: z.exp().abs().sum(),
    "real_of_square": lambda L, z, w: (z * z).real.sum(),
    "imag_of_product": lambda L, z, w: (z * z * w).imag.sum(),
    "matmul": lambda L, z, w: (z.reshape(1, 2) @ w.reshape(2, 1)).abs().sum(),
    "abs": lambda L, z, w: z.abs().sum(),
    "div_log": lambda L, z, w: (z / w).log().abs().sum(),
    "sum_then_abs": lambda L, z, w: (z * w).sum().abs(),
    "sgn": lambda L, z, w: (z.sgn() * w).abs().sum(),
    "real_leaf_times_complex": lambda L, z, w: (z.real * w).abs().sum(),
}


@pytest.mark.parametrize("name", sorted(_COMPLEX_CASES))
def test_complex_gradients_follow_pytorchs_convention(torch, name):
    """PyTorch hands back g * conj(f'(z)) (the conjugate Wirtinger convention)."""
    grads = []
    for lib in (ember, torch):
        z = lib.tensor([1 + 1j, 2 - 1j], requires_grad=True)
        w = lib.tensor([2 + 1j, 1 - 3j])
        _COMPLEX_CASES[name](lib, z, w).backward()
        grads.append(z.grad.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-7)


def test_complex_double_backward_matches_pytorch(torch):
    out = []
    for lib in (ember, torch):
        z = lib.tensor([1 + 1j, 2 - 1j], dtype=lib.complex128, requires_grad=True)
        (g,) = lib.autograd.grad((z * z * z).abs().sum(), z, create_graph=True)
        (h,) = lib.autograd.grad(g.abs().sum(), z)
        out.append((g.detach().numpy(), h.numpy()))
    for e, t in zip(*out):
        np.testing.assert_allclose(e, t, rtol=1e-10)
