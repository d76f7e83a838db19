"""What the names in a PyTorch pickle stand for in ember, and how tensors are rebuilt.

A ``torch.save`` pickle refers to a few dozen global names (``torch._utils._rebuild_tensor_v2``,
``torch.FloatStorage``, ``torch.float32``, ``collections.OrderedDict`` ...). ``GLOBALS`` maps
each name that ``torch.load(weights_only=True)`` admits by default to ember's counterpart: a
checked rebuild function, a storage type, a dtype, or a wrapper that calls a constructor only
with arguments that cannot run code or allocate without bound (``bytearray(10**12)`` is
refused; ``bytearray('...', 'latin-1')``, what pickle writes for bytes, is not). Names PyTorch
admits but ember cannot represent (quantized, sparse and nested tensors, ``torch.uint16`` ...)
raise a :class:`CheckpointError` saying so. The same table serves the full unpickler
(``weights_only=False``), before its remapping of other ``torch.*`` names.

Rebuilding a tensor checks its view of the storage before making it: sizes and strides are
non-negative ints (at most 64 dims), the offset lies in the storage, and the last element the
view can reach does too, so a crafted stride or offset gives a clear error rather than a read
outside the storage. The tensor is a NumPy view of the storage's array, so tensors saved as
views of one storage come back sharing it, as in PyTorch.
"""
from __future__ import annotations

import codecs
import collections

import numpy as np

from .. import _device, _dtypes
from .._tensor import Size, Tensor, strided
from ..nn.parameter import Parameter
from ._zip import CheckpointError, short

__all__ = ["globals_for", "Rebuilder", "Storage", "StorageType", "storage_type_name", "check_depth",
           "MAX_DEPTH"]

MAX_DIMS = 64
MAX_DEPTH = 512  # nesting of containers in a loaded object

# PyTorch's storage class names and the dtype each holds (by ember's / PyTorch's dtype name)
_STORAGE_DTYPES = {
    "DoubleStorage": "float64", "FloatStorage": "float32", "HalfStorage": "float16",
    "BFloat16Storage": "bfloat16", "LongStorage": "int64", "IntStorage": "int32",
    "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8",
    "BoolStorage": "bool", "ComplexDoubleStorage": "complex128",
    "ComplexFloatStorage": "complex64", "UntypedStorage": "uint8",
}
_QUANTIZED_STORAGES = ("QInt8Storage", "QInt32Storage", "QUInt8Storage", "QUInt4x2Storage",
                       "QUInt2x4Storage")
# every dtype name torch.load(weights_only=True) admits as a global
_TORCH_DTYPES = (
    "float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8",
    "bool", "complex128", "complex64", "complex32", "qint8", "qint32", "quint8", "quint4x2",
    "quint2x4", "uint16", "uint32", "uint64", "float8_e5m2", "float8_e4m3fn",
    "float8_e5m2fnuz", "float8_e4m3fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "bits1x8",
    "bits2x4", "bits4x2", "bits8", "bits16",
    *(f"uint{n}" for n in range(1, 8)), *(f"int{n}" for n in range(1, 8)))
_LEGACY_TENSOR_TYPES = ("Double", "Float", "Half", "BFloat16", "Long", "Int", "Short", "Char",
                        "Byte", "Bool")
_BFLOAT16_HINT = " (ember.bfloat16 needs the optional ml_dtypes package)"
_QSCHEMES = ("per_tensor_affine", "per_tensor_symmetric", "per_channel_affine",
             "per_channel_symmetric", "per_channel_affine_float_qparams")


def ember_dtype(name, what):
    """ember's dtype called ``name`` (PyTorch's name for it), or a CheckpointError."""
    d = getattr(_dtypes, name, None)
    if isinstance(d, _dtypes.dtype):
        return d
    hint = _BFLOAT16_HINT if name == "bfloat16" else ""
    raise CheckpointError(f"ember.load: the file holds {what} of dtype torch.{name}, which "
                          f"ember does not have{hint}")


