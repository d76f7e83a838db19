"""Complex tensors from real ones: ``complex(real, imag)`` and ``polar(abs, angle)``, with
derivatives (``ComplexBackward0``, ``PolarBackward0``); and ``conj_physical``, the conjugate
computed at once (``docs/add_an_op.md`` walks through its declaration).

A real input's gradient is the real part of what its rule gives (the engine keeps it, as
PyTorch does). The rules receive ``g`` conjugated (as all of ember's do) and return
``g * dz/dx``: the real part is PyTorch's ``Re(conj(grad) * dz/dx)``.
"""
from __future__ import annotations

import numpy as np

from .. import _dtypes
from .operands import _check_tensor
from .registry import defop, public


# Not holomorphic (a map of real inputs): the rules are stated in PyTorch's convention, the
# real and imaginary parts of the gradient, as views; stated as ``g`` and ``g * 1j`` they cost
# four passes over a complex gradient (the engine's two conjugations, a product, a cast).
@defop("complex", jvp="linear", batch="pointwise", method=False, holomorphic=False)
def _complex(xp, real, imag):
    # the parts written into one buffer: two strided copies, not ``real + 1j * imag``'s three
    # passes and two temporaries
    out = xp.empty(np.broadcast_shapes(real.shape, imag.shape),
                   dtype=xp.complex128 if real.dtype.itemsize == 8 else xp.complex64)
    out.real = real
    out.imag = imag
    return out


_complex.defvjp(lambda xp, g, ans, real, imag: xp.real(g),
                lambda xp, g, ans, real, imag: xp.imag(g))


@defop("polar", jvp="elementwise", batch="pointwise", method=False)
def _polar(xp, abs, angle):  # noqa: A002 - PyTorch's parameter name
    z = abs * xp.cos(angle) + 1j * (abs * xp.sin(angle))
    return z if abs.dtype.itemsize == 8 else z.astype(xp.complex64)


# dz/dabs = e^(i angle), dz/dangle = i abs e^(i angle)
_polar.defvjp(lambda xp, g, ans, abs, angle: g * (xp.cos(angle) + 1j * xp.sin(angle)),
              lambda xp, g, ans, abs, angle: g * (xp.cos(angle) + 1j * xp.sin(angle))
              * (1j * abs))


def _checked(name, first, second, names):
    """PyTorch's checks: two tensors, floating, of one dtype (float16 has no complex half in
    ember: complex32 does not exist in NumPy)."""
    _check_tensor(name, first, names[0], 1)
    _check_tensor(name, second, names[1], 2)
    if first.dtype.category != 2 or second.dtype.category != 2:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{first.dtype._word} and {second.dtype._word}")
    if first.dtype is not second.dtype:
        raise RuntimeError(f"Expected object of scalar type {first.dtype._word} but got "
                           f"scalar type {second.dtype._word} for second argument")
    if first.dtype is _dtypes.float16:
        raise TypeError(f"{name}(): ember has no complex32 (ComplexHalf): NumPy has no such "
                        "type; use float32 or float64 parts")


@_complex.public
def complex(real, imag):  # noqa: A001 - PyTorch's public name
    """The complex tensor ``real + i imag`` (broadcast); float32 parts give complex64,
    float64 parts complex128."""
    _checked("complex", real, imag, ("real", "imag"))
    return _complex(real, imag)


@_polar.public
def polar(abs, angle):  # noqa: A002 - PyTorch's parameter name
    """The complex tensor ``abs * (cos(angle) + i sin(angle))`` (broadcast)."""
    _checked("polar", abs, angle, ("abs", "angle"))
    return _polar(abs, angle)


# --------------------------------------------------------------------------- conj_physical


@defop("conj_physical", n_in=1, jvp="linear", batch="pointwise")
def _conj_physical(xp, input):
    return xp.conj(input)


_conj_physical.defvjp(lambda xp, g, ans, input: xp.conj(g))


@_conj_physical.public
def conj_physical(input):
    """The complex conjugate, computed at once (never a lazy ``conj()`` view); a real or
    integer tensor is returned as it is."""
    _check_tensor("conj_physical", input)
    return _conj_physical(input) if input.is_complex() else input


# ``x.conj_physical_()`` is PyTorch's own overload (``ConjPhysicalBackward1``), for real
# tensors too: the same op, numbered 1.
_conj_physical_1 = defop("conj_physical", n_in=1, overload=1, jvp="linear", batch="pointwise")(
    _conj_physical.forward).defvjp(*_conj_physical.rules)


@public(function=False)
def conj_physical_(self):
    """In-place version of :func:`conj_physical`."""
    return self._inplace(_conj_physical_1)
