"""``ember.save`` / ``ember.load``: checkpoints in a safe format that never runs code on load.

A checkpoint is one NumPy ``.npz`` archive: every tensor (or NumPy array) is an ordinary
array member, and the structure around them (dicts, lists, tuples, numbers, strings, None)
is a JSON manifest stored as a string array under ``__ember_manifest__``. Tensors that appear
several times in the saved object (tied weights) are stored once and come back as one tensor.

Loading untrusted files
-----------------------
``load`` reads the archive itself (``zipfile`` and the ``.npy`` header format) rather than
through ``numpy.load``, so that it can check every size before it allocates. For any file:

* It never runs code: nothing is unpickled, ``.npy`` headers are read with
  ``ast.literal_eval`` and the manifest with ``json``.
* Every way the file can be wrong raises :class:`CheckpointError` (a ``RuntimeError``) with a
  message naming the problem: not a zip archive, truncated or corrupt data (CRC, deflate),
  encrypted or unusually compressed members, unexpected or duplicate member names, a bad
  ``.npy`` header, a dtype that is not a number (object arrays, that is pickled data, strings,
  structured and datetime arrays) or that a tensor cannot hold, a shape that does not match
  the member's size, a manifest that is not JSON, too deeply nested or malformed, members it
  names that are missing, numbers out of their dtype's range. Errors opening a *path*
  (``FileNotFoundError`` ...) and errors raised by ``map_location`` itself propagate unchanged.
* Allocation is bounded before it happens. Each member's ``.npy`` header must describe exactly
  the number of bytes its zip entry declares; each entry's declared size must be possible (a
  stored entry holds exactly its compressed bytes, a deflated one at most 1032 times them,
  deflate's largest ratio, and no entry's compressed bytes exceed the file); and the declared
  sizes of all entries together must not exceed the limit below. Each member is read at most
  once, in 1 MiB chunks straight into the array that is returned (no second copy). So ``load``
  allocates at most the limit for arrays and manifest, plus fixed-size buffers and the Python
  objects built from the manifest.
* Nothing is returned and ``map_location`` is not called until the whole file has been read
  and checked, so a bad file leaves nothing half loaded (for example a module whose
  ``load_state_dict`` would receive the result).

Limits
------
* ``max_bytes``: the decompressed size of all members together. The default, ``None``, allows
  ``max(256 * file size, 64 MiB)``. ``save`` stores members uncompressed, so its files never
  come near this bound (their members hold less than the file's size); it refuses only
  archives whose members inflate more than 256-fold, to over 64 MiB, which real data does not
  do unless it is almost entirely zeros *and* was written compressed
  (``numpy.savez_compressed``). A zip bomb (1.5 MB of deflated zeros that inflate to 1.5 GiB)
  is refused before anything is allocated. An explicit ``max_bytes``, larger or smaller,
  replaces the default bound.
* The manifest may nest at most 512 JSON levels (about 170 levels of nested dicts or 250 of
  nested lists); ``save`` refuses deeper objects, so whatever it writes loads. This also
  bounds the recursion of ``json`` and of the decoder below.
* ``.npy`` headers may be at most 10,000 characters (NumPy's own limit) and 64 dimensions.

Arrays come back in native byte order (a big-endian member is swapped in place), and a file
object must be seekable (as ``zipfile`` requires).
"""
from __future__ import annotations

import ast
import collections
import contextlib
import json
import math
import operator
import os
import re
import sys
import zipfile
import zlib

import numpy as np

from . import _device, _dtypes
from ._tensor import Tensor

__all__ = ["save", "load", "CheckpointError"]

_MANIFEST = "__ember_manifest__"
_FORMAT = "ember-npz-1"

_DEFAULT_RATIO = 256  # default max_bytes: this many times the file's size ...
_DEFAULT_FLOOR = 64 << 20  # ... but never less than 64 MiB
_DEFLATE_MAX_RATIO = 1032  # no deflate stream inflates more than this
_MAX_DEPTH = 512  # JSON nesting levels in the manifest
_MAX_HEADER = 10_000  # characters in a .npy header (numpy.lib.format's default)
_MAX_DIMS = 64
_CHUNK = 1 << 20  # bytes read from a member at a time

