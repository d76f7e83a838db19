"""ember's compiled mode, the backend ``torch.compile`` uses by default: record a call once,
replay it as generated straight-line Python.

A compiled function keeps one entry per *guard key*: what its recorded lines depended on
besides the arrays' values (``_guard_key``): the arguments' shapes, dtypes, strides and
autograd flags, Python values among them, the same for every tensor it reaches (parameters,
buffers, captured tensors), the training flags of its modules, grad mode and the default
dtype, and the scalar globals its code names. A call whose key is new runs eagerly under a
``Recorder`` (``recorder.py``); if the recording held, its lines become a Python function
(``_generate``) and later calls with the same key run it instead of the function: no Tensor
or node is made, only the recorded calls on the arrays. A recording that failed (a graph
break: ``.item()``, a hook...) leaves the key running eagerly. After
``torch._dynamo.config.recompile_limit`` keys, new keys run eagerly with PyTorch's warning.

Replays are eager's results bit for bit: the same calls on the same arrays in the same order.
"""
from __future__ import annotations

import textwrap
import types
import warnings

import numpy as np

from .. import _dispatch, _dtypes, _recording
from .._tensor import Tensor
from ..autograd.grad_mode import _state as _grad_state
from ..nn.module import Module
from ..optim.optimizer import Optimizer
from . import config
from .recorder import Recorder

__all__ = ["record_and_replay"]


def record_and_replay(fn, options):
    """The backend: ``fn`` compiled by recording and replaying (see the module docstring)."""
    return _Compiled(fn, bool(options.get("fullgraph")))


class _Compiled:
    """``fn`` with its entries: guard key -> replay function, or None (runs eagerly)."""

    def __init__(self, fn, fullgraph):
        self.fn = fn
        self.fullgraph = fullgraph
        self.entries = {}
        self.reasons = {}  # guard key -> why its call runs eagerly
        self._warned = False
        self._reach = None
        self.replays = 0

    def __call__(self, *args, **kwargs):
        fn = self.fn
        if _dispatch.state.active or _recording.state.recorder is not None or config.disable:
            return fn(*args, **kwargs)  # (inside vmap, autocast, another recording: eagerly)
        if self._reach is None:
            self._reach = _reachable(fn)
        leaves = []
        key = _guard_key(args, kwargs, leaves, self._reach)
        if key is None:
            return fn(*args, **kwargs)
        entry = self.entries.get(key, _MISSING)
        if entry is None:
            return fn(*args, **kwargs)
        if entry is not _MISSING:
            self.replays += 1
            return entry(leaves)
        if len(self.entries) >= config.recompile_limit:
            self._warn_limit()
            return fn(*args, **kwargs)
        return self._record(key, leaves, args, kwargs)

    def _record(self, key, leaves, args, kwargs):
        modules, externals = self._reach
        rec = Recorder(leaves, externals, self.fullgraph)
        rec.start()
        try:
            result = self.fn(*args, **kwargs)
        finally:
            rec.stop()
        replay = None
        if rec.failed is None:
            reads = set()
            source = rec.result(result, reads)
            if source is not None and rec.failed is None:
                replay = _generate(rec, source, reads, getattr(self.fn, "__name__", "fn"))
        self.entries[key] = replay
        if replay is None:
            self.reasons[key] = rec.failed
        return result

    def _warn_limit(self):
        if not self._warned:
            self._warned = True
            name = getattr(self.fn, "__qualname__", repr(self.fn))
            warnings.warn(f"torch._dynamo hit config.recompile_limit ({config.recompile_limit})"
                          f"\n   function: {name!r}\nTo log all recompilation reasons, use "
                          "TORCH_LOGS=\"recompiles\".", stacklevel=3)


_MISSING = object()


# --------------------------------------------------------------------------- guards


def _tensor_key(t):
    data = t._data
    if type(data) is not np.ndarray:
        return None
    return (data.shape, data.dtype, data.strides, t._rg, t._grad_fn is None, t._grad is None,
            t._base is None)


