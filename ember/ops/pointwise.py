"""Elementwise arithmetic, binary math, selection and comparison ops, with derivatives.

Each op: a forward on raw arrays, then one rule per input (see ``registry.py`` for the
contract). Public functions follow ``torch``'s signatures, refuse what PyTorch refuses with
its exception and message, and are also Tensor methods. Functions of one tensor (``exp``,
``sin``, ``floor``, ``isnan``...) live in ``unary.py``.
"""
from __future__ import annotations

import cmath
import math

import numpy as np

from .. import _dtypes, _xp
from .._broadcast import broadcast_shapes
from .._out import write_out
from .._tensor import Tensor, _dtype_word
from ..autograd import grad_mode
from ..autograd.graph import Node, gradient_edge, new_node
from . import batching
from .registry import defop, saves_also

# --------------------------------------------------------------------------- argument checks


def _check_tensor(fn, value, name="input", position=1):
    """PyTorch's TypeError for a non-tensor where its signature only takes a Tensor."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def _invalid_arguments(fn, got, signatures):
    """PyTorch's TypeError when no overload accepts the arguments ``got`` ((position or
    keyword, value) pairs). A signature may come with the argument types PyTorch flags."""
    def kind(v):
        return "Tensor" if isinstance(v, Tensor) else type(v).__name__
    names = [f"{k}={kind(v)}" if isinstance(k, str) else kind(v) for k, v in got]
    options = ""
    for sig in signatures:
        sig, flagged = sig if isinstance(sig, tuple) else (sig, None)
        options += f" * ({sig})\n"
        if flagged:
            options += ("      didn't match because some of the arguments have invalid types: "
                        f"({flagged})\n")
    return TypeError(f"{fn}() received an invalid combination of arguments - got "
                     f"({', '.join(names)}), but expected one of:\n{options}")


def _is_number(v):
    return isinstance(v, (int, float))


def _unsupported(kernel, dtype):
    """PyTorch's NotImplementedError for a dtype that an op's kernel does not handle."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{_dtype_word(dtype.np)}\'')


def _require(kernel, kinds, *operands):
    """The operands' common dtype; PyTorch's error when its kind is not one of ``kinds``."""
    dt = _dtypes.result_type(*(a for a in operands if a is not None))
    if dt.np.kind not in kinds:
        raise _unsupported(kernel, dt)
    return dt


# The C++ type names PyTorch prints in some dtype checks ("expected dtype float ...").
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def _integral(v):
    return v.dtype.kind in "iub" if hasattr(v, "dtype") else isinstance(v, int)


def _check_divisor(xp, input, other):
    """Integer division by zero is an error in PyTorch (NumPy would give 0)."""
    if _integral(input) and _integral(other) and bool(xp.any(xp.asarray(other) == 0)):
        raise RuntimeError("ZeroDivisionError")


_HALF = np.dtype(np.float16)


def _opmath(xp, fn, *args):
    """``fn(xp, *args)`` with float16 arrays computed in float32 and the result rounded once,
    as PyTorch's half-precision kernels do (for forwards of more than one NumPy operation)."""
    for a in args:  # (a loop, not any(): this runs once per sigmoid, softplus, ...)
        if getattr(a, "dtype", None) == _HALF:
            break
    else:
        return fn(xp, *args)
    wide = [a.astype(xp.float32) if getattr(a, "dtype", None) == xp.float16 else a
            for a in args]
    return fn(xp, *wide).astype(xp.float16)


def _wrapped(value, dtype):
    """A Python int as PyTorch casts it to an integer ``dtype``: modulo 2**bits."""
    if dtype.np.kind not in "iu" or not isinstance(value, int) or isinstance(value, bool):
        return value
    info = np.iinfo(dtype.np)
    if info.min <= value <= info.max:
        return value
    bits = 8 * dtype.itemsize
    value %= 1 << bits
    return value - (1 << bits) if value > info.max else value  # in range: NumPy keeps dtype


# The C type names in PyTorch's overflow errors.
_C_TYPES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
            "int64": "int64_t", "float16": "c10::Half", "float32": "float", "float64": "double"}


def _checked(value, dtype, floats=False):
    """A Python number converted to ``dtype`` where PyTorch checks for overflow (clamp bounds,
    ``where`` values): an error out of range, except that unsigned types take negative
    numbers (which wrap). Floats are checked only when ``floats``; infinities always fit."""
    value = _in_range(value)
    kind = dtype.np.kind
    if kind in "iu" and isinstance(value, int) and not isinstance(value, bool):
        info = np.iinfo(dtype.np)
        fits = (-info.max if kind == "u" else info.min) <= value <= info.max
    elif floats and kind == "f" and isinstance(value, (int, float)):
        limit = float(np.finfo(dtype.np).max)
        fits = not math.isfinite(value) or -limit <= value <= limit
    else:
        return value
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {_C_TYPES[dtype.name]} without "
                           "overflow")
    return _wrapped(value, dtype)


def _promoted(input, *scalars):
    """``input`` cast to its result dtype beside Python numbers (``int_tensor % 2.5`` is float).

    Only integer and bool tensors change here, and those never require grad.
    """
    dt = _dtypes.result_type(input, *(s for s in scalars if s is not None))
    return input if dt is input.dtype else input.to(dt)


# --------------------------------------------------------------------------- binary operands
# How PyTorch takes the two operands of an elementwise kernel, in one place for every
# arithmetic, bitwise and comparison function and operator: its argument parser's limits on
# Python ints, its type promotion, the dtypes each kernel is compiled for, and the cast of a
# Python number to the computation dtype (C++'s: modulo 2**bits for integers).

_PY_NUMBERS = frozenset((bool, int, float, complex))
_INT64_MIN, _INT64_MAX, _UINT64_END = -(1 << 63), (1 << 63) - 1, 1 << 64
_ANY = "biufc"  # the dtype kinds of a kernel compiled for every dtype


def _python_number(value):
    """``value`` as PyTorch's argument parser takes a Scalar: a NumPy integer as a Python int,
    other NumPy numbers as a Python float (PyTorch's reading: bools too, complex numbers
    losing their imaginary part with NumPy's warning); a Python int only within int64 or
    uint64 (PyTorch's OverflowError)."""
    if isinstance(value, np.generic) and value.dtype.kind in _ANY:
        value = int(value) if value.dtype.kind in "iu" else float(value)
    return _in_range(value)


def _in_range(value):
    """``value``, unless a Python int outside int64 and uint64: PyTorch's OverflowError."""
    if type(value) is int and not _INT64_MIN <= value < _UINT64_END:
        raise OverflowError("int too big to convert" if value > 0 else
                            "can't convert negative int to unsigned")
    return value


_INEXACT = frozenset(type(np.dtype(c)) for c in "efdFD")  # (see registry: a cheap test)


