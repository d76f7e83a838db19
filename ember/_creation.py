"""Tensor creation: ``tensor``, ``zeros``, ``arange``, ``rand``..., and the legacy constructors."""
from __future__ import annotations

import math
import warnings

import numpy as np

from . import _device, _dtypes, _errors, _random
from ._out import factory_out
from ._tensor import Tensor
from .ops.registry import vmap_state as _vmap

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "zeros_like",
           "ones_like", "full_like", "empty_like", "arange", "linspace", "eye", "rand", "randn",
           "randint", "randperm", "rand_like", "randn_like", "randint_like", "scalar_tensor",
           "tril_indices", "triu_indices"]


def _finish(data, dtype, device, requires_grad):
    """Place raw host data on its device and wrap it; ``requires_grad`` checked as PyTorch does."""
    dev = _device.canonical(device)
    if dev.type != "cpu":
        data = _device.move(data, dev)
    if requires_grad and data.dtype.kind not in "fc":
        raise RuntimeError(_errors.INT_FACTORY_REQUIRES_GRAD)
    return Tensor._make(data, None, bool(requires_grad))


def _infer_dtype(data):
    """The dtype PyTorch infers for Python data: bool, int64, the default float, or complex."""
    kinds = set()
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, Tensor):
            kinds.add(x.dtype)
        elif isinstance(x, np.ndarray) or isinstance(x, np.generic):
            kinds.add(_dtypes.from_numpy_dtype(x.dtype))
        else:
            kinds.add(_dtypes.scalar_dtype(x))
    if not kinds:
        return _dtypes.get_default_dtype()
    out = None
    for k in kinds:
        out = k if out is None else _dtypes.promote_types(out, k)
    return out


