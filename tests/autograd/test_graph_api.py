"""The graph API: node names and metadata, node hooks (return values, removal, errors, order),
``Tensor.register_post_accumulate_grad_hook`` and ``autograd.graph.register_multi_grad_hook``.

Each behaviour runs on ember and on PyTorch (``torch`` fixture); the two must agree.
"""
import pytest

from ..oracle import agree


def leaf(lib, values=(1.0, 2.0)):
    return lib.tensor(list(values), requires_grad=True)


def test_node_names(torch):
    def run(lib):
        x = leaf(lib)
        y = (x * 3).exp()
        acc = (x * 1).grad_fn.next_functions[0][0]
        return [y.grad_fn.name(), type(y.grad_fn).__name__, acc.name(), type(acc).__name__]
    agree(run, torch)


def test_metadata_is_a_dict_kept_by_the_node(torch):
    def run(lib):
        y = leaf(lib) * 3
        empty = dict(y.grad_fn.metadata)
        y.grad_fn.metadata["tag"] = "scale"
        return empty, y.grad_fn.metadata, y.grad_fn.metadata is y.grad_fn.metadata
    agree(run, torch)


def test_hooks_can_replace_gradients_and_be_removed(torch):
    def run(lib):
        x = leaf(lib)
        grads = []
        for replace in (True, False):
            y = (x * 3).exp()
            post = y.grad_fn.register_hook(lambda gi, go: (gi[0] * 10,))
            pre = y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
            if not replace:
                post.remove()
                pre.remove()
                post.remove()  # removing twice is harmless
            y.sum().backward()
            grads.append(x.grad.clone())
            x.grad = None
        return grads
    agree(run, torch)


def test_hook_arguments(torch):
    def run(lib):
        x = leaf(lib)
        y = x * 3
        seen = []
        y.grad_fn.register_prehook(lambda go: seen.append(("pre", go)))
        y.grad_fn.register_hook(lambda gi, go: seen.append(("post", gi, go)))
        acc = y.grad_fn.next_functions[0][0]
        acc.register_prehook(lambda go: seen.append(("acc pre", go)))
        acc.register_hook(lambda gi, go: seen.append(("acc post", gi, go)))
        y.sum().backward()
        return seen, x.grad
    agree(run, torch)


@pytest.mark.parametrize("kind", ["post", "pre"])
@pytest.mark.parametrize("returned", ["two_values", "a_tensor", "other_size"])
def test_hook_return_values_are_checked(torch, kind, returned):
    def run(lib):
        y = (leaf(lib) * 3).exp()
        pick = {"two_values": lambda g: (g[0], g[0]), "a_tensor": lambda g: g[0],
                "other_size": lambda g: (g[0][:1],)}[returned]
        if kind == "post":
            y.grad_fn.register_hook(lambda gi, go: pick(gi))
        else:
            y.grad_fn.register_prehook(lambda go: pick(go))
        y.sum().backward()
    agree(run, torch, raises=TypeError if returned == "a_tensor" else RuntimeError)


def test_hook_may_drop_a_gradient(torch):
    def run(lib):
        x = leaf(lib)
        y = (x * 3).exp()
        y.grad_fn.register_hook(lambda gi, go: (None,))
        y.sum().backward()
        return x.grad
    agree(run, torch)


def test_hook_order(torch):
    """Tensor hooks, then retain_grad, then node pre-hooks, then node hooks (whatever the
    registration order)."""
    def run(lib):
        x = leaf(lib)
        y = (x * 2).exp()
        order = []
        y.grad_fn.register_prehook(lambda go: order.append("node pre"))
        y.retain_grad()
        y.register_hook(lambda g: order.append("tensor") or g * 2)  # retain_grad sees 2g
        y.grad_fn.register_hook(lambda gi, go: order.append("node post"))
        y.sum().backward()
        return order, y.grad
    agree(run, torch)


def test_leaf_tensor_hooks_apply_to_autograd_grad(torch):
    def run(lib):
        x = leaf(lib)
        seen = []
        x.register_hook(lambda g: seen.append(g) or g * 10)
        got, = lib.autograd.grad((x * 2).sum(), x)
        return got, seen, x.grad
    agree(run, torch)


def test_post_accumulate_grad_hook(torch):
    def run(lib):
        x = leaf(lib)
        seen = []
        handle = x.register_post_accumulate_grad_hook(
            lambda t: seen.append((t is x, t.grad.clone())))
        (x * 2).sum().backward()
        (x * 3).sum().backward()
        lib.autograd.grad((x * 4).sum(), x)  # no .grad written: no call
        (x * 5).sum().backward(inputs=[x])
        handle.remove()
        (x * 6).sum().backward()
        return seen, x.grad
    agree(run, torch)


def test_post_accumulate_grad_hook_errors(torch):
    agree(lambda lib: (leaf(lib) * 2).register_post_accumulate_grad_hook(print), torch,
          raises=RuntimeError)
    agree(lambda lib: lib.ones(2).register_post_accumulate_grad_hook(print), torch,
          raises=RuntimeError)

    def returns_a_value(lib):
        x = leaf(lib)
        x.register_post_accumulate_grad_hook(lambda t: t.grad * 0)
        (x * 2).sum().backward()
    agree(returns_a_value, torch, raises=RuntimeError)


def test_post_accumulate_grad_hook_steps_an_optimizer_in_backward(torch):
    """The use it is made for: update each parameter as soon as its gradient is ready."""
    def run(lib):
        w = leaf(lib, (1.0, -2.0, 0.5))

        def step(p):
            with lib.no_grad():
                p.sub_(0.1 * p.grad)
            p.grad = None
        w.register_post_accumulate_grad_hook(step)
        for _ in range(3):
            (w ** 2).sum().backward()
        return w, w.grad
    agree(run, torch)


def abcd(lib):
    a = leaf(lib, (1.0, 2.0, 3.0))
    b = leaf(lib, (4.0, 5.0, 6.0))
    return a, b, a * b, a * b


def test_multi_grad_hook_all(torch):
    def run(lib):
        a, b, c, d = abcd(lib)
        calls = []
        handle = lib.autograd.graph.register_multi_grad_hook((a, b, c, d), calls.append)
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        handle.remove()
        lib.autograd.graph.register_multi_grad_hook((c, d), calls.append)
        lib.autograd.grad((c * d).sum(), (a, b))
        return calls
    calls = agree(run, torch)
    assert [[g is not None for g in grads] for grads in calls] == [
        [True, True, True, False], [True, False, True, False], [True, True]]


def test_multi_grad_hook_on_leaves_under_autograd_grad():
    """PyTorch refuses this ("A leaf node was passed to _will_engine_execute_node ..."); ember
    knows which leaves ``autograd.grad`` reaches, and calls the hook."""
    import ember
    a, b, c, d = abcd(ember)
    calls = []
    ember.autograd.graph.register_multi_grad_hook((a, b, d), calls.append)
    ember.autograd.grad(c.sum(), a)
    assert [[g is not None for g in grads] for grads in calls] == [[True, False, False]]


def test_multi_grad_hook_any_and_removal(torch):
    def run(lib):
        a, b, c, d = abcd(lib)
        calls = []
        handle = lib.autograd.graph.register_multi_grad_hook((a, b, c), calls.append, mode="any")
        (c * 2).sum().backward()
        handle.remove()
        (a * b).sum().backward()
        return calls
    assert len(agree(run, torch)) == 1


def test_multi_grad_hook_refuses_other_modes(torch):
    agree(lambda lib: lib.autograd.graph.register_multi_grad_hook((leaf(lib),), print,
                                                                   mode="some"),
          torch, raises=ValueError)