def _operands(kernel, kinds, input, other, wrap=True):
    """``(input, other)`` (tensors or Python numbers) as PyTorch hands them to a kernel.

    Their result dtype (PyTorch's promotion) must be of one of the NumPy ``kinds``, else
    PyTorch's NotImplementedError naming ``kernel``. A Python number passes
    ``_python_number``; where the result dtype is an integer one and ``wrap`` (not for true
    division, which computes in floats), a Python int becomes that dtype's value modulo
    2**bits, so NumPy neither refuses it nor widens the result. Other operands (raw arrays)
    are left to the op.
    """
    # The common cases first, cheaply: two tensors of one dtype of ``kinds``, or a floating
    # tensor beside a Python float or int (of the parser's range) where every kind is taken.
    if isinstance(input, Tensor):
        tensor, number = input, other
    elif isinstance(other, Tensor):
        tensor, number = other, input
    else:
        return _converted(kernel, kinds, input, other, wrap)
    t = type(number)
    if t is float or t is int:
        if kinds is _ANY and type(tensor._data.dtype) in _INEXACT and (
                t is float or _INT64_MIN <= number < _UINT64_END):
            return input, other
    elif isinstance(number, Tensor):
        dtype = tensor._data.dtype
        if number._data.dtype is dtype and (kinds is _ANY or dtype.kind in kinds):
            return input, other
    return _converted(kernel, kinds, input, other, wrap)


def _converted(kernel, kinds, input, other, wrap):
    """``_operands`` in general."""
    input, other = _python_number(input), _python_number(other)
    if not all(isinstance(v, Tensor) or type(v) in _PY_NUMBERS for v in (input, other)):
        return input, other
    for number, tensor in ((input, other), (other, input)):
        if type(number) is int and number > _INT64_MAX and isinstance(tensor, Tensor) and \
                tensor._data.dtype.kind == "b":
            # PyTorch reads such a number as a uint64, which it cannot promote with bool.
            raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                               "attempted to promote Bool and UInt64")
    dt = _dtypes.result_type(input, other)
    if dt.np.kind not in kinds:
        raise _unsupported(kernel, dt)
    if wrap and dt.category == 1:  # integers
        input, other = _wrapped(input, dt), _wrapped(other, dt)
    return input, other


# --------------------------------------------------------------------------- no derivative
# A few ops have no derivative formula in PyTorch, yet their floating results require grad;
# the node recorded for them (``grad_fn=<NotImplemented>``) raises when backward reaches it.


class _NotImplemented(Node):
    __slots__ = ("_op_name",)

    def apply(self, grad_outputs, create_graph):
        raise RuntimeError(f"derivative for aten::{self._op_name} is not implemented")

    def release(self):
        pass


_NotImplemented.__name__ = _NotImplemented.__qualname__ = "NotImplemented"


def _underivable(out, name, *args):
    """``out`` (made by an op without rules from ``args``), with PyTorch's refusing node."""
    edges = tuple(gradient_edge(a) for a in args if isinstance(a, Tensor) and a.requires_grad)
    if not edges or not grad_mode._state.grad or out._data.dtype.kind not in "fc":
        return out
    node = new_node(_NotImplemented, edges)
    node._op_name = name
    return Tensor._make(out._data, node, True)


# --------------------------------------------------------------------------- arithmetic


@defop("add", n_in=2, promote=True, jvp="linear")
def _add(xp, input, other, alpha):
    return xp.add(input, other) if alpha == 1 else xp.add(input, other * alpha)


_add.defvjp(lambda xp, g, ans, input, other, alpha: g,
            lambda xp, g, ans, input, other, alpha: g if alpha == 1 else g * alpha)


@defop("sub", n_in=2, promote=True, jvp="linear")
def _sub(xp, input, other, alpha):
    return xp.subtract(input, other) if alpha == 1 else xp.subtract(input, other * alpha)


_sub.defvjp(lambda xp, g, ans, input, other, alpha: g,
            lambda xp, g, ans, input, other, alpha: -g if alpha == 1 else -g * alpha)


@defop("rsub", n_in=1, promote=True, overload=1, jvp="elementwise")
def _rsub(xp, input, other, alpha):
    return xp.subtract(other, input if alpha == 1 else input * alpha)


_rsub.defvjp(lambda xp, g, ans, input, other, alpha: -g if alpha == 1 else -g * alpha)


@defop("rsub", n_in=2, promote=True, jvp="linear")
def _rsub_tensor(xp, input, other, alpha):
    """``torch.rsub(input, other)`` of two tensors: ``other - alpha * input``."""
    return xp.subtract(other, input if alpha == 1 else input * alpha)


_rsub_tensor.defvjp(lambda xp, g, ans, input, other, alpha: -g if alpha == 1 else -g * alpha,
                    lambda xp, g, ans, input, other, alpha: g)


@defop("mul", promote=True, jvp="elementwise")
def _mul(xp, input, other):
    return xp.multiply(input, other)


_mul.defvjp(lambda xp, g, ans, input, other: g * other,
            lambda xp, g, ans, input, other: g * input)


@defop("div", promote="float", jvp="elementwise")
def _div(xp, input, other):
    return xp.true_divide(input, other)


_div.defvjp(lambda xp, g, ans, input, other: g / other,
            lambda xp, g, ans, input, other: -g * input / (other * other))


@defop("div", n_in=2, promote=True, overload=2, jvp="elementwise")
def _rounding_div(xp, input, other, mode):
    """Division rounded toward zero ('trunc') or down ('floor'); piecewise constant."""
    if mode == "floor":
        return _floor_divide_raw(xp, input, other)
    if _integral(input) and _integral(other):
        _check_divisor(xp, input, other)
        q = xp.floor_divide(input, other)
        return q + ((xp.remainder(input, other) != 0) & ((input < 0) != (other < 0)))
    return xp.trunc(xp.true_divide(input, other))


# Zero almost everywhere; PyTorch returns zeros rather than no gradient, and so does ember.
_rounding_div.defvjp(lambda xp, g, ans, input, other, mode: xp.zeros_like(g),
                     lambda xp, g, ans, input, other, mode: xp.zeros_like(g))


def _floor_divide_raw(xp, input, other):
    _check_divisor(xp, input, other)
    if _integral(input) and _integral(other):
        return xp.floor_divide(input, other)
    # PyTorch's float algorithm (CuPy's differs at infinities): the quotient of the exact
    # multiple ``input - fmod(input, other)``, moved down when the remainder has the other
    # sign, then snapped to the nearest integer.
    mod = xp.fmod(input, other)
    div = (input - mod) / other
    div = xp.where((mod != 0) & ((other < 0) != (mod < 0)), div - 1, div)
    floor = xp.floor(div)
    floor = xp.where(div - floor > 0.5, floor + 1, floor)
    quotient = input / other
    out = xp.where(div == 0, xp.copysign(0.0, quotient), floor)
    return xp.where(other == 0, quotient, out)


@defop("neg", jvp="linear")
def _neg(xp, input):
    return xp.negative(input)


_neg.defvjp(lambda xp, g, ans, input: -g)


