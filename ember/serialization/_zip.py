"""The zip layer of ``ember.load``: an archive whose entries passed the size checks.

Both formats ``ember.load`` reads are zip archives (PyTorch's, and ember's older
zip-of-``.npy``). Before any member is read, every entry must be stored or deflated, not
encrypted, and declare a size its compressed bytes can hold (a stored entry holds exactly its
compressed bytes, a deflated one at most 1032 times them, deflate's largest ratio, and no
entry's compressed bytes exceed the file); the declared sizes of all entries together must not
exceed the limit (``max_bytes``). Members are then read in 1 MiB chunks straight into the
buffer that is returned, and whatever ``zipfile`` / ``zlib`` raise on corrupt or truncated
data becomes a :class:`CheckpointError`.
"""
from __future__ import annotations

import contextlib
import os
import zipfile
import zlib

import numpy as np

__all__ = ["CheckpointError", "Archive", "zip_errors", "short", "limit_of"]

DEFAULT_RATIO = 256  # default max_bytes: this many times the file's size ...
DEFAULT_FLOOR = 64 << 20  # ... but never less than 64 MiB
_DEFLATE_MAX_RATIO = 1032  # no deflate stream inflates more than this
_CHUNK = 1 << 20  # bytes read from a member at a time
_ZIP_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError,
               NotImplementedError, zlib.error)  # NotImplementedError: zip features


class CheckpointError(RuntimeError):
    """``ember.load`` refused a file: it is not a checkpoint, it is corrupt or malformed, or
    it would allocate more than the limit. The message says which."""


def short(value, limit=60):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


@contextlib.contextmanager
def zip_errors(problem):
    """Turn what ``zipfile`` / ``zlib`` / the file object raise into a CheckpointError."""
    try:
        yield
    except _ZIP_ERRORS as exc:
        raise CheckpointError(f"ember.load: {problem} ({type(exc).__name__}: {exc})") from exc


def limit_of(size, max_bytes):
    """``(limit, rule)``: the bound on the members' declared bytes, and how it was chosen."""
    if max_bytes is None:
        return (max(DEFAULT_RATIO * size, DEFAULT_FLOOR),
                f"the default max_bytes=None allows max({DEFAULT_RATIO} * file size, 64 MiB)")
    return max_bytes, f"max_bytes={max_bytes}"


class Archive:
    """A zip archive whose entries passed the checks above. ``check_names(names)`` raises a
    CheckpointError for names no format allows, else returns ``(kind, label)``: which format
    the archive is (kept as ``kind``), and how messages name a member (``label(name)``)."""

    def __init__(self, fh, max_bytes, check_names):
        with zip_errors("not an ember checkpoint: not a readable zip archive"):
            size = fh.seek(0, os.SEEK_END)
            self._zip = zipfile.ZipFile(fh)
        try:
            infos = self._zip.infolist()
            names = [info.filename for info in infos]
            if len(set(names)) != len(names):
                raise CheckpointError("ember.load: the archive holds several members of one "
                                      "name")
            self.kind, label = check_names(names)
            for info in infos:
                _check_entry(info, size, label(info.filename))
            total = sum(info.file_size for info in infos)
            limit, rule = limit_of(size, max_bytes)
            if total > limit:
                raise CheckpointError(
                    f"ember.load: the members of this {size}-byte file declare {total} bytes "
                    f"in all, over the limit of {limit}; refusing ({rule}; pass a larger "
                    "max_bytes to load a trusted file)")
            self.infos = dict(zip(names, infos))
            self.spare = limit - total  # what the limit leaves beyond the members' bytes
        except BaseException:
            self._zip.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self._zip.close()

    @contextlib.contextmanager
    def open(self, name, what):
        """The member's stream; what it raises on corrupt data becomes a CheckpointError."""
        with zip_errors(f"{what} is corrupt or truncated"), self._zip.open(self.infos[name]) as fh:
            yield fh

    def read_bytes(self, name, what):
        """The whole member ``name`` as bytes (its size was checked against the limit)."""
        info = self.infos[name]
        with self.open(name, what) as fh:
            return read_exact(fh, info.file_size, what)

    def read_into(self, name, what, nbytes):
        """A new 1-D uint8 array holding member ``name``, which must hold ``nbytes`` bytes."""
        info = self.infos[name]
        if info.file_size != nbytes:
            raise CheckpointError(f"ember.load: {what} should hold {nbytes} bytes but its zip "
                                  f"entry declares {info.file_size}; refusing")
        array = np.empty(nbytes, np.uint8)
        with self.open(name, what) as fh:
            fill(fh, array, what)
        return array


def _check_entry(info, size, what):
    if info.flag_bits & 0x1:
        raise CheckpointError(f"ember.load: {what} is encrypted")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise CheckpointError(f"ember.load: {what} uses zip compression method "
                              f"{info.compress_type}; only stored and deflated are read")
    if info.compress_size > size:
        raise CheckpointError(f"ember.load: {what} claims {info.compress_size} "
                              f"compressed bytes but the file holds only {size}")
    stored = info.compress_type == zipfile.ZIP_STORED
    most = info.compress_size if stored else _DEFLATE_MAX_RATIO * info.compress_size
    if info.file_size > most or (stored and info.file_size != most):
        raise CheckpointError(f"ember.load: {what} declares {info.file_size} bytes, "
                              f"which its {info.compress_size} "
                              f"{'stored' if stored else 'deflated'} bytes cannot hold")


def read_exact(fh, n, what):
    data = fh.read(n)
    if len(data) != n:
        raise CheckpointError(f"ember.load: {what} is truncated")
    return data


def fill(fh, array, what):
    """Read ``array``'s bytes from ``fh`` in chunks, straight into its memory."""
    raw = memoryview(array.reshape(-1, order="A").view(np.uint8))
    done = 0
    while done < len(raw):
        chunk = fh.read(min(_CHUNK, len(raw) - done))
        if not chunk:
            raise CheckpointError(f"ember.load: {what} is truncated")
        raw[done:done + len(chunk)] = chunk
        done += len(chunk)
