"""Binary math with derivatives: ``pow`` (and ``float_power``), ``atan2``, ``hypot``,
``xlogy``, ``logaddexp``/``logaddexp2``, ``copysign``, and ``heaviside`` (no derivative).

Each public function declares where it goes (``ember.<name>``, a Tensor method, its in-place
form): ``@op.public`` under its op, ``@public`` for the choice between several ops
(``_surface.py``).
"""
from __future__ import annotations

import cmath
import math

import numpy as np

from .. import _dtypes, _xp
from .._tensor import Tensor, _dtype_word
from ._blocks import _blockwise
from .operands import (
    _check_tensor,
    _checked,
    _invalid_arguments,
    _of_two_tensors,
    _operands,
    _opmath,
    _python_number,
    _require,
    _underivable,
)
from .registry import defop, public

# --------------------------------------------------------------------------- powers


def _power(xp, input, exponent):
    """``input ** exponent`` for an ``exponent`` array of the result dtype, as PyTorch computes
    it: an integer to a negative integer power (which NumPy refuses) is 1 for a base of 1,
    ±1 for -1 and 0 otherwise; complex numbers as C's ``cpow``, ``exp(exponent * log(input))``
    (so ``0 ** 0`` is NaN)."""
    kind = exponent.dtype.kind
    if kind == "c":
        return xp.exp(exponent * xp.log(xp.asarray(input, dtype=exponent.dtype)))
    if kind != "i" or not bool(xp.any(exponent < 0)):
        return xp.power(input, exponent)
    negative = exponent < 0
    out = xp.power(input, xp.where(negative, 0, exponent))
    sign = xp.where(exponent % 2 == 0, 1, -1)
    inverse = xp.where(input == 1, 1, xp.where(input == -1, sign, 0))
    return xp.where(negative, inverse, out).astype(out.dtype)


def _is_complex(x):
    return x.is_complex() if isinstance(x, Tensor) else x.dtype.kind == "c"


def _nonnegative(xp, exponent):
    """Where an exponent is a real number >= 0: PyTorch's mask for the zero gradient of
    ``0 ** exponent`` with respect to the exponent."""
    if _is_complex(exponent):
        return (xp.imag(exponent) == 0) & (xp.real(exponent) >= 0)
    return exponent >= 0


@defop("pow", n_in=1, jvp="elementwise", batch="pointwise")
def _pow_scalar(xp, input, exponent):
    if input.dtype.kind == "b":  # a bool exponent: PyTorch copies (True) or fills ones (False)
        return input.copy() if exponent else xp.ones_like(input)
    return _scalar_power(xp, input, exponent)


def _scalar_power(xp, x, exponent):
    """``x ** exponent`` as PyTorch's kernel computes it: ``-0.5`` as ``1 / sqrt(x)`` (-inf at
    -0.0, NaN at -inf, where ``pow`` gives inf and 0); for a real floating ``x`` the exponents
    PyTorch writes as products (``2``, ``3``, ``-1``, ``-2``) as those products, bit for bit
    its results, and ``0.5`` as ``sqrt`` (``pow`` would call the C library's ``pow`` per
    element: forty times slower for ``x ** 3``, GELU's cube)."""
    if exponent == -0.5:
        return 1 / xp.sqrt(x)
    if isinstance(x, Tensor):
        return x ** exponent
    if x.dtype.kind == "f" and type(exponent) is not bool:
        product = _PRODUCTS.get(exponent)
        if product is not None:
            return product(xp, x)
    return xp.power(x, exponent)


# Exponents PyTorch's CPU kernel computes by multiplication (ATen's pow_tensor_scalar).
_PRODUCTS = {2: lambda xp, x: x * x, 3: lambda xp, x: x * x * x,
             -1: lambda xp, x: 1 / x, -2: lambda xp, x: 1 / (x * x),
             0.5: lambda xp, x: xp.sqrt(x)}


# PyTorch's pow_backward: zeros for an exponent of 0, else ``exponent * input ** (exponent - 1)``.
_pow_scalar.defvjp(
    lambda xp, g, ans, input, exponent:
        xp.zeros_like(g) if exponent == 0 else g * (2 * input) if exponent == 2 else
        g * exponent * _scalar_power(xp, input, exponent - 1))
_pow_scalar.scalar_operands = (1,)  # the exponent, rounded to bfloat16 (registry._upcast)


@defop("pow", promote=True, overload=1, jvp="elementwise", batch="pointwise")
def _pow_tensor(xp, input, exponent):
    return _power(xp, input, exponent)


