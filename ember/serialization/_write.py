"""Writing PyTorch's checkpoint format (what ``torch.save`` writes by default).

The archive holds, under one prefix (the file's name without its extension, or ``archive``
for a file object), these records, each stored (uncompressed) with its data aligned to 64
bytes in the file as PyTorch's writer does:

* ``data.pkl``: the object, pickled with protocol 2. Tensors reduce to
  ``torch._utils._rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad,
  OrderedDict())`` and Parameters to ``torch._utils._rebuild_parameter(tensor, requires_grad,
  OrderedDict())``; a storage is a persistent id ``('storage', torch.<Type>Storage, key,
  location, numel)``. ember's dtypes, devices, ``Size`` and ``strided`` pickle as PyTorch's
  (``torch.float32``, ``torch.device('cpu')`` ...), so what ``torch.load(weights_only=True)``
  accepts of PyTorch's objects it accepts of ember's. Everything else pickles as usual
  (a whole ``nn.Module`` by reference to its ember class).
* ``data/<key>``: each storage's raw bytes, in the machine's byte order.
* ``.format_version``, ``.storage_alignment``, ``byteorder``, ``version``,
  ``.data/serialization_id``: as PyTorch writes them.

Storages: tensors that are views of one NumPy array (their ``.base`` chain ends in the same
array) share one storage, written once, as PyTorch saves a view with its whole storage and its
offset and strides. Views PyTorch could not describe (negative strides, offsets or strides
that are not whole elements, or two dtypes on one storage, which PyTorch refuses too) are
saved as their own contiguous storage (values and shape kept, sharing not); CUDA tensors are
copied to the host, each its own storage.
"""
from __future__ import annotations

import collections
import io
import os
import pickle
import secrets
import struct
import sys
import types
import zipfile

import numpy as np

from .. import _device, _dtypes
from .._memory_format import contiguous_strides
from .._tensor import Size, Tensor, layout
from ..nn.parameter import Parameter
from ._globals import storage_type_name

__all__ = ["write"]

_ALIGN = 64
_PAD_ID = 0x4246  # "FB": the extra-field id PyTorch's writer pads with


class _Global:
    """A name written as a pickle GLOBAL (``torch._utils _rebuild_tensor_v2``) without being
    imported: the objects exist only on the reading side."""

    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's save_reduce wants a callable; never called
        raise TypeError(f"{self.module}.{self.name} is a name to write, not a function")


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_SIZE = _Global("torch", "Size")
_DEVICE = _Global("torch", "device")
_GET_LAYOUT = _Global("torch.serialization", "_get_layout")
_DTYPES = {}  # ember dtype -> _Global, filled on first use (bfloat16 may come later)
_STORAGES = {}


class _StorageRef:
    """A storage to be written: pickled as its persistent id."""

    __slots__ = ("pid", "key", "array")

    def __init__(self, pid, key, array):
        self.pid, self.key, self.array = pid, key, array


