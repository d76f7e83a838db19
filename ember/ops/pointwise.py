"""The pointwise family: elementwise arithmetic, binary math, selection and comparison ops.

Each op: a forward on raw arrays, then one rule per input (see ``registry.py`` for the
contract). Public functions follow ``torch``'s signatures, refuse what PyTorch refuses with
its exception and message, and are also Tensor methods. Functions of one tensor (``exp``,
``sin``, ``floor``, ``isnan``...) live in ``unary.py``.

The ops live in:

- ``operands.py``: argument checks and the operands of binary ops (no ops);
- ``arithmetic.py``: ``add``, ``sub``, ``mul``, ``div``, ``floor_divide``, ``fmod``,
  ``remainder``, ``neg``, ``reciprocal``, ``abs``, ``sign``...;
- ``binary_math.py``: ``pow``, ``float_power``, ``atan2``, ``hypot``, ``xlogy``,
  ``logaddexp``, ``copysign``, ``heaviside``;
- ``selection.py``: ``maximum``/``minimum``, ``clamp``, ``where``, ``lerp``, ``addcmul``...;
- ``comparison.py``: comparisons, bitwise and logical ops, ``isclose``, ``equal``.

This module is the family's surface: ``__all__``, ``METHODS``, ``INPLACE``, ``ARRAY_API``. It
also re-exports (``from .x import name as name``) the names other modules reach through it
beside ``__all__``: the helpers of ``unary.py``, the ops of the Tensor operators' fast paths
(``_tensor_methods.py``) and the Scalar overloads (``ops/reduction/``, ``nn.functional``).
"""
from __future__ import annotations

from .. import _xp
from .._tensor import Tensor
from .arithmetic import _add as _add
from .arithmetic import _div as _div
from .arithmetic import _div_scalar as _div_scalar
from .arithmetic import (
    _floor_divide_,
    _sgn,
    abs,
    absolute,
    add,
    div,
    divide,
    floor_divide,
    fmod,
    mul,
    multiply,
    neg,
    negative,
    positive,
    reciprocal,
    remainder,
    rsub,
    sgn,
    sign,
    sub,
    subtract,
    true_divide,
)
from .arithmetic import _mul as _mul
from .arithmetic import _mul_scalar as _mul_scalar
from .arithmetic import _rsub as _rsub
from .arithmetic import _rtruediv as _rtruediv
from .arithmetic import _sub as _sub
from .arithmetic import add_scalar as add_scalar
from .arithmetic import div_scalar as div_scalar
from .arithmetic import mul_scalar as mul_scalar
from .binary_math import (
    _float_power_,
    _xlogy_raw,
    arctan2,
    atan2,
    copysign,
    float_power,
    heaviside,
    hypot,
    logaddexp,
    logaddexp2,
    pow,
    xlogy,
)
from .comparison import (
    LOGICAL_METHODS,
    allclose,
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    eq,
    equal,
    ge,
    greater,
    greater_equal,
    gt,
    isclose,
    le,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    ne,
    not_equal,
)
from .comparison import _eq as _eq
from .comparison import _ge as _ge
from .comparison import _gt as _gt
from .comparison import _invert as _invert
from .comparison import _le as _le
from .comparison import _lt as _lt
from .comparison import _ne as _ne
from .operands import _OPERANDS as _OPERANDS
from .operands import (
    _check_result_fits,
)
from .operands import _check_tensor as _check_tensor
from .operands import _invalid_arguments as _invalid_arguments
from .operands import _is_number as _is_number
from .operands import _opmath as _opmath
from .operands import _unsupported as _unsupported
from .selection import (
    _clamp_inplace,
    _where_method,
    addcdiv,
    addcmul,
    clamp,
    clamp_max,
    clamp_min,
    clip,
    fmax,
    fmin,
    lerp,
    maximum,
    minimum,
    where,
)


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
METHODS.update(LOGICAL_METHODS)
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