# PyTorch's pow_backward_self and pow_backward_exponent: 0 where the exponent is 0, and 0
# where the base is 0 and the exponent >= 0 (NaN and -inf otherwise), first order and beyond.
def _rule_power(xp, input, exponent):
    """``input ** exponent`` in a rule, as the forward computes it (complex: ``cpow``)."""
    return input ** exponent if isinstance(input, Tensor) else _power(xp, input, exponent)


_pow_tensor.defvjp(
    lambda xp, g, ans, input, exponent:
        xp.where(exponent == 0, 0, g * (exponent * _rule_power(xp, input, exponent - 1))),
    lambda xp, g, ans, input, exponent:
        g * xp.where((input == 0) & _nonnegative(xp, exponent), 0, ans * xp.log(input)))


@defop("pow", n_in=1, overload=2, jvp="elementwise", batch="pointwise")
def _pow_scalar_base(xp, exponent, base, dtype):
    """``base ** exponent`` for a number ``base``, computed in ``dtype`` (the two's result)."""
    return _power(xp, base, exponent if exponent.dtype == dtype else exponent.astype(dtype))


def _pow_scalar_base_rule(xp, g, ans, exponent, base, dtype):
    """``ans * log(base)`` (the log of a complex ``base`` for a complex exponent); for a base
    of 0, 0 where the exponent >= 0, as PyTorch's pow_backward_exponent."""
    log = _log(complex(base) if _is_complex(exponent) else base)
    if base == 0:
        return g * xp.where(_nonnegative(xp, exponent), 0, ans * log)
    return g * (ans * log)


_pow_scalar_base.defvjp(_pow_scalar_base_rule)
_pow_scalar_base.scalar_operands = (1,)  # the number base, rounded to bfloat16 (registry)


def _log(x):
    if isinstance(x, complex):
        return complex(float("-inf"), 0.0) if x == 0 else cmath.log(x)
    return math.log(x) if x > 0 else (float("-inf") if x == 0 else float("nan"))

# --------------------------------------------------------------------------- binary math


@defop("atan2", promote="float", jvp="elementwise", batch="pointwise", inplace=True,
       aliases=("arctan2",))
def _atan2(xp, input, other):
    return xp.arctan2(input, other)


def _atan2_scale(xp, input, other):
    """``1 / (input² + other²)``, taken as 0 where that is 0 (PyTorch's choice at the origin)."""
    r = input * input + other * other
    return xp.where(r == 0, 0, 1 / r)


_atan2.defvjp(lambda xp, g, ans, input, other: g * other * _atan2_scale(xp, input, other),
              lambda xp, g, ans, input, other: g * -input * _atan2_scale(xp, input, other))


atan2 = _atan2.public(_of_two_tensors(
    "atan2", _atan2,
    "The angle of the point ``(other, input)``: ``atan(input / other)`` in all quadrants."))


@defop("hypot", promote=True, jvp="elementwise", batch="pointwise", inplace=True)
def _hypot(xp, input, other):
    return xp.hypot(input, other)


_hypot.defvjp(lambda xp, g, ans, input, other: g * input / ans,
              lambda xp, g, ans, input, other: g * other / ans)


@_hypot.public
def hypot(input, other):
    """``sqrt(input² + other²)`` without overflow; floating tensors only."""
    _check_tensor("hypot", input)
    _check_tensor("hypot", other, "other", 2)
    _require("hypot_cpu", "f", input, other)
    return _hypot(input, other)


def _xlogy_raw(xp, x, y):
    """``x * log(y)``, 0 where ``x == 0`` unless ``y`` is NaN."""
    if hasattr(y, "dtype"):
        return xp.where((x == 0) & ~xp.isnan(y), 0, x * xp.log(y))
    return xp.where((x == 0) & (y == y), 0, x * _log(y))  # a number keeps x's dtype


@defop("xlogy", promote="float", jvp="elementwise", batch="pointwise")
def _xlogy(xp, input, other):
    return _opmath(xp, _xlogy_raw, input, other)


def _xlogy_input_rule(xp, g, ans, input, other):
    """``log(other)``; zero where ``input == 0`` and ``other <= 0`` (PyTorch's choice)."""
    return xp.where((input == 0) & (other <= 0), 0, xp.xlogy(g, other))


_xlogy.defvjp(_xlogy_input_rule, lambda xp, g, ans, input, other: g * input / other)


@defop("xlogy", n_in=1, promote="float", overload=1, jvp="elementwise", batch="pointwise")
def _xlogy_scalar_self(xp, other, input):
    return _opmath(xp, _xlogy_raw, input, other)


