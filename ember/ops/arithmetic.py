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
from ._blocks import _blockwise
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
    if _mod_fast(input, other):
        return _floor_divide_float32(xp, input, other)
    return _floor_quotient(xp, input, other, _fmod_raw(xp, input, other))


def _floor_quotient(xp, input, other, mod):
    """Floor division given ``mod = fmod(input, other)``. PyTorch's float algorithm (CuPy's
    differs at infinities; NumPy's ``floor_divide`` is the same one, through C's fmod): the
    quotient of the exact multiple ``input - mod``, moved down when the remainder has the
    other sign, then snapped to the nearest integer. Its where()s are written branch-free with
    the same results (subtracting or adding a bool is x - 1 or x - 0 exactly; the snapped
    floor is zero exactly where ``div`` is, and elsewhere has the quotient's sign, so
    PyTorch's ``copysign(0, quotient)`` there is ``copysign(floor, quotient)`` everywhere): 4x
    faster."""
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


@defop("abs", batch="pointwise", inplace=True, aliases=("absolute",))
def _abs(xp, input):
    return xp.abs(input)


_abs.defvjp(lambda xp, g, ans, input: g * xp.sgn(input))  # 0 at 0: PyTorch's subgradient


def _abs_jvp(xp, t, ans, input):
    """``sgn(x) t``; for complex ``x`` the real ``Re(conj(sgn(x)) t)``: |x| is not
    holomorphic, so its VJP rule read as a JVP (``jvp="elementwise"``) would be wrong."""
    if getattr(input.dtype, "kind", None) == "c" or getattr(input.dtype, "is_complex", False):
        return xp.real(xp.conj(xp.sgn(input)) * t)
    return t * xp.sgn(input)


_abs.defjvp(_abs_jvp)


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
    if _mod_fast(input, other):
        return _fmod_float32(xp, input, other)
    return xp.fmod(input, other)


# fmod, remainder and floor division of float32 arrays, bit for bit, through float64. NumPy's
# float32 fmod calls C's fmodf once per element, a long division as slow as 35 ns an element
# (1M elements in 35 ms; PyTorch 1.4 ms); these take 1.5-3 ms, on L2-sized blocks. Exact
# because: the quotient of two float32 numbers x = X 2**i, y = Y 2**j (X, Y < 2**24
# integers), if not an integer, is at least 1 / Y > 2**-24 from one when i >= j (x - n y and
# y - (x - n y) are multiples of 2**j), and at least |x / y| / X otherwise; computed in
# float64 as x * (1 / y) or x / y it is off by at most |q| 2**-52, so for |q| < 2**27 its
# trunc or floor is the exact n, n y is exact (27 + 24 bits), and so is x - n y for fmod (a
# float32 number). For remainder, x - n y is fmod's result plus y: a sum of two float32
# numbers, rounded to float64 and then to float32, which is the sum rounded once to float32
# (double rounding is harmless from 53 to 24 bits, as 53 >= 2 * 24 + 2: S. A. Figueroa, "When
# is double rounding innocuous?", SIGNUM Newsletter 1995), as PyTorch rounds ``mod + other``.
# Signs: fmod's result is +0 or has x's sign, so x's sign bit is ORed in; remainder's is y's
# sign when non-zero, x's when zero (PyTorch returns fmod's zero). Larger quotients, NaN and
# infinite or zero divisors go to the float32 formulas, element-wise or for the block.
_MOD_EXACT = 2.0 ** 27
_SIGN32 = np.uint32(0x80000000)
_MAGNITUDE32 = np.uint32(0x7FFFFFFF)


def _mod_fast(input, other):
    """Whether fmod, remainder and floor division of ``input`` by ``other`` take the float64
    kernels below: a large float32 NumPy array by one (of a shape broadcasting with it) or by
    a number."""
    if type(input) is not np.ndarray or input.dtype != np.float32:
        return False
    if type(other) is np.ndarray:
        return other.dtype == np.float32 and max(input.size, other.size) >= 4096
    return (isinstance(other, (int, float, np.floating)) and not isinstance(other, bool)
            and input.size >= 4096)


def _quotient64(a, b, floor):
    """``(a64, b64, n, exact)``: the float64 operands, the rounded quotient (trunc or floor)
    and whether it is exact everywhere (see above)."""
    a64 = a.astype(np.float64)
    b64 = b.astype(np.float64)
    if 2 * b64.size <= a64.size:  # a row or a number: a multiply costs a fifth of a divide
        n = a64 * (1 / b64)
    else:
        n = a64 / b64
    (np.floor if floor else np.trunc)(n, out=n)
    exact = -_MOD_EXACT < n.min() and n.max() < _MOD_EXACT and not np.isinf(b64).any()
    return a64, b64, n, exact