def _guard_key(args, kwargs, leaves, reach):
    """What a recording of this call depended on besides array values (see the module
    docstring); None when the call cannot be recorded (a tensor not on NumPy, a module
    with hooks). Fills ``leaves`` with the tensors among the arguments, in order."""
    parts = [_grad_state.grad, _dtypes.get_default_dtype()]
    if not _arg_key(args, parts, leaves) or not _arg_key(kwargs, parts, leaves):
        return None
    modules, externals = reach
    for t in externals:
        k = _tensor_key(t)
        if k is None:
            return None
        parts.append(k)
    for m in modules:
        if m._forward_hooks or m._forward_pre_hooks or getattr(m, "_backward_hooks", None) \
                or getattr(m, "_backward_pre_hooks", None):
            return None  # (hooks are Python the replay would skip)
        parts.append(m.training)
    for globals_, names in reach.scalars:
        for name in names:
            v = globals_.get(name, _MISSING)
            if type(v) in _SCALARS:
                parts.append((name, type(v), v))
    return tuple(parts)


_SCALARS = (bool, int, float, str, type(None))


def _arg_key(value, parts, leaves):
    t = type(value)
    if isinstance(value, Tensor):
        k = _tensor_key(value)
        if k is None:
            return False
        leaves.append(value)
        parts.append(k)
    elif t in _SCALARS:
        parts.append((t, value))
    elif t is tuple or t is list:
        parts.append((t, len(value)))
        for v in value:
            if not _arg_key(v, parts, leaves):
                return False
    elif t is dict:
        parts.append((t, tuple(value)))
        for v in value.values():
            if not _arg_key(v, parts, leaves):
                return False
    else:
        parts.append(id(value))  # (a module, a function...: the same object)
    return True


class _Reach(tuple):
    """``(modules, externals)`` a function reaches, and ``scalars``: (globals, names)."""

    scalars = ()


def _reachable(fn):
    """The modules and tensors ``fn`` reaches through its closure, the globals its code
    names, and its bound object: their parameters, buffers and tensors outlive a call and are
    read afresh by each replay (``externals``)."""
    modules, tensors, scalars = [], [], []
    seen = set()

    def add(obj):
        if id(obj) in seen:
            return
        seen.add(id(obj))
        if isinstance(obj, Module):
            for m in obj.modules():
                if id(m) not in seen or m is obj:
                    seen.add(id(m))
                    modules.append(m)
            for t in (*obj.parameters(), *obj.buffers()):
                add(t)
        elif isinstance(obj, Optimizer):
            for group in obj.param_groups:
                for t in group["params"]:
                    add(t)
        elif isinstance(obj, Tensor):
            tensors.append(obj)

    target = fn
    if isinstance(fn, types.MethodType):
        add(fn.__self__)
        target = fn.__func__
    code = getattr(target, "__code__", None)
    if code is not None:
        for cell in target.__closure__ or ():
            try:
                add(cell.cell_contents)
            except ValueError:  # an empty cell
                pass
        globals_ = target.__globals__
        names = [n for n in code.co_names if n in globals_]
        for n in names:
            add(globals_[n])
        scalars.append((globals_, tuple(n for n in names if type(globals_[n]) in _SCALARS)))
    reach = _Reach((modules, tensors))
    reach.scalars = tuple(scalars)
    return reach


# --------------------------------------------------------------------------- code


def _generate(rec, result, reads, name):
    """The replay function of a recording: its lines, each slot deleted after its last use
    (memory falls as in eager), then the result."""
    last = {}
    for k, (_, read, _) in enumerate(rec.lines):
        for s in read:
            last[s] = k
    keep = reads
    body = []
    for k, (code, read, written) in enumerate(rec.lines):
        body.append(code)
        dead = sorted({s for s in (*read, *written) if s not in keep and last.get(s, -1) <= k},
                      key=lambda s: int(s[1:]))
        if dead:
            body.append(f"del {', '.join(dead)}")
    params = "".join(f", c{k}=c{k}" for k in range(len(rec.consts)))
    source = (f"def replay(L{params}):\n" + textwrap.indent("\n".join(body) or "pass", "    ")
              + f"\n    return {result}\n")
    namespace = {f"c{k}": c for k, c in enumerate(rec.consts)}
    filename = f"<compiled {name}>"
    exec(compile(source, filename, "exec"), namespace)  # (our own generated code)
    replay = namespace["replay"]
    replay.source = source
    return replay
