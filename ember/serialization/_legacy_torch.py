"""Reading PyTorch's legacy checkpoint format: what ``torch.save`` wrote before PyTorch 1.6
(and writes with ``_use_new_zipfile_serialization=False``).

The file is a stream, not an archive: five pickles one after another (a magic number, the
format's protocol version, a dict describing the writer's machine, the object itself, and the
list of storage keys in the order their data follows), then each storage's data as an 8-byte
element count and its raw bytes. Storages are persistent ids ``('storage', type, key,
location, numel, view_metadata)``.

Loading keeps the guarantees of the zip format (see the package docstring): with
``weights_only=True`` the pickles are located first by an opcode scanner that runs nothing (it
knows the argument length of each opcode the interpreter accepts, and stops at any other, which
the interpreter then refuses), then read by the same restricted interpreter; a storage is
allocated when its id is read, only once its bytes (declared count times dtype size), with all
before it, fit both in what follows in the file and in ``max_bytes``; its data must then be
exactly the declared count. Nothing is returned and ``map_location`` is not called before the
whole file has been read and checked.
"""
from __future__ import annotations

import os
import struct
import sys

import numpy as np

from . import _globals, _unpickle
from ._globals import CheckpointError, Storage
from ._zip import fill, limit_of, read_exact, short, zip_errors

__all__ = ["MAGIC", "load"]

MAGIC = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19."  # pickle of PyTorch's magic number
_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
_PROTOCOL_VERSION = 1001
_CHUNK = 1 << 16
# argument bytes of each opcode the restricted interpreter accepts: a count, or how to read
_FIXED = {b"\x80": 1, b"J": 4, b"K": 1, b"M": 2, b"G": 8, b"h": 1, b"j": 4, b"q": 1, b"r": 4}
_FIXED.update(dict.fromkeys([b"\x81", b"R", b"b", b"a", b"e", b"s", b"u", b"(", b"t", b"\x85",
                             b"\x86", b"\x87", b"N", b"\x88", b"\x89", b")", b"]", b"}",
                             b"\x8f", b"Q", b"."], 0))
_FIXED = {k[0]: v for k, v in _FIXED.items()}


class _Scanner:
    """Reads a stream just far enough to hold ``count`` whole pickles (or up to the first
    opcode the interpreter does not accept), running nothing."""

    def __init__(self, fh, cap, rule):
        self._fh, self.buf, self._eof = fh, bytearray(), False
        self._cap, self._rule = cap, rule

    def _ensure(self, end):
        """Whether the buffer reaches ``end`` (the file may end first); it never holds more
        than ``cap`` bytes."""
        while len(self.buf) < end and not self._eof:
            if len(self.buf) >= self._cap:
                raise CheckpointError(f"ember.load: the file's pickles take more than the limit "
                                      f"of {self._cap} bytes; refusing ({self._rule})")
            chunk = self._fh.read(min(_CHUNK, self._cap - len(self.buf)))
            self._eof = not chunk
            self.buf += chunk
        return len(self.buf) >= end

    def _newline(self, pos, longest=1024):
        """Where the line at ``pos`` ends (-1: not within ``longest`` bytes or the file)."""
        while True:
            nl = self.buf.find(b"\n", pos, pos + longest)
            if nl >= 0 or len(self.buf) >= pos + longest or not self._ensure(len(self.buf) + 1):
                return nl

    def scan(self, count):
        pos = 0
        while count and self._ensure(pos + 1):
            code = self.buf[pos]
            pos += 1
            if code in _FIXED:
                pos += _FIXED[code]
                count -= code == ord(".")
            elif code == ord("c"):  # GLOBAL: two lines
                for _ in range(2):
                    nl = self._newline(pos)
                    if nl < 0:
                        return bytes(self.buf)
                    pos = nl + 1
            elif code == ord("X"):  # BINUNICODE: a 4-byte length
                if not self._ensure(pos + 4):
                    break
                pos += 4 + struct.unpack_from("<I", self.buf, pos)[0]
            elif code in (ord("U"), 0x8A):  # SHORT_BINSTRING, LONG1: a 1-byte length
                if not self._ensure(pos + 1):
                    break
                pos += 1 + self.buf[pos]
            else:
                break  # refused by the interpreter, with PyTorch's message
        self._ensure(pos)
        return bytes(self.buf[:pos])


