"""``autograd.Function`` under ``vmap`` and the other function transforms, against PyTorch.

Each Function is defined for both libraries (``classes(lib)``) and run through the same
transform on each (``agree``): values, per-sample gradients (``vmap(grad(f))``, which used to
come out summed over the batch), jacobians, and PyTorch's errors for a Function that has no
vmap rule, has two, or takes ``ctx`` in ``forward``. Finite differences check the per-sample
gradients independently of PyTorch.
"""
import builtins

import numpy as np
import pytest

import ember

from ..oracle import Raised, agree, error_of, outcome, same_error

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")


def classes(lib):
    """The test Functions, made for ``lib`` (ember or torch)."""
    F = lib.autograd.Function

    class Cube(F):  # no vmap support
        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x ** 2

    class CubeGen(Cube):
        generate_vmap_rule = True

    class CubeRule(Cube):
        @staticmethod
        def vmap(info, in_dims, x):
            return CubeRule.apply(x), in_dims[0]

    class Both(CubeRule):
        generate_vmap_rule = True

    class WithCtx(F):
        generate_vmap_rule = True

        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class ScaledSum(F):
        """(x, w, k) -> (k * (x * w).sum(), x.argmax()): a shared weight, a non-tensor and an
        integer output; saves an output and an input; has a jvp."""
        generate_vmap_rule = True

        @staticmethod
        def forward(x, w, k):
            return k * (x * w).sum(), x.argmax()

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, w, k = inputs
            ctx.k = k
            ctx.mark_non_differentiable(output[1])
            ctx.save_for_backward(x, w)
            ctx.save_for_forward(x, w)

        @staticmethod
        def backward(ctx, g, _):
            x, w = ctx.saved_tensors
            return g * ctx.k * w, g * ctx.k * x, None

        @staticmethod
        def jvp(ctx, tx, tw, _):
            x, w = ctx.saved_tensors
            return ctx.k * ((tx * w).sum() + (x * tw).sum()), None

    class Sort(F):
        """Sorting along ``dim``: the vmap rule moves ``dim`` past the batch dim."""

        @staticmethod
        def forward(x, dim):
            return x.sort(dim)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[1])
            ctx.save_for_backward(output[1])
            ctx.dim = inputs[1]

        @staticmethod
        def backward(ctx, g, _):
            idx, = ctx.saved_tensors
            return lib.zeros_like(g).scatter(ctx.dim, idx, g), None

        @staticmethod
        def vmap(info, in_dims, x, dim):
            x = x.movedim(in_dims[0], 0)
            return Sort.apply(x, dim + 1 if dim >= 0 else dim), (0, 0)

    return dict(Cube=Cube, CubeGen=CubeGen, CubeRule=CubeRule, Both=Both, WithCtx=WithCtx,
                ScaledSum=ScaledSum, Sort=Sort)


def data(lib, *shape, seed=0):
    rng = np.random.default_rng(seed)
    return lib.tensor(rng.uniform(-1.5, 1.5, shape), dtype=lib.float64)


TRANSFORMS = {
    "vmap": lambda lib, C: lib.func.vmap(C.apply)(data(lib, 4)),
    "vmap_unbatched_input": lambda lib, C: lib.func.vmap(
        lambda a: C.apply(data(lib, seed=1)) + a)(data(lib, 4)),
    "vmap_of_grad": lambda lib, C: lib.func.vmap(lib.func.grad(
        lambda x: C.apply(x).sum()))(data(lib, 4)),
    "vmap_of_grad_rows": lambda lib, C: lib.func.vmap(lib.func.grad(
        lambda x: C.apply(x).sin().sum()))(data(lib, 3, 2)),
    "grad_of_vmap": lambda lib, C: lib.func.grad(
        lambda x: lib.func.vmap(C.apply)(x).sin().sum())(data(lib, 4)),
    "jacrev": lambda lib, C: lib.func.jacrev(C.apply)(data(lib, 3)),
    "vmap_of_jacrev": lambda lib, C: lib.func.vmap(lib.func.jacrev(C.apply))(data(lib, 3, 2)),
    "vmap_of_vmap": lambda lib, C: lib.func.vmap(lib.func.vmap(C.apply))(data(lib, 3, 2)),
    "vmap_in_dim_1": lambda lib, C: lib.func.vmap(C.apply, in_dims=1)(data(lib, 2, 3)),
    "hessian_per_sample": lambda lib, C: lib.func.vmap(lib.func.hessian(
        lambda x: C.apply(x).sum()))(data(lib, 2, 3)),
}


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("name", ["Cube", "CubeGen", "CubeRule", "Both", "WithCtx"])
def test_transforms_agree_with_pytorch(torch, name, transform):
    fn = TRANSFORMS[transform]
    run = lambda lib: fn(lib, classes(lib)[name])  # noqa: E731
    want = outcome(run, torch)  # what PyTorch raises, if it does, ember must raise too
    agree(run, torch, raises=getattr(builtins, want.type) if isinstance(want, Raised) else None)
    if name in ("CubeGen", "CubeRule") and not transform.startswith("hessian"):
        assert not isinstance(want, Raised)


