"""Pointwise ops (``ember/ops/pointwise.py``, ``ember/ops/unary.py``) against PyTorch.

- ``SPECS``: every differentiable op, by finite differences (first and second derivatives)
  and against PyTorch (values, dtype, grad_fn, a random vector-Jacobian product).
- Subgradients at kinks, ties, NaN and infinities pinned to PyTorch's.
- Ops without derivative, the error-function family's accuracy, operators, the method and
  in-place surface, and bad input (PyTorch's exception and message; inputs left unchanged).
- Hypothesis: random broadcastable shapes (0- and 1-sized dims), dtypes and values.
- On a GPU (CuPy): the specs and special cases against the CPU (skipped without one).
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember.ops import _surface, pointwise

from ..opspec import BINARY_SHAPES, UNARY_SHAPES, Spec, cases, inputs, op_tests
from ..oracle import assert_same_tensor, outcome

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch not installed")
needs_cuda = pytest.mark.skipif(not ember.cuda.is_available(), reason="no CuPy GPU backend")
nan, inf = math.nan, math.inf

U = UNARY_SHAPES
B = [((), ()), ((3,), (3,)), ((2, 3), (1, 3)), ((3,), (2, 3))]
T = [((), (), ()), ((3,), (3,), (3,)), ((2, 3), (1, 3), (2, 1)), ((2, 3), (3,), ())]


def _chain(L, a, b):
    y = a * 1
    y.sin_()
    y.clamp_(-0.5, 0.5)
    y.lerp_(b, 0.25)
    y.addcmul_(a, b, value=0.5)
    return y


SPECS = [
    # roots, exponentials, logarithms
    Spec("sqrt", lambda L, a: a.sqrt(), U, domain=(0.5, 2.0)),
    Spec("rsqrt", lambda L, a: L.rsqrt(a), U, domain=(0.5, 2.0)),
    Spec("square", lambda L, a: L.square(a), U),
    Spec("exp2", lambda L, a: L.exp2(a), U),
    Spec("expm1", lambda L, a: a.expm1(), U),
    Spec("log2", lambda L, a: L.log2(a), U, domain=(0.5, 3.0)),
    Spec("log10", lambda L, a: a.log10(), U, domain=(0.5, 3.0)),
    # trigonometric and hyperbolic
    Spec("sin", lambda L, a: L.sin(a), U),
    Spec("cos", lambda L, a: a.cos(), U),
    Spec("tan", lambda L, a: L.tan(a), U, domain=(-1.2, 1.2)),
    Spec("asin", lambda L, a: L.asin(a), U, domain=(-0.9, 0.9)),
    Spec("acos", lambda L, a: a.arccos(), U, domain=(-0.9, 0.9)),
    Spec("atan", lambda L, a: L.arctan(a), U),
    Spec("sinh", lambda L, a: a.sinh(), U),
    Spec("cosh", lambda L, a: L.cosh(a), U),
    Spec("tanh", lambda L, a: L.tanh(a), U),
    Spec("asinh", lambda L, a: L.asinh(a), U),
    Spec("acosh", lambda L, a: a.acosh(), U, domain=(1.2, 3.0)),
    Spec("atanh", lambda L, a: L.atanh(a), U, domain=(-0.9, 0.9)),
    # sigmoid family and error function
    Spec("logit", lambda L, a: L.logit(a), U, domain=(0.1, 0.9)),
    Spec("logit_eps", lambda L, a: a.logit(eps=0.25), [((2, 3),), ((8,),)], domain=(0.05, 0.95)),
    Spec("erf", lambda L, a: L.erf(a), U),
    Spec("erfc", lambda L, a: a.erfc(), U),
    Spec("erfinv", lambda L, a: L.erfinv(a), U, domain=(-0.9, 0.9)),
    # rounding: zero gradients (times ``a`` so that second derivatives exist)
    Spec("floor", lambda L, a: (a * 3).floor() * a, U),
    Spec("ceil", lambda L, a: L.ceil(a * 3) * a, U),
    Spec("round", lambda L, a: L.round(a * 3) * a, U),
    Spec("round_decimals", lambda L, a: a.round(decimals=1) * a, U),
    Spec("trunc", lambda L, a: L.trunc(a * 3) * a, U),
    Spec("fix", lambda L, a: a.fix() + a, U),
    Spec("frac", lambda L, a: L.frac(a * 3), U),
    Spec("sgn", lambda L, a: L.sgn(a) * a, U),
    Spec("nan_to_num", lambda L, a: L.nan_to_num(L.log(a), nan=0.5, neginf=-3.0),
         [((3,),), ((2, 3),)], domain=(-1.0, 2.0)),
    # binary math
    Spec("atan2", lambda L, a, b: L.atan2(a, b), BINARY_SHAPES),
    Spec("hypot", lambda L, a, b: a.hypot(b), B),
    Spec("xlogy", lambda L, a, b: L.xlogy(a, b), B, domain=(0.5, 2.0)),
    Spec("xlogy_zero", lambda L, a, b: L.xlogy(a * (a > 0), b.exp()), B),
    Spec("xlogy_scalar_self", lambda L, a: L.xlogy(2.5, a), U, domain=(0.5, 2.0)),
    Spec("xlogy_scalar_other", lambda L, a: a.xlogy(3.0), U),
    Spec("fmod", lambda L, a, b: L.fmod(a * 3, b), B, domain=(0.55, 1.95)),
    Spec("fmod_negative", lambda L, a, b: (-3 * a).fmod(b), B, domain=(0.55, 1.95)),
    Spec("fmod_scalar", lambda L, a: L.fmod(a * 3, -1.5), U),
    Spec("remainder", lambda L, a, b: L.remainder(a * 3, -b), B, domain=(0.55, 1.95)),
    Spec("remainder_op", lambda L, a, b: (-3 * a) % b, B, domain=(0.55, 1.95)),
    Spec("remainder_scalar", lambda L, a: (a * 3) % 1.5, U),
    # selection
    Spec("minimum", lambda L, a, b: L.minimum(a, b), BINARY_SHAPES),
    Spec("minimum_ties", lambda L, a: L.minimum(a, a.detach()) * a, U,
         finite_differences=False, gradgrad=False),
    Spec("fmax", lambda L, a, b: L.fmax(a, b), B),
    Spec("fmax_ties", lambda L, a: a.fmax(a.detach()) * a, U, finite_differences=False),
    Spec("fmin", lambda L, a, b: a.fmin(b), B),
    Spec("fmin_ties", lambda L, a: L.fmin(a.detach(), a) * a, U, finite_differences=False),
    Spec("clamp", lambda L, a: a.clamp(-0.5, 0.5), U),
    Spec("clamp_min_only", lambda L, a: L.clamp(a, min=-0.5), U),
    Spec("clamp_max_only", lambda L, a: L.clip(a, max=0.5), U),
    Spec("clamp_tensor", lambda L, a, b, c: a.clamp(b, c), T),
    Spec("clamp_tensor_min", lambda L, a, b: L.clamp(a, min=b), B),
    Spec("clamp_tensor_max", lambda L, a, b: a.clip(max=b), B),
    Spec("clamp_min", lambda L, a: L.clamp_min(a, 0.25), U),
    Spec("clamp_min_tensor", lambda L, a, b: a.clamp_min(b), B),
    Spec("clamp_max", lambda L, a: a.clamp_max(0.25), U),
    Spec("clamp_max_tensor", lambda L, a, b: L.clamp_max(a, b), B),
    Spec("where_scalar_other", lambda L, a: L.where(a > 0, a, 0.5), U),
    Spec("where_scalar_input", lambda L, a: L.where(a > 0, -1.5, a), U),
    Spec("where_method", lambda L, a, b: a.where(a > b, b), B),
    Spec("lerp", lambda L, a, b: L.lerp(a, b, 0.3), B),
    Spec("lerp_far", lambda L, a, b: a.lerp(b, 0.8), B),
    Spec("lerp_tensor", lambda L, a, b, c: L.lerp(a, b, c), T, domain=(-1.0, 1.0)),
    Spec("addcmul", lambda L, a, b, c: L.addcmul(a, b, c, value=-1.5), T),
    Spec("addcdiv", lambda L, a, b, c: a.addcdiv(b, c, value=2), T, domain=(0.5, 2.0)),
    # in place, chained
    Spec("inplace_chain", _chain, [((3,), (3,)), ((2, 3), (2, 3))]),
    Spec("inplace_unary", lambda L, a: (a * 1).erf_().sin_().atan_(), U),
    # log-add, signs, angles, sinc, float_power
    Spec("logaddexp", lambda L, a, b: L.logaddexp(a, b), B),
    Spec("logaddexp2", lambda L, a, b: a.logaddexp2(b), B),
    Spec("copysign", lambda L, a, b: L.copysign(a, b), B),
    Spec("copysign_scalar", lambda L, a: a.copysign(-2.0), U),
    Spec("deg2rad", lambda L, a: L.deg2rad(a), U),
    Spec("rad2deg", lambda L, a: a.rad2deg(), U),
    Spec("sinc", lambda L, a: L.sinc(a), U),
    Spec("angle", lambda L, a: L.angle(a) * a, U),
    Spec("float_power", lambda L, a, b: L.float_power(a, b), B, domain=(0.5, 2.0)),
    Spec("float_power_scalar", lambda L, a: a.float_power(3), U),
    Spec("float_power_scalar_base", lambda L, a: L.float_power(2.5, a), U),
    # in-place random fills: zero derivative (degenerate draws, or values times 0)
    Spec("uniform_", lambda L, a: (a * 1).uniform_(0.5, 0.5) * a, U),
    Spec("normal_", lambda L, a: (a * 1).normal_(1.5, 0.0) * a, U),
    Spec("bernoulli_", lambda L, a: (a * 1).bernoulli_(1.0) * a, U),
    Spec("bernoulli_tensor_", lambda L, a: (a * 1).bernoulli_(L.ones_like(a)) * a, U),
    Spec("random_", lambda L, a: (a * 1).random_(3, 4) * a, U),
    Spec("exponential_", lambda L, a: (a * 1).exponential_() * 0 + a, U),
    Spec("geometric_", lambda L, a: (a * 1).geometric_(0.5) * 0 + a, U),
    Spec("log_normal_", lambda L, a: (a * 1).log_normal_() * 0 + a, U),
    Spec("cauchy_", lambda L, a: (a * 1).cauchy_() * 0 + a, U),
]

test_gradcheck, test_gradgradcheck, test_against_pytorch = op_tests(SPECS)


# --------------------------------------------------------------------------- subgradients
# Each case: inputs (float64, requiring grad) and optionally the output gradient; values and
# input gradients must equal PyTorch's, NaNs and signed zeros included.
KINKS = {
    "abs": (lambda L, a: a.abs(), [[-1.0, 0.0, -0.0, 2.0, nan]]),
    "abs_inf_grad": (lambda L, a: a.abs(), [[0.0, 1.0]], [inf, nan]),
    "sign": (lambda L, a: a.sign(), [[-1.0, -0.0, 0.0, 3.0, nan, -nan]]),
    "sqrt": (lambda L, a: a.sqrt(), [[0.0, 1.0, -1.0, inf]]),
    "rsqrt": (lambda L, a: a.rsqrt(), [[0.0, 1.0, -1.0]]),
    "log2": (lambda L, a: a.log2(), [[0.0, -1.0, 2.0]]),
    "asin": (lambda L, a: a.asin(), [[1.0, -1.0, 2.0, 0.5]]),
    "acosh": (lambda L, a: a.acosh(), [[1.0, 0.5, -2.0, 2.0]]),
    "atanh": (lambda L, a: a.atanh(), [[1.0, -1.0, 2.0]]),
    "erfinv": (lambda L, a: a.erfinv(), [[1.0, -1.0, 0.0, -0.0, 0.5, 2.0]]),
    "logit": (lambda L, a: a.logit(), [[-0.5, 0.0, 0.05, 0.5, 1.0, 1.5]]),
    "logit_eps": (lambda L, a: a.logit(0.1), [[-0.5, 0.0, 0.1, 0.5, 0.9, 0.95, 1.0]]),
    "logit_eps_wide": (lambda L, a: a.logit(1.0), [[0.5, 0.0]]),
    "floor_inf_grad": (lambda L, a: a.floor(), [[1.5, -2.0]], [inf, nan]),
    "round_decimals": (lambda L, a: a.round(decimals=2), [[2.675, -0.125, 1.005, 15.5]]),
    "round_negative_decimals": (lambda L, a: a.round(decimals=-1), [[15.0, 25.0, -15.0]]),
    "frac": (lambda L, a: a.frac(), [[-1.5, 1.5, inf, -0.0]]),
    "nan_to_num": (lambda L, a: a.nan_to_num(), [[nan, inf, -inf, 1.0]]),
    "nan_to_num_values": (lambda L, a: a.nan_to_num(1.0, 2.0, -3.0), [[nan, inf, -inf, 1.0]]),
    "clamp": (lambda L, a: a.clamp(0, 1), [[-1.0, 0.0, 0.5, 1.0, 2.0, nan]]),
    "clamp_min": (lambda L, a: a.clamp(min=0), [[-1.0, 0.0, 2.0, nan]]),
    "clamp_max_kw": (lambda L, a: a.clamp(max=1), [[-1.0, 1.0, 2.0, nan]]),
    "clamp_inverted": (lambda L, a: a.clamp(1, 0), [[-1.0, 0.0, 0.5, 1.0, 2.0]]),
    "clamp_nan_bound": (lambda L, a: a.clamp(nan, 1), [[0.5, 2.0]]),
    "clamp_inf_grad": (lambda L, a: a.clamp(0, 1), [[0.5, 2.0]], [inf, inf]),
    "clamp_tensor": (lambda L, a, lo, hi: a.clamp(lo, hi),
                     [[-1.0, 0.0, 0.5, 1.0, 2.0, nan, 0.5, 0.5, 0.5],
                      [0.0, 0.0, 0.0, 0.0, 3.0, 0.0, nan, 0.0, 0.5],
                      [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, nan, 0.5]]),
    "clamp_tensor_min": (lambda L, a, lo: a.clamp(min=lo), [[-1.0, 0.0, 2.0, nan], [0.0] * 4]),
    "clamp_tensor_max": (lambda L, a, hi: a.clamp(max=hi), [[-1.0, 1.0, 2.0, nan], [1.0] * 4]),
    "clamp_min_tensor": (lambda L, a, lo: a.clamp_min(lo), [[-1.0, 0.0, 2.0, nan], [0.0] * 4]),
    "clamp_max_tensor": (lambda L, a, hi: a.clamp_max(hi), [[-1.0, 1.0, 2.0, nan], [1.0] * 4]),
    "clamp_min_scalar": (lambda L, a: a.clamp_min(0), [[-1.0, 0.0, 2.0, nan]]),
    "clamp_max_scalar": (lambda L, a: a.clamp_max(1), [[-1.0, 1.0, 2.0, nan]]),
    "maximum": (lambda L, a, b: L.maximum(a, b), [[1.0, 2.0, 3.0, nan, 1.0],
                                                  [1.0, 3.0, 2.0, 1.0, nan]]),
    "maximum_inf_grad": (lambda L, a, b: L.maximum(a, b), [[1.0, 2.0], [2.0, 3.0]], [inf, nan]),
    "minimum": (lambda L, a, b: L.minimum(a, b), [[1.0, 2.0, 3.0, nan, 1.0],
                                                  [1.0, 3.0, 2.0, 1.0, nan]]),
    "fmax": (lambda L, a, b: L.fmax(a, b), [[1.0, 2.0, 3.0, nan, 1.0, nan],
                                            [1.0, 3.0, 2.0, 1.0, nan, nan]]),
    "fmin": (lambda L, a, b: L.fmin(a, b), [[1.0, 2.0, 3.0, nan, 1.0, nan],
                                            [1.0, 3.0, 2.0, 1.0, nan, nan]]),
    "where_inf_grad": (lambda L, a, b: L.where(a > 0, a, b), [[1.5, -2.0], [2.0, 3.0]],
                       [inf, nan]),
    "hypot": (lambda L, a, b: L.hypot(a, b), [[0.0, 3.0, 0.0, -0.0], [0.0, 4.0, -2.0, 0.0]]),
    "atan2": (lambda L, a, b: L.atan2(a, b), [[0.0, 3.0, 0.0, 1e-200, 1e-160, -0.0],
                                              [0.0, 4.0, -2.0, 0.0, 0.0, -0.0]]),
    "xlogy": (lambda L, a, b: L.xlogy(a, b), [[0.0, 0.0, 0.0, 2.0, 1.0, 0.0],
                                              [0.0, 1.0, nan, 0.0, -1.0, -1.0]]),
    "xlogy_scalar_other": (lambda L, a: L.xlogy(a, 0.0), [[0.0, 1.0, nan]]),
    "xlogy_scalar_self": (lambda L, b: L.xlogy(0.0, b), [[0.0, 1.0, nan]]),
    "xlogy_scalar_self_2": (lambda L, b: L.xlogy(2.0, b), [[0.0, 1.0]]),
    "xlogy_at_zero": (lambda L, a, b: L.xlogy(a, b), [[0.0, 0.0, 0.0, 0.0], [0.5, 0.0, -1.0, inf]],
                      [1.0, 2.0, inf, 0.0]),
    "xlogy_scalar_other_grad": (lambda L, a: L.xlogy(a, 0.5), [[0.0, 1.0]], [inf, 0.0]),
    "fmod": (lambda L, a, b: L.fmod(a, b), [[5.5, -5.5, 5.5, 1.0, -4.0],
                                            [2.0, 2.0, -2.0, 0.0, 2.0]]),
    "remainder": (lambda L, a, b: L.remainder(a, b), [[5.5, -5.5, 5.5, 1.0, -4.0, 4.0],
                                                      [2.0, 2.0, -2.0, 0.0, 2.0, -2.0]]),
    "remainder_inf_grad": (lambda L, a, b: a % b, [[1.5, -2.0], [2.0, 3.0]], [inf, nan]),
    "lerp": (lambda L, a, b, w: a.lerp(b, w), [[1.0, 2.0, 1.0, 1.0, 1.0],
                                               [3.0, 5.0, 3.0, 3.0, 3.0],
                                               [0.25, 0.75, 0.5, -0.5, 1.0]]),
    "addcdiv": (lambda L, a, b, c: a.addcdiv(b, c, value=2), [[1.0, 2.0], [3.0, 5.0],
                                                              [0.5, 0.0]]),
}


def _kink_case(L, name):
    fn, values, *grad = KINKS[name]
    xs = [L.tensor(v, dtype=L.float64, requires_grad=True) for v in values]
    out = fn(L, *xs)
    out.backward(L.tensor(grad[0], dtype=L.float64) if grad else L.ones_like(out))
    return [out] + [x.grad for x in xs]


@needs_torch
@pytest.mark.parametrize("name", sorted(KINKS))
def test_subgradients_match_pytorch(name):
    for e, t in zip(_kink_case(ember, name), _kink_case(torch, name)):
        assert (e is None) == (t is None)
        if t is not None:
            assert_same_tensor(e, t, rtol=1e-15, atol=0, signed_zeros=True)


# --------------------------------------------------------------------------- no derivative
_SPECIAL = [[1.0, -0.0, nan, inf, -inf, 2.5], [1.0, 0.0, 1.0, inf, 2.0, -2.5]]

NO_DERIVATIVE = {
    "isnan": lambda L, a, b: L.isnan(a),
    "isinf": lambda L, a, b: a.isinf(),
    "isposinf": lambda L, a, b: L.isposinf(a),
    "isneginf": lambda L, a, b: a.isneginf(),
    "isfinite": lambda L, a, b: L.isfinite(a),
    "signbit": lambda L, a, b: L.signbit(a),
    "isclose": lambda L, a, b: L.isclose(a, b, equal_nan=True),
    "floor_divide": lambda L, a, b: a // b,
    "remainder": lambda L, a, b: 7 % b,  # a Python number first: PyTorch has no formula
    "floor_divide_reflected": lambda L, a, b: 7.5 // b,
    "floor_divide_inplace": lambda L, a, b: (a * 1).floor_divide_(b),
    "int_isnan": lambda L, a, b: L.isnan(b.long()),
    "int_signbit": lambda L, a, b: (a[-1:] * b[-1:]).long().signbit(),
    "bool_isinf": lambda L, a, b: L.isinf(b > 0),
    "int_floor_divide": lambda L, a, b: L.floor_divide(L.tensor([7, -7, 0, 3]),
                                                       L.tensor([2, 2, -3, -3])),
    "int_remainder": lambda L, a, b: L.tensor([7, -7, 0, 3]) % L.tensor([2, 2, -3, -3]),
    "int_fmod": lambda L, a, b: L.fmod(L.tensor([7, -7, 0, 3]), L.tensor([2, 2, -3, -3])),
    "int_isclose": lambda L, a, b: L.isclose(L.tensor([1, 2, 3, 0]), L.tensor([2, 3, 4, 1]),
                                             rtol=0.5, atol=0),
    "uint8_wrapping_numbers": lambda L, a, b: L.stack([
        _u8(L).clamp(-3, 5), _u8(L).clamp_min(-1), _u8(L).fmod(-3), _u8(L) % 300, _u8(L) // -1,
        L.where(_u8(L) > 1, _u8(L), -3), 300 % (_u8(L) + 1), L.fmod(_u8(L), 1000)]),
    "numbers_floor_divide": lambda L, a, b: L.floor_divide(7, 2),
    "heaviside": lambda L, a, b: L.heaviside(a, b),
    "bitwise_left_shift": lambda L, a, b: L.bitwise_left_shift(_i8(L), _i8(L).flip(0)),
    "bitwise_right_shift": lambda L, a, b: _i8(L) >> L.tensor([1, 8, -1, 2], dtype=L.int8),
}


def _i8(L):
    return L.tensor([1, -1, 64, -128], dtype=L.int8)


def _u8(L):
    return L.tensor([0, 5, 200], dtype=L.uint8)


@needs_torch
@pytest.mark.parametrize("name", sorted(NO_DERIVATIVE))
def test_ops_without_derivative_match_pytorch(name):
    results = []
    for L in (ember, torch):
        a = L.tensor(_SPECIAL[0], dtype=L.float64, requires_grad=True)
        b = L.tensor(_SPECIAL[1], dtype=L.float64)
        out = NO_DERIVATIVE[name](L, a, b)
        error = None
        if out.requires_grad:  # floor_divide and remainder(number, tensor): NotImplemented
            with pytest.raises(RuntimeError) as info:
                out.sum().backward()
            error = str(info.value)
        results.append((repr(out), out.requires_grad, type(out.grad_fn).__name__, error))
    assert results[0] == results[1]


@needs_torch
def test_allclose_and_equal_match_pytorch():
    cases = [([1.0, nan], [1.0, nan], {}), ([1.0, nan], [1.0, nan], {"equal_nan": True}),
             ([1.0, 2.0], [1.0, 2.0 + 1e-6], {}), ([1.0, 2.0], [1.0, 2.1], {"atol": 0.2}),
             ([inf, 1.0], [inf, 1.0], {}), ([1.0], [1.0, 1.0], {})]
    for a, b, kw in cases:
        for dt in ("float32", "float64"):
            got = [(L.allclose(L.tensor(a, dtype=getattr(L, dt)),
                               L.tensor(b, dtype=getattr(L, dt)), **kw),
                    L.tensor(a).equal(L.tensor(b)),
                    L.equal(L.tensor(a), L.tensor(a, dtype=L.float64)))
                   for L in (ember, torch)]
            assert got[0] == got[1] and all(type(v) is bool for v in got[0])
    assert ember.equal(ember.ones(3), ember.ones(3, dtype=ember.long))
    assert not ember.equal(ember.ones(3), ember.ones(1))


# --------------------------------------------------------------------------- error function


def test_erf_and_erfc_are_accurate_to_float64():
    x = np.concatenate([np.linspace(-30, 30, 60001), np.geomspace(1e-300, 30, 5000),
                        -np.geomspace(1e-300, 30, 5000), [0.46875, 4.0, -4.0, 26.6, 27.25]])
    got = ember.tensor(x)
    for fn, ref in ((ember.erf, math.erf), (ember.erfc, math.erfc)):
        want = np.array([ref(v) for v in x])
        rel = np.abs(fn(got).numpy() - want) / np.maximum(np.abs(want), 2.3e-308)
        assert rel.max() < 1.2e-15, (fn.__name__, x[rel.argmax()], rel.max())
    special = ember.tensor([inf, -inf, nan, 0.0, -0.0], dtype=ember.float64)
    assert ember.erf(special).tolist()[:2] == [1.0, -1.0]
    assert ember.erfc(special).tolist()[:2] == [0.0, 2.0]
    assert np.isnan(ember.erf(special)[2].item()) and np.isnan(ember.erfc(special)[2].item())
    assert np.signbit(ember.erf(special).numpy()[4])


@needs_torch
def test_erfinv_is_accurate_to_float64():
    y = np.concatenate([np.linspace(-1, 1, 20001), 1 - np.geomspace(1e-16, 0.5, 2000),
                        -1 + np.geomspace(1e-16, 0.5, 2000), np.geomspace(1e-300, 0.5, 2000),
                        [1.0, -1.0, 1.5, -2.0, nan, 0.0, -0.0]])
    got = ember.erfinv(ember.tensor(y)).numpy()
    want = torch.erfinv(torch.tensor(y)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(np.signbit(got[y == 0]), np.signbit(want[y == 0]))
    finite = np.isfinite(got)
    back = ember.erf(ember.tensor(got[finite])).numpy()
    np.testing.assert_allclose(back, y[finite], rtol=1e-15, atol=0)
    tail = y[finite] > 0.5  # the tail keeps relative precision in 1 - y
    np.testing.assert_allclose(ember.erfc(ember.tensor(got[finite][tail])).numpy(),
                               1 - y[finite][tail], rtol=1e-14)


@needs_torch
@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv"])
def test_error_functions_in_float32_match_pytorch(name):
    x = np.linspace(-0.999 if name == "erfinv" else -6, 0.999 if name == "erfinv" else 6,
                    4001).astype(np.float32)
    got = getattr(ember, name)(ember.tensor(x))
    want = getattr(torch, name)(torch.tensor(x))
    assert got.dtype == ember.float32
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=3e-7, atol=1e-30)


def test_error_functions_serve_derivative_rules_in_both_namespaces():
    from ember import _array_api, _xp
    x = np.array([-0.5, 0.25, 2.0])
    for name in ("erf", "erfc", "erfinv", "sgn", "xlogy", "sigmoid"):
        args = (x, x + 1) if name == "xlogy" else (x,)
        raw = getattr(_xp.NUMPY, name)(*args)
        tensor = getattr(_array_api, name)(*(ember.tensor(a) for a in args))
        np.testing.assert_allclose(tensor.numpy(), raw, rtol=1e-15)


def test_second_derivatives_of_erf_family():
    x = ember.tensor([-1.3, 0.2, 0.7], dtype=ember.float64, requires_grad=True)
    (g,) = ember.autograd.grad(ember.erf(x).sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    xn = x.detach().numpy()
    np.testing.assert_allclose(gg.numpy(), -4 * xn / math.sqrt(math.pi) * np.exp(-xn * xn),
                               rtol=1e-14)


@pytest.mark.parametrize("name", ["tanh", "sigmoid"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_in_place_rules_match_their_recorded_form(name, dtype):
    """The rules that build their result in one buffer on NumPy arrays (a plain backward) give
    the bits of their expression run on Tensors (``create_graph=True``), and write neither the
    output gradient nor the output. (Not float16: a plain backward computes a float16 rule in
    float32 and rounds once, as PyTorch's backward kernels do, where the recorded form rounds
    after each op; test_bfloat16.py checks float16 gradients against PyTorch.)"""
    rng = np.random.default_rng(0)
    x = ember.tensor(rng.standard_normal((3, 4)) * 3, dtype=getattr(ember, dtype),
                     requires_grad=True)
    v = ember.tensor(rng.standard_normal((3, 4)), dtype=x.dtype)
    y = getattr(ember, name)(x)
    before = [t.numpy().copy() for t in (v, y.detach())]
    grads = [ember.autograd.grad(y, x, v, retain_graph=True, create_graph=create)[0]
             for create in (False, True)]
    assert grads[1].grad_fn is not None
    np.testing.assert_array_equal(*(g.detach().numpy().view(np.uint8) for g in grads))
    for kept, t in zip(before, (v, y.detach())):
        np.testing.assert_array_equal(kept, t.numpy())


# --------------------------------------------------------------------------- dtypes


@needs_torch
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32", "int64", "float16",
                                   "float32", "float64"])
def test_result_dtypes_and_kernel_errors_match_pytorch(dtype):
    unary_names = ["abs", "neg", "sign", "sgn", "sqrt", "rsqrt", "square", "exp", "exp2",
                   "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin",
                   "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid",
                   "logit", "erf", "erfc", "erfinv", "reciprocal", "floor", "ceil", "round",
                   "trunc", "frac", "nan_to_num", "isnan", "isinf", "isfinite", "isposinf",
                   "isneginf", "signbit"]
    calls = {name: (lambda L, t, n=name: getattr(L, n)(t)) for name in unary_names}
    for name in ["atan2", "hypot", "xlogy", "fmod", "remainder", "maximum", "minimum", "fmax",
                 "fmin", "floor_divide"]:
        calls[name] = lambda L, t, n=name: getattr(L, n)(t, t + 1 if n in (
            "fmod", "remainder", "floor_divide") and t.dtype != L.bool else t)
    calls.update({
        "round_decimals": lambda L, t: L.round(t, decimals=1),
        "logit_eps": lambda L, t: L.logit(t, 0.1),
        "clamp": lambda L, t: L.clamp(t, 0, 1),
        "clamp_tensor": lambda L, t: L.clamp(t, t, t),
        "clamp_min": lambda L, t: L.clamp_min(t, 0),
        "clamp_max_tensor": lambda L, t: L.clamp_max(t, t),
        "lerp": lambda L, t: L.lerp(t, t, 0.5),
        "lerp_tensor": lambda L, t: L.lerp(t, t, t),
        "addcmul": lambda L, t: L.addcmul(t, t, t, value=2),
        "addcdiv": lambda L, t: L.addcdiv(t, t, t),
        "where": lambda L, t: L.where(t > 0, t, t),
        "where_numbers": lambda L, t: L.where(t > 0, 1.5, 2),
        "isclose": lambda L, t: L.isclose(t, t),
        "fmod_scalar": lambda L, t: L.fmod(t, 2),
        "remainder_scalar": lambda L, t: t % 2.5,
        "xlogy_scalar": lambda L, t: L.xlogy(t, 2),
        "floor_divide_number": lambda L, t: 3 // (t + 1 if t.dtype != L.bool else t),
    })
    for name, call in calls.items():
        got, want = _outcome(lambda L: call(L, L.ones(3, dtype=getattr(L, dtype)) * 2 if dtype
                                            != "bool" else L.ones(3, dtype=L.bool)))
        assert got[0] == want[0], name
        if isinstance(got[1], str):
            assert got == want, name
        else:
            np.testing.assert_allclose(got[1], want[1], rtol=1e-6, err_msg=name)


def _outcome(fn):
    """(dtype, values) or (exception type, message) of ``fn`` on ember and on PyTorch."""
    out = []
    for L in (ember, torch):
        r = outcome(fn, L)
        out.append((str(r.dtype), np.array(r.tolist())) if hasattr(r, "dtype") else r)
    return out


# --------------------------------------------------------------------------- operators, surface


@needs_torch
@pytest.mark.parametrize("expr", [
    lambda x, y, i: x // y, lambda x, y, i: x // 2, lambda x, y, i: 7 // y,
    lambda x, y, i: x % y, lambda x, y, i: x % -1.5, lambda x, y, i: 7 % y,
    lambda x, y, i: i // 3, lambda x, y, i: i % -3, lambda x, y, i: -7 // i,
    lambda x, y, i: 7 % i, lambda x, y, i: i // 2.5, lambda x, y, i: i % y,
    lambda x, y, i: _iop(x * 1, "__ifloordiv__", y), lambda x, y, i: _iop(x * 1, "__imod__", y),
    lambda x, y, i: _iop(i.clone(), "__ifloordiv__", 2), lambda x, y, i: _iop(i.clone(),
                                                                           "__imod__", 4),
    lambda x, y, i: abs(-x), lambda x, y, i: -i,
])
def test_operators_match_pytorch(expr):
    got = []
    for L in (ember, torch):
        x = L.tensor([5.5, -5.5, 4.0, -0.0, 1.0], requires_grad=True)
        y = L.tensor([2.0, 2.0, -2.0, 3.0, 0.0])
        i = L.tensor([7, -7, 6, -1, 5])
        r = expr(x, y, i)
        got.append((repr(r), type(r.grad_fn).__name__))
    assert got[0] == got[1]


def _iop(t, op, other):
    getattr(t, op)(other)
    return t


# The modules of the pointwise family's public functions (declared in ``ops/_surface.py``;
# ``operands._of_two_tensors`` writes maximum, atan2, logical_and...).
POINTWISE_MODULES = {"ember.ops." + m for m in ("arithmetic", "binary_math", "selection",
                                                "comparison", "unary", "pointwise", "operands")}


def _module(fn):
    """Where ``fn`` was written; an op that is its own public function (``logical_not``):
    its forward's module."""
    return getattr(fn, "forward", fn).__module__


