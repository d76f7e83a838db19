"""Reading PyTorch's checkpoint format: its records, its storages, and its pickle.

``load_torch(archive, ...)`` reads ``<name>/data.pkl`` with one of two unpicklers:

* ``weights_only=True`` (the default, as in PyTorch 2.6+): :class:`WeightsOnlyUnpickler`, an
  interpreter of the pickle opcodes ``torch.load(weights_only=True)`` accepts and nothing
  else. A global is looked up in the allowlist (``_globals.globals_for``, plus the names given
  to ``add_safe_globals``), never imported; REDUCE calls only what the allowlist holds; BUILD
  sets state only on OrderedDicts and allowlisted user types; APPEND(S) only extends lists and
  SETITEM(S) only fills dicts. Anything else raises ``pickle.UnpicklingError`` with PyTorch's
  "Weights only load failed." text. No code from the file runs, and the interpreter keeps no
  recursion: tuples nesting more than 512 levels are refused as they are built (hashing one
  would recurse), and the loaded object's containers are measured once it is complete.
* ``weights_only=False``: a full ``pickle.Unpickler`` (the file is trusted, as in PyTorch: it
  may run code), whose ``find_class`` serves the same table and maps other ``torch.X`` names
  to ``ember.X``, so a whole ``torch.nn`` module pickled by PyTorch loads as ember's.

Both read each storage (``<name>/data/<key>``) once, when the pickle first names it: the
declared element count times the dtype's size must equal the bytes its zip entry declares
(already counted against ``max_bytes``) before anything is allocated.
"""
from __future__ import annotations

import importlib
import io
import pickle
import re
import struct
import sys
import warnings

from .. import _device
from .._tensor import Tensor
from ..nn.parameter import Parameter
from . import _globals
from ._globals import CheckpointError, Storage, StorageType, Unsupported
from ._zip import short

__all__ = ["check_names", "load_torch", "safe_globals_registry"]

_RECORD = re.compile(r"data\.pkl|version|\.data/version|byteorder|\.format_version|"
                     r"\.storage_alignment|\.data/serialization_id|data/[^/]+")
_MAX_VERSION = 10  # the newest record format a PyTorch reader accepts (0xa)

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
    "`False` will likely succeed, but it can result in arbitrary code execution. Do it only if "
    "you got the file from a trusted source.")
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default "
    "with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
_PY2_NAMES = {"__builtin__": "builtins", "copy_reg": "copyreg"}

safe_globals_registry = {}  # "module.qualname" -> object, from add_safe_globals


# ------------------------------------------------------------------ the archive's records

def check_names(names):
    """The archive's record prefix, once every member is a record PyTorch's format has."""
    if any(n.endswith("constants.pkl") or "/code/" in n for n in names):
        raise CheckpointError("ember.load: this is a TorchScript archive (torch.jit.save), "
                              "which ember does not load")
    pickles = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if not pickles:
        raise CheckpointError("ember.load: not a checkpoint (no <name>/data.pkl record, and "
                              "no manifest of ember's older format)")
    prefix = pickles[0].partition("/")[0]
    for name in names:
        head, _, rest = name.partition("/")
        if head != prefix or not _RECORD.fullmatch(rest):
            raise CheckpointError(f"ember.load: unexpected member {short(name)} (a PyTorch "
                                  "checkpoint holds <name>/data.pkl, <name>/data/<key> and "
                                  "<name>'s version records)")
    return prefix


def _record(archive, prefix, name, limit=64):
    full = f"{prefix}/{name}"
    if full not in archive.infos:
        return None
    if archive.infos[full].file_size > limit:
        raise CheckpointError(f"ember.load: the {name!r} record is {archive.infos[full].file_size}"
                              f" bytes long (at most {limit})")
    return archive.read_bytes(full, f"the {name!r} record")