@defop("reciprocal", promote="float", jvp="elementwise")
def _reciprocal(xp, input):
    return xp.reciprocal(input)


_reciprocal.defvjp(lambda xp, g, ans, input: -g * ans * ans)


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


@defop("pow", n_in=1, jvp="elementwise")
def _pow_scalar(xp, input, exponent):
    if input.dtype.kind == "b":  # a bool exponent: PyTorch copies (True) or fills ones (False)
        return input.copy() if exponent else xp.ones_like(input)
    return xp.power(input, exponent)


# PyTorch's pow_backward: zeros for an exponent of 0, else ``exponent * input ** (exponent - 1)``.
_pow_scalar.defvjp(
    lambda xp, g, ans, input, exponent:
        xp.zeros_like(g) if exponent == 0 else g * (2 * input) if exponent == 2 else
        g * exponent * input ** (exponent - 1))


@defop("pow", promote=True, overload=1, jvp="elementwise")
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


@defop("pow", n_in=1, overload=2, jvp="elementwise")
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


def _log(x):
    if isinstance(x, complex):
        return complex(float("-inf"), 0.0) if x == 0 else cmath.log(x)
    return math.log(x) if x > 0 else (float("-inf") if x == 0 else float("nan"))


def _sign_raw(xp, x):
    """PyTorch's sign: ``(x > 0) - (x < 0)``, so 0 for NaN and +0 for -0 (NumPy keeps both)."""
    if x.dtype.kind == "b":
        return x.copy()
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


@defop("abs", jvp="elementwise")
def _abs(xp, input):
    return xp.abs(input)


_abs.defvjp(lambda xp, g, ans, input: g * xp.sgn(input))  # 0 at 0: PyTorch's subgradient


@defop("sign", jvp="elementwise")
def _sign(xp, input):
    return _sign_raw(xp, input)


_sign.defvjp(lambda xp, g, ans, input: xp.zeros_like(g))


@defop("sgn", jvp="elementwise", holomorphic=False)  # its rule is in PyTorch's convention
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

# --------------------------------------------------------------------------- binary math


@defop("atan2", promote="float", jvp="elementwise")
def _atan2(xp, input, other):
    return xp.arctan2(input, other)


def _atan2_scale(xp, input, other):
    """``1 / (input² + other²)``, taken as 0 where that is 0 (PyTorch's choice at the origin)."""
    r = input * input + other * other
    return xp.where(r == 0, 0, 1 / r)


_atan2.defvjp(lambda xp, g, ans, input, other: g * other * _atan2_scale(xp, input, other),
              lambda xp, g, ans, input, other: g * -input * _atan2_scale(xp, input, other))


@defop("hypot", promote=True, jvp="elementwise")
def _hypot(xp, input, other):
    return xp.hypot(input, other)


_hypot.defvjp(lambda xp, g, ans, input, other: g * input / ans,
              lambda xp, g, ans, input, other: g * other / ans)


def _xlogy_raw(xp, x, y):
    """``x * log(y)``, 0 where ``x == 0`` unless ``y`` is NaN."""
    if hasattr(y, "dtype"):
        return xp.where((x == 0) & ~xp.isnan(y), 0, x * xp.log(y))
    return xp.where((x == 0) & (y == y), 0, x * _log(y))  # a number keeps x's dtype


@defop("xlogy", promote="float", jvp="elementwise")
def _xlogy(xp, input, other):
    return _opmath(xp, _xlogy_raw, input, other)


def _xlogy_input_rule(xp, g, ans, input, other):
    """``log(other)``; zero where ``input == 0`` and ``other <= 0`` (PyTorch's choice)."""
    return xp.where((input == 0) & (other <= 0), 0, xp.xlogy(g, other))


_xlogy.defvjp(_xlogy_input_rule, lambda xp, g, ans, input, other: g * input / other)


@defop("xlogy", n_in=1, promote="float", overload=1, jvp="elementwise")
def _xlogy_scalar_self(xp, other, input):
    return _opmath(xp, _xlogy_raw, input, other)


_xlogy_scalar_self.defvjp(lambda xp, g, ans, other, input: g * input / other)


@defop("xlogy", n_in=1, promote="float", overload=2, jvp="elementwise")
def _xlogy_scalar_other(xp, input, other):
    return _opmath(xp, _xlogy_raw, input, other)


_xlogy_scalar_other.defvjp(_xlogy_input_rule)


def _fmod_raw(xp, input, other):
    _check_divisor(xp, input, other)
    return xp.fmod(input, other)


@defop("fmod", n_in=1, jvp="elementwise")
def _fmod_scalar(xp, input, other):
    return _fmod_raw(xp, input, other)


_fmod_scalar.defvjp(lambda xp, g, ans, input, other: g)


@defop("fmod", promote=True, overload=1, jvp="elementwise")
def _fmod(xp, input, other):
    return _fmod_raw(xp, input, other)


_fmod.defvjp(lambda xp, g, ans, input, other: g,
             lambda xp, g, ans, input, other: -g * xp.trunc(input / other))


def _remainder_raw(xp, input, other):
    """Python's modulo (the sign of ``other``), with PyTorch's -0 where an exact multiple."""
    _check_divisor(xp, input, other)
    if _integral(input) and _integral(other):
        return xp.remainder(input, other)
    r = xp.fmod(input, other)
    return xp.where((r != 0) & ((r < 0) != (other < 0)), r + other, r)


@defop("remainder", n_in=1, jvp="elementwise")
def _remainder_scalar(xp, input, other):
    return _remainder_raw(xp, input, other)


_remainder_scalar.defvjp(lambda xp, g, ans, input, other: g)


@defop("remainder", promote=True, overload=1, jvp="elementwise")
def _remainder(xp, input, other):
    return _remainder_raw(xp, input, other)


_remainder.defvjp(lambda xp, g, ans, input, other: g,
                  lambda xp, g, ans, input, other: -g * xp.floor_divide(input, other))

# Ops that PyTorch records with a NotImplemented node (see ``_underivable``).
_remainder_scalar_self = defop("remainder", promote=True, overload=2, jvp="elementwise")(
    _remainder.forward)
_floor_divide = defop("floor_divide", promote=True)(
    lambda xp, input, other: _floor_divide_raw(xp, input, other))

# --------------------------------------------------------------------------- selection


@defop("maximum", promote=True, jvp="elementwise")
def _maximum(xp, input, other):
    return xp.maximum(input, other)


# Ties split the gradient equally; NaNs (which win) pass it to both sides, as in PyTorch.
_maximum.defvjp(
    lambda xp, g, ans, input, other: xp.where(input < other, 0,
                                              xp.where(input == other, g / 2, g)),
    lambda xp, g, ans, input, other: xp.where(input > other, 0,
                                              xp.where(input == other, g / 2, g)))


@defop("minimum", promote=True, jvp="elementwise")
def _minimum(xp, input, other):
    return xp.minimum(input, other)