@pytest.mark.parametrize("transform", ["vmap_of_grad", "vmap_of_grad_rows", "grad_of_vmap"])
@pytest.mark.parametrize("name", ["CubeGen", "CubeRule"])
def test_per_sample_gradients_by_finite_differences(name, transform):
    """Each sample's gradient is its own (the old result summed them)."""
    C = classes(ember)[name]
    x = data(ember, 3, 2)
    if transform == "grad_of_vmap":
        got = ember.func.grad(lambda x: ember.func.vmap(C.apply)(x).sin().sum())(x)
    else:
        got = ember.func.vmap(ember.func.grad(lambda x: C.apply(x).sin().sum()))(x)
    xs = x.numpy()
    eps = 1e-6
    want = np.zeros_like(xs)
    for i in np.ndindex(xs.shape):
        up, down = xs.copy(), xs.copy()
        up[i] += eps
        down[i] -= eps
        want[i] = (np.sin(up ** 3).sum() - np.sin(down ** 3).sum()) / (2 * eps)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("transform", ["vmap", "vmap_of_grad", "grad_of_vmap", "jacrev",
                                       "vmap_of_vmap"])
def test_generated_rule_with_shared_weight_and_integer_output(torch, transform):
    """A weight shared by the samples gets the sum of their gradients; the argmax output is
    not differentiable; non-tensor arguments pass through."""
    def run(lib):
        C = classes(lib)["ScaledSum"]
        w = data(lib, 3, seed=2)
        x = data(lib, 4, 3)
        f = lambda x, w: C.apply(x, w, 1.5)  # noqa: E731
        if transform == "vmap":
            return lib.func.vmap(f, in_dims=(0, None))(x, w)
        if transform == "vmap_of_grad":
            return lib.func.vmap(lib.func.grad(lambda x, w: f(x, w)[0], argnums=(0, 1)),
                                 in_dims=(0, None))(x, w)
        if transform == "grad_of_vmap":
            return lib.func.grad(lambda x, w: lib.func.vmap(f, in_dims=(0, None))(x, w)[0]
                                 .sin().sum(), argnums=(0, 1))(x, w)
        if transform == "jacrev":
            return lib.func.jacrev(lambda x, w: f(x, w)[0], argnums=(0, 1))(x[0], w)
        return lib.func.vmap(lib.func.vmap(f, in_dims=(0, None)), in_dims=(0, None))(
            x.reshape(2, 2, 3), w)
    agree(run, torch)


def test_generated_rule_forward_ad(torch):
    """``jvp``/``jacfwd`` through a generated rule: the Function's jvp, per sample."""
    def run(lib):
        C = classes(lib)["ScaledSum"]
        w = data(lib, 3, seed=2)
        f = lambda x: C.apply(x, w, 1.5)[0]  # noqa: E731
        x, t = data(lib, 4, 3), data(lib, 4, 3, seed=5)
        return lib.func.vmap(lambda x, t: lib.func.jvp(f, (x,), (t,)))(x, t)
    agree(run, torch)


@pytest.mark.parametrize("transform", ["vmap", "vmap_of_grad", "grad_of_vmap", "vmap_of_vmap"])
def test_vmap_staticmethod_moving_a_dim_argument(torch, transform):
    def run(lib):
        Sort = classes(lib)["Sort"]
        x = data(lib, 2, 3, 4)
        f = lambda x: Sort.apply(x, -1)  # noqa: E731
        if transform == "vmap":
            return lib.func.vmap(f)(x)
        if transform == "vmap_of_grad":
            return lib.func.vmap(lib.func.grad(lambda x: (f(x)[0] * lib.arange(4.)).sum()))(x)
        if transform == "grad_of_vmap":
            return lib.func.grad(lambda x: (lib.func.vmap(f)(x)[0] * lib.arange(4.)).sum())(x)
        return lib.func.vmap(lib.func.vmap(f))(x)
    agree(run, torch)


