"""Forward-mode AD: every op spec of ``tests/spec_modules.py`` (the families, indexing, nn,
the surface of issue 20, the rest) computes ``J·t`` — checked against central finite
differences and against reverse mode (``v·(J t) == (Jᵀ v)·t``) in float64 on the op specs'
inputs, and against PyTorch's forward AD.
"""
import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD
from ember.ops import registry

from .. import spec_modules
from ..opspec import _float_outputs, _outputs, cases, inputs
from ..oracle import raised

try:
    import torch
except ImportError:
    torch = None

FAMILIES = ("pointwise", "arithmetic", "binary_math", "selection", "comparison", "unary",
            "reduction", "linalg", "shape", "sorting")
SPECS = (spec_modules.FAMILY_SPECS + spec_modules.INDEXING_SPECS + spec_modules.NN_SPECS
         + spec_modules.SURFACE_SPECS + spec_modules.OTHER_SPECS)


def _tangents(xs, seed=2):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, size=tuple(x.shape)) if x.is_floating_point() else None
            for x in xs]


def _jvp(lib, spec, xs, ts):
    """The outputs' tangents of ``spec.fn`` at ``xs`` along ``ts`` (lib's forward AD)."""
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        duals = [x if t is None else fw.make_dual(x, lib.tensor(t, dtype=x.dtype))
                 for x, t in zip(xs, ts)]
        outs = [o for o in _outputs(spec.fn(lib, *duals)) if o.is_floating_point()]
        return [fw.unpack_dual(o).tangent for o in outs]


def _values(spec, xs):
    """The float outputs of ``spec.fn`` at ``xs`` (grad mode on: some specs differentiate)."""
    return [o.detach().numpy() for o in _outputs(spec.fn(ember, *xs)) if o.is_floating_point()]


def _shifted(xs, ts, eps):
    return [x if t is None else
            (x.detach() + eps * ember.tensor(t)).requires_grad_(x.requires_grad)
            for x, t in zip(xs, ts)]


@pytest.mark.parametrize("spec,shapes",
                         cases(SPECS, lambda s: s.finite_differences, "forward_ad"))
def test_jvp_matches_finite_differences_and_reverse_mode(spec, shapes):
    xs = inputs(ember, spec, shapes, ember.float64)
    ts = _tangents(xs)
    tangents = _jvp(ember, spec, xs, ts)
    eps = 1e-6
    numeric = [(p - m) / (2 * eps) for p, m in zip(_values(spec, _shifted(xs, ts, eps)),
                                                    _values(spec, _shifted(xs, ts, -eps)))]
    for tangent, expected in zip(tangents, numeric):
        got = np.zeros_like(expected) if tangent is None else tangent.detach().numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    outs = _float_outputs(spec.fn(ember, *xs))
    if not outs:
        return
    rng = np.random.default_rng(3)
    vs = [rng.uniform(-1, 1, size=tuple(o.shape)) for o in outs]
    ember.autograd.backward(outs, [ember.tensor(v) for v in vs])
    reverse = sum(float((x.grad.numpy() * t).sum()) for x, t in zip(xs, ts)
                  if t is not None and x.grad is not None)
    forward = sum(float((v * tangent.detach().numpy()).sum())
                  for v, tangent in zip(vs, tangents) if tangent is not None)
    assert forward == pytest.approx(reverse, rel=1e-9, abs=1e-9)


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("spec,shapes",
                         cases(SPECS, lambda s: not s.name.endswith("_ties"),
                               "forward_ad_pytorch"))
def test_jvp_matches_pytorch(spec, shapes):
    """(Not at ties, where no derivative exists: PyTorch's JVP and VJP pick differently there,
    and ember's JVP follows its VJP.)"""
    e_in = inputs(ember, spec, shapes, ember.float64)
    t_in = inputs(torch, spec, shapes, torch.float64)
    ts = _tangents(e_in)
    try:
        expected = _jvp(torch, spec, t_in, ts)
    except (NotImplementedError, RuntimeError) as e:  # PyTorch has no JVP for it either
        pytest.skip(f"PyTorch: {str(e).splitlines()[0]}")
    got = _jvp(ember, spec, e_in, ts)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert (g is None) == (e is None)
        if g is not None:
            np.testing.assert_allclose(g.detach().numpy(), e.detach().numpy(force=True),
                                       rtol=1e-9 * spec.tol, atol=1e-11 * spec.tol)


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
@pytest.mark.parametrize("name", ["pad", "inv", "addmm", "cumprod"])
def test_a_transposed_jvp_of_a_complex_tangent_is_pytorchs(name):
    """``jvp="transpose"`` ops (``J·t`` from the gradient in ``v`` of ``Σ (Jᵀv)·t``) with
    complex numbers: the tangent once came back conjugated (hfft of a zero-padded spectrum
    gave a reversed tangent), and with a complex ``J`` was wrong."""
    rng = np.random.default_rng(0)
    x, t, m = (rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3)) for _ in range(3))
    out = []
    for lib in (ember, torch):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(lib.tensor(x), lib.tensor(t))
            y = {"pad": lambda: lib.nn.functional.pad(d, (1, 2)),
                 "inv": lambda: lib.linalg.inv(d),
                 "addmm": lambda: lib.addmm(lib.tensor(m), d, lib.tensor(m)),
                 "cumprod": lambda: d.cumprod(1)}[name]()
            out.append(fw.unpack_dual(y).tangent.resolve_conj().numpy())
    np.testing.assert_allclose(out[0], out[1], rtol=1e-12)