_xlogy_scalar_self.defvjp(lambda xp, g, ans, other, input: g * input / other)


@defop("xlogy", n_in=1, promote="float", overload=2, jvp="elementwise", batch="pointwise")
def _xlogy_scalar_other(xp, input, other):
    return _opmath(xp, _xlogy_raw, input, other)


_xlogy_scalar_other.defvjp(_xlogy_input_rule)


# --------------------------------------------------------------------------- public API


_NEGATIVE_POWER = "Integers to negative integer powers are not allowed."
_REAL = frozenset((int, float))


@public(inplace=True)
def pow(input, exponent):
    """``input ** exponent`` for tensor/scalar on either side, in the two's result dtype (bool
    refused); integers take negative integer exponent tensors (see ``_power``) but not
    negative Python ints, and a number exponent must fit the result dtype, as in PyTorch."""
    if not isinstance(input, Tensor):
        input, exponent = _operands("pow", "iufc", input, exponent)
        return _pow_scalar_base(exponent, input, _dtypes.result_type(input, exponent).np)
    if isinstance(exponent, Tensor):
        _operands("pow", "iufc", input, exponent)
        return _pow_tensor(input, exponent)
    if type(exponent) in _REAL and _dtypes.is_inexact(input._data.dtype) and \
            -65504 <= exponent <= 65504:  # the common case: fits every floating dtype
        return _pow_scalar(input, exponent)
    exponent = _python_number(exponent)
    dt = _dtypes.result_type(input, exponent)
    if dt.category < 2:  # an integer or bool tensor to an int or bool exponent
        if exponent < 0:
            raise RuntimeError(_NEGATIVE_POWER)
        exponent = _checked(_checked(exponent, _dtypes.int64), dt)
        if dt is not input.dtype:
            input = input.to(dt)
    else:
        exponent = _checked(exponent, dt, floats=True)
        if input.dtype.category < 2:
            input = input.to(dt)
    return _pow_scalar(input, exponent)


@public(inplace=True)
def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):  # (PyTorch's words: no overload takes two numbers)
            raise _invalid_arguments("xlogy", [(0, input), (1, other)], [
                "Tensor input, Tensor other, *, Tensor out = None",
                "Number self, Tensor other, *, Tensor out = None",
                "Tensor input, Number other, *, Tensor out = None"])
        return _xlogy_scalar_self(other, input)
    if not isinstance(other, Tensor):
        return _xlogy_scalar_other(input, other)
    return _xlogy(input, other)


_xp.register_extra("xlogy", _xlogy_raw, xlogy)  # (rules call ``xp.xlogy``: ``_xlogy_input_rule``)


# --------------------------------------------------------------------------- log-add, signs


def _log_add_applies(*arrays):
    """Whether the blocked kernels below take these operands: large NumPy float arrays of one
    dtype (shapes that broadcast)."""
    first = arrays[0]
    return (all(type(a) is np.ndarray and a.dtype == first.dtype for a in arrays)
            and first.dtype.char in "fd" and max(a.size for a in arrays) >= 4096)


@_blockwise
def _log_add_fast(xp, input, other, base2):
    """``np.logaddexp`` (``base2``: ``np.logaddexp2``) of large float arrays, on L2-sized
    blocks: PyTorch's formula ``max + log1p(exp(-|input - other|))`` in vectorised passes
    (NumPy's own ufunc runs a scalar loop, 15x slower at 1M). Where both are the same infinity
    (or a NaN), the formula gives NaN and NumPy's ufunc is asked."""
    out = np.subtract(input, other)
    np.abs(out, out=out)
    np.negative(out, out=out)
    if base2:
        np.exp2(out, out=out)
        np.log1p(out, out=out)
        out *= out.dtype.type(1 / math.log(2))
    else:
        np.exp(out, out=out)
        np.log1p(out, out=out)
    out += np.maximum(input, other)
    nan = np.isnan(out)
    if nan.any():
        at = np.nonzero(nan)
        x, y = np.broadcast_to(input, out.shape)[at], np.broadcast_to(other, out.shape)[at]
        out[at] = (np.logaddexp2 if base2 else np.logaddexp)(x, y)
    return out


@_blockwise
def _log_add_grad(xp, g, input, other, base2):
    """``g / (1 + exp(other - input))`` (``base2``: ``2 ** (other - input)``) on blocks, in
    one buffer."""
    out = np.subtract(other, input)
    (np.exp2 if base2 else np.exp)(out, out=out)
    out += out.dtype.type(1)
    np.divide(g, out, out=out)
    return out