_minimum.defvjp(
    lambda xp, g, ans, input, other: xp.where(input > other, 0,
                                              xp.where(input == other, g / 2, g)),
    lambda xp, g, ans, input, other: xp.where(input < other, 0,
                                              xp.where(input == other, g / 2, g)))


@defop("fmax", promote=True, jvp="elementwise")
def _fmax(xp, input, other):
    return xp.fmax(input, other)


# NaNs lose; a tie gives the whole gradient to ``input``.
_fmax.defvjp(
    lambda xp, g, ans, input, other: xp.where((input >= other) | xp.isnan(other), g, 0),
    lambda xp, g, ans, input, other: xp.where((input >= other) | xp.isnan(other), 0, g))


@defop("fmin", promote=True, jvp="elementwise")
def _fmin(xp, input, other):
    return xp.fmin(input, other)


_fmin.defvjp(
    lambda xp, g, ans, input, other: xp.where((input <= other) | xp.isnan(other), g, 0),
    lambda xp, g, ans, input, other: xp.where((input <= other) | xp.isnan(other), 0, g))


@defop("clamp", promote=True, jvp="elementwise")
def _clamp(xp, input, low, high):
    out = input if low is None else xp.maximum(input, low)
    return out if high is None else xp.minimum(out, high)


def _clamp_input_rule(xp, g, ans, input, low, high):
    """The gradient passes where ``low <= input <= high``, bounds included."""
    if low is None:
        keep = input <= high
    elif high is None:
        keep = input >= low
    else:
        keep = (input >= low) & (input <= high)
    return xp.where(keep, g, 0)


def _clamp_low_rule(xp, g, ans, input, low, high):
    below = input < low
    return xp.where(below if high is None else below & (low < high), g, 0)


def _clamp_high_rule(xp, g, ans, input, low, high):
    above = input > high
    return xp.where(above if low is None else above | (high < low), g, 0)


_clamp.defvjp(_clamp_input_rule, _clamp_low_rule, _clamp_high_rule)
_clamp_scalar = defop("clamp", n_in=1, overload=1, jvp="elementwise")(_clamp.forward)
_clamp_scalar.defvjp(_clamp_input_rule)


@defop("clamp_min", n_in=1, jvp="elementwise")
def _clamp_min_scalar(xp, input, low):
    return xp.maximum(input, low)


_clamp_min_scalar.defvjp(lambda xp, g, ans, input, low: xp.where(input >= low, g, 0))
_clamp_min = defop("clamp_min", promote=True, overload=1, jvp="elementwise")(
    _clamp_min_scalar.forward)
_clamp_min.defvjp(lambda xp, g, ans, input, low: xp.where(input >= low, g, 0),
                  lambda xp, g, ans, input, low: xp.where(input < low, g, 0))


@defop("clamp_max", n_in=1, jvp="elementwise")
def _clamp_max_scalar(xp, input, high):
    return xp.minimum(input, high)


_clamp_max_scalar.defvjp(lambda xp, g, ans, input, high: xp.where(input <= high, g, 0))
_clamp_max = defop("clamp_max", promote=True, overload=1, jvp="elementwise")(
    _clamp_max_scalar.forward)
_clamp_max.defvjp(lambda xp, g, ans, input, high: xp.where(input <= high, g, 0),
                  lambda xp, g, ans, input, high: xp.where(input > high, g, 0))


@defop("where", n_in=2, promote=True, jvp="elementwise")
def _where(xp, input, other, condition):
    return xp.where(condition, input, other)


_where.defvjp(lambda xp, g, ans, input, other, condition: xp.where(condition, g, 0),
              lambda xp, g, ans, input, other, condition: xp.where(condition, 0, g))


def _lerp_raw(xp, input, end, weight):
    """PyTorch's two-sided formula: exact at both ends, stable for weights near 1."""
    if hasattr(weight, "dtype") and weight.dtype != input.dtype:
        weight = weight.astype(input.dtype)  # a 0-dim weight of another dtype
    near_start = input + weight * (end - input)
    near_end = end - (end - input) * (1 - weight)
    if not hasattr(weight, "dtype"):
        return near_start if -0.5 < weight < 0.5 else near_end
    return xp.where(xp.abs(weight) < 0.5, near_start, near_end)


@defop("lerp", n_in=2, jvp="elementwise")
def _lerp_scalar(xp, input, end, weight):
    return _opmath(xp, _lerp_raw, input, end, weight)


_lerp_scalar.defvjp(lambda xp, g, ans, input, end, weight: g * (1 - weight),
                    lambda xp, g, ans, input, end, weight: g * weight)


@defop("lerp", overload=1, jvp="elementwise")
def _lerp(xp, input, end, weight):
    return _opmath(xp, _lerp_raw, input, end, weight)


_lerp.defvjp(lambda xp, g, ans, input, end, weight: g * (1 - weight),
             lambda xp, g, ans, input, end, weight: g * weight,
             lambda xp, g, ans, input, end, weight: g * (end - input))


@defop("addcmul", n_in=3, promote=True, jvp="elementwise")
def _addcmul(xp, input, tensor1, tensor2, value):
    if input.dtype.kind in "iu":
        value = int(value)
    return _opmath(xp, lambda xp, a, b, c: a + value * b * c, input, tensor1, tensor2)


_addcmul.defvjp(lambda xp, g, ans, input, tensor1, tensor2, value: g,
                lambda xp, g, ans, input, tensor1, tensor2, value: g * (tensor2 * value),
                lambda xp, g, ans, input, tensor1, tensor2, value: g * (tensor1 * value))


@defop("addcdiv", n_in=3, promote=True, jvp="elementwise")
def _addcdiv(xp, input, tensor1, tensor2, value):
    return _opmath(xp, lambda xp, a, b, c: a + value * b / c, input, tensor1, tensor2)


_addcdiv.defvjp(
    lambda xp, g, ans, input, tensor1, tensor2, value: g,
    lambda xp, g, ans, input, tensor1, tensor2, value: g * (value / tensor2),
    lambda xp, g, ans, input, tensor1, tensor2, value:
        -g * value * tensor1 / (tensor2 * tensor2))

_ADDCDIV_INTEGER = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes.")

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


_eq = _no_derivative("eq", "equal")
_ne = _no_derivative("ne", "not_equal")
_lt = _no_derivative("lt", "less")
_le = _no_derivative("le", "less_equal")
_gt = _no_derivative("gt", "greater")
_ge = _no_derivative("ge", "greater_equal")
_bitwise_and = _no_derivative("bitwise_and", "bitwise_and")
_bitwise_or = _no_derivative("bitwise_or", "bitwise_or")
_bitwise_xor = _no_derivative("bitwise_xor", "bitwise_xor")
_bitwise_not = _no_derivative("bitwise_not", "invert", n_in=1)
logical_and = _no_derivative("logical_and", "logical_and")
logical_or = _no_derivative("logical_or", "logical_or")
logical_xor = _no_derivative("logical_xor", "logical_xor")
logical_not = _no_derivative("logical_not", "logical_not", n_in=1)