class _Storages:
    """Storages of a legacy file: allocated as their ids are read, filled afterwards."""

    def __init__(self, room, limit, rule):
        self._room, self.limit, self.rule = room, limit, rule
        self.loaded, self.total = {}, 0

    def __call__(self, pid):
        if type(pid) is tuple and pid and _unpickle._ascii(pid[0]) == "module":
            return pid[1]  # (trusted loads only) a module's class, with its source
        if not (type(pid) is tuple and len(pid) == 6 and _unpickle._ascii(pid[0]) == "storage"):
            raise CheckpointError(f"ember.load: persistent id {short(pid)} is not "
                                  "('storage', type, key, location, numel, view)")
        _, kind, key, location, numel, view = pid
        location = _unpickle._storage_location(pid, kind, key, location, numel)
        if view is not None:
            raise CheckpointError("ember.load: the file holds a storage view (PyTorch < 0.4's "
                                  "format), which ember does not load")
        dtype = kind.dtype()
        known = _unpickle._known_storage(self.loaded, key, dtype, numel)
        if known is not None:
            return known
        nbytes = numel * dtype.itemsize
        self.total += nbytes
        if self.total > self._room:
            raise CheckpointError(f"ember.load: the storages declare {self.total} bytes, more "
                                  f"than the file's {self._room}; refusing")
        if self.total > self.limit:
            raise CheckpointError(f"ember.load: the storages declare {self.total} bytes, over "
                                  f"what the limit leaves ({self.limit}); refusing ({self.rule})")
        array = np.empty(nbytes, np.uint8).view(dtype.np)
        storage = self.loaded[key] = Storage(key, dtype, numel, location, array)
        return storage


def load(fh, map_location, weights_only, pickle_module, encoding, max_bytes):
    """The object in a legacy-format file (positioned at its start)."""
    start = fh.tell()
    size = fh.seek(0, os.SEEK_END) - start
    fh.seek(start)
    limit, rule = limit_of(size, max_bytes)
    storages = _Storages(size, limit, rule)
    rebuilder = _globals.Rebuilder(max(limit - size, 0))
    allowed = _globals.globals_for(rebuilder)
    with zip_errors("the file is truncated or unreadable"):
        obj = _read(fh, start, storages, allowed, weights_only, pickle_module, encoding)
    _unpickle.finish(storages, rebuilder, map_location)
    return obj


def _read(fh, start, storages, allowed, weights_only, pickle_module, encoding):
    """The object, once every pickle and storage of the file has been read and checked."""
    if weights_only:
        data = _Scanner(fh, storages.limit, storages.rule).scan(5)
        storages.limit -= len(data)  # the pickles' bytes count against the limit too
        unpickler = _unpickle.WeightsOnlyUnpickler(data, allowed, storages, encoding)
        header = [_unpickle.run(unpickler) for _ in range(3)]
        obj = _unpickle.run(unpickler)
        keys = _unpickle.run(unpickler)
        fh.seek(start + unpickler.consumed)
    else:
        header = [pickle_module.load(fh, encoding=encoding) for _ in range(3)]
        unpickler = _unpickle._full_unpickler(pickle_module.Unpickler, allowed)(
            fh, encoding=encoding)
        unpickler.persistent_load = storages
        obj = unpickler.load()
        keys = pickle_module.load(fh, encoding=encoding)
    magic, version, sys_info = header
    if magic != _MAGIC_NUMBER:
        raise CheckpointError("ember.load: invalid magic number; corrupt file?")
    if version != _PROTOCOL_VERSION or not isinstance(sys_info, dict):
        raise CheckpointError(f"ember.load: invalid protocol version {short(version)}")
    little = sys_info.get("little_endian", True)
    _read_storages(fh, storages, keys, "little" if little else "big")
    if weights_only:
        _globals.check_depth(obj)
    return obj


def _read_storages(fh, storages, keys, byteorder):
    if not (type(keys) is list and all(type(k) is str for k in keys)
            and sorted(keys) == sorted(storages.loaded)):
        raise CheckpointError(f"ember.load: the storage keys {short(keys)} are not those the "
                              f"pickle names ({short(sorted(storages.loaded))})")
    for key in keys:
        storage = storages.loaded[key]
        what = f"storage {key!r}"
        count = int.from_bytes(read_exact(fh, 8, what), "little")
        if count != storage.numel:
            raise CheckpointError(f"ember.load: {what} holds {count} elements, but the pickle "
                                  f"declares {storage.numel}; refusing")
        fill(fh, storage.array, what)
        if byteorder != sys.byteorder and storage.dtype.itemsize > 1:
            storage.array.byteswap(inplace=True)
