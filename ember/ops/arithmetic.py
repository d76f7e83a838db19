"""Elementwise arithmetic with derivatives: ``add``, ``sub``/``rsub``, ``mul``, ``div``,
``floor_divide``, ``fmod``, ``remainder``, ``neg``/``positive``, ``reciprocal``, ``abs``,
``sign``/``sgn``, and the Scalar overloads ``mul_scalar``/``div_scalar``/``add_scalar``.

Each op: a forward on raw arrays, then one rule per input (see ``registry.py``); the public
functions follow ``torch``'s signatures and take their operands through ``operands.py``, and
each declares where it goes (``ember.<name>``, a Tensor method, its in-place form: ``@op.public``
under its op, ``@public`` for the choice between several ops; see ``_surface.py``).
"""
from __future__ import annotations

import functools

import numpy as np

from .. import _dtypes, _xp
from .._tensor import Tensor
from ._select import _select
from .operands import (
    _ANY,
    _NP_BOOL,
    _check_divisor,
    _check_result_fits,
    _check_tensor,
    _integral,
    _invalid_arguments,
    _operands,
    _promoted,
    _result_checked,
    _subtraction,
    _underivable,
    _unsupported,
    _with_alpha,
)
from .registry import array_api, defop, public

# --------------------------------------------------------------------------- arithmetic


@defop("add", n_in=2, promote=True, jvp="linear", batch="pointwise", inplace=True)
def _add(xp, input, other, alpha):
    return xp.add(input, other) if alpha == 1 else xp.add(input, other * alpha)


_add.defvjp(lambda xp, g, ans, input, other, alpha: g,
            lambda xp, g, ans, input, other, alpha: g if alpha == 1 else g * alpha)