@needs_torch
def test_methods_and_in_place_forms_match_pytorch():
    names = set(getattr(pointwise, "__all__", ())) | {
        name for name, fn in _surface.FUNCTIONS.items() if _module(fn) in POINTWISE_MODULES}
    for name in sorted(names):
        assert hasattr(torch, name) and hasattr(ember, name), name
        for attr in (name, name + "_"):
            assert hasattr(torch.Tensor, attr) == hasattr(ember.Tensor, attr), attr


@needs_torch
def test_in_place_ops_record_like_pytorch():
    got = []
    for L in (ember, torch):
        x = L.tensor([0.3, -0.7], requires_grad=True)
        y = x * 2
        y.sin_().clamp_(max=0.5).round_(decimals=1)
        z = x * 2
        z.nan_to_num_().lerp_(x, 0.5).xlogy_(2.0).fmod_(0.4).remainder_(x)
        (y + z).sum().backward()
        got.append((repr(y), repr(z), repr(x.grad)))
    assert got[0] == got[1]


# --------------------------------------------------------------------------- bad input


def _f(L, *values, dtype=None):
    return L.tensor(list(values), dtype=dtype or L.float32)


BAD = {
    "unary_number": lambda L: L.sin(1.0),
    "erf_list": lambda L: L.erf([1.0]),
    "abs_bool": lambda L: L.abs(L.ones(2, dtype=L.bool)),
    "neg_bool": lambda L: -L.ones(2, dtype=L.bool),
    "floor_bool": lambda L: L.ones(2, dtype=L.bool).floor(),
    "round_bool": lambda L: L.round(L.ones(2, dtype=L.bool)),
    "frac_int": lambda L: L.frac(L.ones(2, dtype=L.long)),
    "round_decimals_int": lambda L: L.round(L.ones(2, dtype=L.long), decimals=1),
    "round_decimals_float": lambda L: L.round(_f(L, 1.5), decimals=1.5),
    "hypot_int": lambda L: L.hypot(L.ones(2, dtype=L.long), L.ones(2, dtype=L.long)),
    "hypot_number": lambda L: L.hypot(_f(L, 1.0), 2.0),
    "atan2_number": lambda L: L.atan2(_f(L, 1.0), 2),
    "atan2_number_first": lambda L: L.atan2(2, _f(L, 1.0)),
    "atan2_shapes": lambda L: L.atan2(L.ones(2), L.ones(3)),
    "maximum_number": lambda L: L.maximum(_f(L, 1.0), 0.5),
    "fmin_number_first": lambda L: L.fmin(2, _f(L, 1.0)),
    "minimum_shapes": lambda L: L.minimum(L.ones(2, 3), L.ones(3, 2)),
    "fmod_number_first": lambda L: L.fmod(2, _f(L, 1.0)),
    "fmod_bool": lambda L: L.fmod(L.ones(2, dtype=L.bool), L.ones(2, dtype=L.bool)),
    "fmod_int_zero": lambda L: L.fmod(L.tensor([5, -5]), 0),
    "remainder_int_zero": lambda L: L.tensor([5, -5]) % L.tensor([1, 0]),
    "remainder_bool": lambda L: L.remainder(L.ones(2, dtype=L.bool), True),
    "remainder_numbers": lambda L: L.remainder(2, 3),
    "floor_divide_int_zero": lambda L: L.tensor([5, -5]) // 0,
    "floor_divide_bool": lambda L: L.ones(2, dtype=L.bool) // L.ones(2, dtype=L.bool),
    "div_floor_int_zero": lambda L: L.div(L.tensor([5]), 0, rounding_mode="floor"),
    "div_trunc_int_zero": lambda L: L.div(L.tensor([5]), L.tensor([0]), rounding_mode="trunc"),
    "clamp_no_bounds": lambda L: L.clamp(_f(L, 1.0)),
    "clamp_none_none": lambda L: _f(L, 1.0).clamp(None, None),
    "clamp_mixed_bounds": lambda L: L.clamp(_f(L, 1.0), 0, L.ones(1)),
    "clamp_string": lambda L: L.clamp(_f(L, 1.0), 0, "a"),
    "clamp_bool_scalar": lambda L: L.clamp(L.ones(2, dtype=L.bool), False, True),
    "clamp_bool_tensors": lambda L: L.clamp(*[L.ones(2, dtype=L.bool)] * 3),
    "clamp_shapes": lambda L: L.clamp(L.ones(3), L.ones(3), L.ones(2)),
    "clamp_min_none": lambda L: L.clamp_min(_f(L, 1.0), None),
    "clamp_max_bool": lambda L: L.clamp_max(L.ones(2, dtype=L.bool), True),
    "clamp_inplace_cast": lambda L: L.ones(2, dtype=L.long).clamp_(0.5),
    "clamp_overflow": lambda L: L.tensor([1], dtype=L.uint8).clamp(max=300),
    "clamp_unsigned_overflow": lambda L: L.tensor([1], dtype=L.uint8).clamp(-256),
    "clamp_int32_overflow": lambda L: L.tensor([1], dtype=L.int32).clamp(-2 ** 31 - 1),
    "clamp_int64_overflow": lambda L: L.tensor([1]).clamp(2 ** 63),
    "clamp_float_overflow": lambda L: L.ones(2).clamp(max=1e39),
    "clamp_half_overflow": lambda L: L.ones(2, dtype=L.float16).clamp(1e6),
    "clamp_min_overflow": lambda L: L.tensor([1], dtype=L.int8).clamp_min(200),
    "where_overflow": lambda L: L.where(L.ones(2) > 0, L.ones(2, dtype=L.uint8), 300),
    "addcmul_value_overflow": lambda L: L.addcmul(*[L.ones(2, dtype=L.uint8)] * 3, value=300),
    "clamp_min_inplace_cast": lambda L: L.ones(2, dtype=L.int16).clamp_min_(0.5),
    "clip_inplace_cast": lambda L: L.ones(2, dtype=L.uint8).clip_(max=0.5),
    "sqrt_inplace_cast": lambda L: L.ones(2, dtype=L.long).sqrt_(),
    "erfinv_inplace_cast": lambda L: L.ones(2, dtype=L.int32).erfinv_(),
    "xlogy_inplace_cast": lambda L: L.ones(2, dtype=L.long).xlogy_(2),
    "where_float_condition": lambda L: L.where(L.ones(2), L.ones(2), L.zeros(2)),
    "where_condition_shape": lambda L: L.where(L.ones(3) > 0, L.ones(2), L.ones(4)),
    "where_value_shapes": lambda L: L.where(L.ones(3) > 0, L.ones(3), L.ones(2)),
    "lerp_int": lambda L: L.lerp(L.ones(2, dtype=L.long), L.ones(2, dtype=L.long), 0.5),
    "lerp_int_tensor_weight": lambda L: L.lerp(L.ones(2, dtype=L.long),
                                               L.ones(2, dtype=L.long), L.ones(2, dtype=L.long)),
    "lerp_end_dtype": lambda L: L.lerp(L.ones(2), L.ones(2, dtype=L.float64), 0.5),
    "lerp_end_0d_dtype": lambda L: L.lerp(L.ones(2), L.tensor(1.0, dtype=L.float64), 0.5),
    "lerp_weight_dtype": lambda L: L.lerp(L.ones(2), L.ones(2), L.ones(2, dtype=L.long)),
    "lerp_end_number": lambda L: L.lerp(L.ones(2), 2.0, 0.5),
    "lerp_weight_none": lambda L: L.lerp(L.ones(2), L.ones(2), None),
    "lerp_shapes": lambda L: L.lerp(L.ones(3), L.ones(3), L.ones(2)),
    "lerp_inplace_broadcast": lambda L: L.ones(1).lerp_(L.ones(3), 0.5),
    "addcmul_bool": lambda L: L.addcmul(*[L.ones(2, dtype=L.bool)] * 3),
    "addcmul_number": lambda L: L.addcmul(L.ones(2), 1.0, L.ones(2)),
    "addcmul_shapes": lambda L: L.addcmul(L.ones(3), L.ones(3), L.ones(2)),
    "addcdiv_int": lambda L: L.addcdiv(L.ones(2), L.ones(2, dtype=L.long),
                                       L.ones(2, dtype=L.int32)),
    "isclose_dtypes": lambda L: L.isclose(L.ones(2), L.ones(2, dtype=L.float64)),
    "isclose_int_float": lambda L: L.isclose(L.ones(2), L.ones(2, dtype=L.long)),
    "isclose_rtol": lambda L: L.isclose(L.ones(2), L.ones(2), rtol=-0.5),
    "isclose_atol": lambda L: L.isclose(L.ones(2), L.ones(2), atol=-1e-05),
    "isclose_number": lambda L: L.isclose(L.ones(2), 1.0),
    "isclose_shapes": lambda L: L.isclose(L.ones(4), L.ones(3)),
    "allclose_dtypes": lambda L: L.allclose(L.ones(2), L.ones(2, dtype=L.float64)),
    "equal_number": lambda L: L.equal(L.ones(2), 1.0),
    "isnan_number": lambda L: L.isnan(1.0),
    "nan_to_num_string": lambda L: L.nan_to_num(L.ones(2), nan="a"),
    "floor_divide_backward": lambda L: (L.ones(2, requires_grad=True) // 2).sum().backward(),
    "remainder_number_backward": lambda L: (2 % L.ones(2, requires_grad=True)).sum().backward(),
}


@needs_torch
@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_raises_pytorchs_error(name):
    got, want = _outcome(BAD[name])
    assert isinstance(want[1], str), want  # PyTorch raised
    assert got == want


def test_failed_calls_leave_inputs_unchanged():
    i = ember.tensor([1, 2, 3])
    x = ember.tensor([1.0, 2.0, 3.0])
    failing = [lambda: i.clamp_(0.5), lambda: i.sqrt_(), lambda: i.frac_(), lambda: i.lerp_(i, 0.5),
               lambda: i.fmod_(ember.tensor([1, 0, 1])), lambda: i.remainder_(0),
               lambda: i.floor_divide_(0), lambda: i.xlogy_(2.0), lambda: x.lerp_(x.double(), 0.5),
               lambda: x[:1].lerp_(x, 0.5), lambda: x.addcdiv_(i, i), lambda: x.clamp_(None, None),
               lambda: x.clamp_min_(ember.ones(2)), lambda: x.hypot_(ember.ones(2)),
               lambda: i.hypot_(x)]
    for bad in failing:
        with pytest.raises((RuntimeError, NotImplementedError, TypeError)):
            bad()
        assert i.tolist() == [1, 2, 3] and i._version == 0
        assert x.tolist() == [1.0, 2.0, 3.0] and x._version == 0
    leaf = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError):
        leaf.clamp_(0.5)
    assert leaf.tolist() == [1.0, 1.0] and leaf._version == 0