def _log_add_rule(base2, swap):
    """The rule of ``input`` (``swap``: of ``other``): PyTorch's formula, which reads the
    inputs only (the result is not saved: writing it in place leaves the backward valid)."""
    def rule(xp, g, ans, input, other):
        if swap:
            input, other = other, input
        if _log_add_applies(g, input, other):
            return _log_add_grad(xp, g, input, other, base2=base2)
        return g / (1 + (2.0 ** (other - input) if base2 else xp.exp(other - input)))
    return rule


@defop("logaddexp", promote="float", jvp="elementwise", batch="pointwise")
def _logaddexp(xp, input, other):
    if _log_add_applies(input, other):
        return _log_add_fast(xp, input, other, base2=False)
    return xp.logaddexp(input, other)


_logaddexp.defvjp(_log_add_rule(False, False), _log_add_rule(False, True))


logaddexp = _logaddexp.public(_of_two_tensors(
    "logaddexp", _logaddexp, "``log(exp(input) + exp(other))`` without overflow."))


@defop("logaddexp2", promote="float", jvp="elementwise", batch="pointwise")
def _logaddexp2(xp, input, other):
    if _log_add_applies(input, other):
        return _log_add_fast(xp, input, other, base2=True)
    return xp.logaddexp2(input, other)


_logaddexp2.defvjp(_log_add_rule(True, False), _log_add_rule(True, True))


logaddexp2 = _logaddexp2.public(_of_two_tensors(
    "logaddexp2", _logaddexp2, "``log2(2**input + 2**other)`` without overflow."))


def _copysign_input_rule(xp, g, ans, input, other):
    """``g * ans / input`` (the sign flip), 0 where ``input`` is 0 (PyTorch's choice)."""
    return xp.where(input == 0, 0, g * ans / xp.where(input == 0, 1, input))


@defop("copysign", promote="float", jvp="elementwise", batch="pointwise")
def _copysign(xp, input, other):
    return xp.copysign(input, other)


_copysign.defvjp(_copysign_input_rule, lambda xp, g, ans, input, other: xp.zeros_like(g))
_copysign_scalar = defop("copysign", n_in=1, promote="float", overload=1, jvp="elementwise",
                         batch="pointwise")(
    _copysign.forward).defvjp(_copysign_input_rule)


@public(inplace=True)
def copysign(input, other):
    """``|input|`` with the sign of ``other`` (a tensor or a number); always floating."""
    _check_tensor("copysign", input)
    if isinstance(other, Tensor):
        return _copysign(input, other)
    return _copysign_scalar(input, other)


# PyTorch's ``input == 0 ? values : input > 0``: NaN gives 0 (NumPy's heaviside gives NaN).
_heaviside = defop("heaviside", promote=True, batch="pointwise", inplace=True)(
    lambda xp, input, values: xp.where(input == 0, values, input > 0).astype(input.dtype))


@_heaviside.public
def heaviside(input, values):
    """The step function: 0 below 0, 1 above, ``values`` at 0. Like PyTorch, it has no
    derivative: backward through it raises."""
    _check_tensor("heaviside", input)
    _check_tensor("heaviside", values, "values", 2)
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    return _underivable(_heaviside(input, values), "heaviside", input, values)


@public
def float_power(input, exponent):
    """``input ** exponent`` computed in double precision (complex128 for complex operands)."""
    operands = [v for v in (input, exponent) if isinstance(v, Tensor)]
    if not operands:
        raise _invalid_arguments("float_power", [(0, input), (1, exponent)], [
            "Tensor input, Tensor exponent, *, Tensor out = None",
            "Number self, Tensor exponent, *, Tensor out = None",
            "Tensor input, Number exponent, *, Tensor out = None"])
    wide = _dtypes.complex128 if any(v.is_complex() for v in operands) or any(
        isinstance(v, complex) for v in (input, exponent)) else _dtypes.float64
    input, exponent = (v.to(wide) if isinstance(v, Tensor) else v for v in (input, exponent))
    return pow(input, exponent)


@public(function=False, name="float_power_")
def _float_power_(self, exponent):
    """In-place ``float_power``: self must already have the result's (double) dtype."""
    wide = _dtypes.complex128 if self.is_complex() or getattr(exponent, "is_complex", bool)() \
        else _dtypes.float64
    if self.dtype is not wide:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dtype_word(self.dtype.np)}"
                           f" but the operation's result requires dtype {_dtype_word(wide.np)}")
    return self._inplace(float_power, exponent)
