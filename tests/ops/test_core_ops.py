"""The core ops, from one spec table.

For every spec and shape: forward values, dtype and grad_fn name against PyTorch (when
importable), gradients of a random vector-Jacobian product against PyTorch, first derivatives
against finite differences in float64 (gradcheck) and, for smooth ops, second derivatives
(gradgradcheck). The last test fails when a registered op is exercised by no spec.
"""
import importlib
import pathlib

import numpy as np
import pytest

import ember
from ember.ops import registry

from ..opspec import BINARY_SHAPES, UNARY_SHAPES, Spec, inputs, op_tests

SPECS = [
    Spec("add", lambda L, a, b: a + b, BINARY_SHAPES),
    Spec("add_alpha", lambda L, a, b: L.add(a, b, alpha=2.5), BINARY_SHAPES),
    Spec("add_scalar", lambda L, a: a + 1.5, UNARY_SHAPES),
    Spec("radd_scalar", lambda L, a: 1.5 + a, UNARY_SHAPES),
    Spec("sub", lambda L, a, b: a - b, BINARY_SHAPES),
    Spec("sub_alpha", lambda L, a, b: L.sub(a, b, alpha=0.5), BINARY_SHAPES),
    Spec("rsub_scalar", lambda L, a: 10 - a, UNARY_SHAPES),
    Spec("rsub", lambda L, a, b: L.rsub(a, b, alpha=2), BINARY_SHAPES),
    Spec("mul", lambda L, a, b: a * b, BINARY_SHAPES),
    Spec("mul_scalar", lambda L, a: a * 3, UNARY_SHAPES),
    Spec("div", lambda L, a, b: a / b, BINARY_SHAPES, domain=(0.5, 2.0)),
    Spec("div_scalar", lambda L, a: a / 4, UNARY_SHAPES),
    Spec("div_floor", lambda L, a, b: L.div(a * 3, b, rounding_mode="floor"), BINARY_SHAPES,
         domain=(0.55, 1.95)),
    Spec("div_trunc", lambda L, a: L.div(a * 3, 2, rounding_mode="trunc"), UNARY_SHAPES),
    Spec("rdiv_scalar", lambda L, a: 2 / a, UNARY_SHAPES, domain=(0.5, 2.0)),
    Spec("neg", lambda L, a: -a, UNARY_SHAPES),
    Spec("reciprocal", lambda L, a: a.reciprocal(), UNARY_SHAPES, domain=(0.5, 2.0)),
    Spec("pow_scalar", lambda L, a: a ** 3, UNARY_SHAPES),
    Spec("pow_half", lambda L, a: a ** 0.5, UNARY_SHAPES, domain=(0.5, 2.0)),
    Spec("pow_zero", lambda L, a: a ** 0, UNARY_SHAPES),
    Spec("pow_tensor", lambda L, a, b: a ** b, BINARY_SHAPES, domain=(0.5, 2.0)),
    Spec("rpow_scalar", lambda L, a: 2.0 ** a, UNARY_SHAPES),
    Spec("exp", lambda L, a: a.exp(), UNARY_SHAPES),
    Spec("log", lambda L, a: L.log(a), UNARY_SHAPES, domain=(0.5, 3.0)),
    Spec("sigmoid", lambda L, a: L.sigmoid(a), UNARY_SHAPES),
    Spec("where", lambda L, a, b: L.where(a > 0, a, b), BINARY_SHAPES),
    Spec("abs", lambda L, a: a.abs() * a, UNARY_SHAPES),
    Spec("sign", lambda L, a: a.sign() * a, UNARY_SHAPES),
    Spec("log1p", lambda L, a: L.log1p(a), UNARY_SHAPES, domain=(-0.5, 2.0)),
    Spec("maximum", lambda L, a, b: L.maximum(a, b), BINARY_SHAPES),
    Spec("maximum_ties", lambda L, a: L.maximum(a, a.detach()) * a, UNARY_SHAPES,
         finite_differences=False, gradgrad=False),  # a tie has no derivative to difference
    Spec("sum", lambda L, a: a.sum(), UNARY_SHAPES + [((2, 3, 4),)]),
    Spec("sum_dim", lambda L, a: a.sum(1), [((2, 3),), ((2, 3, 4),)]),
    Spec("sum_dims_keepdim", lambda L, a: L.sum(a, (0, -1), keepdim=True), [((2, 3, 4),)]),
    Spec("mean", lambda L, a: a.mean(), UNARY_SHAPES),
    Spec("mean_dim", lambda L, a: a.mean(dim=-1), [((2, 3),), ((2, 3, 4),)]),
    Spec("mean_dims_keepdim", lambda L, a: a.mean((0, 2), keepdim=True), [((2, 3, 4),)]),
    Spec("dot", lambda L, a, b: a @ b, [((3,), (3,))]),
    Spec("mv", lambda L, a, b: a @ b, [((2, 3), (3,))]),
    Spec("vm", lambda L, a, b: L.matmul(a, b), [((3,), (3, 4))]),
    Spec("mm", lambda L, a, b: a @ b, [((2, 3), (3, 4))]),
    Spec("bmm", lambda L, a, b: a @ b, [((2, 2, 3), (2, 3, 4)), ((2, 2, 3), (3, 4)),
                                         ((3,), (2, 3, 4)), ((2, 1, 2, 3), (3, 3, 2))]),
    Spec("view", lambda L, a: a.view(3, -1), [((2, 3),), ((6,),)]),
    Spec("reshape", lambda L, a: a.reshape(-1), [((2, 3),)]),
    Spec("reshape_copy", lambda L, a: a.t().reshape(6), [((2, 3),)]),
    Spec("t", lambda L, a: a.t(), [((2, 3),)]),
    Spec("transpose", lambda L, a: a.transpose(0, 2), [((2, 3, 4),)]),
    Spec("unsqueeze", lambda L, a: a.unsqueeze(1), UNARY_SHAPES[1:]),
    Spec("cat", lambda L, a, b: L.cat([a, b * 2, a], dim=-1), [((2, 3), (2, 1))]),
    Spec("cat_promote_skip_empty", lambda L, a, b: L.cat([a, L.tensor([]), b.double()]),
         [((3,), (2,))]),
    Spec("stack", lambda L, a, b: L.stack([a, b], dim=-1), [((2, 3), (2, 3)), ((), ())]),
    Spec("unbind", lambda L, a: a.unbind(1), [((2, 3),)]),
    Spec("unbind_partial", lambda L, a: a.unbind()[1] * 2, [((3, 2),)]),
    Spec("iterate", lambda L, a: L.stack([r * k for k, r in enumerate(a)]), [((3, 2),)]),
    Spec("squeeze", lambda L, a: a.squeeze(), [((2, 1, 3),)]),
    Spec("squeeze_dim", lambda L, a: a.squeeze(1), [((2, 1, 3),)]),
    Spec("expand", lambda L, a: a.expand(2, 3), [((3,),), ((2, 1),)]),
    Spec("clone", lambda L, a: a.clone(), UNARY_SHAPES),
    Spec("to_float32", lambda L, a: a.to(L.float32) * 1.0, UNARY_SHAPES, gradgrad=False,
         finite_differences=False),
    Spec("select", lambda L, a: a[1], [((3,),), ((2, 3),)]),
    Spec("select_neg", lambda L, a: a[-1, 0], [((2, 3),)]),
    Spec("slice", lambda L, a: a[0:2], [((3,),), ((3, 2),)]),
    Spec("slice_step", lambda L, a: a[:, ::2], [((2, 5),)]),
    Spec("slice_full", lambda L, a: a[:], [((3,),)]),
    Spec("none_ellipsis", lambda L, a: a[None, ..., 1], [((2, 3),)]),
    Spec("ellipsis", lambda L, a: a[...], [((2, 3),)]),
    Spec("index_list", lambda L, a: a[[0, 2, 2]], [((3,),), ((3, 2),)]),
    Spec("index_tensor", lambda L, a, i: a[i], [((4, 2), (5,))], int_args={1: ((5,), 4)}),
    Spec("index_mask", lambda L, a: a[a > 0], [((2, 3),)]),
    Spec("setitem", lambda L, a, b: _setitem(L, a, b), [((3,), ())]),
    Spec("setitem_index", lambda L, a, b: _setitem_index(L, a, b), [((4,), (2,))]),
    Spec("inplace_view", lambda L, a, b: _inplace_view(L, a, b), [((4,), (2,))]),
    Spec("fill_zero", lambda L, a: _fill_zero(a), [((4,),)]),
    Spec("bce_logits", lambda L, a, b: L.nn.functional.binary_cross_entropy_with_logits(
        a, L.sigmoid(b)), [((3,), (3,)), ((2, 3), (2, 3))], domain=(-3.0, 3.0)),
    Spec("bce_logits_sum_weights", lambda L, a, b: L.nn.functional.binary_cross_entropy_with_logits(
        a, L.sigmoid(b), weight=L.tensor([1.0, 2.0, 0.5], dtype=a.dtype),
        pos_weight=L.tensor([3.0, 1.0, 0.5], dtype=a.dtype), reduction="sum"),
        [((3,), (3,)), ((2, 3), (2, 3))], domain=(-3.0, 3.0)),
    Spec("bce_logits_none", lambda L, a, b: L.nn.functional.binary_cross_entropy_with_logits(
        a, L.sigmoid(b), reduction="none", pos_weight=L.tensor([2.0, 0.5, 1.0], dtype=a.dtype)),
        [((2, 3), (2, 3))], domain=(-3.0, 3.0)),
]


