"""Number theory of integer tensors: ``gcd`` and ``lcm`` (and their in-place forms), with
broadcasting and PyTorch's type promotion; like PyTorch they have no floating or bool kernel
and no derivative. Also ``isreal``: whether each element has a zero imaginary part.

Each is ``ember.<name>`` and a Tensor method; ``gcd_`` and ``lcm_`` are the in-place forms
(declared: ``_surface.py``)."""
from __future__ import annotations

from .. import _creation, _dtypes
from .operands import _check_tensor, _of_two_tensors, _unsupported
from .registry import defop, public

_gcd = defop("gcd", promote=True, batch="pointwise", inplace=True)(
    lambda xp, input, other: xp.gcd(input, other))
_lcm = defop("lcm", promote=True, batch="pointwise", inplace=True)(
    lambda xp, input, other: xp.lcm(input, other))


def _integers_only(kernel, op):
    def run(input, other):
        for t in (input, other):
            if t._data.dtype.kind not in "iu":
                raise _unsupported(kernel, t.dtype)
        return op(input, other)
    return run


gcd = _gcd.public(_of_two_tensors(
    "gcd", _integers_only("gcd_cpu", _gcd),
    "The greatest common divisor of each pair (``gcd(0, 0) = 0``), >= 0."))
lcm = _lcm.public(_of_two_tensors(
    "lcm", _integers_only("lcm_cpu", _lcm),
    "The least common multiple of each pair (0 if either is 0), >= 0."))


@public
def isreal(input):
    """True where the element's imaginary part is 0 (everywhere for a real tensor)."""
    _check_tensor("isreal", input)
    if not input.is_complex():
        return _creation.ones_like(input, dtype=_dtypes.bool)
    return input.imag == 0
