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


# Reads of parts of one tensor (an RNN's ``emb[:, t]``): after the first part's gradient, the
# others are added into that one in place (``Node._adds_into``), not as zeros of the whole.


def _parts_loss(x, weights):
    e = x * 1  # (one op whose input gradient the parts' gradients sum into)
    loss = (e[:, 0:2, :] * weights[0]).sum()
    for t in range(x.shape[1]):
        loss = loss + (e[:, t, :] * weights[t + 1]).sum()
    return loss


def _parts_expected(shape, weights, dtype):
    want = np.zeros(shape, dtype)
    want[:, 0:2, :] += weights[0]
    for t in range(shape[1]):
        want[:, t, :] += weights[t + 1]
    return want


def test_gradients_of_parts_sum_in_place_as_zeros_would():
    shape = (32, 5, 64)  # (above the in-place threshold)
    for dtype in (np.float32, np.float64):
        weights = [float(k) + 0.5 for k in range(shape[1] + 1)]
        x = ember.tensor(np.ones(shape, dtype), requires_grad=True)
        _parts_loss(x, weights).backward()
        np.testing.assert_array_equal(x.grad._data, _parts_expected(shape, weights, dtype))
        assert x.grad.dtype == x.dtype


def test_gradients_of_parts_match_torch_and_keep_nan():
    torch = __import__("pytest").importorskip("torch")
    rng = np.random.default_rng(0)
    data = rng.standard_normal((16, 4, 128)).astype(np.float32)
    data[0, 1, 3] = np.nan
    weights = [float(w) for w in rng.standard_normal(5)]
    grads = []
    for lib in (ember, torch):
        x = lib.tensor(data, requires_grad=True)
        e = x.exp()
        loss = (e[:, 0:2, :] * weights[0]).sum()
        for t in range(4):
            loss = loss + (e[:, t, :] * weights[t + 1]).sum()
        loss.backward()
        grads.append(x.grad.detach().numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, equal_nan=True)


def test_gradients_of_parts_with_retain_graph_hooks_and_create_graph():
    shape = (32, 3, 64)
    weights = [2.0, 3.0, 5.0, 7.0]
    want = _parts_expected(shape, weights, np.float32)
    x = ember.ones(shape, requires_grad=True)
    loss = _parts_loss(x, weights)
    loss.backward(retain_graph=True)
    loss.backward()  # twice through the same nodes: the sums start afresh each time
    np.testing.assert_array_equal(x.grad._data, 2 * want)
    seen = []
    x = ember.ones(shape, requires_grad=True)
    e = x * 1
    parts = [e[:, t, :] for t in range(3)]
    parts[1].grad_fn.register_hook(lambda gi, go: seen.append(gi[0].shape))
    sum((p * w).sum() for p, w in zip(parts, weights)).backward()
    assert seen == [shape]  # the hooked node ran its rule and its hook
    np.testing.assert_array_equal(x.grad._data[:, 2], np.full((32, 64), 5.0, np.float32))
    x = ember.ones(shape, dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(_parts_loss(x * x, weights), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)  # d/dx of 2x * w: 2 * w
    np.testing.assert_array_equal(gg._data, 2 * _parts_expected(shape, weights, np.float64))


def test_user_gradient_of_a_part_is_not_mutated():
    x = ember.ones((32, 2, 64), requires_grad=True)
    e = x * 1
    a, b = e[:, 0, :], e[:, 1, :]
    ga, gb = ember.full((32, 64), 2.0), ember.full((32, 64), 3.0)
    before = ga._data.copy(), gb._data.copy()
    ember.autograd.backward([a, b, e], [ga, gb, ember.ones((32, 2, 64))])
    np.testing.assert_array_equal(ga._data, before[0])
    np.testing.assert_array_equal(gb._data, before[1])
    np.testing.assert_array_equal(x.grad._data[:, 0], np.full((32, 64), 3.0))
    np.testing.assert_array_equal(x.grad._data[:, 1], np.full((32, 64), 4.0))
