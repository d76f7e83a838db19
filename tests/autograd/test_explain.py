"""ember.autograd.explain: the steps of backward, checked by hand, against PyTorch, and at scale."""
import time

import numpy as np
import pytest

import ember
from ember.autograd import explain
from ember.autograd._walk import walk

from ..conftest import to_np
from ..seed_graphs import seed_vjp


def seed_demo(lib):
    """The seeds' first example: y = x + 2; z = 3*y*y; out = z.mean(), on a 2x2 x of ones."""
    x = lib.ones(2, 2, requires_grad=True)
    y = x + 2
    z = 3 * y * y
    return x, z.mean()



def by_label(steps):
    return {s.label: s for s in steps}


def ember_nodes(out):
    return walk([(out.grad_fn, 0)])


def torch_trace(out, gradient=None):
    """PyTorch's own backward, observed: for each node (numbered in ember's walk order) its
    ``(class name, grad_inputs, grad_outputs)``, and the order in which the nodes ran."""
    nodes, seen, stack = [], set(), [out.grad_fn]
    while stack:  # the same depth-first order as ember's walk
        fn = stack.pop()
        if fn in seen:
            continue
        seen.add(fn)
        nodes.append(fn)
        stack.extend(c for c, _ in reversed(fn.next_functions) if c is not None and c not in seen)
    record, order = {}, []

    def hook(k):
        def fn(grad_inputs, grad_outputs):
            record[k] = type(nodes[k]).__name__, grad_inputs, grad_outputs
            order.append(k)
        return fn
    handles = [fn.register_hook(hook(k)) for k, fn in enumerate(nodes)
               if type(fn).__name__ != "AccumulateGrad"]
    out.backward(gradient)
    for h in handles:
        h.remove()
    return record, order


# ----------------------------------------------------------------------------- the seeds


def test_seed_demo_per_node_jacobians_by_hand(capsys):
    x, out = seed_demo(ember)
    steps = explain(out, params={"x": x})
    y = to_np(x) + 2  # values the rules see
    names = [s.label for s in steps]
    assert names == ["MeanBackward0", "MulBackward0 #1", "MulBackward0 #2", "AddBackward0", "x"]
    s = by_label(steps)
    eye = np.eye(4)
    (mean,) = s["MeanBackward0"].inputs
    np.testing.assert_allclose(to_np(mean.jacobian), np.full((1, 4), 1 / 4))
    three_y_times_y = s["MulBackward0 #1"].inputs  # (3*y) * y
    np.testing.assert_allclose(to_np(three_y_times_y[0].jacobian), eye * y.reshape(-1))
    np.testing.assert_allclose(to_np(three_y_times_y[1].jacobian), eye * 3 * y.reshape(-1))
    np.testing.assert_allclose(to_np(s["MulBackward0 #2"].inputs[0].jacobian), 3 * eye)
    np.testing.assert_allclose(to_np(s["AddBackward0"].inputs[0].jacobian), eye)
    # dout/dx = 3/2 (x + 2), the seed's hand derivation: 4.5 at x = 1.
    np.testing.assert_allclose(to_np(x.grad), 1.5 * (to_np(x) + 2))
    np.testing.assert_allclose(to_np(s["x"].grad), to_np(x.grad))
    np.testing.assert_allclose(to_np(s["x"].jacobian), 1.5 * (to_np(x) + 2).reshape(1, 4))
    printed = capsys.readouterr().out
    assert "J (1×4) = tensor([[0.2500, 0.2500, 0.2500, 0.2500]])" in printed
    assert "x.grad = tensor([[4.5000, 4.5000]," in printed


def test_seed_vjp_full_jacobian_and_gradient_by_hand(capsys):
    x, y = seed_vjp(ember)
    v = ember.ones(3)
    steps = explain(y, v, params={"x": x})
    x1, x2 = to_np(x)
    J = np.array([[2 * x1, 0], [2 * x1, 10 * x2], [0, 3]])  # the seed's Jacobian
    leaf = steps[-1]
    assert (leaf.name, leaf.label, leaf.tensor) == ("AccumulateGrad", "x", x)
    np.testing.assert_allclose(to_np(leaf.jacobian), J)
    np.testing.assert_allclose(to_np(x.grad), J.T @ to_np(v))
    np.testing.assert_allclose(to_np(leaf.grad), [4, 23])
    assert "J of the output w.r.t. x (3×2)" in capsys.readouterr().out


@pytest.mark.parametrize("make", [seed_demo, seed_vjp])
def test_steps_match_pytorchs_backward_node_by_node(torch, make):
    """v and Jᵀ·v of every node equal what PyTorch's nodes receive and hand on, in its order."""
    _, out = make(ember)
    _, tout = make(torch)
    v = None if out.numel() == 1 else [1.0, 2.0, 3.0]
    steps = explain(out, None if v is None else ember.tensor(v))
    record, order = torch_trace(tout, None if v is None else torch.tensor(v))
    index = {node: k for k, node in enumerate(ember_nodes(out))}
    ops = [s for s in steps if s.name != "AccumulateGrad"]
    assert [index[s.node] for s in ops] == order
    for step in ops:
        name, grad_inputs, grad_outputs = record[index[step.node]]
        assert step.name == name
        for ours, theirs in zip(step.v, grad_outputs):
            np.testing.assert_allclose(to_np(ours), to_np(theirs), rtol=1e-6)
        for grad in step.inputs:
            np.testing.assert_allclose(to_np(grad.vjp), to_np(grad_inputs[grad.position]),
                                       rtol=1e-6)