def test_every_differentiable_op_of_the_families_declares_a_jvp():
    missing = [op.name for op in registry.OPS
               if op.rules is not None and op.jvp_kind is None
               and op.forward.__module__.removeprefix("ember.ops.").split(".")[0] in FAMILIES]
    assert missing == []


# --------------------------------------------------------------------------- the API


def both():
    return [ember] + ([torch] if torch is not None else [])


@pytest.mark.parametrize("lib", both(), ids=lambda m: m.__name__)
def test_dual_tensors_print_and_unpack_like_pytorch(lib):
    fw = lib.autograd.forward_ad
    x = lib.tensor([1.0, 2.0])
    with fw.dual_level():
        d = fw.make_dual(x, lib.ones(2))
        y = d.sin() * 2
        primal, tangent = fw.unpack_dual(y)
        scalar = fw.make_dual(lib.tensor(3.0), lib.tensor(2.0))
        texts = [repr(d), repr(y), repr(primal), repr(tangent), repr(scalar * 2),
                 type(fw.unpack_dual(y)).__name__, repr(fw.unpack_dual(x))]
    texts.append(repr(fw.unpack_dual(y)))
    return_value = "\n".join(texts)
    assert return_value == (
        "tensor([1., 2.], tangent=tensor([1., 1.]))\n"
        "tensor([1.6829, 1.8186], tangent=tensor([ 1.0806, -0.8323]))\n"
        "tensor([1.6829, 1.8186])\n"
        "tensor([ 1.0806, -0.8323])\n"
        "tensor(6., tangent=4.0)\n"
        "UnpackedDualTensor\n"
        "UnpackedDualTensor(primal=tensor([1., 2.]), tangent=None)\n"
        "UnpackedDualTensor(primal=tensor([1.6829, 1.8186]), tangent=None)")


@pytest.mark.skipif(torch is None, reason="PyTorch not installed")
def test_forward_ad_errors_match_pytorch():
    def cases(lib):
        fw = lib.autograd.forward_ad
        out = [raised(lambda: fw.make_dual(lib.ones(2), lib.ones(2)))]
        with fw.dual_level():
            out.append(raised(lambda: fw.make_dual(lib.ones(2), lib.ones(3))))
            out.append(raised(lambda: fw.make_dual(lib.tensor([1, 2]), lib.tensor([1, 2]))))
            out.append(raised(lambda: fw.enter_dual_level()))
        return out
    assert cases(ember) == cases(torch)


def test_an_op_without_a_jvp_names_itself():
    op = registry.defop("no_jvp_here")(lambda xp, input: input * 2)
    op.defvjp(lambda xp, g, ans, input: g * 2)
    with fwAD.dual_level():
        d = fwAD.make_dual(ember.ones(2), ember.ones(2))
        with pytest.raises(NotImplementedError, match="^Trying to use forward AD with "
                           "no_jvp_here that does not support it because it has not been "
                           "implemented yet.\n"):
            op(d)
    registry.OPS.remove(op)


def test_tangents_are_dropped_when_the_level_closes():
    with fwAD.dual_level():
        d = fwAD.make_dual(ember.ones(2), ember.ones(2))
        y = d * 3
        assert fwAD.unpack_dual(y).tangent is not None
    assert fwAD.unpack_dual(y).tangent is None and y._fw is None and d._fw is None


def test_forward_over_reverse_gives_a_hessian_vector_product():
    x = ember.tensor([0.5, -1.0, 2.0], dtype=ember.float64, requires_grad=True)
    v = ember.tensor([1.0, 0.5, -0.25], dtype=ember.float64)

    def f(x):
        return (x.sin() * x * x).sum()
    (g,) = ember.autograd.grad(f(x), x, create_graph=True)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, v)
        (g_dual,) = ember.autograd.grad(f(dual), dual, create_graph=True)
        hvp = fwAD.unpack_dual(g_dual).tangent
    (expected,) = ember.autograd.grad(g, x, v)
    np.testing.assert_allclose(hvp.detach().numpy(), expected.numpy(), rtol=1e-12)


