"""The engine writes in place only into gradient arrays it owns (``autograd/engine.py``): a
gradient handed in by the user, a hook, a custom Function or a rule that passes its gradient
on is never mutated, and ``.grad`` never aliases one."""
import numpy as np

import ember

N = 8192  # above the engine's in-place threshold


def _leaf():
    return ember.ones(N, requires_grad=True)


def test_user_gradient_is_not_mutated():
    x = _leaf()
    y = x * 2 + x * 3  # two gradients meet at x's slot
    g = ember.ones(N)
    before = g._data.copy()
    y.backward(g)
    np.testing.assert_array_equal(g._data, before)
    np.testing.assert_array_equal(x.grad._data, np.full(N, 5.0))
    assert x.grad._data is not g._data


def test_user_gradient_summed_into_is_not_mutated():
    x = _leaf()
    y = x * 1  # MulBackward by a number passes g * 1 on; the seed arrives at y twice
    g = ember.full((N,), 2.0)
    before = g._data.copy()
    ember.autograd.backward([y, y], [g, g])
    np.testing.assert_array_equal(g._data, before)
    np.testing.assert_array_equal(x.grad._data, np.full(N, 4.0))


def test_hook_result_kept_elsewhere_is_not_mutated():
    kept = []

    def hook(grad):
        new = grad * 10
        kept.append((new, new._data.copy()))
        return new

    x = _leaf()
    a = x * 1
    a.register_hook(hook)
    (a + x * 2).sum().backward()
    for t, copy in kept:
        np.testing.assert_array_equal(t._data, copy)
    np.testing.assert_array_equal(x.grad._data, np.full(N, 12.0))
    x.grad = None
    (a.detach() * 0 + x).sum().backward()
    for t, copy in kept:
        np.testing.assert_array_equal(t._data, copy)
    assert all(x.grad._data is not t._data for t, _ in kept)


def test_leaf_hook_result_is_not_aliased_by_grad():
    kept = []
    x = _leaf()
    x.register_hook(lambda g: kept.append(g * 1) or kept[-1])
    (x * 2).sum().backward()
    (x * 2).sum().backward()  # accumulates into .grad: the hook's tensor stays as it was
    np.testing.assert_array_equal(kept[0]._data, np.full(N, 2.0))
    np.testing.assert_array_equal(x.grad._data, np.full(N, 4.0))


def test_rule_passing_its_gradient_on_is_not_mutated():
    # add's rules return the gradient they were handed, to both inputs: the arrays reaching
    # x's slot are one array twice, and the sum must not write into it.
    x = _leaf()
    seen = []
    s = x + x
    s.register_hook(lambda g: seen.append(g._data.copy()))
    y = s + x  # x gets three gradients: g (through s, twice) and g
    g = ember.ones(N)
    y.backward(g)
    np.testing.assert_array_equal(g._data, np.ones(N))
    np.testing.assert_array_equal(x.grad._data, np.full(N, 3.0))


def test_custom_function_gradient_is_not_mutated():
    store = {}

    class PassOn(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            store["g"] = g
            store["copy"] = g._data.copy()
            return g

    x = _leaf()
    y = PassOn.apply(x) + x * 4
    y.sum().backward()
    np.testing.assert_array_equal(store["g"]._data, store["copy"])
    np.testing.assert_array_equal(x.grad._data, np.full(N, 5.0))


def test_retain_graph_second_backward_leaves_gradients_alone():
    x = _leaf()
    w = ember.full((N,), 3.0, requires_grad=True)
    y = x * w + x * w
    g = ember.ones(N)
    y.backward(g, retain_graph=True)
    first = x.grad._data.copy()
    y.backward(g)
    np.testing.assert_array_equal(g._data, np.ones(N))
    np.testing.assert_array_equal(w._data, np.full(N, 3.0))  # a saved value, never written
    np.testing.assert_array_equal(x.grad._data, 2 * first)


def test_engine_sums_still_go_in_place():
    # The engine's own sums may be reused: results stay right when many gradients meet.
    x = _leaf()
    y = sum((x * k for k in range(1, 6)), ember.zeros(N))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad._data, np.full(N, 15.0))


def test_gradient_a_hook_only_looked_at_is_not_mutated():
    seen = []
    x = _leaf()
    x.register_hook(lambda g: seen.append((g, g._data.copy())))
    (x * 2).sum().backward()
    (x * 2).sum().backward()  # .grad accumulates: the tensor the hook kept stays as it was
    for t, copy in seen:
        np.testing.assert_array_equal(t._data, copy)
    np.testing.assert_array_equal(x.grad._data, np.full(N, 4.0))
