"""Tensor creation: ``tensor``, ``zeros``, ``arange``, ``rand``..., and the legacy constructors."""
from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np

from . import (
    _device,
    _dispatch,
    _dtypes,
    _errors,
    _memory_format,
    _random,
    _random_signatures,
    _recording,
)
from ._dtypes import _type_name, as_dtype
from ._tensor import Tensor
from ._upcalls import install

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ._dtypes import dtype as DType
    from ._memory_format import memory_format as MemoryFormat
    from ._random import Generator
    from ._tensor import layout as Layout
    from ._typing import DeviceLike, DTypeLike, Number, ShapeLike

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "zeros_like",
           "ones_like", "full_like", "empty_like", "arange", "linspace", "eye", "rand", "randn",
           "randint", "randperm", "rand_like", "randn_like", "randint_like", "scalar_tensor",
           "tril_indices", "triu_indices"]


def _finish(data, dtype, device, requires_grad):
    """Place raw host data on its device (the default device when ``device`` is None) and wrap
    it; ``requires_grad`` checked as PyTorch does."""
    dev = _device.canonical(_device.factory_default() if device is None else device)
    if dev.type != "cpu":
        data = _device.move(data, dev)
    if requires_grad and not _dtypes.is_inexact(data.dtype):
        raise RuntimeError(_errors.INT_FACTORY_REQUIRES_GRAD)
    return Tensor._make(data, None, bool(requires_grad))


_SCALAR_TYPES = {bool, int, float, complex}


def _infer_dtype(data: Any) -> DType:
    """The dtype PyTorch infers for Python data: bool, int64, the default float, or complex."""
    kinds: set[DType] = set()
    stack = [data]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, tuple)):
            types = set(map(type, x))
            if types <= _SCALAR_TYPES:  # a row of Python numbers (1M tokens: 0.2 s -> 10 ms)
                kinds.update(_dtypes.scalar_dtype(t()) for t in types)
            else:
                stack.extend(x)
        elif isinstance(x, Tensor):
            kinds.add(x.dtype)
        elif isinstance(x, np.ndarray) or isinstance(x, np.generic):
            kinds.add(_dtypes.from_numpy_dtype(x.dtype))
        else:
            kinds.add(_dtypes.scalar_dtype(x))
    if not kinds:
        return _dtypes.get_default_dtype()
    out: Any = None
    for k in kinds:
        out = k if out is None else _dtypes.promote_types(out, k)
    return out


def _to_host(data):
    if isinstance(data, Tensor):
        return _device.to_numpy(data._data)
    if isinstance(data, (list, tuple)):
        if set(map(type, data)) <= _SCALAR_TYPES:
            return data  # a row of Python numbers, as NumPy reads it
        return [_to_host(x) for x in data]
    return data


def tensor(data: Any, *, dtype: DTypeLike = None, device: DeviceLike = None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """A new tensor copying ``data`` (nested lists, scalars, arrays or tensors)."""
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.detach()."
            "clone() or sourceTensor.detach().clone().requires_grad_(True), rather than "
            "torch.tensor(sourceTensor).", UserWarning, stacklevel=2)
    dtype = as_dtype(dtype, "tensor")
    if dtype is None:
        if isinstance(data, np.ndarray):
            dtype = _dtypes.from_numpy_dtype(data.dtype)
        else:
            dtype = _infer_dtype(data)
    if isinstance(data, np.ndarray):  # (compiled mode reads the array anew: see there)
        return _finish(_recording.from_array(data, np.array(data, dtype=dtype.np)), dtype,
                       device, requires_grad)
    arr = np.array(_to_host(data), dtype=dtype.np)
    return _finish(_recording.constant(arr), dtype, device, requires_grad)