# --------------------------------------------------------------------------- property tests

_FLOAT_UNARY = {  # name: (call, domain)
    "sqrt": (lambda L, a: a.sqrt(), (0.01, 4.0)),
    "exp": (lambda L, a: L.exp(a), (-5.0, 5.0)),
    "expm1": (lambda L, a: a.expm1(), (-5.0, 5.0)),
    "log1p": (lambda L, a: L.log1p(a), (-0.9, 5.0)),
    "sin": (lambda L, a: a.sin(), (-5.0, 5.0)),
    "tanh": (lambda L, a: L.tanh(a), (-5.0, 5.0)),
    "atan": (lambda L, a: a.atan(), (-5.0, 5.0)),
    "sigmoid": (lambda L, a: L.sigmoid(a), (-8.0, 8.0)),
    "erf": (lambda L, a: L.erf(a), (-4.0, 4.0)),
    "erfc": (lambda L, a: a.erfc(), (-4.0, 4.0)),
    "erfinv": (lambda L, a: L.erfinv(a), (-0.99, 0.99)),
    "logit": (lambda L, a: a.logit(0.05), (0.01, 0.99)),
    "abs": (lambda L, a: a.abs(), (-5.0, 5.0)),
    "floor": (lambda L, a: L.floor(a), (-5.0, 5.0)),
    "round": (lambda L, a: a.round(), (-5.0, 5.0)),
    "round_decimals": (lambda L, a: L.round(a, decimals=2), (-5.0, 5.0)),
    "frac": (lambda L, a: a.frac(), (-5.0, 5.0)),
    "sign": (lambda L, a: L.sign(a), (-5.0, 5.0)),
    "clamp": (lambda L, a: a.clamp(-1.0, 0.5), (-3.0, 3.0)),
}
_FLOAT_BINARY = {
    "atan2": (lambda L, a, b: L.atan2(a, b), (-3.0, 3.0)),
    "hypot": (lambda L, a, b: L.hypot(a, b), (-3.0, 3.0)),
    "xlogy": (lambda L, a, b: L.xlogy(a, b.abs() + 0.1), (-3.0, 3.0)),
    "fmod": (lambda L, a, b: L.fmod(a, b.abs() + 0.5), (-5.0, 5.0)),
    "remainder": (lambda L, a, b: a % (b.abs() + 0.5), (-5.0, 5.0)),
    "floor_divide": (lambda L, a, b: (a // (b.abs() + 0.5)).detach(), (-5.0, 5.0)),
    "maximum": (lambda L, a, b: L.maximum(a, b), (-3.0, 3.0)),
    "minimum": (lambda L, a, b: L.minimum(a, b), (-3.0, 3.0)),
    "fmax": (lambda L, a, b: L.fmax(a, b), (-3.0, 3.0)),
    "fmin": (lambda L, a, b: a.fmin(b), (-3.0, 3.0)),
    "clamp_tensor": (lambda L, a, b: a.clamp(min=b, max=b + 1), (-3.0, 3.0)),
    "where": (lambda L, a, b: L.where(a > b, a * b, b), (-3.0, 3.0)),
    "lerp": (lambda L, a, b: L.lerp(a, b, b), (-1.0, 1.0)),
    "addcdiv": (lambda L, a, b: L.addcdiv(a, a, b.abs() + 0.5, value=-0.5), (-3.0, 3.0)),
}
_INT_UNARY = {
    "abs": lambda L, a: a.abs(), "neg": lambda L, a: -a, "sign": lambda L, a: a.sign(),
    "square": lambda L, a: L.square(a), "sqrt": lambda L, a: L.sqrt(a),
    "exp": lambda L, a: a.exp(), "sin": lambda L, a: L.sin(a), "floor": lambda L, a: a.floor(),
    "round": lambda L, a: L.round(a), "trunc": lambda L, a: a.trunc(),
    "erf": lambda L, a: L.erf(a), "isnan": lambda L, a: L.isnan(a),
    "signbit": lambda L, a: a.signbit(), "nan_to_num": lambda L, a: a.nan_to_num(),
    "clamp": lambda L, a: a.clamp(-3, 5), "clamp_float": lambda L, a: a.clamp(max=2.5),
}
_INT_BINARY = {
    "fmod": lambda L, a, b: L.fmod(a, b), "remainder": lambda L, a, b: a % b,
    "floor_divide": lambda L, a, b: a // b, "maximum": lambda L, a, b: L.maximum(a, b),
    "fmin": lambda L, a, b: L.fmin(a, b), "atan2": lambda L, a, b: L.atan2(a, b),
    "xlogy": lambda L, a, b: L.xlogy(a, b), "addcmul": lambda L, a, b: L.addcmul(a, a, b),
    "where": lambda L, a, b: L.where(a > b, a, b), "isclose": lambda L, a, b: L.isclose(a, b),
}
_INT_DTYPES = ["int64", "int32", "int16", "uint8"]


def _float_array(dtype, shape, domain):
    low, high = (float(np.dtype(dtype).type(v)) for v in domain)  # representable bounds
    return hnp.arrays(np.dtype(dtype), shape, elements=st.floats(
        low, high, width=np.dtype(dtype).itemsize * 8, allow_nan=False, allow_infinity=False))


def _compare(fn, arrays, dtype, grads):
    """Run ``fn`` on both libraries; same dtype and values, and (floats) the same gradients."""
    outs = []
    for L in (ember, torch):
        xs = [L.tensor(a, dtype=getattr(L, dtype), requires_grad=grads) for a in arrays]
        out = fn(L, *xs)
        g = None
        if grads and out.requires_grad:
            out.backward(L.ones_like(out))
            g = [None if x.grad is None else x.grad.numpy() for x in xs]
        outs.append((out, g))
    (e, eg), (t, tg) = outs
    assert str(e.dtype) == str(t.dtype) and tuple(e.shape) == tuple(t.shape)
    tol = dict(rtol=1e-10, atol=1e-12) if e.dtype == ember.float64 else dict(rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **tol)
    assert (eg is None) == (tg is None)
    for a, b in zip(eg or (), tg or ()):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, **tol)


@needs_torch
@settings(max_examples=60, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(_FLOAT_UNARY)),
       dtype=st.sampled_from(["float32", "float64"]),
       shape=hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
def test_unary_ops_on_random_floats_match_pytorch(data, name, dtype, shape):
    fn, domain = _FLOAT_UNARY[name]
    a = data.draw(_float_array(dtype, shape, domain))
    _compare(fn, [a], dtype, grads=True)


@needs_torch
@settings(max_examples=60, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(_FLOAT_BINARY)),
       dtype=st.sampled_from(["float32", "float64"]),
       shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3,
                                                min_side=0, max_side=4))
