"""Argument and sample validation against PyTorch: every constrained parameter of every table
case made invalid in one element, and values outside the support, must raise PyTorch's
exception type with PyTorch's whole message."""
import math

import numpy as np
import pytest

import ember

from ..oracle import error_of, raised
from .cases import CASES
from .test_table import _ids, make_params, torch_default


def _invalid(constraint, array):
    """``array`` with its first element (or first matrix) moved out of ``constraint``;
    None when the constraint cannot be broken this way."""
    name = type(constraint).__name__
    if name == "_IndependentConstraint":
        return _invalid(constraint.base_constraint, array)
    a = np.array(array, copy=True)
    flat = a.reshape(-1)

    def first(bound):  # a bound may be a tensor (Uniform, Pareto): the one of element 0
        return float(np.broadcast_to(np.asarray(bound), a.shape).reshape(-1)[0])

    if name in ("_GreaterThan", "_GreaterThanEq"):
        flat[0] = first(constraint.lower_bound) - 1.0
    elif name in ("_Interval", "_HalfOpenInterval"):
        flat[0] = first(constraint.upper_bound) + 0.5
    elif name == "_Real":
        flat[0] = math.nan
    elif name == "_Simplex":
        flat[0] = -0.5
    elif name == "_PositiveDefinite":
        a[(0,) * (a.ndim - 2) + (0, 1)] += 1.0
    elif name == "_LowerCholesky":
        a[(0,) * (a.ndim - 2) + (0, 0)] = -1.0
    else:
        return None
    return a


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_invalid_parameters(torch, case):
    arrays = make_params(case, (3,) if "batch" in case.batches else (), np.float64)
    t = case.build(torch, arrays)
    checked = 0
    for name, value in arrays.items():
        constraint = t.arg_constraints.get(name)
        if not isinstance(value, np.ndarray) or constraint is None:
            continue
        bad = _invalid(constraint, value)
        if bad is None:
            continue
        broken = dict(arrays, **{name: bad})
        got = raised(lambda: case.build(ember, broken), quiet=True)
        want = raised(lambda: case.build(torch, broken), quiet=True)
        assert got == want
        checked += 1
    assert checked or case.name in ("Independent", "TransformedDistribution",
                                    "MixtureSameFamily", "Uniform")


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_values_outside_the_support(torch, case):
    arrays = make_params(case, (3,) if "batch" in case.batches else (), np.float64)
    e, t = case.build(ember, arrays), case.build(torch, arrays)
    shape = tuple(t.batch_shape) + tuple(t.event_shape)
    value = case.value(np.random.default_rng(5), shape, np.float64, arrays)
    outside = _invalid(t.support, value) if not t.support.is_discrete else value + 0.5
    if outside is None:
        pytest.skip(f"no generic way out of {t.support!r}")
    got = raised(lambda: e.log_prob(ember.tensor(outside)), quiet=True)
    with torch_default(torch, case, np.float64):
        want = raised(lambda: t.log_prob(torch.tensor(outside)), quiet=True)
    if case.torch_default64 and got is not None:  # PyTorch printed float64 as its default
        got = got._replace(message=got.message.replace(", dtype=torch.float64", ""))
    assert got == want
    # the wrong shape, and something not a tensor
    wrong = np.zeros((5,) + shape[:-1] + (shape[-1] + 1,)) if shape else np.zeros((5, 2))
    if shape:
        assert error_of(lambda: e.log_prob(ember.tensor(wrong)), quiet=True) == \
            error_of(lambda: t.log_prob(torch.tensor(wrong)), quiet=True)