def _shift(xp, input, other, left):
    """PyTorch's shifts of integers: by a negative amount or the width or more, ``<<`` gives 0
    and ``>>`` the sign (0 or -1); ``<<`` wraps. A number operand takes the other's dtype."""
    dtype = (input if hasattr(input, "dtype") else other).dtype
    a, b = xp.asarray(input, dtype=dtype), xp.asarray(other, dtype=dtype)
    bits = 8 * dtype.itemsize
    outside = (b < 0) | (b >= bits)
    if left:
        return xp.where(outside, 0, xp.left_shift(a, xp.where(outside, 0, b)))
    if dtype.kind == "u":
        return xp.where(outside, 0, xp.right_shift(a, xp.where(outside, 0, b)))
    return xp.right_shift(a, xp.where(outside, bits - 1, b))


_lshift = defop("bitwise_left_shift", promote=True)(
    lambda xp, input, other: _shift(xp, input, other, True))
_rshift = defop("bitwise_right_shift", promote=True)(
    lambda xp, input, other: _shift(xp, input, other, False))


# What an elementwise function or operator takes as an operand: a Tensor, a Python or NumPy
# number, or a raw array (as internal callers pass).
_OPERANDS = (Tensor, float, int, bool, complex, np.ndarray, np.generic)


def _elementwise(name, op, kernel, kinds, number_first):
    """The public function of a binary op without derivative (comparisons, bitwise ops):
    PyTorch's overloads (a number first only where ``number_first``), then ``_operands``."""
    tensor_first = ["Tensor input, Tensor other, *, Tensor out = None",
                    "Tensor input, Number other, *, Tensor out = None"]

    def function(input, other):
        if isinstance(input, Tensor) and isinstance(other, Tensor) and \
                input._data.dtype is other._data.dtype and (
                    kinds is _ANY or input._data.dtype.kind in kinds):
            return op(input, other)  # the common case, in short
        if isinstance(input, Tensor) and isinstance(other, _OPERANDS) or number_first and \
                isinstance(other, Tensor) and isinstance(input, _OPERANDS):
            input, other = _operands(kernel, kinds, input, other)
            return op(input, other)
        flags = ", ".join(f"!{'Tensor' if isinstance(v, Tensor) else type(v).__name__}!"
                          for v in (input, other))
        raise _invalid_arguments(name, [(0, input), (1, other)], (
            [tensor_first[0], ("Number self, Tensor other", flags), tensor_first[1]]
            if number_first else tensor_first))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Elementwise ``{name}`` with PyTorch's promotion and dtype checks."
    return function


eq = _elementwise("eq", _eq, "eq_cpu", _ANY, False)
ne = _elementwise("ne", _ne, "ne_cpu", _ANY, False)
not_equal = _elementwise("not_equal", _ne, "ne_cpu", _ANY, False)
lt = _elementwise("lt", _lt, "lt_cpu", "biuf", False)  # complex numbers are not ordered
less = _elementwise("less", _lt, "lt_cpu", "biuf", False)
le = _elementwise("le", _le, "le_cpu", "biuf", False)
less_equal = _elementwise("less_equal", _le, "le_cpu", "biuf", False)
gt = _elementwise("gt", _gt, "gt_cpu", "biuf", False)
greater = _elementwise("greater", _gt, "gt_cpu", "biuf", False)
ge = _elementwise("ge", _ge, "ge_cpu", "biuf", False)
greater_equal = _elementwise("greater_equal", _ge, "ge_cpu", "biuf", False)
bitwise_and = _elementwise("bitwise_and", _bitwise_and, "bitwise_and_cpu", "biu", True)
bitwise_or = _elementwise("bitwise_or", _bitwise_or, "bitwise_or_cpu", "biu", True)
bitwise_xor = _elementwise("bitwise_xor", _bitwise_xor, "bitwise_xor_cpu", "biu", True)
bitwise_left_shift = _elementwise("bitwise_left_shift", _lshift, "lshift_cpu", "iu", True)
bitwise_right_shift = _elementwise("bitwise_right_shift", _rshift, "rshift_cpu", "iu", True)


def bitwise_not(input):
    """``~input`` for integer and bool tensors."""
    _check_tensor("bitwise_not", input)
    if input._data.dtype.kind not in "biu":
        raise _unsupported("bitwise_not_cpu", input.dtype)
    return _bitwise_not(input)


def _invert(self):
    """The ``~`` operator: PyTorch words its refusal of other dtypes differently."""
    if self._data.dtype.kind not in "biu":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return _bitwise_not(self)


@defop("isclose", n_in=2)
def _isclose(xp, input, other, rtol, atol, equal_nan):
    close = input == other
    if equal_nan and input.dtype.kind in "fc":
        close |= xp.isnan(input) & xp.isnan(other)
    if rtol == 0 and atol == 0:
        return close
    if input.dtype.kind == "b":  # PyTorch measures bool distances in the default dtype
        input = input.astype(_dtypes.get_default_dtype().np)
        other = other.astype(input.dtype)
    # Integers: the tolerance in the default float dtype, the distance exact (and wrapping).
    scale = other if other.dtype.kind in "fc" else other.astype(
        _dtypes.get_default_dtype().np)
    allowed = atol + xp.abs(rtol * scale)
    actual = xp.abs(input - other)
    return close | (xp.isfinite(actual) & (actual <= allowed))


# --------------------------------------------------------------------------- public API


def _with_alpha(input, other, alpha):
    """``(other, alpha)`` of ``add``/``sub`` as PyTorch's kernel takes them: ``alpha`` checked
    as its ``alpha_check`` does and cast to the result dtype (overflow checked, any nonzero
    number True for bool); beside an integer or bool result a number ``other`` is multiplied
    by it there, as the kernel multiplies (modulo 2**bits), and ``alpha`` becomes 1."""
    dt = _dtypes.result_type(input, other)
    alpha = _python_number(alpha)
    if type(alpha) is bool and dt is not _dtypes.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if dt.category < 2 and type(alpha) is not int and type(alpha) is not bool:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if dt.category < 3 and type(alpha) is complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")
    alpha = bool(alpha) if dt is _dtypes.bool else _checked(alpha, dt, floats=True)
    if dt.category < 2 and not isinstance(other, Tensor):
        return (other and alpha) if dt is _dtypes.bool else _wrapped(other * alpha, dt), 1
    return other, alpha


def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``, broadcasting, with PyTorch's type promotion."""
    if out is not None:
        return write_out("add", out, add(input, other, alpha=alpha))
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        input, other = _operands(None, _ANY, input, other)
    if alpha != 1 or type(alpha) is not int:
        other, alpha = _with_alpha(input, other, alpha)
    return _add(input, other, alpha) if isinstance(input, Tensor) else _radd(other, input, alpha)


def _radd(tensor, scalar, alpha):
    return _add(scalar, tensor, alpha)


_BOOL_SUB = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
             "`^` or `logical_xor()` operator instead.")
