"""Elementwise ops and their derivatives.

Each op: a forward on raw arrays, then one rule per input (see ``registry.py`` for the
contract). Public functions follow ``torch``'s signatures and are also Tensor methods.
"""
from __future__ import annotations

from .. import _dtypes, _xp
from .._tensor import Tensor
from .registry import defop

# --------------------------------------------------------------------------- arithmetic


@defop("add", n_in=2, promote=True)
def _add(xp, input, other, alpha):
    return xp.add(input, other) if alpha == 1 else xp.add(input, other * alpha)


_add.defvjp(lambda xp, g, ans, input, other, alpha: g,
            lambda xp, g, ans, input, other, alpha: g if alpha == 1 else g * alpha)


@defop("sub", n_in=2, promote=True)
def _sub(xp, input, other, alpha):
    return xp.subtract(input, other) if alpha == 1 else xp.subtract(input, other * alpha)


_sub.defvjp(lambda xp, g, ans, input, other, alpha: g,
            lambda xp, g, ans, input, other, alpha: -g if alpha == 1 else -g * alpha)


@defop("rsub", n_in=1, promote=True, overload=1)
def _rsub(xp, input, other, alpha):
    return xp.subtract(other, input if alpha == 1 else input * alpha)


_rsub.defvjp(lambda xp, g, ans, input, other, alpha: -g if alpha == 1 else -g * alpha)


@defop("mul", promote=True)
def _mul(xp, input, other):
    return xp.multiply(input, other)


_mul.defvjp(lambda xp, g, ans, input, other: g * other,
            lambda xp, g, ans, input, other: g * input)


@defop("div", promote="float")
def _div(xp, input, other):
    return xp.true_divide(input, other)


_div.defvjp(lambda xp, g, ans, input, other: g / other,
            lambda xp, g, ans, input, other: -g * input / (other * other))


@defop("neg")
def _neg(xp, input):
    return xp.negative(input)


_neg.defvjp(lambda xp, g, ans, input: -g)


@defop("reciprocal", promote="float")
def _reciprocal(xp, input):
    return xp.reciprocal(input)


_reciprocal.defvjp(lambda xp, g, ans, input: -g * ans * ans)


@defop("pow", n_in=1)
def _pow_scalar(xp, input, exponent):
    return xp.power(input, exponent)


_pow_scalar.defvjp(
    lambda xp, g, ans, input, exponent:
        g * 0 if exponent == 0 else g * exponent * input ** (exponent - 1))


@defop("pow", promote=True, overload=1)
def _pow_tensor(xp, input, exponent):
    return xp.power(input, exponent)


_pow_tensor.defvjp(
    lambda xp, g, ans, input, exponent: g * exponent * input ** (exponent - 1),
    lambda xp, g, ans, input, exponent:
        xp.where((input == 0) & (exponent >= 0), 0 * g, g * ans * xp.log(input)))


@defop("pow", n_in=1, promote="float", overload=2)
def _pow_scalar_base(xp, exponent, base):
    return xp.power(base, exponent)


_pow_scalar_base.defvjp(lambda xp, g, ans, exponent, base: g * ans * _log(base))


def _log(x):
    import math
    return math.log(x) if x > 0 else (float("-inf") if x == 0 else float("nan"))


# --------------------------------------------------------------------------- unary math


@defop("exp", promote="float")
def _exp(xp, input):
    return xp.exp(input)


_exp.defvjp(lambda xp, g, ans, input: g * ans)


@defop("log", promote="float")
def _log_op(xp, input):
    return xp.log(input)


_log_op.defvjp(lambda xp, g, ans, input: g / input)


@defop("sigmoid", promote="float")
def _sigmoid(xp, input):
    return xp.sigmoid(input)


_sigmoid.defvjp(lambda xp, g, ans, input: g * ans * (1 - ans))
_xp.register_extra("sigmoid", lambda xp, x: 1 / (1 + xp.exp(-x)), _sigmoid)


@defop("where", n_in=2)
def _where(xp, input, other, condition):
    return xp.where(condition, input, other)


_where.defvjp(lambda xp, g, ans, input, other, condition: xp.where(condition, g, 0 * g),
              lambda xp, g, ans, input, other, condition: xp.where(condition, 0 * g, g))


@defop("abs")
def _abs(xp, input):
    return xp.abs(input)


_abs.defvjp(lambda xp, g, ans, input: g * xp.sign(input))


@defop("sign")
def _sign(xp, input):
    return xp.sign(input)


_sign.defvjp(lambda xp, g, ans, input: 0 * g)


@defop("log1p", promote="float")
def _log1p(xp, input):
    return xp.log1p(input)


_log1p.defvjp(lambda xp, g, ans, input: g / (1 + input))


@defop("maximum", promote=True)
def _maximum(xp, input, other):
    return xp.maximum(input, other)


# Ties split the gradient equally, as PyTorch does.
_maximum.defvjp(
    lambda xp, g, ans, input, other: g * ((input > other) + (input == other) * 0.5),
    lambda xp, g, ans, input, other: g * ((other > input) + (input == other) * 0.5))


# --------------------------------------------------------------------------- public API


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``, broadcasting, with PyTorch's type promotion."""
    return _add(input, other, alpha) if isinstance(input, Tensor) else _radd(other, input, alpha)


def _radd(tensor, scalar, alpha):
    return _add(scalar, tensor, alpha)


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    if not isinstance(input, Tensor):
        return _rsub(other, input, alpha)
    return _sub(input, other, alpha)