def test_third_derivative_by_forward_over_double_reverse():
    x = ember.tensor([0.3, 1.2], dtype=ember.float64, requires_grad=True)
    t = ember.tensor([1.0, -2.0], dtype=ember.float64)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        y = (dual.exp() * dual ** 3).sum()
        (g,) = ember.autograd.grad(y, dual, create_graph=True)
        (h,) = ember.autograd.grad(g.sum(), dual, create_graph=True)
        third = fwAD.unpack_dual(h).tangent
    # d3/dx3 of e^x x^3 = e^x (x^3 + 9x^2 + 18x + 6), elementwise
    xs = x.detach().numpy()
    expected = np.exp(xs) * (xs ** 3 + 9 * xs ** 2 + 18 * xs + 6) * t.numpy()
    np.testing.assert_allclose(third.detach().numpy(), expected, rtol=1e-10)


def _custom_fn(lib, scale):
    """A custom Function with a ``jvp`` (scaled by ``scale``: 1 is the true derivative) and
    ``save_for_forward``; two outputs and a non-tensor argument."""
    class ExpAnd(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            ctx.save_for_forward(x, y)
            return x.exp() * y * k, x + 1

        @staticmethod
        def jvp(ctx, gx, gy, gk):
            x, y = ctx.saved_tensors
            assert gk is None
            return (gx * y + gy) * x.exp() * scale * 2, gx  # 2 == k in the calls below

        @staticmethod
        def backward(ctx, ga, gb):
            raise AssertionError("not used by forward AD")

    return ExpAnd


@pytest.mark.skipif(torch is None, reason="needs torch")
def test_custom_function_forward_ad_uses_its_jvp_as_pytorch():
    rng = np.random.default_rng(0)
    x, y, t = (rng.standard_normal(3) for _ in range(3))
    got = {}
    for lib in (ember, torch):
        fn = _custom_fn(lib, 3.0)  # a deliberately "wrong" jvp: PyTorch uses it as given
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            for which in (0, 1):  # the tangent on x, then on y (the other gets zeros)
                args = [lib.tensor(x), lib.tensor(y), 2]
                args[which] = fw.make_dual(args[which], lib.tensor(t))
                a, b = fn.apply(*args)
                got[lib.__name__, which] = [fw.unpack_dual(o).tangent.numpy() for o in (a, b)]
            plain = lib.autograd.Function

            class NoJvp(plain):
                @staticmethod
                def forward(ctx, x):
                    return x * 2

                @staticmethod
                def backward(ctx, g):
                    return g * 2

            with pytest.raises(NotImplementedError) as err:
                NoJvp.apply(fw.make_dual(lib.tensor(x), lib.tensor(t)))
            got[lib.__name__, "err"] = str(err.value)
    for key in (0, 1):
        for e, p in zip(got["ember", key], got["torch", key]):
            np.testing.assert_allclose(e, p, rtol=1e-12)
    assert got["ember", "err"] == got["torch", "err"]


@pytest.mark.skipif(torch is None, reason="needs torch")
def test_gradcheck_checks_forward_mode_when_asked():
    for lib in (ember, torch):
        x = lib.tensor([0.3, -0.2], dtype=lib.float64, requires_grad=True)
        fn = _custom_fn(lib, 1.0)
        right = lambda x: fn.apply(x, lib.ones(2, dtype=lib.float64), 2)
        assert lib.autograd.gradcheck(right, (x,), check_forward_ad=True,
                                      check_backward_ad=False, check_undefined_grad=False,
                                      check_batched_grad=False)
        wrong = lambda x: _custom_fn(lib, 3.0).apply(x, lib.ones(2, dtype=lib.float64), 2)
        with pytest.raises(RuntimeError, match="^Jacobian computed with forward mode mismatch "
                                               "for output 0 with respect to input 0,\nnumerical"):
            lib.autograd.gradcheck(wrong, (x,), check_forward_ad=True, check_backward_ad=False,
                                   check_undefined_grad=False, check_batched_grad=False)
        with pytest.raises(AssertionError, match="^Expected at least one of check_forward_ad or "
                                                 "check_backward_ad to be True$"):
            lib.autograd.gradcheck(right, (x,), check_backward_ad=False)


def test_gradcheck_refuses_complex_rather_than_dropping_imaginary_parts():
    """Its finite differences are real: a complex input or output is refused, not checked on
    its real part alone (which passed wrong gradients before)."""
    z = ember.tensor([1 + 2j, 3 - 1j], dtype=ember.complex128, requires_grad=True)
    with pytest.raises(NotImplementedError, match="does not check complex"):
        ember.autograd.gradcheck(lambda z: z * z, (z,))
    x = ember.tensor([0.5, 1.5], dtype=ember.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="does not check complex"):
        ember.autograd.gradcheck(lambda x: ember.complex(x, x), (x,))