@_add.public
def add(input, other, *, alpha=1):
    """``input + alpha * other``, broadcasting, with PyTorch's type promotion."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        input, other = _operands(None, _ANY, input, other)
    if alpha != 1 or type(alpha) is not int:
        other, alpha = _with_alpha(input, other, alpha)
    return _add(input, other, alpha) if isinstance(input, Tensor) else _radd(other, input, alpha)


def _radd(tensor, scalar, alpha):
    return _add(scalar, tensor, alpha)


@defop("sub", n_in=2, promote=True, jvp="linear", batch="pointwise")
def _sub(xp, input, other, alpha):
    return xp.subtract(input, other) if alpha == 1 else xp.subtract(input, other * alpha)


_sub.defvjp(lambda xp, g, ans, input, other, alpha: g,
            lambda xp, g, ans, input, other, alpha: -g if alpha == 1 else -g * alpha)


@defop("rsub", n_in=1, promote=True, overload=1, jvp="elementwise", batch="pointwise")
def _rsub(xp, input, other, alpha):
    return xp.subtract(other, input if alpha == 1 else input * alpha)


_rsub.defvjp(lambda xp, g, ans, input, other, alpha: -g if alpha == 1 else -g * alpha)
_rsub.scalar_operands = (1, 2)  # ``other`` and ``alpha``, rounded (see below)


@defop("rsub", n_in=2, promote=True, jvp="linear", batch="pointwise")
def _rsub_tensor(xp, input, other, alpha):
    """``torch.rsub(input, other)`` of two tensors: ``other - alpha * input``."""
    return xp.subtract(other, input if alpha == 1 else input * alpha)


_rsub_tensor.defvjp(lambda xp, g, ans, input, other, alpha: -g if alpha == 1 else -g * alpha,
                    lambda xp, g, ans, input, other, alpha: g)


@defop("mul", promote=True, jvp="elementwise", batch="pointwise", inplace=True,
       aliases=("multiply",))
def _mul(xp, input, other):
    return xp.multiply(input, other)


_mul.defvjp(lambda xp, g, ans, input, other: g * other,
            lambda xp, g, ans, input, other: g * input)


@_mul.public
def mul(input, other):
    """Elementwise product."""
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        input, other = _operands(None, _ANY, input, other)
    return _mul(input, other)


@defop("div", promote="float", jvp="elementwise", batch="pointwise")
def _div(xp, input, other):
    return xp.true_divide(input, other)


_div.defvjp(lambda xp, g, ans, input, other: g / other,
            lambda xp, g, ans, input, other: -g * input / (other * other))
# Beside a bfloat16 tensor, PyTorch's add kernel (sub and rsub are it) rounds ``alpha`` to
# bfloat16 as well as a number operand (see registry._upcast); mul and div read a number
# unrounded.
_add.scalar_operands = _sub.scalar_operands = _rsub_tensor.scalar_operands = (0, 1, 2)
_mul.scalar_operands = _div.scalar_operands = ()


@defop("div", n_in=2, promote=True, overload=2, jvp="elementwise", batch="pointwise")
def _rounding_div(xp, input, other, mode):
    """Division rounded toward zero ('trunc') or down ('floor'); piecewise constant."""
    if mode == "floor":
        return _floor_divide_raw(xp, input, other)
    if _integral(input) and _integral(other):
        _check_divisor(xp, input, other)
        q = xp.floor_divide(input, other)
        return q + ((xp.remainder(input, other) != 0) & ((input < 0) != (other < 0)))
    return xp.trunc(xp.true_divide(input, other))


# Zero almost everywhere (zeros, not no gradient, as PyTorch). PyTorch's node for a rounding
# mode still saves what true division's formulas read (``other``; both for ``other``'s
# gradient), so writing them in place before the backward raises: the rules read the same.
def _zeros_saving(xp, g, *inputs):
    return xp.zeros_like(g)


_rounding_div.defvjp(lambda xp, g, ans, input, other, mode: _zeros_saving(xp, g, other),
                     lambda xp, g, ans, input, other, mode: _zeros_saving(xp, g, input, other))


def _floor_divide_raw(xp, input, other):
    _check_divisor(xp, input, other)
    if _integral(input) and _integral(other):
        return xp.floor_divide(input, other)
    # PyTorch's float algorithm (CuPy's differs at infinities): the quotient of the exact
    # multiple ``input - fmod(input, other)``, moved down when the remainder has the other
    # sign, then snapped to the nearest integer. Its where()s are written branch-free with the
    # same results (subtracting or adding a bool is x - 1 or x - 0 exactly; the snapped floor
    # is zero exactly where ``div`` is, and elsewhere has the quotient's sign, so PyTorch's
    # ``copysign(0, quotient)`` there is ``copysign(floor, quotient)`` everywhere): 4x faster.
    mod = _fmod_raw(xp, input, other)
    div = (input - mod) / other
    div = div - ((mod != 0) & ((other < 0) != (mod < 0)))
    floor = xp.floor(div)
    floor = floor + ((div - floor) > 0.5)
    quotient = input / other
    out = xp.copysign(floor, quotient)
    by_zero = other == 0
    return _select(xp, by_zero, quotient, out) if xp.any(by_zero) else out


@defop("neg", jvp="linear", batch="pointwise", inplace=True, aliases=("negative",))
def _neg(xp, input):
    return xp.negative(input)


_neg.defvjp(lambda xp, g, ans, input: -g)


@_neg.public
def neg(input):
    """``-input``; bool tensors are refused, as in PyTorch."""
    if input._data.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return _neg(input)


@defop("reciprocal", promote="float", jvp="elementwise", batch="pointwise", inplace=True)
def _reciprocal(xp, input):
    return xp.reciprocal(input)


_reciprocal.defvjp(lambda xp, g, ans, input: -g * ans * ans)


@_reciprocal.public
def reciprocal(input):
    return _reciprocal(input)


def _sign_raw(xp, x):
    """PyTorch's sign: ``(x > 0) - (x < 0)``, so 0 for NaN and +0 for -0 (NumPy keeps both)."""
    if x.dtype.kind == "b":
        return x.copy()
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


@defop("abs", jvp="elementwise", batch="pointwise", inplace=True, aliases=("absolute",))
def _abs(xp, input):
    return xp.abs(input)


_abs.defvjp(lambda xp, g, ans, input: g * xp.sgn(input))  # 0 at 0: PyTorch's subgradient


@_abs.public
def abs(input):  # noqa: A001 - PyTorch's name
    """``|input|``; its gradient at 0 is 0."""
    _check_tensor("abs", input)
    if input._data.dtype.kind == "b":
        raise _unsupported("abs_cpu", input.dtype)
    return _abs(input)