def test_binary_ops_on_random_floats_match_pytorch(data, name, dtype, shapes):
    fn, domain = _FLOAT_BINARY[name]
    arrays = [data.draw(_float_array(dtype, s, domain)) for s in shapes.input_shapes]
    _compare(fn, arrays, dtype, grads=True)


@needs_torch
@settings(max_examples=40, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(_INT_UNARY) + sorted(_INT_BINARY)),
       dtype=st.sampled_from(_INT_DTYPES),
       shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3,
                                                min_side=0, max_side=4))
def test_ops_on_random_integers_match_pytorch(data, name, dtype, shapes):
    low = 0 if dtype == "uint8" else -20
    ints = st.integers(low, 20)
    a = data.draw(hnp.arrays(np.dtype(dtype), shapes.input_shapes[0], elements=ints))
    if name in _INT_UNARY:
        _compare(_INT_UNARY[name], [a], dtype, grads=False)
        return
    b = data.draw(hnp.arrays(np.dtype(dtype), shapes.input_shapes[1],
                             elements=ints.filter(lambda v: v != 0)))
    _compare(_INT_BINARY[name], [a, b], dtype, grads=False)


@needs_torch
@settings(max_examples=30, deadline=None)
@given(data=st.data(), dtype=st.sampled_from(["float32", "float64"]),
       shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2,
                                                min_side=0, max_side=4))
