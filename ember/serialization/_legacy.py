"""Reading ember's older checkpoint format (before PyTorch's format was adopted).

Such a file is one NumPy ``.npz`` archive: every tensor (or NumPy array) is an array member
``a<N>.npy``, and the structure around them (dicts, lists, tuples, numbers, strings, None) is a
JSON manifest stored as a string array under ``__ember_manifest__``. ``ember.save`` no longer
writes it; ``ember.load`` keeps reading it, so checkpoints saved by earlier versions of ember
still load. Nothing is unpickled: ``.npy`` headers are read with ``ast.literal_eval`` and the
manifest with ``json``, and the checks of the zip layer (``_zip``) come first.

Checks, each a :class:`CheckpointError` naming the problem: unexpected member names, a bad
``.npy`` header, a dtype that is not a number (object arrays, that is pickled data, strings,
structured and datetime arrays) or that a tensor cannot hold, a shape that does not match the
member's size, a manifest that is not JSON, nested more than 512 levels or malformed, members it
names that are missing, numbers out of their dtype's range. Each member's ``.npy`` header must
describe exactly the bytes its zip entry declares, and each member is read at most once,
straight into the array that is returned. ``.npy`` headers may be at most 10,000 characters
(NumPy's own limit) and 64 dimensions. Arrays come back in native byte order.
"""
from __future__ import annotations

import ast
import collections
import contextlib
import json
import math
import re
import sys

import numpy as np

from .. import _dtypes
from .._tensor import Tensor
from ._zip import CheckpointError, fill, read_exact
from ._zip import short as _short

__all__ = ["MANIFEST_MEMBER", "check_names", "load"]

_MANIFEST = "__ember_manifest__"
MANIFEST_MEMBER = _MANIFEST + ".npy"
_FORMAT = "ember-npz-1"

_MAX_DEPTH = 512  # JSON nesting levels in the manifest
_MAX_HEADER = 10_000  # characters in a .npy header (numpy.lib.format's default)
_MAX_DIMS = 64

_MEMBER_KEY = re.compile(r"a[0-9]+")  # the old save named its array members a0, a1, ...
_NUMBER_DTYPE = re.compile(r"[<>|=]?[biufc][0-9]{1,2}")  # dtype.str of a number type
_TEXT_DTYPE = re.compile(r"[<>|=]?U[1-9][0-9]{0,9}")  # the manifest's dtype
_OBJECT_DTYPE = re.compile(r"[<>|=]?O[0-9]?")
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_TENSOR_DTYPES = frozenset(np.dtype(d.np) for d in _dtypes.ALL)


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


def label(name):
    """How messages name a member: by its key (``member 'a0'``)."""
    return f"member {name[:-4] if name.endswith('.npy') else name!r}"


def check_names(names):
    """Refuse members an older ember checkpoint cannot hold."""
    for name in names:
        key = name[:-4] if name.endswith(".npy") else None
        if key != _MANIFEST and not (key and _MEMBER_KEY.fullmatch(key)):
            raise CheckpointError(f"ember.load: unexpected member {_short(name)} (an ember "
                                  f"checkpoint holds only a<N>.npy arrays and {MANIFEST_MEMBER})")


def load(archive, map_location):
    """The object in an older ember checkpoint (an open, checked :class:`_zip.Archive`).

    Nothing is returned and ``map_location`` is not called until every member the manifest
    names has been read and checked. A callable ``map_location`` is called with each tensor
    and ``'cpu'``."""
    reader = _Reader(archive)
    root = reader.manifest()
    cache = {}
    obj = _decode(root, reader, cache)  # reads and checks every member it refers to
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


def _malformed(problem):
    return CheckpointError(f"ember.load: malformed manifest: {problem}")


class _Reader:
    """Reads an older ember checkpoint's members, each at most once."""

    def __init__(self, archive):
        self._archive = archive
        self._read = set()

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
        if key + ".npy" not in self._archive.infos:
            raise _malformed(f"it refers to member {_short(key)}, which the file does not hold")
        if key in self._read:
            raise _malformed(f"it refers to member {key!r} both as a tensor and as an array")
        self._read.add(key)
        return self._member(key, f"member {key!r}", kinds)

    def _member(self, key, what, kinds):
        name = key + ".npy"
        with self._archive.open(name, what) as fh:
            return _read_npy(fh, self._archive.infos[name].file_size, what, kinds)


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
    fill(fh, array, what)
    if not dtype.isnative:
        array.byteswap(inplace=True)
    return array


def _read_npy_header(fh, what, kinds):
    """``(bytes read, shape, fortran_order, dtype)`` from a ``.npy`` header."""
    magic = read_exact(fh, 8, what)
    if magic[:6] != b"\x93NUMPY" or magic[6:] not in (b"\x01\x00", b"\x02\x00", b"\x03\x00"):
        raise CheckpointError(f"ember.load: {what} is not a .npy array (magic {magic!r})")
    length_size = 2 if magic[6] == 1 else 4
    header_size = int.from_bytes(read_exact(fh, length_size, what), "little")
    if header_size > _MAX_HEADER:
        raise CheckpointError(f"ember.load: {what} has a {header_size}-byte .npy header, "
                              f"over the limit of {_MAX_HEADER}")
    text = read_exact(fh, header_size, what).decode("latin1" if magic[6] < 3 else "utf8")
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
