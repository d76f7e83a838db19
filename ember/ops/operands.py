"""How the pointwise ops take their arguments, in one place for every op module.

PyTorch's argument checks and their errors (``_check_tensor``, ``_invalid_arguments``,
``_unsupported``...); the two operands of an elementwise kernel (``_operands``: the parser's
limits on Python ints, type promotion, the dtypes a kernel takes, the cast of a Python number);
the operands of ``add``/``sub`` (``alpha``, bool subtraction); the first check of in-place
binary ops (``_check_result_fits``, and ``_result_checked``, the in-place forms that make it);
and the node of ops without derivative (``_underivable``).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _dtypes
from .._tensor import Tensor, _dtype_word
from ..autograd import grad_mode
from ..autograd.graph import Node, gradient_edge, new_node

# --------------------------------------------------------------------------- argument checks


def _check_tensor(fn, value, name="input", position=1):
    """PyTorch's TypeError for a non-tensor where its signature only takes a Tensor."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def _of_two_tensors(name, op, doc, position=2):
    """The public ``name(input, other)``: ``op`` on two tensors, with PyTorch's TypeError for
    anything else (``position``: where ``other`` stands; 1 in a method)."""
    def function(input, other):
        _check_tensor(name, input)
        _check_tensor(name, other, "other", position)
        return op(input, other)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


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
    if dt.kind not in kinds:
        raise _unsupported(kernel, dt)
    return dt


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


# (compiled mode: a call on arrays none of which is half is ``fn(xp, *args)``)
_opmath.resolve = lambda xp, fn, *args: None if any(
    getattr(a, "dtype", None) == _HALF for a in args) else (fn, (0, *range(2, len(args) + 2)))

_int_bounds = _dtypes.int_bounds


def _wrapped(value, dtype):
    """A Python int as PyTorch casts it to an integer ``dtype``: modulo 2**bits."""
    if dtype.kind not in "iu" or not isinstance(value, int) or isinstance(value, bool):
        return value
    low, high = _int_bounds(dtype.np)
    if low <= value <= high:
        return value
    bits = 8 * dtype.itemsize
    value %= 1 << bits
    return value - (1 << bits) if value > high else value  # in range: NumPy keeps dtype


# The C type names in PyTorch's overflow errors.
_C_TYPES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
            "int64": "int64_t", "float16": "c10::Half", "float32": "float", "float64": "double",
            "bfloat16": "c10::BFloat16"}


def _checked(value, dtype, floats=False):
    """A Python number converted to ``dtype`` where PyTorch checks for overflow (clamp bounds,
    ``where`` values): an error out of range, except that unsigned types take negative
    numbers (which wrap). Floats are checked only when ``floats``; infinities always fit."""
    value = _in_range(value)
    kind = dtype.kind
    if kind in "iu" and isinstance(value, int) and not isinstance(value, bool):
        low, high = _int_bounds(dtype.np)
        fits = (-high if kind == "u" else low) <= value <= high
    elif floats and kind == "f" and isinstance(value, (int, float)):
        limit = float(_dtypes.np_finfo(dtype.np).max)
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
        dtype = tensor._data.dtype
        if kinds is _ANY and type(dtype) in _INEXACT and (
                t is float or _INT64_MIN <= number < _UINT64_END):
            return input, other
        if t is int and dtype.kind in "iu" and (kinds is _ANY or dtype.kind in kinds):
            # an integer tensor beside an int its dtype holds (index arithmetic, ``i + 8``):
            # the tensor's dtype, nothing to wrap (~5 µs of ``_converted`` a call saved)
            low, high = _int_bounds(dtype)
            if low <= number <= high:
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
    if dt.kind not in kinds:
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
    if not edges or not grad_mode._state.grad or not _dtypes.is_inexact(out._data.dtype):
        return out
    node = new_node(_NotImplemented, edges)
    node._op_name = name
    return Tensor._make(out._data, node, True)


# What an elementwise function or operator takes as an operand: a Tensor, a Python or NumPy
# number, or a raw array (as internal callers pass).
_OPERANDS = (Tensor, float, int, bool, complex, np.ndarray, np.generic)


# --------------------------------------------------------------------------- add and sub operands


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


# --------------------------------------------------------------------------- in-place binary ops


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


def _result_checked(fn, name, *, true_division=False):
    """The in-place method ``name`` of ``fn``, an op whose kernel refuses some dtypes: it first
    checks that the result fits ``self`` (``true_division``: ``div``'s floating result when no
    ``rounding_mode`` is given), as PyTorch does. A declaration's ``inplace=`` factory
    (``_surface.py``)."""
    def method(self, other, *args, **kwargs):
        self._check_inplace()
        _check_result_fits(self, other, true_division and kwargs.get("rounding_mode") is None)
        return self._inplace(fn, other, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place version of :func:`{name[:-1]}`."
    return method
