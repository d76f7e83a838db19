"""``ember.save`` / ``ember.load``: checkpoints in PyTorch's own file format.

``save`` writes what ``torch.save`` writes (a zip archive holding a protocol-2 pickle and one
record of raw bytes per storage; see ``_write``), so ``torch.load(f, weights_only=True)`` reads
ember's tensors, Parameters, state dicts and optimizer states, and ``load`` reads files written
by ``torch.save`` without PyTorch installed. Whole objects (an ``nn.Module``: "save the best
model") pickle as usual and load with ``weights_only=False``, as in PyTorch.

Loading untrusted files
-----------------------
With ``weights_only=True`` (the default, as in PyTorch 2.6+), for any file:

* No code from the file runs. The pickle is read by ember's own interpreter of the opcodes
  ``torch.load(weights_only=True)`` accepts, which admits only tensors, storages, Parameters,
  containers, primitives, ``torch.Size``, dtypes, devices and the other names PyTorch allows by
  default (plus those given to :func:`add_safe_globals`), never importing anything. Anything
  else raises ``pickle.UnpicklingError`` with PyTorch's "Weights only load failed." text.
* Every way the file can be corrupt or malformed raises :class:`CheckpointError` (a
  ``RuntimeError``) naming the problem: not a zip archive, truncated or corrupt data (CRC,
  deflate), encrypted or unusually compressed members, unexpected or duplicate member names,
  a pickle that is truncated or malformed, storages it names that are missing or whose size
  does not match their element count, tensor views (offset, sizes, strides) reaching outside
  their storage, containers nested more than 512 levels, dtypes or tensor kinds ember does not
  have. Errors opening a *path* (``FileNotFoundError`` ...) and errors raised by
  ``map_location`` itself propagate unchanged.
* Allocation is bounded before it happens. Each zip entry's declared size must be possible
  (``_zip``), and the declared sizes of all entries together must not exceed ``max_bytes``
  (default ``max(256 * file size, 64 MiB)``); a storage is allocated only once its declared
  element count times its dtype's size equals its entry's size, and read straight into its
  array in 1 MiB chunks. Tensors are views of their storage (no copy), except those PyTorch
  saved with its lazy conj / neg bits, which ember materialises: their bytes are counted
  against what the limit leaves, before they are made. So ``load`` allocates at most the limit
  for storages, pickle and those copies, plus fixed-size buffers and the Python objects the
  pickle builds (each opcode builds at most one object, so they are bounded by a small
  multiple of the pickle's size).
* Nothing is returned and ``map_location`` is not called until the whole file has been read
  and checked, so a bad file leaves nothing half loaded.

``save`` stores members uncompressed, so its files never come near the default bound; a zip
bomb (1.5 MB of deflated zeros that inflate to 1.5 GiB) is refused before anything is
allocated. With ``weights_only=False`` the file is trusted (its pickle may run code, as with
``torch.load``); the size checks on storages still hold.

Two older formats load too, each through its own checked reader: PyTorch's legacy stream
(``torch.save`` before PyTorch 1.6, or with ``_use_new_zipfile_serialization=False``;
``_legacy_torch``), with the same unpicklers and checks; and ember's own older format (a zip of
``.npy`` arrays with a JSON manifest, written by earlier versions of ember; ``_legacy``), which
holds no pickle and so loads whatever ``weights_only`` says.
"""
from __future__ import annotations

import operator
import os
import pickle
import warnings

from . import _legacy, _legacy_torch, _unpickle, _write
from ._zip import Archive, CheckpointError, zip_errors