class _Pickler(pickle._Pickler):
    """Protocol-2 pickler writing tensors and ember's torch-like objects as PyTorch does."""

    dispatch = pickle._Pickler.dispatch.copy()

    def __init__(self, file):
        super().__init__(file, protocol=2)
        self.storages = {}  # id(root array) -> (_StorageRef, dtype, root)

    def persistent_id(self, obj):
        return obj.pid if type(obj) is _StorageRef else None

    def reducer_override(self, obj):
        t = type(obj)
        if t is Tensor:
            return _REBUILD_TENSOR, self._tensor_args(obj)
        if t is Parameter:
            return _REBUILD_PARAMETER, (_as_plain(obj), obj.requires_grad,
                                        collections.OrderedDict())
        if isinstance(obj, Tensor):
            raise pickle.PicklingError(f"ember.save cannot save tensor subclass {t.__name__}")
        if t is Size:
            return _SIZE, (tuple(obj),)
        if t is _device.device:
            return _DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index)
        if t is layout:
            return _GET_LAYOUT, (repr(obj),)
        return NotImplemented

    def save_global(self, obj, name=None):
        try:
            super().save_global(obj, name)
        except pickle.PicklingError:
            pickle.dumps(obj, protocol=2)  # raises what torch.save's (the C) pickler raises
            raise

    dispatch[types.FunctionType] = save_global

    def _save_global_ref(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch[_Global] = _save_global_ref
    dispatch[_dtypes.dtype] = lambda self, d: self.save(_global_of(d))  # torch.float32

    def _tensor_args(self, t):
        data = t._data
        storage, offset, stride = self._storage_of(data, t.dtype, str(t.device))
        return (storage, offset, tuple(data.shape), stride, bool(t.requires_grad),
                collections.OrderedDict())

    def _storage_of(self, data, dtype, location):
        """``(storage ref, offset, stride)`` of ``data``: its root array's storage when the
        view can be described on it, else a fresh contiguous copy."""
        if isinstance(data, np.ndarray):
            root = data
            while isinstance(root.base, np.ndarray):
                root = root.base
            found = self._describe(data, root, dtype)
            if found is not None:
                offset, stride = found
                known = self.storages.get(id(root))
                if known is None:
                    ref = self._new_storage(root, dtype, root.nbytes // dtype.itemsize,
                                            location)
                    self.storages[id(root)] = (ref, dtype, root)
                elif known[1] != dtype:
                    raise RuntimeError("Cannot save multiple tensors or storages that view the "
                                       "same data as different types")
                else:
                    ref = known[0]
                return ref, offset, stride
        copy = np.ascontiguousarray(_device.to_numpy(data))
        ref = self._new_storage(copy, dtype, copy.size, location)
        self.storages[id(copy)] = (ref, dtype, copy)
        return ref, 0, contiguous_strides(copy.shape)

    @staticmethod
    def _describe(data, root, dtype):
        """``(offset, stride)`` in elements of ``data`` within ``root``'s memory, or None
        when PyTorch's strided layout cannot say it."""
        item = dtype.itemsize
        if not (root.flags.c_contiguous or root.flags.f_contiguous) or root.nbytes % item \
                or not data.dtype.isnative:
            return None
        delta = data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
        if data.size == 0:
            return (0, contiguous_strides(data.shape)) if delta == 0 else None
        if delta < 0 or delta % item or any(s < 0 or s % item
                                            for s, n in zip(data.strides, data.shape) if n > 1):
            return None
        stride = tuple(s // item if n > 1 else c
                       for s, n, c in zip(data.strides, data.shape,
                                          contiguous_strides(data.shape)))
        return delta // item, stride

    def _new_storage(self, array, dtype, numel, location):
        key = str(len(self.storages))
        kind = _STORAGES.get(dtype.name)
        if kind is None:
            kind = _STORAGES[dtype.name] = _Global("torch", storage_type_name(dtype))
        return _StorageRef(("storage", kind, key, location, numel), key, array)


def _as_plain(p):
    """A Parameter's data as a plain tensor sharing its array (pickled as its storage)."""
    return Tensor._make(p._data, None, p.requires_grad)


def _global_of(d):
    g = _DTYPES.get(d.name)
    if g is None:
        g = _DTYPES[d.name] = _Global("torch", d.name)
    return g


def _raw_bytes(array):
    """A flat uint8 view of a C- or Fortran-contiguous array's memory, in memory order."""
    mem = array if array.flags.c_contiguous else array.T
    return mem.reshape(-1).view(np.uint8)


class _Counting:
    """A write-only stream that counts what passes through it, so zipfile (which then sees
    an unseekable stream and writes data descriptors, as PyTorch's writer does) lets us know
    where each record's data lands."""

    def __init__(self, f):
        self._f, self.count = f, 0

    def write(self, data):
        n = self._f.write(data)
        n = len(memoryview(data).cast("B")) if n is None else n
        self.count += n
        return n

    def tell(self):
        return self.count

    def seek(self, *args):
        raise OSError("not seekable")

    def flush(self):
        if hasattr(self._f, "flush"):
            self._f.flush()


def _add(zf, out, name, data):
    """Write record ``name`` with its data aligned to 64 bytes in the stream."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    size = len(data)
    zip64 = size * 1.05 > zipfile.ZIP64_LIMIT
    start = out.count + 30 + len(name.encode()) + 4 + (20 if zip64 else 0)
    pad = -start % _ALIGN
    info.extra = struct.pack("<HH", _PAD_ID, pad) + bytes(pad)
    info.file_size = size
    with zf.open(info, "w", force_zip64=zip64) as dest:
        dest.write(data)


def write(obj, f, name):
    """Write ``obj`` to the writable binary stream ``f`` as archive ``name``."""
    buf = io.BytesIO()
    pickler = _Pickler(buf)
    pickler.dump(obj)
    out = _Counting(f)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zf:
        _add(zf, out, f"{name}/data.pkl", buf.getbuffer())
        _add(zf, out, f"{name}/.format_version", b"1")
        _add(zf, out, f"{name}/.storage_alignment", str(_ALIGN).encode())
        _add(zf, out, f"{name}/byteorder", sys.byteorder.encode())
        for ref, _, _ in pickler.storages.values():
            _add(zf, out, f"{name}/data/{ref.key}", _raw_bytes(ref.array))
        _add(zf, out, f"{name}/version", b"3\n")
        _add(zf, out, f"{name}/.data/serialization_id",
             str(secrets.randbits(128)).zfill(40).encode())


def archive_name(f):
    """The records' prefix: the file's name without extension, as PyTorch names it."""
    if isinstance(f, (str, os.PathLike)):
        return os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    return "archive"