def _exact_mod(a, b, floor):
    """``fmod(a, b)`` (``floor`` False) or PyTorch's ``remainder(a, b)`` (True) of float32
    ``a`` and ``b`` (an array or a number, taken as a float32 number as PyTorch does), bit
    for bit (see above)."""
    b = b if type(b) is np.ndarray else np.float32(b)
    a64, b64, n, exact = _quotient64(a, b, floor)
    bad = None if exact else ~(np.abs(n) < _MOD_EXACT) | np.isinf(b64)  # (rare)
    n *= b64
    np.subtract(a64, n, out=n)
    out = n.astype(np.float32)
    bits = out.view(np.uint32)
    if not floor:
        bits |= a.view(np.uint32) & _SIGN32
    elif not out.all():  # zeros take x's sign (x - n y gave +0)
        zero = np.left_shift(out == 0, 31, dtype=np.uint32)
        zero &= a.view(np.uint32)
        bits |= zero
    if bad is not None:
        at = np.nonzero(np.broadcast_to(bad, out.shape))
        x, y = np.broadcast_to(a, out.shape)[at], np.broadcast_to(b, out.shape)[at]
        with np.errstate(all="ignore"):
            r = np.fmod(x, y)
            out[at] = np.where((r != 0) & ((r < 0) != (y < 0)), r + y, r) if floor else r
    return out


@_blockwise
def _fmod_float32(xp, input, other):
    return _exact_mod(input, other, False)


@_blockwise
def _remainder_float32(xp, input, other):
    return _exact_mod(input, other, True)


@_blockwise
def _floor_divide_float32(xp, input, other):
    """``_floor_quotient`` of float32 arrays from the exact float64 quotient: the same float32
    roundings (``input - mod`` is ``n * other`` exactly, rounded once; ``mod`` is moved down
    where ``mod * other < 0``, exact in float64), on one buffer, the quotient's sign by bits."""
    other = other if type(other) is np.ndarray else np.float32(other)
    a64, b64, n, exact = _quotient64(input, other, False)
    if not exact or not other.all():  # (NaN, infinities, zero divisors: the float32 formula)
        return _floor_quotient(np, input, other, _exact_mod(input, other, False))
    n *= b64
    div = n.astype(np.float32)  # input - mod
    np.subtract(a64, n, out=n)
    n *= b64  # mod * other
    div /= other
    div -= n < 0
    out = np.floor(div)
    div -= out
    out += div > 0.5
    bits = out.view(np.uint32)
    bits &= _MAGNITUDE32  # copysign(out, input / other): the sign of the quotient
    sign = np.bitwise_xor(input.view(np.uint32), other.view(np.uint32))
    sign &= _SIGN32
    bits |= sign
    return out


@defop("fmod", n_in=1, jvp="elementwise", batch="pointwise")
def _fmod_scalar(xp, input, other):
    return _fmod_raw(xp, input, other)


_fmod_scalar.defvjp(lambda xp, g, ans, input, other: g)


@defop("fmod", promote=True, overload=1, jvp="elementwise", batch="pointwise")
def _fmod(xp, input, other):
    return _fmod_raw(xp, input, other)


_fmod.defvjp(lambda xp, g, ans, input, other: g,  # (-g trunc(x / y), by -y: a pass fewer)
             lambda xp, g, ans, input, other: g * xp.trunc(input / -other))


def _remainder_raw(xp, input, other):
    """Python's modulo (the sign of ``other``), with PyTorch's -0 where an exact multiple."""
    _check_divisor(xp, input, other)
    if _integral(input) and _integral(other):
        return xp.remainder(input, other)
    if _mod_fast(input, other):
        return _remainder_float32(xp, input, other)
    r = _fmod_raw(xp, input, other)
    return _select(xp, (r != 0) & ((r < 0) != (other < 0)), r + other, r)


@defop("remainder", n_in=1, jvp="elementwise", batch="pointwise")
def _remainder_scalar(xp, input, other):
    return _remainder_raw(xp, input, other)


_remainder_scalar.defvjp(lambda xp, g, ans, input, other: g)


@defop("remainder", promote=True, overload=1, jvp="elementwise", batch="pointwise")
def _remainder(xp, input, other):
    return _remainder_raw(xp, input, other)


def _floor_divide_any(xp, input, other):
    """``floor_divide`` in a rule: the blocked float32 kernel where it applies (NumPy's
    float32 floor_divide runs C's fmodf per element: 20 ms at 1M), else the namespace's."""
    if _mod_fast(input, other):
        return _floor_divide_float32(xp, input, other)
    return xp.floor_divide(input, other)


_remainder.defvjp(lambda xp, g, ans, input, other: g,
                  lambda xp, g, ans, input, other: -g * _floor_divide_any(xp, input, other))

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
