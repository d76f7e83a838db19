"""``ember.save`` / ``ember.load``: checkpoints in a safe format that never runs code on load.

A checkpoint is one NumPy ``.npz`` archive: every tensor (or NumPy array) is an ordinary
array member, and the structure around them (dicts, lists, tuples, numbers, strings, None)
is a JSON manifest stored as a string array under ``__ember_manifest__``. Loading uses
``numpy.load(allow_pickle=False)`` and ``json``, so a file holding a pickle payload (a PyTorch
checkpoint, or a crafted one) is rejected instead of executed.

Tensors that appear several times in the saved object (tied weights) are stored once and
come back as one tensor.
"""
from __future__ import annotations

import collections
import json
import os
import zipfile

import numpy as np

from . import _device
from ._tensor import Tensor

__all__ = ["save", "load"]

_MANIFEST = "__ember_manifest__"
_FORMAT = "ember-npz-1"


def _encode(obj, arrays, seen):
    if isinstance(obj, Tensor):
        key = seen.get(id(obj))
        if key is None:
            key = f"a{len(arrays)}"
            seen[id(obj)] = key
            arrays[key] = _checked(np.array(_device.to_numpy(obj._data), order="C"))
        return {"tensor": key, "requires_grad": bool(obj.requires_grad)}
    if isinstance(obj, np.ndarray):
        key = seen.get(id(obj))
        if key is None:
            key = f"a{len(arrays)}"
            seen[id(obj)] = key
            arrays[key] = _checked(np.array(obj, order="C"))
        return {"ndarray": key}
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (int, float)) and type(obj) in (int, float):
        return obj
    if isinstance(obj, np.generic) and not isinstance(obj, (np.str_, np.bytes_, np.void)):
        return {"scalar": obj.item(), "dtype": obj.dtype.str}
    if isinstance(obj, dict):
        kind = "odict" if isinstance(obj, collections.OrderedDict) else "dict"
        return {kind: [[_encode_key(k), _encode(v, arrays, seen)] for k, v in obj.items()]}
    if isinstance(obj, list):
        return {"list": [_encode(v, arrays, seen) for v in obj]}
    if isinstance(obj, tuple):
        return {"tuple": [_encode(v, arrays, seen) for v in obj]}
    if isinstance(obj, (int, float)):  # subclasses of int / float (e.g. IntEnum): plain value
        return int(obj) if isinstance(obj, int) else float(obj)
    raise TypeError("ember.save can only store tensors, NumPy arrays, numbers, strings, None "
                    f"and dicts, lists and tuples of them; got {type(obj).__name__}")


def _encode_key(key):
    if key is None or isinstance(key, (bool, int, float, str)):
        return _encode(key, None, None)
    if isinstance(key, tuple):
        return {"tuple": [_encode_key(k) for k in key]}
    raise TypeError(f"ember.save: unsupported dict key type {type(key).__name__}")


def _checked(array):
    if array.dtype.kind not in "biufc":
        raise TypeError(f"ember.save cannot store arrays of dtype {array.dtype}")
    return array


def _decode(node, arrays, cache, map_location):
    if not isinstance(node, dict):
        if isinstance(node, list):
            raise RuntimeError("ember.load: malformed manifest")
        return node
    if len(node) == 2 and "tensor" in node:
        key = node["tensor"]
        if key not in cache:
            t = Tensor._make(np.array(_array(arrays, key)), None, bool(node["requires_grad"]))
            cache[key] = _place(t, map_location)
        return cache[key]
    kind, value = next(iter(node.items())) if len(node) == 1 else (None, None)
    if kind == "ndarray":
        if value not in cache:
            cache[value] = np.array(_array(arrays, value))
        return cache[value]
    if kind in ("dict", "odict"):
        out = collections.OrderedDict() if kind == "odict" else {}
        for k, v in value:
            out[_decode_key(k)] = _decode(v, arrays, cache, map_location)
        return out
    if kind == "list":
        return [_decode(v, arrays, cache, map_location) for v in value]
    if kind == "tuple":
        return tuple(_decode(v, arrays, cache, map_location) for v in value)
    if len(node) == 2 and "scalar" in node:
        dtype = np.dtype(node["dtype"])
        if dtype.kind not in "biufc":
            raise RuntimeError("ember.load: malformed manifest")
        return dtype.type(node["scalar"])
    raise RuntimeError("ember.load: malformed manifest")


def _decode_key(node):
    if isinstance(node, dict) and set(node) == {"tuple"}:
        return tuple(_decode_key(k) for k in node["tuple"])
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    raise RuntimeError("ember.load: malformed manifest")


def _array(arrays, key):
    if not isinstance(key, str) or key == _MANIFEST or key not in arrays.files:
        raise RuntimeError("ember.load: malformed manifest")
    return arrays[key]  # allow_pickle=False: an object (pickled) member raises here


def _place(t, map_location):
    if map_location is None:
        return t
    if callable(map_location):
        out = map_location(t, "cpu")
        return t if out is None else out
    if isinstance(map_location, dict):
        target = map_location.get("cpu")
        return t if target is None else t.to(target)
    return t.to(map_location)


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` (tensors, arrays, numbers, strings, None, and dicts / lists / tuples of
    them, such as model and optimizer state dicts) to a path or a writable binary file.
    ``pickle_module`` and ``pickle_protocol`` are accepted for compatibility and ignored:
    nothing is pickled."""
    arrays = {}
    manifest = {"format": _FORMAT, "root": _encode(obj, arrays, {})}
    arrays[_MANIFEST] = np.array(json.dumps(manifest, allow_nan=True))
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            np.savez(fh, allow_pickle=False, **arrays)
    else:
        np.savez(f, allow_pickle=False, **arrays)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load an object saved by :func:`save` from a path or a readable binary file.

    Never unpickles: a file that is not an ember checkpoint, or that holds pickled data,
    raises ``RuntimeError``. ``map_location`` (a device, string, dict or callable) moves the
    loaded tensors."""
    try:
        archive = np.load(f, allow_pickle=False)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise RuntimeError(f"ember.load: not an ember checkpoint ({exc})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise RuntimeError("ember.load: not an ember checkpoint (expected an .npz archive)")
    with archive:
        if _MANIFEST not in archive.files:
            raise RuntimeError("ember.load: not an ember checkpoint (no manifest); files "
                               "written by torch.save use pickle and are not loaded")
        try:
            raw = archive[_MANIFEST]
            manifest = json.loads(str(raw[()]))
        except (ValueError, TypeError) as exc:
            raise RuntimeError(f"ember.load: unreadable manifest ({exc})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
            raise RuntimeError("ember.load: unknown checkpoint format")
        try:
            return _decode(manifest.get("root"), archive, {}, map_location)
        except ValueError as exc:  # e.g. an object array: pickled data, refused
            raise RuntimeError(f"ember.load: refused to load ({exc})") from None
