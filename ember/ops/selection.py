"""Selection and weighted combinations, with derivatives: ``maximum``/``minimum``,
``fmax``/``fmin``, ``clamp`` (``clip``, ``clamp_min``, ``clamp_max``), ``where``, ``lerp``,
``addcmul`` and ``addcdiv``.

Each public function declares where it goes (``ember.<name>``, a Tensor method, its in-place
form): ``@op.public`` under its op, ``@public`` for the choice between several ops
(``_surface.py``).
"""
from __future__ import annotations

from .. import _dtypes, _xp
from .._broadcast import broadcast_shapes
from .._tensor import Tensor, _dtype_word
from . import batching
from .operands import (
    _check_tensor,
    _checked,
    _integral,
    _invalid_arguments,
    _is_number,
    _of_two_tensors,
    _opmath,
    _promoted,
    _require,
    _unsupported,
)
from .registry import array_api, defop, public, saves_also

# --------------------------------------------------------------------------- selection


@defop("maximum", promote=True, jvp="elementwise", batch="pointwise")
def _maximum(xp, input, other):
    return xp.maximum(input, other)


# Ties split the gradient equally; NaNs (which win) pass it to both sides, as in PyTorch.
_maximum.defvjp(
    lambda xp, g, ans, input, other: xp.where(input < other, 0,
                                              xp.where(input == other, g / 2, g)),
    lambda xp, g, ans, input, other: xp.where(input > other, 0,
                                              xp.where(input == other, g / 2, g)))


maximum = _maximum.public(_of_two_tensors(
    "maximum", _maximum,
    "Elementwise maximum (NaN wins); where both are equal the gradient is split."))


@defop("minimum", promote=True, jvp="elementwise", batch="pointwise")
def _minimum(xp, input, other):
    return xp.minimum(input, other)


_minimum.defvjp(
    lambda xp, g, ans, input, other: xp.where(input > other, 0,
                                              xp.where(input == other, g / 2, g)),
    lambda xp, g, ans, input, other: xp.where(input < other, 0,
                                              xp.where(input == other, g / 2, g)))


minimum = _minimum.public(_of_two_tensors(
    "minimum", _minimum,
    "Elementwise minimum (NaN wins); where both are equal the gradient is split."))


@defop("fmax", promote=True, jvp="elementwise", batch="pointwise")
def _fmax(xp, input, other):
    return xp.fmax(input, other)


# NaNs lose; a tie gives the whole gradient to ``input``.
_fmax.defvjp(
    lambda xp, g, ans, input, other: xp.where((input >= other) | xp.isnan(other), g, 0),
    lambda xp, g, ans, input, other: xp.where((input >= other) | xp.isnan(other), 0, g))


fmax = _fmax.public(_of_two_tensors(
    "fmax", _fmax,
    "Elementwise maximum ignoring NaN (NaN only where both are NaN)."))


@defop("fmin", promote=True, jvp="elementwise", batch="pointwise")
def _fmin(xp, input, other):
    return xp.fmin(input, other)


_fmin.defvjp(
    lambda xp, g, ans, input, other: xp.where((input <= other) | xp.isnan(other), g, 0),
    lambda xp, g, ans, input, other: xp.where((input <= other) | xp.isnan(other), 0, g))


fmin = _fmin.public(_of_two_tensors(
    "fmin", _fmin,
    "Elementwise minimum ignoring NaN (NaN only where both are NaN)."))


@defop("clamp", promote=True, jvp="elementwise", batch="pointwise")
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
_clamp_scalar = defop("clamp", n_in=1, overload=1, jvp="elementwise",
                      batch="pointwise")(_clamp.forward)
_clamp_scalar.defvjp(_clamp_input_rule)


@defop("clamp_min", n_in=1, jvp="elementwise", batch="pointwise")
def _clamp_min_scalar(xp, input, low):
    return xp.maximum(input, low)


