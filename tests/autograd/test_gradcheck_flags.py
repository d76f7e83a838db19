"""The flags of ``gradcheck`` honoured as PyTorch honours them: each test Function fails exactly
one check, and ember raises PyTorch's ``GradcheckError`` with PyTorch's message start (or
returns False with ``raise_exception=False``) where PyTorch does."""
import warnings

import pytest

from ..oracle import outcome


def classes(lib):
    F = lib.autograd.Function

    class Good(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    count = [0]

    class Nondet(Good):  # a backward that differs (by 1e-9) from run to run
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            count[0] += 1
            return 2 * x * g + count[0] * 1e-9

    class NoUndefined(Good):  # fails on outputs that got no gradient
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            if g is None:
                raise RuntimeError("no gradient")
            return 2 * x * g

    class NonZeroUndefined(NoUndefined):  # a gradient from nothing
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return lib.ones_like(x) if g is None else 2 * x * g

    class NotBatchable(Good):  # .item() in the backward: no vmap
        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g.sum().item() / g.sum().item() * g

    class WithJvp(F):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

        @staticmethod
        def jvp(ctx, t):
            x, = ctx.saved_tensors
            return 2 * x * t

    class JvpNotBatchable(WithJvp):  # .item() in the jvp
        generate_vmap_rule = True

        @staticmethod
        def jvp(ctx, t):
            x, = ctx.saved_tensors
            return 2 * x * t * t.sum().item() / t.sum().item()

    return dict(Good=Good, Nondet=Nondet, NoUndefined=NoUndefined,
                NonZeroUndefined=NonZeroUndefined, NotBatchable=NotBatchable, WithJvp=WithJvp,
                JvpNotBatchable=JvpNotBatchable)


CASES = [("Good", {}), ("Nondet", {}), ("Nondet", dict(nondet_tol=1e-6)),
         ("NoUndefined", {}), ("NoUndefined", dict(check_undefined_grad=False)),
         ("NoUndefined", dict(raise_exception=False)), ("NonZeroUndefined", {}),
         ("NotBatchable", {}), ("NotBatchable", dict(check_batched_grad=True)),
         ("Good", dict(check_batched_grad=True)), ("Good", dict(check_forward_ad=True)),
         ("Good", dict(check_backward_ad=False, check_forward_ad=False)),
         ("Good", dict(check_grad_dtypes=True)), ("Good", dict(fast_mode=True)),
         ("WithJvp", dict(check_forward_ad=True, check_batched_forward_grad=True)),
         ("JvpNotBatchable", dict(check_forward_ad=True)),
         ("JvpNotBatchable", dict(check_forward_ad=True, check_batched_forward_grad=True)),
         ("WithJvp", dict(check_forward_ad=True, check_batched_grad=True,
                          check_batched_forward_grad=True))]


def run(lib, name, flags):
    x = lib.tensor([1., 2., 3.], dtype=lib.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lib.autograd.gradcheck(classes(lib)[name].apply, (x,), **flags)


@pytest.mark.parametrize("name,flags", CASES, ids=[f"{n}-{f}" for n, f in CASES])
def test_flag_as_pytorch(torch, name, flags):
    import ember
    got = outcome(lambda: run(ember, name, flags))
    want = outcome(lambda: run(torch, name, flags))
    if isinstance(want, bool):
        assert got is want
        return
    assert type(got).__name__ == "Raised", got
    assert got.type == want.type
    start = want.message.split(":")[0][:60]  # (the underlying vmap error is ember's own)
    assert got.message.startswith(start), (got.message, want.message)


def test_gradgradcheck_passes_its_flags(torch):
    import ember
    for lib in (ember, torch):
        x = lib.tensor([1., 2.], dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradgradcheck(lambda x: x.sin() * x, (x,), check_batched_grad=True,
                                          nondet_tol=0.0, check_grad_dtypes=True)
        with pytest.raises(AssertionError, match="Expected at least one of check_fwd_over_rev"):
            lib.autograd.gradgradcheck(lambda x: x.sin(), (x,), check_rev_over_rev=False)


def test_enforce_grad_layout_policy(torch):
    """A stride-only switch: same gradients with it on or off, usable as a decorator."""
    import ember
    for lib in (ember, torch):
        p = lib.ones(2, 3, 4).permute(2, 0, 1).requires_grad_()
        with lib.autograd.enforce_grad_layout_policy(False):
            (p * 2).sum().backward()
        assert (p.grad == 2).all()

        @lib.autograd.enforce_grad_layout_policy(True)
        def f():
            return 1
        assert f() == 1
