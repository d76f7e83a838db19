"""``ember.fft``: PyTorch's ``torch.fft`` namespace, discrete Fourier transforms.

Every transform is one of three ops (``ember/ops/fft.py``: ``_fft_c2c``, ``_fft_r2c``,
``_fft_c2r``, as PyTorch's are), applied after the input is cut or zero-padded to the
requested lengths (``n``, ``s``) by ordinary differentiable ops, so gradients, double
backward and forward-mode tangents follow PyTorch's. As in PyTorch: a float32 input gives
complex64, float64 complex128; integer and bool inputs are made the default float dtype first;
float16 and bfloat16 inputs are refused (PyTorch's CPU build refuses them too), except under
autocast, which runs the transforms PyTorch lists for it in float32. ``norm`` is
``"backward"`` (the default: the inverse transforms divide by ``n``), ``"ortho"`` (both by
``sqrt(n)``) or ``"forward"`` (the forward transforms divide by ``n``).

The Hermitian transforms are the real ones around a conjugate, as PyTorch writes them:
``hfft(x) = irfft(conj(x))`` and ``ihfft(x) = conj(rfft(x))`` with the normalisation swapped.
"""
from __future__ import annotations

import functools
import math
import numbers

from . import _dtypes
from ._creation import arange
from ._out import _out_tensor, factory_out, write_out
from ._out_rules import RULES, Rule
from ._tensor import Tensor, _wrap_dim
from .nn.functional import pad
from .ops.autocast import autocast_op
from .ops.fft import FLIPPED
from .ops.fft import _fft_c2c as _c2c
from .ops.fft import _fft_c2r as _c2r
from .ops.fft import _fft_r2c as _r2c

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]


# --------------------------------------------------------------------------- arguments


def _norm(norm):
    if norm is None:
        return "backward"
    if norm not in FLIPPED:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _scalar_name(dtype):
    return dtype._word  # 'ComplexFloat', as PyTorch names it in errors