_MEMBER_KEY = re.compile(r"a[0-9]+")  # save names its array members a0, a1, ...
_NUMBER_DTYPE = re.compile(r"[<>|=]?[biufc][0-9]{1,2}")  # dtype.str of a number type
_TEXT_DTYPE = re.compile(r"[<>|=]?U[1-9][0-9]{0,9}")  # the manifest's dtype
_OBJECT_DTYPE = re.compile(r"[<>|=]?O[0-9]?")
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_TENSOR_DTYPES = frozenset(np.dtype(d.np) for d in _dtypes.ALL)
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError,
               NotImplementedError, zlib.error)  # NotImplementedError: zip features


class CheckpointError(RuntimeError):
    """``ember.load`` refused a file: it is not an ember checkpoint, it is corrupt or
    malformed, or it would allocate more than the limit. The message says which."""


# ------------------------------------------------------------------------------ save

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


def _json_depth(text):
    """How deeply JSON ``text`` nests, counted without parsing (brackets inside strings are
    skipped). For invalid JSON it may overcount, never undercount what ``json`` would reach."""
    depth = deepest = 0
    for token in _JSON_TOKEN.finditer(text):
        bracket = text[token.start()]
        if bracket in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif bracket in "]}":
            depth -= 1
    return deepest


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` (tensors, arrays, numbers, strings, None, and dicts / lists / tuples of
    them, such as model and optimizer state dicts) to a path or a writable binary file.
    ``pickle_module`` and ``pickle_protocol`` are accepted for compatibility and ignored:
    nothing is pickled. Objects nested deeper than :func:`load` accepts raise ``ValueError``."""
    arrays = {}
    manifest = json.dumps({"format": _FORMAT, "root": _encode(obj, arrays, {})}, allow_nan=True)
    depth = _json_depth(manifest)
    if depth > _MAX_DEPTH:
        raise ValueError(f"ember.save: the object nests {depth} levels deep in the manifest; "
                         f"ember.load accepts at most {_MAX_DEPTH}")
    arrays[_MANIFEST] = np.array(manifest)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            np.savez(fh, allow_pickle=False, **arrays)
    else:
        np.savez(f, allow_pickle=False, **arrays)


# ------------------------------------------------------------------------------ load

def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         max_bytes=None, **pickle_load_args):
    """Load an object saved by :func:`save` from a path or a readable, seekable binary file.

    Never unpickles, and checks sizes before allocating (see the module docstring): a file
    that is not an ember checkpoint, is corrupt, or would need more than ``max_bytes`` bytes
    raises :class:`CheckpointError`. ``max_bytes`` bounds the decompressed size of the
    file's members; the default ``None`` allows ``max(256 * file size, 64 MiB)``, which
    every file written by :func:`save` satisfies. ``map_location`` (a device, string, dict
    or callable) moves the loaded tensors, once the whole file has been checked.
    ``pickle_module``, ``weights_only`` and ``mmap`` are accepted for compatibility and
    ignored."""
    if max_bytes is not None:
        if isinstance(max_bytes, bool):
            raise TypeError("ember.load: max_bytes must be an int or None, not bool")
        max_bytes = operator.index(max_bytes)
        if max_bytes < 0:
            raise ValueError(f"ember.load: max_bytes must be >= 0, got {max_bytes}")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load(fh, map_location, max_bytes)
    return _load(f, map_location, max_bytes)


def _load(fh, map_location, max_bytes):
    with _Archive(fh, max_bytes) as archive:
        root = archive.manifest()
        cache = {}
        obj = _decode(root, archive, cache)  # reads and checks every member it refers to
    if map_location is None:
        return obj
    placed = {k: _place(v, map_location) if k[0] == "tensor" else v for k, v in cache.items()}
    return _decode(root, None, placed)  # same walk; every member is in the cache now


def _place(t, map_location):
    if callable(map_location):
        out = map_location(t, "cpu")
        return t if out is None else out
    if isinstance(map_location, dict):
        target = map_location.get("cpu")
        return t if target is None else t.to(target)
    return t.to(map_location)


def _short(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _malformed(problem):
    return CheckpointError(f"ember.load: malformed manifest: {problem}")


@contextlib.contextmanager
def _zip_errors(problem):
    """Turn what ``zipfile`` / ``zlib`` / the file object raise into a CheckpointError."""
    try:
        yield
    except _ZIP_ERRORS as exc:
        raise CheckpointError(f"ember.load: {problem} ({type(exc).__name__}: {exc})") from exc


class _Archive:
    """An ember checkpoint's zip archive whose entries passed the size checks; reads each
    member at most once."""

    def __init__(self, fh, max_bytes):
        with _zip_errors("not an ember checkpoint: not a readable zip archive"):
            size = fh.seek(0, os.SEEK_END)
            self._zip = zipfile.ZipFile(fh)
        try:
            self._infos = _checked_entries(self._zip.infolist(), size, max_bytes)
        except BaseException:
            self._zip.close()
            raise
        self._read = set()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self._zip.close()

    def manifest(self):
        """The manifest's ``root`` node, parsed from JSON after checking its nesting."""
        text = self._member(_MANIFEST, f"the manifest {_MANIFEST!r}", kinds="U")
        if text.shape != ():
            raise CheckpointError(f"ember.load: the manifest has shape {text.shape}, not ()")
        if (text.reshape(1).view(np.uint32) > sys.maxunicode).any():
            raise CheckpointError("ember.load: the manifest holds invalid characters")
        return _parse_manifest(str(text[()]))

    def array(self, key, kinds="biufc"):
        """The array in member ``key``; a manifest may refer to each member only once."""
        if key + ".npy" not in self._infos:
            raise _malformed(f"it refers to member {_short(key)}, which the file does not hold")
        if key in self._read:
            raise _malformed(f"it refers to member {key!r} both as a tensor and as an array")
        self._read.add(key)
        return self._member(key, f"member {key!r}", kinds)

    def _member(self, key, what, kinds):
        info = self._infos[key + ".npy"]
        with _zip_errors(f"{what} is corrupt or truncated"), self._zip.open(info) as fh:
            return _read_npy(fh, info.file_size, what, kinds)


def _checked_entries(infos, size, max_bytes):
    """The archive's entries by name, once their names, compression and declared sizes pass
    the checks; CheckpointError otherwise."""
    names = [info.filename for info in infos]
    if _MANIFEST + ".npy" not in names:
        raise CheckpointError("ember.load: not an ember checkpoint (no manifest); files "
                              "written by torch.save use pickle and are not loaded")
    if len(set(names)) != len(names):
        raise CheckpointError("ember.load: the archive holds several members of one name")
    for info in infos:
        _check_entry(info, size)
    total = sum(info.file_size for info in infos)
    if max_bytes is None:
        limit = max(_DEFAULT_RATIO * size, _DEFAULT_FLOOR)
        rule = f"the default max_bytes=None allows max({_DEFAULT_RATIO} * file size, 64 MiB)"
    else:
        limit, rule = max_bytes, f"max_bytes={max_bytes}"
    if total > limit:
        raise CheckpointError(
            f"ember.load: the members of this {size}-byte file declare {total} bytes in all, "
            f"over the limit of {limit}; refusing ({rule}; pass a larger max_bytes to load a "
            "trusted file)")
    return dict(zip(names, infos))


def _check_entry(info, size):
    name = info.filename
    key = name[:-4] if name.endswith(".npy") else None
    if key != _MANIFEST and not (key and _MEMBER_KEY.fullmatch(key)):
        raise CheckpointError(f"ember.load: unexpected member {_short(name)} (an ember "
                              f"checkpoint holds only a<N>.npy arrays and {_MANIFEST}.npy)")
    if info.flag_bits & 0x1:
        raise CheckpointError(f"ember.load: member {key!r} is encrypted")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise CheckpointError(f"ember.load: member {key!r} uses zip compression method "
                              f"{info.compress_type}; only stored and deflated are read")
    if info.compress_size > size:
        raise CheckpointError(f"ember.load: member {key!r} claims {info.compress_size} "
                              f"compressed bytes but the file holds only {size}")
    stored = info.compress_type == zipfile.ZIP_STORED
    most = info.compress_size if stored else _DEFLATE_MAX_RATIO * info.compress_size
    if info.file_size > most or (stored and info.file_size != most):
        raise CheckpointError(f"ember.load: member {key!r} declares {info.file_size} bytes, "
                              f"which its {info.compress_size} "
                              f"{'stored' if stored else 'deflated'} bytes cannot hold")


def _read_npy(fh, size, what, kinds):
    """Read one ``.npy`` member of ``size`` bytes into a new native-byte-order array."""
    header_len, shape, fortran_order, dtype = _read_npy_header(fh, what, kinds)
    _check_shape(shape, dtype, what)
    nbytes = math.prod(shape) * dtype.itemsize
    if header_len + nbytes != size:
        raise CheckpointError(
            f"ember.load: {what} declares {nbytes} bytes of data (shape {shape}, dtype "
            f"{dtype.str}) but its zip entry holds {size - header_len}; refusing")
    array = np.empty(shape, dtype.newbyteorder("="), order="F" if fortran_order else "C")
    _fill(fh, array, what)
    if not dtype.isnative:
        array.byteswap(inplace=True)
    return array


def _read_npy_header(fh, what, kinds):
    """``(bytes read, shape, fortran_order, dtype)`` from a ``.npy`` header."""
    magic = _read_exact(fh, 8, what)
    if magic[:6] != b"\x93NUMPY" or magic[6:] not in (b"\x01\x00", b"\x02\x00", b"\x03\x00"):
        raise CheckpointError(f"ember.load: {what} is not a .npy array (magic {magic!r})")
    length_size = 2 if magic[6] == 1 else 4
    header_size = int.from_bytes(_read_exact(fh, length_size, what), "little")
    if header_size > _MAX_HEADER:
        raise CheckpointError(f"ember.load: {what} has a {header_size}-byte .npy header, "
                              f"over the limit of {_MAX_HEADER}")
    text = _read_exact(fh, header_size, what).decode("latin1" if magic[6] < 3 else "utf8")
    try:
        header = ast.literal_eval(text)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError) as exc:
        raise CheckpointError(f"ember.load: {what} has an unreadable .npy header "
                              f"({type(exc).__name__})") from exc
    if not isinstance(header, dict) or set(header) != {"descr", "fortran_order", "shape"}:
        raise CheckpointError(f"ember.load: {what} has a malformed .npy header {_short(text)}")
    shape, fortran_order = header["shape"], header["fortran_order"]
    if not (isinstance(shape, tuple) and all(type(n) is int for n in shape)):
        raise CheckpointError(f"ember.load: {what} has a malformed shape {_short(shape)}")
    if not isinstance(fortran_order, bool):
        raise CheckpointError(f"ember.load: {what} has a malformed .npy header {_short(text)}")
    dtype = _dtype(header["descr"], what, kinds)
    return 8 + length_size + header_size, shape, fortran_order, dtype


def _dtype(descr, what, kinds):
    """The NumPy dtype for ``descr`` if it is one of ``kinds`` ("biufc": numbers; "U": text)."""
    pattern = _TEXT_DTYPE if kinds == "U" else _NUMBER_DTYPE
    if isinstance(descr, str) and _OBJECT_DTYPE.fullmatch(descr):
        raise CheckpointError(f"ember.load: {what} holds Python objects (dtype {descr!r}, "
                              "pickled data); ember.load never unpickles")
    dtype = None
    if isinstance(descr, str) and pattern.fullmatch(descr):
        with contextlib.suppress(TypeError):
            dtype = np.dtype(descr)
    if dtype is None or dtype.kind not in kinds:
        expected = "a text" if kinds == "U" else "a number"
        raise CheckpointError(f"ember.load: {what} has dtype {_short(descr)}, which is not "
                              f"{expected} type; refusing")
    return dtype


def _check_shape(shape, dtype, what):
    if len(shape) > _MAX_DIMS or any(n < 0 for n in shape):
        raise CheckpointError(f"ember.load: {what} has an invalid shape {_short(shape)}")
    if math.prod(max(n, 1) for n in shape) * dtype.itemsize > np.iinfo(np.intp).max:
        raise CheckpointError(f"ember.load: {what} has shape {_short(shape)}, whose size "
                              "overflows")


def _read_exact(fh, n, what):
    data = fh.read(n)
    if len(data) != n:
        raise CheckpointError(f"ember.load: {what} is truncated")
    return data


def _fill(fh, array, what):
    """Read ``array``'s bytes from ``fh`` in chunks, straight into its memory."""
    raw = memoryview(array.reshape(-1, order="A").view(np.uint8))
    done = 0
    while done < len(raw):
        chunk = fh.read(min(_CHUNK, len(raw) - done))
        if not chunk:
            raise CheckpointError(f"ember.load: {what} is truncated")
        raw[done:done + len(chunk)] = chunk
        done += len(chunk)


def _parse_manifest(text):
    depth = _json_depth(text)
    if depth > _MAX_DEPTH:
        raise CheckpointError(f"ember.load: the manifest nests {depth} levels deep, over the "
                              f"limit of {_MAX_DEPTH}")
    try:
        manifest = json.loads(text)
    except ValueError as exc:  # also: integers of more than 4300 digits
        raise CheckpointError(f"ember.load: the manifest is not valid JSON ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
        raise CheckpointError("ember.load: unknown checkpoint format")
    if "root" not in manifest:
        raise _malformed("no root object")
    return manifest["root"]


# Decoding the manifest: its nesting was checked (<= _MAX_DEPTH), which bounds the recursion.

def _decode(node, archive, cache):
    if not isinstance(node, dict):
        if isinstance(node, list):
            raise _malformed("a bare JSON list where a value was expected")
        return node  # None, bool, int, float or str
    if set(node) == {"tensor", "requires_grad"}:
        return _decode_tensor(node["tensor"], node["requires_grad"], archive, cache)
    if set(node) == {"scalar", "dtype"}:
        return _decode_scalar(node["scalar"], node["dtype"])
    if len(node) == 1:
        (kind, value), = node.items()
        if kind == "ndarray":
            return _decode_ndarray(value, archive, cache)
        if kind in ("dict", "odict", "list", "tuple"):
            return _decode_container(kind, value, archive, cache)
    raise _malformed(f"unknown node with keys {_short(sorted(node))}")


def _member_key(key):
    if not isinstance(key, str) or not _MEMBER_KEY.fullmatch(key):
        raise _malformed(f"{_short(key)} is not an array member name")
    return key


def _decode_tensor(key, requires_grad, archive, cache):
    key = _member_key(key)
    if not isinstance(requires_grad, bool):
        raise _malformed(f"requires_grad of {key!r} is {_short(requires_grad)}, not a bool")
    if ("tensor", key) not in cache:
        data = archive.array(key)
        if data.dtype not in _TENSOR_DTYPES:
            raise CheckpointError(f"ember.load: member {key!r} has dtype {data.dtype}, which "
                                  "an ember tensor cannot hold")
        if requires_grad and data.dtype.kind not in "fc":
            raise _malformed(f"tensor {key!r} of dtype {data.dtype} requires grad")
        cache["tensor", key] = Tensor._make(data, None, requires_grad)
    return cache["tensor", key]


def _decode_ndarray(key, archive, cache):
    key = _member_key(key)
    if ("ndarray", key) not in cache:
        cache["ndarray", key] = archive.array(key)
    return cache["ndarray", key]


def _decode_scalar(value, descr):
    dtype = _dtype(descr, "a scalar in the manifest", "biufc")
    wanted = bool if dtype.kind == "b" else int if dtype.kind in "iu" else (int, float)
    if not isinstance(value, wanted) or (dtype.kind != "b" and isinstance(value, bool)):
        raise _malformed(f"scalar {_short(value)} does not fit dtype {dtype.str}")
    try:
        with np.errstate(over="raise", invalid="raise"):
            return dtype.type(value)
    except (OverflowError, FloatingPointError) as exc:
        raise _malformed(f"scalar {_short(value)} is out of range for dtype {dtype.str}") \
            from exc


def _decode_container(kind, value, archive, cache):
    if not isinstance(value, list):
        raise _malformed(f"a {kind} holds {_short(value)}, not a JSON list")
    if kind == "list":
        return [_decode(v, archive, cache) for v in value]
    if kind == "tuple":
        return tuple(_decode(v, archive, cache) for v in value)
    out = collections.OrderedDict() if kind == "odict" else {}
    for pair in value:
        if not (isinstance(pair, list) and len(pair) == 2):
            raise _malformed(f"a {kind} entry {_short(pair)} is not a [key, value] pair")
        out[_decode_key(pair[0])] = _decode(pair[1], archive, cache)
    return out


def _decode_key(node):
    if isinstance(node, dict) and set(node) == {"tuple"} and isinstance(node["tuple"], list):
        return tuple(_decode_key(k) for k in node["tuple"])
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    raise _malformed(f"dict key {_short(node)} is not a number, string, None or tuple")