_BOOL_SUB_ONE = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you "
                 "are trying to invert a mask, use the `~` or `logical_not()` operator "
                 "instead.")


_NP_BOOL = np.dtype(bool)


def _is_bool(value):
    return type(value) is bool or isinstance(value, Tensor) and value._data.dtype is _NP_BOOL


def _subtraction(input, other, alpha):
    """The operands of ``input - alpha * other`` (PyTorch's ``sub``, ``rsub`` and ``-``): a
    bool operand (a Python bool too) is refused, with PyTorch's messages (after the parser's
    checks of numbers, before promotion)."""
    both = isinstance(input, Tensor) and isinstance(other, Tensor)
    if not both:
        input, other = _python_number(input), _python_number(other)
    if _is_bool(input) or _is_bool(other):
        raise RuntimeError(_BOOL_SUB if _is_bool(input) and _is_bool(other) else _BOOL_SUB_ONE)
    if not both:
        input, other = _operands(None, _ANY, input, other)
    if alpha != 1 or type(alpha) is not int:
        other, alpha = _with_alpha(input, other, alpha)
    return input, other, alpha


def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    if out is not None:
        return write_out("sub", out, sub(input, other, alpha=alpha))
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


subtract = sub


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


@defop("mul", n_in=1, overload=1, jvp="elementwise")
def _mul_scalar(xp, input, other):
    return xp.multiply(input, other)


_mul_scalar.defvjp(lambda xp, g, ans, input, other: g * other)


@defop("div", n_in=1, overload=1, jvp="elementwise")
def _div_scalar(xp, input, other):
    return xp.divide(input, other)


_div_scalar.defvjp(lambda xp, g, ans, input, other: g / other)


def mul_scalar(input, other):
    """``input * other`` for a Python number ``other``, recorded as PyTorch's ``mul.Scalar``."""
    return _mul_scalar(_promoted(input, other), other)


def div_scalar(input, other):
    """``input / other`` for a Python number ``other``, recorded as PyTorch's ``div.Scalar``."""
    dt = _dtypes.result_type(input, other)
    if dt.category < 2:  # true division of integers: the default float dtype
        dt = _dtypes.get_default_dtype()
    return _div_scalar(input if dt is input.dtype else input.to(dt), other)


def mul(input, other, *, out=None):
    """Elementwise product."""
    if out is not None:
        return write_out("mul", out, mul(input, other))
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        input, other = _operands(None, _ANY, input, other)
    return _mul(input, other)


multiply = mul


def div(input, other, *, rounding_mode=None, out=None):
    """True division (integers give the default float dtype); ``rounding_mode`` 'trunc'/'floor'."""
    if out is not None:
        return write_out("div", out, div(input, other, rounding_mode=rounding_mode))
    if rounding_mode is not None:
        if rounding_mode not in ("trunc", "floor"):
            raise RuntimeError("div expected rounding_mode to be one of None, 'trunc', or "
                               f"'floor' but found '{rounding_mode}'")
        input, other = _operands(f"div_{rounding_mode}_cpu", "iuf", input, other)
        return _rounding_div(input, other, rounding_mode)
    if not (isinstance(input, Tensor) and isinstance(other, Tensor)):
        input, other = _operands(None, _ANY, input, other, wrap=False)
    return _div(input, other)


divide = true_divide = div


def _rtruediv(self, other):
    """``other / self`` for a number ``other``: PyTorch's ``self.reciprocal() * other``."""
    return mul(reciprocal(self), other)