subtract = sub


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    if isinstance(other, Tensor):
        return _sub(other, input, alpha)
    return _rsub(input, other, alpha)


def mul(input, other, *, out=None):
    """Elementwise product."""
    return _mul(input, other)


multiply = mul


def div(input, other, *, rounding_mode=None, out=None):
    """True division (integers give the default float dtype); ``rounding_mode`` 'trunc'/'floor'."""
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or "
                               f"'floor' but found '{rounding_mode}'")
        return _rounding_div(input, other, rounding_mode)
    if not isinstance(input, Tensor):
        return _mul(_reciprocal(other), input)
    return _div(input, other)


divide = true_divide = div


def neg(input):
    return _neg(input)


negative = neg


def reciprocal(input):
    return _reciprocal(input)


def pow(input, exponent):
    """``input ** exponent`` for tensor/scalar on either side."""
    if not isinstance(input, Tensor):
        return _pow_scalar_base(exponent, input)
    if isinstance(exponent, Tensor):
        return _pow_tensor(input, exponent)
    if input._data.dtype.kind in "biu" and isinstance(exponent, float):
        input = input.to(_dtypes.get_default_dtype())
    return _pow_scalar(input, exponent)


def exp(input):
    return _exp(input)


def log(input):
    return _log_op(input)


def sigmoid(input):
    return _sigmoid(input)


# --------------------------------------------------------------------------- comparisons


def _no_derivative(name, fn_name, n_in=2):
    """An elementwise NumPy function as an op without derivative (bool or integer results)."""
    if n_in == 2:
        def forward(xp, input, other):
            return getattr(xp, fn_name)(input, other)
    else:
        def forward(xp, input):
            return getattr(xp, fn_name)(input)
    return defop(name, promote=True)(forward)


eq = _no_derivative("eq", "equal")
ne = _no_derivative("ne", "not_equal")
lt = _no_derivative("lt", "less")
le = _no_derivative("le", "less_equal")
gt = _no_derivative("gt", "greater")
ge = _no_derivative("ge", "greater_equal")
bitwise_and = _no_derivative("bitwise_and", "bitwise_and")
bitwise_or = _no_derivative("bitwise_or", "bitwise_or")
bitwise_xor = _no_derivative("bitwise_xor", "bitwise_xor")
bitwise_not = _no_derivative("bitwise_not", "invert", n_in=1)
logical_and = _no_derivative("logical_and", "logical_and")
logical_or = _no_derivative("logical_or", "logical_or")
logical_xor = _no_derivative("logical_xor", "logical_xor")
logical_not = _no_derivative("logical_not", "logical_not", n_in=1)
less, less_equal, greater, greater_equal, not_equal = lt, le, gt, ge, ne


@defop("div", n_in=2, promote=True, overload=2)
def _rounding_div(xp, input, other, mode):
    """Division rounded toward zero ('trunc') or down ('floor'); piecewise constant."""
    if _integral(input) and _integral(other):
        q = xp.floor_divide(input, other)
        if mode == "trunc":
            q = q + ((xp.remainder(input, other) != 0) & ((input < 0) != (other < 0)))
        return q
    q = xp.true_divide(input, other)
    return xp.trunc(q) if mode == "trunc" else xp.floor(q)


# Zero almost everywhere; PyTorch returns zeros rather than no gradient, and so does ember.
_rounding_div.defvjp(lambda xp, g, ans, input, other, mode: 0 * g,
                     lambda xp, g, ans, input, other, mode: 0 * g)


def _integral(v):
    return v.dtype.kind in "iub" if hasattr(v, "dtype") else isinstance(v, int)


def where(condition, input, other):
    """Elements of ``input`` where ``condition`` holds, else of ``other`` (broadcasting)."""
    from .registry import _promote
    pair = [a._data if isinstance(a, Tensor) else a for a in (input, other)]
    _promote(True, (input, other), pair, 2)
    if isinstance(input, Tensor) and pair[0] is not input._data:
        input = input.to(_dtypes.from_numpy_dtype(pair[0].dtype))
    if isinstance(other, Tensor) and pair[1] is not other._data:
        other = other.to(_dtypes.from_numpy_dtype(pair[1].dtype))
    cond = condition._data if isinstance(condition, Tensor) else condition
    return _where(input, other, cond)


def abs(input):  # noqa: A001 - PyTorch's name
    return _abs(input)


absolute = abs


def sign(input):
    return _sign(input)


def log1p(input):
    return _log1p(input)


def maximum(input, other):
    """Elementwise maximum; where both are equal the gradient is split between them."""
    return _maximum(input, other)


# --------------------------------------------------------------------------- the family's surface
__all__ = ["add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide",
           "neg", "negative", "reciprocal", "pow", "exp", "log", "log1p", "sigmoid", "abs",
           "absolute", "sign", "maximum", "where", "eq", "ne", "lt", "le", "gt", "ge", "less",
           "less_equal", "greater", "greater_equal", "not_equal", "bitwise_and", "bitwise_or",
           "bitwise_xor", "bitwise_not", "logical_and", "logical_or", "logical_xor",
           "logical_not"]
METHODS = {name: globals()[name] for name in __all__ if name != "rsub"}
INPLACE = ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "neg",
           "negative", "reciprocal", "pow", "exp", "log", "log1p", "sigmoid", "abs", "sign",
           "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
           "bitwise_or", "bitwise_xor", "bitwise_not", "eq", "ne", "lt", "le", "gt", "ge")