def _setitem(L, a, b):
    y = L.zeros(4, dtype=a.dtype)
    y[0] = b * 2
    y[1:] = a * a
    return y


def _setitem_index(L, a, b):
    y = a * 1
    y[L.tensor([0, 3])] = b ** 2
    return y


def _fill_zero(a):
    y = a * a
    y[:2].fill_(1.5)
    y[3:].zero_()
    return y * a


def _inplace_view(L, a, b):
    y = a * 1
    y[1:3].mul_(b)
    y[:2].add_(b * b)
    return y


test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


# Ops without a derivative: values and dtype against PyTorch, results never require grad.
NO_DERIVATIVE = {
    "eq": lambda L, a, b: a == b,
    "ne": lambda L, a, b: a != b,
    "lt": lambda L, a, b: a < b,
    "le": lambda L, a, b: a <= b,
    "gt": lambda L, a, b: a > b,
    "ge": lambda L, a, b: a >= b,
    "bitwise_and": lambda L, a, b: (a > 0) & (b > 0),
    "bitwise_or": lambda L, a, b: (a > 0) | b.gt(0),
    "bitwise_xor": lambda L, a, b: (a > 0) ^ (b > 0),
    "bitwise_not": lambda L, a, b: ~(a > b),
    "logical_and": lambda L, a, b: L.logical_and(a, b),
    "logical_or": lambda L, a, b: L.logical_or(a, b),
    "logical_xor": lambda L, a, b: L.logical_xor(a, b),
    "logical_not": lambda L, a, b: L.logical_not(a),
    "all": lambda L, a, b: (a > b).all(),
    "any": lambda L, a, b: (a > b).any(dim=0),
    "int_div_rounding": lambda L, a, b: L.div((a * 3).long(), (b * 2).long() + 7,
                                              rounding_mode="trunc"),
}


