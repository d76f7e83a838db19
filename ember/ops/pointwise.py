"""The pointwise family: elementwise arithmetic, binary math, selection and comparison ops.

Each op: a forward on raw arrays, then one rule per input (see ``registry.py`` for the
contract). Public functions follow ``torch``'s signatures, refuse what PyTorch refuses with
its exception and message, and are also Tensor methods; each declares where it goes where it
is written (``_surface.py``). Functions of one tensor (``exp``, ``sin``, ``floor``,
``isnan``...) live in ``unary.py``.

The ops live in:

- ``operands.py``: argument checks and the operands of binary ops (no ops);
- ``arithmetic.py``: ``add``, ``sub``, ``mul``, ``div``, ``floor_divide``, ``fmod``,
  ``remainder``, ``neg``, ``reciprocal``, ``abs``, ``sign``...;
- ``binary_math.py``: ``pow``, ``float_power``, ``atan2``, ``hypot``, ``xlogy``,
  ``logaddexp``, ``copysign``, ``heaviside``;
- ``selection.py``: ``maximum``/``minimum``, ``clamp``, ``where``, ``lerp``, ``addcmul``...;
- ``comparison.py``: comparisons, bitwise and logical ops, ``isclose``, ``equal``.

This module imports the four (so their declarations are made) and re-exports the names other
modules reach through it: the helpers of ``unary.py`` and ``gamma.py``, the functions and ops
of the Tensor operators (``_tensor_methods.py``), and what ``ops/reduction/``, ``ops/linalg/``
and ``nn.functional`` call.
"""
from __future__ import annotations

from .arithmetic import _add as _add
from .arithmetic import _div as _div
from .arithmetic import _div_scalar as _div_scalar
from .arithmetic import _mul as _mul
from .arithmetic import _mul_scalar as _mul_scalar
from .arithmetic import _rsub as _rsub
from .arithmetic import _rtruediv as _rtruediv
from .arithmetic import _sub as _sub
from .arithmetic import abs as abs
from .arithmetic import add as add
from .arithmetic import add_scalar as add_scalar
from .arithmetic import div as div
from .arithmetic import div_scalar as div_scalar
from .arithmetic import floor_divide as floor_divide
from .arithmetic import mul as mul
from .arithmetic import mul_scalar as mul_scalar
from .arithmetic import neg as neg
from .arithmetic import positive as positive
from .arithmetic import remainder as remainder
from .arithmetic import rsub as rsub
from .arithmetic import sign as sign
from .arithmetic import sub as sub
from .binary_math import pow as pow
from .binary_math import xlogy as xlogy
from .comparison import _eq as _eq
from .comparison import _ge as _ge
from .comparison import _gt as _gt
from .comparison import _invert as _invert
from .comparison import _le as _le
from .comparison import _lt as _lt
from .comparison import _ne as _ne
from .comparison import bitwise_and as bitwise_and
from .comparison import bitwise_left_shift as bitwise_left_shift
from .comparison import bitwise_or as bitwise_or
from .comparison import bitwise_right_shift as bitwise_right_shift
from .comparison import bitwise_xor as bitwise_xor
from .comparison import eq as eq
from .comparison import ge as ge
from .comparison import gt as gt
from .comparison import le as le
from .comparison import lt as lt
from .comparison import ne as ne
from .operands import _OPERANDS as _OPERANDS
from .operands import _check_tensor as _check_tensor
from .operands import _invalid_arguments as _invalid_arguments
from .operands import _is_number as _is_number
from .operands import _opmath as _opmath
from .operands import _unsupported as _unsupported
from .selection import clamp_min as clamp_min
from .selection import maximum as maximum
from .selection import minimum as minimum
from .selection import where as where