def _byteorder(archive, prefix):
    for name in ("version", ".data/version"):
        text = _record(archive, prefix, name)
        if text is not None:
            if not (text.strip().isdigit() and 1 <= int(text.strip()) <= _MAX_VERSION):
                raise CheckpointError(f"ember.load: unknown format version {short(text)}")
            break
    order = _record(archive, prefix, "byteorder")
    if order is None:
        return "little"  # PyTorch's default for files without the record
    if order not in (b"little", b"big"):
        raise CheckpointError(f"ember.load: unknown endianness type {short(order)}")
    return order.decode()


# ------------------------------------------------------------------ storages

class _Storages:
    """The storages of one file, each read and checked once (``persistent_load``)."""

    def __init__(self, archive, prefix, byteorder):
        self._archive, self._prefix, self._byteorder = archive, prefix, byteorder
        self.loaded = {}

    def __call__(self, pid):
        if not (type(pid) is tuple and len(pid) == 5 and _ascii(pid[0]) == "storage"):
            raise CheckpointError(f"ember.load: persistent id {short(pid)} is not "
                                  "('storage', type, key, location, numel)")
        _, kind, key, location, numel = pid
        location = _storage_location(pid, kind, key, location, numel)
        dtype = kind.dtype()
        known = _known_storage(self.loaded, key, dtype, numel)
        if known is not None:
            return known
        name = f"{self._prefix}/data/{key}"
        if name not in self._archive.infos:
            raise CheckpointError(f"ember.load: the pickle refers to storage {short(key)}, "
                                  "which the file does not hold")
        raw = self._archive.read_into(name, f"storage {key!r}", numel * dtype.itemsize)
        array = raw.view(dtype.np)
        if self._byteorder != sys.byteorder and dtype.itemsize > 1:
            array.byteswap(inplace=True)
        storage = self.loaded[key] = Storage(key, dtype, numel, location, array)
        return storage


def _ascii(value):
    return value.decode("ascii") if isinstance(value, bytes) else value


def _storage_location(pid, kind, key, location, numel):
    """The location of the storage id ``pid`` as a str, once its fields are checked: a
    storage type, a str key and location, a non-negative int size."""
    location = _ascii(location)
    if not (isinstance(kind, StorageType) and type(key) is str
            and type(location) is str and type(numel) is int and numel >= 0):
        raise CheckpointError(f"ember.load: malformed storage id {short(pid)}")
    return location


def _known_storage(loaded, key, dtype, numel):
    """The storage ``key`` of ``loaded`` where an earlier id made it (declaring the same dtype
    and size, else the file is refused); None the first time."""
    known = loaded.get(key)
    if known is not None and (known.dtype, known.numel) != (dtype, numel):
        raise CheckpointError(
            f"ember.load: storage {key!r} is declared as {known.numel} elements of "
            f"{known.dtype} and as {numel} of {dtype}; refusing")
    return known


# ------------------------------------------------------------------ the weights-only unpickler

def weights_only_error(message):
    """``pickle.UnpicklingError`` with PyTorch's text around the interpreter's ``message``."""
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        text = ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the "
                f"checkpoint\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
                "`weights_only=True` please check the recommended steps in the following error "
                "message.\n\tWeightsUnpickler error: " + message)
    else:
        text = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
        if not re.search(r"whose module (\S+) is blocked", message):
            text += ("Please file an issue with the following so that we can make "
                     "`weights_only=True` compatible with your use case: WeightsUnpickler "
                     "error: ")
        text += "\n\n" + message
    return pickle.UnpicklingError(text + _DOCS_MESSAGE)


class _Refused(Exception):
    """The interpreter met something weights_only does not allow (turned into PyTorch's
    UnpicklingError by ``load``)."""