@defop("sign", jvp="elementwise", batch="pointwise", inplace=True)
def _sign(xp, input):
    return _sign_raw(xp, input)


_sign.defvjp(lambda xp, g, ans, input: xp.zeros_like(g))


@_sign.public
def sign(input):
    """-1, 0 or 1 by the sign of each element (0 for NaN); zero gradient."""
    _check_tensor("sign", input)
    return _sign(input)


@defop("sgn", jvp="elementwise", holomorphic=False, batch="pointwise",
       inplace=True)  # its rule is in PyTorch's convention
def _sgn(xp, input):
    """``input / |input|`` (0 at 0) for complex inputs, ``sign`` for real ones."""
    if input.dtype.kind != "c":
        return _sign_raw(xp, input)
    size = xp.abs(input)
    return xp.where(size == 0, 0, input / xp.where(size == 0, 1, size)).astype(input.dtype)


def _sgn_grad(xp, g, ans, input):
    """Real inputs: piecewise constant, so 0. Complex: PyTorch's ``sgn_backward``,
    ``(g - s * Re(g * conj(s))) / |z|``, 0 at 0."""
    if not (input.is_complex() if hasattr(input, "is_complex") else input.dtype.kind == "c"):
        return xp.zeros_like(g)
    size = xp.abs(input)
    tangent = g - ans * (g * xp.conj(ans)).real
    return xp.where(size == 0, 0, tangent / xp.where(size == 0, 1, size))


_sgn.defvjp(_sgn_grad)


@_sgn.public
def sgn(input):
    """``sign`` for real tensors (PyTorch's complex-aware variant)."""
    _check_tensor("sgn", input)
    return _sgn(input)


_xp.register_extra("sgn", _sgn.forward, sgn)  # (rules call ``xp.sgn``: ``abs``'s)


def _fmod_raw(xp, input, other):
    _check_divisor(xp, input, other)
    out = _fmod_float32(input, other)
    return xp.fmod(input, other) if out is None else out


_FMOD_EXACT = 2.0 ** 29  # (see _fmod_float32)


def _fmod_float32(input, other):
    """``np.fmod`` of a large float32 array by a number, bit for bit, 2-2.5x faster (NumPy's
    float32 fmod calls C's fmodf once per element); None where it does not apply. (By an
    array the float64 passes cost about what NumPy's loop does: measured, not taken.)

    Through float64: the quotient of two float32 numbers, if not an integer, is at least
    2**-24 from one, and its rounding moves it by at most |q| * 2**-53; so below 2**29 its
    truncation is exact, as are q * other (29 + 24 bits) and input - q * other (the remainder,
    a float32 number). Larger quotients and infinite divisors go to ``np.fmod``.
    """
    if type(input) is not np.ndarray or input.dtype != np.float32 or input.size < 4096:
        return None
    if isinstance(other, (int, float)) and not isinstance(other, bool):
        other = np.float32(other)  # (PyTorch's number operand, in the tensor's dtype)
        b = np.float64(other)
    else:
        return None
    a = input.astype(np.float64)
    q = a / b
    np.trunc(q, out=q)
    slow = not (-_FMOD_EXACT < q.min() and q.max() < _FMOD_EXACT) or bool(np.isinf(b).any())
    if slow:  # (rare: NaN, infinities, huge quotients)
        redo = ~(np.abs(q) < _FMOD_EXACT) | np.isinf(b)
    q *= b
    np.subtract(a, q, out=q)
    out = q.astype(np.float32)
    np.copysign(out, input, out=out)  # a zero remainder has input's sign (x - x is +0)
    if slow:
        at = np.flatnonzero(redo)
        out.reshape(-1)[at] = np.fmod(input.reshape(-1)[at], other)
    return out


@defop("fmod", n_in=1, jvp="elementwise", batch="pointwise")
def _fmod_scalar(xp, input, other):
    return _fmod_raw(xp, input, other)


_fmod_scalar.defvjp(lambda xp, g, ans, input, other: g)