def scalar_tensor(s: Number | complex | Tensor, *, dtype: DTypeLike = None,
                  device: DeviceLike = None, requires_grad: bool = False) -> Tensor:
    return tensor(s, dtype=dtype or _dtypes.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


def as_tensor(data: Any, dtype: DTypeLike = None, device: DeviceLike = None) -> Tensor:
    """Like ``tensor`` but shares memory with a NumPy array or tensor when it can."""
    dtype = as_dtype(dtype, "as_tensor")
    if device is None:
        device = _device.factory_default()
    if isinstance(data, Tensor):
        out = data if dtype is None else data.to(dtype)
        return out if device is None else out.to(device)
    if isinstance(data, np.ndarray) and (dtype is None or dtype.np == data.dtype) and (
            device is None or _device.canonical(device).type == "cpu"):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (writes show through both ways)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    if type(ndarray.dtype) in _dtypes.NUMPY_LACKS:  # (as PyTorch: NumPy has none)
        raise TypeError(f"can't convert np.ndarray of type ml_dtypes.{ndarray.dtype.name}. The "
                        "only supported types are: float64, float32, float16, complex64, "
                        "complex128, int64, int32, int16, int8, uint8, and bool.")
    _dtypes.from_numpy_dtype(ndarray.dtype)
    return Tensor._make(_recording.from_array(ndarray, ndarray), None, False)


def _int_like(v):
    """Whether PyTorch's argument parser reads ``v`` as an int (a 0-d integer tensor too)."""
    if isinstance(v, Tensor):
        return v.ndim == 0 and v._data.dtype.kind in "iu"
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _size(size, name="empty", keyword=None, position=1):
    """The sizes of ``name(*size)`` or ``name(size=keyword)``, read as PyTorch's argument
    parser reads an ``int[]`` argument, with its errors; negative sizes refused."""
    where = f"argument 'size' (position {position})"
    if keyword is not None:
        if size:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        if not isinstance(keyword, (tuple, list)):
            raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not "
                            f"{_type_name(keyword)}")
        size, where = (keyword,), "argument 'size'"
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    elif len(size) == 1 and not _int_like(size[0]):
        raise TypeError(f"{name}(): {where} must be tuple of ints, not {_type_name(size[0])}")
    elif size and not _int_like(size[0]):
        raise TypeError(f"{name}() takes 1 positional argument but {len(size)} were given")
    for k, s in enumerate(size):
        if _int_like(s):
            continue
        if k == 0:
            raise TypeError(f"{name}(): {where} must be tuple of ints, but found element of "
                            f"type {_type_name(s)} at pos 0")
        raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos {k + 1} "
                        f"with error \"type must be tuple of ints,but got {_type_name(s)}\"")
    return check_sizes(tuple(int(s.item() if isinstance(s, Tensor) else s) for s in size), name)


def check_sizes(sizes, name=None):
    """``sizes``, with PyTorch's error for a negative one (``zeros`` words it its own way)."""
    for s in sizes:
        if s < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(sizes)}")
    return sizes


def _filled(fill, size, dtype, device, requires_grad, keyword):
    name = fill.__name__
    dtype = as_dtype(dtype, name) or _dtypes.get_default_dtype()
    arr = fill(_size(size, name, keyword), dtype=dtype.np)
    return _finish(_recording.constant(arr), dtype, device, requires_grad)


def zeros(*args: ShapeLike, size: Sequence[int] | None = None, dtype: DTypeLike = None,
          device: DeviceLike = None, requires_grad: bool = False,
          layout: Layout | None = None) -> Tensor:
    return _filled(np.zeros, args, dtype, device, requires_grad, size)


def ones(*args: ShapeLike, size: Sequence[int] | None = None, dtype: DTypeLike = None,
         device: DeviceLike = None, requires_grad: bool = False,
         layout: Layout | None = None) -> Tensor:
    return _filled(np.ones, args, dtype, device, requires_grad, size)


