"""Custom ``autograd.Function``: forward/backward with ctx, saved tensors, dirty and
non-differentiable outputs, materialized grads, once_differentiable, PyTorch's errors for bad
gradients, double backward.

Every behaviour runs on ember and on PyTorch (``torch`` fixture) and the two must agree: values,
gradients, grad_fn names and error texts. The Function classes are made per library by the
``make_*`` factories, since each must subclass that library's ``autograd.Function``.
"""
import gc
import weakref

import numpy as np
import pytest

import ember

from ..oracle import agree


def make_exp(lib):
    class MyExp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            y, = ctx.saved_tensors
            return grad * y
    return MyExp


def make_cube(lib, once=False):
    """``x ** 3`` whose backward is written with ops (so differentiable) or marked once."""
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 3 * x ** 2

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

    once_differentiable = lib.autograd.function.once_differentiable
    Cube.backward = staticmethod(once_differentiable(backward) if once else backward)
    return Cube


def make_returning(lib, grads_fn, n_args=2):
    """A Function of ``(x, k)`` (or ``(x,)``) whose backward returns ``grads_fn(lib, grad)``."""
    class Ret(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, *rest):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grads_fn(lib, grad)
    return Ret


def x64(lib, values=(0.5, -1.0, 2.0)):
    return lib.tensor(list(values), dtype=lib.float64, requires_grad=True)


def test_forward_backward_grad_fn_and_repr(torch):
    def run(lib):
        x = x64(lib)
        y = make_exp(lib).apply(x)
        y.sum().backward()
        fn = y.grad_fn
        return (y, x.grad, type(fn).__name__, fn.name(), repr(y),
                isinstance(fn, lib.autograd.graph.Node),
                [type(n).__name__ for n, _ in fn.next_functions], fn.metadata)
    out = agree(run, torch)
    assert out[2] == "MyExpBackward"