def floor_divide(input, other):
    """``input // other``: division rounded down. Like PyTorch, it has no derivative: a result
    that requires grad refuses backward."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        # Two numbers give a 0-dim tensor of their promoted dtype.
        return _floor_divide(_xp.NUMPY.asarray(input, _dtypes.result_type(input, other).np),
                             other)
    input, other = _operands("div_floor_cpu", "iuf", input, other)
    return _underivable(_floor_divide(input, other), "floor_divide", input, other)


def _check_result_fits(self, other, true_division=False):
    """PyTorch's first check of an in-place binary op, before its kernel's of dtypes: the
    result dtype (floating for a true division) must be one ``self`` can hold."""
    other = _python_number(other)
    if isinstance(other, Tensor) or type(other) in _PY_NUMBERS:
        _converted(None, _ANY, self, other, False)  # (PyTorch's promotion errors come first)
        dt = _dtypes.result_type(self, other)
        if true_division and dt.category < 2:
            dt = _dtypes.get_default_dtype()
        if dt.category > self.dtype.category:
            raise RuntimeError(f"result type {_dtype_word(dt.np)} can't be cast to the desired "
                               f"output type {_dtype_word(self._data.dtype)}")


def _result_checked_inplace(name):
    """The in-place method of ``name``, an op whose kernel refuses some dtypes."""
    fn = globals()[name]

    def method(self, other, *args, **kwargs):
        self._check_inplace()
        _check_result_fits(self, other, fn is div and kwargs.get("rounding_mode") is None)
        return self._inplace(fn, other, *args, **kwargs)
    method.__name__ = method.__qualname__ = f"{name}_"
    method.__doc__ = f"In-place version of :func:`{name}`."
    return method


def _floor_divide_(self, other):
    """In-place ``floor_divide`` (its refusing node names ``floor_divide_``)."""
    self._check_inplace()
    _check_result_fits(self, other)
    self, other = _operands("div_floor_cpu", "iuf", self, other)
    return self._assign(_underivable(_floor_divide(self, other), "floor_divide_", self, other))


def neg(input):
    """``-input``; bool tensors are refused, as in PyTorch."""
    if input._data.dtype.kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return _neg(input)


negative = neg


def positive(input):
    """``+input``: the tensor itself; PyTorch refuses bool tensors."""
    if input.dtype is _dtypes.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def reciprocal(input):
    return _reciprocal(input)


_NEGATIVE_POWER = "Integers to negative integer powers are not allowed."
_REAL = frozenset((int, float))


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
    if type(exponent) in _REAL and input._data.dtype.kind in "fc" and \
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


def abs(input):  # noqa: A001 - PyTorch's name
    """``|input|``; its gradient at 0 is 0."""
    _check_tensor("abs", input)
    if input._data.dtype.kind == "b":
        raise _unsupported("abs_cpu", input.dtype)
    return _abs(input)


absolute = abs


def sign(input):
    """-1, 0 or 1 by the sign of each element (0 for NaN); zero gradient."""
    _check_tensor("sign", input)
    return _sign(input)


def sgn(input):
    """``sign`` for real tensors (PyTorch's complex-aware variant)."""
    _check_tensor("sgn", input)
    return _sgn(input)


def atan2(input, other):
    """The angle of the point ``(other, input)``: ``atan(input / other)`` in all quadrants."""
    _check_tensor("atan2", input)
    _check_tensor("atan2", other, "other", 2)
    return _atan2(input, other)


arctan2 = atan2


def hypot(input, other):
    """``sqrt(input² + other²)`` without overflow; floating tensors only."""
    _check_tensor("hypot", input)
    _check_tensor("hypot", other, "other", 2)
    _require("hypot_cpu", "f", input, other)
    return _hypot(input, other)


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input`` is 0 (unless ``other`` is NaN)."""
    if not isinstance(input, Tensor):
        _check_tensor("xlogy", other, "other", 2)
        return _xlogy_scalar_self(other, input)
    if not isinstance(other, Tensor):
        return _xlogy_scalar_other(input, other)
    return _xlogy(input, other)


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


def maximum(input, other):
    """Elementwise maximum (NaN wins); where both are equal the gradient is split."""
    _check_tensor("maximum", input)
    _check_tensor("maximum", other, "other", 2)
    return _maximum(input, other)


def minimum(input, other):
    """Elementwise minimum (NaN wins); where both are equal the gradient is split."""
    _check_tensor("minimum", input)
    _check_tensor("minimum", other, "other", 2)
    return _minimum(input, other)


def fmax(input, other):
    """Elementwise maximum ignoring NaN (NaN only where both are NaN)."""
    _check_tensor("fmax", input)
    _check_tensor("fmax", other, "other", 2)
    return _fmax(input, other)


def fmin(input, other):
    """Elementwise minimum ignoring NaN (NaN only where both are NaN)."""
    _check_tensor("fmin", input)
    _check_tensor("fmin", other, "other", 2)
    return _fmin(input, other)


def clamp(input, min=None, max=None):  # noqa: A002 - PyTorch's names
    """``input`` limited to ``[min, max]``: two numbers, or two tensors (broadcast); either
    bound may be None. Where ``min > max`` the result is ``max``."""
    _check_tensor("clamp", input)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if not all(b is None or isinstance(b, Tensor) for b in (min, max)):
            raise _clamp_arguments(input, min, max)
        if min is not None and max is not None:  # (one bound: bool tensors are fine)
            _require("clamp_cpu", "iuf", input, min, max)
        return _clamp(input, min, max)
    if not all(b is None or _is_number(b) for b in (min, max)):
        raise _clamp_arguments(input, min, max)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    _require("clamp_scalar_cpu", "iuf", input, min, max)
    input = _promoted(input, min, max)
    low, high = (None if b is None else _checked(b, input.dtype, floats=True) for b in (min, max))
    return _clamp_scalar(input, low, high)


def _clamp_arguments(input, low, high):
    return _invalid_arguments("clamp", [(0, input), (1, low), (2, high)], [
        "Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None",
        "Tensor input, Number min = None, Number max = None, *, Tensor out = None"])


clip = clamp


def clamp_min(input, min):  # noqa: A002
    """``max(input, min)``, ``min`` a number or a tensor."""
    return _one_sided("clamp_min", input, min, _clamp_min, _clamp_min_scalar)


def clamp_max(input, max):  # noqa: A002
    """``min(input, max)``, ``max`` a number or a tensor."""
    return _one_sided("clamp_max", input, max, _clamp_max, _clamp_max_scalar)


def _one_sided(name, input, bound, tensor_op, scalar_op):
    _check_tensor(name, input)
    if isinstance(bound, Tensor):
        return tensor_op(input, bound)
    if not _is_number(bound):
        arg = name[-3:]
        raise _invalid_arguments(name, [(0, input), (1, bound)], [
            f"Tensor input, Tensor {arg}, *, Tensor out = None",
            f"Tensor input, Number {arg}, *, Tensor out = None"])
    _require(f"{name}_scalar_cpu", "iuf", input, bound)
    input = _promoted(input, bound)
    return scalar_op(input, _checked(bound, input.dtype, floats=True))


def _clamp_inplace(name, fn):
    """``clamp_`` and friends: PyTorch words their cast error with C++ type names."""
    def method(self, *args, **kwargs):
        self._check_inplace()
        result = fn(self, *args, **kwargs)
        if result.dtype.category > self.dtype.category:
            raise RuntimeError(f"result type {_dtype_word(result._data.dtype)} can't be cast "
                               f"to the desired output type {_CPP_NAMES[self.dtype.name]}")
        return self._assign(result)
    method.__name__ = name
    method.__doc__ = f"In-place version of :func:`{fn.__name__}`."
    return method


@batching.per_sample_with(batching.lined_up)
def where(condition, input=None, other=None):
    """Elements of ``input`` where ``condition`` holds, else of ``other``; the three broadcast
    together, and ``input``/``other`` may be Python numbers. ``where(condition)`` alone is
    ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    _check_tensor("where", condition, "condition", 1)
    if condition.dtype is not _dtypes.bool:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype._legacy[:-6]}")
    broadcast_shapes(condition.shape, *(a.shape for a in (input, other)
                                        if isinstance(a, Tensor)))
    cond = condition._data
    dt = _dtypes.result_type(input, other)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        # Two numbers: their promoted dtype, on the condition's device.
        input = _xp.namespace_of(cond).asarray(input, dtype=dt.np)
    return saves_also(_where(_checked(input, dt), _checked(other, dt), cond), condition)


def _where_method(self, condition, other):
    return where(condition, self, other)


def lerp(input, end, weight):
    """``input + weight * (end - input)``; ``weight`` a number or a tensor (broadcast)."""
    if not isinstance(input, Tensor) or not isinstance(end, Tensor) or not (
            isinstance(weight, Tensor) or _is_number(weight)):
        raise _invalid_arguments("lerp", [(0, input), (1, end), (2, weight)], [
            "Tensor input, Tensor end, Tensor weight, *, Tensor out = None",
            "Tensor input, Tensor end, Number weight, *, Tensor out = None"])
    if end.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {_CPP_NAMES[input.dtype.name]} for `end` but got "
                           f"dtype {_CPP_NAMES[end.dtype.name]}")
    tensor_weight = isinstance(weight, Tensor)
    if tensor_weight and weight.ndim and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {_CPP_NAMES[input.dtype.name]} for `weight` but "
                           f"got dtype {_CPP_NAMES[weight.dtype.name]}")
    kernel = "lerp_kernel_tensor" if tensor_weight else "lerp_kernel_scalar"
    if input.dtype.np.kind != "f":
        raise _unsupported(kernel, input.dtype)
    return _lerp(input, end, weight) if tensor_weight else _lerp_scalar(input, end, weight)


def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2`` (broadcast, promoted)."""
    _check_tensor("addcmul", input)
    _check_tensor("addcmul", tensor1, "tensor1", 2)
    _check_tensor("addcmul", tensor2, "tensor2", 3)
    dt = _require("addcmul_cpu_out", "iuf", input, tensor1, tensor2)
    return _addcmul(input, tensor1, tensor2, _checked(value, dt))


def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2``; integer ``tensor1``/``tensor2`` are refused."""
    _check_tensor("addcdiv", input)
    _check_tensor("addcdiv", tensor1, "tensor1", 2)
    _check_tensor("addcdiv", tensor2, "tensor2", 3)
    if _integral(tensor1._data) and _integral(tensor2._data):
        raise RuntimeError(_ADDCDIV_INTEGER)
    return _addcdiv(input, tensor1, tensor2, value)