def empty(*args: ShapeLike, size: Sequence[int] | None = None, dtype: DTypeLike = None,
          device: DeviceLike = None, requires_grad: bool = False, layout: Layout | None = None,
          memory_format: MemoryFormat | None = None, pin_memory: bool = False) -> Tensor:
    fmt = _memory_format.check(memory_format, "empty", _memory_format.contiguous_format)
    if fmt is _memory_format.preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    out = _filled(np.empty, args, dtype, device, requires_grad, size)
    if fmt is not _memory_format.contiguous_format:
        out._data = _memory_format.relayout(out._data, fmt)
    return out


# C++ type names in PyTorch's "cannot be converted" errors
_CONVERT_NAMES = {"int8": "int8_t", "int16": "int16_t", "int32": "int", "int64": "int64_t",
                  "uint8": "uint8_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                  "float32": "float", "float64": "double"}


def _check_fill(fill_value, dtype):
    """PyTorch's overflow check of a fill value converted to ``dtype`` (c10::checked_convert):
    integers may wrap into unsigned types, floats may be infinite, complex needs no imaginary
    part unless ``dtype`` is complex; bool takes anything."""
    v = fill_value.item() if isinstance(fill_value, Tensor) else fill_value
    if dtype is _dtypes.bool or dtype.is_complex:
        return
    if isinstance(v, complex) and v.imag:
        bad = True
    else:
        v = v.real if isinstance(v, complex) else v
        if dtype.is_floating_point:
            info = _finfo(dtype)
            bad = math.isfinite(v) and not -info.max <= v <= info.max
        else:
            lo, hi = _dtypes.int_bounds(dtype.np)
            if isinstance(v, (int, np.integer)) and lo == 0 and v < 0:
                bad = -int(v) > hi  # negative integers wrap, as in two's complement
            else:
                bad = not (math.isfinite(v) and lo <= v <= hi)
    if bad:
        raise RuntimeError(f"value cannot be converted to type {_CONVERT_NAMES[dtype.name]} "
                           "without overflow")


def _finfo(dtype):
    return _dtypes.np_finfo(dtype.np)


def full(size: Sequence[int], fill_value: Number | complex | Tensor, *, dtype: DTypeLike = None,
         device: DeviceLike = None, requires_grad: bool = False) -> Tensor:
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{_type_name(size)}")
    if isinstance(fill_value, Tensor) and fill_value.ndim == 0:
        fill_value = fill_value.item()
    elif not isinstance(fill_value, (int, float, complex, np.number, np.bool_)):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not "
                        f"{_type_name(fill_value)}")
    if isinstance(fill_value, (np.number, np.bool_)):
        fill_value = fill_value.item()
    dtype = as_dtype(dtype, "full") or _dtypes.scalar_dtype(fill_value)
    shape = _size((size,), "full")
    _check_fill(fill_value, dtype)
    if dtype is _dtypes.uint8 and isinstance(fill_value, int):
        fill_value %= 256  # a negative integer wraps, as in PyTorch
    arr = np.full(shape, fill_value, dtype=dtype.np)
    return _finish(_recording.constant(arr), dtype, device, requires_grad)


def _like(maker, input, dtype, device, requires_grad, name=None, memory_format=None):
    """``maker`` called with ``input``'s shape, dtype and device (unless given), laid out as
    ``memory_format`` asks (``preserve_format``: in ``input``'s stride order)."""
    name = name or maker.__name__ + "_like"
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(input)}")
    dtype = as_dtype(dtype, name)
    fmt = _memory_format.check(memory_format, name)
    levels = getattr(input, "_levels", None)  # inside vmap: one per sample, as PyTorch
    out = maker(input._data.shape if levels else input.shape, dtype=dtype or input.dtype,
                device=device or input.device, requires_grad=requires_grad)
    if not levels:  # (a fresh leaf: its array may be swapped for one laid out otherwise)
        out._data = _memory_format.like(input._data, out._data, fmt)
    else:  # PyTorch checks a channels-last format against the batched tensor's rank
        _memory_format.check_rank(input._data.ndim, fmt)
    if levels:
        out = _dispatch.batched.wrap(out, levels)
    return out