def storage_type_name(d):
    """PyTorch's storage class name for ember dtype ``d`` (``'FloatStorage'``)."""
    for name, dtype_name in _STORAGE_DTYPES.items():
        if dtype_name == d.name and name != "UntypedStorage":
            return name
    raise TypeError(f"ember.save: no PyTorch storage type holds dtype {d}")


class StorageType:
    """A storage class named in a pickle (``torch.FloatStorage``); its dtype is resolved when
    a storage of it is loaded, so a file naming ``BFloat16Storage`` only fails if it holds
    one while ember has no bfloat16."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def dtype(self):
        if self.name in _QUANTIZED_STORAGES:
            raise CheckpointError(f"ember.load: the file holds a quantized storage "
                                  f"(torch.{self.name}), which ember does not have")
        return ember_dtype(_STORAGE_DTYPES[self.name], f"a {self.name}")

    def __repr__(self):
        return f"StorageType({self.name})"


class Storage:
    """One storage of the file, read and checked: ``array`` is a 1-D array of ``dtype``."""

    __slots__ = ("key", "dtype", "numel", "location", "array", "uses")

    def __init__(self, key, dtype, numel, location, array):
        self.key, self.dtype, self.numel, self.location = key, dtype, numel, location
        self.array = array
        self.uses = 0  # how many tensors were rebuilt on it


class Rebuilder:
    """Rebuilds tensors on loaded storages and remembers each one (its storage, offset,
    sizes, strides and any conj/neg), so that ``map_location`` can move them afterwards."""

    def __init__(self, spare):
        self.views = {}  # id(tensor) -> [tensor, storage, offset, size, stride, ops]
        self._spare = spare  # bytes the limit leaves for copies (conj / neg materialised)

    def tensor(self, storage, offset, size, stride, requires_grad=False, hooks=None,
               metadata=None, dtype=None):
        if not isinstance(storage, Storage):
            raise CheckpointError(f"ember.load: a tensor is rebuilt on {short(storage)}, "
                                  "not on a storage of the file")
        array = storage.array if dtype is None else _retyped(storage, dtype)
        size, stride, offset = _checked_view(array.size, offset, size, stride)
        data = view(array, offset, size, stride)
        ops = _metadata_ops(metadata)
        if ops:
            self._spare -= data.size * data.itemsize
            if self._spare < 0:
                raise CheckpointError("ember.load: materialising the file's conj / neg views "
                                      "would allocate more than max_bytes allows; refusing")
        for op in ops:
            data = op(data)
        _check_hooks(hooks)
        t = Tensor._make(data, None, False)
        _require_grad(t, requires_grad)
        storage.uses += 1
        self.views[id(t)] = [t, storage, offset, size, stride, ops]
        return t

    def parameter(self, data, requires_grad=True, hooks=None, state=None):
        if type(data) is not Tensor:
            raise CheckpointError(f"ember.load: a Parameter is rebuilt from {short(data)}, not "
                                  "a tensor")
        _check_hooks(hooks)
        _require_grad(data, requires_grad)
        p = Parameter(data, requires_grad)
        self._rebind(data, p)
        if state:
            set_state(p, state)
        return p

    def from_type(self, func, new_type, args, state):
        """``torch._tensor._rebuild_from_type_v2``: a tensor of ``new_type`` with attributes."""
        if func not in (self.tensor, self.tensor_v1, self.tensor_v3, self.parameter):
            raise CheckpointError(f"ember.load: a tensor is rebuilt by {short(func)}")
        if not isinstance(args, tuple):
            raise CheckpointError(f"ember.load: rebuild arguments {short(args)} are not a tuple")
        t = func(*args)
        if new_type is Parameter and type(t) is Tensor:
            t = self.parameter(t, t.requires_grad)
        elif new_type not in (Tensor, Parameter):
            raise CheckpointError(f"ember.load: tensor subclass {short(new_type)} is not "
                                  "supported")
        if state:
            set_state(t, state)
        return t

    def tensor_v1(self, storage, offset, size, stride):
        return self.tensor(storage, offset, size, stride)

    def tensor_v3(self, storage, offset, size, stride, requires_grad, hooks, dtype,
                  metadata=None):
        if not isinstance(dtype, _dtypes.dtype):
            raise CheckpointError(f"ember.load: a tensor's dtype is {short(dtype)}")
        return self.tensor(storage, offset, size, stride, requires_grad, hooks, metadata,
                           dtype)

    def _rebind(self, old, new):
        entry = self.views.pop(id(old), None)
        if entry is not None:
            entry[0] = new
            self.views[id(new)] = entry


def view(array, offset, size, stride):
    """The view of 1-D ``array`` at ``offset`` with ``size`` and ``stride`` (in elements),
    as NumPy / CuPy give it; its base is ``array``, so views of one storage share it."""
    item = array.dtype.itemsize
    strides = tuple(s * item for s in stride)
    if isinstance(array, np.ndarray):
        return np.ndarray(size, array.dtype, buffer=array, offset=offset * item,
                          strides=strides)
    xp = _device.namespace_of(array)
    return xp.lib.stride_tricks.as_strided(array[offset:], size, strides)


def _retyped(storage, dtype):
    array = storage.array
    if array.nbytes % dtype.itemsize:
        raise CheckpointError(f"ember.load: storage {storage.key!r} of {array.nbytes} bytes "
                              f"cannot hold elements of dtype {dtype}")
    return array.view(dtype.np)


def _checked_view(numel, offset, size, stride):
    """``(size, stride, offset)`` as tuples / int once they describe a view inside a storage
    of ``numel`` elements; CheckpointError otherwise."""
    if not (isinstance(size, (tuple, list)) and isinstance(stride, (tuple, list))):
        raise CheckpointError(f"ember.load: a tensor's size {short(size)} or stride "
                              f"{short(stride)} is not a tuple")
    values = (offset, *size, *stride)
    if not all(type(v) is int and v >= 0 for v in values):
        raise CheckpointError(f"ember.load: a tensor has offset {short(offset)}, size "
                              f"{short(size)}, stride {short(stride)}; each must be an int >= 0")
    if len(size) != len(stride) or len(size) > MAX_DIMS:
        raise CheckpointError(f"ember.load: a tensor has {len(size)} sizes and {len(stride)} "
                              f"strides (at most {MAX_DIMS})")
    if 0 in size:
        needed = offset
    else:
        needed = offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > numel:
        raise CheckpointError(
            f"ember.load: a tensor with sizes {list(size)}, strides {list(stride)} and storage "
            f"offset {offset} needs {needed} elements, out of bounds for its storage of "
            f"{numel}; refusing")
    return tuple(size), tuple(stride), offset


def _metadata_ops(metadata):
    """What a tensor's metadata (PyTorch's conj / neg bits) asks for, as array functions:
    ember has no lazy bits, so the values are materialised (a copy)."""
    if metadata is None or (type(metadata) in (dict, collections.OrderedDict) and not metadata):
        return ()
    ops = {"conj": np.conj, "neg": np.negative}
    if not (type(metadata) in (dict, collections.OrderedDict) and set(metadata) <= set(ops)
            and all(type(v) is bool for v in metadata.values())):
        raise CheckpointError(f"ember.load: tensor metadata {short(metadata)} is not supported")
    return tuple(ops[k] for k, v in metadata.items() if v)


def _require_grad(t, requires_grad):
    """Check a file's requires_grad flag for ``t`` (PyTorch's rule: floating and complex
    dtypes only); sets it on ``t``."""
    if not isinstance(requires_grad, bool):
        raise CheckpointError(f"ember.load: requires_grad is {short(requires_grad)}, not a bool")
    if requires_grad and not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise CheckpointError(f"ember.load: a tensor of dtype {t.dtype} requires grad; only "
                              "Tensors of floating point and complex dtype can require "
                              "gradients")
    t._rg = requires_grad


def _check_hooks(hooks):
    if hooks is None or (type(hooks) in (dict, collections.OrderedDict) and not hooks):
        return
    raise CheckpointError(f"ember.load: the file holds backward hooks {short(hooks)}; ember "
                          "does not load them (PyTorch does not save them either)")


def set_state(t, state):
    """Python attributes a file sets on a tensor (``_rebuild_from_type_v2``'s state): plain
    names only, never one the tensor type already has (``grad``, ``data`` ...)."""
    if isinstance(state, tuple) and len(state) == 2:
        state = {**(state[0] or {}), **(state[1] or {})}
    if not isinstance(state, dict):
        raise CheckpointError(f"ember.load: tensor state {short(state)} is not a dict")
    for k, v in state.items():
        if not (isinstance(k, str) and k.isidentifier() and not k.startswith("_")
                and not hasattr(type(t), k)):
            raise CheckpointError(f"ember.load: tensor attribute {short(k)} is not supported")
        t.__dict__[k] = v


# ------------------------------------------------------------------ constructors, checked

def _ordered_dict(*args):
    if len(args) > 1 or (args and type(args[0]) not in (list, tuple, dict)):
        raise CheckpointError(f"ember.load: OrderedDict{short(args)}")
    return collections.OrderedDict(*args)


def _counter(*args):
    if len(args) > 1 or (args and type(args[0]) not in (list, tuple, dict)):
        raise CheckpointError(f"ember.load: Counter{short(args)}")
    return collections.Counter(*args)


def _set(*args):
    if len(args) > 1 or (args and type(args[0]) not in (list, tuple)):
        raise CheckpointError(f"ember.load: set{short(args)}")
    return set(*args)


def _complex(*args):
    if not (len(args) <= 2 and all(type(a) in (int, float) for a in args)):
        raise CheckpointError(f"ember.load: complex{short(args)}")
    return complex(*args)


def _latin1(args, what):
    """The str of ``(text, 'latin-1')``: how protocol 2 pickles bytes and bytearrays."""
    if not (len(args) == 2 and type(args[0]) is str and args[1] in ("latin1", "latin-1")):
        raise CheckpointError(f"ember.load: {what}{short(args)}; only (str, 'latin1') is "
                              "accepted")
    return args[0]


def _bytearray(*args):
    if not args:
        return bytearray()
    return bytearray(_latin1(args, "bytearray"), "latin-1")


def _encode(*args):
    return codecs.encode(_latin1(args, "_codecs.encode"), "latin-1")


def _size(*args):
    if not (len(args) == 1 and isinstance(args[0], (tuple, list))
            and all(type(n) is int for n in args[0])):
        raise CheckpointError(f"ember.load: torch.Size{short(args)}")
    return Size(args[0])


def _device_of(*args):
    if not (1 <= len(args) <= 2 and type(args[0]) is str
            and (len(args) == 1 or type(args[1]) is int)):
        raise CheckpointError(f"ember.load: torch.device{short(args)}")
    try:
        return _device.device(*args)
    except (RuntimeError, TypeError) as exc:
        raise CheckpointError(f"ember.load: torch.device{short(args)}: {exc}") from None


def _get_layout(name):
    if name != "torch.strided":
        raise CheckpointError(f"ember.load: the file holds layout {short(name)}; ember has "
                              "only torch.strided")
    return strided


def _legacy_tensor(*args):
    raise CheckpointError("ember.load: the file builds a tensor with torch.Tensor(...) (the "
                          "legacy format), which ember does not load")


class Unsupported:
    """A name PyTorch admits that ember cannot represent: naming it is an error."""

    def __init__(self, name, what, hint=""):
        self.name, self.what, self.hint = name, what, hint

    def error(self):
        return CheckpointError(f"ember.load: the file holds {self.what} ({self.name}), which "
                               f"ember does not have{self.hint}")


def globals_for(rebuilder):
    """The allowlist: full name -> ember value, for one load (its rebuilder)."""
    table = {
        "collections.OrderedDict": _ordered_dict, "collections.Counter": _counter,
        "builtins.set": _set, "builtins.complex": _complex, "builtins.bytearray": _bytearray,
        "_codecs.encode": _encode, "torch.Size": _size, "torch.device": _device_of,
        "torch.Tensor": _legacy_tensor, "torch.nn.parameter.Parameter": Parameter,
        "torch.serialization._get_layout": _get_layout,
        "torch._utils._rebuild_tensor": rebuilder.tensor_v1,
        "torch._utils._rebuild_tensor_v2": rebuilder.tensor,
        "torch._utils._rebuild_tensor_v3": rebuilder.tensor_v3,
        "torch._utils._rebuild_parameter": rebuilder.parameter,
        "torch._utils._rebuild_parameter_with_state": rebuilder.parameter,
        "torch._tensor._rebuild_from_type_v2": rebuilder.from_type,
    }
    for kind, names in (("a quantized tensor", ("_rebuild_qtensor",)),
                        ("a sparse tensor", ("_rebuild_sparse_tensor",)),
                        ("a nested tensor", ("_rebuild_nested_tensor",)),
                        ("a meta tensor", ("_rebuild_meta_tensor_no_storage",)),
                        ("a tensor subclass", ("_rebuild_wrapper_subclass",)),
                        ("a device tensor", ("_rebuild_device_tensor_from_numpy",
                                             "_rebuild_device_tensor_from_cpu_tensor"))):
        for name in names:
            table[f"torch._utils.{name}"] = Unsupported(f"torch._utils.{name}", kind)
    for name in _STORAGE_DTYPES.keys() - {"UntypedStorage"} | set(_QUANTIZED_STORAGES):
        table[f"torch.{name}"] = table[f"torch.cuda.{name}"] = StorageType(name)
    table["torch.storage.UntypedStorage"] = StorageType("UntypedStorage")
    table["torch.storage.TypedStorage"] = Unsupported("torch.storage.TypedStorage",
                                                      "a legacy typed storage")
    for name in _TORCH_DTYPES:
        d = getattr(_dtypes, name, None)
        table[f"torch.{name}"] = d if isinstance(d, _dtypes.dtype) else Unsupported(
            f"torch.{name}", "a dtype", _BFLOAT16_HINT if name == "bfloat16" else "")
    for prefix in ("torch.", "torch.cuda.", "torch.sparse.", "torch.cuda.sparse."):
        for t in _LEGACY_TENSOR_TYPES:
            table[f"{prefix}{t}Tensor"] = Unsupported(f"{prefix}{t}Tensor",
                                                      "a legacy tensor type")
    for q in _QSCHEMES:
        table[f"torch.{q}"] = Unsupported(f"torch.{q}", "a quantization scheme")
    return table


def check_depth(obj):
    """Refuse a loaded object whose containers nest more than MAX_DEPTH levels (the longest
    path, each shared object measured once, so memo-built DAGs cost linear time; a cycle
    back to an object being measured adds nothing). No recursion; the work stack holds only
    containers not yet measured."""
    kinds = (list, tuple, dict, set, collections.OrderedDict, collections.Counter, Size)
    depth = {}  # id -> nesting of the object (0 while its items are being measured)
    keep = []  # the measured objects, kept alive so that their ids stay theirs
    expanded = set()
    stack = [obj] if type(obj) in kinds else []
    while stack:
        node = stack[-1]
        items = [*node.keys(), *node.values()] if isinstance(node, dict) else node
        if id(node) not in expanded:
            expanded.add(id(node))
            depth[id(node)] = 0
            keep.append(node)
            stack.extend(i for i in items if type(i) in kinds and id(i) not in depth)
            continue
        stack.pop()
        d = 1 + max((depth.get(id(i), 0) for i in items if type(i) in kinds), default=0)
        if d > MAX_DEPTH:
            raise CheckpointError(f"ember.load: the loaded object nests more than {MAX_DEPTH} "
                                  "levels deep; refusing")
        depth[id(node)] = d