@defop("fmod", promote=True, overload=1, jvp="elementwise", batch="pointwise")
def _fmod(xp, input, other):
    return _fmod_raw(xp, input, other)


_fmod.defvjp(lambda xp, g, ans, input, other: g,
             lambda xp, g, ans, input, other: -g * xp.trunc(input / other))


def _remainder_raw(xp, input, other):
    """Python's modulo (the sign of ``other``), with PyTorch's -0 where an exact multiple."""
    _check_divisor(xp, input, other)
    if _integral(input) and _integral(other):
        return xp.remainder(input, other)
    r = _fmod_raw(xp, input, other)
    return _select(xp, (r != 0) & ((r < 0) != (other < 0)), r + other, r)


@defop("remainder", n_in=1, jvp="elementwise", batch="pointwise")
def _remainder_scalar(xp, input, other):
    return _remainder_raw(xp, input, other)


_remainder_scalar.defvjp(lambda xp, g, ans, input, other: g)


@defop("remainder", promote=True, overload=1, jvp="elementwise", batch="pointwise")
def _remainder(xp, input, other):
    return _remainder_raw(xp, input, other)


_remainder.defvjp(lambda xp, g, ans, input, other: g,
                  lambda xp, g, ans, input, other: -g * xp.floor_divide(input, other))

# Ops that PyTorch records with a NotImplemented node (see ``_underivable``).
_remainder_scalar_self = defop("remainder", promote=True, overload=2, jvp="elementwise",
                               batch="pointwise")(
    _remainder.forward)
_floor_divide = defop("floor_divide", promote=True, batch="pointwise")(
    lambda xp, input, other: _floor_divide_raw(xp, input, other))


@_floor_divide.public
def floor_divide(input, other):
    """``input // other``: division rounded down. Like PyTorch, it has no derivative: a result
    that requires grad refuses backward."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        # Two numbers give a 0-dim tensor of their promoted dtype.
        return _floor_divide(_xp.NUMPY.asarray(input, _dtypes.result_type(input, other).np),
                             other)
    input, other = _operands("div_floor_cpu", "iuf", input, other)
    return _underivable(_floor_divide(input, other), "floor_divide", input, other)


@public(function=False, name="floor_divide_")
def _floor_divide_(self, other):
    """In-place ``floor_divide`` (its refusing node names ``floor_divide_``)."""
    self._check_inplace()
    _check_result_fits(self, other)
    self, other = _operands("div_floor_cpu", "iuf", self, other)
    return self._assign(_underivable(_floor_divide(self, other), "floor_divide_", self, other))


# --------------------------------------------------------------------------- public API


@public(inplace=True, aliases=("subtract",))
def sub(input, other, *, alpha=1):
    """``input - alpha * other``."""
    if isinstance(input, Tensor) and isinstance(other, Tensor) and alpha == 1 and \
            input._data.dtype is not _NP_BOOL and other._data.dtype is not _NP_BOOL and \
            type(alpha) is int:  # the common case, in short
        return _sub(input, other, 1)
    input, other, alpha = _subtraction(input, other, alpha)
    if not isinstance(input, Tensor):
        return _number_minus(input, other, alpha)
    return _sub(input, other, alpha)


def _number_minus(number, tensor, alpha):
    """``number - alpha * tensor`` (``rsub.Scalar``), in the two's result dtype: an integer or
    bool tensor is cast first, as ``rsub`` takes no part in the registry's promotion."""
    if tensor.dtype.category < 2:
        tensor = _promoted(tensor, number)
    return _rsub(tensor, number, alpha)


@public(method=False)
def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    if not isinstance(input, Tensor):
        raise _invalid_arguments("rsub", [(0, input), (1, other)], [
            "Tensor input, Tensor other, *, Number alpha = 1",
            "Tensor input, Number other, Number alpha = 1"])
    other, input, alpha = _subtraction(other, input, alpha)
    if isinstance(other, Tensor):
        return _rsub_tensor(input, other, alpha)
    return _number_minus(other, input, alpha)


# PyTorch's Scalar overloads (``mul.Scalar``, ``div.Scalar``), which C++ composites call with
# a plain number: their nodes are MulBackward1 / DivBackward1 (Python's ``t * 2.0`` records
# MulBackward0). Used by composites written as PyTorch writes them (cross_entropy's label
# smoothing, trapezoid, ...).