def zeros_like(input: Tensor, *, dtype: DTypeLike = None, device: DeviceLike = None,
               requires_grad: bool = False, memory_format: MemoryFormat | None = None) -> Tensor:
    return _like(zeros, input, dtype, device, requires_grad, memory_format=memory_format)


def ones_like(input: Tensor, *, dtype: DTypeLike = None, device: DeviceLike = None,
              requires_grad: bool = False, memory_format: MemoryFormat | None = None) -> Tensor:
    return _like(ones, input, dtype, device, requires_grad, memory_format=memory_format)


def empty_like(input: Tensor, *, dtype: DTypeLike = None, device: DeviceLike = None,
               requires_grad: bool = False, memory_format: MemoryFormat | None = None) -> Tensor:
    return _like(empty, input, dtype, device, requires_grad, memory_format=memory_format)


def full_like(input: Tensor, fill_value: Number | complex | Tensor, *, dtype: DTypeLike = None,
              device: DeviceLike = None, requires_grad: bool = False,
              memory_format: MemoryFormat | None = None) -> Tensor:
    return _like(lambda shape, **kw: full(shape, fill_value, **kw), input, dtype, device,
                 requires_grad, "full_like", memory_format)


def arange(start: Number | Tensor = 0, end: Number | Tensor | None = None,
           step: Number | Tensor = 1, *, dtype: DTypeLike = None, device: DeviceLike = None,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; int64 unless a float is given."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    dtype = as_dtype(dtype, "arange") or (
        _dtypes.int64 if all(isinstance(v, int) for v in vals) else _dtypes.get_default_dtype())
    if dtype.category in (0, 3):  # bool, complex
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dtype._word}'")
    if dtype is _dtypes.int64:  # PyTorch sizes int64 ranges by the truncated bounds
        if math.isfinite(vals[2]) and vals[2] and not int(vals[2]):
            raise ValueError("step must be nonzero")
        vals = [int(v) if math.isfinite(v) else v for v in vals]
    first, last, by = vals
    if not (by > 0 or by < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(first) and math.isfinite(last)):
        raise RuntimeError(f"unsupported range: {first:g} -> {last:g}")
    if not (by > 0 and last >= first or by < 0 and last <= first):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = math.ceil((last - first) / by)
    if n >= 1 << 63:
        raise RuntimeError("invalid size, possible overflow?")
    if n * dtype.itemsize >= 1 << 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes=[{n}]")
    if dtype.category == 1:  # start and step as the integer type, as PyTorch computes them
        arr = (int(first) + np.arange(n, dtype=np.int64) * int(by)).astype(dtype.np)
    else:
        arr = (first + np.arange(n, dtype=np.float64) * by).astype(dtype.np)
    return _finish(_recording.constant(arr), dtype, device, requires_grad)