def test_grad_fn_is_the_ctx(torch):
    class_attr = "scale"

    def run(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                setattr(ctx, class_attr, k)
                ctx.save_for_backward(x, None)
                return x * k

            @staticmethod
            def backward(ctx, grad):
                x, nothing = ctx.saved_tensors
                return grad * ctx.scale, None
        x = x64(lib)
        y = Scale.apply(x, 4.0)
        saved = y.grad_fn.saved_tensors
        y.sum().backward()
        return y.grad_fn.scale, saved[0] is x, saved[1], x.grad, y.grad_fn.needs_input_grad
    assert agree(run, torch)[1] is True


def test_saved_output_comes_back_with_the_node_as_grad_fn(torch):
    def run(lib):
        y = make_exp(lib).apply(x64(lib))
        saved, = y.grad_fn.saved_tensors
        return saved is y, saved.grad_fn is y.grad_fn, saved.requires_grad, saved
    agree(run, torch)


def test_saved_tensors_are_version_checked(torch):
    def output_modified(lib):
        y = make_exp(lib).apply(x64(lib))
        y.add_(1)
        y.sum().backward()

    def input_modified(lib):
        class SaveIn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                x, = ctx.saved_tensors
                return grad * x
        b = x64(lib).exp()
        y = SaveIn.apply(b)
        b.mul_(2)
        y.sum().backward()
    agree(output_modified, torch, raises=RuntimeError)
    agree(input_modified, torch, raises=RuntimeError)


def test_saved_tensors_are_freed_after_backward_unless_retained(torch):
    def run(lib):
        x = x64(lib)
        y = make_exp(lib).apply(x)
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return x.grad, y.grad_fn.saved_tensors
    assert agree(run, torch, raises=RuntimeError).message.startswith("Trying to backward")


def test_save_for_backward_takes_tensors_only(torch):
    def run(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 1
        Bad.apply(x64(lib))
    agree(run, torch, raises=TypeError)


def test_needs_input_grad(torch):
    def run(lib):
        seen = []

        class Probe(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, z):
                seen.append(ctx.needs_input_grad)
                return x * k + z

            @staticmethod
            def backward(ctx, grad):
                seen.append(ctx.needs_input_grad)
                return grad, None, grad
        x, z = x64(lib), lib.ones(3, dtype=lib.float64)
        Probe.apply(x, 2.0, z).sum().backward()
        with lib.no_grad():
            Probe.apply(x, 2.0, z)
        Probe.apply(z, 2.0, z)
        return seen, x.grad
    agree(run, torch)


def test_several_outputs_and_non_tensor_arguments(torch):
    def run(lib):
        seen = []

        class Parts(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k, x.sum(), 7, x.argmax()

            @staticmethod
            def backward(ctx, g_scaled, g_sum, g_int, g_idx):
                seen.append((g_scaled, g_sum, g_int, g_idx))
                return g_scaled * 2 + g_sum, None

        x = x64(lib)
        outs = Parts.apply(x, 2.0)
        outs[0].sum().backward()
        return ([type(o).__name__ for o in outs[1:3]],
                [getattr(o, "requires_grad", None) for o in outs],
                [getattr(o, "output_nr", None) for o in outs],
                outs[0].grad_fn is outs[1].grad_fn, seen, x.grad)
    agree(run, torch)


def test_mark_non_differentiable(torch):
    def run(lib):
        seen = []

        class SortKeep(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                doubled, tripled = x * 2, x * 3
                ctx.mark_non_differentiable(tripled)
                return doubled, tripled

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1, g2))
                return g1 + g2

        x = x64(lib)
        a, b = SortKeep.apply(x)
        a.sum().backward()
        return a.requires_grad, b.requires_grad, b.grad_fn, b.is_leaf, seen, x.grad
    agree(run, torch)


def test_set_materialize_grads(torch):
    def run(lib, materialize):
        seen = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                seen.append((g1, g2))
                return g1 if g2 is None else g1 + g2

        x = x64(lib)
        Two.apply(x)[0].sum().backward()
        return seen, x.grad
    got = agree(lambda lib: run(lib, False), torch)
    assert got[0][0][1] is None
    agree(lambda lib: run(lib, True), torch)


def make_increment(lib):
    class Inc(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 5
    return Inc


def test_mark_dirty_rebases_the_input(torch):
    def run(lib):
        x = x64(lib)
        y = x * 1
        before = y._version
        z = make_increment(lib).apply(y)
        z.sum().backward()
        return (z is y, y._version - before, type(y.grad_fn).__name__,
                [type(n).__name__ for n, _ in y.grad_fn.next_functions], y, x.grad)
    agree(run, torch)

    def without_grad(lib):
        w = lib.tensor([1.0, 2.0])
        before = w._version
        z = make_increment(lib).apply(w)
        return z is w, w._version - before, z.grad_fn, w
    agree(without_grad, torch)


def test_mark_dirty_errors(torch):
    agree(lambda lib: make_increment(lib).apply(x64(lib)), torch, raises=RuntimeError)

    def not_returned(lib):
        class Hidden(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x * 2
        Hidden.apply(x64(lib) * 1)
    agree(not_returned, torch, raises=RuntimeError)

    def invalidates_saved(lib):
        s = (x64(lib) * 1).exp()  # ExpBackward0 saves its result
        make_increment(lib).apply(s)
        s.sum().backward()
    agree(invalidates_saved, torch, raises=RuntimeError)


def test_input_returned_as_is_gets_the_node(torch):
    def run(lib):
        class Ident(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad * 3
        x = x64(lib)
        y = Ident.apply(x)
        y.sum().backward()
        return y is x, y.data_ptr() == x.data_ptr(), type(y.grad_fn).__name__, x.grad
    agree(run, torch)


def test_setup_context_style(torch):
    def run(lib):
        seen = []

        class Mul(lib.autograd.Function):
            @staticmethod
            def forward(x, k=2.0):
                seen.append(lib.is_grad_enabled())
                return x * k, x.sum()

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, k = inputs
                seen.append((k, type(output).__name__, output[0].requires_grad))
                ctx.k = k
                ctx.save_for_backward(output[0])

            @staticmethod
            def backward(ctx, g, g_sum):
                y, = ctx.saved_tensors
                return g * ctx.k + g_sum + 0 * y, None

        x = x64(lib)
        out, total = Mul.apply(x)
        (out.sum() + total).backward()
        first = x.grad.clone()
        x.grad = None
        Mul.apply(x, k=5.0)[0].sum().backward()
        return seen, first, x.grad, type(out.grad_fn).__name__
    agree(run, torch)


def test_keyword_arguments_reach_forward(torch):
    def run(lib):
        class K(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k=2.0):
                return x * k

            @staticmethod
            def backward(ctx, grad):
                return grad, None
        x = x64(lib)
        return K.apply(x, k=3.0), K.apply(x)
    agree(run, torch)


@pytest.mark.parametrize("grads_fn", [
    lambda lib, g: g,                                   # too few
    lambda lib, g: (g, None, g),                        # too many, not all None
    lambda lib, g: (g, g),                              # a gradient for the non-tensor k
    lambda lib, g: (3, None),                           # not a tensor
    lambda lib, g: [g, None],                           # a list is one value
], ids=["too_few", "too_many", "non_tensor_input", "not_a_tensor", "list"])
def test_wrong_gradients_returned(torch, grads_fn):
    def run(lib):
        make_returning(lib, grads_fn).apply(x64(lib), 2.0).sum().backward()
    agree(run, torch, raises=RuntimeError)


def test_extra_none_gradients_are_dropped(torch):
    def run(lib):
        x = x64(lib)
        make_returning(lib, lambda lib, g: (g, None, None)).apply(x, 2.0).sum().backward()
        return x.grad
    agree(run, torch)


@pytest.mark.parametrize("shape", [(4,), (), (2, 3)], ids=["wrong", "scalar", "broadcast"])
def test_gradient_shapes_are_checked_or_reduced(torch, shape):
    """A gradient the input's shape broadcasts to is summed down; others are PyTorch's error
    (which counts tensor inputs only: index 1 below)."""
    def run(lib):
        class KX(lib.autograd.Function):
            @staticmethod
            def forward(ctx, k, x, z):
                return (x * k + z).sum()

            @staticmethod
            def backward(ctx, grad):
                return None, grad * lib.ones(3, dtype=lib.float64), lib.ones(shape)
        x, z = x64(lib), x64(lib, (1.0, 1.0, 1.0))
        KX.apply(2.0, x, z).backward()
        return x.grad, z.grad, z.grad.dtype == x.dtype
    agree(run, torch, raises=None if shape == (2, 3) else RuntimeError)


def test_double_and_third_backward_through_a_custom_function(torch):
    def run(lib):
        x = x64(lib)
        y = make_cube(lib).apply(x)
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x, create_graph=True)
        ggg, = lib.autograd.grad(gg.sum(), x)
        return g, gg, ggg, type(g.grad_fn).__name__
    agree(run, torch)
    x = x64(ember)
    cube = make_cube(ember).apply
    assert ember.autograd.gradcheck(cube, (x,))
    assert ember.autograd.gradgradcheck(cube, (x,))


def test_once_differentiable(torch):
    def first_order(lib):
        x = x64(lib)
        g, = lib.autograd.grad(make_cube(lib, once=True).apply(x).sum(), x)
        return g, g.requires_grad, g.grad_fn

    def marked(lib):
        x = x64(lib)
        g, = lib.autograd.grad((make_cube(lib, once=True).apply(x) ** 2).sum(), x,
                               create_graph=True)
        return g, type(g.grad_fn).__name__, g.grad_fn.name(), x, g

    agree(first_order, torch)
    agree(lambda lib: marked(lib)[:3], torch)
    agree(lambda lib: marked(lib)[4].sum().backward(), torch, raises=RuntimeError)

    def through_leaf(lib):
        *_, x, g = marked(lib)
        lib.autograd.grad(g.sum(), x)
    agree(through_leaf, torch, raises=RuntimeError)


def test_no_graph_without_grad(torch):
    def run(lib):
        x = x64(lib)
        with lib.no_grad():
            a = make_exp(lib).apply(x)
        b = make_exp(lib).apply(lib.ones(2))
        return a.requires_grad, a.grad_fn, b.requires_grad, b.grad_fn
    agree(run, torch)


def test_hooks_on_a_custom_node(torch):
    def run(lib):
        x = x64(lib)
        y = make_exp(lib).apply(x)
        seen = []
        y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
        y.grad_fn.register_hook(lambda gi, go: seen.append((gi, go)))
        y.sum().backward()
        return seen, x.grad
    agree(run, torch)


def test_vjp_is_another_name_for_backward(torch):
    def run(lib, both):
        class V(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def vjp(ctx, grad):
                return grad * 2
        if both:
            V.backward = staticmethod(lambda ctx, grad: grad)
        x = x64(lib)
        V.apply(x).sum().backward()
        return x.grad
    agree(lambda lib: run(lib, False), torch)
    agree(lambda lib: run(lib, True), torch, raises=RuntimeError)


def test_misuse(torch):
    def no_forward(lib):
        class Empty(lib.autograd.Function):
            pass
        Empty.apply(x64(lib))

    def no_backward(lib):
        class Forward(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
        Forward.apply(x64(lib)).sum().backward()

    def legacy_call(lib):
        with pytest.warns(DeprecationWarning, match="should not be instantiated"):
            fn = make_exp(lib)()
        fn(x64(lib))

    agree(no_forward, torch, raises=NotImplementedError)
    agree(no_backward, torch, raises=NotImplementedError)
    agree(legacy_call, torch, raises=RuntimeError)


def test_graph_is_freed_without_the_garbage_collector(torch):
    """The node keeps a saved output without a reference cycle (output -> node -> output)."""
    def run(lib):
        gc.disable()
        try:
            y = make_exp(lib).apply(x64(lib))
            ref = weakref.ref(y.grad_fn)
            del y
            return ref() is None
        finally:
            gc.enable()
    assert agree(run, torch) is True


def test_matches_finite_differences_with_several_inputs():
    class Bilinear(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a, b, scale):
            ctx.save_for_backward(a, b)
            ctx.scale = scale
            return (a @ b) * scale

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad @ b.T * ctx.scale, a.T @ grad * ctx.scale, None

    rng = np.random.default_rng(0)
    a = ember.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    assert ember.autograd.gradcheck(Bilinear.apply, (a, b, 1.5))
    assert ember.autograd.gradgradcheck(Bilinear.apply, (a, b, 1.5))