_clamp_min_scalar.defvjp(lambda xp, g, ans, input, low: xp.where(input >= low, g, 0))
_clamp_min = defop("clamp_min", promote=True, overload=1, jvp="elementwise", batch="pointwise")(
    _clamp_min_scalar.forward)
_clamp_min.defvjp(lambda xp, g, ans, input, low: xp.where(input >= low, g, 0),
                  lambda xp, g, ans, input, low: xp.where(input < low, g, 0))


@defop("clamp_max", n_in=1, jvp="elementwise", batch="pointwise")
def _clamp_max_scalar(xp, input, high):
    return xp.minimum(input, high)


_clamp_max_scalar.defvjp(lambda xp, g, ans, input, high: xp.where(input <= high, g, 0))
_clamp_max = defop("clamp_max", promote=True, overload=1, jvp="elementwise", batch="pointwise")(
    _clamp_max_scalar.forward)
_clamp_max.defvjp(lambda xp, g, ans, input, high: xp.where(input <= high, g, 0),
                  lambda xp, g, ans, input, high: xp.where(input > high, g, 0))


@defop("where", n_in=2, promote=True, jvp="elementwise", batch="pointwise")
def _where(xp, input, other, condition):
    return xp.where(condition, input, other)


_where.defvjp(lambda xp, g, ans, input, other, condition: xp.where(condition, g, 0),
              lambda xp, g, ans, input, other, condition: xp.where(condition, 0, g))


def _where_method(self, condition, other):
    return where(condition, self, other)


@public(method=_where_method)
@batching.per_sample_with(batching.lined_up)
def where(condition, input=None, other=None):
    """Elements of ``input`` where ``condition`` holds, else of ``other``; the three broadcast
    together, and ``input``/``other`` may be Python numbers. ``where(condition)`` alone is
    ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)  # (ops/indexing's)
    _check_tensor("where", condition, "condition", 1)
    if condition.dtype is not _dtypes.bool:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype._word}")
    broadcast_shapes(condition.shape, *(a.shape for a in (input, other)
                                        if isinstance(a, Tensor)))
    cond = condition._data
    dt = _dtypes.result_type(input, other)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        # Two numbers: their promoted dtype, on the condition's device.
        input = _xp.namespace_of(cond).asarray(input, dtype=dt.np)
    return saves_also(_where(_checked(input, dt), _checked(other, dt), cond), condition)


# Rules may select with a mask saved as a raw array (``where``'s own condition).
array_api("where")(lambda condition, x1, x2: where(
    condition if isinstance(condition, Tensor) else Tensor._make(condition, None, False),
    x1, x2))


def _lerp_raw(xp, input, end, weight):
    """PyTorch's two-sided formula: exact at both ends, stable for weights near 1."""
    if hasattr(weight, "dtype") and weight.dtype != input.dtype:
        weight = weight.astype(input.dtype)  # a 0-dim weight of another dtype
    near_start = input + weight * (end - input)
    near_end = end - (end - input) * (1 - weight)
    if not hasattr(weight, "dtype"):
        return near_start if -0.5 < weight < 0.5 else near_end
    return xp.where(xp.abs(weight) < 0.5, near_start, near_end)


@defop("lerp", n_in=2, jvp="elementwise", batch="pointwise")
def _lerp_scalar(xp, input, end, weight):
    return _opmath(xp, _lerp_raw, input, end, weight)


_lerp_scalar.defvjp(lambda xp, g, ans, input, end, weight: g * (1 - weight),
                    lambda xp, g, ans, input, end, weight: g * weight)


@defop("lerp", overload=1, jvp="elementwise", batch="pointwise")
def _lerp(xp, input, end, weight):
    return _opmath(xp, _lerp_raw, input, end, weight)


_lerp.defvjp(lambda xp, g, ans, input, end, weight: g * (1 - weight),
             lambda xp, g, ans, input, end, weight: g * weight,
             lambda xp, g, ans, input, end, weight: g * (end - input))


