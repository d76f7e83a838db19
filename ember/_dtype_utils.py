"""The top-level helpers of ``torch`` about dtypes and tensors' kinds: ``finfo``, ``iinfo``,
``can_cast``, ``is_complex``, ``is_nonzero``, ``typename``, ``set_default_tensor_type``... and
the constants ``pi``, ``e``, ``inf``, ``nan``, ``newaxis``.

Each takes PyTorch's arguments and raises its errors (compared with PyTorch in
``tests/test_creation_utils.py``).
"""
from __future__ import annotations

import math

from . import _dtypes, _errors
from ._creation import _type_name
from ._tensor import Tensor

__all__ = ["can_cast", "promote_types", "numel", "is_floating_point",
           "is_complex", "is_nonzero", "is_signed",
           "is_storage", "is_same_size", "is_conj", "is_neg", "is_inference", "get_device",
           "typename", "set_default_tensor_type", "pi", "e", "inf", "nan", "newaxis"]

pi, e, inf, nan = math.pi, math.e, math.inf, math.nan
newaxis = None


def _tensor_arg(name, input, argument="input"):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' (position 1) must be Tensor, not "
                        f"{_type_name(input)}")
    return input


def _dtype_arg(name, value, argument, position):
    if not isinstance(value, _dtypes.dtype):
        raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be "
                        f"torch.dtype, not {_type_name(value)}")
    return value


def can_cast(from_, to):
    """Whether PyTorch's type promotion lets a value of dtype ``from_`` be written to ``to``
    (an op's ``out=``): never down a category (float to int, complex to float...)."""
    return _dtypes.can_cast(_dtype_arg("can_cast", from_, "from_", 1),
                            _dtype_arg("can_cast", to, "to", 2))


def promote_types(type1, type2):
    """The smallest dtype both ``type1`` and ``type2`` convert to without loss (as far as
    PyTorch's promotion lattice goes)."""
    return _dtypes.promote_types(_dtype_arg("promote_types", type1, "type1", 1),
                                 _dtype_arg("promote_types", type2, "type2", 2))


def numel(input):
    """The number of elements of ``input``."""
    return _tensor_arg("numel", input).numel()


def is_floating_point(input):
    """Whether ``input``'s dtype is a floating one (not complex)."""
    return _tensor_arg("is_floating_point", input).is_floating_point()


def is_complex(input):
    """Whether ``input``'s dtype is complex."""
    return _tensor_arg("is_complex", input).is_complex()


def is_nonzero(input):
    """The truth of a one-element tensor (PyTorch's errors for any other)."""
    _tensor_arg("is_nonzero", input)
    if input.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if input.numel() > 1:
        raise RuntimeError(_errors.BOOL_AMBIGUOUS)
    return bool(input.item() != 0)


def is_signed(input):
    """Whether ``input``'s dtype is signed (floats and complex too; not bool or uint8)."""
    return _tensor_arg("is_signed", input).is_signed()


def is_storage(obj):
    """Whether ``obj`` is a storage: never in ember, which exposes no storage objects."""
    return False


def is_same_size(input, other):
    """Whether the two tensors have the same shape."""
    return _tensor_arg("is_same_size", input).is_same_size(other)


def is_conj(input):
    return _tensor_arg("is_conj", input).is_conj()


def is_neg(input):
    return _tensor_arg("is_neg", input).is_neg()


def is_inference(input):
    return _tensor_arg("is_inference", input).is_inference()


def get_device(input):
    """The CUDA device index of ``input``; -1 on the CPU."""
    return _tensor_arg("get_device", input).get_device()


def typename(obj):
    """The legacy type name of a tensor ('torch.FloatTensor'), else the object's qualified
    type name."""
    if isinstance(obj, Tensor):
        return obj.type()
    named = obj if hasattr(obj, "__qualname__") else type(obj)  # a class or function: its own
    module = getattr(named, "__module__", "") or ""
    return named.__qualname__ if module in ("", "builtins") else \
        f"{module}.{named.__qualname__}"


_LEGACY_NAMES = {"torch." + d._legacy: d for d in _dtypes.ALL}


def set_default_tensor_type(t):
    """Deprecated in PyTorch 2.1 (it warns): the default dtype from a legacy tensor type
    (``torch.DoubleTensor`` or its name); only floating types."""
    _errors.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                 "torch.set_default_dtype() and torch.set_default_device() as alternatives.")
    dtype = _LEGACY_NAMES.get(t) if isinstance(t, str) else getattr(t, "dtype", None)
    if isinstance(t, str) and dtype is None:
        raise TypeError(f"invalid type: '{t}'")
    if dtype not in (_dtypes.float16, _dtypes.float32, _dtypes.float64):
        raise TypeError("only floating-point types are supported as the default type")
    _dtypes.set_default_dtype(dtype)