def _check_same_dtype(input, other):
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype._legacy[:-6]} did not match "
                           f"{other.dtype._legacy[:-6]}")


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise (infinities: only if equal)."""
    _check_tensor("isclose", input)
    _check_tensor("isclose", other, "other", 2)
    _check_same_dtype(input, other)
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if tol < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {tol:g}")
    return _isclose(input, other, rtol, atol, equal_nan)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether ``isclose`` holds everywhere, as a Python bool."""
    _check_tensor("allclose", input)
    _check_tensor("allclose", other, "other", 2)
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


def equal(input, other):
    """Whether both have the same shape and elements, as a Python bool (NaN is unequal)."""
    _check_tensor("equal", input)
    _check_tensor("equal", other, "other", 2)
    return input.shape == other.shape and bool(eq(input, other).all())


# --------------------------------------------------------------------------- log-add, signs


@defop("logaddexp", promote="float", jvp="elementwise")
def _logaddexp(xp, input, other):
    return xp.logaddexp(input, other)


# PyTorch's formulas, which read the inputs only (the result is not saved: writing it in place
# leaves the backward valid).
_logaddexp.defvjp(lambda xp, g, ans, input, other: g / (1 + xp.exp(other - input)),
                  lambda xp, g, ans, input, other: g / (1 + xp.exp(input - other)))


@defop("logaddexp2", promote="float", jvp="elementwise")
def _logaddexp2(xp, input, other):
    return xp.logaddexp2(input, other)


_logaddexp2.defvjp(lambda xp, g, ans, input, other: g / (1 + 2.0 ** (other - input)),
                   lambda xp, g, ans, input, other: g / (1 + 2.0 ** (input - other)))


def logaddexp(input, other):
    """``log(exp(input) + exp(other))`` without overflow."""
    _check_tensor("logaddexp", input)
    _check_tensor("logaddexp", other, "other", 2)
    return _logaddexp(input, other)


def logaddexp2(input, other):
    """``log2(2**input + 2**other)`` without overflow."""
    _check_tensor("logaddexp2", input)
    _check_tensor("logaddexp2", other, "other", 2)
    return _logaddexp2(input, other)


def _copysign_input_rule(xp, g, ans, input, other):
    """``g * ans / input`` (the sign flip), 0 where ``input`` is 0 (PyTorch's choice)."""
    return xp.where(input == 0, 0, g * ans / xp.where(input == 0, 1, input))


@defop("copysign", promote="float", jvp="elementwise")
def _copysign(xp, input, other):
    return xp.copysign(input, other)


_copysign.defvjp(_copysign_input_rule, lambda xp, g, ans, input, other: xp.zeros_like(g))
_copysign_scalar = defop("copysign", n_in=1, promote="float", overload=1, jvp="elementwise")(
    _copysign.forward).defvjp(_copysign_input_rule)


def copysign(input, other):
    """``|input|`` with the sign of ``other`` (a tensor or a number); always floating."""
    _check_tensor("copysign", input)
    if isinstance(other, Tensor):
        return _copysign(input, other)
    return _copysign_scalar(input, other)


# PyTorch's ``input == 0 ? values : input > 0``: NaN gives 0 (NumPy's heaviside gives NaN).
_heaviside = defop("heaviside", promote=True)(lambda xp, input, values: xp.where(
    input == 0, values, input > 0).astype(input.dtype))


def heaviside(input, values):
    """The step function: 0 below 0, 1 above, ``values`` at 0. Like PyTorch, it has no
    derivative: backward through it raises."""
    _check_tensor("heaviside", input)
    _check_tensor("heaviside", values, "values", 2)
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes")
    return _underivable(_heaviside(input, values), "heaviside", input, values)


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


def _float_power_(self, exponent):
    """In-place ``float_power``: self must already have the result's (double) dtype."""
    wide = _dtypes.complex128 if self.is_complex() or getattr(exponent, "is_complex", bool)() \
        else _dtypes.float64
    if self.dtype is not wide:
        raise RuntimeError(f"the base given to float_power_ has dtype {_dtype_word(self.dtype.np)}"
                           f" but the operation's result requires dtype {_dtype_word(wide.np)}")
    return self._inplace(float_power, exponent)


# --------------------------------------------------------------------------- the family's surface
_xp.register_extra("sgn", _sgn.forward, sgn)
_xp.register_extra("xlogy", _xlogy_raw, xlogy)

__all__ = ["add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide",
           "floor_divide", "neg", "negative", "positive", "reciprocal", "pow", "abs", "absolute",
           "sign", "sgn", "atan2", "arctan2", "hypot", "xlogy", "fmod", "remainder", "maximum",
           "minimum", "fmax", "fmin", "clamp", "clip", "clamp_min", "clamp_max", "where", "lerp",
           "addcmul", "addcdiv", "eq", "ne", "lt", "le", "gt", "ge", "less", "less_equal",
           "greater", "greater_equal", "not_equal", "isclose", "allclose", "equal",
           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
           "bitwise_right_shift", "logical_and",
           "logical_or", "logical_xor", "logical_not", "logaddexp", "logaddexp2", "copysign",
           "heaviside", "float_power"]
METHODS = {name: globals()[name] for name in __all__ if name != "rsub"}
METHODS["where"] = _where_method
INPLACE = ("add", "sub", "subtract", "mul", "multiply", "neg", "negative", "reciprocal", "pow",
           "abs", "absolute", "sign", "sgn", "atan2", "arctan2", "hypot", "xlogy", "lerp",
           "addcmul", "addcdiv", "logical_and", "logical_or", "logical_xor", "logical_not",
           "bitwise_not", "copysign", "heaviside", "eq", "ne", "lt", "le", "gt", "ge", "less",
           "less_equal", "greater", "greater_equal", "not_equal")
# In-place forms that check their result dtype before their kernel's dtypes, as PyTorch does.
METHODS.update({f"{name}_": _result_checked_inplace(name) for name in (
    "div", "divide", "true_divide", "fmod", "remainder", "bitwise_and", "bitwise_or",
    "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift")})
METHODS.update({f"{name}_": _clamp_inplace(f"{name}_", globals()[name])
                for name in ("clamp", "clip", "clamp_min", "clamp_max")})
METHODS["floor_divide_"] = _floor_divide_
METHODS["float_power_"] = _float_power_
ARRAY_API = {
    # The array API's floor_divide for Tensors, as rules use it: a zero-gradient division.
    "floor_divide": lambda x1, x2: div(x1, x2, rounding_mode="floor"),
    # Rules may select with a mask saved as a raw array (``where``'s own condition).
    "where": lambda condition, x1, x2: where(
        condition if isinstance(condition, Tensor) else Tensor._make(condition, None, False),
        x1, x2),
}