def test_every_local_jacobian_times_v_is_what_the_node_hands_on():
    x, y = seed_vjp(ember)
    for step in explain(y, ember.tensor([0.5, -1.0, 2.0])):
        v = np.concatenate([to_np(g).reshape(-1) for g in step.v if g is not None])
        for grad in step.inputs:
            assert grad.jacobian.shape == grad.jacobian_shape
            np.testing.assert_allclose(to_np(grad.jacobian).T @ v, to_np(grad.vjp).reshape(-1))


def test_leaf_jacobians_match_pytorchs_jacobian(torch):
    rng = np.random.default_rng(0)
    a_np, b_np, v_np = rng.normal(size=(2, 3)), rng.normal(size=(3, 2)), rng.normal(size=(2, 2))

    def f(lib, a, b):
        return (a @ b).tanh() * a.sum()
    a, b = (ember.tensor(t, requires_grad=True) for t in (a_np, b_np))
    steps = explain(f(ember, a, b), ember.tensor(v_np), params={"a": a, "b": b})
    leaves = {s.label: s for s in steps if s.name == "AccumulateGrad"}
    jac = torch.autograd.functional.jacobian(
        lambda a, b: f(torch, a, b), (torch.tensor(a_np), torch.tensor(b_np)))
    for name, theirs in zip("ab", jac):
        ours = to_np(leaves[name].jacobian)
        np.testing.assert_allclose(ours, to_np(theirs).reshape(ours.shape), rtol=1e-10)
        assert leaves[name].jacobian.dtype == ember.float64


def test_final_gradients_equal_backwards_and_accumulate_like_it():
    x1, out1 = seed_demo(ember)
    x2, out2 = seed_demo(ember)
    explain(out1, retain_graph=True)
    out2.backward(retain_graph=True)
    np.testing.assert_array_equal(to_np(x1.grad), to_np(x2.grad))
    explain(out1)  # a second pass adds, as the seed's calculate_output twice does: 9
    out2.backward()
    np.testing.assert_array_equal(to_np(x1.grad), to_np(x2.grad))
    np.testing.assert_allclose(to_np(x1.grad), 2 * 1.5 * (to_np(x1) + 2))


def test_inputs_restrict_the_accumulation_like_backward():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    w = ember.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    steps = explain((y * y).sum(), inputs=[y], params={"y": y})
    assert x.grad is None and w.grad is None
    assert steps[-1].label == "y" and steps[-1].tensor is y
    np.testing.assert_allclose(to_np(steps[-1].v[0]), 2 * to_np(y))


# ----------------------------------------------------------------------------- size limits


def test_max_elements_bounds_what_is_materialised(capsys):
    x = ember.arange(8.0, requires_grad=True)
    small = explain((x * x).sum(), max_elements=64)
    assert all(g.jacobian is not None for s in small for g in s.inputs)
    x.grad = None
    large = explain((x * x).sum(), max_elements=4)
    assert all(g.jacobian is None for s in large for g in s.inputs)
    assert all(s.jacobian is None for s in large)
    mul = next(s for s in large if s.name == "MulBackward0")
    assert mul.inputs[0].jacobian_shape == (8, 8)
    assert "J (8×8): not materialised (more than max_elements=4 elements" in \
        capsys.readouterr().out


def test_a_million_elements_are_explained_fast_with_shapes_only(capsys):
    x = ember.randn(1_000_000, requires_grad=True)
    w = ember.randn(1_000_000, requires_grad=True)
    out = ((x * w).sin() + x).sum()
    start = time.perf_counter()
    steps = explain(out, params={"x": x, "w": w})
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0, f"{elapsed:.2f} s"
    assert all(g.jacobian is None for s in steps for g in s.inputs)
    assert all(s.jacobian is None for s in steps)
    printed = capsys.readouterr().out
    assert "tensor([" not in printed and "(1000000,) float32 (values not shown)" in printed
    np.testing.assert_allclose(to_np(x.grad), to_np(w * (x * w).cos() + 1), rtol=1e-5)


# ----------------------------------------------------------------------------- bad input


def test_a_tensor_without_a_graph_is_refused_clearly():
    with pytest.raises(RuntimeError, match="no backward graph.*requires_grad=True"):
        explain(ember.ones(3))


def test_a_freed_graph_is_refused_with_what_to_do():
    x, out = seed_demo(ember)
    out.backward()
    with pytest.raises(RuntimeError, match="freed by an earlier backward.*forward pass again"):
        explain(out)
    x, out = seed_demo(ember)
    explain(out)  # explain frees like backward does
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        explain(out)


def test_a_non_scalar_output_needs_a_gradient():
    x, y = seed_vjp(ember)
    with pytest.raises(RuntimeError, match="only for scalar outputs.*gradient=v"):
        explain(y)


def test_hooks_are_gone_after_explain(capsys):
    x, out = seed_demo(ember)
    explain(out, retain_graph=True)
    capsys.readouterr()
    out.backward()
    assert capsys.readouterr().out == ""
    np.testing.assert_allclose(to_np(x.grad), 2 * 4.5)