def _floating(name, input, real=False):
    """``input`` as a float or complex tensor (integers and bools: the default dtype); the real
    transforms (``real``) refuse a complex one in PyTorch's words."""
    if not isinstance(input, Tensor):
        raise TypeError(f"fft_{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    dtype = input.dtype
    if dtype.category < 2:
        return input.to(_dtypes.get_default_dtype())
    if dtype.itemsize == 2:
        raise RuntimeError(f"Unsupported dtype {_scalar_name(dtype)}")
    if real and dtype.is_complex:
        if name == "ihfftn":
            raise RuntimeError(f"Only supports floating-point dtypes, but found: "
                               f"{_scalar_name(dtype)}")
        if name in ("rfft", "ihfft"):
            raise RuntimeError(f"{name} expects a real input tensor, but got "
                               f"{_scalar_name(dtype)}")
        raise RuntimeError(f"{name} expects a real-valued input tensor, but got "
                           f"{_scalar_name(dtype)}")
    return input


def _complex(input):
    """A real tensor as the complex one of its precision (the c2r transforms take spectra).
    Called after the input is cut to the bins a transform reads: the cast and, in the
    backward, the gradient's conjugations then cover those bins only (``irfft(x, n=5)`` of a
    1225 x 817 real ``x``: 19 -> 1.4 ms forward and backward, PyTorch 8.6 ms)."""
    if input.dtype.is_complex:
        return input
    return input.to(_dtypes.complex128 if input.dtype is _dtypes.float64 else _dtypes.complex64)


def _points(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _int(name, arg, value):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise TypeError(f"fft_{name}(): argument '{arg}' must be int, not "
                        f"{type(value).__name__}")
    return int(value)


def _resized(x, d, n):
    """``x`` cut or zero-padded to length ``n`` along dim ``d`` (PyTorch's ``narrow`` and
    ``constant_pad_nd``)."""
    size = x.shape[d]
    if n < size:
        return x.narrow(d, 0, n)
    if n > size:
        return pad(x, [0, 0] * (x.ndim - 1 - d) + [0, n - size])
    return x


def _one_dim(name, x, n, dim):
    """The dim and length of a 1-D transform (``n`` None: the input's length)."""
    d = _wrap_dim(_int(name, "dim", dim), x.ndim, scalar=False)
    return d, _points(x.shape[d] if n is None else _int(name, "n", n))


def _dims(name, x, s, dim):
    """The dims and lengths of an n-D transform, checked in PyTorch's order (-1 in ``s``:
    that dim's own length)."""
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [_wrap_dim(_int(name, "dim", d), x.ndim, scalar=False) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > x.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{x.ndim} dimensions.")
        dims = list(range(x.ndim - len(s), x.ndim))
    else:
        dims = list(range(x.ndim))
    if s is None:
        sizes = [None] * len(dims)
    else:
        sizes = [None if n == -1 else _points(_int(name, "s", n)) for n in s]
    return dims, sizes


def _resize_all(x, dims, sizes):
    for d, n in zip(dims, sizes):
        if n is not None:
            x = _resized(x, d, n)
    for d in dims:
        _points(x.shape[d])
    return x


# --------------------------------------------------------------------------- the transforms


def _c2c_or_r2c(x, dims, norm, forward):
    """The full transform of ``x``: complex to complex, or real to complex (an inverse one
    as the conjugate of the forward one with the normalisation swapped, as PyTorch does)."""
    if x.dtype.is_complex or not dims:  # (no dims: the input made complex, as in PyTorch)
        return _c2c(_complex(x), tuple(dims), norm, forward)
    if forward:
        return _r2c(x, tuple(dims), norm, None)
    return _r2c(x, tuple(dims), FLIPPED[norm], None).conj()


@autocast_op("fft_fft")
def fft(input, n=None, dim=-1, norm=None):  # noqa: A002 - PyTorch's names
    """The discrete Fourier transform of ``input`` along ``dim``, cut or zero-padded to
    ``n`` points first."""
    x = _floating("fft", input)
    d, n = _one_dim("fft", x, n, dim)
    return _c2c_or_r2c(_resized(x, d, n), [d], _norm(norm), True)


@autocast_op("fft_ifft")
def ifft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The inverse of ``fft``: divided by ``n`` under the default ``norm``."""
    x = _floating("ifft", input)
    d, n = _one_dim("ifft", x, n, dim)
    return _c2c_or_r2c(_resized(x, d, n), [d], _norm(norm), False)


@autocast_op("fft_rfft")
def rfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The ``n // 2 + 1`` non-negative frequencies of the transform of a real ``input``."""
    x = _floating("rfft", input, real=True)
    d, n = _one_dim("rfft", x, n, dim)
    return _r2c(_resized(x, d, n), (d,), _norm(norm), n)


def _irfft_length(name, x, n, d):
    """The output length of a one-sided inverse (default ``2 * (bins - 1)``)."""
    return _points(2 * (x.shape[d] - 1) if n is None else _int(name, "n", n))


@autocast_op("fft_irfft")
def irfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The real signal of ``n`` points whose ``rfft`` is ``input`` (the spectrum's missing
    half is the conjugate of the given one; the imaginary parts of its DC and Nyquist bins
    are ignored)."""
    x = _floating("irfft", input)
    d = _wrap_dim(_int("irfft", "dim", dim), x.ndim, scalar=False)
    n = _irfft_length("irfft", x, n, d)
    return _c2r(_complex(_resized(x, d, n // 2 + 1)), (d,), _norm(norm), n)


@autocast_op("fft_hfft")
def hfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The (real) transform of a Hermitian-symmetric signal given by its first half: no
    scaling under the default ``norm``."""
    x = _floating("hfft", input)
    d = _wrap_dim(_int("hfft", "dim", dim), x.ndim, scalar=False)
    n = _irfft_length("hfft", x, n, d)
    return _c2r(_complex(_resized(x, d, n // 2 + 1)).conj(), (d,), FLIPPED[_norm(norm)], n)


@autocast_op("fft_ihfft")
def ihfft(input, n=None, dim=-1, norm=None):  # noqa: A002
    """The inverse of ``hfft``: the first half of the (Hermitian) inverse transform of a real
    ``input``."""
    x = _floating("ihfft", input, real=True)
    d, n = _one_dim("ihfft", x, n, dim)
    return _r2c(_resized(x, d, n), (d,), FLIPPED[_norm(norm)], n).conj()


@autocast_op("fft_fftn")
def fftn(input, s=None, dim=None, norm=None):  # noqa: A002
    """The transform over the dims ``dim`` (default: the last ``len(s)``, or all)."""
    x = _floating("fftn", input)
    dims, sizes = _dims("fftn", x, s, dim)
    return _c2c_or_r2c(_resize_all(x, dims, sizes), dims, _norm(norm), True)


@autocast_op("fft_ifftn")
def ifftn(input, s=None, dim=None, norm=None):  # noqa: A002
    """The inverse of ``fftn``."""
    x = _floating("ifftn", input)
    dims, sizes = _dims("ifftn", x, s, dim)
    x = _resize_all(x, dims, sizes)
    return _c2c(_complex(x), tuple(dims), _norm(norm), False)  # (PyTorch: no conjugate view)


def _rfftn(name, input, s, dim, norm, conj=False):
    x = _floating(name, input, real=True)
    dims, sizes = _dims(name, x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    x = _resize_all(x, dims, sizes)
    if not conj:
        return _r2c(x, tuple(dims), norm, x.shape[dims[-1]])
    # ihfftn, as PyTorch computes it: the conjugate of the one-sided transform of the last dim,
    # then the inverse transform of the others (a conjugate view when there are none)
    out = _r2c(x, (dims[-1],), norm, x.shape[dims[-1]]).conj()
    return _c2c(out, tuple(dims[:-1]), FLIPPED[norm], False) if len(dims) > 1 else out


def _irfftn(name, input, s, dim, norm, conj=False):
    x = _floating(name, input)
    dims, sizes = _dims(name, x, s, dim)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = sizes[-1]
    n = _irfft_length(name, x, last, dims[-1])
    x = _resize_all(x, dims[:-1], sizes[:-1])
    x = _complex(_resized(x, dims[-1], n // 2 + 1))
    return _c2r(x.conj() if conj else x, tuple(dims), norm, n)


@autocast_op("fft_rfftn")
def rfftn(input, s=None, dim=None, norm=None):  # noqa: A002
    """``fftn`` of a real input, the last of ``dim`` kept to its non-negative frequencies."""
    return _rfftn("rfftn", input, s, dim, _norm(norm))


@autocast_op("fft_irfftn")
def irfftn(input, s=None, dim=None, norm=None):  # noqa: A002
    """The inverse of ``rfftn``: a real result, its last transformed dim ``s[-1]`` long
    (default ``2 * (bins - 1)``)."""
    return _irfftn("irfftn", input, s, dim, _norm(norm))


def hfftn(input, s=None, dim=None, norm=None):  # noqa: A002
    """The n-D ``hfft``: the real transform of a Hermitian signal given by its half along
    the last of ``dim``."""
    return _irfftn("hfftn", input, s, dim, FLIPPED[_norm(norm)], conj=True)


def ihfftn(input, s=None, dim=None, norm=None):  # noqa: A002
    """The inverse of ``hfftn``."""
    return _rfftn("ihfftn", input, s, dim, FLIPPED[_norm(norm)], conj=True)


@autocast_op("fft_fft2")
def fft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    """``fftn`` over two dims (default: the last two)."""
    return fftn(input, s, dim, norm)


@autocast_op("fft_ifft2")
def ifft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    """``ifftn`` over two dims."""
    return ifftn(input, s, dim, norm)


@autocast_op("fft_rfft2")
def rfft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    """``rfftn`` over two dims."""
    return rfftn(input, s, dim, norm)


@autocast_op("fft_irfft2")
def irfft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    """``irfftn`` over two dims."""
    return irfftn(input, s, dim, norm)


def hfft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    """``hfftn`` over two dims."""
    return hfftn(input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None):  # noqa: A002
    """``ihfftn`` over two dims."""
    return ihfftn(input, s, dim, norm)


# --------------------------------------------------------------------------- helpers


def _freq(name, count, n, d, dtype, device, requires_grad):
    dtype = _dtypes.as_dtype(dtype, name) or _dtypes.get_default_dtype()
    if dtype.category < 2:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if count < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {count}: [{count}]")
    k = arange(count, dtype=dtype, device=device)
    if name == "fftfreq":
        k[(n + 1) // 2:] -= n  # the negative frequencies
    spacing = n * d
    # (PyTorch's 1 / (n * d) in C++ doubles: infinite for n * d == 0, so 0 * that is NaN)
    out = k * (1.0 / spacing if spacing else math.copysign(math.inf, spacing))
    return out.requires_grad_() if requires_grad else out


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The frequencies of ``fft``'s bins for ``n`` samples spaced ``d`` apart:
    ``[0, 1, ..., -(n // 2), ..., -1] / (d * n)``."""
    n = _int("fftfreq", "n", n)
    return _freq("fftfreq", n, n, d, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The frequencies of ``rfft``'s bins: ``[0, 1, ..., n // 2] / (d * n)``."""
    n = _int("rfftfreq", "n", n)
    half = -(-n // 2) if n < 0 else n // 2  # (C++'s division, rounding toward zero)
    return _freq("rfftfreq", half + 1, n, d, dtype, device, requires_grad)


def _shift(input, dim, sign):
    if dim is None:
        dims = list(range(input.ndim))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    shifts = [input.shape[_wrap_dim(d, input.ndim)] // 2 * sign for d in dims]
    return input.roll(shifts, dims)


def fftshift(input, dim=None):  # noqa: A002
    """``input`` rolled so the zero frequency is in the middle (dims ``dim``, default all)."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):  # noqa: A002
    """The inverse of ``fftshift``."""
    return _shift(input, dim, -1)


# --------------------------------------------------------------------------- out=

# Each transform's name in its ``out=`` dtype error (the n-D ones share their kernel's) and
# the dtypes its ``out`` takes: any complex one, any floating one (the real results), or
# (a conjugate view: ``ifft`` of a real input, ``ihfft``) exactly the result's.
_OUT = {"fft": ("fft", "complex"), "ifft": ("ifft", "complex"), "rfft": ("rfft", "complex"),
        "irfft": ("irfft", "floating"), "hfft": ("hfft", "floating"),
        "ihfft": ("ihfft", "complex"), "fft2": ("fftn", "complex"), "ifft2": ("fftn", "complex"),
        "fftn": ("fftn", "complex"), "ifftn": ("fftn", "complex"),
        "rfft2": ("rfftn", "complex"), "rfftn": ("rfftn", "complex"),
        "irfft2": ("irfftn", "floating"), "irfftn": ("irfftn", "floating"),
        "hfft2": ("hfftn", "floating"), "hfftn": ("hfftn", "floating"),
        "ihfft2": ("ihfftn", "complex"), "ihfftn": ("ihfftn", "complex")}
_ATEN = {"FftC2CBackward0": "_fft_c2c", "FftR2CBackward0": "_fft_r2c",
         "FftC2RBackward0": "_fft_c2r"}


def _aten_of(result):
    """The ATen name of the transform that made ``result`` (for the autograd refusal)."""
    node = result.grad_fn
    for _ in range(2):  # the transform, or the conjugate just after it
        if node is None:
            break
        name = _ATEN.get(type(node).__name__)
        if name is not None:
            return name
        node = node.next_functions[0][0]
    return "_fft_c2c"


def _write_out(name, result, out):
    """``result`` written into ``out`` with PyTorch's checks (see ``ember/_out.py``)."""
    _out_tensor(f"fft_{name}", out)
    label, accepts = _OUT[name]
    dtype = out.dtype
    if result.is_conj() and dtype is not result.dtype and dtype.is_complex:
        # (a conjugate view, the inverse of a real input: its kernel takes its own dtype only)
        raise RuntimeError(f"Found dtype {_scalar_name(dtype)} but expected "
                           f"{_scalar_name(result.dtype)}")
    if (dtype.category == 3) != (accepts != "floating") or dtype.category < 2:
        kind = "a floating point" if accepts == "floating" else "a complex"
        raise RuntimeError(f"{label} expects {kind} output tensor, but got {_scalar_name(dtype)}")
    # A conjugate view is PyTorch's composite (its ``out`` joins the graph by a copy; PyTorch
    # itself leaves a broken ``grad_fn=<NotImplemented>`` there); a transform refuses grad.
    rule = Rule(aten=_aten_of(result), check="any", composite=result.is_conj())
    return write_out(None, out, result.resolve_conj(), rule)


def _with_out(fn):
    def function(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        return result if out is None else _write_out(fn.__name__, result, out)
    functools.update_wrapper(function, fn)
    return function


def _freq_with_out(fn):
    def function(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        _out_tensor(f"fft_{fn.__name__}", out)
        dtype = kwargs.pop("dtype", None)
        return factory_out(RULES["arange"], out, dtype,  # (arange's, and its resize warning)
                           lambda dt: fn(*args, dtype=dt, **kwargs))
    functools.update_wrapper(function, fn)
    return function


for _name in _OUT:
    globals()[_name] = _with_out(globals()[_name])
fftfreq = _freq_with_out(fftfreq)
rfftfreq = _freq_with_out(rfftfreq)
del _name