def test_vmap_staticmethod_sees_info_and_in_dims(torch):
    def run(lib):
        seen = []

        class Rec(classes(lib)["Cube"]):
            @staticmethod
            def vmap(info, in_dims, x, k):
                seen.append((info.batch_size, info.randomness, in_dims, tuple(x.shape), k))
                return Rec.apply(x, k), 0

            @staticmethod
            def forward(x, k):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

        lib.func.vmap(lambda x: Rec.apply(x, 2.0), randomness="same")(data(lib, 5, 2))
        return seen
    agree(run, torch)


def test_rule_results_are_checked(torch):
    def bad(lib, result):
        class Bad(classes(lib)["Cube"]):
            @staticmethod
            def vmap(info, in_dims, x):
                return result(x)
        return lambda: lib.func.vmap(Bad.apply)(data(lib, 3))

    # (PyTorch's message names its own class: compared up to it)
    for lib in (ember, torch):
        got = error_of(lambda: bad(lib, lambda x: x)())
        assert got.type == "RuntimeError" and got.message.startswith(
            "Expected the vmap staticmethod to have two returns, an output and out_dims with "
            "pytree structure compatible with the output. Got a <class '")
    same_error(lambda lib: bad(lib, lambda x: (x, 0, 0))(), torch)


def test_input_returned_as_it_is_and_saved(torch):
    """PyTorch refuses with setup_context (a view of the input works)."""
    def run(lib):
        class Keep(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2, x

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(inputs[0])

            @staticmethod
            def backward(ctx, g, h):
                return g
        Keep.apply(lib.ones(2, requires_grad=True))
    same_error(run, torch)


def test_old_style_function_refused_by_every_transform(torch):
    for fn in (lambda lib, C: lib.func.grad(lambda x: C.apply(x).sum())(lib.ones(2)),
               lambda lib, C: lib.func.jacrev(C.apply)(lib.ones(2)),
               lambda lib, C: lib.func.vmap(C.apply)(lib.ones(2))):
        same_error(lambda lib: fn(lib, classes(lib)["WithCtx"]), torch)
    # outside the transforms it still works
    y = classes(ember)["WithCtx"].apply(ember.ones(2, requires_grad=True))
    assert type(y.grad_fn).__name__ == "WithCtxBackward"


def two_outputs(lib):
    class Two(lib.autograd.Function):
        """Two outputs, materialize_grads off: the mapped backward gets None for an output
        without a gradient."""
        generate_vmap_rule = True

        @staticmethod
        def forward(x, y):
            return x * y, x + y

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)
            ctx.set_materialize_grads(False)

        @staticmethod
        def backward(ctx, ga, gb):
            x, y = ctx.saved_tensors
            gx = gy = None
            if ga is not None:
                gx, gy = ga * y, ga * x
            if gb is not None:
                gx = gb if gx is None else gx + gb
                gy = gb if gy is None else gy + gb
            return gx, gy
    return Two


TWO = {
    "vmap": lambda lib, T, x, y: lib.func.vmap(T.apply, in_dims=(0, None))(x, y),
    "grad_first": lambda lib, T, x, y: lib.func.vmap(lib.func.grad(
        lambda a, b: T.apply(a, b)[0].sum(), argnums=(0, 1)), in_dims=(0, None))(x, y),
    "grad_second": lambda lib, T, x, y: lib.func.vmap(lib.func.grad(
        lambda a, b: T.apply(a, b)[1].sum(), argnums=(0, 1)), in_dims=(0, None))(x, y),
    "jacrev_of_vmap": lambda lib, T, x, y: lib.func.jacrev(
        lambda a: lib.func.vmap(T.apply, in_dims=(0, None))(a, y)[0])(x),
    "out_dims_1": lambda lib, T, x, y: lib.func.vmap(lambda a: T.apply(a, y)[0],
                                                     out_dims=1)(x),
    "nested": lambda lib, T, x, y: lib.func.vmap(lib.func.vmap(T.apply, in_dims=(0, None)),
                                                 in_dims=(0, None))(x.reshape(3, 2, 1), y[:1]),
}


@pytest.mark.parametrize("case", sorted(TWO))
def test_generated_rule_two_outputs(torch, case):
    def run(lib):
        x = lib.arange(6., dtype=lib.float64).reshape(3, 2)
        y = lib.tensor([1., -1.], dtype=lib.float64)
        return TWO[case](lib, two_outputs(lib), x, y)
    agree(run, torch)