def _to_host(data):
    if isinstance(data, Tensor):
        return _device.to_numpy(data._data)
    if isinstance(data, (list, tuple)):
        return [_to_host(x) for x in data]
    return data


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor copying ``data`` (nested lists, scalars, arrays or tensors)."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
    if dtype is None:
        if isinstance(data, np.ndarray):
            dtype = _dtypes.from_numpy_dtype(data.dtype)
        else:
            dtype = _infer_dtype(data)
    arr = np.array(_to_host(data), dtype=dtype.np)
    return _finish(arr, dtype, device, requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return tensor(s, dtype=dtype or _dtypes.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a NumPy array or tensor when it can."""
    if isinstance(data, Tensor):
        out = data if dtype is None else data.to(dtype)
        return out if device is None else out.to(device)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.np == data.dtype) and (
            device is None or _device.canonical(device).type == "cpu"):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray):
    """A tensor sharing memory with ``ndarray`` (writes show through both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtypes.from_numpy_dtype(ndarray.dtype)
    return Tensor._make(ndarray, None, False)


def _size(size, name="empty"):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) or isinstance(s, bool):
            raise TypeError(f"empty(): argument 'size' must be tuple of ints, but found element "
                            f"of type {type(s).__name__} at pos 0")
        if s < 0:
            raise RuntimeError(f"{name}: Dimension size must be non-negative.")
    return tuple(int(s) for s in size)


def _filled(fill, size, dtype, device, requires_grad):
    dtype = dtype or _dtypes.get_default_dtype()
    arr = fill(_size(size, fill.__name__), dtype=dtype.np)
    return _finish(arr, dtype, device, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    if out is not None:
        return factory_out("aten::zeros", out, dtype, lambda dt: zeros(*size, dtype=dt))
    return _filled(np.zeros, size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    if out is not None:
        return factory_out("aten::ones", out, dtype, lambda dt: ones(*size, dtype=dt))
    return _filled(np.ones, size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None,
          memory_format=None, pin_memory=False):
    if out is not None:
        return factory_out("aten::empty", out, dtype, lambda dt: empty(*size, dtype=dt))
    return _filled(np.empty, size, dtype, device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None):
    if out is not None:
        return factory_out("aten::full", out, dtype,
                           lambda dt: full(size, fill_value, dtype=dt))
    if dtype is None:
        dtype = _dtypes.scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor)
                                     else fill_value)
    arr = np.full(_size((size,)), fill_value, dtype=dtype.np)
    return _finish(arr, dtype, device, requires_grad)


def _like(maker, input, dtype, device, requires_grad):
    levels = getattr(input, "_levels", None)  # inside vmap: one per sample, as PyTorch
    out = maker(input._data.shape if levels else input.shape, dtype=dtype or input.dtype,
                requires_grad=requires_grad)
    out = out.to(device or input.device)
    if levels:
        from .ops import batching
        out = batching.wrap(out, levels)
    return out


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(zeros, input, dtype, device, requires_grad)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(ones, input, dtype, device, requires_grad)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _like(empty, input, dtype, device, requires_grad)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    return _like(lambda shape, **kw: full(shape, fill_value, **kw), input, dtype, device,
                 requires_grad)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None):
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a float is given."""
    if out is not None:
        return factory_out("aten::arange", out, dtype,
                           lambda dt: arange(start, end, step, dtype=dt),
                           resized=_errors.ARANGE_OUT_RESIZED)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        dtype = (_dtypes.int64 if all(isinstance(v, int) for v in vals)
                 else _dtypes.get_default_dtype())
    n = max(0, math.ceil((vals[1] - vals[0]) / vals[2]))
    arr = (vals[0] + np.arange(n, dtype=np.float64 if dtype.category >= 2 else np.int64)
           * vals[2]).astype(dtype.np)
    return _finish(arr, dtype, device, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, out=None):
    if out is not None:
        return factory_out("aten::linspace", out, dtype,
                           lambda dt: linspace(start, end, steps, dtype=dt))
    dtype = dtype or _dtypes.get_default_dtype()
    arr = np.linspace(start, end, steps).astype(dtype.np)
    return _finish(arr, dtype, device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None):
    if out is not None:
        return factory_out("aten::eye", out, dtype, lambda dt: eye(n, m, dtype=dt))
    dtype = dtype or _dtypes.get_default_dtype()
    return _finish(np.eye(n, m, dtype=dtype.np), dtype, device, requires_grad)


def _drawn(sample, size, generator, dtype, device, requires_grad):
    """A tensor of ``sample(rng, shape)``; inside ``vmap(randomness='different')`` one draw
    per sample (a batched tensor)."""
    levels, batch = (), ()
    if _vmap.depth:
        from .ops import batching
        levels, batch = batching.random_batch()
    arr = sample(_random.rng(generator), batch + size).astype(dtype.np)
    out = _finish(arr, dtype, device, requires_grad)
    return batching.wrap(out, levels) if levels else out


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    """Uniform samples on [0, 1)."""
    if out is not None:
        return factory_out("aten::rand", out, dtype,
                           lambda dt: rand(*size, generator=generator, dtype=dt))
    return _drawn(lambda rng, s: rng.random(s), _size(size), generator,
                  dtype or _dtypes.get_default_dtype(), device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    """Standard normal samples."""
    if out is not None:
        return factory_out("aten::randn", out, dtype,
                           lambda dt: randn(*size, generator=generator, dtype=dt))
    return _drawn(lambda rng, s: rng.standard_normal(s), _size(size), generator,
                  dtype or _dtypes.get_default_dtype(), device, requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False):
    """Integers drawn uniformly from [low, high)."""
    if high is None:
        low, high = 0, low
    return _drawn(lambda rng, s: rng.integers(low, high, size=s), _size((size,)), generator,
                  dtype or _dtypes.int64, device, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    dtype = dtype or _dtypes.int64
    arr = _random.rng(generator).permutation(n).astype(dtype.np)
    return _finish(arr, dtype, device, requires_grad)


def rand_like(input, *, dtype=None, device=None, requires_grad=False):
    return rand(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad=False):
    return randn(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False):
    return randint(low, high, input.shape, dtype=dtype or input.dtype,
                   device=device or input.device)


# --------------------------------------------------------------------------- legacy types


def legacy_new(dtype, args, device=None):
    """``torch.FloatTensor(data)`` or ``torch.FloatTensor(2, 3)`` (uninitialised)."""
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        data = args[0]
        if isinstance(data, Tensor):
            return data if data.dtype is dtype else data.to(dtype)
        return tensor(data, dtype=dtype, device=device)
    return empty(*args, dtype=dtype, device=device)


class _LegacyMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and not obj.is_cuda


def _legacy(name, dtype):
    def __new__(cls, *args, device=None):
        return legacy_new(dtype, args, device)
    return _LegacyMeta(name, (), {"__new__": __new__, "dtype": dtype,
                                  "__doc__": f"Legacy constructor for {dtype!r} tensors."})


FloatTensor = _legacy("FloatTensor", _dtypes.float32)
DoubleTensor = _legacy("DoubleTensor", _dtypes.float64)
HalfTensor = _legacy("HalfTensor", _dtypes.float16)
LongTensor = _legacy("LongTensor", _dtypes.int64)
IntTensor = _legacy("IntTensor", _dtypes.int32)
ShortTensor = _legacy("ShortTensor", _dtypes.int16)
CharTensor = _legacy("CharTensor", _dtypes.int8)
ByteTensor = _legacy("ByteTensor", _dtypes.uint8)
BoolTensor = _legacy("BoolTensor", _dtypes.bool)


def _triangle_indices(name, upper, row, col, offset, dtype, device, requires_grad):
    """The ``(2, N)`` row/column coordinates of a triangle of a ``row x col`` matrix, row by
    row (``np.tril_indices`` / ``np.triu_indices`` give the same order)."""
    dtype = _dtypes.int64 if dtype is None else dtype
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if dtype not in (_dtypes.int64, _dtypes.int32):
        raise NotImplementedError(f"\"{name}\" not implemented for '{dtype._legacy[:-6]}'")
    make = np.triu_indices if upper else np.tril_indices
    data = np.stack(make(row, offset, col)).astype(dtype.np) if row and col else \
        np.zeros((2, 0), dtype=dtype.np)
    return _finish(data, dtype, device, requires_grad)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 requires_grad=False):
    """The coordinates of the lower triangle (on and below diagonal ``offset``)."""
    return _triangle_indices("tril_indices", False, row, col, offset, dtype, device,
                             requires_grad)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 requires_grad=False):
    """The coordinates of the upper triangle (on and above diagonal ``offset``)."""
    return _triangle_indices("triu_indices", True, row, col, offset, dtype, device,
                             requires_grad)