def linspace(start: Number | Tensor, end: Number | Tensor, steps: int, *,
             dtype: DTypeLike = None, device: DeviceLike = None,
             requires_grad: bool = False) -> Tensor:
    for label, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor) and v.ndim:
            raise RuntimeError(f"linspace only supports 0-dimensional start and end tensors, "
                               f"but got {label} with {v.ndim} dimension(s).")
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    dtype = as_dtype(dtype, "linspace") or _dtypes.get_default_dtype()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dtype is _dtypes.bool:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    if dtype.category == 1 and steps > 1:
        # PyTorch's integer kernel: bounds cast to the type, a double step, from both ends
        first, last = (int(np.array(v).astype(np.int64).astype(dtype.np)) for v in (start, end))
        by = (last - first) / (steps - 1)
        k = np.arange(steps)
        arr = np.where(k < steps // 2, first + by * k, last - by * (steps - k - 1))
        arr = np.trunc(arr).astype(np.int64).astype(dtype.np)
    else:
        arr = np.linspace(start, end, steps).astype(dtype.np)
    return _finish(_recording.constant(arr), dtype, device, requires_grad)


def eye(n: int, m: int | None = None, *, dtype: DTypeLike = None, device: DeviceLike = None,
        requires_grad: bool = False) -> Tensor:
    if not _int_like(n):
        raise TypeError(f"eye(): argument 'n' (position 1) must be int, not {_type_name(n)}")
    for label, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{label} must be greater or equal to 0, got {v}")
    dtype = as_dtype(dtype, "eye") or _dtypes.get_default_dtype()
    return _finish(_recording.constant(np.eye(n, m, dtype=dtype.np)), dtype, device,
                   requires_grad)


def _drawn(sample, size, generator, dtype, device, requires_grad, complex_scale=1.0):
    """A tensor of ``sample(rng, shape)``; inside ``vmap(randomness='different')`` one draw
    per sample (a batched tensor). For a complex dtype the real and imaginary parts are
    drawn apart, each scaled by ``complex_scale`` (PyTorch's complex ``randn`` gives each
    part variance 1/2, its ``rand`` each part uniform on [0, 1))."""
    levels, batch = _dispatch.batched.random_batch()  # (inside vmap: one draw per sample)
    # (compiled mode replays the draw as one call, from the generator of the time)
    arr = _recording.opaque(_draw, sample, generator, batch + size, dtype.np,
                            complex_scale if dtype.is_complex else None)
    out = _finish(arr, dtype, device, requires_grad)
    return _dispatch.batched.wrap(out, levels) if levels else out


def _draw(sample, generator, shape, np_dtype, complex_scale):
    """``sample(rng, shape)`` from ``generator``'s NumPy generator, in ``np_dtype``; complex
    (``complex_scale`` not None): real and imaginary parts drawn apart and scaled."""
    rng = _random.rng(generator)
    if complex_scale is not None:
        arr = (sample(rng, shape) + 1j * sample(rng, shape)) * complex_scale
    else:
        arr = sample(rng, shape)
    # (the draw is the sampler's own array: no copy where it has the dtype already)
    return arr.astype(np_dtype, copy=False)


def _sampled_dtype(dtype: DTypeLike, name: str, kernel: str,
                   size: tuple[int, ...] | None = None) -> DType:
    """The dtype of ``rand``/``randn``: floating or complex, else PyTorch's refusal (its
    normal kernel does not run, nor refuse, for an empty ``size``)."""
    dtype = as_dtype(dtype, name) or _dtypes.get_default_dtype()
    if dtype.category < 2 and (size is None or math.prod(size)):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dtype._word}'")
    return dtype


def _check_generator(generator, name, args, keywords=None):
    """PyTorch's TypeError when ``generator=`` is given but is not a ``Generator``."""
    if generator is not None and not isinstance(generator, _random.Generator):
        raise _random_signatures.invalid(name, args, dict(keywords or {}, generator=generator))


def rand(*args: ShapeLike, size: Sequence[int] | None = None,
         generator: Generator | None = None, dtype: DTypeLike = None,
         device: DeviceLike = None, requires_grad: bool = False, layout: Layout | None = None,
         pin_memory: bool = False) -> Tensor:
    """Samples uniform on [0, 1) (for a complex dtype, real and imaginary parts each).
    Drawn from ember's generator: PyTorch's distribution, not PyTorch's numbers."""
    _check_generator(generator, "rand", args, {"size": size})
    shape = _size(args, "rand", size)
    dtype = _sampled_dtype(dtype, "rand", "check_uniform_bounds")
    digits = _MANTISSA_BITS.get(dtype.to_real().name, 53)
    return _drawn(lambda rng, s: unit_uniform(rng, s, digits), shape, generator, dtype, device,
                  requires_grad)