class WeightsOnlyUnpickler:
    """The restricted pickle interpreter (see the module docstring)."""

    def __init__(self, data, allowed, persistent_load, encoding="utf-8"):
        self._data, self._pos = data, 0
        self._allowed, self._persistent_load = allowed, persistent_load
        self._user = {}
        for obj in safe_globals_registry.values():
            self._user[id(obj)] = obj
        self._encoding = encoding
        self._callables = {id(v): v for v in allowed.values() if callable(v)}
        self._tuple_depth = {}  # id -> (tuple, depth) for tuples holding tuples

    def load(self):
        self.stack, self.metastack, self.memo = [], [], {}
        dispatch, data = self._DISPATCH, self._data
        while True:
            if self._pos >= len(data):
                raise CheckpointError("ember.load: data.pkl is truncated")
            code = data[self._pos]
            self._pos += 1
            if code == _STOP:
                return self.stack.pop()
            op = dispatch.get(code)
            if op is None:
                raise _Refused(f"Unsupported operand {code}")
            op(self)

    # reading
    @property
    def consumed(self):
        """How many bytes of the data the pickles read so far took."""
        return self._pos

    def _read(self, n):
        end = self._pos + n
        if end > len(self._data):
            raise CheckpointError("ember.load: data.pkl is truncated")
        out = self._data[self._pos:end]
        self._pos = end
        return out

    def _readline(self):
        end = self._data.find(b"\n", self._pos)
        if end < 0:
            raise CheckpointError("ember.load: data.pkl is truncated")
        line = self._data[self._pos:end]
        self._pos = end + 1
        return line.decode("utf-8")

    def _pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _push_tuple(self, items):
        depth = 1
        for item in items:
            if type(item) is tuple:
                depth = max(depth, 1 + self._tuple_depth.get(id(item), (None, 1))[1])
        if depth > _globals.MAX_DEPTH:
            raise CheckpointError(f"ember.load: tuples nest more than {_globals.MAX_DEPTH} "
                                  "levels deep; refusing")
        t = tuple(items)
        if depth > 1:
            self._tuple_depth[id(t)] = (t, depth)
        self.stack.append(t)

    # the risky operations
    def _global(self):
        module, name = self._readline(), self._readline()
        module = _PY2_NAMES.get(module, module)
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise _Refused(f"Trying to load unsupported GLOBAL {full} whose module {module} is "
                           "blocked.")
        if full in self._allowed:
            value = self._allowed[full]
            if isinstance(value, Unsupported):
                raise value.error()
        elif full in safe_globals_registry:
            value = safe_globals_registry[full]
        elif self._allowlisted_counterpart(module, name) is not None:
            value = self._allowlisted_counterpart(module, name)
        else:
            shown = full[len("builtins."):] if full.startswith("builtins.") else full
            raise _Refused(
                f"Unsupported global: GLOBAL {shown} was not an allowed global by default. "
                f"Please use `torch.serialization.add_safe_globals([{shown}])` or the "
                f"`torch.serialization.safe_globals([{shown}])` context manager to allowlist "
                "this global if you trust this class/function.")
        self.stack.append(value)

    def _allowlisted_counterpart(self, module, name):
        """For ``torch.X.name`` (a file PyTorch wrote): ember's counterpart, if it was given
        to add_safe_globals (``torch.nn.modules.linear.Linear`` -> ember's Linear)."""
        if not (module == "torch" or module.startswith("torch.")) or not self._user:
            return None
        try:
            value = _ember_counterpart(module, name)
        except AttributeError:
            return None
        return value if id(value) in self._user else None

    def _call(self, func, args):
        if id(func) in self._callables or id(func) in self._user:
            if not isinstance(args, tuple):
                raise CheckpointError(f"ember.load: call arguments {short(args)} are not a "
                                      "tuple")
            if func is Parameter:  # checked like PyTorch's _rebuild_parameter
                func = self._allowed["torch._utils._rebuild_parameter"]
            return func(*args)
        raise _Refused(f"Trying to call reduce for unrecognized function {func}")

    def _reduce(self):
        args = self.stack.pop()
        self.stack[-1] = self._call(self.stack[-1], args)

    def _newobj(self):
        args = self.stack.pop()
        cls = self.stack.pop()
        if id(cls) in self._user and isinstance(cls, type):
            self.stack.append(cls.__new__(cls, *args))
        elif cls is Parameter:
            self.stack.append(self._call(cls, args))
        else:
            raise _Refused("Can only create new object for nn.Parameter or classes allowlisted "
                           f"via `add_safe_globals` but got {cls}")

    def _build(self):
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) in (_globals.collections.OrderedDict, _globals.collections.Counter):
            if not (type(state) is dict and all(type(k) is str for k in state)):
                raise CheckpointError(f"ember.load: state {short(state)} is not a dict")
            inst.__dict__.update(state)
        elif id(type(inst)) in self._user:
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
            else:
                slots = None
                if isinstance(state, tuple) and len(state) == 2:
                    state, slots = state
                if state:
                    inst.__dict__.update(state)
                for k, v in (slots or {}).items():
                    setattr(inst, k, v)
        elif isinstance(inst, Tensor):
            raise CheckpointError("ember.load: the file sets a tensor's state with BUILD (the "
                                  "legacy format), which ember does not load")
        else:
            raise _Refused("Can only build Tensor, Parameter, OrderedDict or types allowlisted "
                           f"via `add_safe_globals`, but got {type(inst)}")

    def _binpersid(self):
        pid = self.stack.pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise _Refused(f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and pid and _ascii(pid[0]) != "storage":
            raise _Refused(f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
        self.stack.append(self._persistent_load(pid))

    # containers
    def _append(self):
        item = self.stack.pop()
        self._list_target("append").append(item)

    def _appends(self):
        items = self._pop_mark()
        self._list_target("extend").extend(items)

    def _list_target(self, verb):
        target = self.stack[-1]
        if type(target) is not list:
            raise _Refused(f"Can only {verb} to lists, but got {type(target)}"
                           if verb == "append" else
                           f"Can only extend lists, but got {type(target)}")
        return target

    def _setitem(self):
        value, key = self.stack.pop(), self.stack.pop()
        self._dict_target("SETITEM")[key] = value

    def _setitems(self):
        items = self._pop_mark()
        target = self._dict_target("SETITEMS")
        if len(items) % 2:
            raise CheckpointError("ember.load: SETITEMS with an odd number of items")
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _dict_target(self, opcode):
        target = self.stack[-1]
        if type(target) not in (dict, _globals.collections.OrderedDict,
                                _globals.collections.Counter):
            raise _Refused(f"Can only {opcode} for dict, collections.OrderedDict, "
                           f"collections.Counter, but got {type(target)}")
        return target

    def _mark(self):
        self.metastack.append(self.stack)
        self.stack = []

    def _tuple(self):
        self._push_tuple(self._pop_mark())

    def _tuple_n(n):
        def op(self):
            if len(self.stack) < n:
                raise IndexError("stack underflow")
            items = self.stack[len(self.stack) - n:]
            del self.stack[len(self.stack) - n:]
            self._push_tuple(items)
        return op

    # values
    def _push(value):
        return lambda self: self.stack.append(value() if callable(value) else value)

    def _unpack(fmt):
        size = struct.calcsize(fmt)
        return lambda self: self.stack.append(struct.unpack(fmt, self._read(size))[0])

    def _binunicode(self):
        n = struct.unpack("<I", self._read(4))[0]
        self.stack.append(str(self._read(n), "utf-8", "surrogatepass"))

    def _short_binstring(self):
        data = self._read(self._read(1)[0])
        self.stack.append(data if self._encoding == "bytes" else data.decode(self._encoding))

    def _long1(self):
        self.stack.append(pickle.decode_long(self._read(self._read(1)[0])))

    def _get(fmt):
        size = struct.calcsize(fmt)

        def op(self):
            key = struct.unpack(fmt, self._read(size))[0]
            if key not in self.memo:
                raise CheckpointError(f"ember.load: data.pkl refers to memo entry {key}, which "
                                      "it never stored")
            self.stack.append(self.memo[key])
        return op

    def _put(fmt):
        size = struct.calcsize(fmt)

        def op(self):
            self.memo[struct.unpack(fmt, self._read(size))[0]] = self.stack[-1]
        return op

    def _proto(self):
        proto = self._read(1)[0]
        if proto != 2:
            warnings.warn(
                f"Detected pickle protocol {proto} in the checkpoint, which was not the default "
                "pickle protocol used by `torch.load` (2). The weights_only Unpickler might not "
                "support all instructions implemented by this protocol, please file an issue "
                "for adding support if you encounter this.", stacklevel=2)

    _DISPATCH = {
        pickle.GLOBAL: _global, pickle.REDUCE: _reduce, pickle.NEWOBJ: _newobj,
        pickle.BUILD: _build, pickle.BINPERSID: _binpersid,
        pickle.APPEND: _append, pickle.APPENDS: _appends, pickle.SETITEM: _setitem,
        pickle.SETITEMS: _setitems, pickle.MARK: _mark, pickle.TUPLE: _tuple,
        pickle.TUPLE1: _tuple_n(1), pickle.TUPLE2: _tuple_n(2), pickle.TUPLE3: _tuple_n(3),
        pickle.NONE: _push(None), pickle.NEWFALSE: _push(False), pickle.NEWTRUE: _push(True),
        pickle.EMPTY_TUPLE: _push(()), pickle.EMPTY_LIST: _push(list),
        pickle.EMPTY_DICT: _push(dict), pickle.EMPTY_SET: _push(set),
        pickle.BININT: _unpack("<i"), pickle.BININT1: _unpack("<B"),
        pickle.BININT2: _unpack("<H"), pickle.BINFLOAT: _unpack(">d"),
        pickle.BINUNICODE: _binunicode, pickle.SHORT_BINSTRING: _short_binstring,
        pickle.LONG1: _long1, pickle.BINGET: _get("<B"), pickle.LONG_BINGET: _get("<I"),
        pickle.BINPUT: _put("<B"), pickle.LONG_BINPUT: _put("<I"), pickle.PROTO: _proto,
    }
    _DISPATCH = {code[0]: op for code, op in _DISPATCH.items()}
    del _tuple_n, _push, _unpack, _get, _put


_STOP = pickle.STOP[0]


# ------------------------------------------------------------------ the full unpickler

def _full_unpickler(base, allowed):
    """A subclass of ``base`` (``pickle.Unpickler``) resolving ``torch.*`` names to ember."""

    class Unpickler(base):
        def find_class(self, module, name):
            full = f"{module}.{name}"
            if full in allowed:
                value = allowed[full]
                if isinstance(value, Unsupported):
                    raise value.error()
                return value
            if module == "torch" or module.startswith("torch."):
                return _ember_counterpart(module, name)
            return super().find_class(module, name)

    return Unpickler


def _ember_counterpart(module, name):
    """ember's object for PyTorch's ``module.name``: ``ember.<same path>.name``, else the
    nearest enclosing ember package that has ``name`` (``torch.nn.modules.batchnorm.
    BatchNorm1d`` is ``ember.nn.modules.BatchNorm1d`` when ember keeps it in another file)."""
    parts = ("ember" + module[len("torch"):]).split(".")
    while parts:
        try:
            mod = importlib.import_module(".".join(parts))
        except ModuleNotFoundError:
            mod = None
        if mod is not None and hasattr(mod, name):
            return getattr(mod, name)
        parts.pop()
    raise AttributeError(f"ember.load: the file refers to {module}.{name}, which ember does not "
                         "have")


# ------------------------------------------------------------------ loading

def load_torch(archive, prefix, map_location, weights_only, pickle_module, encoding):
    """The object in a PyTorch checkpoint (an open, checked ``_zip.Archive``)."""
    storages = _Storages(archive, prefix, _byteorder(archive, prefix))
    rebuilder = _globals.Rebuilder(archive.spare)
    allowed = _globals.globals_for(rebuilder)
    data = archive.read_bytes(f"{prefix}/data.pkl", "data.pkl")
    if weights_only:
        obj = run(WeightsOnlyUnpickler(data, allowed, storages, encoding))
        _globals.check_depth(obj)
    else:
        unpickler = _full_unpickler(pickle_module.Unpickler, allowed)(
            io.BytesIO(data), encoding=encoding)
        unpickler.persistent_load = storages
        obj = unpickler.load()
    finish(storages, rebuilder, map_location)
    return obj


def run(unpickler):
    """The next object of a :class:`WeightsOnlyUnpickler`, its refusals made PyTorch's
    UnpicklingError and whatever else a malformed pickle makes fail a CheckpointError."""
    try:
        return unpickler.load()
    except _Refused as exc:
        raise weights_only_error(str(exc)) from None
    except CheckpointError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever a malformed pickle makes fail
        raise CheckpointError(f"ember.load: data.pkl is not a valid pickle "
                              f"({type(exc).__name__}: {exc})") from None


def finish(storages, rebuilder, map_location):
    """Once the whole file checked out: refuse bare storages, then apply map_location."""
    for storage in storages.loaded.values():
        if storage.uses == 0:
            raise CheckpointError(f"ember.load: storage {storage.key!r} is not the storage of "
                                  "any tensor (a bare storage); ember has no storage type")
    _place(storages, rebuilder, map_location)


def _place(storages, rebuilder, map_location):
    """Move each storage where ``map_location`` says, after the whole file checked out, and
    re-cut every tensor made on a moved storage from its new array."""
    moved = {}
    for storage in storages.loaded.values():
        array = _target(storage, map_location)
        if array is not storage.array:
            moved[id(storage)] = array
    if not moved:
        return
    for t, storage, offset, size, stride, ops in rebuilder.views.values():
        array = moved.get(id(storage))
        if array is not None:
            data = _globals.view(array, offset, size, stride)
            for op in ops:
                data = op(data)
            t._data = data


def _target(storage, map_location):
    """The storage's array placed where ``map_location`` sends it (PyTorch's rules: a
    device or string for every storage, a dict from saved location to location, a callable
    ``f(storage, location)`` whose None means the default; ember hands the callable the
    storage as a flat tensor of its dtype and expects a tensor back)."""
    location = storage.location
    if callable(map_location) and not isinstance(map_location, _device.device):
        flat = Tensor._make(storage.array, None, False)
        out = map_location(flat, location)
        if out is not None:
            if not isinstance(out, Tensor):
                raise TypeError(f"ember.load: map_location returned {type(out).__name__}; "
                                "ember passes each storage as a flat tensor and expects a "
                                "tensor (or None) back")
            if out.dtype != storage.dtype or out.shape != (storage.numel,):
                raise RuntimeError(f"ember.load: map_location returned a tensor of "
                                   f"{out.dtype} and shape {tuple(out.shape)} for a storage "
                                   f"of {storage.numel} {storage.dtype} elements")
            return out._data
    elif isinstance(map_location, dict):
        location = map_location.get(location, location)
    elif map_location is not None:
        location = map_location
    location = location.decode() if isinstance(location, bytes) else location
    if location is storage.location:  # the file's own word: a bad one is the file's fault
        try:
            dev = _device.device(location)
        except RuntimeError:
            raise CheckpointError(
                f"ember.load: storage {storage.key!r} was saved on {short(location)}, where "
                "ember cannot place it; pass map_location (for example 'cpu')") from None
    else:
        dev = _device.device(location)
    if dev.type == "cuda" and not _device.cuda_available():
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
            "is False. If you are running on a CPU-only machine, please use torch.load with "
            "map_location=torch.device('cpu') to map your storages to the CPU.")
    return _device.move(storage.array, dev)