__all__ = ["save", "load", "CheckpointError", "add_safe_globals", "get_safe_globals",
           "clear_safe_globals", "safe_globals", "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2  # the pickle protocol save writes (PyTorch's default)

def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` to a path or a writable binary file in PyTorch's format.

    Tensors, Parameters and the containers around them (a state dict, an optimizer's state)
    become what ``torch.load(weights_only=True)`` reads; any other picklable object (a whole
    ``nn.Module``) is pickled as usual. Tensors viewing one array share one storage in the file.
    ember always writes PyTorch's zip format with pickle protocol 2 (PyTorch's default):
    ``pickle_module``, ``pickle_protocol`` and the two private flags are accepted for
    compatibility and ignored."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _write.write(obj, fh, _write.archive_name(f))
    else:
        _write.write(obj, f, _write.archive_name(f))


_TRUE = ("1", "y", "yes", "true")


def _weights_only(weights_only, pickle_module):
    """PyTorch's choice: the argument, else True unless a ``pickle_module`` is given; the
    environment variables ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` (always True) and
    ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` (False where the argument was not given) override."""
    given = weights_only is not None
    if not given:
        weights_only = pickle_module is None
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force:
        return True
    if force_no and not given:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since "
                      "the`weights_only` argument was not explicitly passed to `torch.load`, "
                      "forcing weights_only=False.", UserWarning, stacklevel=3)
        return False
    return weights_only


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         max_bytes=None, **pickle_load_args):
    """Load an object saved by :func:`save` or ``torch.save`` from a path or a readable,
    seekable binary file.

    ``weights_only`` (default True unless ``pickle_module`` is given, as in PyTorch): admit
    only tensors, containers and primitives, without running code from the file (see the
    module docstring); ``weights_only=False`` unpickles anything, for trusted files only.
    ``map_location`` (a device or string, a dict from saved to wanted location, or a callable
    ``f(storage, location)``) places the storages once the whole file has been checked; ember
    has no storage type, so a callable receives each storage as a flat tensor of its dtype and
    returns a tensor (or None, for the default). ``max_bytes`` bounds the decompressed size of
    the file's members (default ``max(256 * file size, 64 MiB)``); more raises
    :class:`CheckpointError`. ``mmap=True`` needs a path, as in PyTorch, but ember reads the
    file rather than mapping it."""
    if max_bytes is not None:
        if isinstance(max_bytes, bool):
            raise TypeError("ember.load: max_bytes must be an int or None, not bool")
        max_bytes = operator.index(max_bytes)
        if max_bytes < 0:
            raise ValueError(f"ember.load: max_bytes must be >= 0, got {max_bytes}")
    weights_only = _weights_only(weights_only, pickle_module)
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                               "specified")
        if pickle_load_args.keys() - {"encoding"}:
            warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    pickle_module = pickle if pickle_module is None else pickle_module
    encoding = pickle_load_args.get("encoding", "utf-8")
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load(fh, map_location, weights_only, pickle_module, encoding, max_bytes)
    return _load(f, map_location, weights_only, pickle_module, encoding, max_bytes)


def _check_names(names):
    """Which format the archive is: ``(kind, how messages name a member)``."""
    if _legacy.MANIFEST_MEMBER in names:
        _legacy.check_names(names)
        return "legacy", _legacy.label
    return _unpickle.check_names(names), lambda name: f"member {name!r}"


def _load(fh, map_location, weights_only, pickle_module, encoding, max_bytes):
    with zip_errors("not an ember checkpoint: not a readable zip archive"):
        start = fh.read(len(_legacy_torch.MAGIC))
        fh.seek(-len(start), os.SEEK_CUR)
    if start == _legacy_torch.MAGIC:
        return _legacy_torch.load(fh, map_location, weights_only, pickle_module, encoding,
                                  max_bytes)
    with Archive(fh, max_bytes, _check_names) as archive:
        if archive.kind == "legacy":
            return _legacy.load(archive, map_location)
        return _unpickle.load_torch(archive, archive.kind, map_location, weights_only,
                                    pickle_module, encoding)


# ------------------------------------------------------------------ allowlisting globals

def add_safe_globals(safe_globals):
    """Admit these classes / functions (or ``(object, "module.name")`` pairs) when loading
    with ``weights_only=True``, as ``torch.serialization.add_safe_globals`` does. This adds
    global state."""
    for entry in safe_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(entry[1])}")
            obj, name = entry
        else:
            obj, name = entry, f"{entry.__module__}.{entry.__qualname__}"
        _unpickle.safe_globals_registry[name] = obj


def get_safe_globals():
    """The objects given to :func:`add_safe_globals`."""
    return list(_unpickle.safe_globals_registry.values())


def clear_safe_globals():
    """Forget everything given to :func:`add_safe_globals`."""
    _unpickle.safe_globals_registry.clear()


class safe_globals:  # noqa: N801 - PyTorch's name
    """A context manager admitting ``safe_globals`` for loads inside it."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        self._before = dict(_unpickle.safe_globals_registry)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc_info):
        _unpickle.safe_globals_registry.clear()
        _unpickle.safe_globals_registry.update(self._before)
