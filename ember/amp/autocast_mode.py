"""``torch.autocast`` (``torch.amp.autocast``): a context manager and decorator that runs the
ops on PyTorch's autocast lists in a lower-precision dtype (bfloat16 on the CPU by default),
and the functions that read and set autocast's per-thread state.

Which ops cast, and how, is decided at dispatch (``ember/ops/autocast.py``): this module only
enters and leaves regions. As in PyTorch, the state is per thread and per device type,
regions nest (an inner ``enabled=False`` region turns autocast off inside), and the weight
cache is cleared when the outermost region exits.

Where ember differs: it implements PyTorch's CPU lists only. ``device_type='cuda'`` without a
GPU is disabled with PyTorch's warning, as in PyTorch; with a GPU (CuPy) it raises
NotImplementedError rather than run the CUDA lists' ops in the wrong dtypes. Other device
types PyTorch knows (``'mps'``, ``'xpu'`` ...) are accepted, but ember has no tensors there.
"""
from __future__ import annotations

import functools
import warnings

from .. import _device, _dtypes
from ..ops import autocast as _dispatch

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd",
           "is_autocast_enabled", "get_autocast_dtype", "set_autocast_enabled",
           "set_autocast_dtype", "is_autocast_cache_enabled", "set_autocast_cache_enabled",
           "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting"]

_state = _dispatch.state
# The device types PyTorch parses, with its default autocast dtype for those that have one.
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                 "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")
_AUTOCAST_TYPES = {"cpu": _dtypes.bfloat16, "cuda": _dtypes.float16, "mps": _dtypes.float16,
                   "xpu": _dtypes.float16, "hpu": _dtypes.bfloat16, "xla": _dtypes.bfloat16,
                   "mtia": _dtypes.float16, "maia": _dtypes.bfloat16, "ipu": _dtypes.float16,
                   "privateuseone": _dtypes.float16}


def _device_type(device_type):
    """``device_type`` checked as PyTorch parses it (``'cuda:0'`` is ``'cuda'``)."""
    base = device_type.split(":", 1)[0]
    if base not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of "
                           f"device string: {device_type}")
    return base


def is_autocast_available(device_type):
    """Whether autocast can be used on ``device_type`` (``'cpu'``, ``'cuda'`` ...)."""
    return _device_type(device_type) in _AUTOCAST_TYPES


def is_autocast_enabled(device_type=None):
    """Whether autocast is on in this thread for ``device_type`` (``'cuda'`` when omitted,
    as in PyTorch)."""
    return _state.enabled.get(_device_type(device_type or "cuda"), False)


def get_autocast_dtype(device_type):
    """The dtype autocast casts to on ``device_type`` (bfloat16 on the CPU unless set)."""
    base = _device_type(device_type)
    return _state.dtype.get(base, _AUTOCAST_TYPES.get(base))


def set_autocast_enabled(device_type, enabled=None):
    """Turn autocast on or off for ``device_type`` in this thread (``autocast`` does this)."""
    if enabled is None:  # the legacy one-argument form: CUDA
        device_type, enabled = "cuda", device_type
    base = _device_type(device_type)
    was = _state.enabled.get(base, False)
    _state.enabled[base] = bool(enabled)
    _dispatch.anywhere.enabled += bool(enabled) - was


def set_autocast_dtype(device_type, dtype):
    _state.dtype[_device_type(device_type)] = dtype


def is_autocast_cache_enabled():
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled):
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    """Drop the casts of weights kept for reuse within the autocast region."""
    _state.cache.clear()


def autocast_increment_nesting():
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting():
    _state.nesting -= 1
    return _state.nesting


class autocast:
    """Run the ops of a region (or of a decorated function) in mixed precision.

    Args:
        device_type (str): ``'cpu'`` or ``'cuda'`` (the ``type`` of a device).
        dtype (ember.dtype, optional): the lower-precision dtype; by default
            ``get_autocast_dtype(device_type)``: bfloat16 on the CPU, float16 on CUDA.
        enabled (bool): whether autocasting is on in the region (default True).
        cache_enabled (bool, optional): whether casts of weights are reused within the
            region (default: ``is_autocast_cache_enabled()``).

    Example::

        >>> with ember.autocast("cpu"):
        ...     y = ember.nn.functional.linear(x, w)   # bfloat16
        >>> loss = y.float().sum()                      # float32 again outside
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(
                f"User specified an unsupported autocast device_type '{device_type}'")
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else \
            cache_enabled
        if enabled:
            if self.device == "cuda":
                if not _device.cuda_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                                  "autocast.", stacklevel=2)
                    enabled = False
                else:
                    raise NotImplementedError(
                        "ember's autocast implements PyTorch's CPU op lists only; "
                        "autocast('cuda') on a GPU is not supported")
            elif self.fast_dtype not in (_dtypes.bfloat16, _dtypes.float16):
                name = self.device.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                              f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                              "torch.bfloat16, torch.float16 currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled
        self._saved = []  # the state each nested __enter__ replaced, for __exit__

    def __enter__(self):
        base = _device_type(self.device)
        self._saved.append((is_autocast_cache_enabled(), _state.enabled.get(base, False),
                            get_autocast_dtype(base)))
        set_autocast_enabled(base, self._enabled)
        set_autocast_dtype(base, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        base = _device_type(self.device)
        cache_enabled, enabled, dtype = self._saved.pop()
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(base, enabled)
        set_autocast_dtype(base, dtype)
        set_autocast_cache_enabled(cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. Did you "
                "mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)")

        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


def _cast(value, device_type, dtype):
    """Floating tensors on ``device_type`` within ``value`` (nested containers too) cast to
    ``dtype``; everything else as it is."""
    if hasattr(value, "_data"):
        eligible = value.is_floating_point() and value.device.type == device_type and \
            value.dtype is not _dtypes.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {k: _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for the ``forward`` of a custom ``autograd.Function`` under autocast: with
    ``cast_inputs``, floating inputs are cast to it and the forward runs with autocast off;
    without, the forward runs in the surrounding autocast state (which ``custom_bwd``
    restores for the backward)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for the ``backward`` of a custom ``autograd.Function``: it runs in the
    autocast state its forward ran in (see ``custom_fwd``)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd


# PyTorch's deprecated per-device spellings of the functions above (``torch.X``).
def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def set_autocast_cpu_dtype(dtype):
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def _deprecated_autocast(device, dtype, module, doc):
    """The class ``torch.<device>.amp.autocast`` of ``module``: ``autocast(device, ...)``
    with ``dtype`` as its default, warning as PyTorch's does that the spelling is
    deprecated."""

    class Deprecated(autocast):
        def __init__(self, enabled=True, dtype=dtype, cache_enabled=True):
            warnings.warn(f"`torch.{device}.amp.autocast(args...)` is deprecated. Please use "
                          f"`torch.amp.autocast('{device}', args...)` instead.", FutureWarning,
                          stacklevel=2)
            super().__init__(device, enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)

    Deprecated.__name__ = Deprecated.__qualname__ = "autocast"
    Deprecated.__module__, Deprecated.__doc__ = module, doc
    return Deprecated
