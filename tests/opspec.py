"""Spec-table machinery shared by the op tests (``ops/test_core_ops.py``, ``ops/test_ops_*.py``).

A test module lists ``SPECS`` and gets its tests with::

    test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)

For every spec and input shapes: first derivatives against central finite differences in
float64 (gradcheck), second derivatives (gradgradcheck, smooth ops), and — when PyTorch is
importable — forward values, dtype, grad_fn name and a random vector-Jacobian product in
float32 and float64. ``test_core_ops.test_every_registered_op_has_a_spec`` checks that the
specs of all modules together exercise every registered op.
"""
from dataclasses import dataclass, field

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

try:
    import torch
except ImportError:  # the PyTorch oracle is optional
    torch = None


@dataclass
class Spec:
    name: str
    fn: object                      # fn(lib, *tensors) -> tensor or tuple of tensors
    shapes: list                    # list of tuples of input shapes
    domain: tuple = (-2.0, 2.0)     # float inputs are drawn uniformly from here
    gradgrad: bool = True           # check second derivatives too
    finite_differences: bool = True  # False where the op itself rounds (a float32 cast)
    int_args: dict = field(default_factory=dict)  # position -> (shape, high) integer inputs
    tol: float = 1.0                # scales the PyTorch-comparison tolerance (ill-conditioned ops)
    distinct: bool = False          # inputs are spread apart (sort, max: no ties)
    # False where ember's graph is composite and its grad_fn (name, inputs) legitimately
    # differs from PyTorch's fused kernel's (the row's comment says which): values, dtypes and
    # gradients are still compared
    grad_fn_name: bool = True
    # test kind ("forward_ad", "vmap", ...) -> why it cannot pass: a real limitation, which
    # raises a clear error (the case runs as a strict xfail, so a fix is noticed)
    xfail: dict = field(default_factory=dict)


BINARY_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (1, 3)), ((3,), (2, 3)),
                 ((2, 1), (1, 3)), ((2, 3), ())]
UNARY_SHAPES = [((),), ((3,),), ((2, 3),)]


def inputs(lib, spec, shapes, dtype, seed=0):
    """The same pseudo-random inputs for ember and PyTorch (float ones require grad)."""
    rng = np.random.default_rng(seed)
    out = []
    for k, shape in enumerate(shapes):
        if k in spec.int_args:
            ishape, high = spec.int_args[k]
            out.append(lib.tensor(rng.integers(0, high, ishape)))
            continue
        if spec.distinct:
            n = int(np.prod(shape))
            vals = (rng.permutation(n) + rng.uniform(0.1, 0.4, n)).reshape(shape) / max(n, 1)
            vals = spec.domain[0] + vals * (spec.domain[1] - spec.domain[0])
        else:
            vals = rng.uniform(*spec.domain, size=shape)
        out.append(lib.tensor(vals, dtype=dtype, requires_grad=True))
    return out


def _outputs(result):
    return result if isinstance(result, tuple) else (result,)


def _float_outputs(result):
    return [o for o in _outputs(result) if o.is_floating_point() and o.requires_grad]


def xfail_marks(spec, kind):
    """The strict xfail of a test kind the spec declares it cannot pass (``Spec.xfail``)."""
    if kind not in spec.xfail:
        return ()
    return (pytest.mark.xfail(strict=True, reason=spec.xfail[kind]),)


def cases(specs, only=None, kind=None):
    return [pytest.param(s, shp, id=f"{s.name}-{'x'.join(map(str, shp))}",
                         marks=xfail_marks(s, kind))
            for s in specs for shp in s.shapes if only is None or only(s)]


def op_tests(specs):
    """The three parametrised test functions for a spec table."""

    @pytest.mark.parametrize("spec,shapes",
                             cases(specs, lambda s: s.finite_differences, "gradcheck"))
    def test_gradcheck(spec, shapes):
        xs = inputs(ember, spec, shapes, ember.float64)
        assert gradcheck(lambda *a: tuple(_float_outputs(spec.fn(ember, *a))), xs)

    @pytest.mark.parametrize("spec,shapes",
                             cases(specs, lambda s: s.gradgrad and s.finite_differences,
                                   "gradgradcheck"))
    def test_gradgradcheck(spec, shapes):
        xs = inputs(ember, spec, shapes, ember.float64)
        assert gradgradcheck(lambda *a: tuple(_float_outputs(spec.fn(ember, *a))), xs)

    @pytest.mark.skipif(torch is None, reason="PyTorch not installed")
    @pytest.mark.parametrize("dtype", ["float32", "float64"])
    @pytest.mark.parametrize("spec,shapes", cases(specs, kind="pytorch"))
    def test_against_pytorch(spec, shapes, dtype):
        check_against_pytorch(spec, shapes, dtype)

    return test_gradcheck, test_gradgradcheck, test_against_pytorch


def check_against_pytorch(spec, shapes, dtype):
    e_in = inputs(ember, spec, shapes, getattr(ember, dtype))
    t_in = inputs(torch, spec, shapes, getattr(torch, dtype))
    e_res, t_res = spec.fn(ember, *e_in), spec.fn(torch, *t_in)
    scale = spec.tol * (1 if dtype == "float64" else 1e5)
    tol = dict(rtol=1e-10 * scale, atol=1e-12 * scale)
    e_outs, t_outs = _outputs(e_res), _outputs(t_res)
    assert len(e_outs) == len(t_outs)
    for e, t in zip(e_outs, t_outs):
        assert e.shape == t.shape and str(e.dtype) == str(t.dtype)
        assert e.requires_grad == t.requires_grad
        if spec.grad_fn_name:
            assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **tol)
    e_f, t_f = _float_outputs(e_res), _float_outputs(t_res)
    if not e_f:
        return
    if spec.grad_fn_name:  # (the same node: the same inputs without a gradient)
        assert repr(e_f[0].grad_fn.next_functions).count("None") == \
            repr(t_f[0].grad_fn.next_functions).count("None")
    rng = np.random.default_rng(1)
    vs = [rng.uniform(-1, 1, size=tuple(o.shape)) for o in e_f]
    ember.autograd.backward(e_f, [ember.tensor(v, dtype=o.dtype) for v, o in zip(vs, e_f)])
    torch.autograd.backward(t_f, [torch.tensor(v, dtype=o.dtype) for v, o in zip(vs, t_f)])
    for e, t in zip(e_in, t_in):
        if t.requires_grad:
            assert (e.grad is None) == (t.grad is None)
            if t.grad is not None:
                np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), **tol)