def test_special_values_match_pytorch(data, dtype, shapes):
    """NaN, infinities and signed zeros through classification, selection and nan_to_num."""
    values = st.sampled_from([nan, inf, -inf, 0.0, -0.0, 1.0, -2.5, 1e-300])
    a, b = (data.draw(hnp.arrays(np.dtype(dtype), s, elements=values))
            for s in shapes.input_shapes)
    for fn in (lambda L, x, y: L.isnan(x), lambda L, x, y: L.isinf(x),
               lambda L, x, y: L.isposinf(x), lambda L, x, y: L.signbit(x),
               lambda L, x, y: L.isfinite(x), lambda L, x, y: L.maximum(x, y),
               lambda L, x, y: L.fmin(x, y), lambda L, x, y: L.nan_to_num(x, posinf=7.0),
               lambda L, x, y: L.isclose(x, y, equal_nan=True), lambda L, x, y: L.sign(x),
               lambda L, x, y: L.clamp(x, min=y), lambda L, x, y: L.xlogy(x, y),
               lambda L, x, y: L.remainder(x, y), lambda L, x, y: L.fmod(x, y),
               lambda L, x, y: x // y, lambda L, x, y: L.erf(x)):
        e = fn(ember, ember.tensor(a), ember.tensor(b))
        t = fn(torch, torch.tensor(a), torch.tensor(b))
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-15 if dtype == "float64" else
                                   3e-7, atol=0)