# Significand bits (with the implicit one) of each floating dtype: a uniform draw on [0, 1)
# in steps of 2**-bits is exact in the dtype, so rounding can never reach 1.
_MANTISSA_BITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


def unit_uniform(rng, shape, digits=53):
    """Uniform samples on [0, 1) that stay below 1 in a dtype with ``digits`` significand bits
    (a float64 draw rounded to float16 can round up to 1.0; PyTorch's never reaches it)."""
    if digits >= 53:
        return rng.random(shape)
    if digits == 24:  # float32: NumPy's own float32 draw is 24-bit steps, and 8x faster
        return rng.random(shape, dtype=np.float32)
    return rng.integers(0, 1 << digits, size=shape) * (1.0 / (1 << digits))


def randn(*args: ShapeLike, size: Sequence[int] | None = None,
          generator: Generator | None = None, dtype: DTypeLike = None,
          device: DeviceLike = None, requires_grad: bool = False, layout: Layout | None = None,
          pin_memory: bool = False) -> Tensor:
    """Standard normal samples (complex: variance 1 in all, 1/2 in each part, as PyTorch).
    Drawn from ember's generator: PyTorch's distribution, not PyTorch's numbers."""
    _check_generator(generator, "randn", args, {"size": size})
    shape = _size(args, "randn", size)
    dtype = _sampled_dtype(dtype, "randn", "normal_kernel_cpu", shape)
    return _drawn(lambda rng, s: rng.standard_normal(s), shape, generator, dtype, device,
                  requires_grad, math.sqrt(0.5))


# C++ type names in PyTorch's random-bounds errors
_BOUND_NAMES = {"int8": "signed char", "int16": "short int", "int32": "int",
                "int64": "long int", "uint8": "unsigned char", "bool": "bool",
                "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
                "float64": "double"}


def _check_random_bounds(low, high, dtype):
    """PyTorch's checks of ``random_(from, to)``: ``from < to``, both within the dtype."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    if dtype.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    if dtype.is_floating_point:
        info = _finfo(dtype)
        bottom, top = info.min, info.max
    else:
        bottom, top = _dtypes.int_bounds(np.uint8 if dtype is _dtypes.bool else dtype.np)
    top = 1 if dtype is _dtypes.bool else top
    for label, v in (("from", low), ("to - 1", high - 1)):
        if not bottom <= v <= top:
            raise RuntimeError(f"{label} is out of bounds for {_BOUND_NAMES[dtype.name]}")


def _int64(v):
    """An ``int`` argument as PyTorch's parser reads it (a 0-d integer tensor too), with its
    overflow error; None when ``v`` is no int."""
    if not _int_like(v):
        return None
    v = int(v.item() if isinstance(v, Tensor) else v)
    if not -(1 << 63) <= v < 1 << 63:
        raise ValueError("Overflow when unpacking long long")
    return v


def _randint_bounds(args, low, high, size, generator):
    """``(low, high, size, position of size)`` from the overloads ``randint(high, size)`` and
    ``randint(low, high, size)`` (each bound positional or keyword, size too)."""
    keywords = {"size": size, "low": low, "high": high, "generator": generator}
    pos = list(args)
    if size is None:
        if pos and isinstance(pos[-1], (tuple, list)):
            size = pos.pop()
        elif len(pos) == 2 and low is None and high is None:
            raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, "
                            f"not {_type_name(pos[1])}")
        else:
            raise _random_signatures.invalid("randint", args, keywords)
    if len(pos) > 2 or len(pos) + (low is not None) + (high is not None) not in (1, 2) or (
            len(pos) == 2 and (low is not None or high is not None)) or (
            not pos and high is None):
        raise _random_signatures.invalid("randint", args, keywords)
    if len(pos) == 2:
        low, high = pos
    elif len(pos) == 1:
        if high is None:
            high = pos[0]
        else:
            low = pos[0]
    position = 1 + len(pos)  # of size, counting the bounds given by position
    bounds = _int64(0 if low is None else low), _int64(high)
    if None in bounds:
        if len(args) == 2 and low is None and not _int_like(args[0]):
            raise TypeError(f"randint(): argument 'high' (position 1) must be int, not "
                            f"{_type_name(args[0])}")
        raise _random_signatures.invalid("randint", args, keywords)
    _check_generator(generator, "randint", args, keywords)
    return bounds + (size, position)


def randint(*args: int | Tensor | Sequence[int], size: Sequence[int] | None = None,
            low: int | Tensor | None = None, high: int | Tensor | None = None,
            generator: Generator | None = None, dtype: DTypeLike = None,
            device: DeviceLike = None, requires_grad: bool = False,
            layout: Layout | None = None, pin_memory: bool = False) -> Tensor:
    """Integers drawn uniformly from [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)``; int64 unless ``dtype`` (or ``out``) says otherwise.
    Drawn from ember's generator: PyTorch's distribution, not PyTorch's numbers."""
    low, high, size, position = _randint_bounds(args, low, high, size, generator)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' (position {position}) must be tuple of "
                        f"ints, not {_type_name(size)}")
    shape = _size((size,), "randint", position=position)
    dtype = as_dtype(dtype, "randint") or _dtypes.int64
    _check_random_bounds(low, high, dtype)
    return _drawn(lambda rng, s: rng.integers(low, high, size=s), shape, generator, dtype,
                  device, requires_grad)