@defop("addcmul", n_in=3, promote=True, jvp="elementwise", batch="pointwise", inplace=True)
def _addcmul(xp, input, tensor1, tensor2, value):
    if input.dtype.kind in "iu":
        value = int(value)
    return _opmath(xp, lambda xp, a, b, c: a + value * b * c, input, tensor1, tensor2)


_addcmul.defvjp(lambda xp, g, ans, input, tensor1, tensor2, value: g,
                lambda xp, g, ans, input, tensor1, tensor2, value: g * (tensor2 * value),
                lambda xp, g, ans, input, tensor1, tensor2, value: g * (tensor1 * value))


@_addcmul.public
def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2`` (broadcast, promoted)."""
    _check_tensor("addcmul", input)
    _check_tensor("addcmul", tensor1, "tensor1", 2)
    _check_tensor("addcmul", tensor2, "tensor2", 3)
    dt = _require("addcmul_cpu_out", "iuf", input, tensor1, tensor2)
    return _addcmul(input, tensor1, tensor2, _checked(value, dt))


@defop("addcdiv", n_in=3, promote=True, jvp="elementwise", batch="pointwise", inplace=True)
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


@_addcdiv.public
def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2``; integer ``tensor1``/``tensor2`` are refused."""
    _check_tensor("addcdiv", input)
    _check_tensor("addcdiv", tensor1, "tensor1", 2)
    _check_tensor("addcdiv", tensor2, "tensor2", 3)
    if _integral(tensor1._data) and _integral(tensor2._data):
        raise RuntimeError(_ADDCDIV_INTEGER)
    return _addcdiv(input, tensor1, tensor2, value)


# --------------------------------------------------------------------------- public API


def _clamp_inplace(fn, name):
    """``clamp_`` and friends: PyTorch words their cast error with C++ type names."""
    def method(self, *args, **kwargs):
        self._check_inplace()
        result = fn(self, *args, **kwargs)
        if result.dtype.category > self.dtype.category:
            raise RuntimeError(f"result type {_dtype_word(result._data.dtype)} can't be cast "
                               f"to the desired output type {self.dtype._cpp_name}")
        return self._assign(result)
    method.__name__ = name
    method.__doc__ = f"In-place version of :func:`{fn.__name__}`."
    return method


@public(inplace=_clamp_inplace, aliases=("clip",))
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


@public(inplace=_clamp_inplace)
def clamp_min(input, min):  # noqa: A002
    """``max(input, min)``, ``min`` a number or a tensor."""
    return _one_sided("clamp_min", input, min, _clamp_min, _clamp_min_scalar)


@public(inplace=_clamp_inplace)
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


@public(inplace=True)
def lerp(input, end, weight):
    """``input + weight * (end - input)``; ``weight`` a number or a tensor (broadcast)."""
    if not isinstance(input, Tensor) or not isinstance(end, Tensor) or not (
            isinstance(weight, Tensor) or _is_number(weight)):
        raise _invalid_arguments("lerp", [(0, input), (1, end), (2, weight)], [
            "Tensor input, Tensor end, Tensor weight, *, Tensor out = None",
            "Tensor input, Tensor end, Number weight, *, Tensor out = None"])
    if end.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {input.dtype._cpp_name} for `end` but got "
                           f"dtype {end.dtype._cpp_name}")
    tensor_weight = isinstance(weight, Tensor)
    if tensor_weight and weight.ndim and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {input.dtype._cpp_name} for `weight` but "
                           f"got dtype {weight.dtype._cpp_name}")
    kernel = "lerp_kernel_tensor" if tensor_weight else "lerp_kernel_scalar"
    if input.dtype.kind != "f":
        raise _unsupported(kernel, input.dtype)
    return _lerp(input, end, weight) if tensor_weight else _lerp_scalar(input, end, weight)
