"""More of PyTorch's factory functions: ``logspace``, ``asarray``, ``empty_strided``,
``frombuffer``, the deprecated ``range`` and the signal windows (``hann_window``...); the
common ones are in ``_creation.py``.

Like those, they use the default device (``set_default_device``) when given no ``device=``.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import _device, _dtypes, _errors
from ._creation import _finish, _size, as_dtype, from_numpy, tensor
from ._out import _cpp_name
from ._tensor import Tensor

__all__ = ["logspace", "asarray", "empty_strided", "frombuffer", "range", "hann_window",
           "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]

def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None,
             requires_grad=False):
    """``steps`` values ``base ** x`` for ``x`` evenly spaced from ``start`` to ``end``
    (both included). Integer dtypes take the values truncated (wrapping, as a cast does)."""
    for label, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor) and v.ndim:
            raise RuntimeError(f"logspace only supports 0-dimensional start and end tensors, "
                               f"but got {label} with {v.ndim} dimension(s).")
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    dtype = as_dtype(dtype, "logspace") or _dtypes.get_default_dtype()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dtype is _dtypes.bool:
        raise NotImplementedError("\"logspace_cpu\" not implemented for 'Bool'")
    # PyTorch's kernel: the first half stepped up from start, the second down from end
    k = np.arange(steps, dtype=np.float64)
    by = (end - start) / (steps - 1) if steps > 1 else 0.0
    exponent = np.where(k < steps // 2, start + by * k, end - by * (steps - k - 1)) \
        if steps > 1 else np.full(steps, start, dtype=np.float64)
    with np.errstate(all="ignore"):
        values = np.power(np.float64(base), exponent)
        if dtype.category == 1:  # truncated to int64, then wrapped into the type
            values = values.astype(np.int64)
    return _finish(values.astype(dtype.np), dtype, device, requires_grad)


def range(start, end=None, step=1, *, dtype=None, layout=None, device=None,  # noqa: A001
          requires_grad=False):
    """Deprecated (PyTorch warns): values from ``start`` to ``end`` *inclusive* by ``step``,
    in the default dtype unless ``dtype`` is given. Use ``arange``."""
    _errors.warn("torch.range is deprecated and will be removed in a future release because "
                 "its behavior is inconsistent with Python's range builtin. Instead, use "
                 "torch.arange, which produces values in [start, end).")
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    dtype = as_dtype(dtype, "range") or _dtypes.get_default_dtype()
    start, end, step = (v.item() if isinstance(v, Tensor) else v for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = int((end - start) // step) + 1
    values = start + np.arange(n, dtype=np.float64) * step
    return _finish(values.astype(dtype.np), dtype, device, requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """``obj`` (a tensor, NumPy array, buffer, scalar or nested sequence) as a tensor,
    sharing its memory when it can: a tensor or array of the requested dtype and device is
    used as it is, unless ``copy=True``; ``copy=False`` refuses to copy. A tensor's copy stays
    in its graph; ``requires_grad`` (None: the tensor's own) is set on the result, as PyTorch
    sets it (on ``obj`` itself when that is returned)."""
    dtype = as_dtype(dtype, "asarray")
    if device is None and not isinstance(obj, Tensor):
        device = _device.factory_default()
    if isinstance(obj, (Tensor, np.ndarray)):
        source = obj if isinstance(obj, Tensor) else from_numpy(obj)
        shares = (dtype is None or dtype is source.dtype) and (
            device is None or _device.canonical(device) == source.device)
        if not shares and copy is False:
            raise ValueError(f"can't alias tensor with dtype '{source.dtype._word}' "
                             f"into dtype '{(dtype or source.dtype)._word}'.")
        if not (copy or not shares):
            result = source
        elif shares:
            result = source.clone()
        else:
            if requires_grad is None and source.requires_grad:
                _errors.warn(_ASARRAY_REQUIRES_GRAD)
            result = source.to(device=device or source.device, dtype=dtype or source.dtype)
        if requires_grad is False and result is not source:
            result = result.detach()
        elif requires_grad is not None:
            result.requires_grad_(requires_grad)
        return result
    if copy is False:
        raise ValueError("can't alias a Python sequence or scalar: copy=False")
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return frombuffer(obj, dtype=dtype or _dtypes.uint8, requires_grad=bool(requires_grad))
    return tensor(obj, dtype=dtype, device=device, requires_grad=bool(requires_grad))


_ASARRAY_REQUIRES_GRAD = (
    "torch.asarray: unspecified requires_grad now defaults to obj.requires_grad instead of "
    "False. Pass requires_grad=False explicitly to get the old behavior and silence this "
    "warning.")


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor of ``size`` whose elements lie ``stride`` apart in a buffer of
    its own (a NumPy strided view of it)."""
    shape = _size((size,), "empty_strided")
    if not isinstance(stride, (tuple, list)) or len(stride) != len(shape):
        raise RuntimeError("mismatch in length of strides and shape")
    dtype = as_dtype(dtype, "empty_strided") or _dtypes.get_default_dtype()
    span = 1 + sum((n - 1) * s for n, s in zip(shape, stride)) if all(shape) else 0
    buffer = np.empty(span, dtype=dtype.np)
    data = np.lib.stride_tricks.as_strided(
        buffer, shape, tuple(s * dtype.itemsize for s in stride)) if span else \
        np.empty(shape, dtype=dtype.np)
    return _finish(data, dtype, device, requires_grad)


_NOT_WRITABLE = ("The given buffer is not writable, and PyTorch does not support non-writable "
                 "tensors. This means you can write to the underlying (supposedly non-writable) "
                 "buffer using the tensor. You may want to copy the buffer to protect its data "
                 "or make it writable before converting it to a tensor. This type of warning "
                 "will be suppressed for the rest of this program.")
_warned_not_writable = []


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-d tensor over the bytes of ``buffer`` (any object with the buffer protocol),
    sharing them: ``count`` elements of ``dtype`` from byte ``offset`` (-1: all the rest)."""
    dtype = as_dtype(dtype, "frombuffer")
    view = memoryview(buffer).cast("B")
    length = view.nbytes
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % dtype.itemsize:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({dtype.itemsize})")
        count = (length - offset) // dtype.itemsize
    elif offset + count * dtype.itemsize > length:
        raise ValueError(f"requested buffer length ({count} * {dtype.itemsize} bytes) after "
                         f"offset ({offset} bytes) must not be greater than actual buffer "
                         f"length ({length} bytes)")
    if view.readonly and not _warned_not_writable:
        _warned_not_writable.append(True)
        warnings.warn(_NOT_WRITABLE, UserWarning, stacklevel=2)
    data = np.frombuffer(view, dtype=dtype.np, count=count, offset=offset)
    if view.readonly:
        data.flags.writeable = False
    out = Tensor._make(data, None, False)
    return out.requires_grad_(True) if requires_grad else out



# --------------------------------------------------------------------------- windows


def _window(name, window_length, periodic, dtype, device, requires_grad, shape):
    """A window of ``window_length`` points: ``shape(n, N)`` at ``n = 0 .. length-1`` where
    ``N - 1`` is the length (periodic: the length + 1, whose last point is dropped)."""
    dtype = as_dtype(dtype, name) or _dtypes.get_default_dtype()
    if dtype.category < 2:
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype={_cpp_name(dtype)}, "
            f"device=cpu, layout=Strided (default), requires_grad="
            f"{'true' if requires_grad else 'false (default)'}, pinned_memory=false, "
            "memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if window_length <= 1:
        values = np.ones(window_length)
    elif dtype.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dtype._word}'")
    else:
        n = np.arange(window_length, dtype=np.float64)
        values = shape(n, window_length + 1 if periodic else window_length)
    return _finish(values.astype(dtype.np), dtype, device, requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    """``0.5 - 0.5 cos(2 pi n / (N - 1))``."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 0.5 - 0.5 * np.cos(2 * np.pi * n / (N - 1)))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    """``alpha - beta cos(2 pi n / (N - 1))``."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: alpha - beta * np.cos(2 * np.pi * n / (N - 1)))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 0.42 - 0.5 * np.cos(2 * np.pi * n / (N - 1))
                   + 0.08 * np.cos(4 * np.pi * n / (N - 1)))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    """The triangle ``1 - |2n / (N - 1) - 1|``."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: 1 - np.abs(2 * n / (N - 1) - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """``I0(beta sqrt(1 - (2n / (N - 1) - 1)^2)) / I0(beta)`` (``I0``: the modified Bessel
    function of order 0)."""
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda n, N: np.i0(beta * np.sqrt(np.clip(1 - (2 * n / (N - 1) - 1) ** 2,
                                                             0, None))) / np.i0(beta))