def randperm(n: int, *, generator: Generator | None = None, dtype: DTypeLike = None,
             device: DeviceLike = None, requires_grad: bool = False,
             layout: Layout | None = None, pin_memory: bool = False) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype``/``out`` say otherwise)."""
    _check_generator(generator, "randperm", (n,))
    if not _int_like(n):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not "
                        f"{_type_name(n)}")
    dtype = as_dtype(dtype, "randperm") or _dtypes.int64
    check_sizes((n,))
    if dtype.category in (0, 3):
        raise NotImplementedError(f"\"randperm\" not implemented for '{dtype._word}'")
    if dtype.is_floating_point:
        digits = _finfo(dtype).nmant + 1
        if n > 2 ** digits + 1:
            raise RuntimeError(f"n cannot be greater than {2 ** digits + 1} for "
                               f"{dtype._word} type." if dtype is _dtypes.float16 else
                               f"n cannot be greater than 2^{digits}+1 for "
                               f"{dtype._word} type.")
    elif n and n - 1 > _dtypes.int_bounds(dtype.np)[1]:
        raise RuntimeError(f"value cannot be converted to type {_CONVERT_NAMES[dtype.name]} "
                           "without overflow")
    arr = _random.rng(generator).permutation(int(n)).astype(dtype.np)
    return _finish(arr, dtype, device, requires_grad)


def rand_like(input: Tensor, *, generator: Generator | None = None, dtype: DTypeLike = None,
              device: DeviceLike = None, requires_grad: bool = False,
              memory_format: MemoryFormat | None = None, layout: Layout | None = None,
              pin_memory: bool = False) -> Tensor:
    """``rand`` of ``input``'s shape (and dtype and device, unless given)."""
    _check_generator(generator, "rand_like", (input,))
    return _like(lambda shape, **kw: rand(shape, generator=generator, **kw), input, dtype,
                 device, requires_grad, "rand_like", memory_format)


def randn_like(input: Tensor, *, generator: Generator | None = None, dtype: DTypeLike = None,
               device: DeviceLike = None, requires_grad: bool = False,
               memory_format: MemoryFormat | None = None, layout: Layout | None = None,
               pin_memory: bool = False) -> Tensor:
    """``randn`` of ``input``'s shape (and dtype and device, unless given)."""
    _check_generator(generator, "randn_like", (input,))
    return _like(lambda shape, **kw: randn(shape, generator=generator, **kw), input, dtype,
                 device, requires_grad, "randn_like", memory_format)