@defop("mul", n_in=1, overload=1, jvp="elementwise", batch="pointwise")
def _mul_scalar(xp, input, other):
    return xp.multiply(input, other)


_mul_scalar.defvjp(lambda xp, g, ans, input, other: g * other)


@defop("div", n_in=1, overload=1, jvp="elementwise", batch="pointwise")
def _div_scalar(xp, input, other):
    return xp.divide(input, other)


_div_scalar.defvjp(lambda xp, g, ans, input, other: g / other)


@defop("add", n_in=1, overload=1, jvp="elementwise", batch="pointwise")
def _add_scalar(xp, input, other):
    return xp.add(input, other)


_add_scalar.defvjp(lambda xp, g, ans, input, other: g)


def add_scalar(input, other):
    """``input + other`` for a Python number ``other``, recorded as PyTorch's ``add.Scalar``
    (AddBackward1: ``rms_norm``'s ``+ eps``)."""
    return _add_scalar(_promoted(input, other), other)


def mul_scalar(input, other):
    """``input * other`` for a Python number ``other``, recorded as PyTorch's ``mul.Scalar``."""
    return _mul_scalar(_promoted(input, other), other)


def div_scalar(input, other):
    """``input / other`` for a Python number ``other``, recorded as PyTorch's ``div.Scalar``."""
    dt = _dtypes.result_type(input, other)
    if dt.category < 2:  # true division of integers: the default float dtype
        dt = _dtypes.get_default_dtype()
    return _div_scalar(input if dt is input.dtype else input.to(dt), other)


@public(inplace=functools.partial(_result_checked, true_division=True),
        aliases=("divide", "true_divide"))
def div(input, other, *, rounding_mode=None):
    """True division (integers give the default float dtype); ``rounding_mode`` 'trunc'/'floor'."""
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or "
                               f"'floor' but found '{rounding_mode}'")
        input, other = _operands(f"div_{rounding_mode}_cpu", "iuf", input, other)
        return _rounding_div(input, other, rounding_mode)
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        input, other = _operands(None, _ANY, input, other, wrap=False)
    return _div(input, other)


# The array API's floor_divide for Tensors, as rules use it: a zero-gradient division.
array_api("floor_divide")(lambda x1, x2: div(x1, x2, rounding_mode="floor"))


def _rtruediv(self, other):
    """``other / self`` for a number ``other``: PyTorch's ``self.reciprocal() * other``."""
    return mul(reciprocal(self), other)


@public
def positive(input):
    """``+input``: the tensor itself; PyTorch refuses bool tensors."""
    if input.dtype is _dtypes.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@public(inplace=_result_checked)
def fmod(input, other):
    """C's remainder: ``input - trunc(input / other) * other``, the sign of ``input``."""
    if not isinstance(input, Tensor) or not isinstance(other, (Tensor, int, float, complex,
                                                                 np.generic)):
        raise _invalid_arguments("fmod", [(0, input), (1, other)], [
            "Tensor input, Tensor other, *, Tensor out = None",
            "Tensor input, Number other, *, Tensor out = None"])
    input, other = _operands("fmod_cpu", "iuf", input, other)
    if isinstance(other, Tensor):
        return _fmod(input, other)
    return _fmod_scalar(_promoted(input, other), other)


@public(inplace=_result_checked)
def remainder(input, other):
    """Python's modulo: ``input - floor(input / other) * other``, the sign of ``other``."""
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise _invalid_arguments("remainder", [(0, input), (1, other)], [
                "Tensor input, Tensor other, *, Tensor out = None",
                ("Number self, Tensor other",
                 f"!{type(input).__name__}!, !{type(other).__name__}!"),
                "Tensor input, Number other, *, Tensor out = None"])
        input, other = _operands("remainder_cpu", "iuf", input, other)
        return _underivable(_remainder_scalar_self(input, other), "remainder", other)
    input, other = _operands("remainder_cpu", "iuf", input, other)
    if isinstance(other, Tensor):
        return _remainder(input, other)
    return _remainder_scalar(_promoted(input, other), other)