@pytest.mark.parametrize("name", sorted(NO_DERIVATIVE))
def test_ops_without_derivative(name):
    rng = np.random.default_rng(0)
    a0, b0 = rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, (2, 3))
    a0[0, 0] = b0[0, 0]
    e = NO_DERIVATIVE[name](ember, ember.tensor(a0, requires_grad=True), ember.tensor(b0))
    assert not e.requires_grad and e.grad_fn is None
    torch = pytest.importorskip("torch")
    if torch is not None:
        t = NO_DERIVATIVE[name](torch, torch.tensor(a0, requires_grad=True), torch.tensor(b0))
        assert repr(e) == repr(t)


def test_every_op_without_derivative_has_a_spec():
    names = {op.name for op in registry.OPS if op.rules is None}
    names.add("int_div_rounding")
    covered = set(NO_DERIVATIVE)  # and the NO_DERIVATIVE tables of tests/ops/test_ops_*.py
    for path in sorted(pathlib.Path(__file__).parent.glob("test_ops_*.py")):
        module = importlib.import_module(f"tests.ops.{path.stem}")
        covered |= set(getattr(module, "NO_DERIVATIVE", ()))
    assert names <= covered, sorted(names - covered)


def _node_names(t):
    names, stack, seen = set(), [t.grad_fn], set()
    while stack:
        fn = stack.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        names.add(type(fn).__name__)
        inner = getattr(fn, "_inner", None)
        if inner is not None:
            stack.append(inner)
        stack.extend(child for child, _ in fn.next_functions)
    return names


def all_specs():
    """The SPECS of this module and of every ops/test_ops_*.py and nn/test_nn_*.py module."""
    specs = list(SPECS)
    here = pathlib.Path(__file__).parent
    for path in sorted(here.glob("test_ops_*.py")) + sorted(here.parent.glob("nn/test_nn_*.py")):
        module = f"tests.{path.parent.name}.{path.stem}"
        specs += getattr(importlib.import_module(module), "SPECS", [])
    return specs


@pytest.mark.slow
def test_every_registered_op_has_a_spec():
    exercised = set()
    for spec in all_specs():
        for shapes in spec.shapes:
            xs = inputs(ember, spec, shapes, ember.float64)
            res = spec.fn(ember, *xs)
            outs = [o for o in (res if isinstance(res, tuple) else (res,)) if o.requires_grad]
            for out in outs:
                exercised |= _node_names(out)
            diff = [x for x in xs if x.requires_grad][:1]
            if outs and diff:
                grads = ember.autograd.grad(sum((o * o).sum() for o in outs), diff,
                                            create_graph=True, allow_unused=True)
                exercised |= {n for g in grads if g is not None for n in _node_names(g)}
    missing = {op.node_cls.__name__ for op in registry.OPS if op.rules} - exercised
    assert not missing, f"ops without a spec: {sorted(missing)}"