def randint_like(input: Tensor, *args: int | Tensor, low: int | Tensor | None = None,
                 high: int | Tensor | None = None, generator: Generator | None = None,
                 dtype: DTypeLike = None, device: DeviceLike = None,
                 requires_grad: bool = False, memory_format: MemoryFormat | None = None,
                 layout: Layout | None = None, pin_memory: bool = False) -> Tensor:
    """``randint`` of ``input``'s shape and dtype: ``randint_like(input, high)``,
    ``randint_like(input, low, high)``, or ``high`` a 0-d tensor."""
    keywords = {"low": low, "high": high, "generator": generator}
    for v in args + (high,):
        if isinstance(v, Tensor) and v.ndim:
            raise RuntimeError("high must be a scalar tensor and on CPU")
    if len(args) == 2 and low is None and high is None:
        low, high = args
    elif len(args) == 1 and high is None:
        high = args[0]
    elif len(args) == 1 and low is None:
        low = args[0]
    elif args or high is None:
        raise _random_signatures.invalid("randint_like", (input,) + args, keywords)
    if isinstance(high, Tensor) and high.dtype.is_floating_point and low is None:
        high = int(high.item())  # the ``Tensor high`` overload truncates a float tensor
    bounds = _int64(0 if low is None else low), _int64(high)
    if None in bounds or not isinstance(input, Tensor):
        raise _random_signatures.invalid("randint_like", (input,) + args, keywords)
    _check_generator(generator, "randint_like", (input,) + args, keywords)
    return _like(lambda shape, **kw: randint(*bounds, shape, generator=generator, **kw),
                 input, dtype, device, requires_grad, "randint_like", memory_format)


# --------------------------------------------------------------------------- legacy types


@install
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


# The legacy tensor types and their dtypes (``torch.cuda`` has the same names, for CUDA).
LEGACY_TYPES = (("FloatTensor", _dtypes.float32), ("DoubleTensor", _dtypes.float64),
                ("HalfTensor", _dtypes.float16), ("LongTensor", _dtypes.int64),
                ("IntTensor", _dtypes.int32), ("ShortTensor", _dtypes.int16),
                ("CharTensor", _dtypes.int8), ("ByteTensor", _dtypes.uint8),
                ("BoolTensor", _dtypes.bool))
FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor, CharTensor, \
    ByteTensor, BoolTensor = (_legacy(name, dtype) for name, dtype in LEGACY_TYPES)


def _triangle_indices(name, upper, row, col, offset, dtype, device, requires_grad):
    """The ``(2, N)`` row/column coordinates of a triangle of a ``row x col`` matrix, row by
    row (``np.tril_indices`` / ``np.triu_indices`` give the same order)."""
    dtype = as_dtype(dtype, name) or _dtypes.int64
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if dtype not in (_dtypes.int64, _dtypes.int32):
        raise NotImplementedError(f"\"{name}\" not implemented for '{dtype._word}'")
    make = np.triu_indices if upper else np.tril_indices
    data = np.stack(make(row, offset, col)).astype(dtype.np) if row and col else \
        np.zeros((2, 0), dtype=dtype.np)
    return _finish(data, dtype, device, requires_grad)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: DTypeLike = None,
                 device: DeviceLike = None, layout: Layout | None = None,
                 requires_grad: bool = False) -> Tensor:
    """The coordinates of the lower triangle (on and below diagonal ``offset``)."""
    return _triangle_indices("tril_indices", False, row, col, offset, dtype, device,
                             requires_grad)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: DTypeLike = None,
                 device: DeviceLike = None, layout: Layout | None = None,
                 requires_grad: bool = False) -> Tensor:
    """The coordinates of the upper triangle (on and above diagonal ``offset``)."""
    return _triangle_indices("triu_indices", True, row, col, offset, dtype, device,
                             requires_grad)
