"""The elementwise ops without derivative of two operands: comparisons (``eq``, ``lt``...),
bitwise and logical ops, shifts; and ``isclose``/``allclose``/``equal``.

Each public function declares where it goes (``ember.<name>``, a Tensor method, its in-place
form): ``_elementwise`` and ``_logical`` declare those they make, ``@op.public`` or ``@public``
the others (``_surface.py``).
"""
from __future__ import annotations

from .. import _dtypes
from .._tensor import Tensor
from .operands import (
    _ANY,
    _OPERANDS,
    _check_tensor,
    _invalid_arguments,
    _of_two_tensors,
    _operands,
    _result_checked,
    _unsupported,
)
from .registry import defop, public

# --------------------------------------------------------------------------- comparisons


def _no_derivative(name, fn_name, n_in=2):
    """An elementwise NumPy function as an op without derivative (bool or integer results)."""
    if n_in == 2:
        def forward(xp, input, other):
            return getattr(xp, fn_name)(input, other)
    else:
        def forward(xp, input):
            return getattr(xp, fn_name)(input)
    return defop(name, promote=True, batch="pointwise")(forward)


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
_logical_and = _no_derivative("logical_and", "logical_and")
_logical_or = _no_derivative("logical_or", "logical_or")
_logical_xor = _no_derivative("logical_xor", "logical_xor")
# PyTorch's logical_and/or/xor take two tensors only (the function and the method alike).
_LOGICAL_DOC = "Elementwise logical {} of two tensors (nonzero is true); bool results."


def _logical(op):
    """The public function of ``logical_and``/``or``/``xor``, and its method (whose TypeError
    counts ``other`` as position 1)."""
    doc = _LOGICAL_DOC.format(op.name[8:].upper())
    return public(_of_two_tensors(op.name, op, doc), inplace=True,
                  method=_of_two_tensors(op.name, op, doc, position=1))


logical_and, logical_or, logical_xor = map(_logical, (_logical_and, _logical_or, _logical_xor))
logical_not = public(_no_derivative("logical_not", "logical_not", n_in=1),
                     inplace=True)  # (the op is its own public function)


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


_lshift = defop("bitwise_left_shift", promote=True, batch="pointwise")(
    lambda xp, input, other: _shift(xp, input, other, True))
_rshift = defop("bitwise_right_shift", promote=True, batch="pointwise")(
    lambda xp, input, other: _shift(xp, input, other, False))


def _elementwise(name, op, kernel, kinds, number_first, inplace=True):
    """The public function of a binary op without derivative (comparisons, bitwise ops):
    PyTorch's overloads (a number first only where ``number_first``), then ``_operands``;
    ``inplace``: its in-place form (``_surface.py``)."""
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
    return public(function, inplace=inplace)


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
bitwise_and = _elementwise("bitwise_and", _bitwise_and, "bitwise_and_cpu", "biu", True,
                           inplace=_result_checked)
bitwise_or = _elementwise("bitwise_or", _bitwise_or, "bitwise_or_cpu", "biu", True,
                          inplace=_result_checked)
bitwise_xor = _elementwise("bitwise_xor", _bitwise_xor, "bitwise_xor_cpu", "biu", True,
                           inplace=_result_checked)
bitwise_left_shift = _elementwise("bitwise_left_shift", _lshift, "lshift_cpu", "iu", True,
                                  inplace=_result_checked)
bitwise_right_shift = _elementwise("bitwise_right_shift", _rshift, "rshift_cpu", "iu", True,
                                   inplace=_result_checked)


@public(inplace=True)
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


@defop("isclose", n_in=2, batch="pointwise")
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


def _check_same_dtype(input, other):
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype._word} did not match "
                           f"{other.dtype._word}")


@_isclose.public
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise (infinities: only if equal)."""
    _check_tensor("isclose", input)
    _check_tensor("isclose", other, "other", 2)
    _check_same_dtype(input, other)
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if tol < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {tol:g}")
    return _isclose(input, other, rtol, atol, equal_nan)


@public
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether ``isclose`` holds everywhere, as a Python bool."""
    _check_tensor("allclose", input)
    _check_tensor("allclose", other, "other", 2)
    return bool(isclose(input, other, rtol, atol, equal_nan).all())


@public
def equal(input, other):
    """Whether both have the same shape and elements, as a Python bool (NaN is unequal)."""
    _check_tensor("equal", input)
    _check_tensor("equal", other, "other", 2)
    return input.shape == other.shape and bool(eq(input, other).all())