# --------------------------------------------------------------------------- CuPy backend


@needs_cuda
@pytest.mark.parametrize("spec,shapes", cases(SPECS))
def test_specs_on_cuda_match_cpu(spec, shapes):
    cpu = inputs(ember, spec, shapes, ember.float64)
    gpu = [ember.tensor(x.detach().numpy(), device="cuda", requires_grad=True) for x in cpu]
    results = []
    for xs in (cpu, gpu):
        out = spec.fn(ember, *xs)
        out.backward(ember.ones_like(out))
        results.append([out] + [x.grad for x in xs])
    assert all(t.is_cuda for t in results[1])
    for c, g in zip(*results):
        np.testing.assert_allclose(c.detach().numpy(), g.detach().cpu().numpy(), rtol=1e-12,
                                   atol=1e-14)


@needs_cuda
@pytest.mark.parametrize("name", sorted(NO_DERIVATIVE) + sorted(KINKS))
def test_special_cases_on_cuda_match_cpu(name):
    cuda_tensor = lambda data, **kw: ember.tensor(data, device="cuda", **kw)  # noqa: E731
    on_cuda = type("CudaEmber", (), {"__getattr__": lambda self, n: getattr(ember, n),
                                     "tensor": staticmethod(cuda_tensor)})()
    if name in KINKS:
        cpu, gpu = _kink_case(ember, name), _kink_case(on_cuda, name)
    else:
        run = NO_DERIVATIVE[name]
        cpu, gpu = ([run(L, L.tensor(_SPECIAL[0], dtype=ember.float64),
                         L.tensor(_SPECIAL[1], dtype=ember.float64))] for L in (ember, on_cuda))
    for c, g in zip(cpu, gpu):
        assert g is None or g.is_cuda or name.startswith(("int_", "numbers"))
        np.testing.assert_allclose(c.detach().numpy(), g.detach().cpu().numpy(), rtol=1e-14)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [2, 3, 2.0, 3.0, -1.0, -2.0, -0.5])
def test_pow_by_products_matches_torch_bit_for_bit(torch, dtype, exponent):
    """PyTorch computes these powers as products (``x * x * x``), not with ``pow``: ember's
    results are PyTorch's to the last bit, zeros, infinities and NaN included."""
    x = np.random.default_rng(0).standard_normal(4096).astype(dtype)
    x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30]
    expected = torch.pow(torch.from_numpy(x), exponent).numpy()
    got = ember.pow(ember.from_numpy(x), exponent).numpy()
    np.testing.assert_array_equal(got, expected)
    assert got.dtype == expected.dtype
